#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vcpufold-bench-guests' two side tools (label e2e, with the guests):
#   --pool: the page's pooled stock 6.12 compute figure recomputes from the
#           committed CSVs (docs/performance.md, "nine runs pooled");
#   --fold-cost: the probe in its smallest configuration (one stock 6.1 guest
#           on host CPU 0, two pairs) writes its CSV and table (two pairs show
#           nothing, so the figures are not judged).
# Usage: fold_cost_smallest.sh BENCH_BINARY SOURCE_DIR
set -euo pipefail
bench=$1
source_dir=$2
work=$(mktemp -d /var/tmp/vcpufold-fold-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "fold_cost_smallest: $*"
  cat "$work/out.log" 2>/dev/null || true
  exit 1
}
data=$source_dir/docs/data
runs=$data/guests-runs-aaf159e.csv,$data/guests-runs-f5c02b7.csv,$data/guests-compute-44d46dc-runs.csv
runs+=,$data/guests-compute-ce16a5b-runs.csv,$data/guests-host-busy-1-runs.csv,$data/guests-host-busy-2-runs.csv
runs+=,$data/guests-compute-12rep-62d6ae5-runs.csv,$data/guests-fold-onto-2-a-runs.csv,$data/guests-fold-onto-2-b-runs.csv
"$bench" --pool "$runs" >"$work/out.log" 2>&1 || fail "--pool failed"
# shellcheck disable=SC2016 # the backticks are the table's markdown
grep -q '^| `cpuset-6.12` | compute | 9 | 58 | 0.90 \[0.86, 0.94\] | 40 | 0.87 \[0.80, 0.92\] | 1.03 \[0.98, 1.07\] |$' "$work/out.log" ||
  fail "the pooled stock 6.12 compute row is not the page's"
grep -q 'guests-runs-f5c02b7.csv' "$work/out.log" || fail "the pooled table does not name its sources"
if "$bench" --pool "$data/does-not-exist.csv" >"$work/missing.log" 2>&1; then
  fail "--pool of a missing file succeeded"
fi
grep -q 'cannot read' "$work/missing.log" || fail "no clear error for a missing file: $(cat "$work/missing.log")"

if [[ $(id -u) != 0 ]]; then
  echo "[  SKIPPED ] the probe needs root (libvirt's system instance); --pool checked"
  exit 0
fi
for tool in qemu-system-x86_64 libvirtd virsh cpio; do
  command -v "$tool" >/dev/null || { echo "[  SKIPPED ] $tool is not installed; --pool checked"; exit 0; }
done
"$bench" --fold-cost 2 --actuators cpuset --work "$work" --out "$work/results" >"$work/out.log" 2>&1 ||
  fail "the probe failed"
csv=$work/results/fold-cost.csv
[[ $(head -1 "$csv") == kernel,repetition,spread_s,folded_s ]] || fail "fold-cost.csv has no header"
rows=$(grep -Ec '^6\.1\.[^,]*,[12],[0-9]+\.[0-9]{3},[0-9]+\.[0-9]{3}$' "$csv")
[[ $rows == 2 ]] || fail "fold-cost.csv has $rows rows of the stock 6.1 kernel, not 2: $(cat "$csv")"
awk -F, 'NR > 1 && ($3 <= 0 || $4 <= 0) { exit 1 }' "$csv" || fail "a unit without a positive time"
grep -Eq '^\| 6\.1\.[^|]* \| 2 \| [0-9.]+ \[[0-9.]+, [0-9.]+\] \| [0-9.]+ \| [0-9.]+ \| [0-2] of 2 \|$' \
  "$work/results/fold-cost.md" || fail "no table row for the stock 6.1 kernel"
echo "fold_cost_smallest: --pool recomputes the page's figure; the probe produced its report"
