#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds a Debian 12 guest that boots systemd and udev, with the
# vcpufold-agent .deb installed by dpkg as an operator would install it. The
# whole root file system is the initramfs (no disk image, no loop devices):
# the kernel unpacks it into memory and runs systemd from it.
#
# Usage: tests/lab/build-systemd-guest.sh [--uninstalled] [--with FILE]... AGENT_DEB
#   --uninstalled: the package is left in /root/ for the test to install, as
#                  the README's quick start does (image initramfs-systemd-uninstalled)
#   --with FILE:   FILE is copied into the guest's /root/ too (a package to
#                  upgrade to, say)
# Env:   VCPUFOLD_LAB_DIR (default /var/tmp/vcpufold-lab)
#        DEBIAN_MIRROR    (default http://deb.debian.org/debian)
# The base system (debootstrap, a few minutes) is cached under the lab
# directory and rebuilt only when its package list changes.
# Prints the kernel and initramfs paths on its last two lines.
set -euo pipefail

lab_dir=${VCPUFOLD_LAB_DIR:-/var/tmp/vcpufold-lab}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
uninstalled=0
extra_files=()
while [[ "${1:-}" == --* ]]; do
  case $1 in
    --uninstalled) uninstalled=1; shift ;;
    --with) extra_files+=("${2:?--with needs a file}"); shift 2 ;;
    *) echo "build-systemd-guest: unknown option $1" >&2; exit 2 ;;
  esac
done
deb=${1:?usage: build-systemd-guest.sh [--uninstalled] [--with FILE]... AGENT_DEB}
for file in "${extra_files[@]}"; do
  [[ -f "$file" ]] || { echo "build-systemd-guest: no such file: $file" >&2; exit 2; }
done
[[ -f "$deb" ]] || { echo "build-systemd-guest: no such package: $deb" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "build-systemd-guest: debootstrap is not installed" >&2; exit 1; }

source "$here/lib/cloud-kernel.sh"
fetch_cloud_kernel "$lab_dir" || exit 1

# The base: systemd as init, udev, D-Bus (the agent talks to systemd over
# it) and the packages' dependencies, so that dpkg -i needs nothing more.
# The dependencies go in with apt inside the new system: debootstrap's own
# resolver would satisfy libsystemd0 with libelogind0, which conflicts.
# libvirt0 and libxml2 are the hostd package's libraries beyond those: its unit
# is tested under this guest's systemd too (tests/e2e/hostd_systemd_e2e_test.cpp).
# The list is the same for every caller, so the cached base serves them all.
depends=$( (dpkg-deb -f "$deb" Depends | tr ',' '\n'; printf 'libvirt0\nlibxml2\n') |
  sed 's/^ *//; s/[ (|].*//' | grep -v '^$' | sort -u | paste -sd' ')
packages="systemd,systemd-sysv,udev,kmod,dbus,procps,iproute2"
base="$lab_dir/debian-systemd-base"
if [[ "$(cat "$base/.packages" 2>/dev/null)" != "$packages $depends" ]]; then
  rm -rf "$base"
  echo "build-systemd-guest: debootstrap bookworm with $packages, then $depends" >&2
  {
    debootstrap --variant=minbase --include="$packages" bookworm "$base" "$mirror" &&
      chroot "$base" apt-get update -qq &&
      # shellcheck disable=SC2086
      chroot "$base" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $depends
  } >"$lab_dir/debootstrap.log" 2>&1 || { tail -20 "$lab_dir/debootstrap.log" >&2; exit 1; }
  # What a RAM-only guest does not need: package caches, docs, locales.
  rm -rf "$base"/var/cache/apt/* "$base"/var/lib/apt/lists/* "$base"/usr/share/{doc,man,info,locale}/*
  echo "$packages $depends" >"$base/.packages"
fi

staging="$lab_dir/staging-systemd"
rm -rf "$staging"
cp -a "$base" "$staging"
rm -f "$staging/.packages"

# The virtio modules; udev loads them by alias when the devices appear.
module_dir="$kernel_root/lib/modules/$kernel_release"
mkdir -p "$staging/lib/modules/$kernel_release/kernel/drivers/char"
cp -a "$module_dir/kernel/drivers/virtio" "$staging/lib/modules/$kernel_release/kernel/drivers/"
cp "$module_dir/kernel/drivers/char/virtio_console.ko" "$staging/lib/modules/$kernel_release/kernel/drivers/char/"
# veth: the hostd test scrapes metrics from another network namespace.
mkdir -p "$staging/lib/modules/$kernel_release/kernel/drivers/net"
cp "$module_dir/kernel/drivers/net/veth.ko" "$staging/lib/modules/$kernel_release/kernel/drivers/net/"
cp "$module_dir"/modules.{order,builtin,builtin.modinfo} "$staging/lib/modules/$kernel_release/"
chroot "$staging" depmod "$kernel_release"

# The package, as an operator installs it. /sys is not mounted in the chroot,
# so its postinst's udev trigger touches nothing of this host.
if [[ $uninstalled == 1 ]]; then
  cp "$deb" "$staging/root/$(basename "$deb")"
else
  cp "$deb" "$staging/tmp/agent.deb"
  chroot "$staging" dpkg -i /tmp/agent.deb >"$lab_dir/systemd-guest-dpkg.log" 2>&1 ||
    { cat "$lab_dir/systemd-guest-dpkg.log" >&2; exit 1; }
  rm "$staging/tmp/agent.deb"
fi

for file in "${extra_files[@]}"; do cp "$file" "$staging/root/"; done

# The lab control port service (a test aid, not the product).
install -m 755 "$here/guest/lab-control" "$staging/usr/local/sbin/lab-control"
cat >"$staging/etc/systemd/system/lab-control.service" <<'UNIT'
[Unit]
Description=vcpufold lab control port (tests only)
[Service]
ExecStart=/usr/local/sbin/lab-control
Restart=always
[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/lab-control.service "$staging/etc/systemd/system/multi-user.target.wants/lab-control.service"
echo vcpufold-systemd-guest >"$staging/etc/hostname"
: >"$staging/etc/machine-id"
echo 'root::0:0:root:/root:/bin/bash' >"$staging/etc/passwd.new" && grep -v '^root:' "$staging/etc/passwd" >>"$staging/etc/passwd.new" &&
  mv "$staging/etc/passwd.new" "$staging/etc/passwd"
ln -sf /lib/systemd/systemd "$staging/init"

mkdir -p "$lab_dir/guest"
suffix=""
[[ $uninstalled == 0 ]] || suffix=-uninstalled
initramfs="$lab_dir/guest/initramfs-systemd$suffix.cpio.gz"
(cd "$staging" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$initramfs"
echo "build-systemd-guest: $(du -m "$initramfs" | cut -f1) MiB initramfs, kernel $kernel_release" >&2
echo "$kernel_image"
echo "$initramfs"
