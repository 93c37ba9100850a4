# SPDX-License-Identifier: GPL-2.0-or-later
# Lab guest payload (lab.run=latency-lab), for vcpufold-bench-latency --lab:
# the real vcpufold-agent (fold = "always", otherwise its defaults; debug log, which carries the
# monotonic times the bench lines up with hostd's), and /lab/set-tasks, with
# which the host sets the guest's CPU-bound tasks.
mkdir -p /tmp/lab
cat >/lab/set-tasks <<'SCRIPT'
# set-tasks N: from now on N CPU-bound tasks; prints the guest's monotonic
# clock once they are started (the demand change, in the guest's time).
[ -s /tmp/lab/burners ] && kill $(cat /tmp/lab/burners) 2>/dev/null
: >/tmp/lab/burners
i=0
while [ "$i" -lt "$1" ]; do
  (while :; do :; done) &
  echo $! >>/tmp/lab/burners
  i=$((i + 1))
done
{ read -r _; read -r _; read -r now; } </proc/timer_list
echo "$now"
SCRIPT
# The latency of folding is measured, whatever the kernel class's default: fold always.
mkdir -p /etc/vcpufold
printf '[agent]\nfold = "always"\n' >/etc/vcpufold/agent.toml
vcpufold-agent --log-level debug >>/tmp/lab/agent.log 2>&1 &
echo $! >/tmp/lab/agent.pid
