// The test binary keeps freed heap memory as the CLI does (base/heap.hpp): the training and
// long-trace tests then spend their time computing, not faulting pages in (the induction
// learning test: 14 s wall natively with glibc's defaults, 6 s with the policy).
#include "base/heap.hpp"

namespace {
const bool kHeapKept = (attn::keep_freed_heap(), true);
}  // namespace
