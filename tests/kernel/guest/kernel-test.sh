# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of the patched-kernel tests (run by the lab init, lab.run=kernel-test):
# the agent's configuration. The test starts the agent, the CPU-bound tasks and
# hackbench itself, through the control port.
mkdir -p /tmp/kt /etc/vcpufold
# The kernel actuator's mechanics are under test, whatever the class's default: fold always.
printf '[agent]\ninterval_ms = 500\nlog_level = "debug"\nfold = "always"\n' >/etc/vcpufold/agent.toml
# Last: the control port answers before this payload has run, and under load
# a test's first command came before /tmp/kt existed (the agent's log could
# not be opened, so the agent never started); the test waits for this file.
: >/tmp/kt/ready
