#include "args.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

namespace attn::cli {

const char* const kUsage =
    "usage: attn --sentence \"TEXT\" | --sentence-file PATH|-  [--d-model 16] [--heads 4] [--seed 42]\n"
    "            [--positional none|sinusoidal|learned] [--mask none|causal|padding|causal+padding]\n"
    "            [--pad-to N] [--no-scale] [--lowercase] [--share-heads] [--format json|table]\n"
    "Each option at most once; numbers are plain digits. --sentence-file - reads stdin.\n"
    "       attn tokenize --tokenizer DIR|FILE [--tokenizer FILE …] (--text \"TEXT\" | --text-file PATH|-)\n"
    "            [--family NAME] [--format json|table]   a Hugging Face tokenizer (attn tokenize --help)\n"
    "       attn train | grad | run | baseline …   the training engine (attn train --help)\n";

namespace {

/// Digits only, then the range: " 16", "+16", "16 ", "1e1" and "" are all refused alike.
long long parse_int(const std::string& flag, const std::string& value, long long lo, long long hi) {
    const auto bad = [&] {
        return UsageError{flag + " expects a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                          ", got \"" + value + "\""};
    };
    if (value.empty() || value.size() > 18) throw bad();
    long long v = 0;
    for (const char ch : value) {
        if (ch < '0' || ch > '9') throw bad();
        v = v * 10 + (ch - '0');
    }
    if (v < lo || v > hi) throw bad();
    return v;
}

}  // namespace

Options parse_args(const std::vector<std::string>& args) {
    Options o;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--help" || a == "-h") {
            o.help = true;
            return o;
        }
        const auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) throw UsageError{a + " needs a value"};
            return args[++i];
        };
        const bool known = a == "--sentence" || a == "--sentence-file" || a == "--d-model" || a == "--heads" ||
                           a == "--seed" || a == "--positional" || a == "--mask" || a == "--pad-to" ||
                           a == "--no-scale" || a == "--lowercase" || a == "--share-heads" || a == "--format";
        if (!known) throw UsageError{"unknown argument \"" + a + "\""};
        if (!seen.insert(a).second) throw UsageError{a + " is given twice"};
        if (a == "--sentence") {
            o.sentence = value();
        } else if (a == "--sentence-file") {
            o.sentence_file = value();
        } else if (a == "--d-model") {
            o.config.d_model = static_cast<int>(parse_int(a, value(), 1, kMaxDModel));
        } else if (a == "--heads") {
            o.config.heads = static_cast<int>(parse_int(a, value(), 1, kMaxDModel));
        } else if (a == "--seed") {
            o.config.seed = static_cast<std::uint32_t>(parse_int(a, value(), 0, 4294967295LL));
        } else if (a == "--positional") {
            o.config.positional = parse_positional(value());
        } else if (a == "--mask") {
            o.config.mask = parse_mask(value());
            if (o.config.mask == MaskKind::custom)
                throw UsageError{"--mask custom is only available through the library and the page"};
        } else if (a == "--pad-to") {
            o.config.pad_to = static_cast<int>(parse_int(a, value(), 0, kMaxTokens));
        } else if (a == "--no-scale") {
            o.config.scale = false;
        } else if (a == "--lowercase") {
            o.config.lowercase = true;
        } else if (a == "--share-heads") {
            o.config.share_heads = true;
        } else {  // --format
            o.format = value();
            if (o.format != "json" && o.format != "table")
                throw UsageError{"--format expects json or table, got \"" + o.format + "\""};
        }
    }
    if (o.sentence && o.sentence_file) throw UsageError{"give --sentence or --sentence-file, not both"};
    if (!o.sentence && !o.sentence_file) throw UsageError{"--sentence is required (or --sentence-file PATH)"};
    return o;
}

std::string read_input_file(const std::string& flag, const std::string& path, std::uint64_t limit) {
    const bool from_stdin = path == "-";
    const std::string who = flag + " \"" + path + "\"";
    const auto too_long = [&] {
        return UsageError{who + " has more than " + std::to_string(limit) + " bytes, above the limit of " +
                          std::to_string(limit) + " bytes"};
    };
    std::FILE* f = from_stdin ? stdin : std::fopen(path.c_str(), "rb");
    if (!f) throw UsageError{"cannot read " + who + ": " + std::strerror(errno)};
    struct stat st {};
    if (!from_stdin && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
        static_cast<std::uint64_t>(st.st_size) > limit) {
        std::fclose(f);
        throw too_long();
    }
    std::string text;
    char buf[16384];
    bool failed = false;
    while (text.size() <= limit) {  // one byte past the limit is enough to know
        const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buf, limit + 1 - text.size()));
        const std::size_t n = std::fread(buf, 1, want, f);
        text.append(buf, n);
        if (n < want) {
            failed = std::ferror(f) != 0;
            break;
        }
    }
    const int error = errno;
    if (!from_stdin) std::fclose(f);
    if (failed) throw UsageError{"cannot read " + who + ": " + std::strerror(error)};
    if (text.size() > limit) throw too_long();
    return text;
}

std::string read_sentence_file(const std::string& path) { return read_input_file("--sentence-file", path, kMaxSentenceBytes); }

namespace {

/// Characters of UTF-8 text: its bytes that are not continuation bytes (10xxxxxx).
std::size_t count_chars(const std::string& s) {
    std::size_t chars = 0;
    for (const unsigned char c : s) chars += (c & 0xC0) != 0x80;
    return chars;
}

}  // namespace

std::string cut_chars(const std::string& s, std::size_t max_chars) {
    std::size_t chars = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && ++chars > max_chars) return s.substr(0, i);
    return s;
}

std::string pad_right(const std::string& s, std::size_t width) {
    const std::size_t chars = count_chars(s);
    return chars >= width ? s : s + std::string(width - chars, ' ');
}

std::string pad_left(const std::string& s, std::size_t width) {
    const std::size_t chars = count_chars(s);
    return chars >= width ? s : std::string(width - chars, ' ') + s;
}

}  // namespace attn::cli
