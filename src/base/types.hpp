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

/// Limits, documented in docs/playground.md. They keep a trace (H·T² floats per stage)
/// and the weights (4·C² floats) within what a browser tab can hold.
inline constexpr int kMaxTokens = 2048;
inline constexpr int kMaxDModel = 1024;
/// A full trace keeps scores, scaled scores and weights for every head:
/// 3·H·T² floats. Larger requests must use the output-only path.
inline constexpr std::int64_t kMaxTraceScoreFloats = 3LL * 8 * 512 * 512 * 4;  // 24 Mi floats = 96 MB

/// Why an attn::Error was thrown: a machine-readable reason that travels with
/// the message to JavaScript (err.code, web/engine.d.ts ErrorCode). The list and
/// its names are defined once, here (X-macro); the bindings export the names
/// (engine.info.errorCodes) and engine.js uses only those.
#define ATTN_ERROR_CODES(X)                                                                           \
    X(bad_input)        /* a value out of range or of the wrong type (the default) */                  \
    X(bad_shape)        /* matrices or vectors whose sizes do not fit together */                       \
    X(bad_mask)         /* an unknown mask name or kind, or a mask matrix that does not fit */          \
    X(not_finite)       /* NaN, an infinity, or a value beyond the accepted range */                    \
    X(bad_text)         /* text that is not valid UTF-8 / Unicode */                                    \
    X(empty_text)       /* a sentence with no tokens */                                                 \
    X(too_many_tokens)  /* more tokens (or bytes of text, or sentences) than the engine takes */        \
    X(too_large)        /* sizes whose memory is above a limit (model width, trace size, training) */   \
    X(out_of_memory)    /* the allocation failed */                                                     \
    X(too_long_for_model) /* more tokens than a trained model's context */                              \
    X(unknown_word)     /* a word outside a trained model's vocabulary */                               \
    X(bad_checkpoint)   /* a .safetensors file or its metadata that cannot be read */                   \
    X(bad_state)        /* a call that does not fit the object's state (a disposed trainer, …) */       \
    X(internal)         /* a bug: anything else */

/// The error every public entry point throws for bad input. `kind` tells the
/// binding layer which JS error to raise (RangeError for values out of range,
/// TypeError for malformed input such as invalid UTF-8); `code` says why.
class Error : public std::invalid_argument {
public:
    enum class Kind { range, type };
    enum class Code {
#define ATTN_ERROR_CODE_ENUM(name) name,
        ATTN_ERROR_CODES(ATTN_ERROR_CODE_ENUM)
#undef ATTN_ERROR_CODE_ENUM
    };
    explicit Error(const std::string& message, Kind kind = Kind::range)
        : std::invalid_argument(message), kind_(kind), code_(Code::bad_input) {}
    Error(Code code, const std::string& message, Kind kind = Kind::range)
        : std::invalid_argument(message), kind_(kind), code_(code) {}
    Kind kind() const noexcept { return kind_; }
    Code code() const noexcept { return code_; }

private:
    Kind kind_;
    Code code_;
};

/// "too_many_tokens" for Error::Code::too_many_tokens: the name JS sees.
inline const char* error_code_name(Error::Code code) {
    switch (code) {
#define ATTN_ERROR_CODE_NAME(name) \
    case Error::Code::name: return #name;
        ATTN_ERROR_CODES(ATTN_ERROR_CODE_NAME)
#undef ATTN_ERROR_CODE_NAME
    }
    return "internal";
}

/// Every code, in enum order.
inline constexpr Error::Code kErrorCodes[] = {
#define ATTN_ERROR_CODE_LIST(name) Error::Code::name,
    ATTN_ERROR_CODES(ATTN_ERROR_CODE_LIST)
#undef ATTN_ERROR_CODE_LIST
};

}  // namespace attn
