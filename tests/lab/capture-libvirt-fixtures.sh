#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Captures host-side fixtures from real TCG guests under libvirt: virsh
# domstats --vcpu (twice), the live domain XML (channel socket paths), QMP
# query-cpus-fast, the vCPU threads' schedstat (twice) and the host's cgroup
# files for the VMs. Two guests burn all their vCPUs on this machine's pCPUs.
# Usage: tests/lab/capture-libvirt-fixtures.sh OUT_DIR
set -euo pipefail
out=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lab=${VCPUFOLD_LAB_DIR:-/var/tmp/vcpufold-lab}
virsh="virsh -c qemu:///system"
cleanup() { "$here/libvirt/guests.sh" stop fixture-a fixture-b; }
trap cleanup EXIT
"$here/libvirt/guests.sh" start burn fixture-a fixture-b
mkdir -p "$out"
sleep 25  # boot (TCG) and let the burners run
for d in fixture-a fixture-b; do $virsh dumpxml $d >"$out/$d.live.xml"; done
$virsh qemu-monitor-command fixture-a '{"execute":"query-cpus-fast"}' >"$out/fixture-a.query-cpus-fast.json"
threads=$(python3 -c 'import json,sys; print(" ".join(str(c["thread-id"]) for c in json.load(open(sys.argv[1]))["return"]))' "$out/fixture-a.query-cpus-fast.json")
qemu_pid=$(cat /run/libvirt/qemu/fixture-a.pid)
for round in 1 2; do
  $virsh domstats --vcpu >"$out/domstats-$round.txt"
  for tid in $threads; do
    mkdir -p "$out/proc/$qemu_pid/task/$tid"
    cat "/proc/$qemu_pid/task/$tid/schedstat" >"$out/proc/$qemu_pid/task/$tid/schedstat.$round"
  done
  cat /proc/stat >"$out/proc-stat.$round"
  [[ $round == 1 ]] && sleep 1
done
echo "$qemu_pid" >"$out/fixture-a.qemu-pid"
for f in cpuset/machine/cpuset.effective_cpus cpuset/machine/cpuset.cpus cpu/machine/cpu.shares; do
  [[ -f /sys/fs/cgroup/$f ]] && { mkdir -p "$out/sys/fs/cgroup/$(dirname $f)"; cp "/sys/fs/cgroup/$f" "$out/sys/fs/cgroup/$f"; }
done
find /sys/fs/cgroup/cpu/machine -maxdepth 2 -name cpu.shares 2>/dev/null | while read -r f; do
  mkdir -p "$out$(dirname "$f")"; cp "$f" "$out$f"
done
echo "captured into $out: $(ls "$out" | tr '\n' ' ')"
