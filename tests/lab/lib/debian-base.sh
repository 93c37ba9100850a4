# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the lab's builders and the package tests: debian_minbase LAB_DIR
# RELEASE MIRROR makes a bare Debian system of RELEASE (debootstrap
# --variant=minbase) once, under LAB_DIR/debian-RELEASE-minbase, and reuses
# it after; sets `minbase` to its path. Callers copy it before changing
# anything. A lock keeps two tests from making the same one at once.
debian_minbase() {
  local lab_dir=$1 release=$2 mirror=$3
  minbase=$lab_dir/debian-$release-minbase
  mkdir -p "$lab_dir"  # on a fresh machine the caller may be the lab's first user
  (
    flock 9
    if [[ ! -f $minbase/.complete ]]; then
      rm -rf "$minbase"
      echo "debootstrap --variant=minbase $release (cached in $minbase)" >&2
      debootstrap --variant=minbase "$release" "$minbase" "$mirror" >"$lab_dir/debootstrap-$release.log" 2>&1 ||
        { tail -20 "$lab_dir/debootstrap-$release.log" >&2; exit 1; }
      rm -rf "$minbase"/var/cache/apt/archives/*.deb
      touch "$minbase/.complete"
    fi
  ) 9>"$lab_dir/.debian-$release-minbase.lock"
}
