#!/usr/bin/env bash
# Native load and forward of a GPT-2-small-shaped random checkpoint in the Hub's layout
# (548 MB F32, written to /tmp, never committed), beside PyTorch (float32, 1 thread, the
# same weights) when torch is installed. Not a test.
#   bench/pretrained.sh [--lengths 16,128,512] [--repeat 3] [--dir /tmp/attn-gpt2-small]
# (Chromium / Node / onnxruntime-web comparisons of the page's loader: a later step.)
set -euo pipefail
cd "$(dirname "$0")/.."
lengths=16,128,512
repeat=3
dir=/tmp/attn-gpt2-small
while [ $# -gt 0 ]; do
  case "$1" in
    --lengths) lengths=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    *) echo "pretrained.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
echo "== native benchmark binary" >&2
cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >build/bench.configure.log 2>&1 \
  || { cat build/bench.configure.log >&2; exit 1; }
cmake --build build/bench -j2 --target attn_pretrained_bench -- --no-print-directory >build/bench.build.log 2>&1 \
  || { cat build/bench.build.log >&2; exit 1; }
mkdir -p "$dir"
[ -f "$dir/model.safetensors" ] || build/bench/attn_pretrained_bench --write "$dir"
echo "== native (machine load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
build/bench/attn_pretrained_bench --run "$dir" --lengths "$lengths" --repeat "$repeat"
PYTHON=${PYTHON:-/usr/bin/python3}
if "$PYTHON" -c 'import torch' 2>/dev/null; then
  echo "== PyTorch (float32, 1 thread)" >&2
  "$PYTHON" bench/pretrained_torch.py "$dir" --lengths "$lengths" --repeat "$repeat"
else
  echo "== PyTorch not installed (.ci/install-deps.sh torch): native numbers only" >&2
fi
