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
/// of rows, a boolean mask the same way. JSON has no NaN or infinity: a value
/// that is not finite is refused (attn::Error, not_finite), never written.
void json_put_float(std::string& out, float v);
/// A double with 17 significant digits (a loss); not finite: refused as above.
void json_put_double(std::string& out, double v);
void json_put_matrix(std::string& out, const Eigen::Ref<const Matrix>& m);
void json_put_mask(std::string& out, const MaskMatrix& m);

}  // namespace attn
