#!/usr/bin/env bash
# Builds the attention core to WebAssembly (Emscripten + Embind, -O3 -msimd128)
# and writes the generated files into web/generated/ (git-ignored):
#   attention_core.js + .wasm   ES module for the browser (web/engine.js loads it)
#   attention_core.node.cjs     CommonJS flavour with the wasm inlined, for Node
#   engine_constants.js         the engine's limits, defaults and enums, from the C++ (for JS)
# and the embeddable element as one self-contained file, web/attention-playground.js.
#
#   ./build_wasm.sh            build (SIMD)
#   ./build_wasm.sh --scalar   also build a scalar flavour into web/generated/scalar/ (bench/run.sh's
#                              ours-scalar): its Node module, attention_core.node.cjs (and its .wasm)
#   ./build_wasm.sh --relaxed  also build the relaxed-SIMD flavour (fused multiply-add; its last bits
#                              differ from the exact build's) into web/generated/relaxed/: the Node
#                              module and attention_core.wasm, which it takes as wasmBinary
#                              (Node 20 runs it with --experimental-wasm-relaxed-simd)
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
relaxed=0
serve=0
dist=0
VERSION=0.2.0
for arg in "$@"; do
  case "$arg" in
    --scalar) scalar=1 ;;
    --relaxed) relaxed=1 ;;
    --serve) serve=1 ;;
    --dist) dist=1 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "build_wasm.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done

# ---- toolchain (.ci/install-deps.sh: installs as root, else prints the apt-get line) ----
ATTN_DEPS_FOR=build_wasm.sh .ci/install-deps.sh wasm

# emcc's optimiser needs Debian's JS modules (acorn) when node is not Debian's.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}

configure_flavour() {  # $1 build dir, $2 ATTN_SIMD, $3 ATTN_RELAXED_SIMD
  emcmake cmake -S . -B "$1" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release -DATTN_SIMD="$2" -DATTN_RELAXED_SIMD="$3" \
    -DEigen3_DIR=/usr/share/eigen3/cmake -DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node >"$1.configure.log" 2>&1 \
    || { cat "$1.configure.log" >&2; exit 1; }
}

# Builds the flavours at once, under one make jobserver of $(nproc) jobs: one flavour's compiles
# run while another links (a link is ~15 s of one core: wasm-ld, wasm-opt -O3, the JS optimiser),
# so no core waits for the last link of a flavour before the next flavour starts.
#   build_flavours DIR:TARGET ...   (TARGET "all": every target of DIR)
build_flavours() {
  local mk=build/wasm-flavours.mk spec dir target names=()
  {
    for spec in "$@"; do
      dir=${spec%%:*} target=${spec#*:}
      names+=("$dir")
      printf '.PHONY: %s\n%s:\n\t+@$(MAKE) -C %s --no-print-directory %s >%s.build.log 2>&1 || { cat %s.build.log >&2; exit 1; }\n' \
        "$dir" "$dir" "$dir" "$target" "$dir" "$dir"
    done
    printf '.PHONY: all\nall: %s\n.DEFAULT_GOAL := all\n' "${names[*]}"
  } >"$mk"
  make -f "$mk" -j"$(nproc)" --no-print-directory all || exit 1
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

# the trained models the playground ships (models/*.safetensors), served from web/generated/models/,
# each also as a classic script, NAME.js, for <attention-playground>: a <script> loads from wherever
# the element's own file came from (another origin, file://), where fetch() would need CORS
install_models() {
  mkdir -p web/generated/models
  cp models/*.safetensors models/WORDNET-LICENSE web/generated/models/
  local f name
  for f in models/*.safetensors; do
    name=$(basename "$f" .safetensors)
    {
      echo "// The $name model of <attention-playground> ($name.safetensors as base64), generated by build_wasm.sh."
      echo "// The element loads it with a <script> (web/element-assets.js, loadModelScript). The language model was trained on WordNet 3.0: WORDNET-LICENSE, beside this file."
      printf '(globalThis.__attentionPlaygroundModels ??= {})["%s"] = "' "$name"
      base64 -w0 "$f"
      printf '";\n'
    } > "web/generated/models/$name.js"
  done
}

# <attention-playground> as one file: the element's modules, the browser glue with its
# wasm inlined, and the stylesheet (src/tools/bundle_element.py).
bundle_element() {
  # the coreference model travels inside the file; the language model is a second file
  # (generated/models/language.js beside it), loaded by a <script> when it is picked
  # PLAYGROUND_URL=https://… bakes in where "Copy link" leads by default (else index.html beside the file)
  python3 src/tools/bundle_element.py web/element.js build/wasm/attention_core.js web/style.css \
    web/attention-playground.js coreference=models/coreference.safetensors ${PLAYGROUND_URL:+"--playground-url=$PLAYGROUND_URL"}
  if grep -q "new Function\|eval(" web/attention-playground.js; then
    echo "build_wasm.sh: FAILED: web/attention-playground.js uses eval or new Function (breaks a strict CSP)" >&2
    exit 1
  fi
  echo "build_wasm.sh: web/attention-playground.js: $(stat -c %s web/attention-playground.js) bytes, self-contained"
}

mkdir -p build
# the SIMD flavour: the browser and Node modules (the element bundles the browser one); the scalar and
# relaxed flavours: their Node module alone (what bench/run.mjs and the relaxed flavour's tests load), whose wasm is taken out of
# its base64 (src/tools/single_file_wasm.py) rather than linked a second time for a browser glue
flavours=(build/wasm:all)
configure_flavour build/wasm ON OFF
if [ "$scalar" = 1 ]; then
  configure_flavour build/wasm-scalar OFF OFF
  flavours+=(build/wasm-scalar:attention_core_node)
fi
if [ "$relaxed" = 1 ]; then
  configure_flavour build/wasm-relaxed ON ON
  flavours+=(build/wasm-relaxed:attention_core_node)
fi
build_flavours "${flavours[@]}"

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
  # the Node module and its wasm (the element's bundle is the SIMD flavour's alone)
  mkdir -p web/generated/scalar
  rm -f web/generated/scalar/attention_core.js  # (a browser glue of an earlier build would not match this wasm)
  cp build/wasm-scalar/attention_core_node.js web/generated/scalar/attention_core.node.cjs
  python3 src/tools/single_file_wasm.py build/wasm-scalar/attention_core_node.js web/generated/scalar/attention_core.wasm
  echo "build_wasm.sh: web/generated/scalar/attention_core.wasm: $(stat -c %s web/generated/scalar/attention_core.wasm) bytes, $(simd_count web/generated/scalar/attention_core.wasm) SIMD instructions"
fi

if [ "$relaxed" = 1 ]; then
  # the Node module, and its wasm for it to take as wasmBinary: Emscripten 3.1.6 writes the old
  # FMA opcode, rewritten and checked here
  mkdir -p web/generated/relaxed
  rm -f web/generated/relaxed/attention_core.js  # (a browser glue of an earlier build would not match this wasm)
  cp build/wasm-relaxed/attention_core_node.js web/generated/relaxed/attention_core.node.cjs
  python3 src/tools/single_file_wasm.py build/wasm-relaxed/attention_core_node.js build/wasm-relaxed/attention_core_node.wasm
  python3 src/tools/relaxed_opcodes.py build/wasm-relaxed/attention_core_node.wasm web/generated/relaxed/attention_core.wasm
fi

# ---- dist/: a static site and an npm package ------------------------------------------
# The engine API's modules and their types (web/*.js that no page loads as a script):
# what the package's engine.js imports, all of it (tests/js/architecture.test.mjs keeps
# this list and the imports in step).
ENGINE_API=(engine.js trainer.js tokenizer.js pretrained.js validate.js matrices.js results.js families.js
  engine.d.ts types.d.ts trainer.d.ts tokenizer.d.ts pretrained.d.ts)
make_dist() {
  rm -rf dist
  mkdir -p dist/site dist/npm/generated
  # the site: every page with its modules, styles, generated engine and element
  # (the shipped models with their licence come along in generated/models/, where the pages load them)
  (cd web && tar --exclude='./generated/scalar' --exclude='./generated/relaxed' -cf - .) | (cd dist/site && tar -xf -)
  # the package: the element, the engine (ES module + wasm for browsers, CommonJS for Node), types,
  # and the shipped models with their licence in generated/models/, next to the element as it expects
  cp web/attention-playground.js "${ENGINE_API[@]/#/web/}" LICENSE dist/npm/
  cp web/generated/attention_core.js web/generated/attention_core.wasm web/generated/attention_core.node.cjs \
    web/generated/engine_constants.js dist/npm/generated/
  mkdir -p dist/npm/generated/models
  cp models/*.safetensors models/WORDNET-LICENSE web/generated/models/*.js dist/npm/generated/models/
  cp LICENSE dist/site/
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
  "license": "MIT",
  "type": "module",
  "main": "./engine.js",
  "types": "./engine.d.ts",
  "exports": {
    ".": { "types": "./engine.d.ts", "default": "./engine.js" },
    "./element": "./attention-playground.js",
    "./attention-playground.js": "./attention-playground.js",
    "./models/*": "./generated/models/*",
    "./package.json": "./package.json"
  },
  "files": ["attention-playground.js", $(printf '"%s", ' "${ENGINE_API[@]}")"generated/", "README.md", "LICENSE"],
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
  `model="language"` loads `generated/models/language.js` beside it (a script, so it also loads from another site; in this
  package, with its licence, `WORDNET-LICENSE`); the coreference model is inside the file.
  "Copy link" leads to `playground-url="https://…"`, the full playground, if you give one.
- In Node 20+ or a bundler: `import { createEngine } from 'attention-playground';`
  then `const engine = await createEngine(); engine.run({ sentence: 'The cat sat.' })`,
  or train: `engine.createTrainer({ task: 'reverse' }).step(300)`. Types in `engine.d.ts`.
  The package is ES modules only: in a CommonJS project (what `npm init -y` makes) name
  your file `.mjs`, or set `"type": "module"` in your package.json.
- A shipped model in Node: `engine.loadTrainer(readFileSync(new URL(import.meta.resolve(
  'attention-playground/models/language.safetensors'))))` (or `coreference.safetensors`).

MIT licence (`LICENSE`); the language model's data is WordNet 3.0's, under its licence
(`generated/models/WORDNET-LICENSE`).
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
