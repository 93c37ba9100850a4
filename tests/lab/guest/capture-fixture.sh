# SPDX-License-Identifier: GPL-2.0-or-later
# Runs in the lab guest: prints, between markers, a base64 tar of the files a
# vcpufold fixture tree holds (CPU topology, NUMA, /proc/stat and /proc/loadavg, cgroup2 root),
# then powers off. tests/lab/capture-fixture.sh unpacks it on the host.
echo +cpuset >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
mkdir -p /sys/fs/cgroup/system.slice
dir=/tmp/capture
mkdir -p $dir
for path in /sys/devices/system/cpu/possible /sys/devices/system/cpu/present /sys/devices/system/cpu/online \
  /sys/devices/system/cpu/offline /sys/devices/system/cpu/isolated /sys/devices/system/cpu/nohz_full \
  /sys/devices/system/cpu/kernel_max /sys/devices/system/cpu/cpu*/online \
  /sys/devices/system/cpu/cpu*/topology/thread_siblings_list /sys/devices/system/cpu/cpu*/topology/core_cpus_list \
  /sys/devices/system/cpu/cpu*/topology/core_id /sys/devices/system/cpu/cpu*/topology/physical_package_id \
  /sys/devices/system/node/online /sys/devices/system/node/possible /sys/devices/system/node/has_cpu \
  /sys/devices/system/node/node*/cpulist /proc/stat /proc/loadavg /proc/sys/kernel/osrelease /proc/cmdline /proc/cpuinfo /proc/self/mountinfo /sys/class/virtio-ports/*/name \
  /sys/fs/cgroup/cgroup.controllers /sys/fs/cgroup/cgroup.subtree_control /sys/fs/cgroup/cpuset.cpus.effective \
  /sys/fs/cgroup/system.slice/cpuset.cpus /sys/fs/cgroup/system.slice/cpuset.cpus.effective \
  /sys/fs/cgroup/system.slice/cgroup.procs /sys/fs/cgroup/machine.slice/cpuset.cpus \
  /sys/fs/cgroup/machine.slice/cpuset.cpus.effective /sys/fs/cgroup/machine.slice/cpu.weight \
  /proc/irq/*/smp_affinity_list /proc/irq/*/effective_affinity_list /proc/interrupts /proc/softirqs \
  /sys/devices/virtual/workqueue/cpumask /proc/1/comm; do
  [ -e "$path" ] || continue
  mkdir -p "$dir$(dirname "$path")"
  cat "$path" >"$dir$path" 2>/dev/null
done
sleep 1
cat /proc/stat >$dir/proc/stat.later
echo "@@CAPTURE-BEGIN"
tar -C $dir -cf - . | gzip | base64
echo "@@CAPTURE-END"
poweroff -f
