#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the two Debian packages as Debian builds them, and checks them:
#   dpkg-buildpackage -us -uc -b   (debhelper, debian/rules: hardening=+all,
#                                   dpkg-buildflags, -dbgsym packages)
#   lintian                        (errors and warnings fail the build; any
#                                   override is in debian/*.lintian-overrides
#                                   with its reason)
# and leaves vcpufold-hostd_*.deb, vcpufold-agent_*.deb and their -dbgsym
# packages in OUT_DIR. For the package tests' upgrades it also builds the
# same sources as the next version (VERSION+next1, a changelog entry on top),
# into OUT_DIR/next: never shipped. dpkg-buildpackage writes into the source tree and its
# parent, so it builds a copy under OUT_DIR/source; the copy's build tree is
# kept between runs, and nothing is rebuilt while no file of this checkout is
# newer than the last packages.
# Usage: scripts/build-debs.sh OUT_DIR     Env: VCPUFOLD_JOBS (default 2)
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: scripts/build-debs.sh OUT_DIR" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
stamp=$out/.built
for tool in dpkg-buildpackage dh lintian; do
  command -v "$tool" >/dev/null || { echo "build-debs: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done

if [[ -f $stamp ]] && [[ -z $(find "$root" -name .git -prune -o -newer "$stamp" -print -quit) ]]; then
  echo "build-debs: packages in $out are up to date"
  exit 0
fi

# Stamped as of the copy: an edit made while it builds triggers the next build.
touch "$stamp.pending"
workspace=$out/source
copy=$workspace/vcpufold
mkdir -p "$copy"
# Everything but the previous build tree (obj-*) goes, then the checkout is
# copied with its times, so the kept build tree rebuilds only what changed.
find "$copy" -mindepth 1 -maxdepth 1 ! -name 'obj-*' -exec rm -rf {} +
tar -C "$root" --exclude=./.git --exclude='./obj-*' -cf - . | tar -C "$copy" -xf -
rm -f "$workspace"/*.deb "$workspace"/*.changes "$workspace"/*.buildinfo

echo "build-debs: dpkg-buildpackage -us -uc -b in $copy"
# -nc: the kept build tree is not cleaned first (the copy is fresh already).
(cd "$copy" && DEB_BUILD_OPTIONS="parallel=${VCPUFOLD_JOBS:-2}" dpkg-buildpackage -us -uc -b -nc) \
  >"$out/dpkg-buildpackage.log" 2>&1 || { tail -60 "$out/dpkg-buildpackage.log"; exit 1; }
changes=$(ls "$workspace"/vcpufold_*.changes)
echo "build-debs: lintian $(basename "$changes")"
# As root lintian says so on stderr; its findings go to stdout.
lintian --fail-on error,warning --display-level '>=warning' "$changes" 2>/dev/null | tee "$out/lintian.log"

rm -f "$out"/*.deb
cp "$workspace"/*.deb "$out/"

# The next version, as an upgrade brings it: only the version differs. A
# fresh debian/ (debhelper's stamps say the last build is done) and the same
# kept build tree, so only what reports the version is compiled again.
rm -rf "$copy/debian"
tar -C "$root" -cf - debian | tar -C "$copy" -xf -
version=$(cd "$copy" && dpkg-parsechangelog -S Version)
next="${version}+next1"
{
  printf 'vcpufold (%s) unstable; urgency=medium\n\n  * The same sources as %s, to test upgrades.\n\n' "$next" "$version"
  printf ' -- vcpufold maintainers <maintainers@vcpufold.org>  %s\n\n' "$(date -R)"
  cat "$copy/debian/changelog"
} >"$copy/debian/changelog.next"
mv "$copy/debian/changelog.next" "$copy/debian/changelog"
rm -f "$workspace"/*.deb "$workspace"/*.changes "$workspace"/*.buildinfo
echo "build-debs: $next for the upgrade tests"
(cd "$copy" && DEB_BUILD_OPTIONS="parallel=${VCPUFOLD_JOBS:-2}" dpkg-buildpackage -us -uc -b -nc) \
  >"$out/dpkg-buildpackage-next.log" 2>&1 || { tail -60 "$out/dpkg-buildpackage-next.log"; exit 1; }
rm -rf "$out/next"
mkdir -p "$out/next"
cp "$workspace"/vcpufold-hostd_*.deb "$workspace"/vcpufold-agent_*.deb "$out/next/"

mv "$stamp.pending" "$stamp"
ls -1 "$out"/*.deb "$out"/next/*.deb
