#!/usr/bin/env bash
# The modern layer kinds' speed check (bench/kinds_bench.cpp):
#   1. the existing kinds must not slow down: one training step and one GPT-2-small-shaped
#      traced forward, timed with the engine of BASE (default: the branch point with r35)
#      and with the working tree's, alternating ROUNDS times in one run;
#   2. RoPE's cost at T = 512 beside the attention it precedes (working tree only).
#
#   bench/kinds_bench.sh [SECONDS per measurement, default 3] [ROUNDS, default 3]
#   BASE=<commit> bench/kinds_bench.sh
#
# Prints one JSON line per measurement, {"what", "ms", "engine": "base"|"new", "round"}.
# On a machine shared with other work the numbers move: compare within a round.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3}
rounds=${2:-3}
base=${BASE:-$(git merge-base HEAD r35)}
work=${TMPDIR:-/tmp}/attn-kinds-bench
mkdir -p "$work"

# the base engine: BASE's files (git archive: no worktree is registered), this file and its
# target added
if [ "$(cat "$work/base.commit" 2>/dev/null)" != "$(git rev-parse "$base")" ]; then
  rm -rf "$work/base" "$work/base-build"
  mkdir -p "$work/base"
  git archive "$base" | tar -x -C "$work/base"
  git rev-parse "$base" >"$work/base.commit"
fi
cp bench/kinds_bench.cpp "$work/base/bench/kinds_bench.cpp"
if ! grep -q attn_kinds_bench "$work/base/CMakeLists.txt"; then
  printf '%s\n' 'add_executable(attn_kinds_bench EXCLUDE_FROM_ALL bench/kinds_bench.cpp)' \
    'target_link_libraries(attn_kinds_bench PRIVATE attn_core)' >> "$work/base/CMakeLists.txt"
fi
cmake -S "$work/base" -B "$work/base-build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
make -C "$work/base-build" -j2 attn_kinds_bench >/dev/null
cmake -S . -B "$work/new-build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
make -C "$work/new-build" -j2 attn_kinds_bench >/dev/null

for round in $(seq 1 "$rounds"); do
  for what in train trace; do
    for engine in base new; do
      "$work/$engine-build/attn_kinds_bench" "$what" "$seconds" |
        sed "s/}\$/, \"engine\": \"$engine\", \"round\": $round}/"
    done
  done
done
"$work/new-build/attn_kinds_bench" rope "$seconds" | sed 's/}$/, "engine": "new"}/'
