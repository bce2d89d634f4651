#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz (clang; ASan + UBSan, the core
# instrumented for coverage) and runs each one for SECONDS of a core, side by side.
#
#   tests/fuzz/run.sh [SECONDS] [NAME...]    NAME: a harness tests/fuzz/fuzz_NAME.cpp (default: every one)
#   tests/fuzz/run.sh 10                     what tests/run_all.sh runs (10 s of a core each: the 5 at once, 25 s, on 2 cores)
#   tests/fuzz/run.sh 3600 trace             a longer hunt, by hand
#
# Build directory: $ATTN_FUZZ_BUILD (default build-fuzz). Harnesses run side by
# side, each for SECONDS of one core: with more harnesses than $ATTN_FUZZ_JOBS (default:
# the number of cores), all at once for SECONDS·N/JOBS of wall time. Inputs that reach
# new code are kept in BUILD/fuzz-corpus/NAME (the committed seeds in tests/fuzz/corpus/NAME,
# when there are any, are only read); a crash or a broken invariant saves the input as
# BUILD/fuzz-artifacts/NAME-crash-…,
# and the run exits 1 with the command that reproduces it. Options per harness:
# -max_len (default 4096) below, and tests/fuzz/NAME.dict as -dict= when it exists.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-60}
[ $# -gt 0 ] && shift
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.cpp; do n=${f#tests/fuzz/fuzz_}; names+=("${n%.cpp}"); done
fi
[ ${#names[@]} -gt 0 ] || { echo "run.sh: no harness tests/fuzz/fuzz_*.cpp" >&2; exit 1; }
for n in "${names[@]}"; do
  [ -f "tests/fuzz/fuzz_$n.cpp" ] || { echo "run.sh: unknown fuzzer $n (no tests/fuzz/fuzz_$n.cpp)" >&2; exit 2; }
done
build=${ATTN_FUZZ_BUILD:-build-fuzz}
jobs=${ATTN_FUZZ_JOBS:-$(nproc)}

mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTN_FUZZ=ON \
  >"$build/fuzz-configure.log" 2>&1 || { cat "$build/fuzz-configure.log" >&2; exit 1; }
targets=()
for n in "${names[@]}"; do targets+=("fuzz_$n"); done
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" -- --no-print-directory >"$build/fuzz-build.log" 2>&1 \
  || { cat "$build/fuzz-build.log" >&2; exit 1; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"

# one harness: its log in BUILD/fuzz-NAME.log, its exit status in BUILD/fuzz-NAME.status
run_one() {
  local n=$1 corpus="$build/fuzz-corpus/$1" opts=(-max_len=4096) seeds=()
  case "$n" in
    trace) opts=(-max_len=8192) ;;
    cli) opts=(-max_len=1024) ;;
    checkpoint) opts=(-max_len=16384) ;;
  esac
  [ -f "tests/fuzz/$n.dict" ] && opts+=(-dict="tests/fuzz/$n.dict")
  [ -d "tests/fuzz/corpus/$n" ] && seeds=("tests/fuzz/corpus/$n")
  mkdir -p "$corpus"
  local status=0
  "$build/tests/fuzz/fuzz_$n" -max_total_time="$wall" -timeout=10 -rss_limit_mb=2048 "${opts[@]}" \
    -artifact_prefix="$artifacts/$n-" -print_final_stats=1 "$corpus" "${seeds[@]}" >"$build/fuzz-$n.log" 2>&1 || status=$?
  echo "$status" >"$build/fuzz-$n.status"
}

# More harnesses than cores: all of them at once, for SECONDS·N/JOBS of wall time each, which is
# SECONDS of a core each, as JOBS at a time would give, but with no core idle while the last ones
# run alone (5 harnesses on 2 cores: 50 s, not 3 rounds of 20 s)
wall=$seconds
if [ "${#names[@]}" -gt "$jobs" ]; then
  wall=$(((seconds * ${#names[@]} + jobs - 1) / jobs))
  echo "== fuzz ${names[*]}: ${seconds} s of a core each (all ${#names[@]} at once on $jobs cores, ${wall} s)"
else
  echo "== fuzz ${names[*]}: ${seconds} s each, at once"
fi
for n in "${names[@]}"; do
  rm -f "$build/fuzz-$n.status"
  run_one "$n" &
done
wait || true

status=0
for n in "${names[@]}"; do
  s=$(cat "$build/fuzz-$n.status" 2>/dev/null || echo missing)
  if [ "$s" != 0 ]; then
    tail -n 60 "$build/fuzz-$n.log" >&2
    echo "run.sh: fuzz_$n failed (exit $s); reproduce with: $build/tests/fuzz/fuzz_$n $(ls -t "$artifacts/$n-"* 2>/dev/null | head -n 1)" >&2
    status=1
    continue
  fi
  echo "fuzz_$n: $(grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$build/fuzz-$n.log" | tr -s ' ' | tr '\n' ' ')(corpus: $(ls "$build/fuzz-corpus/$n" | wc -l) inputs)"
done
exit "$status"
