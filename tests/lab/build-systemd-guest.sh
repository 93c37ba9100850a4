#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds a Debian guest (12 by default, or 13) that boots systemd and udev,
# with the vcpufold-agent .deb installed by dpkg as an operator would install
# it. The whole root file system is the initramfs (no disk image, no loop
# devices): the kernel unpacks it into memory and runs systemd from it.
#
# Usage: tests/lab/build-systemd-guest.sh [--release R] [--uninstalled] [--with FILE]... AGENT_DEB
#   --release R:   bookworm (Debian 12, its 6.1 cloud kernel; the default) or
#                  trixie (Debian 13, its own 6.12 cloud kernel, taken from
#                  trixie's archive; images get the suffix -trixie)
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
release=bookworm
extra_files=()
while [[ "${1:-}" == --* ]]; do
  case $1 in
    --release) release=${2:?--release needs bookworm or trixie}; shift 2 ;;
    --uninstalled) uninstalled=1; shift ;;
    --with) extra_files+=("${2:?--with needs a file}"); shift 2 ;;
    *) echo "build-systemd-guest: unknown option $1" >&2; exit 2 ;;
  esac
done
case $release in
  bookworm | trixie) ;;
  *) echo "build-systemd-guest: --release $release: expected bookworm or trixie" >&2; exit 2 ;;
esac
deb=${1:?usage: build-systemd-guest.sh [--release R] [--uninstalled] [--with FILE]... AGENT_DEB}
for file in "${extra_files[@]}"; do
  [[ -f "$file" ]] || { echo "build-systemd-guest: no such file: $file" >&2; exit 2; }
done
[[ -f "$deb" ]] || { echo "build-systemd-guest: no such package: $deb" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "build-systemd-guest: debootstrap is not installed" >&2; exit 1; }

source "$here/lib/cloud-kernel.sh"
source "$here/lib/debian-base.sh"

# The base: the release's bare system (debootstrap minbase, shared with the
# package tests), then, with apt inside it, systemd as init, udev, D-Bus (the
# agent talks to systemd over it) and the packages' dependencies, so that
# dpkg -i needs nothing more.
# libvirt0 and libxml2 are the hostd package's libraries beyond those: its unit
# is tested under this guest's systemd too (tests/e2e/hostd_systemd_e2e_test.cpp).
# The list is the same for every caller, so the cached base serves them all.
depends=$( (dpkg-deb -f "$deb" Depends | tr ',' '\n'; printf 'libvirt0\nlibxml2\n') |
  sed 's/^ *//; s/[ (|].*//' | grep -v '^$' | sort -u | paste -sd' ')
packages="systemd,systemd-sysv,udev,kmod,dbus,procps,iproute2"
base="$lab_dir/debian-systemd-base"
[[ $release == bookworm ]] || base+="-$release"
# The guest's kernel: Debian 12's 6.1 cloud kernel (the host's own package
# lists know it), or the release's own cloud kernel, which only the new
# system's lists know: downloaded there while they exist, its name kept
# with the base.
base_kernel() { [[ $release == bookworm ]] || cat "$base/.kernel" 2>/dev/null; }
if [[ "$(cat "$base/.packages" 2>/dev/null)" != "$packages $depends" ||
  ($release != bookworm && ! -f "$lab_dir/debs/$(base_kernel)") ]]; then
  rm -rf "$base"
  echo "build-systemd-guest: $release with ${packages//,/ } $depends" >&2
  debian_minbase "$lab_dir" "$release" "$mirror" || exit 1
  cp -a "$minbase" "$base"
  rm -f "$base/.complete"
  cp /etc/resolv.conf "$base/etc/resolv.conf"
  echo "deb $mirror $release main" >"$base/etc/apt/sources.list"
  # Packages' scripts start nothing in the new system (policy-rc.d), and see
  # a /proc of their own to tell they run in a chroot.
  printf '#!/bin/sh\nexit 101\n' >"$base/usr/sbin/policy-rc.d"
  chmod 755 "$base/usr/sbin/policy-rc.d"
  mount -t proc proc "$base/proc"
  trap 'umount "$base/proc" 2>/dev/null || true' EXIT
  {
    chroot "$base" apt-get update -qq &&
      # shellcheck disable=SC2086
      chroot "$base" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        ${packages//,/ } $depends &&
      if [[ $release != bookworm ]]; then
        kernel_package=$(chroot "$base" apt-cache depends linux-image-cloud-amd64 |
          sed -n 's/.*Depends: \(linux-image-.*-cloud-amd64\)$/\1/p' | head -1) &&
          [[ -n $kernel_package ]] && mkdir -p "$lab_dir/debs" &&
          chroot "$base" sh -c "cd /tmp && apt-get download -q $kernel_package" &&
          mv "$base"/tmp/"$kernel_package"_*.deb "$lab_dir/debs/" &&
          basename "$(ls "$lab_dir/debs/$kernel_package"_*.deb | head -1)" >"$base/.kernel"
      fi
  } >"$lab_dir/systemd-base-$release.log" 2>&1 || { tail -20 "$lab_dir/systemd-base-$release.log" >&2; exit 1; }
  umount "$base/proc"
  trap - EXIT
  rm "$base/usr/sbin/policy-rc.d"
  # What a RAM-only guest does not need: package caches, docs, locales.
  rm -rf "$base"/var/cache/apt/* "$base"/var/lib/apt/lists/* "$base"/usr/share/{doc,man,info,locale}/*
  echo "$packages $depends" >"$base/.packages"
fi
if [[ $release == bookworm ]]; then
  fetch_cloud_kernel "$lab_dir" || exit 1
else
  unpack_kernel_deb "$lab_dir" "$lab_dir/debs/$(base_kernel)" || exit 1
fi

staging="$lab_dir/staging-systemd-$release"
rm -rf "$staging"
cp -a "$base" "$staging"
rm -f "$staging/.packages" "$staging/.kernel"

# The virtio modules; udev loads them by alias when the devices appear.
# (6.12's cloud kernel has them all built in, and compresses modules: the
# guest's kmod reads .ko.xz.)
# Debian 13's kernel package ships its modules under /usr/lib.
module_dir="$kernel_root/lib/modules/$kernel_release"
[[ -d $module_dir ]] || module_dir="$kernel_root/usr/lib/modules/$kernel_release"
mkdir -p "$staging/lib/modules/$kernel_release/kernel/drivers/"{char,net}
if [[ -d $module_dir/kernel/drivers/virtio ]]; then
  cp -a "$module_dir/kernel/drivers/virtio" "$staging/lib/modules/$kernel_release/kernel/drivers/"
fi
for module in char/virtio_console net/veth; do  # veth: the hostd test scrapes from another network namespace
  for file in "$module_dir/kernel/drivers/$module".ko*; do
    if [[ -f $file ]]; then cp "$file" "$staging/lib/modules/$kernel_release/kernel/drivers/$(dirname "$module")/"; fi
  done
done
cp "$module_dir"/modules.{order,builtin,builtin.modinfo} "$staging/lib/modules/$kernel_release/"
chroot "$staging" depmod "$kernel_release"

# The package, as an operator installs it. /sys is not mounted in the chroot,
# so its postinst's udev trigger touches nothing of this host.
if [[ $uninstalled == 1 ]]; then
  cp "$deb" "$staging/root/$(basename "$deb")"
else
  cp "$deb" "$staging/tmp/agent.deb"
  chroot "$staging" dpkg -i /tmp/agent.deb >"$lab_dir/systemd-guest-dpkg-$release.log" 2>&1 ||
    { cat "$lab_dir/systemd-guest-dpkg-$release.log" >&2; exit 1; }
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
[[ $release == bookworm ]] || suffix+=-$release
[[ $uninstalled == 0 ]] || suffix+=-uninstalled
initramfs="$lab_dir/guest/initramfs-systemd$suffix.cpio.gz"
(cd "$staging" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$initramfs"
echo "build-systemd-guest: $(du -m "$initramfs" | cut -f1) MiB initramfs, kernel $kernel_release" >&2
echo "$kernel_image"
echo "$initramfs"
