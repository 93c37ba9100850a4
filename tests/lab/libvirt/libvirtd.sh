#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Starts virtlogd and libvirtd when none runs (machines whose PID 1 is not
# systemd start no daemons). Prints nothing on success. Idempotent.
set -euo pipefail
pgrep -x virtlogd >/dev/null || virtlogd -d
if ! pgrep -x libvirtd >/dev/null; then
  libvirtd -d
  for _ in $(seq 50); do virsh -c qemu:///system version >/dev/null 2>&1 && break; sleep 0.1; done
fi
virsh -c qemu:///system version >/dev/null
