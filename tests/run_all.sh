#!/usr/bin/env bash
# The one test command: installs what is missing, builds everything and runs
# every test suite. Exit code non-zero when anything fails or no test ran.
#   tests/run_all.sh
# As root it installs Debian 12's packages itself; otherwise it prints the
# apt-get command and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

# ---- 1. what the machine needs ----------------------------------------------------
ATTN_DEPS_FOR=run_all.sh .ci/install-deps.sh native wasm fuzz browser node
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "Node $node_major found; the browser tests (playwright-core) need Node 20 or later." >&2
  exit 1
fi
echo "== npm ci (tests/)"
(cd tests && npm ci --no-audit --no-fund --loglevel=error)

# ---- 2. native: core, CLI, Catch2 tests ---------------------------------------------
echo "== native build"
mkdir -p build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON >build/configure.log 2>&1 || { cat build/configure.log; exit 1; }
cmake --build build -j"$(nproc)" -- --no-print-directory
echo "== ctest (Catch2)"
ctest --test-dir build --no-tests=error --output-on-failure -j"$(nproc)"
# catch_discover_tests silently drops test cases whose names hold '[' or ']'
# (CMake reads them as list brackets) and splits names at ';' into tests that
# match nothing: every Catch2 test must be exactly one ctest test.
# (Catch2 v2 exits with the number of test cases listed, hence the "|| true".)
in_binary=$( (build/core_tests --list-test-names-only || true) | grep -c .)
in_ctest=$(ctest --test-dir build -N | sed -n 's/^Total Tests: //p')
if [ "$in_binary" != "$in_ctest" ]; then
  echo "ctest runs $in_ctest of the $in_binary Catch2 test cases: a test name has '[', ']' or ';'" >&2
  exit 1
fi

# ---- 2b. the same Catch2 suite under AddressSanitizer + UndefinedBehaviorSanitizer, ----------
# and a short run of each libFuzzer harness (tests/fuzz), from one clang build:
# ATTN_FUZZ=ON implies ATTN_SANITIZE=ON and adds the fuzzers.
echo "== sanitizer build (clang, ASan + UBSan, with the fuzzers)"
mkdir -p build-asan
cmake -S . -B build-asan -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTN_FUZZ=ON \
  -DBUILD_TESTING=ON >build-asan/configure.log 2>&1 || { cat build-asan/configure.log; exit 1; }
cmake --build build-asan -j"$(nproc)" --target core_tests -- --no-print-directory >build-asan/build.log 2>&1 \
  || { cat build-asan/build.log; exit 1; }
echo "== Catch2 under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  build-asan/core_tests
echo "== fuzzers (tokenizer, trace, CLI parser, checkpoint loader), 20 s each"
ATTN_FUZZ_BUILD=build-asan tests/fuzz/run.sh 20

# ---- 3. WebAssembly module and its Node tests ---------------------------------------------
echo "== wasm build (SIMD, the scalar flavour the fast-path tests compare, and dist/: site + npm package)"
./build_wasm.sh --scalar --dist
echo "== node tests (engine API, CLI)"
ATTN_CLI="$root/build/attn" node --test tests/js/

# ---- 4. browser tests (Chromium via playwright-core) ---------------------------------------
if compgen -G "tests/browser/*.test.mjs" >/dev/null; then
  echo "== browser tests (chromium)"
  node --test --test-concurrency=1 tests/browser/
fi
echo "== all test suites passed"
