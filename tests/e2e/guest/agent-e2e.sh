# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of the agent end-to-end test (run by the lab init, lab.run=agent-e2e):
# CPU-bound tasks and the real agent, which must find its port by name (no udev here).
mkdir -p /tmp/e2e
for i in 1 2 3 4; do
  (while :; do :; done) &
  echo $! >>/tmp/e2e/burners
done
# These tests are about folding itself (hints, cpusets, hostd, migration),
# whatever the guest kernel class's default (docs/guest-agent.md): fold always.
mkdir -p /etc/vcpufold
printf '[agent]\nfold = "always"\n' >/etc/vcpufold/agent.toml
vcpufold-agent --log-level debug >/tmp/e2e/agent.log 2>&1 &
echo $! >/tmp/e2e/agent.pid
