#pragma once
// The attn CLI's command line: parsed into options without touching the
// filesystem (tests/fuzz/fuzz_cli.cpp fuzzes exactly this), and the sentence
// file read with the core's byte limit.
//
// Rules: every option at most once; numbers are plain digits (no sign, no
// spaces, no exponent) within the option's range; the sentence comes from
// --sentence TEXT or --sentence-file PATH ("-" = stdin), never both.

#include "attention/trace.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn::cli {

extern const char* const kUsage;

/// A bad command line: main prints "attn: <message>" and the usage, exit code 2.
struct UsageError {
    std::string message;
};

struct Options {
    bool help = false;                         ///< --help / -h: print kUsage, exit 0
    Config config;
    std::optional<std::string> sentence;       ///< --sentence TEXT
    std::optional<std::string> sentence_file;  ///< --sentence-file PATH, "-" for stdin
    std::string format = "json";               ///< json | table
};

/// Parses argv[1..]. Throws UsageError (or attn::Error for an unknown
/// positional / mask name) naming the argument. Stops at --help.
Options parse_args(const std::vector<std::string>& args);

/// The bytes of the file a flag names (PATH, "-" for stdin), at most `limit`
/// of them: a regular file above it is refused by its size before reading,
/// anything else (a pipe, /dev/zero) after reading limit + 1 bytes. A longer
/// file, or one that cannot be read, is a UsageError naming the flag, the
/// path and the limit. Every file the CLI reads goes through here.
std::string read_input_file(const std::string& flag, const std::string& path, std::uint64_t limit);

/// The bytes of PATH ("-": stdin), exactly as stored (whitespace, a final
/// newline included, separates tokens as anywhere): read_input_file with
/// the limit kMaxSentenceBytes.
std::string read_sentence_file(const std::string& path);

// ---- table labels: widths in characters (UTF-8 lead bytes), never cut inside one ----------

/// The first `max_chars` characters of `s` (all of it when shorter).
std::string cut_chars(const std::string& s, std::size_t max_chars);
/// `s` padded with spaces on the right to `width` characters (as it is when wider).
std::string pad_right(const std::string& s, std::size_t width);
/// `s` padded with spaces on the left to `width` characters (as it is when wider).
std::string pad_left(const std::string& s, std::size_t width);

}  // namespace attn::cli
