#pragma once

namespace attn {

/// For a process that trains or runs models (the CLI, the test binary): asks the C library's
/// allocator to keep 64 MiB of freed memory at the top of its heap instead of returning it to
/// the system at every free. A training step frees and allocates the same few megabytes of
/// activations and gradients each time; with glibc's defaults the heap's top was given back and
/// taken again ~15 times a step (brk), every new page faulted in zeroed: `attn train --task
/// induction` spent 3.6 of its 13 CPU seconds in the kernel (docs/performance.md). A process-wide
/// setting, so the library never calls it itself. Does nothing where the allocator is not glibc's
/// (wasm: dlmalloc keeps its pages).
void keep_freed_heap();

}  // namespace attn
