// libFuzzer harness of the attn CLI's argument parser (src/cli/args.hpp).
// Input: the arguments, separated by NUL bytes (at most 24).
// Invariants: parse_args returns or throws UsageError / attn::Error, nothing
// else; what it accepts is in range and has exactly one sentence source; the
// options written back as arguments parse to the same options (so the rules
// are consistent: what one parse accepts, its canonical form also passes).

#include "args.hpp"
#include "check.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

std::vector<std::string> canonical_args(const attn::cli::Options& o) {
    const attn::Config& c = o.config;
    std::vector<std::string> a;
    if (o.sentence) a.insert(a.end(), {"--sentence", *o.sentence});
    if (o.sentence_file) a.insert(a.end(), {"--sentence-file", *o.sentence_file});
    a.insert(a.end(), {"--d-model", std::to_string(c.d_model), "--heads", std::to_string(c.heads), "--seed",
                       std::to_string(c.seed), "--positional", attn::positional_name(c.positional), "--mask",
                       attn::mask_name(c.mask), "--pad-to", std::to_string(c.pad_to), "--format", o.format});
    if (!c.scale) a.push_back("--no-scale");
    if (c.lowercase) a.push_back("--lowercase");
    if (c.share_heads) a.push_back("--share-heads");
    return a;
}

bool same(const attn::cli::Options& a, const attn::cli::Options& b) {
    const attn::Config &x = a.config, &y = b.config;
    return a.help == b.help && a.sentence == b.sentence && a.sentence_file == b.sentence_file && a.format == b.format &&
           x.d_model == y.d_model && x.heads == y.heads && x.seed == y.seed && x.positional == y.positional &&
           x.mask == y.mask && x.pad_to == y.pad_to && x.scale == y.scale && x.lowercase == y.lowercase &&
           x.share_heads == y.share_heads;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> args(1);
    for (std::size_t i = 0; i < size; ++i) {
        if (data[i] == 0) {
            if (args.size() == 24) return 0;
            args.emplace_back();
        } else {
            args.back() += static_cast<char>(data[i]);
        }
    }
    attn::cli::Options o;
    try {
        o = attn::cli::parse_args(args);
    } catch (const attn::cli::UsageError& e) {
        FUZZ_CHECK(!e.message.empty(), "an empty usage message");
        return 0;
    } catch (const attn::Error&) {
        return 0;  // an unknown positional encoding or mask name
    }
    if (o.help) return 0;
    const attn::Config& c = o.config;
    FUZZ_CHECK(o.sentence.has_value() != o.sentence_file.has_value(), "not exactly one sentence source");
    FUZZ_CHECK(c.d_model >= 1 && c.d_model <= attn::kMaxDModel, "d_model %d", c.d_model);
    FUZZ_CHECK(c.heads >= 1 && c.heads <= attn::kMaxDModel, "heads %d", c.heads);
    FUZZ_CHECK(c.pad_to >= 0 && c.pad_to <= attn::kMaxTokens, "pad_to %d", c.pad_to);
    FUZZ_CHECK(c.mask != attn::MaskKind::custom, "--mask custom accepted");
    FUZZ_CHECK(o.format == "json" || o.format == "table", "format %s", o.format.c_str());
    attn::cli::Options again;
    try {
        again = attn::cli::parse_args(canonical_args(o));
    } catch (const attn::cli::UsageError& e) {
        FUZZ_CHECK(false, "the canonical form of accepted options is refused: %s", e.message.c_str());
    }
    FUZZ_CHECK(same(o, again), "the canonical form parses to different options");
    return 0;
}
