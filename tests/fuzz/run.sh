#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz (clang; ASan + UBSan, the core
# instrumented for coverage) and runs each one for SECONDS.
#
#   tests/fuzz/run.sh [SECONDS] [NAME...]    NAME: tokenizer trace cli checkpoint (default: all four)
#   tests/fuzz/run.sh 20                     what tests/run_all.sh runs (about 1.5 minutes)
#   tests/fuzz/run.sh 3600 trace             a longer hunt, by hand
#
# Build directory: $ATTN_FUZZ_BUILD (default build-fuzz). Inputs that reach new
# code are kept in BUILD/fuzz-corpus/NAME (the committed seeds in
# tests/fuzz/corpus/NAME are only read); a crash or a broken invariant stops
# the run, saves the input as BUILD/fuzz-artifacts/NAME-crash-… and exits 1
# with the command that reproduces it.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-60}
[ $# -gt 0 ] && shift
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(tokenizer trace cli checkpoint)
build=${ATTN_FUZZ_BUILD:-build-fuzz}

mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTN_FUZZ=ON \
  >"$build/fuzz-configure.log" 2>&1 || { cat "$build/fuzz-configure.log" >&2; exit 1; }
targets=()
for n in "${names[@]}"; do targets+=("fuzz_$n"); done
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" -- --no-print-directory >"$build/fuzz-build.log" 2>&1 \
  || { cat "$build/fuzz-build.log" >&2; exit 1; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
status=0
for n in "${names[@]}"; do
  corpus="$build/fuzz-corpus/$n"
  artifacts="$build/fuzz-artifacts"
  mkdir -p "$corpus" "$artifacts"
  case "$n" in
    tokenizer) opts=(-max_len=4096) ;;
    trace) opts=(-max_len=8192) ;;
    cli) opts=(-max_len=1024 -dict=tests/fuzz/cli.dict) ;;
    checkpoint) opts=(-max_len=16384 -dict=tests/fuzz/checkpoint.dict) ;;
    *) echo "run.sh: unknown fuzzer $n (tokenizer, trace, cli, checkpoint)" >&2; exit 2 ;;
  esac
  echo "== fuzz_$n for ${seconds} s"
  if ! "$build/tests/fuzz/fuzz_$n" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 "${opts[@]}" \
      -artifact_prefix="$artifacts/$n-" -print_final_stats=1 "$corpus" "tests/fuzz/corpus/$n" \
      >"$build/fuzz-$n.log" 2>&1; then
    tail -n 60 "$build/fuzz-$n.log" >&2
    echo "run.sh: fuzz_$n failed; reproduce with: $build/tests/fuzz/fuzz_$n $(ls -t "$artifacts/$n-"* 2>/dev/null | head -n 1)" >&2
    status=1
    continue
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$build/fuzz-$n.log" | tr '\n' ' '
  echo "(corpus: $(ls "$corpus" | wc -l) inputs)"
done
exit "$status"
