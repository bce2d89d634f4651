#!/usr/bin/env bash
# The training benchmark of issue #12, one command: builds what it needs, checks our
# gradients against PyTorch (bench/grad_check.sh), then times training steps of the
# same model, init, batch and optimizer in ours-wasm (Node), ours-native, PyTorch
# (CPU, 1 thread) and tfjs-wasm (1 thread) in one interleaved run, prints a Markdown
# table and writes bench/results/train-latest.json (git-ignored).
#
#   bench/train.sh                                   both sizes, attention-only (about 2 minutes + the builds)
#   bench/train.sh --mlp 4x                          with a 4·C-wide MLP per layer
#   bench/train.sh --sizes 2,32,2,32,32 --budget 1   a quick one
#   bench/train.sh --no-build --no-grad-check ...    use what is built
#   (other options are passed to bench/train.mjs; see its header)
#   Environment: ATTN (build/attn), NATIVE_BENCH (build/bench/attn_train_bench),
#   PYTHON (/usr/bin/python3, for which Debian's python3-torch installs).
#
# Builds: the native CLI (build/: attn, which makes the init + batch dumps), the native
# benchmark binary (build/bench: attn_train_bench), the wasm module (./build_wasm.sh);
# installs Debian's python3-torch + python3-numpy and OpenBLAS (libopenblas0-pthread, which
# libtorch1.13 recommends) as root when missing (otherwise prints the apt-get line); npm ci in bench/ (@tensorflow/tfjs-core + tfjs-backend-wasm,
# benchmark-only dev dependencies). Not part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
grad_check=1
pass=()
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    --no-grad-check) grad_check=0 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) pass+=("$arg") ;;
  esac
done
PYTHON=${PYTHON:-/usr/bin/python3}
ATTN=${ATTN:-build/attn}
NATIVE_BENCH=${NATIVE_BENCH:-build/bench/attn_train_bench}
echo "== machine load at the start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

if [ "$build" = 1 ]; then
  echo "== native CLI (build/attn)" >&2
  mkdir -p build
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >build/configure.log 2>&1 || { cat build/configure.log >&2; exit 1; }
  cmake --build build -j2 --target attn -- --no-print-directory >build/attn.build.log 2>&1 \
    || { tail -50 build/attn.build.log >&2; exit 1; }
  echo "== native benchmark binary (build/bench/attn_train_bench)" >&2
  cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >build/bench.configure.log 2>&1 \
    || { cat build/bench.configure.log >&2; exit 1; }
  cmake --build build/bench -j2 --target attn_train_bench -- --no-print-directory >build/train_bench.build.log 2>&1 \
    || { tail -50 build/train_bench.build.log >&2; exit 1; }
  echo "== wasm module (./build_wasm.sh)" >&2
  ./build_wasm.sh >&2
fi

# Debian's PyTorch; and OpenBLAS: Debian's torch does its products in the system BLAS
# (libblas.so.3). With --no-install-recommends that is the reference BLAS, 10-15× slower
# than the OpenBLAS libtorch1.13 recommends (measured here: 0.6 vs 8.7 steps/s at (4, 128, 4, 64, 16)).
PYTHON="$PYTHON" ATTN_DEPS_FOR=train.sh .ci/install-deps.sh torch openblas

if [ "$build" = 1 ] || [ ! -d bench/node_modules/@tensorflow/tfjs-backend-wasm ]; then
  echo "== npm ci (bench/)" >&2
  (cd bench && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

if [ "$grad_check" = 1 ]; then
  echo "== gradient check against PyTorch (bench/grad_check.sh)" >&2
  PYTHON="$PYTHON" ATTN="$ATTN" bench/grad_check.sh >&2
fi

echo "== benchmark (machine load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
exec node bench/train.mjs "${pass[@]}" --python "$PYTHON" --attn "$ATTN" --native "$NATIVE_BENCH"
