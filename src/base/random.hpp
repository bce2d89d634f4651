#pragma once
// Counter-based pseudo-random numbers: the value at (seed, stream, row, col)
// is a pure function of those four integers, so the same seed gives the same
// numbers natively and in WebAssembly, in any order of generation, and a
// single row (one token's embedding) never depends on the rest of a table.

#include <cstdint>

namespace attn {

/// Streams keep the tables of one seed independent of each other.
enum class Stream : std::uint64_t {
    embedding = 1,
    learned_position = 2,
    w_query = 3,
    w_key = 4,
    w_value = 5,
    w_output = 6,
    experiment = 7,
    task = 20,      ///< training batches of a task (tasks.hpp)
    heldout = 21,   ///< held-out batches of a task, independent of the training ones
    generation = 22,  ///< sampled next tokens (generation.hpp), row = the new token's position
};

inline std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/// The hash of (seed, stream, row): the prefix every entry of one row shares.
inline std::uint64_t counter_row_hash(std::uint64_t seed, Stream stream, std::uint64_t row) {
    std::uint64_t h = splitmix64(seed);
    h = splitmix64(h ^ static_cast<std::uint64_t>(stream));
    return splitmix64(h ^ row);
}

inline std::uint64_t counter_hash(std::uint64_t seed, Stream stream, std::uint64_t row,
                                  std::uint64_t col) {
    return splitmix64(counter_row_hash(seed, stream, row) ^ col);
}

/// Uniform in [-limit, limit) from a 64-bit hash. The top 24 bits give a float
/// exactly, so the value is identical on every platform.
inline float uniform_from_hash(std::uint64_t hash, float limit) {
    const std::uint32_t bits = static_cast<std::uint32_t>(hash >> 40);
    const float unit = static_cast<float>(bits) * (1.0f / 16777216.0f);  // [0, 1)
    return (2.0f * unit - 1.0f) * limit;
}

inline float counter_uniform(std::uint64_t seed, Stream stream, std::uint64_t row,
                             std::uint64_t col, float limit) {
    return uniform_from_hash(counter_hash(seed, stream, row, col), limit);
}

/// The same numbers as counter_uniform(seed, stream, row, col, limit) for
/// col = 0 … n-1, hashing the shared prefix once per row.
template <typename Out>
void counter_uniform_row(std::uint64_t seed, Stream stream, std::uint64_t row, float limit, Out&& out, int n) {
    const std::uint64_t prefix = counter_row_hash(seed, stream, row);
    for (int j = 0; j < n; ++j) out(j, uniform_from_hash(splitmix64(prefix ^ static_cast<std::uint64_t>(j)), limit));
}

/// sqrt(3): a uniform variable on [-sqrt(3), sqrt(3)] has unit variance.
inline constexpr float kUnitVarianceLimit = 1.7320508075688772f;

}  // namespace attn
