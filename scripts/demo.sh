#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vcpufold in five minutes, on one Debian 12 machine (as root): three 4-vCPU
# guests under libvirt, each running four CPU-bound tasks and vcpufold-agent,
# and vcpufold-hostd folding them to their fair share of this machine's pCPUs.
# Shows the live table, changes one VM's policy with virsh metadata, stops
# hostd (the guests fall back to their own steal-time folding), and removes
# everything it started.
#
# Env: VCPUFOLD_BUILD_DIR (default /var/tmp/vcpufold-build/<hash>/release),
#      VCPUFOLD_LAB_DIR (default /var/tmp/vcpufold-lab), DEMO_SECONDS (15 per stage)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${VCPUFOLD_BUILD_DIR:-/var/tmp/vcpufold-build/$(printf '%s' "$root" | sha1sum | cut -c1-12)/release}
lab=${VCPUFOLD_LAB_DIR:-/var/tmp/vcpufold-lab}
seconds=${DEMO_SECONDS:-15}
guests=(demo-web demo-db demo-batch)
virsh="virsh -c qemu:///system"
work=$(mktemp -d)
started_libvirtd=0
hostd_pid=""

say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

cleanup() {
  say "cleaning up"
  [[ -n "$hostd_pid" ]] && kill "$hostd_pid" 2>/dev/null || true
  "$root/tests/lab/libvirt/guests.sh" stop "${guests[@]}" || true
  if [[ $started_libvirtd == 1 ]]; then pkill -x libvirtd || true; pkill -x virtlogd || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Runs a command in a guest through the lab's control port.
in_guest() { "$build/lab/vcpufold-lab-ctl" "$lab/libvirt/$1.ctl.sock" "$2" "${3:-60}"; }

watch_table() {
  local end=$((SECONDS + $1))
  while [[ $SECONDS -lt $end ]]; do
    [[ -t 1 ]] && clear
    echo "$2 ($((end - SECONDS)) s)"
    "$build/hostd/vcpufold-hostd" --config "$work/hostd.toml" status 2>&1 || true
    sleep 2
  done
}

say "installing what vcpufold needs and building it"
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -Wno-dev >/dev/null
cmake --build "$build" -j2 --target vcpufold-hostd vcpufold-agent vcpufold-lab-ctl | tail -1

domain_type=qemu
if grep -qwE 'vmx|svm' /proc/cpuinfo && [[ -e /dev/kvm ]]; then
  domain_type=kvm
  say "hardware virtualization found: guests run under KVM"
else
  say "no hardware virtualization (no vmx/svm): guests run under QEMU TCG; TCG speed is not KVM speed"
fi

pgrep -x libvirtd >/dev/null || started_libvirtd=1
say "booting ${#guests[@]} guests (4 vCPUs each, four busy tasks and vcpufold-agent inside)"
# The busy tasks wait (lab.hold) until every guest is up: TCG guests boot
# much faster when the others are not loading the host yet.
DOMAIN_TYPE=$domain_type GUEST_BINS="$build/guest-agent/vcpufold-agent" LAB_ARGS=lab.hold \
  "$root/tests/lab/libvirt/guests.sh" start fold-lab "${guests[@]}"
for guest in "${guests[@]}"; do
  in_guest "$guest" true 180 || { echo "demo: guest $guest did not boot" >&2; exit 1; }
done
for guest in "${guests[@]}"; do in_guest "$guest" "touch /tmp/lab/go"; done

cat >"$work/hostd.toml" <<TOML
[hostd]
interval_ms = 1000
[metrics]
address = "127.0.0.1:9477"
[control]
socket = "$work/hostd.sock"
TOML
say "starting vcpufold-hostd (log: $work/hostd.log, metrics: http://127.0.0.1:9477/metrics)"
"$build/hostd/vcpufold-hostd" --config "$work/hostd.toml" 2>"$work/hostd.log" &
hostd_pid=$!
watch_table "$seconds" "12 busy vCPUs on $(nproc) pCPUs: hostd folds every guest to its fair share"

say "demo-web gets five times the weight: virsh metadata ... '<policy mode=\"auto\" weight=\"500\"/>'"
$virsh metadata demo-web --uri https://vcpufold.org/xmlns/policy/1 --key vcpufold \
  --set '<policy mode="auto" weight="500"/>' --live
say "demo-batch is pinned to 2 vCPUs: '<policy mode=\"fixed\" vcpus=\"2\"/>'"
$virsh metadata demo-batch --uri https://vcpufold.org/xmlns/policy/1 --key vcpufold \
  --set '<policy mode="fixed" vcpus="2"/>' --live
watch_table "$seconds" "policies changed on the fly"

say "what hostd logged"
grep -E 'hint .* -> |says hello' "$work/hostd.log" | tail -12

say "stopping vcpufold-hostd: hints stop, leases run out, the agents fall back"
kill "$hostd_pid"
wait "$hostd_pid" || true
hostd_pid=""
sleep 5
for guest in "${guests[@]}"; do
  echo "--- $guest: vcpufold-agent's last decisions"
  in_guest "$guest" "grep -E 'preferred CPUs|control ' /tmp/lab/agent.log | tail -3" || true
done
say "done; everything the demo started is being removed"
