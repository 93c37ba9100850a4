#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# How busy the host's CPUs were, and how much of them the guests' QEMUs got,
# in each measurement of a guests-bench run: a sampler that runs beside the
# bench, and a report over what it sampled and the bench's output.
#
#   bench/guests/host-busy.sh sample >SAMPLES
#       every second: the time, the host's busy and total jiffies
#       (/proc/stat), and the user+system ticks of each QEMU (also split:
#       its vCPU 0 thread, its other vCPU threads), of hostd and of the
#       libvirt daemons; until killed
#   vcpufold-bench-guests ... | bench/guests/host-busy.sh stamp >BENCH_LOG
#       the bench's lines, each with the time it was printed
#   bench/guests/host-busy.sh report SAMPLES BENCH_LOG
#       per measurement (from the bench line before it to its own line, so
#       with the mode's start and stop): the host's busy share, also while
#       every guest was in its measured unit (about: to the nearest sample),
#       the pCPUs the QEMUs, hostd and libvirt ran, the throughput, and the
#       throughput per pCPU the QEMUs ran (their time includes the warm-up
#       unit and the mode's start: a rough measure); and of the QEMUs' pCPUs,
#       those their vCPU 0 threads ran (a folded guest's work runs there) and
#       their other vCPU threads
set -euo pipefail

case ${1:-} in
  sample)
    while :; do
      read -r _ user nice system idle iowait irq softirq steal _ </proc/stat
      line="$(date +%s.%N) $((user + nice + system + irq + softirq + steal))"
      line+=" $((user + nice + system + idle + iowait + irq + softirq + steal))"
      for who in qemu:qemu-system-x86 hostd:vcpufold-hostd libvirt:libvirtd libvirt:virtqemud libvirt:virtlogd; do
        # By process name: a command line may name a binary it does not run.
        for pid in $(pgrep -x "${who#*:}" || true); do
          read -r stat 2>/dev/null <"/proc/$pid/stat" || continue
          # The fields after the command name: utime and stime are the 12th and 13th.
          read -ra fields <<<"${stat##*) }"
          line+=" ${who%%:*}/$pid:$((fields[11] + fields[12]))"
          [[ ${who%%:*} == qemu ]] || continue
          # QEMU names its vCPU threads "CPU N/TCG" (or "CPU N/KVM").
          vcpu0=0 vcpus=0
          for task in /proc/"$pid"/task/*; do
            # read, not $(cat): a second of samples must not fork a process per thread.
            read -r name 2>/dev/null <"$task/comm" || continue
            [[ $name == "CPU "* ]] || continue
            read -r stat 2>/dev/null <"$task/stat" || continue
            read -ra fields <<<"${stat##*) }"
            if [[ $name == "CPU 0/"* ]]; then vcpu0=$((fields[11] + fields[12])); else vcpus=$((vcpus + fields[11] + fields[12])); fi
          done
          line+=" qemu-vcpu0/$pid:$vcpu0 qemu-vcpus/$pid:$vcpus"
        done
      done
      echo "$line"
      sleep 1
    done ;;
  stamp)
    while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done ;;
  report)
    samples=$2 log=$3
    awk -v hz="$(getconf CLK_TCK)" '
      FNR == NR {
        n++; t[n] = $1; busy[n] = $2; total[n] = $3; q[n] = 0
        for (i = 4; i <= NF; i++) { split($i, kv, ":"); cpu[n, kv[1]] = kv[2]; pids[n] = pids[n] " " kv[1] }
        next
      }
      # The last sample at or before time x.
      function at(x,   i, best) { best = 0; for (i = 1; i <= n; i++) if (t[i] <= x) best = i; return best }
      # The host busy share between times x and y, from the samples nearest to them.
      function busyBetween(x, y,   a, b) {
        a = at(x + 0.5); b = at(y + 0.5)
        return (a > 0 && b > a && total[b] > total[a]) ? sprintf("%.1f%%", 100 * (busy[b] - busy[a]) / (total[b] - total[a])) : "-"
      }
      {
        now = $1
        if (prev != "" && $0 ~ / (unfolded|vcpufold|fixed): /) {
          a = at(prev); b = at(now)
          if (a > 0 && b > a && total[b] > total[a]) {
            # Each process counts up to its last sample within the measurement: hostd
            # starts and stops with each mode that runs it, and the bench stops it
            # before it prints the measurement line. One that started within the
            # measurement counts from 0.
            split("", used); split("", last)
            for (s = a; s <= b; s++) {
              m = split(pids[s], list, " ")
              for (i = 1; i <= m; i++) last[list[i]] = cpu[s, list[i]]
            }
            for (key in last) {
              split(key, who, "/")
              used[who[1]] += last[key] - (((a, key) in cpu) ? cpu[a, key] : 0)
            }
            seconds = t[b] - t[a]
            line = $0; sub(/^[^ ]+ /, "", line); sub(/ \(.*/, "", line)
            # The throughput of the measurement, and that per pCPU the QEMUs ran: how
            # much work the guests did with the host time they got.
            units = ""; perPcpu = ""
            if (match($0, /\([0-9.]+ units\/s/)) {
              units = substr($0, RSTART + 1, RLENGTH - 9) + 0
              if (used["qemu"] > 0) perPcpu = sprintf("%.3f", units / (used["qemu"] / hz / seconds))
            }
            # While every guest was in its measured unit: the shortest unit,
            # ending when the bench stops the workload (about 1.5 s before it
            # prints the line), to the nearest second of the samples.
            shortest = 0; text = $0; sub(/ \(.*/, "", text)
            while (match(text, / [0-9.]+ s/)) {
              v = substr(text, RSTART + 1, RLENGTH - 3) + 0
              if (shortest == 0 || v < shortest) shortest = v
              text = substr(text, RSTART + RLENGTH)
            }
            inner = shortest > 2 ? busyBetween(now - 1.5 - shortest + 0.5, now - 1.5) : "-"
            printf "%-60s host busy %5.1f%% (in the measured unit %s); pCPUs: QEMUs %.2f (vCPU 0s %.2f, other vCPUs %.2f), hostd %.3f, libvirt %.3f; over %.1f s; units/s %s, per QEMU pCPU %s\n",
                   line, 100 * (busy[b] - busy[a]) / (total[b] - total[a]), inner, used["qemu"] / hz / seconds,
                   used["qemu-vcpu0"] / hz / seconds, used["qemu-vcpus"] / hz / seconds,
                   used["hostd"] / hz / seconds, used["libvirt"] / hz / seconds, seconds, units, perPcpu
          }
        }
        prev = now
      }' "$samples" "$log" ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
