#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# How this host's scheduler splits its CPUs among weighted VMs at fixed vCPU
# counts, with nothing of vcpufold running: emulated VMs (every vCPU busy),
# each in a CPU group of its own with its weight, as the contention bench
# places them. No count controller can be fairer than the host is at some
# count; this measures how fair that is.
#
# Usage: bench/contention/host-split.sh [options] COUNTS...
#   COUNTS            vCPUs of each VM, e.g. 2/1/1 (one line of output each)
#   --vm PATH         the vcpufold-emulated-vm binary (default: from the release build tree)
#   --weights LIST    the VMs' weights, comma-separated (default 300,100,100)
#   --tasks N         busy tasks in every VM (default 4)
#   --workload KIND   the VMs' workload (default compute)
#   --seconds S       measured seconds after 1.5 s of warm-up (default 4)
#   --repetitions N   measurements of each COUNTS, interleaved (default 1)
#   --libvirt-layout  each vCPU thread in a child group vcpuN, the other threads in
#                     a child group emulator, as libvirt lays a VM out on cgroup v1
#                     (default: one group per VM; the libvirt layout needs cgroup v1)
#   In the default layout on cgroup v1 each VM's control thread is moved back to
#   the root group once its vCPU threads run, as the contention bench does (it
#   stands for the guest kernel's bookkeeping and the bench's instruments); on
#   v2 it stays in the VM's group.
# Prints, per measurement: the counts, each VM's CPUs (all its threads' run time
# per second) and the largest relative deviation of a VM's share of what the
# VMs received from its weighted share. Needs root (cgroup v1 cpu or v2 with
# the cpu controller). The VMs share every CPU of the machine.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
vm=${VCPUFOLD_BUILD_DIR:-/var/tmp/vcpufold-build/$(printf '%s' "$root" | sha1sum | cut -c1-12)}/release/bench/contention/vcpufold-emulated-vm
weights=300,100,100 tasks=4 workload=compute seconds=4 repetitions=1 layout=flat
counts=()
while (($#)); do
  case $1 in
    --vm) vm=$2; shift 2 ;;
    --weights) weights=$2; shift 2 ;;
    --tasks) tasks=$2; shift 2 ;;
    --workload) workload=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --repetitions) repetitions=$2; shift 2 ;;
    --libvirt-layout) layout=libvirt; shift ;;
    -h|--help) sed -n '3,27p' "$0" | sed -E 's/^# ?//'; exit 0 ;;
    -*) echo "host-split: unknown option $1" >&2; exit 2 ;;
    *) counts+=("$1"); shift ;;
  esac
done
IFS=, read -r -a weight <<<"$weights"
((${#counts[@]})) || { echo "host-split: no COUNTS given (e.g. 2/1/1)" >&2; exit 2; }
for c in "${counts[@]}"; do
  IFS=/ read -r -a n <<<"$c"
  [[ ${#n[@]} == "${#weight[@]}" ]] || { echo "host-split: $c has ${#n[@]} counts for ${#weight[@]} weights" >&2; exit 2; }
done
[[ -x $vm ]] || { echo "host-split: $vm is not built (--vm PATH)" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "host-split: needs root (CPU groups)" >&2; exit 1; }

if grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
  groups=/sys/fs/cgroup/vcpufold-host-split
  mkdir -p "$groups"
  echo +cpu >/sys/fs/cgroup/cgroup.subtree_control
  echo +cpu >"$groups/cgroup.subtree_control"
  weigh() { echo "$2" >"$1/cpu.weight"; }
  release=""
  [[ $layout == flat ]] || { echo "host-split: --libvirt-layout needs cgroup v1 here" >&2; exit 2; }
elif [[ -e /sys/fs/cgroup/cpu/cgroup.procs ]]; then
  groups=/sys/fs/cgroup/cpu/vcpufold-host-split
  mkdir -p "$groups"
  weigh() { echo $(($2 * 1024 / 100)) >"$1/cpu.shares"; }
  release=/sys/fs/cgroup/cpu/tasks
else
  echo "host-split: no cpu cgroup controller" >&2
  exit 1
fi
work=$(mktemp -d)
pids=()
cleanup() {
  ((${#pids[@]})) && kill "${pids[@]}" 2>/dev/null
  wait 2>/dev/null || true
  find "$groups" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
  rmdir "$groups" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

run_ns() {  # all of a process's threads' run time so far
  local total=0 run rest
  for stat in /proc/"$1"/task/*/schedstat; do
    read -r run rest <"$stat" || continue
    total=$((total + run))
  done
  echo "$total"
}

measure() {
  local c=$1 i v group
  IFS=/ read -r -a n <<<"$c"
  pids=()
  for i in "${!n[@]}"; do
    group=$groups/vm$i
    mkdir -p "$group"
    weigh "$group" "${weight[$i]}"
    "$vm" --name "vm$i" --dir "$work" --vcpus "${n[$i]}" --busy "$tasks" --workload "$workload" --seconds 600 &
    pids+=($!)
    if [[ $layout == libvirt ]]; then
      mkdir -p "$group/emulator"
      echo "${pids[$i]}" >"$group/emulator/cgroup.procs"
    else
      echo "${pids[$i]}" >"$group/cgroup.procs"
    fi
  done
  if [[ $layout == libvirt ]]; then
    sleep 0.5
    # The vCPU threads are the ones that have run (every vCPU is busy).
    for i in "${!n[@]}"; do
      local k=0 tid run rest
      for task in /proc/"${pids[$i]}"/task/*; do
        tid=${task##*/}
        read -r run rest <"$task/schedstat"
        ((run > 100000000)) || continue
        mkdir -p "$groups/vm$i/vcpu$k"
        echo "$tid" >"$groups/vm$i/vcpu$k/tasks"
        k=$((k + 1))
      done
    done
  elif [[ -n $release ]]; then
    # Once the vCPU threads run (they are created at start), so that none
    # follows the control thread out.
    sleep 0.3
    for i in "${!n[@]}"; do echo "${pids[$i]}" >"$release"; done
  fi
  sleep 1.5
  local before=() after=() started ended
  for i in "${!n[@]}"; do before+=("$(run_ns "${pids[$i]}")"); done
  started=$(date +%s%N)
  sleep "$seconds"
  for i in "${!n[@]}"; do after+=("$(run_ns "${pids[$i]}")"); done
  ended=$(date +%s%N)
  kill "${pids[@]}" 2>/dev/null
  wait 2>/dev/null || true
  pids=()
  find "$groups" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
  awk -v counts="$c" -v layout="$layout" -v wall=$((ended - started)) -v before="${before[*]}" -v after="${after[*]}" \
    -v weights="${weight[*]}" 'BEGIN {
      n = split(before, b, " "); split(after, a, " "); split(weights, w, " ")
      for (i = 1; i <= n; i++) { cpus[i] = (a[i] - b[i]) / wall; total += cpus[i]; wsum += w[i] }
      line = counts " (" layout "):"
      for (i = 1; i <= n; i++) {
        line = line sprintf(" %.2f", cpus[i])
        d = (cpus[i] / total - w[i] / wsum) / (w[i] / wsum); if (d < 0) d = -d; if (d > worst) worst = d
      }
      printf "%s CPUs; largest deviation %.0f%%\n", line, 100 * worst
    }'
}

echo "host-split: weights $weights, $tasks $workload tasks per VM, ${seconds} s windows, $(nproc) CPUs, Linux $(uname -r)"
for ((r = 1; r <= repetitions; r++)); do
  for c in "${counts[@]}"; do measure "$c"; done
done
