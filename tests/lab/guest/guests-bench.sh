# SPDX-License-Identifier: GPL-2.0-or-later
# Lab guest payload (lab.run=guests-bench), for vcpufold-bench-guests: the
# workloads, and the real vcpufold-agent, started and stopped by the host
# through the control port. Each command prints one line.
#   /lab/agent start [ACT [OPTION...]]  the agent with fold = "always", at its other defaults,
#                           or with --actuator ACT; OPTION unsteered: [cpuset]
#                           steer_housekeeping = false; shipped-fold: the shipped fold default
#                           (by-evidence) instead of "always"; sample-ms=N: [agent] sample_ms = N;
#                           own-cgroup: the agent in the cgroup lab.agent (as under systemd, whose
#                           unit holds it), not the root cgroup
#   /lab/agent stop         (waits until it has unfolded)
#   /lab/run NAME SIZE      starts workload NAME (hackbench-pipe, hackbench-socket, files,
#                           compute, compute-folded, compute-folded-N) in the background (its own session):
#                           units of SIZE back to back until stopped, each one's start
#                           and end (uptime, s) a line of /tmp/gb/units
#   /lab/wait N             returns once N units have ended ("done"), or one failed
#   /lab/stop               ends the workload and prints /tmp/gb/units
#   /lab/where snap NAME    saves /proc/stat, /proc/interrupts, /proc/softirqs and every
#                           thread's stat as /tmp/gb/where.NAME
#   /lab/where diff A B     what ran on each vCPU between snapshots A and B, a line each:
#                           "window S", "preferred CPUS", "stat CPU user nice system idle
#                           iowait irq softirq" (ticks), "irq NAME CPU N", "softirq NAME CPU N",
#                           "thread COMM CPU TICKS" (threads that ran, by their last CPU)
#   /lab/foldcost spread|folded SIZE   one unit of compute, its 4 loops on every vCPU
#                           (spread) or in a cpuset of CPU 0 only (folded); prints its seconds
mkdir -p /tmp/gb /etc/vcpufold

# The cpuset controller on, with a cgroup of the lab's own, for the guest's
# whole life. Under TCG, the kernel's cpuset static keys flipping (when the
# first cpuset cgroup is made or the last removed) rewrites kernel text while
# other vCPUs run it, and a stock 6.12 guest died of it (an int3 Oops in the
# page allocator) when an agent made or removed its fold cgroup under load.
# KVM guests patch their text safely, and a systemd guest has such cgroups
# anyway; in the lab the keys flip once, here, at boot.
echo +cpuset >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
mkdir -p /sys/fs/cgroup/lab.keep /sys/fs/cgroup/lab.agent

cat >/lab/agent <<'SCRIPT'
case $1 in
  start)
    [ -s /tmp/gb/agent.pid ] && kill -0 "$(cat /tmp/gb/agent.pid)" 2>/dev/null && { echo running; exit 0; }
    actuator=$2
    if [ $# -ge 2 ]; then shift 2; else shift $#; fi
    # The bench measures folding itself on every kernel class, so the agents
    # fold on auto hints whatever their class's default (the evidence behind
    # that default comes from these figures); shipped-fold measures what
    # that default gives a user instead.
    fold='fold = "always"'
    steer=
    sample=
    cgroup=
    for option in "$@"; do
      case $option in
        unsteered) steer='[cpuset]\nsteer_housekeeping = false\n' ;;
        shipped-fold) fold='# fold: the shipped default' ;;
        sample-ms=*) sample="sample_ms = ${option#sample-ms=}" ;;
        own-cgroup) cgroup=/sys/fs/cgroup/lab.agent/cgroup.procs ;;
        *) echo "unknown agent option $option" >&2; exit 2 ;;
      esac
    done
    printf "[agent]\n%s\n%s\n$steer" "$fold" "$sample" >/tmp/gb/agent.toml
    # An agent that stops gives a cgroup it folded back as "every CPU" when
    # the kernel will not empty it (ENOSPC: the agent itself was in it), and
    # the next agent would leave such a cgroup alone as set by someone else:
    # emptied here, with no task in it, as systemd would own it.
    echo >/sys/fs/cgroup/lab.agent/cpuset.cpus 2>/dev/null
    # The shell joins the cgroup (if asked) and becomes the agent: one pid.
    setsid sh -c '[ -z "$1" ] || echo $$ >"$1" || exit 1; shift; exec "$@"' sh "$cgroup" \
      vcpufold-agent --log-level debug ${actuator:+--actuator "$actuator"} --config /tmp/gb/agent.toml \
      >/tmp/gb/agent.log 2>&1 </dev/null &
    echo $! >/tmp/gb/agent.pid
    echo started ;;
  stop)
    pid=$(cat /tmp/gb/agent.pid 2>/dev/null)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    i=0
    while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    : >/tmp/gb/agent.pid
    echo "stopped; preferred $(cat /sys/devices/system/cpu/preferred 2>/dev/null || echo -), cpuset $(cat /sys/fs/cgroup/vcpufold.fold/cpuset.cpus 2>/dev/null || echo -)" ;;
esac
SCRIPT

# One unit of each workload. SIZE scales it; the host picks SIZE so that a
# unit takes 10-30 s with the guests contending.
cat >/lab/unit <<'SCRIPT'
size=$2
case $1 in
  hackbench-pipe) hackbench -p -g 4 -l "$size" >/dev/null ;;
  hackbench-socket) hackbench -g 4 -l "$size" >/dev/null ;;
  # Small files created and removed on tmpfs by 8 tasks at once, each step a
  # fork and exec: the dentry, inode, mm and process-creation locks.
  files)
    for task in 1 2 3 4 5 6 7 8; do
      (dir=/tmp/gb/files.$task; mkdir -p "$dir"; i=0
       while [ $i -lt "$size" ]; do
         echo "$i" >"$dir/$i"; cp "$dir/$i" "$dir/$i.copy"; rm "$dir/$i" "$dir/$i.copy"; i=$((i + 1))
       done; rmdir "$dir") &
    done
    wait ;;
  # The control: 4 shell loops that only compute, nothing to gain from folding.
  compute)
    for task in 1 2 3 4; do
      (i=0; while [ $i -lt "$size" ]; do i=$((i + 1)); done) &
    done
    wait ;;
  # The same loops folded by the workload itself into a cpuset of CPU 0, or
  # of CPUs 0 to N-1 for compute-folded-N (no vcpufold): what folding costs
  # without the agent, hostd or the steering, and how it depends on how many
  # vCPUs stay busy.
  compute-folded|compute-folded-*)
    cpus=0
    case $1 in compute-folded-*) cpus="0-$((${1#compute-folded-} - 1))" ;; esac
    echo +cpuset >/sys/fs/cgroup/lab.keep/cgroup.subtree_control
    mkdir -p "/sys/fs/cgroup/lab.keep/$1"
    echo "$cpus" >"/sys/fs/cgroup/lab.keep/$1/cpuset.cpus"
    echo $$ >"/sys/fs/cgroup/lab.keep/$1/cgroup.procs"
    for task in 1 2 3 4; do
      (i=0; while [ $i -lt "$size" ]; do i=$((i + 1)); done) &
    done
    wait ;;
  *) echo "unknown workload $1" >&2; exit 2 ;;
esac
SCRIPT

cat >/lab/run <<'SCRIPT'
: >/tmp/gb/units
setsid sh -c '
  while :; do
    start=$(cut -d" " -f1 /proc/uptime)
    sh /lab/unit "$1" "$2" || { echo failed >>/tmp/gb/units; exit 1; }
    echo "$start $(cut -d" " -f1 /proc/uptime)" >>/tmp/gb/units
  done' sh "$1" "$2" </dev/null >/dev/null 2>&1 &
echo $! >/tmp/gb/run.pid
echo started
SCRIPT

cat >/lab/wait <<'SCRIPT'
while [ "$(wc -l </tmp/gb/units)" -lt "$1" ]; do sleep 0.3; done
grep -q failed /tmp/gb/units && { echo "a unit failed"; exit 1; }
echo done
SCRIPT

cat >/lab/stop <<'SCRIPT'
pid=$(cat /tmp/gb/run.pid 2>/dev/null)
[ -n "$pid" ] && kill -KILL -- "-$pid" 2>/dev/null
: >/tmp/gb/run.pid
rm -rf /tmp/gb/files.*
cat /tmp/gb/units
SCRIPT

cat >/lab/where <<'SCRIPT'
case $1 in
  snap)
    d=/tmp/gb/where.$2
    rm -rf "$d"; mkdir -p "$d"
    cut -d' ' -f1 /proc/uptime >"$d/uptime"
    cat /proc/stat >"$d/stat"; cat /proc/interrupts >"$d/interrupts"; cat /proc/softirqs >"$d/softirqs"
    # One cat for every thread: a process per thread took 10-30 s in a loaded
    # TCG guest, and ran over the measured unit.
    cat /proc/[0-9]*/task/[0-9]*/stat >"$d/tasks" 2>/dev/null
    echo saved ;;
  diff)
    a=/tmp/gb/where.$2 b=/tmp/gb/where.$3
    echo "window $(awk -v s="$(cat $a/uptime)" '{ printf "%.2f", $1 - s }' $b/uptime)"
    echo "preferred $(cat /sys/fs/cgroup/vcpufold.fold/cpuset.cpus.effective 2>/dev/null ||
      cat /sys/devices/system/cpu/preferred 2>/dev/null || cat /sys/devices/system/cpu/online)"
    awk 'FNR == NR { if ($1 ~ /^cpu[0-9]/) was[$1] = $0; next }
         $1 ~ /^cpu[0-9]/ { split(was[$1], o, " "); line = "stat " substr($1, 4)
           for (i = 2; i <= 8; i++) line = line " " ($i - o[i]); print line }' $a/stat $b/stat
    for kind in interrupts softirqs; do
      awk -v kind=$([ $kind = interrupts ] && echo irq || echo softirq) '
        FNR == 1 { cpus = NF; next }
        FNR == NR { for (i = 2; i <= cpus + 1; i++) was[$1, i] = $i; next }
        { for (i = 2; i <= cpus + 1; i++) if ($i - was[$1, i] > 0) print kind, substr($1, 1, length($1) - 1), i - 2, $i - was[$1, i] }' \
        $a/$kind $b/$kind
    done
    # /proc/PID/stat: the name may hold spaces, so fields count from its closing parenthesis.
    awk 'function parse(line) { rest = substr(line, index(line, ") ") + 2); split(rest, f, " ")
           name = substr(line, index(line, "(") + 1, index(line, ") ") - index(line, "(") - 1); gsub(/ /, "_", name)
           split(line, head, " "); id = head[1]; ticks = f[12] + f[13]; cpu = f[37] }
         FNR == NR { parse($0); was[id] = ticks; next }
         { parse($0); if ((id in was) && ticks > was[id]) print "thread", name, cpu, ticks - was[id] }' $a/tasks $b/tasks ;;
esac
SCRIPT

# Work per pCPU second, folded or not: the host confines the guest to one
# pCPU, so both ways get the same CPU time and only the guest's side differs.
cat >/lab/foldcost <<'SCRIPT'
echo +cpuset >/sys/fs/cgroup/lab.keep/cgroup.subtree_control
mkdir -p /sys/fs/cgroup/lab.keep/foldcost
echo 0 >/sys/fs/cgroup/lab.keep/foldcost/cpuset.cpus
start=$(cut -d' ' -f1 /proc/uptime)
case $1 in
  spread) sh /lab/unit compute "$2" ;;
  folded) sh -c 'echo $$ >/sys/fs/cgroup/lab.keep/foldcost/cgroup.procs && exec sh /lab/unit compute "$1"' sh "$2" ;;
  *) echo "usage: /lab/foldcost spread|folded SIZE" >&2; exit 2 ;;
esac || exit 1
awk -v s="$start" '{ printf "%.3f\n", $1 - s }' /proc/uptime
SCRIPT

: >/tmp/gb/ready
