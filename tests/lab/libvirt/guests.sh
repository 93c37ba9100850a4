#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Lab guests under libvirt (qemu:///system), for tests and fixture capture.
#   guests.sh start PAYLOAD NAME...   define and start TCG guests (4 vCPUs each) that
#                                    run /lab/PAYLOAD.sh; half of them get an explicit
#                                    channel socket path, the others libvirt's generated one
#   guests.sh stop NAME...           destroy and undefine them
# Starts virtlogd/libvirtd first when none runs. Env: VCPUFOLD_LAB_DIR, VCPUS (4),
# DOMAIN_TYPE (qemu = TCG, the default; kvm where hardware virtualization is real),
# GUEST_BINS (host binaries to copy into the image, with their libraries),
# LAB_ARGS (appended to the guests' kernel command line, e.g. lab.hold), KERNEL (a guest
# kernel image instead of the Debian cloud kernel, e.g. the patched one), CLOUD_KERNEL (the Debian
# meta package whose kernel boots the guests, e.g. linux-image-6.12-cloud-amd64), CPUSET (host
# CPUs the guests may run on, e.g. 0-1; default any), MEMORY (MiB, 256).
# Each guest's control port is $VCPUFOLD_LAB_DIR/libvirt/NAME.ctl.sock.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lab=${VCPUFOLD_LAB_DIR:-/var/tmp/vcpufold-lab}
virsh="virsh -c qemu:///system"
command=$1
shift
case $command in
  start)
    payload=$1
    shift
    "$here/libvirtd.sh"
    bins=()
    for binary in ${GUEST_BINS:-}; do bins+=(--bin "$binary"); done
    mapfile -t image < <(IMAGE=$payload "$here/../build-guest.sh" --add "$here/../guest/$payload.sh:/lab/$payload.sh" \
      "${bins[@]}" | tail -2)
    mkdir -p "$lab/libvirt"
    explicit=1
    for name in "$@"; do
      source=""
      [[ $explicit == 1 ]] && source="<source mode='bind' path='$lab/libvirt/$name.hint.sock'/>"
      explicit=$((1 - explicit))
      sed -e "s|@NAME@|$name|g" -e "s|@TYPE@|${DOMAIN_TYPE:-qemu}|g" -e "s|@KERNEL@|${KERNEL:-${image[0]}}|g" -e "s|@INITRD@|${image[1]}|g" \
        -e "s|@CMDLINE@|console=ttyS0 panic=-1 quiet lab.run=$payload ${LAB_ARGS:-}|g" -e "s|@VCPUS@|${VCPUS:-4}|g" \
        -e "s|@CPUSET@|${CPUSET:+ cpuset='$CPUSET'}|g" -e "s|@MEMORY@|${MEMORY:-256}|g" \
        -e "s|@CHANNEL_SOURCE@|$source|g" -e "s|@CONSOLE@|$lab/libvirt/$name.console.log|g" \
        -e "s|@CONTROL_SOCKET@|$lab/libvirt/$name.ctl.sock|g" \
        "$here/domain.xml.in" >"$lab/libvirt/$name.xml"
      $virsh destroy "$name" >/dev/null 2>&1 || true
      $virsh undefine "$name" >/dev/null 2>&1 || true
      $virsh define "$lab/libvirt/$name.xml" >/dev/null
      $virsh start "$name" >/dev/null
    done
    ;;
  stop)
    for name in "$@"; do
      $virsh destroy "$name" >/dev/null 2>&1 || true
      $virsh undefine "$name" >/dev/null 2>&1 || true
    done
    ;;
  *) echo "usage: guests.sh start PAYLOAD NAME... | stop NAME..." >&2; exit 2 ;;
esac
