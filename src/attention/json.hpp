#pragma once
// The trace as JSON (the CLI's --format json), keys in snake_case, matrices as
// arrays of rows, floats with 9 significant digits (enough to round-trip).

#include "attention/trace.hpp"

#include <string>

namespace attn {

std::string trace_to_json(const Trace& trace);

/// A JSON string literal (quotes included) with control characters escaped.
std::string json_quote(const std::string& text);

/// The writers the trace uses (json_writer.hpp), for other JSON documents
/// (gradient dumps): a float with 9 significant digits, a matrix as an array
/// of rows, a boolean mask the same way.
void json_put_float(std::string& out, float v);
void json_put_matrix(std::string& out, const Eigen::Ref<const Matrix>& m);
void json_put_mask(std::string& out, const MaskMatrix& m);

}  // namespace attn
