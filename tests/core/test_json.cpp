// Tests of src/attention/json.hpp. A small strict JSON parser below checks that the
// output is well-formed JSON and that the numbers round-trip.

#include "attention/json.hpp"
#include "attention/trace.hpp"
#include "base/types.hpp"

#include <catch2/catch.hpp>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// ---- a minimal strict JSON parser (RFC 8259), for the tests only ---------------------

struct Json {
    enum class Type { null, boolean, number, string, array, object } type = Type::null;
    bool b = false;
    double num = 0;
    std::string str;
    std::vector<Json> arr;
    std::map<std::string, Json> obj;

    const Json& at(const std::string& key) const {
        auto it = obj.find(key);
        if (type != Type::object || it == obj.end()) throw std::runtime_error("missing key " + key);
        return it->second;
    }
    bool has(const std::string& key) const { return type == Type::object && obj.count(key) > 0; }
};

class Parser {
public:
    explicit Parser(const std::string& text) : s_(text) {}

    Json parse() {
        Json v = value();
        ws();
        if (i_ != s_.size()) fail("trailing characters");
        return v;
    }

private:
    const std::string& s_;
    std::size_t i_ = 0;

    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error("JSON error at byte " + std::to_string(i_) + ": " + what);
    }
    void ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
    }
    char peek() {
        if (i_ >= s_.size()) fail("unexpected end");
        return s_[i_];
    }
    void expect(const char* word) {
        for (const char* p = word; *p; ++p) {
            if (i_ >= s_.size() || s_[i_] != *p) fail(std::string("expected ") + word);
            ++i_;
        }
    }
    Json value() {
        ws();
        Json v;
        const char c = peek();
        if (c == '{') {
            v.type = Json::Type::object;
            ++i_;
            ws();
            if (peek() == '}') {
                ++i_;
                return v;
            }
            for (;;) {
                ws();
                if (peek() != '"') fail("expected a key");
                const std::string key = string();
                ws();
                if (peek() != ':') fail("expected ':'");
                ++i_;
                if (v.obj.count(key)) fail("duplicate key " + key);
                v.obj[key] = value();
                ws();
                if (peek() == ',') {
                    ++i_;
                    continue;
                }
                if (peek() == '}') {
                    ++i_;
                    return v;
                }
                fail("expected ',' or '}'");
            }
        }
        if (c == '[') {
            v.type = Json::Type::array;
            ++i_;
            ws();
            if (peek() == ']') {
                ++i_;
                return v;
            }
            for (;;) {
                v.arr.push_back(value());
                ws();
                if (peek() == ',') {
                    ++i_;
                    continue;
                }
                if (peek() == ']') {
                    ++i_;
                    return v;
                }
                fail("expected ',' or ']'");
            }
        }
        if (c == '"') {
            v.type = Json::Type::string;
            v.str = string();
            return v;
        }
        if (c == 't') {
            expect("true");
            v.type = Json::Type::boolean;
            v.b = true;
            return v;
        }
        if (c == 'f') {
            expect("false");
            v.type = Json::Type::boolean;
            return v;
        }
        if (c == 'n') {
            expect("null");
            return v;
        }
        v.type = Json::Type::number;
        v.num = number();
        return v;
    }
    double number() {
        const std::size_t start = i_;
        if (peek() == '-') ++i_;
        if (i_ < s_.size() && s_[i_] == '0') {
            ++i_;
        } else {
            if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) fail("bad number");
            while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
        }
        if (i_ < s_.size() && s_[i_] == '.') {
            ++i_;
            if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) fail("bad fraction");
            while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
        }
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
            ++i_;
            if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
            if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) fail("bad exponent");
            while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
        }
        return std::strtod(s_.substr(start, i_ - start).c_str(), nullptr);
    }
    static void append_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
            out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
            out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
    }
    unsigned hex4() {
        if (i_ + 4 > s_.size()) fail("short \\u escape");
        unsigned v = 0;
        for (int k = 0; k < 4; ++k) {
            const char h = s_[i_++];
            v <<= 4;
            if (h >= '0' && h <= '9') v |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') v |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') v |= static_cast<unsigned>(h - 'A' + 10);
            else fail("bad hex digit");
        }
        return v;
    }
    std::string string() {
        ++i_;  // opening quote
        std::string out;
        for (;;) {
            if (i_ >= s_.size()) fail("unterminated string");
            const unsigned char c = static_cast<unsigned char>(s_[i_++]);
            if (c == '"') return out;
            if (c < 0x20) fail("unescaped control character");
            if (c != '\\') {
                out.push_back(static_cast<char>(c));
                continue;
            }
            if (i_ >= s_.size()) fail("unterminated escape");
            const char e = s_[i_++];
            switch (e) {
                case '"': out.push_back('"'); break;
                case '\\': out.push_back('\\'); break;
                case '/': out.push_back('/'); break;
                case 'b': out.push_back('\b'); break;
                case 'f': out.push_back('\f'); break;
                case 'n': out.push_back('\n'); break;
                case 'r': out.push_back('\r'); break;
                case 't': out.push_back('\t'); break;
                case 'u': {
                    unsigned cp = hex4();
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        expect("\\u");
                        const unsigned lo = hex4();
                        if (lo < 0xDC00 || lo > 0xDFFF) fail("bad surrogate pair");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    }
                    append_utf8(out, cp);
                    break;
                }
                default: fail("bad escape");
            }
        }
    }
};

Json parse(const std::string& text) { return Parser(text).parse(); }

/// A JSON array of `rows` arrays of `cols` numbers equal to m after rounding to float.
void check_matrix(const Json& j, const attn::Matrix& m, const std::string& name) {
    INFO("matrix " << name);
    REQUIRE(j.type == Json::Type::array);
    REQUIRE(j.arr.size() == static_cast<std::size_t>(m.rows()));
    for (int i = 0; i < m.rows(); ++i) {
        const Json& row = j.arr[i];
        REQUIRE(row.type == Json::Type::array);
        REQUIRE(row.arr.size() == static_cast<std::size_t>(m.cols()));
        for (int k = 0; k < m.cols(); ++k) {
            REQUIRE(row.arr[k].type == Json::Type::number);
            // 9 significant digits round-trip a float exactly.
            if (static_cast<float>(row.arr[k].num) != m(i, k)) {
                INFO("entry " << i << "," << k << ": json " << row.arr[k].num << " vs " << m(i, k));
                CHECK(static_cast<float>(row.arr[k].num) == m(i, k));
                return;
            }
        }
    }
}

attn::Trace sample_trace() {
    attn::Config c;
    c.d_model = 6;
    c.heads = 2;
    c.seed = 3;
    c.mask = attn::MaskKind::causal_padding;
    c.pad_to = 8;  // 6 tokens + 2 [PAD]
    return attn::run("Caf\xC3\xA9 \"quoted\" \\ ok", c);
}

}  // namespace

TEST_CASE("json parser used by these tests accepts and rejects as expected", "[json]") {
    CHECK(parse("{\"a\": [1, -2.5e3, true, null, \"x\\u00e9\"]}").at("a").arr.size() == 5);
    CHECK(parse("\"\\u00e9\"").str == "\xC3\xA9");
    CHECK_THROWS(parse("[1, 2,]"));
    CHECK_THROWS(parse("{\"a\": NaN}"));
    CHECK_THROWS(parse("[inf]"));
    CHECK_THROWS(parse("\"a\nb\""));
    CHECK_THROWS(parse("[1] x"));
}

TEST_CASE("trace_to_json: contains every documented key", "[json]") {
    const std::string j = attn::trace_to_json(sample_trace());
    for (const char* key : {"config", "tokens", "embeddings", "positional", "input", "w_query", "w_key",
                            "w_value", "w_output", "mask", "heads", "concat", "output", "scores", "scaled",
                            "weights"}) {
        INFO("key " << key);
        CHECK(j.find(std::string("\"") + key + "\"") != std::string::npos);
    }
}

TEST_CASE("trace_to_json: is valid JSON whose matrices round-trip the trace", "[json]") {
    const attn::Trace tr = sample_trace();
    const std::string text = attn::trace_to_json(tr);
    Json j;
    try {
        j = parse(text);
    } catch (const std::exception& e) {
        INFO(e.what());
        INFO(text.substr(0, 2000));
        FAIL("trace_to_json output is not valid JSON");
    }
    REQUIRE(j.type == Json::Type::object);
    CHECK(j.at("config").type == Json::Type::object);
    const Json& tokens = j.at("tokens");
    REQUIRE(tokens.type == Json::Type::array);
    CHECK(tokens.arr.size() == tr.tokens.size());
    check_matrix(j.at("embeddings"), tr.embeddings, "embeddings");
    check_matrix(j.at("positional"), tr.positional, "positional");
    check_matrix(j.at("input"), tr.input, "input");
    check_matrix(j.at("w_query"), tr.weights.w_query, "w_query");
    check_matrix(j.at("w_key"), tr.weights.w_key, "w_key");
    check_matrix(j.at("w_value"), tr.weights.w_value, "w_value");
    check_matrix(j.at("w_output"), tr.weights.w_output, "w_output");
    check_matrix(j.at("concat"), tr.concat, "concat");
    check_matrix(j.at("output"), tr.output, "output");
    const Json& mask = j.at("mask");
    REQUIRE(mask.type == Json::Type::array);
    REQUIRE(mask.arr.size() == tr.tokens.size());
    for (const Json& row : mask.arr) {
        REQUIRE(row.type == Json::Type::array);
        CHECK(row.arr.size() == tr.tokens.size());
    }
    const Json& heads = j.at("heads");
    REQUIRE(heads.type == Json::Type::array);
    REQUIRE(heads.arr.size() == tr.heads.size());
    for (std::size_t h = 0; h < tr.heads.size(); ++h) {
        INFO("head " << h);
        check_matrix(heads.arr[h].at("scores"), tr.heads[h].scores, "scores");
        check_matrix(heads.arr[h].at("scaled"), tr.heads[h].scaled, "scaled");
        check_matrix(heads.arr[h].at("weights"), tr.heads[h].weights, "weights");
    }
}

TEST_CASE("trace_to_json: token texts with quotes, backslashes and UTF-8 survive", "[json]") {
    const attn::Trace tr = sample_trace();
    const std::string text = attn::trace_to_json(tr);
    // The sentence's tokens: Café, ", quoted, ", \, ok, then [PAD]s.
    CHECK(text.find("\"Caf\xC3\xA9\"") != std::string::npos);
    CHECK(text.find("\"\\\"\"") != std::string::npos);   // the token " as "\""
    CHECK(text.find("\"\\\\\"") != std::string::npos);   // the token \ as "\\"
    CHECK(text.find("\"[PAD]\"") != std::string::npos);
    Json j = parse(text);
    const Json& tokens = j.at("tokens");
    REQUIRE(tokens.arr.size() == tr.tokens.size());
    // Each token's text appears among its strings (as an object field or the element itself).
    for (std::size_t k = 0; k < tr.tokens.size(); ++k) {
        const Json& t = tokens.arr[k];
        bool found = t.type == Json::Type::string && t.str == tr.tokens[k].text;
        for (const auto& kv : t.obj)
            if (kv.second.type == Json::Type::string && kv.second.str == tr.tokens[k].text) found = true;
        INFO("token " << k << " " << tr.tokens[k].text);
        CHECK(found);
    }
}

TEST_CASE("json_quote: escapes quotes, backslashes and control characters", "[json]") {
    CHECK(attn::json_quote("") == "\"\"");
    CHECK(attn::json_quote("plain") == "\"plain\"");
    CHECK(attn::json_quote("a\"b") == "\"a\\\"b\"");
    CHECK(attn::json_quote("a\\b") == "\"a\\\\b\"");
    CHECK(attn::json_quote("line\nnext") == "\"line\\nnext\"");
    CHECK(attn::json_quote(std::string("\x01", 1)) == "\"\\u0001\"");
    CHECK(attn::json_quote(std::string("a\0b", 3)) == "\"a\\u0000b\"");
    // Tab, carriage return and 0x1F: any valid escape, checked by parsing back.
    const std::string controls = std::string("\t\r\b\f\x1f", 5);
    const std::string quoted = attn::json_quote(controls);
    for (char c : quoted.substr(1, quoted.size() - 2)) CHECK(static_cast<unsigned char>(c) >= 0x20);
    CHECK(parse(quoted).str == controls);
}

TEST_CASE("json_quote: keeps UTF-8 bytes as they are", "[json]") {
    const std::string text = "caf\xC3\xA9 \xE7\x8C\xAB \xF0\x9F\x90\x88\xE2\x80\x8D\xE2\xAC\x9B";
    CHECK(attn::json_quote(text) == "\"" + text + "\"");
    // Every byte string round-trips through a JSON parser.
    const std::string mixed = "q\"b\\s/\n\x02\xC3\xA9";
    CHECK(parse(attn::json_quote(mixed)).str == mixed);
}

TEST_CASE("json writers: a NaN or an infinity is refused (not_finite), never written as nan or inf", "[json]") {
    // JSON has neither: printf's "nan" and "inf" made the CLI's output invalid
    for (const float bad : {std::nanf(""), INFINITY, -INFINITY}) {
        std::string out;
        try {
            attn::json_put_float(out, bad);
            FAIL("written: " << out);
        } catch (const attn::Error& e) {
            CHECK(e.code() == attn::Error::Code::not_finite);
        }
        attn::Matrix m = attn::Matrix::Zero(2, 3);
        m(1, 2) = bad;
        try {
            attn::json_put_matrix(out, m);
            FAIL("written: " << out);
        } catch (const attn::Error& e) {
            CHECK(e.code() == attn::Error::Code::not_finite);
        }
        CHECK(out.find("nan") == std::string::npos);
        CHECK(out.find("inf") == std::string::npos);
    }
    std::string ok;
    attn::json_put_float(ok, 3.5f);
    CHECK(ok == "3.5");
}
