# Lab guest payload (lab.run=fold-lab): four CPU-bound tasks and the real
# vcpufold-agent, which finds its port by name (no udev in this guest).
mkdir -p /tmp/lab /etc/vcpufold
printf '[agent]\ninterval_ms = 500\n' >/etc/vcpufold/agent.toml
for i in 1 2 3 4; do
  (while :; do :; done) &
  echo $! >>/tmp/lab/burners
done
vcpufold-agent --log-level debug >>/tmp/lab/agent.log 2>&1 &
echo $! >/tmp/lab/agent.pid
