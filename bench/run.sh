#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds and runs the benches, and writes what they measured into
# docs/performance.md (plots into docs/images/, raw CSV into docs/data/),
# between the "<!-- NAME:begin -->" and "<!-- NAME:end -->" markers.
#   contention  the contention bench's standard set (every file in
#               bench/contention/scenarios/): 43 minutes on 2 cores in its
#               last run
#   latency     emulated VMs, then TCG guests under libvirt, 2-7 minutes
#   random      scenarios nobody wrote (vcpufold-bench-contention --random N
#               --seed S), about 3 minutes a scenario (20: 56 minutes)
#   all         contention, latency and random: 101 minutes in its last run
#   guests      real guest kernels: TCG guests under libvirt running hackbench
#               and compute on Debian's stock 6.1 and 6.12 kernels and the
#               patched kernel, five repetitions, about 50-55 minutes; not part
#               of `all`: run it on its own. Its units are fixed work, so a
#               host that runs TCG guests slower takes longer (one at half
#               the speed would have taken about two hours)
#
# Usage: bench/run.sh [contention|latency|random|all|guests]   (default all; needs root)
# Env:   VCPUFOLD_BUILD_DIR   build trees, as scripts/test.sh (release tree reused)
#        RANDOM_SCENARIOS     how many scenarios `random` draws (default 20)
#        RANDOM_SEED          their seed (default 1): the same seed, the same scenarios
#        BENCH_ARGS           extra arguments for vcpufold-bench-contention, or with `guests` for
#                             vcpufold-bench-guests (see their --help; e.g. "--scenario my-mix.toml",
#                             "--only large-dynamic", "--actuators cpuset")
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${VCPUFOLD_BUILD_DIR:-/var/tmp/vcpufold-build/$(printf '%s' "$root" | sha1sum | cut -c1-12)}/release
which=${1:-all}
doc="$root/docs/performance.md"
case $which in contention|latency|random|all|guests) ;; *) sed -n '2,26p' "$0"; exit 2 ;; esac

"$root/scripts/install-deps.sh"
# The commit the binaries are built from, read before the build.
commit=$(git -C "$root" rev-parse --short HEAD)
git -C "$root" diff --quiet HEAD -- . ':!docs' || commit+=" with uncommitted changes"
cmake -S "$root" -B "$build" -G Ninja -Wno-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "${VCPUFOLD_JOBS:-2}" --target vcpufold-bench-contention vcpufold-bench-latency \
  vcpufold-bench-guests

# replace_block NAME FILE: the text between NAME's markers in docs/performance.md becomes FILE.
replace_block() {
  awk -v name="$1" -v file="$2" '
    $0 == "<!-- " name ":begin -->" { print; while ((getline line < file) > 0) print line; skip = 1; next }
    $0 == "<!-- " name ":end -->" { skip = 0 }
    !skip { print }' "$doc" >"$doc.new"
  mv "$doc.new" "$doc"
}

if [[ $which == contention || $which == all ]]; then
  out=/var/tmp/vcpufold-bench/contention/results
  rm -rf "$out"
  # shellcheck disable=SC2086
  VCPUFOLD_COMMIT=$commit "$build/bench/contention/vcpufold-bench-contention" --out "$out" --image-prefix images/ \
    ${BENCH_ARGS:-}
  mkdir -p "$root/docs/images" "$root/docs/data"
  rm -f "$root"/docs/images/contention-*.png
  cp "$out"/contention-*.png "$root/docs/images/"
  cp "$out/results.csv" "$root/docs/data/contention-runs.csv"
  cp "$out/series.csv" "$root/docs/data/contention-series.csv"
  replace_block contention "$out/results.md"
fi
if [[ $which == latency || $which == all ]]; then
  # Emulated VMs, then the same changes with real guest kernels in the TCG lab
  # (a few minutes more: the guests boot first). A lab that cannot run here
  # says why in the block.
  out=/var/tmp/vcpufold-bench/latency-results.txt
  {
    echo '```'
    "$build/bench/contention/vcpufold-bench-latency"
    echo
    "$build/bench/contention/vcpufold-bench-latency" --lab 2>&1 || echo "(the TCG-lab run failed, exit status $?)"
    echo '```'
  } | tee "$out"
  replace_block latency "$out"
fi
if [[ $which == random || $which == all ]]; then
  out=/var/tmp/vcpufold-bench/contention/random-results
  rm -rf "$out"
  # shellcheck disable=SC2086
  VCPUFOLD_COMMIT=$commit "$build/bench/contention/vcpufold-bench-contention" --out "$out" --image-prefix images/random- \
    --random "${RANDOM_SCENARIOS:-20}" --seed "${RANDOM_SEED:-1}" ${BENCH_ARGS:-}
  mkdir -p "$root/docs/data"
  cp "$out/results.csv" "$root/docs/data/contention-random-runs.csv"
  # Every drawn scenario's file, so any row of the page can be run again alone.
  rm -rf "$root/docs/data/random-scenarios"
  cp -r "$out/random-scenarios" "$root/docs/data/random-scenarios"
  # The page keeps the spread, the per-scenario ratios, the losses and the
  # run's machine, commit and command; each scenario's own section (unpaired
  # figures, plots) stays in $out/results.md, its runs in the CSV.
  awk '/^Figures are medians/ { exit } { print }' "$out/results.md" |
    sed 's#--scenario random-losses/#--scenario docs/data/random-scenarios/#' >"$out/page.md"
  replace_block random "$out/page.md"
fi
if [[ $which == guests ]]; then
  out=/var/tmp/vcpufold-bench/guests/results
  # shellcheck disable=SC2086
  VCPUFOLD_COMMIT=$commit "$build/bench/guests/vcpufold-bench-guests" --out "$out" --image-prefix images/ ${BENCH_ARGS:-}
  mkdir -p "$root/docs/images" "$root/docs/data"
  cp "$out/guests-ratios.png" "$root/docs/images/"
  cp "$out/results.csv" "$root/docs/data/guests-runs.csv"
  cp "$out/where.txt" "$root/docs/data/guests-where.txt"
  replace_block guests "$out/results.md"
fi
echo "bench/run.sh: results written to $doc"
