#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/guests/host-busy.sh report, over a committed run's real samples and
# bench log (a 4-guest run of 2026-12-06 whose samples name hostd's pid in
# the modes that run it): one line per measurement that has a sample before
# its start (all but the first); hostd's CPU counted in
# every measurement that ran it, also where the bench stopped hostd before it
# printed the measurement's line (9 of its 24); the QEMUs' pCPUs within the
# machine's 2; a bad mode of use refused.
# Usage: host_busy_report.sh SCRIPT DATA_DIR
set -euo pipefail
script=$1 data=$2
fail() {
  echo "host_busy_report: $*"
  exit 1
}
run=$data/guests-compute-folded-4g-steering
out=$(bash "$script" report "$run-samples.txt" "$run-bench.log") || fail "it failed: $out"
echo "$out"
# The run's first measurement began before the sampler's first sample.
measured=$(($(grep -c ' \(unfolded\|vcpufold\|fixed\): ' "$run-bench.log") - 1))
[[ $(grep -c 'host busy' <<<"$out") == "$measured" ]] || fail "not one line for each of $measured measurements"
with_hostd=$(grep -c ' \(vcpufold\|fixed\): .*host busy' <<<"$out")
[[ $with_hostd == 24 ]] || fail "expected 24 measurements with hostd, read $with_hostd"
while read -r line; do
  hostd=$(sed -E 's/.*, hostd ([0-9.]+),.*/\1/' <<<"$line")
  qemus=$(sed -E 's/.*pCPUs: QEMUs ([0-9.]+) .*/\1/' <<<"$line")
  # hostd took 0.02-0.03 of a pCPU in this run (its /proc/PID/stat in the samples).
  awk -v h="$hostd" 'BEGIN { exit !(h >= 0.01 && h <= 0.05) }' || fail "hostd $hostd in: $line"
  awk -v q="$qemus" 'BEGIN { exit !(q > 1 && q <= 2.0) }' || fail "QEMUs $qemus in: $line"
done < <(grep ' \(vcpufold\|fixed\): .*host busy' <<<"$out")
if bash "$script" nonsense >/dev/null 2>&1; then fail "an unknown mode of use was accepted"; fi
echo "host_busy_report: ok"
