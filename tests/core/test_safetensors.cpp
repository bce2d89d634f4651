// Tests of src/checkpoints/safetensors.hpp: bit-exact round trips, a file built by
// hand byte by byte (independently of the writer), every malformed case the
// reader must reject, and random corruptions that must never crash.

#include "checkpoints/safetensors.hpp"
#include "base/types.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using Catch::Matchers::Contains;

namespace {

// ---- bytes by hand ---------------------------------------------------------------

std::string le64(std::uint64_t v) {
    std::string out;
    for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
    return out;
}

/// A file from a header text and raw data bytes (no padding added).
std::string file_of(const std::string& header, const std::string& data = "") {
    return le64(header.size()) + header + data;
}

std::string zeros(std::size_t n) { return std::string(n, '\0'); }

std::uint32_t bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

std::string read_error(const std::string& bytes) {
    try {
        attn::read_safetensors(bytes);
    } catch (const attn::Error& e) {
        return e.what();
    }
    return "<no error>";
}

std::string write_error(const attn::SafeTensors& file) {
    try {
        attn::write_safetensors(file);
    } catch (const attn::Error& e) {
        return e.what();
    }
    return "<no error>";
}

/// A one-tensor header for tensor "x" with the given fields.
std::string one(const std::string& fields) { return "{\"x\":{" + fields + "}}"; }

attn::Tensor random_tensor(const std::string& name, std::vector<std::int64_t> shape, std::mt19937& rng) {
    attn::Tensor t;
    t.name = name;
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    t.shape = std::move(shape);
    // Random bit patterns: NaNs with payloads, infinities and denormals must survive too.
    for (std::int64_t i = 0; i < n; ++i) {
        const std::uint32_t u = static_cast<std::uint32_t>(rng());
        float f;
        std::memcpy(&f, &u, sizeof f);
        t.data.push_back(f);
    }
    return t;
}

attn::SafeTensors sample_file() {
    std::mt19937 rng(7);
    attn::SafeTensors file;
    file.tensors.push_back(random_tensor("embed.weight", {5, 3}, rng));
    file.tensors.push_back(random_tensor("scalar", {}, rng));
    file.tensors.push_back(random_tensor("empty", {0, 3}, rng));
    file.tensors.push_back(random_tensor("layers.0.w_q", {3, 3}, rng));
    file.tensors.push_back(random_tensor("bias", {7}, rng));
    file.tensors.push_back(random_tensor("cube", {2, 1, 4}, rng));
    file.metadata["format"] = "pt";
    file.metadata["config"] = "{\"d_model\": 32, \"name\": \"a \\\"quoted\\\" \\\\ path\"}";
    file.metadata["vocabulary"] = "[\"[PAD]\", \"caf\xC3\xA9\", \"\xF0\x9F\x98\x80\", \"line\\nbreak\"]";
    file.metadata["control"] = std::string("tab\there\nnewline\r\x01\x1F\x7F end");
    file.metadata["unicode \xE2\x9C\x93"] = "\xE6\x97\xA5\xE6\x9C\xAC";
    return file;
}

}  // namespace

TEST_CASE("safetensors: a round trip is bit-exact, with shapes, order and metadata kept", "[safetensors]") {
    const attn::SafeTensors file = sample_file();
    const std::string bytes = attn::write_safetensors(file);
    const attn::SafeTensors back = attn::read_safetensors(bytes);

    REQUIRE(back.tensors.size() == file.tensors.size());
    for (std::size_t i = 0; i < file.tensors.size(); ++i) {
        const attn::Tensor& a = file.tensors[i];
        const attn::Tensor& b = back.tensors[i];
        INFO("tensor " << a.name);
        CHECK(b.name == a.name);
        CHECK(b.shape == a.shape);
        REQUIRE(b.data.size() == a.data.size());
        std::size_t differing = 0;
        for (std::size_t k = 0; k < a.data.size(); ++k) differing += bits(a.data[k]) != bits(b.data[k]);
        CHECK(differing == 0);
    }
    CHECK(back.metadata == file.metadata);
    REQUIRE(back.find("bias") != nullptr);
    CHECK(back.find("bias")->shape == std::vector<std::int64_t>{7});
    CHECK(back.find("missing") == nullptr);
    CHECK(back.find("scalar")->data.size() == 1);
    CHECK(back.find("empty")->data.empty());
}

TEST_CASE("safetensors: the writer pads the header so the data is 8-byte aligned", "[safetensors]") {
    const std::string bytes = attn::write_safetensors(sample_file());
    std::uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
    CHECK((8 + n) % 8 == 0);
    // 4 bytes per float of the sample: 15 + 1 + 0 + 9 + 7 + 8 = 40 floats.
    CHECK(bytes.size() == 8 + n + 4 * 40);
}

TEST_CASE("safetensors: the writer's bytes for a small file are exactly the documented layout", "[safetensors]") {
    attn::SafeTensors file;
    file.tensors.push_back({"w", {2}, {1.0f, -2.0f}});
    file.tensors.push_back({"b", {}, {0.5f}});
    file.metadata["k"] = "v\"";
    const std::string json =
        "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
        "\"b\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[8,12]},"
        "\"__metadata__\":{\"k\":\"v\\\"\"}}";
    std::string header = json;
    while ((8 + header.size()) % 8 != 0) header += ' ';
    // 1.0f = 0x3F800000, -2.0f = 0xC0000000, 0.5f = 0x3F000000, little-endian.
    const std::string data("\x00\x00\x80\x3F\x00\x00\x00\xC0\x00\x00\x00\x3F", 12);
    CHECK(attn::write_safetensors(file) == file_of(header, data));
}

TEST_CASE("safetensors: a file built by hand parses to the expected tensors", "[safetensors]") {
    // Keys in any order, tensors listed out of data order, whitespace and
    // escapes in the JSON, trailing spaces; no padding to 8.
    const std::string header =
        "{ \"b\" : {\"shape\": [2, 1], \"data_offsets\": [4, 12], \"dtype\": \"F32\"},\n"
        "  \"__metadata__\": {\"note\": \"caf\\u00e9 \\ud83d\\ude00 \\\"q\\\" \\\\ \\/ \\b\\f\\n\\r\\t\"},\n"
        "  \"a\": {\"data_offsets\": [0, 4], \"dtype\": \"F32\", \"shape\": []},\n"
        "  \"e\": {\"dtype\": \"F32\", \"shape\": [0, 3], \"data_offsets\": [12, 12]} }   ";
    // a = 1.0f; b = [-2.5f, 0.15625f] = 0xC0200000, 0x3E200000.
    const std::string data("\x00\x00\x80\x3F" "\x00\x00\x20\xC0" "\x00\x00\x20\x3E", 12);
    const attn::SafeTensors f = attn::read_safetensors(file_of(header, data));

    REQUIRE(f.tensors.size() == 3);
    // File order is data order: a [0,4), b [4,12), e [12,12).
    CHECK(f.tensors[0].name == "a");
    CHECK(f.tensors[0].shape.empty());
    CHECK(f.tensors[0].data == std::vector<float>{1.0f});
    CHECK(f.tensors[1].name == "b");
    CHECK(f.tensors[1].shape == std::vector<std::int64_t>{2, 1});
    CHECK(f.tensors[1].data == std::vector<float>{-2.5f, 0.15625f});
    CHECK(f.tensors[2].name == "e");
    CHECK(f.tensors[2].shape == std::vector<std::int64_t>{0, 3});
    CHECK(f.tensors[2].data.empty());
    REQUIRE(f.metadata.count("note") == 1);
    CHECK(f.metadata.at("note") == "caf\xC3\xA9 \xF0\x9F\x98\x80 \"q\" \\ / \b\f\n\r\t");
}

TEST_CASE("safetensors: an empty header object is a valid file with no tensors", "[safetensors]") {
    const attn::SafeTensors f = attn::read_safetensors(file_of("{}      "));
    CHECK(f.tensors.empty());
    CHECK(f.metadata.empty());
    CHECK(attn::read_safetensors(attn::write_safetensors({})).tensors.empty());
}

TEST_CASE("safetensors: the reader rejects malformed files with a message naming the problem", "[safetensors]") {
    const std::string f32x = "\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]";
    struct Case {
        const char* what;
        std::string bytes;
        std::vector<std::string> words;
    };
    const std::vector<Case> cases = {
        {"empty file", "", {"0 bytes", "fewer than the 8"}},
        {"7 bytes", std::string(7, '\0'), {"7 bytes", "fewer than the 8"}},
        {"header past the end", le64(100) + "{}", {"header size 100", "past the end"}},
        {"header above the limit", le64((1u << 20) + 1) + std::string(64, ' '), {"1048577", "above the limit"}},
        {"huge header size", le64(~0ull) + "{}", {"above the limit"}},
        {"invalid UTF-8", file_of("{\"\xFF\":{}}"), {"not valid UTF-8"}},
        {"overlong UTF-8", file_of("{\"\xC0\xAF\":{}}"), {"not valid UTF-8"}},
        {"empty header", file_of(""), {"invalid JSON", "expected a value"}},
        {"unterminated object", file_of("{"), {"invalid JSON"}},
        {"missing colon", file_of("{\"a\" 1}"), {"invalid JSON", "expected ':'"}},
        {"trailing comma", file_of("{\"a\":1,}"), {"invalid JSON", "expected a string key"}},
        {"trailing garbage", file_of("{} x"), {"invalid JSON", "after the JSON value"}},
        {"two values", file_of("{}{}"), {"after the JSON value"}},
        {"NUL padding", file_of(std::string("{}\0\0", 4)), {"after the JSON value"}},
        {"bad literal", file_of("{\"a\":nul}"), {"invalid literal"}},
        {"unterminated string", file_of("{\"abc"), {"unterminated string"}},
        {"bad escape", file_of("{\"a\\q\":1}"), {"invalid escape"}},
        {"bad hex escape", file_of("{\"a\\u12G4\":1}"), {"invalid hex digit"}},
        {"truncated hex escape", file_of("{\"a\\u12"), {"truncated"}},
        {"lone high surrogate", file_of("{\"\\ud83d\":1}"), {"surrogate"}},
        {"high surrogate then non-low", file_of("{\"\\ud83d\\u0041\":1}"), {"surrogate"}},
        {"lone low surrogate", file_of("{\"\\ude00\":1}"), {"surrogate"}},
        {"raw control character", file_of("{\"a\nb\":1}"), {"control character"}},
        {"leading zero", file_of(one("\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]")), {"leading zero"}},
        {"number beyond int64", file_of(one("\"dtype\":\"F32\",\"shape\":[9223372036854775808],\"data_offsets\":[0,4]")),
         {"beyond the 64-bit"}},
        {"minus without digits", file_of(one("\"dtype\":\"F32\",\"shape\":[-],\"data_offsets\":[0,4]")), {"expected a digit"}},
        {"too deep", file_of(std::string(65, '[') + std::string(65, ']')), {"deeper than 64"}},
        {"header not an object", file_of("[]"), {"header is a list", "not a JSON object"}},
        {"string header", file_of("\"x\""), {"not a JSON object"}},
        {"entry not an object", file_of("{\"x\":1}"), {"tensor 'x'", "not an object"}},
        {"entry is a list", file_of("{\"x\":[]}"), {"tensor 'x'", "a list, not an object"}},
        {"no dtype", file_of(one("\"shape\":[1],\"data_offsets\":[0,4]"), zeros(4)), {"tensor 'x'", "lacks 'dtype'"}},
        {"no shape", file_of(one("\"dtype\":\"F32\",\"data_offsets\":[0,4]"), zeros(4)), {"tensor 'x'", "lacks 'shape'"}},
        {"no offsets", file_of(one("\"dtype\":\"F32\",\"shape\":[1]"), zeros(4)), {"tensor 'x'", "lacks 'data_offsets'"}},
        {"unknown field", file_of(one(f32x + ",\"extra\":1"), zeros(4)), {"tensor 'x'", "unknown field 'extra'"}},
        {"field twice", file_of(one(f32x + ",\"dtype\":\"F32\""), zeros(4)), {"tensor 'x'", "'dtype' twice"}},
        {"dtype BF16", file_of(one("\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]"), zeros(4)),
         {"tensor 'x' has dtype BF16; only F32 is supported"}},
        {"dtype F64", file_of(one("\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]"), zeros(8)),
         {"tensor 'x' has dtype F64"}},
        {"dtype not a string", file_of(one("\"dtype\":32,\"shape\":[1],\"data_offsets\":[0,4]"), zeros(4)),
         {"tensor 'x'", "dtype", "not a string"}},
        {"shape not a list", file_of(one("\"dtype\":\"F32\",\"shape\":\"1\",\"data_offsets\":[0,4]"), zeros(4)),
         {"tensor 'x'", "shape", "not a list of non-negative integers"}},
        {"negative dimension", file_of(one("\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]"), zeros(4)),
         {"tensor 'x'", "non-negative integers"}},
        {"float dimension", file_of(one("\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]"), zeros(4)),
         {"tensor 'x'", "non-negative integers"}},
        {"exponent dimension", file_of(one("\"dtype\":\"F32\",\"shape\":[1e0],\"data_offsets\":[0,4]"), zeros(4)),
         {"tensor 'x'", "non-negative integers"}},
        {"null dimension", file_of(one("\"dtype\":\"F32\",\"shape\":[null],\"data_offsets\":[0,4]"), zeros(4)),
         {"tensor 'x'", "non-negative integers"}},
        {"element count overflows",
         file_of(one("\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]"), zeros(4)),
         {"tensor 'x'", "overflows"}},
        {"byte count overflows",
         file_of(one("\"dtype\":\"F32\",\"shape\":[4611686018427387904],\"data_offsets\":[0,4]"), zeros(4)),
         {"tensor 'x'", "overflows"}},
        {"one offset", file_of(one("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4]"), zeros(4)),
         {"tensor 'x'", "not two integers"}},
        {"three offsets", file_of(one("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]"), zeros(8)),
         {"tensor 'x'", "not two integers"}},
        {"offsets not integers", file_of(one("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4.0]"), zeros(4)),
         {"tensor 'x'", "not two integers"}},
        {"offsets not a list", file_of(one("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":{}"), zeros(4)),
         {"tensor 'x'", "not two integers"}},
        {"negative offsets", file_of(one("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]"), zeros(4)),
         {"tensor 'x'", "negative"}},
        {"begin after end", file_of(one("\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,4]"), zeros(8)),
         {"tensor 'x'", "begin after end"}},
        {"size does not match shape", file_of(one("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]"), zeros(4)),
         {"tensor 'x'", "needs 8"}},
        {"past the end of the data", file_of(one(f32x), zeros(2)), {"tensor 'x'", "past the end of the data"}},
        {"data left over", file_of(one(f32x), zeros(8)), {"end at byte 4", "8 bytes of data"}},
        {"data left over with no tensors", file_of("{}", zeros(4)), {"end at byte 0", "4 bytes of data"}},
        {"starts after 0",
         file_of(one("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]"), zeros(8)), {"tensor 'x'", "gap"}},
        {"gap between tensors",
         file_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                 "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
                 zeros(12)),
         {"tensor 'b'", "gap"}},
        {"overlapping tensors",
         file_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                 "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                 zeros(12)),
         {"tensor 'b'", "overlaps"}},
        {"the same bytes twice",
         file_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                 "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
                 zeros(4)),
         {"overlaps"}},
        {"empty tensor inside another",
         file_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                 "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]}}",
                 zeros(8)),
         {"tensor 'e'", "overlaps"}},
        {"duplicate names", file_of("{\"x\":{" + f32x + "},\"x\":{" + f32x + "}}", zeros(4)), {"duplicate name 'x'"}},
        {"metadata twice", file_of("{\"__metadata__\":{},\"__metadata__\":{}}"), {"duplicate name '__metadata__'"}},
        {"metadata not an object", file_of("{\"__metadata__\":[]}"), {"__metadata__ is a list", "not an object of strings"}},
        {"metadata value not a string", file_of("{\"__metadata__\":{\"step\":3}}"),
         {"metadata value of 'step'", "not a string"}},
        {"metadata value an object", file_of("{\"__metadata__\":{\"config\":{}}}"), {"metadata value of 'config'"}},
        {"duplicate metadata key", file_of("{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}}"), {"duplicate metadata key 'k'"}},
    };
    for (const Case& c : cases) {
        INFO("case: " << c.what);
        const std::string message = read_error(c.bytes);
        CHECK_THAT(message, Contains("safetensors"));
        for (const std::string& word : c.words) CHECK_THAT(message, Contains(word));
    }
}

TEST_CASE("safetensors: the JSON reader accepts the edge cases RFC 8259 allows", "[safetensors]") {
    // Nesting of exactly 64 inside metadata-free headers is fine (as a
    // rejected-by-meaning value, so the message is about the tensor, not depth).
    const std::string deep = "{\"x\":" + std::string(63, '[') + std::string(63, ']') + "}";
    CHECK_THAT(read_error(file_of(deep)), Contains("tensor 'x'") && Contains("not an object"));
    // Tabs, CR and LF between tokens; "-0" and large int64 values as integers.
    CHECK_THAT(read_error(file_of(one("\"dtype\":\"F32\",\t\"shape\":[-0],\r\n\"data_offsets\":[0,0]"))),
               Contains("no error"));
    CHECK_THAT(read_error(file_of(one("\"dtype\":\"F32\",\"shape\":[9223372036854775807,0],\"data_offsets\":[0,0]"))),
               Contains("no error"));
    CHECK_THAT(read_error(file_of(one("\"dtype\":\"F32\",\"shape\":[-9223372036854775808],\"data_offsets\":[0,0]"))),
               Contains("non-negative integers"));
    // Escaped NUL in a metadata value.
    const attn::SafeTensors f = attn::read_safetensors(file_of("{\"__metadata__\":{\"z\":\"a\\u0000b\"}}"));
    CHECK(f.metadata.at("z") == std::string("a\0b", 3));
}

TEST_CASE("safetensors: the writer rejects what the format cannot hold", "[safetensors]") {
    attn::SafeTensors bad_size;
    bad_size.tensors.push_back({"w", {2, 2}, {1, 2, 3}});
    CHECK_THAT(write_error(bad_size), Contains("'w'") && Contains("3 floats") && Contains("needs 4"));

    attn::SafeTensors dup;
    dup.tensors.push_back({"w", {1}, {1}});
    dup.tensors.push_back({"w", {1}, {2}});
    CHECK_THAT(write_error(dup), Contains("duplicate tensor name 'w'"));

    attn::SafeTensors empty_name;
    empty_name.tensors.push_back({"", {1}, {1}});
    CHECK_THAT(write_error(empty_name), Contains("empty name"));

    attn::SafeTensors reserved;
    reserved.tensors.push_back({"__metadata__", {1}, {1}});
    CHECK_THAT(write_error(reserved), Contains("__metadata__"));

    attn::SafeTensors negative;
    negative.tensors.push_back({"n", {-1}, {}});
    CHECK_THAT(write_error(negative), Contains("'n'") && Contains("negative"));

    attn::SafeTensors bad_utf8;
    bad_utf8.metadata["k"] = "\xFF";
    CHECK_THAT(write_error(bad_utf8), Contains("UTF-8"));
}

TEST_CASE("safetensors: random truncations and byte flips parse or throw attn::Error, never crash", "[safetensors]") {
    const std::string good = attn::write_safetensors(sample_file());
    std::uint64_t header = 0;
    for (int i = 0; i < 8; ++i) header |= static_cast<std::uint64_t>(static_cast<unsigned char>(good[i])) << (8 * i);
    std::mt19937 rng(2026);
    int parsed = 0, rejected = 0;
    for (int iteration = 0; iteration < 2000; ++iteration) {
        std::string bytes = good;
        const int kind = static_cast<int>(rng() % 3);  // 0 truncate, 1 flip, 2 both
        if (kind != 0) {
            const int flips = 1 + static_cast<int>(rng() % 4);
            for (int f = 0; f < flips; ++f) {
                // Mostly in the size field and the header, where the parsing is.
                const std::size_t span = (rng() % 5 != 0) ? static_cast<std::size_t>(8 + header) : bytes.size();
                const std::size_t at = rng() % span;
                if (rng() % 2) bytes[at] = static_cast<char>(rng() & 0xFF);
                else bytes[at] = static_cast<char>(bytes[at] ^ (1u << (rng() % 8)));
            }
        }
        if (kind != 1) bytes.resize(rng() % (bytes.size() + 1));
        try {
            const attn::SafeTensors f = attn::read_safetensors(bytes);
            ++parsed;
            for (const attn::Tensor& t : f.tensors) {
                std::size_t n = 1;
                for (auto d : t.shape) n *= static_cast<std::size_t>(d);
                CHECK(t.data.size() == n);
            }
        } catch (const attn::Error&) {
            ++rejected;
        }
    }
    CHECK(parsed + rejected == 2000);
    CHECK(rejected > 0);
    CHECK(parsed > 0);  // flips in the float data leave a valid file
}

// ---- half-precision entries: the Hub loader's header reader and conversions ------------

namespace {

/// binary16 from its fields by the formula (IEEE 754), independently of the reader.
double f16_by_formula(std::uint16_t h) {
    const int sign = h >> 15, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
    const double s = sign ? -1.0 : 1.0;
    if (exponent == 0) return s * std::ldexp(mantissa, -24);
    if (exponent == 31) return mantissa ? std::numeric_limits<double>::quiet_NaN() : s * HUGE_VAL;
    return s * std::ldexp(1024 + mantissa, exponent - 25);
}

/// bfloat16: 1 sign, 8 exponent, 7 mantissa bits, by the formula.
double bf16_by_formula(std::uint16_t h) {
    const int sign = h >> 15, exponent = (h >> 7) & 0xFF, mantissa = h & 0x7F;
    const double s = sign ? -1.0 : 1.0;
    if (exponent == 0) return s * std::ldexp(mantissa, -133);
    if (exponent == 255) return mantissa ? std::numeric_limits<double>::quiet_NaN() : s * HUGE_VAL;
    return s * std::ldexp(128 + mantissa, exponent - 134);
}

std::string header_error(const std::string& bytes) {
    try {
        attn::read_safetensors_header(bytes);
    } catch (const attn::Error& e) {
        CHECK(e.code() == attn::Error::Code::bad_checkpoint);
        return e.what();
    }
    return "<no error>";
}

}  // namespace

TEST_CASE("safetensors: every F16 and BF16 bit pattern converts exactly, subnormals, infinities and NaN included",
          "[safetensors]") {
    int nans = 0;
    for (std::uint32_t b = 0; b < 65536; ++b) {
        const auto h = static_cast<std::uint16_t>(b);
        for (int kind = 0; kind < 2; ++kind) {
            const float got = kind == 0 ? attn::f16_to_float(h) : attn::bf16_to_float(h);
            const double want = kind == 0 ? f16_by_formula(h) : bf16_by_formula(h);
            if (std::isnan(want)) {
                REQUIRE(std::isnan(got));
                ++nans;
                continue;
            }
            INFO((kind == 0 ? "F16 " : "BF16 ") << b);
            REQUIRE(static_cast<double>(got) == want);
            REQUIRE(std::signbit(got) == ((b >> 15) != 0));  // -0 stays -0
        }
    }
    CHECK(nans == 2 * 1023 + 2 * 127);  // F16: 2 signs × 1023 payloads; BF16: 2 × 127
}

TEST_CASE("safetensors: the header reader reads F16, BF16 and other dtypes from the header alone", "[safetensors]") {
    const std::string header =
        "{\"__metadata__\":{\"format\":\"pt\"},"
        "\"h\":{\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[0,12]},"
        "\"b\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[12,18]},"
        "\"ids\":{\"dtype\":\"I64\",\"shape\":[1,2],\"data_offsets\":[18,34]},"
        "\"m\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[34,36]},"
        "\"f\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[36,40]}}";
    const std::string first = le64(header.size()) + header;  // no data at all
    const attn::SafeTensorsIndex index = attn::read_safetensors_header(first);
    CHECK(index.data_start == first.size());
    CHECK(index.data_size == 40);
    REQUIRE(index.tensors.size() == 5);
    CHECK(index.find("h")->dtype == "F16");
    CHECK(index.find("h")->element_size == 2);
    CHECK(index.find("b")->dtype == "BF16");
    CHECK(index.find("ids")->element_size == 8);
    CHECK(index.find("m")->element_size == 1);
    CHECK(index.find("f")->dtype == "F32");
    CHECK(index.metadata.at("format") == "pt");
    // the same bytes with data after them: the header alone decides
    CHECK(attn::read_safetensors_header(first + zeros(40)).data_size == 40);
    // the F32 readers keep refusing them, by name
    CHECK_THAT(read_error(first + zeros(40)), Contains("tensor 'h' has dtype F16; only F32 is supported"));
}

TEST_CASE("safetensors: the header reader refuses what the format forbids, naming the tensor", "[safetensors]") {
    const auto one_file = [](const std::string& fields) { return le64(one(fields).size()) + one(fields); };
    CHECK_THAT(header_error(one_file("\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,12]")),
               Contains("tensor 'x' has 12 bytes of data_offsets but its shape needs 6 (2 per F16 element)"));
    CHECK_THAT(header_error(one_file("\"dtype\":\"Q4\",\"shape\":[3],\"data_offsets\":[0,3]")),
               Contains("tensor 'x' has dtype Q4, not a safetensors dtype"));
    CHECK_THAT(header_error(one_file("\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[2,6]")),
               Contains("leaving a gap"));
    CHECK_THAT(header_error(le64(100) + "{}"), Contains("runs past the end of the bytes given"));
    CHECK_THAT(header_error("1234567"), Contains("fewer than the 8"));
    CHECK_THAT(header_error(le64(std::uint64_t{1} << 40)), Contains("above the limit"));
}

TEST_CASE("safetensors: random corruptions of a Hub header parse or throw attn::Error, never crash", "[safetensors]") {
    const std::string header =
        "{\"a\":{\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[0,12]},"
        "\"b\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[12,18]},"
        "\"c\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[18,26]}}";
    const std::string file = le64(header.size()) + header;
    std::mt19937 rng(7);
    int parsed = 0;
    for (int trial = 0; trial < 4000; ++trial) {
        std::string bytes = file;
        const int flips = 1 + static_cast<int>(rng() % 3);
        for (int f = 0; f < flips; ++f) bytes[8 + rng() % header.size()] = static_cast<char>(rng() % 128);
        if (trial % 4 == 0) bytes.resize(rng() % bytes.size());
        try {
            const attn::SafeTensorsIndex index = attn::read_safetensors_header(bytes);
            ++parsed;
            std::uint64_t at = 0;  // what it accepts tiles the data
            for (const attn::TensorEntry& t : index.tensors) {
                REQUIRE(t.begin == at);
                at = t.end;
            }
            REQUIRE(at == index.data_size);
        } catch (const attn::Error&) {
        }
    }
    CHECK(parsed > 0);
}
