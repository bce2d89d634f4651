#pragma once
// The peak-memory measure of the memory-estimate tests (defined in test_trainer.cpp).

#include <cstdint>
#include <functional>

namespace test_memory {

/// The most memory the process held above its level at the start while f ran, in bytes:
/// natively the peak resident set (VmHWM, reset through /proc/self/clear_refs), under
/// AddressSanitizer the peak of the live heap bytes.
std::int64_t peak_memory_of(const std::function<void()>& f);

}  // namespace test_memory
