#!/usr/bin/env bash
# The one benchmark command: builds what it needs, then runs every
# implementation of multi-head attention side by side in one interleaved run,
# prints the table and writes bench/results/latest.json (git-ignored).
#
#   bench/run.sh                      the full run (sizes (16,64,4) … (2048,512,8), (128,768,12), (1024,768,12), (512,1024,16); about 12 minutes)
#   bench/run.sh --sizes 16,64,4/128,256,8 --budget 0.5     a quick one
#   (options are passed to bench/run.mjs; see its header)
#
# Builds: the wasm module, SIMD and scalar (./build_wasm.sh --scalar); the
# native benchmark binaries (build/bench: attn_bench, attn_bench_sse42); the
# peers (npm ci in bench/: onnxruntime-web, @tensorflow/tfjs-core,
# @tensorflow/tfjs-backend-wasm — benchmark-only dev dependencies, loaded from
# node_modules, no network at run time). Not part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== wasm build (SIMD, scalar, relaxed SIMD)" >&2
./build_wasm.sh --scalar --relaxed >&2
# the relaxed flavour is no page's and no package's (the test command leaves it out): its
# fast-path tests run here, before it is timed
echo "== the relaxed-SIMD flavour's tests (tests/js/relaxed.test.mjs)" >&2
node --test tests/js/relaxed.test.mjs >&2
echo "== native benchmark binaries" >&2
cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >build/bench.configure.log 2>&1 \
  || { cat build/bench.configure.log >&2; exit 1; }
cmake --build build/bench -j"$(nproc)" --target attn_bench attn_bench_sse42 -- --no-print-directory >build/bench.build.log 2>&1 \
  || { cat build/bench.build.log >&2; exit 1; }
echo "== npm ci (bench/)" >&2
(cd bench && npm ci --no-audit --no-fund --loglevel=error >&2)
echo "== benchmark (machine load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
# Node 20 runs relaxed SIMD behind a flag (later Nodes by default)
flags=()
node --experimental-wasm-relaxed-simd -e 0 2>/dev/null && flags+=(--experimental-wasm-relaxed-simd)
exec node "${flags[@]}" bench/run.mjs "$@"
