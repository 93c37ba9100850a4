#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/contention/host-split.sh measures the host's weighted split: one line
# per measurement, each VM's CPUs summing to what the VMs received (at most
# the machine's CPUs), the deviation the same as computed from those CPUs;
# both layouts; its groups removed afterwards; bad arguments refused.
# Usage: host_split.sh SCRIPT EMULATED_VM_BINARY
set -euo pipefail
script=$1 vm=$2
if [[ $(id -u) != 0 ]]; then
  echo "[  SKIPPED ] host-split needs root for its CPU groups"
  exit 0
fi
fail() {
  echo "host_split: $*"
  exit 1
}
out=$("$script" --vm "$vm" --seconds 1 --repetitions 2 2/1/1 1/1/1) || fail "it failed: $out"
echo "$out"
[[ $(grep -c '^2/1/1 (flat): ' <<<"$out") == 2 ]] || fail "not two 2/1/1 lines"
[[ $(grep -c '^1/1/1 (flat): ' <<<"$out") == 2 ]] || fail "not two 1/1/1 lines"
cpus=$(nproc)
while read -r line; do
  # "COUNTS (LAYOUT): A B C CPUs; largest deviation D%"
  read -r a b c d <<<"$(sed -E 's/^[^:]*: ([0-9.]+) ([0-9.]+) ([0-9.]+) CPUs; largest deviation ([0-9]+)%$/\1 \2 \3 \4/' <<<"$line")"
  [[ -n $d ]] || fail "cannot read: $line"
  awk -v a="$a" -v b="$b" -v c="$c" -v d="$d" -v cpus="$cpus" 'BEGIN {
      t = a + b + c
      if (t <= 0.2 || t > cpus + 0.05) exit 1   # the VMs ran, and on no more than the machine has
      split("0.6 0.2 0.2", w, " "); x[1] = a; x[2] = b; x[3] = c
      for (i = 1; i <= 3; i++) { e = (x[i] / t - w[i]) / w[i]; if (e < 0) e = -e; if (e > m) m = e }
      # The deviation is what the CPUs say, within what their rounding to
      # hundredths allows: 0.005 on each share and 0.015 on the total, about
      # 2 points for a light VM at t = 2, and the printed deviation is rounded.
      for (i = 1; i <= 3; i++) { r = 100 * (0.005 + 0.015 * x[i] / t) / (t * w[i]) + 0.5; if (r > tol) tol = r }
      exit (100 * m - d > tol || d - 100 * m > tol)
    }' || fail "inconsistent: $line"
done < <(grep ' CPUs; largest deviation ' <<<"$out")
# A 1-vCPU VM never gets more than one CPU.
grep '^1/1/1' <<<"$out" | awk '{ for (i = 3; i <= 5; i++) if ($i > 1.05) exit 1 }' || fail "a 1-vCPU VM over 1 CPU"
libvirt=$("$script" --vm "$vm" --seconds 1 --libvirt-layout 2/1/1 2>&1) || {
  grep -q 'needs cgroup v1' <<<"$libvirt" || fail "the libvirt layout failed: $libvirt"
}
echo "$libvirt"
for group in /sys/fs/cgroup/cpu/vcpufold-host-split /sys/fs/cgroup/vcpufold-host-split; do
  [[ ! -e $group ]] || fail "$group left behind"
done
for bad in "2/1" "--weights 1,2 2/1/1" "--nonsense 2/1/1" ""; do
  # shellcheck disable=SC2086
  if "$script" --vm "$vm" $bad >/dev/null 2>&1; then fail "accepted: '$bad'"; fi
done
echo "host_split: ok"
