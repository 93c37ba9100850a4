#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The shipped bash completion of vcpufold-hostd, driven as bash drives it
# (COMP_WORDS/COMP_CWORD), with bash-completion's own helpers; VM names come
# from libvirt's test driver through virsh.
# Usage: tests/packaging/bash_completion_test.sh SOURCE_DIR
set -uo pipefail
source_dir=$1
helpers=/usr/share/bash-completion/bash_completion
[[ -r $helpers ]] || { echo "[  SKIPPED ] $helpers missing (apt-get install bash-completion)"; exit 0; }
# shellcheck disable=SC1090
source "$helpers"
# shellcheck disable=SC1091
source "$source_dir/packaging/hostd/vcpufold-hostd.bash-completion"
uri="test://$source_dir/tests/fixtures/libvirt-test-driver/node.xml"
failures=0

complete_line() { # words...: what the completion offers for the last word
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE="$*"
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  _vcpufold_hostd
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
}

expect() { # description, expected, got
  if [[ $2 == "$3" ]]; then
    echo "ok: $1"
  else
    echo "FAIL: $1: expected [$2], got [$3]"
    failures=$((failures + 1))
  fi
}

expect "modes" "policy status " "$(complete_line vcpufold-hostd "")"
expect "options" "--oneshot " "$(complete_line vcpufold-hostd --ones)"
expect "log levels" "debug " "$(complete_line vcpufold-hostd --log-level de)"
expect "status's option" "--json " "$(complete_line vcpufold-hostd status --)"
if command -v virsh >/dev/null 2>&1; then
  expect "VM names from libvirt" "bad-policy explicit-path no-channel " \
    "$(complete_line vcpufold-hostd --connect "$uri" policy "")"
fi
expect "policy actions" "set show " "$(complete_line vcpufold-hostd policy web1 s)"
expect "policy keys" "max-vcpus= min-vcpus= mode= " "$(complete_line vcpufold-hostd policy web1 set m)"
expect "modes after mode=" "mode=auto mode=fixed mode=guest mode=off " \
  "$(complete_line vcpufold-hostd policy web1 set weight=2 mode=)"
expect "scopes" "--config --live " "$(complete_line vcpufold-hostd policy web1 set weight=2 --)"
expect "show's options" "--config --json --live " "$(complete_line vcpufold-hostd policy web1 show --)"
((failures == 0)) || exit 1
