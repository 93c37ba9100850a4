#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every source file the repository tracks names its licence in an
# SPDX-License-Identifier line near its top (LICENSE says which and why).
# Captured fixtures, fuzz corpora, documentation, data and the kernel patches
# (whose licence is the kernel's, stated in kernel-patches/README.md) are not
# source files here. Prints the files without one and fails; skips outside a
# git checkout (a source tarball has no index to list).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "[  SKIPPED ] not a git checkout"
  exit 0
fi
missing=()
while IFS= read -r file; do
  case "$file" in
    tests/fixtures/* | tests/fuzz/corpus/*) continue ;;
  esac
  base=${file##*/}
  case "$file" in
    *.cpp | *.h | *.cpp.in | *.sh | *.cmake | *.toml | *.service | *.rules | *.8 | *.xml | *.xml.in | *.config | *.yml | *.bash-completion) ;;
    */CMakeLists.txt | CMakeLists.txt | .ci/run) ;;
    debian/rules | debian/*.postinst | debian/*.prerm | debian/*.postrm | *.conf) ;;
    *)
      case "$base" in
        postinst | postrm | prerm | init | lab-control) ;;
        *) continue ;;
      esac
      ;;
  esac
  head -n 3 -- "$file" | grep -q 'SPDX-License-Identifier: ' || missing+=("$file")
done < <(git ls-files)
if ((${#missing[@]})); then
  printf 'no SPDX-License-Identifier line in its first 3 lines:\n' >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 1
fi
echo "every source file names its licence"
