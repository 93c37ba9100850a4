# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the lab image builders: fetch_cloud_kernel LAB_DIR [META] downloads
# the kernel package that Debian's meta package META depends on (default
# linux-image-cloud-amd64, Debian 12's 6.1 cloud kernel; e.g.
# linux-image-6.12-cloud-amd64 for the stock 6.12 kernel bookworm-security
# carries, Debian 13's kernel series), with apt-get download (never installed
# on the host), unpacks it once under LAB_DIR and sets kernel_release,
# kernel_root (the unpacked package) and kernel_image (its vmlinuz).
# unpack_kernel_deb LAB_DIR DEB does the same for a kernel package already
# downloaded (another release's, fetched with that release's package lists).
fetch_cloud_kernel() {
  local lab_dir=$1 meta=${2:-linux-image-cloud-amd64} version
  version=$(apt-cache depends "$meta" 2>/dev/null |
    sed -n 's/.*Depends: linux-image-\(.*\)-cloud-amd64$/\1/p' | head -1)
  [[ -n "$version" ]] || { echo "cannot find $meta in the package lists (apt-get update?)" >&2; return 1; }
  kernel_release="$version-cloud-amd64"
  kernel_root="$lab_dir/kernel-$kernel_release"
  kernel_image="$kernel_root/boot/vmlinuz-$kernel_release"
  mkdir -p "$lab_dir/debs"
  if [[ ! -f "$kernel_image" ]]; then
    (cd "$lab_dir/debs" && ls "linux-image-${kernel_release}_"*.deb >/dev/null 2>&1 ||
      apt-get download "linux-image-$kernel_release" >/dev/null 2>&1)
    rm -rf "$kernel_root" && mkdir -p "$kernel_root"
    dpkg-deb -x "$(ls "$lab_dir/debs/linux-image-${kernel_release}_"*.deb | head -1)" "$kernel_root"
  fi
}

unpack_kernel_deb() {
  local lab_dir=$1 deb=$2
  [[ -f "$deb" ]] || { echo "no kernel package $deb" >&2; return 1; }
  kernel_release=$(dpkg-deb -f "$deb" Package | sed -n 's/^linux-image-\(.*-cloud-amd64\)$/\1/p')
  [[ -n "$kernel_release" ]] || { echo "$deb is not a cloud kernel package" >&2; return 1; }
  kernel_root="$lab_dir/kernel-$kernel_release"
  kernel_image="$kernel_root/boot/vmlinuz-$kernel_release"
  if [[ ! -f "$kernel_image" ]]; then
    rm -rf "$kernel_root" && mkdir -p "$kernel_root"
    dpkg-deb -x "$deb" "$kernel_root"
  fi
}
