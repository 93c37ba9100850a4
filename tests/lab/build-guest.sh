#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the lab guest: a Debian cloud kernel (downloaded and unpacked, never
# installed on the host) and a busybox initramfs with the virtio-serial
# modules, the lab init and whatever extra files are asked for.
#
# Usage: tests/lab/build-guest.sh [--add HOST_PATH[:GUEST_PATH]]... [--bin HOST_BINARY]...
#   --add  copies a file into the image (default guest path: /lab/<name>)
#   --bin  copies an executable and the shared libraries it needs to /usr/bin
# Env:   VCPUFOLD_LAB_DIR (default /var/tmp/vcpufold-lab)   IMAGE=name (default "guest")
#        CLOUD_KERNEL=META  the Debian meta package whose kernel boots the guest (default
#                           linux-image-cloud-amd64; linux-image-6.12-cloud-amd64 for stock 6.12):
#                           another kernel's image and initramfs get the release in their names
# Prints the kernel and initramfs paths on its last two lines.
set -euo pipefail

lab_dir=${VCPUFOLD_LAB_DIR:-/var/tmp/vcpufold-lab}
image=${IMAGE:-guest}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
adds=()
bins=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --add) adds+=("$2"); shift 2 ;;
    --bin) bins+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "build-guest: unknown argument $1" >&2; exit 2 ;;
  esac
done

# The kernel: the cloud flavour boots fastest under TCG and has NUMA, SMT,
# NO_HZ_FULL, CPU hotplug and cpusets; virtio_pci/virtio_console are modules.
source "$here/lib/cloud-kernel.sh"
fetch_cloud_kernel "$lab_dir" "${CLOUD_KERNEL:-}" || exit 1
release=$kernel_release
# The default kernel keeps its short names (the tests' fixtures name them).
suffix=""
[[ -n "${CLOUD_KERNEL:-}" && $CLOUD_KERNEL != linux-image-cloud-amd64 ]] && suffix="-$release"
mkdir -p "$lab_dir/guest"
cp "$kernel_root/boot/vmlinuz-$release" "$lab_dir/guest/vmlinuz$suffix"

staging="$lab_dir/staging-$image$suffix"
rm -rf "$staging"
mkdir -p "$staging"/{bin,sbin,etc,proc,sys,dev,tmp,run,root,lab,usr/bin,lib64,lib/x86_64-linux-gnu}
cp /bin/busybox "$staging/bin/busybox"
cp "$here/guest/init" "$staging/init"
chmod 755 "$staging/init"
echo 'root:x:0:0:root:/root:/bin/sh' >"$staging/etc/passwd"

# Modules in dependency order, from each module's own depends= list.
module_dir="$kernel_root/lib/modules/$release"
: >"$staging/etc/modules.order"
declare -A added
add_module() {
  local name=$1 file deps relative
  [[ -n "${added[$name]:-}" ]] && return
  added[$name]=1
  # Built in (6.12's cloud kernel has virtio_pci and virtio_console built in): nothing to load.
  file=$(find "$module_dir" -name "$name.ko" -o -name "${name//_/-}.ko" -o -name "$name.ko.xz" \
    -o -name "${name//_/-}.ko.xz" | head -1)
  [[ -n "$file" ]] || return 0
  relative=${file#"$module_dir"/}
  relative=${relative%.xz}
  mkdir -p "$staging/lib/modules/$(dirname "$relative")"
  # busybox insmod takes uncompressed modules only.
  case $file in
    *.xz) xz -dc "$file" >"$staging/lib/modules/$relative" ;;
    *) cp "$file" "$staging/lib/modules/$relative" ;;
  esac
  deps=$(tr '\0' '\n' <"$staging/lib/modules/$relative" | sed -n 's/^depends=//p' | head -1)
  for dep in ${deps//,/ }; do add_module "$dep"; done
  echo "$relative" >>"$staging/etc/modules.order"
}
for module in virtio_pci virtio_console; do add_module "$module"; done

copy_libraries() {
  ldd "$1" 2>/dev/null | awk '/=>/ {print $3} /^\t\/lib64/ {print $1}' | while read -r library; do
    [[ -f "$library" ]] || continue
    case $library in
      /lib64/*) cp -L "$library" "$staging/lib64/" ;;
      *) cp -L "$library" "$staging/lib/x86_64-linux-gnu/" ;;
    esac
  done
}
for binary in "${bins[@]}"; do
  cp "$binary" "$staging/usr/bin/"
  copy_libraries "$binary"
done
for spec in "${adds[@]}"; do
  source_path=${spec%%:*}
  target=${spec#*:}
  [[ "$target" == "$spec" ]] && target="/lab/$(basename "$source_path")"
  mkdir -p "$staging$(dirname "$target")"
  cp "$source_path" "$staging$target"
done

initramfs="$lab_dir/guest/initramfs-$image$suffix.cpio.gz"
(cd "$staging" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$initramfs"
echo "$lab_dir/guest/vmlinuz$suffix"
echo "$initramfs"
