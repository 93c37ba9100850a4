#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vcpufold-bench-contention --quick, as scripts/test.sh runs it: the bench runs
# end to end (emulated VMs in its cpuset, the real agents and hostd) in under
# 2 minutes and writes its report, table, CSV and plot. On cgroup v1 each VM's
# control thread runs outside the VM's CPU group and its vCPU threads inside.
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
# Where a running VM's threads are in the cpu hierarchy (v1): "MAIN VCPU".
placement() {
  local pid task tid main=
  pid=$(pgrep -f 'vcpufold-emulated-vm --name vm-1 ' | head -1) || return 1
  [[ -n $pid ]] || return 1
  main=$(sed -n 's/^[0-9]*:cpu,cpuacct:\(.*\)$/\1/p; s/^[0-9]*:cpu:\(.*\)$/\1/p' "/proc/$pid/task/$pid/cgroup")
  for task in /proc/"$pid"/task/*; do
    tid=${task##*/}
    [[ $tid != "$pid" ]] || continue
    # A vCPU thread: it has run (the VM's tasks are busy).
    read -r run _ <"/proc/$pid/task/$tid/schedstat"
    ((run > 50000000)) || continue
    echo "$main $(sed -n 's/^[0-9]*:cpu,cpuacct:\(.*\)$/\1/p; s/^[0-9]*:cpu:\(.*\)$/\1/p' "/proc/$pid/task/$tid/cgroup")"
    return 0
  done
  return 1
}
started=$(date +%s)
"$bench" --quick --work "$work" --out "$work/results" >"$work/out.log" 2>&1 &
bench_pid=$!
seen=
if [[ -d /sys/fs/cgroup/cpu && ! -e /sys/fs/cgroup/cgroup.controllers ]]; then
  for _ in $(seq 1 200); do
    seen=$(placement 2>/dev/null) && [[ -n $seen && $seen != */vcpufold-bench/vm-1\ * ]] && break
    seen=
    sleep 0.1
  done
fi
wait "$bench_pid" || fail "the bench failed"
if [[ -d /sys/fs/cgroup/cpu && ! -e /sys/fs/cgroup/cgroup.controllers ]]; then
  [[ -n $seen ]] || fail "no VM whose control thread had left its CPU group"
  read -r main vcpu <<<"$seen"
  [[ $main == / ]] || fail "the control thread is in $main, not the root group"
  [[ $vcpu == /vcpufold-bench/vm-1 ]] || fail "a vCPU thread is in $vcpu, not the VM's group"
  echo "contention_quick: control thread in $main, vCPU threads in $vcpu"
fi
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
