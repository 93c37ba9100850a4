#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs the .debs with apt, as the README says, on a bare Debian system of
# the given release (debootstrap minbase: none of vcpufold's build
# dependencies), in a chroot: apt pulls in what each package needs from
# Debian's archive, the binaries run there, and purging leaves nothing.
# Shows that the agent package installs in Debian 12 and 13 guests alike, and
# that the hostd package installs on a bare hypervisor.
# Usage: tests/packaging/release_install_test.sh DEB_DIR RELEASE (bookworm | trixie)
# Env:   VCPUFOLD_LAB_DIR (default /var/tmp/vcpufold-lab: the base systems are cached there)
#        DEBIAN_MIRROR (default http://deb.debian.org/debian)
set -euo pipefail
deb_dir=$1
release=$2
lab_dir=${VCPUFOLD_LAB_DIR:-/var/tmp/vcpufold-lab}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [[ $(id -u) -ne 0 ]] || ! command -v debootstrap >/dev/null; then
  echo "[  SKIPPED ] a bare $release system needs root and debootstrap"
  exit 0
fi

passed=0
failed=0
check() {
  if eval "$2"; then passed=$((passed + 1)); else echo "FAILED: $1"; failed=$((failed + 1)); fi
}

source "$(dirname "${BASH_SOURCE[0]}")/../lab/lib/debian-base.sh"
debian_minbase "$lab_dir" "$release" "$mirror"

root=$(mktemp -d /var/tmp/vcpufold-bare-XXXXXX)
trap 'rm -rf "$root"' EXIT
cp -a "$minbase/." "$root/"
cp /etc/resolv.conf "$root/etc/resolv.conf"
echo "deb $mirror $release main" >"$root/etc/apt/sources.list"
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }
in_root apt-get update -qq >"$root/apt-update.log" 2>&1 || { cat "$root/apt-update.log"; exit 1; }
echo "$release: $(cat "$root/etc/debian_version"), libc $(in_root dpkg-query -W -f='${Version}' libc6)"

for package in vcpufold-agent vcpufold-hostd; do
  debs=("$deb_dir/${package}"_*_amd64.deb)
  cp "${debs[0]}" "$root/tmp/"
  deb=/tmp/$(basename "${debs[0]}")
  before=$(in_root dpkg-query -W -f='${Package}\n' | sort)
  if in_root apt-get install -y --no-install-recommends "$deb" >"$root/install.log" 2>&1; then
    added=$(comm -13 <(echo "$before") <(in_root dpkg-query -W -f='${Package}\n' | sort) | { grep -vx "$package" || true; } |
      paste -sd' ')
    echo "$package on $release: apt installed it with ${added:-nothing else}"
    check "$package runs on $release" "in_root /usr/sbin/$package --version | grep -q '^$package '"
    check "$package's shipped configuration checks on $release" "in_root /usr/sbin/$package --check-config >/dev/null"
    check "$package finds every library on $release" "! in_root ldd /usr/sbin/$package | grep -q 'not found'"
    # The agent's promise: nothing beyond the base system's C and C++ runtimes and libsystemd.
    [[ $package != vcpufold-agent ]] ||
      check "the agent needed no package beyond the base system (added: ${added:-none})" "[[ -z '$added' ]]"
    in_root apt-get purge -y "$package" >"$root/purge.log" 2>&1 || cat "$root/purge.log"
    check "$package purged on $release" "! in_root dpkg-query -W -f='\${Status}' $package 2>/dev/null | grep -q installed"
    check "$package's files are gone on $release" "! test -e '$root/usr/sbin/$package' && ! test -e '$root/etc/vcpufold'"
  else
    tail -20 "$root/install.log"
    check "apt install ./$(basename "$deb") on $release" false
  fi
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
