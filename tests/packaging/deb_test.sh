#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Checks what one vcpufold .deb ships (as scripts/build-debs.sh built it with
# dpkg-buildpackage), installs it on this machine, runs the installed binary,
# then purges it and checks that nothing it installed is left.
# Usage: tests/packaging/deb_test.sh DEB_DIR agent|hostd
set -euo pipefail
deb_dir=$1
component=$2
package=vcpufold-$component
if [[ $(id -u) -ne 0 ]] || ! command -v dpkg >/dev/null; then
  echo "[  SKIPPED ] installing a package needs root and dpkg"
  exit 0
fi
if dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q installed; then
  echo "[  SKIPPED ] $package is installed on this machine; not touching it"
  exit 0
fi

case $component in
  agent)
    files=(./usr/sbin/vcpufold-agent ./lib/systemd/system/vcpufold-agent.service
      ./lib/udev/rules.d/60-vcpufold-agent.rules ./etc/vcpufold/agent.toml ./usr/share/man/man8/vcpufold-agent.8.gz
      ./usr/share/doc/vcpufold-agent/copyright ./usr/share/doc/vcpufold-agent/changelog.gz
      ./usr/share/doc/vcpufold-agent/guest-agent.md)
    # One .deb for every current Debian guest: spdlog, fmt and toml++ are
    # built in, whose sonames differ between Debian 12 and 13.
    allowed_depends='libc6 libgcc-s1 libstdc++6 libsystemd0'
    unit_lines=('ProtectSystem=strict' 'ReadWritePaths=/sys/fs/cgroup -/sys/devices/system/cpu/preferred -/var/lib/prometheus/node-exporter'
      'ReadWritePaths=/proc/irq -/sys/devices/virtual/workqueue/cpumask' 'InaccessiblePaths=-/proc/kallsyms -/proc/kcore'
      'RestrictAddressFamilies=AF_UNIX' 'ConditionVirtualization=vm' 'Restart=always'
      'ExecStopPost=/usr/sbin/vcpufold-agent --restore' 'Type=notify' 'WatchdogSec=30s' 'UMask=0077'
      'ExecReload=/bin/kill -HUP $MAINPID' 'ExecReload=/usr/sbin/vcpufold-agent --check-config'
      'RestartPreventExitStatus=64 78' 'MemoryMax=64M' 'SystemCallFilter=~@privileged')
    # 2.1: /proc/irq is writable for the housekeeping steering, so the unit
    # lists ProtectKernelTunables='s other paths one by one, which the score
    # does not credit (it was 2.0 with ProtectKernelTunables=yes).
    max_exposure=2.1
    ;;
  hostd)
    files=(./usr/sbin/vcpufold-hostd ./lib/systemd/system/vcpufold-hostd.service ./etc/vcpufold/hostd.toml
      ./usr/share/man/man8/vcpufold-hostd.8.gz ./usr/share/doc/vcpufold-hostd/policy.md
      ./usr/share/doc/vcpufold-hostd/hostd.md ./usr/share/doc/vcpufold-hostd/changelog.gz
      ./usr/share/vcpufold-hostd/channel.xml ./usr/share/doc/vcpufold-hostd/copyright
      ./usr/share/vcpufold-hostd/prometheus/vcpufold-rules.yml ./usr/share/vcpufold-hostd/grafana/vcpufold-dashboard.json
      ./usr/share/bash-completion/completions/vcpufold-hostd ./usr/share/doc/vcpufold-hostd/examples/metrics-remote.conf
      ./usr/share/vcpufold-hostd/prometheus/vcpufold-agent-missing-rules.yml)
    unit_lines=('ProtectSystem=strict' 'ReadWritePaths=/run/vcpufold' 'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6'
      'NoNewPrivileges=yes' 'WantedBy=multi-user.target' 'Type=notify' 'WatchdogSec=30s' 'IPAddressDeny=any'
      'IPAddressAllow=localhost' 'SocketBindAllow=tcp:9477' 'LimitNOFILE=16384' 'UMask=0077' 'PrivateIPC=yes'
      'SystemCallErrorNumber=EPERM' 'ExecReload=/bin/kill -HUP $MAINPID' 'ExecReload=/usr/sbin/vcpufold-hostd --check-config'
      'RestartPreventExitStatus=64 78')
    allowed_depends='libc6 libgcc-s1 libstdc++6 libsystemd0 libvirt0 libxml2'
    max_exposure=2.0
    ;;
  *) echo "unknown component $component" >&2; exit 2 ;;
esac
binary=/usr/sbin/$package
unit=./lib/systemd/system/$package.service
config=./etc/vcpufold/${component}.toml

passed=0
failed=0
check() {
  if eval "$2"; then passed=$((passed + 1)); else echo "FAILED: $1"; failed=$((failed + 1)); fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
debs=("$deb_dir/${package}"_*_amd64.deb)
if [[ ${#debs[@]} -ne 1 || ! -f ${debs[0]} ]]; then
  echo "expected one ${package}_*_amd64.deb in $deb_dir (scripts/build-debs.sh makes it), found: ${debs[*]}" >&2
  exit 1
fi
deb=${debs[0]}
echo "package: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
dpkg-deb -c "$deb" >"$work/contents"
dpkg-deb -x "$deb" "$work/root"
dpkg-deb -e "$deb" "$work/control"

for path in "${files[@]}"; do check "ships $path" "grep -q ' $path\$' '$work/contents'"; done
for line in "${unit_lines[@]}"; do check "unit has $line" "grep -qx -- '$line' '$work/root/$unit'"; done
check "config is a conffile" "grep -qx ${config#.} '$work/control/conffiles'"
check "shipped config is valid" "'$work/root$binary' --check-config --config '$work/root/$config' >/dev/null"
if command -v systemd-analyze >/dev/null; then
  # docs/hostd.md and docs/guest-agent.md give the score; it must not get worse.
  exposure=$(systemd-analyze security --offline=yes "$work/root/$unit" 2>/dev/null | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
  echo "systemd-analyze security: exposure $exposure"
  check "unit exposure at most $max_exposure (was $exposure)" "awk 'BEGIN { exit !(${exposure:-99} <= $max_exposure) }'"
fi
check "binary is stripped" "! file '$work/root$binary' | grep -q 'not stripped'"
check "its -dbgsym package is there" "ls '$deb_dir/${package}-dbgsym_'*_amd64.deb >/dev/null"
check "binary is hardened (PIE, full RELRO, bindnow)" \
  "file '$work/root$binary' | grep -q 'pie executable' && readelf -d '$work/root$binary' | grep -q 'FLAGS.*BIND_NOW'"
check "binary version is the package's" \
  "'$work/root$binary' --version | grep -qF \"$package $(dpkg-deb -f "$deb" Version)\""
# Depends: lists packages with versions, "a (>= 1), b"; compare the names.
depends=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/(.*)//; s/|.*//; s/[[:space:]]//g' | grep . | sort -u | tr '\n' ' ')
echo "depends on: $depends"
for dependency in $depends; do
  check "depends on nothing beyond $allowed_depends (found $dependency)" "[[ ' $allowed_depends ' == *' $dependency '* ]]"
done
if [[ $component == agent ]]; then
  check "agent unit has no [Install] section (udev starts it)" "! grep -q '^\[Install\]' '$work/root/$unit'"
  check "udev rule wants the unit for the port" \
    "grep -q 'ATTR{name}==\"org.vcpufold.hint.0\".*SYSTEMD_WANTS}+=\"vcpufold-agent.service\"' '$work/root/lib/udev/rules.d/60-vcpufold-agent.rules'"
fi

snapshot() {
  find /etc/vcpufold /lib/systemd/system /lib/udev/rules.d /usr/sbin "/usr/share/doc/$package" \
    /usr/share/man/man8 /run/vcpufold 2>/dev/null | sort || true  # some are absent before install
}
snapshot >"$work/before"
if dpkg -i "$deb" >"$work/install.log" 2>&1; then
  check "installed binary runs" "$binary --version | grep -q '$package '"
  check "installed config checks" "$binary --check-config >/dev/null"
  check "installed man page" "test -f /usr/share/man/man8/$package.8.gz && man -l /usr/share/man/man8/$package.8.gz 2>/dev/null | grep -q EXIT"
else
  cat "$work/install.log"
  check "dpkg -i succeeds" false
fi
agent_pid=
if [[ $component == agent && ! -d /run/systemd/system ]]; then
  # Without systemd the package's prerm must stop a running agent before it
  # unfolds, or the agent folds again at its next interval. This one runs
  # over a copy of a captured guest tree, so it touches nothing of this host.
  cp -a "$(dirname "${BASH_SOURCE[0]}")/../fixtures/lab-guest-4vcpu" "$work/guest"
  "$binary" --root "$work/guest" --port "unix-listen:$work/agent.sock" >"$work/agent.log" 2>&1 &
  agent_pid=$!
  for _ in $(seq 50); do [[ -S $work/agent.sock ]] && break; sleep 0.1; done
  check "agent runs before removal" "kill -0 $agent_pid"
fi
# Upgrade to the next version (scripts/build-debs.sh's DEB_DIR/next: the same
# sources, a higher version): an edited conffile and an administrator's
# disable survive it, and the new binary is in place.
next_debs=("$deb_dir/next/${package}"_*_amd64.deb)
if [[ ${#next_debs[@]} -eq 1 && -f ${next_debs[0]} ]]; then
  echo "# edited by the package test" >>"/etc/vcpufold/${component}.toml"
  wants=/etc/systemd/system/multi-user.target.wants/vcpufold-hostd.service
  if [[ $component == hostd ]]; then
    check "enabled on installation" "test -L $wants"
    systemctl disable vcpufold-hostd.service >/dev/null 2>&1 || true
    check "an administrator can disable it" "! test -e $wants"
  fi
  if dpkg -i "${next_debs[0]}" >"$work/upgrade.log" 2>&1; then
    next_version=$(dpkg-deb -f "${next_debs[0]}" Version)
    check "upgraded binary is $next_version" "$binary --version | grep -qF '$package $next_version'"
    check "the edited conffile survives the upgrade" "grep -q 'edited by the package test' /etc/vcpufold/${component}.toml"
    [[ $component != hostd ]] || check "the administrator's disable survives the upgrade" "! test -e $wants"
  else
    cat "$work/upgrade.log"
    check "dpkg -i of the next version succeeds" false
  fi
else
  check "the next version to upgrade to is in $deb_dir/next" false
fi

dpkg --purge "$package" >"$work/purge.log" 2>&1 || cat "$work/purge.log"
if [[ -n $agent_pid ]]; then
  check "prerm stopped the running agent" "! kill -0 $agent_pid 2>/dev/null || { sleep 1; ! kill -0 $agent_pid 2>/dev/null; }"
  wait "$agent_pid" 2>/dev/null || true
  check "the agent stopped on SIGTERM, unfolding" "grep -q 'SIGTERM: unfolding' '$work/agent.log'"
fi
snapshot >"$work/after"
check "purge leaves nothing behind" "diff '$work/before' '$work/after'"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
