#pragma once
// A batch of token sequences for training and evaluation: B sequences of
// length T, row-major, with per-position targets. Shared by the tasks (which
// make batches) and the model (which consumes them).

#include <cstdint>
#include <vector>

namespace attn {

/// Target value meaning "no loss at this position".
inline constexpr std::int32_t kNoTarget = -1;

struct Batch {
    int batch = 0;                       ///< B
    int length = 0;                      ///< T (every sequence padded to it)
    std::vector<std::int32_t> ids;       ///< B×T token ids, row-major
    std::vector<std::int32_t> targets;   ///< B×T, kNoTarget where no loss
    /// B real lengths (0 … T), or empty when every sequence fills T. Keys at
    /// or past a sequence's length are hidden from every query (the padding
    /// mask; a length of 0 hides every key, so every row is fully masked and
    /// gets zero weights); positions past it must have kNoTarget.
    std::vector<int> lengths;

    std::int32_t id(int b, int t) const { return ids[static_cast<std::size_t>(b) * length + t]; }
    std::int32_t target(int b, int t) const { return targets[static_cast<std::size_t>(b) * length + t]; }
    int real_length(int b) const { return lengths.empty() ? length : lengths[static_cast<std::size_t>(b)]; }
};

}  // namespace attn
