# SPDX-License-Identifier: GPL-2.0-or-later
# Lab guest payload (lab.run=fold-lab): four CPU-bound tasks and the real
# vcpufold-agent, which finds its port by name (no udev in this guest).
# With lab.hold on the kernel command line the tasks wait for /tmp/lab/go,
# so that several TCG guests can boot before any of them loads the host.
mkdir -p /tmp/lab /etc/vcpufold
# Folding itself is under test, whatever the kernel class's default: fold always.
printf '[agent]\ninterval_ms = 500\nfold = "always"\n' >/etc/vcpufold/agent.toml
start_burners() {
  for i in 1 2 3 4; do
    (while :; do :; done) &
    echo $! >>/tmp/lab/burners
  done
}
if grep -qw lab.hold /proc/cmdline; then
  (while [ ! -e /tmp/lab/go ]; do sleep 0.5; done; start_burners) &
else
  start_burners
fi
vcpufold-agent --log-level debug >>/tmp/lab/agent.log 2>&1 &
echo $! >/tmp/lab/agent.pid
