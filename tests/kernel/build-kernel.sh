#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the guest kernel for tests/kernel: Debian's linux-source-6.12,
# unpacked afresh, with kernel-patches/6.12 applied in `series` order by
# patch -p1, configured as tinyconfig + kvm_guest.config + guest.config, with
# CONFIG_PREFERRED_CPU on or off.
#
# Usage: tests/kernel/build-kernel.sh on|off
# Env:   VCPUFOLD_LAB_DIR (default /var/tmp/vcpufold-lab), VCPUFOLD_JOBS (2)
# Needs: linux-source-6.12 bc flex bison libelf-dev libssl-dev (scripts/install-deps.sh)
# The source is patched once per version of the series; the build tree of each
# variant is reused (make rebuilds what changed). About 8 minutes from scratch
# on 2 cores. Prints the bzImage path on its last line.
set -euo pipefail

variant=${1:-}
case $variant in on|off) ;; *) sed -n '2,13p' "$0"; exit 2 ;; esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
lab=${VCPUFOLD_LAB_DIR:-/var/tmp/vcpufold-lab}
jobs=${VCPUFOLD_JOBS:-2}
patches="$root/kernel-patches/6.12"
tarball=/usr/src/linux-source-6.12.tar.xz
[[ -f $tarball ]] || { echo "build-kernel: $tarball missing (apt-get install linux-source-6.12)" >&2; exit 1; }

# One patched source per version of the series (and of Debian's tarball).
stamp=$( (sha1sum "$tarball" | cut -c1-40; cat "$patches/series" "$patches"/*.patch) | sha1sum | cut -c1-12)
work="$lab/kernel-test"
source="$work/src-$stamp"
# One build at a time (scripts/test.sh starts one in the background; the
# kernel label's own waits for it and then finds it done).
mkdir -p "$work"
exec 9>"$work/.lock"
flock 9
if [[ ! -f "$source/.patched" ]]; then
  rm -rf "$work"/src-*
  mkdir -p "$source"
  tar -C "$source" --strip-components=1 -xf "$tarball"
  while read -r patch; do
    [[ -z $patch || $patch == \#* ]] && continue
    patch -d "$source" -p1 --quiet --forward <"$patches/$patch" ||
      { echo "build-kernel: $patch does not apply" >&2; exit 1; }
  done <"$patches/series"
  touch "$source/.patched"
fi

build="$work/build-$variant"
mkdir -p "$build"
# What the bzImage is made of: the patched source (its stamp), the variant,
# the configuration fragments, this script and the compiler. While they are
# those of the last good build, nothing is run: configuring and make's walk
# of the tree take about a minute here to find nothing to do.
inputs=$( (echo "$stamp $variant"; cat "$here/guest.config" "${BASH_SOURCE[0]}"; gcc --version | head -1) |
  sha1sum | cut -c1-40)
image="$build/arch/x86/boot/bzImage"
if [[ -f $image && -f $build/.built-inputs && $(cat "$build/.built-inputs") == "$inputs" ]]; then
  echo "build-kernel: $variant up to date (source $stamp; configuration, script and compiler as at its last build)" >&2
  echo "$image"
  exit 0
fi
rm -f "$build/.built-inputs"
fragment="$build/preferred.config"
if [[ $variant == on ]]; then echo CONFIG_PREFERRED_CPU=y >"$fragment"; else echo '# CONFIG_PREFERRED_CPU is not set' >"$fragment"; fi
make -s -C "$source" O="$build" tinyconfig >/dev/null
# merge_config.sh makes its temporary files in the current directory: the
# build tree's, not the caller's (a checkout whose directory changes looks
# edited to scripts/build-debs.sh).
(cd "$build" && "$source/scripts/kconfig/merge_config.sh" -m -O "$build" "$build/.config" \
  "$source/kernel/configs/kvm_guest.config" "$here/guest.config" "$fragment" >/dev/null)
make -s -C "$source" O="$build" olddefconfig >/dev/null
for option in SMP HOTPLUG_CPU VIRTIO_CONSOLE VIRTIO_PCI UNIX SIGNALFD BLK_DEV_INITRD; do
  grep -q "^CONFIG_$option=y" "$build/.config" || { echo "build-kernel: CONFIG_$option did not stick" >&2; exit 1; }
done
if [[ $variant == on ]]; then
  grep -q '^CONFIG_PREFERRED_CPU=y' "$build/.config" || { echo "build-kernel: CONFIG_PREFERRED_CPU=y did not stick" >&2; exit 1; }
else
  ! grep -q '^CONFIG_PREFERRED_CPU=y' "$build/.config" || { echo "build-kernel: CONFIG_PREFERRED_CPU is on" >&2; exit 1; }
fi
started=$SECONDS
make -C "$source" O="$build" -j"$jobs" bzImage >"$build/build.log" 2>&1 || { tail -40 "$build/build.log" >&2; exit 1; }
if grep -E '(warning|error):' "$build/build.log" | grep -v '^scripts/' >&2; then
  echo "build-kernel: the build printed warnings (above)" >&2
  exit 1
fi
echo "$inputs" >"$build/.built-inputs"
echo "build-kernel: $variant built in $((SECONDS - started)) s ($(grep -c '=y' "$build/.config") options =y)" >&2
echo "$image"
