#!/usr/bin/env bash
# Builds vcpufold-agent_<version>_amd64.deb from a build tree, checks what it
# ships, installs it on this machine, runs the installed agent, then purges it
# and checks that nothing it installed is left.
# Usage: tests/packaging/agent_deb_test.sh BUILD_DIR
set -euo pipefail
build=$1
if [[ $(id -u) -ne 0 ]] || ! command -v dpkg >/dev/null; then
  echo "[  SKIPPED ] installing a package needs root and dpkg"
  exit 0
fi
if dpkg-query -W -f='${Status}' vcpufold-agent 2>/dev/null | grep -q installed; then
  echo "[  SKIPPED ] vcpufold-agent is installed on this machine; not touching it"
  exit 0
fi

passed=0
failed=0
check() {
  if eval "$2"; then passed=$((passed + 1)); else echo "FAILED: $1"; failed=$((failed + 1)); fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpack --config "$build/CPackConfig.cmake" -B "$work" -G DEB >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/vcpufold-agent_*_amd64.deb)
echo "package: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
dpkg-deb -c "$deb" >"$work/contents"
dpkg-deb -x "$deb" "$work/root"
dpkg-deb -e "$deb" "$work/control"

for path in ./usr/sbin/vcpufold-agent ./lib/systemd/system/vcpufold-agent.service \
  ./lib/udev/rules.d/60-vcpufold-agent.rules ./etc/vcpufold/agent.toml ./usr/share/man/man8/vcpufold-agent.8; do
  check "ships $path" "grep -q ' $path\$' '$work/contents'"
done
unit="$work/root/lib/systemd/system/vcpufold-agent.service"
for line in 'ProtectSystem=strict' 'ReadWritePaths=/sys/fs/cgroup -/sys/devices/system/cpu/preferred' \
  'RestrictAddressFamilies=AF_UNIX' 'ConditionVirtualization=vm' 'Restart=always' \
  'ExecStopPost=/usr/sbin/vcpufold-agent --restore'; do
  check "unit has $line" "grep -qx -- '$line' '$unit'"
done
check "unit has no [Install] section (udev starts it)" "! grep -q '^\[Install\]' '$unit'"
check "udev rule wants the unit for the port" \
  "grep -q 'ATTR{name}==\"org.vcpufold.hint.0\".*SYSTEMD_WANTS}+=\"vcpufold-agent.service\"' '$work/root/lib/udev/rules.d/60-vcpufold-agent.rules'"
check "config is a conffile" "grep -qx /etc/vcpufold/agent.toml '$work/control/conffiles'"
check "shipped config is valid" "'$work/root/usr/sbin/vcpufold-agent' --check-config --config '$work/root/etc/vcpufold/agent.toml' >/dev/null"
check "binary is stripped" "! file '$work/root/usr/sbin/vcpufold-agent' | grep -q 'not stripped' || ! command -v file >/dev/null"

snapshot() {
  find /etc/vcpufold /lib/systemd/system /lib/udev/rules.d /usr/sbin /usr/share/doc/vcpufold-agent \
    /usr/share/man/man8 /run/vcpufold 2>/dev/null | sort || true  # some are absent before install
}
snapshot >"$work/before"
if dpkg -i "$deb" >"$work/install.log" 2>&1; then
  check "installed agent runs" "/usr/sbin/vcpufold-agent --version | grep -q 'vcpufold-agent '"
  check "installed config checks" "/usr/sbin/vcpufold-agent --check-config >/dev/null"
  check "installed man page" "test -f /usr/share/man/man8/vcpufold-agent.8"
else
  cat "$work/install.log"
  check "dpkg -i succeeds" false
fi
dpkg --purge vcpufold-agent >"$work/purge.log" 2>&1 || cat "$work/purge.log"
snapshot >"$work/after"
check "purge leaves nothing behind" "diff '$work/before' '$work/after'"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
