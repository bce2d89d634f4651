// attn: prints the whole multi-head attention trace for a sentence.
//   attn --sentence "TEXT" [--d-model 16] [--heads 4] [--seed 42]
//        [--positional none|sinusoidal|learned] [--mask none|causal|padding|causal+padding]
//        [--pad-to N] [--no-scale] [--lowercase] [--share-heads] [--format json|table]
//   attn train | grad | run …   the training engine (train_cli.cpp)
// Bad arguments: a message on stderr and exit code 2.

#include "core/json.hpp"
#include "core/trace.hpp"
#include "train_cli.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace {

const char* kUsage =
    "usage: attn --sentence \"TEXT\" [--d-model 16] [--heads 4] [--seed 42]\n"
    "            [--positional none|sinusoidal|learned] [--mask none|causal|padding|causal+padding]\n"
    "            [--pad-to N] [--no-scale] [--lowercase] [--share-heads] [--format json|table]\n";

struct UsageError {
    std::string message;
};

long long parse_int(const std::string& flag, const std::string& value, long long lo, long long hi) {
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi)
        throw UsageError{flag + " expects a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                         ", got \"" + value + "\""};
    return v;
}

std::string pad_right(const std::string& s, std::size_t width) {
    // width in characters, counting UTF-8 lead bytes only
    std::size_t chars = 0;
    for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
    return chars >= width ? s : s + std::string(width - chars, ' ');
}

std::string shorten(const std::string& s, std::size_t max_chars) {
    std::string out;
    std::size_t chars = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if ((c & 0xC0) != 0x80 && ++chars > max_chars) return out + "~";
        out += s[i];
    }
    return out;
}

void print_table(const attn::Trace& tr) {
    const attn::Config& c = tr.config;
    std::printf("d_model %d, heads %d, d_head %d, seed %u, positional %s, mask %s, scale %s\n\n", c.d_model,
                c.heads, tr.d_head, c.seed, attn::positional_name(c.positional), attn::mask_name(c.mask),
                c.scale ? "1/sqrt(d_head)" : "off");
    std::printf("tokens:\n");
    for (std::size_t i = 0; i < tr.tokens.size(); ++i) {
        const attn::Token& t = tr.tokens[i];
        std::printf("  %3zu  %-12s id %5d  bytes [%zu, %zu)\n", i, pad_right(t.text, 12).c_str(), t.id, t.start,
                    t.end);
    }
    const std::size_t w = 9;
    for (std::size_t h = 0; h < tr.heads.size(); ++h) {
        std::printf("\nhead %zu attention weights (row = query, column = key, each row sums to 1):\n", h);
        std::printf("%s", pad_right("", w).c_str());
        for (const attn::Token& t : tr.tokens) std::printf(" %s", pad_right(shorten(t.text, 6), 7).c_str());
        std::printf("\n");
        for (Eigen::Index i = 0; i < tr.heads[h].weights.rows(); ++i) {
            std::printf("%s", pad_right(shorten(tr.tokens[static_cast<std::size_t>(i)].text, 8), w).c_str());
            for (Eigen::Index j = 0; j < tr.heads[h].weights.cols(); ++j)
                std::printf(" %7.4f", static_cast<double>(tr.heads[h].weights(i, j)));
            std::printf("\n");
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && attn::cli::is_training_command(argv[1])) return attn::cli::training_main(argc, argv);
    attn::Config config;
    std::string sentence;
    bool have_sentence = false;
    std::string format = "json";
    try {
        std::vector<std::string> args(argv + 1, argv + argc);
        for (std::size_t i = 0; i < args.size(); ++i) {
            const std::string& a = args[i];
            const auto value = [&]() -> std::string {
                if (i + 1 >= args.size()) throw UsageError{a + " needs a value"};
                return args[++i];
            };
            if (a == "--help" || a == "-h") {
                std::fputs(kUsage, stdout);
                return 0;
            } else if (a == "--sentence") {
                sentence = value();
                have_sentence = true;
            } else if (a == "--d-model") {
                config.d_model = static_cast<int>(parse_int(a, value(), 1, attn::kMaxDModel));
            } else if (a == "--heads") {
                config.heads = static_cast<int>(parse_int(a, value(), 1, attn::kMaxDModel));
            } else if (a == "--seed") {
                config.seed = static_cast<std::uint32_t>(parse_int(a, value(), 0, 4294967295LL));
            } else if (a == "--positional") {
                config.positional = attn::parse_positional(value());
            } else if (a == "--mask") {
                const std::string m = value();
                config.mask = attn::parse_mask(m);
                if (config.mask == attn::MaskKind::custom)
                    throw UsageError{"--mask custom is only available through the library and the page"};
            } else if (a == "--pad-to") {
                config.pad_to = static_cast<int>(parse_int(a, value(), 0, attn::kMaxTokens));
            } else if (a == "--no-scale") {
                config.scale = false;
            } else if (a == "--lowercase") {
                config.lowercase = true;
            } else if (a == "--share-heads") {
                config.share_heads = true;
            } else if (a == "--format") {
                format = value();
                if (format != "json" && format != "table")
                    throw UsageError{"--format expects json or table, got \"" + format + "\""};
            } else {
                throw UsageError{"unknown argument \"" + a + "\""};
            }
        }
        if (!have_sentence) throw UsageError{"--sentence is required"};
        const attn::Trace trace = attn::run(sentence, config);
        if (format == "json") {
            const std::string json = attn::trace_to_json(trace);
            std::fwrite(json.data(), 1, json.size(), stdout);
        } else {
            print_table(trace);
        }
        return 0;
    } catch (const UsageError& e) {
        std::fprintf(stderr, "attn: %s\n%s", e.message.c_str(), kUsage);
        return 2;
    } catch (const attn::Error& e) {
        std::fprintf(stderr, "attn: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "attn: internal error: %s\n", e.what());
        return 1;
    }
}
