#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Boots the lab guest under QEMU with the given topology and captures its CPU,
# NUMA, /proc/stat and cgroup files into a fixture tree for the unit tests.
# Env: CPU_MODEL (default max; AMD-like models need topoext for SMT); CLOUD_KERNEL (the
# Debian kernel's meta package, as build-guest.sh takes it; default Debian 12's 6.1).
# Usage: tests/lab/capture-fixture.sh OUT_DIR "QEMU -smp/-numa ARGS" ["KERNEL ARGS"] ["GUEST COMMANDS"]
# Example: tests/lab/capture-fixture.sh tests/fixtures/guest-smt2-numa2 \
#   "-smp 8,sockets=2,cores=2,threads=2 -numa node,cpus=0-3 -numa node,cpus=4-7"
set -euo pipefail
out=$1
topology=$2
append=${3:-}
pre=${4:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{ [[ -n "$pre" ]] && echo "$pre"; cat "$here/guest/capture-fixture.sh"; } >"$work/capture.sh"
mapfile -t image < <(IMAGE=capture "$here/build-guest.sh" --add "$work/capture.sh:/lab/capture.sh" | tail -2)
# shellcheck disable=SC2086
timeout 300 qemu-system-x86_64 -accel tcg,thread=multi -cpu "${CPU_MODEL:-max}" -m 512M $topology \
  -M pc -nodefaults -no-user-config -display none -no-reboot \
  -kernel "${image[0]}" -initrd "${image[1]}" \
  -append "console=ttyS0 panic=-1 quiet lab.run=capture $append" \
  -serial file:"$work/console.log" \
  -device virtio-serial-pci -chardev null,id=hint -device virtserialport,chardev=hint,name=org.vcpufold.hint.0
rm -rf "$out"
mkdir -p "$out"
sed -n '/@@CAPTURE-BEGIN/,/@@CAPTURE-END/p' "$work/console.log" | tr -d '\r' | sed '1d;$d' | base64 -d | tar -xzf - -C "$out"
echo "captured $(find "$out" -type f | wc -l) files into $out"
