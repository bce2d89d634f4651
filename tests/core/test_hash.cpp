// The one string hash (hash.hpp) against the published FNV-1a test vectors
// (Landon Curt Noll's FNV test suite, test_fnv.c; the same in the IETF draft
// draft-eastlake-fnv): the 32- and 64-bit hashes of "", "a", "foobar" and
// the prefixes of "foobar"; and its users: the initial weights' streams, the
// tokenizer's ids.

#include "base/hash.hpp"
#include "model/model.hpp"
#include "base/random.hpp"
#include "text/tokenizer.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>

TEST_CASE("fnv1a32: the published test vectors", "[hash]") {
    const std::pair<const char*, std::uint32_t> vectors[] = {
        {"", 0x811c9dc5u},    {"a", 0xe40c292cu},     {"b", 0xe70c2de5u},     {"fo", 0x6222e842u},
        {"foo", 0xa9f37ed7u}, {"foob", 0x3f5076efu},  {"fooba", 0x39aaa18au}, {"foobar", 0xbf9cf968u},
    };
    for (const auto& [text, hash] : vectors) {
        INFO(text);
        CHECK(attn::fnv1a32(text) == hash);
    }
}

TEST_CASE("fnv1a64: the published test vectors", "[hash]") {
    const std::pair<const char*, std::uint64_t> vectors[] = {
        {"", 0xcbf29ce484222325ULL},      {"a", 0xaf63dc4c8601ec8cULL},     {"b", 0xaf63df4c8601f1a5ULL},
        {"fo", 0x08985907b541d342ULL},    {"foo", 0xdcb27518fed9d577ULL},   {"foob", 0xdd120e790c2512afULL},
        {"fooba", 0xcac165afa2fef40aULL}, {"foobar", 0x85944171f73967e8ULL},
    };
    for (const auto& [text, hash] : vectors) {
        INFO(text);
        CHECK(attn::fnv1a64(text) == hash);
    }
}

TEST_CASE("fnv1a: bytes above 0x7f hash as unsigned bytes, the same on every platform", "[hash]") {
    // "é" is C3 A9: hashed byte by byte from the basis, by hand with the primes
    std::uint64_t h = attn::kFnv64Basis;
    h = (h ^ 0xC3u) * attn::kFnv64Prime;
    h = (h ^ 0xA9u) * attn::kFnv64Prime;
    CHECK(attn::fnv1a64("\xC3\xA9") == h);
    static_assert(attn::fnv1a32("") == 0x811c9dc5u, "usable in constant expressions");
    // another basis: the same steps from it ("" is the basis itself)
    CHECK(attn::fnv1a64("", 1469598103934665603ULL) == 1469598103934665603ULL);
    CHECK(attn::fnv1a64("a", 1469598103934665603ULL) == ((1469598103934665603ULL ^ 0x61u) * attn::kFnv64Prime));
}

// ---- where the hash is used -----------------------------------------------------------

namespace {

/// FNV-1a 64 written out here, prime as a literal, from the offset basis the
/// parameter streams use: 1469598103934665603, the published basis
/// 14695981039346656037 short of its last digit (model/parameters.cpp says why it stays).
std::uint64_t stream_fnv1a64(const std::string& text) {
    std::uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
    return h;
}

}  // namespace

TEST_CASE("init_parameters: each tensor's random stream is the FNV-1a 64 of its name from the kept basis", "[hash]") {
    attn::ModelConfig c;
    c.vocab = 7;
    c.context = 5;
    c.d_model = 8;
    c.heads = 2;
    c.mlp = 4;
    attn::Parameters p(c);
    const std::uint32_t seed = 42;
    attn::init_parameters(c, seed, p);
    for (const char* name : {"embed", "pos", "layers.0.w_query", "layers.0.w_output", "layers.0.mlp.w_in", "unembed"}) {
        INFO(name);
        const attn::ParamInfo& info = p.info(name);
        const bool unit = std::string(name) == "embed" || std::string(name) == "pos";
        const float limit = unit ? attn::kUnitVarianceLimit : static_cast<float>(1.0 / std::sqrt(static_cast<double>(info.rows)));
        const auto stream = static_cast<attn::Stream>(stream_fnv1a64(name));
        const auto view = p.view(name);
        for (int r = 0; r < info.rows; ++r)
            for (int col = 0; col < info.cols; ++col)
                CHECK(view(r, col) == attn::counter_uniform(seed, stream, static_cast<std::uint64_t>(r),
                                                            static_cast<std::uint64_t>(col), limit));
    }
}

TEST_CASE("token_id: the FNV-1a 32 of the token's bytes, mod the hashed vocabulary", "[hash]") {
    // "" → 0x811c9dc5 and "a" → 0xe40c292c (the published vectors), mod kVocabSize − 2, + 2
    const auto mod = static_cast<std::uint32_t>(attn::kVocabSize - 2);
    CHECK(attn::token_id("a") == static_cast<std::int32_t>(0xe40c292cu % mod) + 2);
    CHECK(attn::token_id("foobar") == static_cast<std::int32_t>(0xbf9cf968u % mod) + 2);
}
