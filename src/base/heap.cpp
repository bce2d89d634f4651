#include "base/heap.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace attn {

void keep_freed_heap() {
#if defined(__GLIBC__)
    mallopt(M_TOP_PAD, 64 << 20);
#endif
}

}  // namespace attn
