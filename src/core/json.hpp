#pragma once
// The trace as JSON (the CLI's --format json), keys in snake_case, matrices as
// arrays of rows, floats with 9 significant digits (enough to round-trip).

#include "trace.hpp"

#include <string>

namespace attn {

std::string trace_to_json(const Trace& trace);

/// A JSON string literal (quotes included) with control characters escaped.
std::string json_quote(const std::string& text);

}  // namespace attn
