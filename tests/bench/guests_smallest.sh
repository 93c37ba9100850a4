#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vcpufold-bench-guests in its smallest configuration, as scripts/test.sh runs
# it (label e2e): 2 TCG guests under libvirt, one workload, one repetition of
# each mode, cpuset actuator, one emulated repetition. Checks that the bench
# completes and writes its table, CSV and plot (one repetition shows nothing,
# so its figures are not judged).
# Usage: guests_smallest.sh BENCH_BINARY
set -euo pipefail
bench=$1
if [[ $(id -u) != 0 ]]; then
  echo "[  SKIPPED ] the bench needs root (libvirt's system instance)"
  exit 0
fi
for tool in qemu-system-x86_64 libvirtd virsh cpio; do
  command -v "$tool" >/dev/null || { echo "[  SKIPPED ] $tool is not installed"; exit 0; }
done
work=$(mktemp -d /var/tmp/vcpufold-bench-guests.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "guests_smallest: $*"
  cat "$work/out.log"
  exit 1
}
started=$(date +%s)
"$bench" --guests 2 --repetitions 1 --workloads hackbench-pipe --actuators cpuset --emulated-repetitions 1 \
  --work "$work" --out "$work/results" >"$work/out.log" 2>&1 || fail "the bench failed"
elapsed=$(($(date +%s) - started))
results=$work/results
for file in results.md results.csv guests-ratios.png where.txt; do
  [[ -s $results/$file ]] || fail "no $file"
done
md=$results/results.md
grep -q '^##### Actuator `cpuset` (guest kernel 6\.1\.' "$md" || fail "no cpuset section with the stock kernel"
grep -Eq '^\| hackbench-pipe \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \(one run\) \|' "$md" ||
  fail "no hackbench-pipe row with a figure for every mode"
grep -q '^| `cpuset` hackbench-pipe: vcpufold / unfolded >= 1.20 | .* | not shown |' "$md" ||
  fail "one repetition must not show a target"
grep -q '^| hackbench-pipe (`cpuset`) | message | vcpufold / unfolded | ' "$md" ||
  fail "no emulated ratio beside the real one"
# The recorded command names the scenario as the repository does, not by
# this machine's path.
grep -q 'vcpufold-bench-contention --scenario bench/contention/scenarios/steady.toml --only steady/message ' "$md" ||
  fail "the emulated command does not name the repository's scenario file"
grep -q '^##### Overdue acknowledgements and hint changes' "$md" || fail "no count of overdue acknowledgements"
for mode in vcpufold fixed; do
  grep -Eq "^\| \`cpuset\` \| $mode \| [0-9]+ of 1 \| [0-9]+ \| [0-9]+ \| [0-9]+ of 1 \| [0-9.]+, [0-9.]+ \| [0-9]+ of 1 \| [0-9.]+, [0-9.]+ \|$" "$md" ||
    fail "overdue acknowledgements, host-wait credits, hint changes and steady-time changes not counted for the $mode measurement"
done
# The steady-time changes come from the agents' logs and the measured units' windows.
grep -Eq '^\| `cpuset`: 0 preferred-count changes per minute in steady time \(vcpufold\) \| median [0-9.]+, max [0-9.]+ /min \| (met|missed) \|$' "$md" ||
  fail "no steady-time target"
steady=$(awk -F, 'NR > 1 && $3 == "vcpufold" { print $12 }' "$results/results.csv" | sort -u)
[[ -n $steady && $steady != 0.000 ]] || fail "no steady time measured for the vcpufold measurement (${steady:-none})"
# What ran on each guest's vCPUs, read in every measurement: 3 modes x 2 guests.
[[ $(grep -c '^# cpuset ' "$results/where.txt") == 6 ]] || fail "where.txt lacks a guest's record"
grep -q '^stat 3 ' "$results/where.txt" || fail "where.txt has no per-vCPU /proc/stat deltas"
grep -q '^irq LOC ' "$results/where.txt" || fail "where.txt has no interrupt counts"
grep -q '^| busy (% of its time) | [0-9.]* | [0-9.]* | [0-9.]* |$' "$md" || fail "no table of what ran where"
rows=$(grep -c '^cpuset,hackbench-pipe,\(unfolded\|vcpufold\|fixed\),1,[12],' "$results/results.csv")
[[ $rows == 6 ]] || fail "results.csv has $rows rows of 3 modes x 2 guests, not 6"
echo "guests_smallest: report produced in ${elapsed} s"

# Stopped half way (SIGTERM, as kill and a ctest timeout send; Ctrl-C's
# SIGINT takes the same path, but a background job of a script starts with
# SIGINT ignored), the bench takes its guests with it: libvirtd, not the
# bench, is their parent, and left running they would burn the pCPUs until
# the next run.
lab_domains() { virsh -c qemu:///system list --all --name 2>/dev/null | grep -c '^vcpufold-bench-' || true; }
"$bench" --guests 2 --repetitions 1 --workloads hackbench-pipe --actuators cpuset --emulated-repetitions 0 \
  --work "$work/stopped" >"$work/out.log" 2>&1 &
stopped=$!
for _ in $(seq 240); do
  [[ $(lab_domains) -gt 0 ]] && break
  sleep 0.5
done
[[ $(lab_domains) -gt 0 ]] || fail "the second run started no guest within 120 s"
kill -TERM "$stopped"
status=0
wait "$stopped" || status=$?
[[ $status == 143 ]] || fail "stopped by SIGTERM, the bench exited with $status, not 143"
[[ $(lab_domains) == 0 ]] || fail "the stopped bench left its guests running: $(virsh list --name | grep vcpufold-bench-)"
echo "guests_smallest: stopped half way, it left no guest"
