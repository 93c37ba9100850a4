#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Measures vcpufold-agent's resident memory and CPU time at the default
# interval, on this machine's real /proc and /sys, with a host feeding it a
# hint every second over unix-listen (the actuator is "none": nothing on this
# machine is changed).
# Usage: bench/agent-footprint.sh [AGENT_BINARY] [SECONDS=60]
set -euo pipefail
agent=${1:-/var/tmp/vcpufold-build/$(printf '%s' "$(cd "$(dirname "$0")/.." && pwd)" | sha1sum | cut -c1-12)/release/guest-agent/vcpufold-agent}
seconds=${2:-60}
work=$(mktemp -d)
trap 'kill "$feeder" "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
"$agent" --actuator none --port "unix-listen:$work/agent.sock" --log-level warn 2>"$work/agent.log" &
pid=$!
for _ in $(seq 50); do [[ -S "$work/agent.sock" ]] && break; sleep 0.1; done
(
  for seq in $(seq 1 "$seconds"); do
    printf '{"v":1,"type":"hint","seq":%d,"vcpus":%d,"ttl_ms":3000,"policy":"auto","reason":"bench"}\n' "$seq" $((seq % 2 + 1))
    sleep 1
  done
) | socat - "UNIX-CONNECT:$work/agent.sock" >"$work/replies" &
feeder=$!
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
sleep 2
start_cpu=$(cpu)
start=$(date +%s.%N)
sleep $((seconds - 4))
end_cpu=$(cpu)
end=$(date +%s.%N)
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
acks=$(grep -c '"type":"ack"' "$work/replies" || true)
awk -v c0="$start_cpu" -v c1="$end_cpu" -v t0="$start" -v t1="$end" -v hz="$ticks" -v rss="$rss" -v acks="$acks" 'BEGIN {
  cpu = (c1 - c0) / hz; wall = t1 - t0;
  printf "agent footprint: RSS %d KiB (%.1f MiB); CPU %.3f s over %.1f s = %.3f%% of one CPU; %d hints acked\n",
         rss, rss / 1024, cpu, wall, 100 * cpu / wall, acks }'
