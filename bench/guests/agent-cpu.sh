#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The guest agent's own CPU time in a guests-bench run, per guest and
# measurement: the ticks (1/100 s) of every vcpufold-agent thread during the
# measured window, per second of it, from the bench's where.txt (raw:
# docs/data/guests-*where*.txt). Prints, per actuator and mode of WORKLOAD,
# the median over guests and repetitions, with the smallest and largest.
# Usage: bench/guests/agent-cpu.sh WHERE_TXT WORKLOAD
set -euo pipefail
where=$1 workload=$2
awk -v workload="$workload" '
  function flush() { if (key != "" && window > 0) values[key] = values[key] " " agent / window }
  $1 == "#" { flush(); key = ($5 == workload) ? $2 " " $3 : ""; agent = 0; window = 0; next }
  $1 == "window" { window = $2 }
  $1 == "thread" && $2 == "vcpufold-agent" { agent += $4 }
  END {
    flush()
    for (k in values) {
      n = split(substr(values[k], 2), v, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
      median = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      printf "%s: agent %.1f ticks/s per guest (median of %d; %.1f to %.1f)\n", k, median, n, v[1], v[n]
    }
  }' "$where" | sort
