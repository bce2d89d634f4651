#!/usr/bin/env bash
# The largest single allocation (a std::vector<float>) a wasm module linked with the engine's
# flags gets under Node, by bisection, each try in a fresh module; and whether two blocks of
# 1.35 GiB fit. kMaxParameterBytes (src/checkpoints/pretrained.hpp) is set below the first
# with a margin: run this again when emscripten changes. Not a test.
#   bench/wasm_alloc.sh      (emscripten 3.1.6, Node 20: largest 2147479500 bytes = 2³¹ − 4148; two of 1.35 GiB: yes)
set -euo pipefail
cd "$(dirname "$0")/.."
ATTN_DEPS_FOR=wasm_alloc.sh .ci/install-deps.sh wasm
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# the link flags of attention_core_node (CMakeLists.txt's ATTN_LINK_FLAGS)
em++ -O2 -fwasm-exceptions --bind bench/wasm_alloc.cpp -o "$out/alloc.cjs" -sMODULARIZE=1 -sALLOW_MEMORY_GROWTH=1 \
  -sINITIAL_MEMORY=16MB -sMAXIMUM_MEMORY=4GB -sENVIRONMENT=node -sSINGLE_FILE=1 -sFILESYSTEM=0 -sASSERTIONS=0
cat >"$out/run.cjs" <<'JS'
const create = require(process.argv[2]);
(async () => {
  const m = await create();
  console.log(m[process.argv[3]](Number(process.argv[4])));
})();
JS
try() { node "$out/run.cjs" "$out/alloc.cjs" "$1" "$2" 2>/dev/null | tail -n 1; }
lo=$((1 << 30)) hi=$((1 << 32))
while [ $((hi - lo)) -gt 4 ]; do
  mid=$(((lo + hi) / 2 / 4 * 4))
  r=$(try vectorOf "$mid")
  if [ -n "$r" ] && [ "$r" != 0 ]; then lo=$mid; else hi=$mid; fi
done
echo "largest std::vector<float>: $lo bytes (2^31 - $(((1 << 31) - lo)))"
echo "two blocks of 1.35 GiB at once: $([ "$(try twoOf $((1350 << 20)))" = 1 ] && echo yes || echo no)"
