# SPDX-License-Identifier: GPL-2.0-or-later
# Lab guest payload (lab.run=burn): keep every vCPU busy, so the host sees real
# run time and run-queue delay for each vCPU thread. With lab.hold on the
# kernel command line the burning waits for /tmp/lab/go, so that guests boot
# before their neighbours burn (a TCG guest starved while it boots can hang in
# a soft lockup).
mkdir -p /tmp/lab
burn() {
  for i in $(seq "$(nproc)"); do
    (while :; do :; done) &
  done
}
if grep -qw lab.hold /proc/cmdline; then
  (while [ ! -e /tmp/lab/go ]; do sleep 0.5; done; burn) &
else
  burn
fi
