#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Starts virtlogd and libvirtd when none runs (machines whose PID 1 is not
# systemd start no daemons), and gives /dev/kvm the group and mode Debian's
# udev rule would where no udev did. Prints nothing on success. Idempotent.
set -euo pipefail
# Without udev /dev/kvm stays root's alone (0600), where Debian's udev rule
# gives it to group kvm (0660), which libvirt's QEMU user is in. libvirt then
# probes QEMU as root and finds KVM, sees its QEMU user cannot open /dev/kvm,
# judges its capability cache stale and probes QEMU again every time it
# consults the cache: about 50 s of probing for each `virsh define` (its log,
# at debug level: "KVM was enabled when probing ..., but it is not available
# now"). The lab's domains are TCG (type='qemu') and never open /dev/kvm; the
# device gets what Debian's udev would give it, and nothing else changes.
# Where it cannot (a device node this root may not change), the lab still
# works, slowly, and says why.
if [[ -c /dev/kvm ]] && getent group kvm >/dev/null && [[ $(stat -c %G:%a /dev/kvm) == root:600 ]]; then
  chgrp kvm /dev/kvm && chmod 0660 /dev/kvm ||
    echo "libvirtd.sh: /dev/kvm stays root's alone; libvirt will probe QEMU for about 50 s at every virsh define" >&2
fi
pgrep -x virtlogd >/dev/null || virtlogd -d
if ! pgrep -x libvirtd >/dev/null; then
  libvirtd -d
  for _ in $(seq 50); do virsh -c qemu:///system version >/dev/null 2>&1 && break; sleep 0.1; done
fi
virsh -c qemu:///system version >/dev/null
