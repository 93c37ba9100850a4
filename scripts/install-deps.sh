#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs the Debian 12 packages vcpufold builds and tests with. Idempotent:
# does nothing (not even apt-get update) when everything is already there.
# Usage: scripts/install-deps.sh
set -euo pipefail

packages=(
  # toolchain
  g++ cmake ninja-build pkg-config
  # test.sh and the tests find and stop processes by name (pgrep, pkill); minimal images lack them
  procps
  # packaging: scripts/build-debs.sh (dpkg-buildpackage, debhelper, lintian); the package test uses file
  dpkg-dev debhelper lintian file
  # clang for libFuzzer targets; its compiler-rt carries the fuzzer and sanitizer runtimes
  clang libclang-rt-14-dev
  # libraries
  nlohmann-json3-dev libspdlog-dev libfmt-dev libtomlplusplus-dev libcli11-dev libsystemd-dev
  libxml2-dev libvirt-dev libboost-dev
  # tests
  googletest libgtest-dev
  # the QEMU lab for end-to-end tests: guests boot a Debian kernel with a busybox initramfs
  qemu-system-x86 busybox-static cpio socat
  # libvirt for the hostd end-to-end tests (started by hand where PID 1 is not systemd)
  libvirt-daemon-system libvirt-clients
  # the packaged agent's end-to-end test boots a Debian guest with systemd, built by debootstrap
  debootstrap
  # the shipped bash completion is tested against bash-completion's own helpers
  bash-completion
  # the benches' plots
  gnuplot-nox
  # promtool checks the metrics page (its package also brings the server, not started by the tests)
  prometheus
  # node_exporter reads the agent's metrics textfile in its integration test (started there on a loopback port)
  prometheus-node-exporter
  # the patched guest kernel (kernel-patches/6.12) that tests/kernel builds
  linux-source-6.12 bc flex bison libelf-dev libssl-dev
)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing packages: ${missing[*]}; run as root or install them first" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
