#!/usr/bin/env bash
# The one place that knows which Debian 12 packages each part of the project needs.
#   .ci/install-deps.sh WHAT...     WHAT: native wasm fuzz browser node torch openblas
# Installs what is missing when run as root (apt-get); otherwise prints the
# apt-get command and exits 1. Exits 0 when nothing is missing.
#   native    g++, cmake, make, Eigen, Catch2 (the core, the CLI, the Catch2 tests)
#   wasm      Emscripten, Eigen, wabt, cmake, make, python3, node (./build_wasm.sh)
#   fuzz      clang and its ASan/UBSan/libFuzzer runtimes (the sanitizer build)
#   browser   Chromium (the browser tests, screenshots)
#   node      Node.js and npm (the Node and browser tests)
#   torch     Debian's PyTorch + NumPy for $PYTHON (default /usr/bin/python3) (bench/grad_check.sh)
#   openblas  OpenBLAS, so PyTorch does not use the reference BLAS (bench/train.sh)
# Environment: ATTN_DEPS_FOR names the caller in messages (default install-deps.sh).
set -euo pipefail
who=${ATTN_DEPS_FOR:-install-deps.sh}
PYTHON=${PYTHON:-/usr/bin/python3}

need=()
add() { for p in "$@"; do [[ " ${need[*]-} " == *" $p "* ]] || need+=("$p"); done; }
for what in "$@"; do
  case "$what" in
    native)
      command -v g++ >/dev/null || add g++
      command -v cmake >/dev/null || add cmake
      command -v make >/dev/null || add make
      [ -f /usr/share/eigen3/cmake/Eigen3Config.cmake ] || add libeigen3-dev
      [ -f /usr/include/catch2/catch.hpp ] || add catch2 ;;
    wasm)
      command -v emcc >/dev/null || add emscripten
      [ -f /usr/share/eigen3/cmake/Eigen3Config.cmake ] || add libeigen3-dev
      command -v wasm-objdump >/dev/null || add wabt
      command -v cmake >/dev/null || add cmake
      command -v make >/dev/null || add make
      command -v python3 >/dev/null || add python3
      command -v node >/dev/null || add nodejs ;;
    fuzz)
      command -v clang++ >/dev/null || add clang
      # ASan, UBSan and libFuzzer runtimes for clang (not pulled in by --no-install-recommends)
      compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null || add libclang-rt-14-dev ;;
    browser)
      [ -x /usr/bin/chromium ] || add chromium ;;
    node)
      command -v python3 >/dev/null || add python3
      command -v node >/dev/null || add nodejs npm ;;
    torch)
      "$PYTHON" -c 'import torch, numpy' 2>/dev/null || add python3-torch python3-numpy ;;
    openblas)
      blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)
      case "$blas" in *openblas*|*blis*|*mkl*) ;; *) add libopenblas0-pthread ;; esac ;;
    *) echo "install-deps.sh: unknown group \"$what\" (native wasm fuzz browser node torch openblas)" >&2; exit 2 ;;
  esac
done

[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "$who: installing ${need[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
else
  echo "$who: missing packages. Run:" >&2
  echo "  sudo apt-get install -y --no-install-recommends ${need[*]}" >&2
  exit 1
fi
