#!/usr/bin/env bash
# Builds the attention core to WebAssembly (Emscripten + Embind, -O3 -msimd128)
# and writes the generated files into web/generated/ (git-ignored):
#   attention_core.js + .wasm   ES module for the browser (web/engine.js loads it)
#   attention_core.node.cjs     CommonJS flavour with the wasm inlined, for Node
#   engine_constants.js         the engine's limits, defaults and enums, from the C++ (for JS)
# and the embeddable element as one self-contained file, web/attention-playground.js.
#
#   ./build_wasm.sh            build (SIMD)
#   ./build_wasm.sh --scalar   also build a scalar flavour into web/generated/scalar/ (benchmarks)
#   ./build_wasm.sh --serve    build, then serve web/ on http://127.0.0.1:8000/ (PORT=… to change)
#   ./build_wasm.sh --dist     also make dist/: dist/site/ (the static site, ready for any static
#                              host) and dist/attention-playground-VERSION.tgz (the npm package:
#                              the one-file element, the ES-module engine with its wasm, types,
#                              the shipped models with their licence)
#   PLAYGROUND_URL=https://…/index.html ./build_wasm.sh   bakes in where the element's "Copy link" leads
#                              by default (else index.html beside attention-playground.js)
#
# Fails when the toolchain is missing (as root it installs Debian's packages),
# and when the produced .wasm contains no SIMD instructions.
set -euo pipefail
cd "$(dirname "$0")"

scalar=0
serve=0
dist=0
VERSION=0.2.0
for arg in "$@"; do
  case "$arg" in
    --scalar) scalar=1 ;;
    --serve) serve=1 ;;
    --dist) dist=1 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "build_wasm.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done

# ---- toolchain (.ci/install-deps.sh: installs as root, else prints the apt-get line) ----
ATTN_DEPS_FOR=build_wasm.sh .ci/install-deps.sh wasm

# emcc's optimiser needs Debian's JS modules (acorn) when node is not Debian's.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}

build_flavour() {  # $1 build dir, $2 ATTN_SIMD
  emcmake cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=Release -DATTN_SIMD="$2" \
    -DEigen3_DIR=/usr/share/eigen3/cmake -DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node >"$1.configure.log" 2>&1 \
    || { cat "$1.configure.log" >&2; exit 1; }
  cmake --build "$1" -j"$(nproc)" -- --no-print-directory >"$1.build.log" 2>&1 \
    || { cat "$1.build.log" >&2; exit 1; }
}

simd_count() {
  wasm-objdump -d "$1" | grep -cE '(f32x4|i32x4|i8x16|i16x8|f64x2|i64x2|v128)\.' || true
}

install_outputs() {  # $1 build dir, $2 destination
  mkdir -p "$2"
  cp "$1/attention_core.js" "$1/attention_core.wasm" "$2/"
  cp "$1/attention_core_node.js" "$2/attention_core.node.cjs"
}

# the engine's limits, defaults and enums as the C++ exports them, for JS that runs
# before the wasm has loaded (web/engine.js imports it; src/tools/engine_constants.mjs)
write_constants() {
  node src/tools/engine_constants.mjs web/generated/attention_core.node.cjs web/generated/engine_constants.js
}

# the trained models the playground ships (models/*.safetensors), served from web/generated/models/
install_models() {
  mkdir -p web/generated/models
  cp models/*.safetensors models/WORDNET-LICENSE web/generated/models/
}

# <attention-playground> as one file: the element's modules, the glue with the
# wasm inlined, and the stylesheet (src/tools/bundle_element.py).
bundle_element() {
  # the coreference model travels inside the file; the language model is a second file, fetched on demand
  # PLAYGROUND_URL=https://… bakes in where "Copy link" leads by default (else index.html beside the file)
  python3 src/tools/bundle_element.py web/element.js build/wasm/attention_core_embed.js web/style.css \
    web/attention-playground.js coreference=models/coreference.safetensors ${PLAYGROUND_URL:+"--playground-url=$PLAYGROUND_URL"}
  if grep -q "new Function\|eval(" web/attention-playground.js; then
    echo "build_wasm.sh: FAILED: web/attention-playground.js uses eval or new Function (breaks a strict CSP)" >&2
    exit 1
  fi
  echo "build_wasm.sh: web/attention-playground.js: $(stat -c %s web/attention-playground.js) bytes, self-contained"
}

mkdir -p build
build_flavour build/wasm ON
install_outputs build/wasm web/generated
write_constants
install_models
count=$(simd_count web/generated/attention_core.wasm)
size=$(stat -c %s web/generated/attention_core.wasm)
if [ "$count" -eq 0 ]; then
  echo "build_wasm.sh: FAILED: web/generated/attention_core.wasm contains no SIMD instructions" >&2
  exit 1
fi
echo "build_wasm.sh: web/generated/attention_core.wasm: $size bytes, $count SIMD instructions (wasm-objdump)"
bundle_element

if [ "$scalar" = 1 ]; then
  build_flavour build/wasm-scalar OFF
  install_outputs build/wasm-scalar web/generated/scalar
  echo "build_wasm.sh: web/generated/scalar/attention_core.wasm: $(stat -c %s web/generated/scalar/attention_core.wasm) bytes, $(simd_count web/generated/scalar/attention_core.wasm) SIMD instructions"
fi

# ---- dist/: a static site and an npm package ------------------------------------------
make_dist() {
  rm -rf dist
  mkdir -p dist/site dist/npm/generated
  # the site: every page with its modules, styles, generated engine and element
  # (the shipped models with their licence come along in generated/models/, where the pages load them)
  (cd web && tar --exclude='./generated/scalar' -cf - .) | (cd dist/site && tar -xf -)
  # the package: the element, the engine (ES module + wasm for browsers, CommonJS for Node), types,
  # and the shipped models with their licence in generated/models/, next to the element as it expects
  cp web/attention-playground.js web/engine.js web/trainer.js web/validate.js web/engine.d.ts dist/npm/
  cp web/generated/attention_core.js web/generated/attention_core.wasm web/generated/attention_core.node.cjs \
    web/generated/engine_constants.js dist/npm/generated/
  mkdir -p dist/npm/generated/models
  cp models/*.safetensors models/WORDNET-LICENSE dist/npm/generated/models/
  for f in models/*.safetensors models/WORDNET-LICENSE; do
    for d in dist/site/generated/models dist/npm/generated/models; do
      cmp -s "$f" "$d/$(basename "$f")" || { echo "build_wasm.sh: FAILED: $d/$(basename "$f") differs from $f" >&2; exit 1; }
    done
  done
  cat > dist/npm/package.json <<JSON
{
  "name": "attention-playground",
  "version": "$VERSION",
  "description": "Transformer self-attention, step by step with the real numbers: a WebAssembly engine that computes and trains small transformers, and an embeddable <attention-playground> element.",
  "type": "module",
  "main": "./engine.js",
  "types": "./engine.d.ts",
  "exports": {
    ".": { "types": "./engine.d.ts", "default": "./engine.js" },
    "./element": "./attention-playground.js",
    "./attention-playground.js": "./attention-playground.js",
    "./package.json": "./package.json"
  },
  "files": ["attention-playground.js", "engine.js", "trainer.js", "validate.js", "engine.d.ts", "generated/", "README.md"],
  "engines": { "node": ">=20" },
  "keywords": ["attention", "transformer", "webassembly", "visualization", "education"]
}
JSON
  cat > dist/npm/README.md <<'MD'
# attention-playground

Transformer self-attention, step by step, with the real numbers.

- In a page: copy `attention-playground.js` next to your HTML (or load it from
  `node_modules/attention-playground/attention-playground.js`) and write
  `<attention-playground sentence="The cat sat on the mat."></attention-playground>`.
  One file, no network requests, works under a strict Content-Security-Policy.
  `model="language"` loads `generated/models/language.safetensors` beside it (in this
  package, with its licence, `WORDNET-LICENSE`); the coreference model is inside the file.
  "Copy link" leads to `playground-url="https://…"`, the full playground, if you give one.
- In Node 20+ or a bundler: `import { createEngine } from 'attention-playground';`
  then `const engine = await createEngine(); engine.run({ sentence: 'The cat sat.' })`,
  or train: `engine.createTrainer({ task: 'reverse' }).step(300)`. Types in `engine.d.ts`.
MD
  (cd dist/npm && npm pack --silent --pack-destination .. >/dev/null)
  echo "build_wasm.sh: dist/site/ ($(du -sh dist/site | cut -f1)), dist/attention-playground-$VERSION.tgz ($(stat -c %s dist/attention-playground-$VERSION.tgz) bytes)"
}
if [ "$dist" = 1 ]; then make_dist; fi

if [ "$serve" = 1 ]; then
  port="${PORT:-8000}"
  echo "build_wasm.sh: open http://127.0.0.1:$port/ (Ctrl-C stops the server)"
  exec python3 -m http.server --bind 127.0.0.1 --directory web "$port"
fi
