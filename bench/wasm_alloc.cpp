// What one allocation can get in a wasm module linked with the engine's flags (bench/wasm_alloc.sh):
// the ceiling kMaxParameterBytes (checkpoints/pretrained.hpp) stays below, since a loaded
// model's parameters are one std::vector<float>. Not a test.

#include <emscripten/bind.h>
#include <emscripten/heap.h>

#include <new>
#include <vector>

namespace {

/// The heap's size after a std::vector<float> of `bytes` was made (zeroed, as Parameters is); 0 when it failed.
double vector_of(double bytes) {
    try {
        std::vector<float> v(static_cast<std::size_t>(bytes / 4));
        return v.empty() ? 0 : static_cast<double>(emscripten_get_heap_size());
    } catch (const std::bad_alloc&) {
        return 0;
    }
}

/// Two blocks of `bytes` held at once (the "two of 1.35 GiB fit"): 1 when both came.
double two_of(double bytes) {
    try {
        std::vector<float> a(static_cast<std::size_t>(bytes / 4)), b(static_cast<std::size_t>(bytes / 4));
        return 1;
    } catch (const std::bad_alloc&) {
        return 0;
    }
}

}  // namespace

EMSCRIPTEN_BINDINGS(wasm_alloc) {
    emscripten::function("vectorOf", &vector_of);
    emscripten::function("twoOf", &two_of);
}
