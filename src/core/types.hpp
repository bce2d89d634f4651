#pragma once
// Shared types of the attention core. Dimension letters, used everywhere:
//   T tokens, C model width (d_model), H heads, D = C / H head width.
// Matrices are row-major float so that a row is a token and the memory is
// exactly the Float32Array the page receives.

#include <Eigen/Core>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace attn {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXf;
/// T×T, true = the query (row) may attend to the key (column).
using MaskMatrix = Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Limits, documented in README.md. They keep a trace (H·T² floats per stage)
/// and the weights (4·C² floats) within what a browser tab can hold.
inline constexpr int kMaxTokens = 2048;
inline constexpr int kMaxDModel = 1024;
/// A full trace keeps scores, scaled scores and weights for every head:
/// 3·H·T² floats. Larger requests must use the output-only path.
inline constexpr std::int64_t kMaxTraceScoreFloats = 3LL * 8 * 512 * 512 * 4;  // 24 Mi floats = 96 MB

/// The error every public entry point throws for bad input. `kind` tells the
/// binding layer which JS error to raise (RangeError for values out of range,
/// TypeError for malformed input such as invalid UTF-8).
class Error : public std::invalid_argument {
public:
    enum class Kind { range, type };
    explicit Error(const std::string& message, Kind kind = Kind::range)
        : std::invalid_argument(message), kind_(kind) {}
    Kind kind() const noexcept { return kind_; }

private:
    Kind kind_;
};

}  // namespace attn
