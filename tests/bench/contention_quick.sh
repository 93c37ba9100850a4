#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vcpufold-bench-contention --quick, as scripts/test.sh runs it: the bench runs
# end to end (emulated VMs in its cpuset, the real agents and hostd) in under
# 2 minutes and writes its report, table, CSV and plot.
# Usage: contention_quick.sh BENCH_BINARY
set -euo pipefail
bench=$1
if [[ $(id -u) != 0 ]]; then
  echo "[  SKIPPED ] the bench needs root for its cpuset and CPU groups"
  exit 0
fi
work=$(mktemp -d /var/tmp/vcpufold-bench-quick.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "contention_quick: $*"
  cat "$work/out.log"
  exit 1
}
started=$(date +%s)
"$bench" --quick --work "$work" --out "$work/results" >"$work/out.log" 2>&1 || fail "the bench failed"
elapsed=$(($(date +%s) - started))
results=$work/results
for file in results.md results.csv contention-ratios.png; do
  [[ -s $results/$file ]] || fail "no $file"
done
grep -q '^| unfolded | 4/4/4 | ' "$results/results.md" || fail "no unfolded row in results.md"
grep -q '^| vcpufold | (controller) | ' "$results/results.md" || fail "no vcpufold row in results.md"
grep -q '^| `steady/spinlock`: vcpufold / unfolded >= 1.30 | .* | not shown |' "$results/results.md" ||
  fail "one repetition must not show a target"
rows=$(grep -c '^steady/spinlock,\(unfolded\|vcpufold\),1,vm-[123],' "$results/results.csv")
[[ $rows == 6 ]] || fail "results.csv has $rows rows of 2 modes x 3 VMs, not 6"
((elapsed < 120)) || fail "took ${elapsed} s, over 2 minutes"
echo "contention_quick: report produced in ${elapsed} s"
