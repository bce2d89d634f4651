#include "json_value.hpp"

#include "tokenizer.hpp"
#include "types.hpp"

#include <cmath>
#include <cstdlib>

namespace attn {
namespace {

class Parser {
public:
    Parser(const std::string& text, int max_depth) : s_(text), max_depth_(max_depth) {}

    JsonValue document() {
        JsonValue v = value(0);
        skip_space();
        if (i_ != s_.size()) fail("unexpected text after the JSON value");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw Error("invalid JSON at byte " + std::to_string(i_) + ": " + what, Error::Kind::type);
    }
    void skip_space() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
    }
    bool literal(const char* word) {
        std::size_t n = 0;
        while (word[n]) ++n;
        if (s_.compare(i_, n, word) != 0) return false;
        i_ += n;
        return true;
    }
    JsonValue value(int depth) {
        if (depth > max_depth_) fail("nesting deeper than " + std::to_string(max_depth_));
        skip_space();
        if (i_ >= s_.size()) fail("unexpected end");
        JsonValue v;
        const char c = s_[i_];
        if (c == '{') {
            v.type = JsonValue::Type::object;
            ++i_;
            skip_space();
            if (i_ < s_.size() && s_[i_] == '}') {
                ++i_;
                return v;
            }
            for (;;) {
                skip_space();
                if (i_ >= s_.size() || s_[i_] != '"') fail("expected a string key");
                std::string key = string_literal();
                skip_space();
                if (i_ >= s_.size() || s_[i_] != ':') fail("expected ':'");
                ++i_;
                if (v.object.count(key)) fail("duplicate key \"" + key + "\"");
                v.object.emplace(std::move(key), value(depth + 1));
                skip_space();
                if (i_ < s_.size() && s_[i_] == ',') {
                    ++i_;
                    continue;
                }
                if (i_ < s_.size() && s_[i_] == '}') {
                    ++i_;
                    return v;
                }
                fail("expected ',' or '}'");
            }
        }
        if (c == '[') {
            v.type = JsonValue::Type::array;
            ++i_;
            skip_space();
            if (i_ < s_.size() && s_[i_] == ']') {
                ++i_;
                return v;
            }
            for (;;) {
                v.array.push_back(value(depth + 1));
                skip_space();
                if (i_ < s_.size() && s_[i_] == ',') {
                    ++i_;
                    continue;
                }
                if (i_ < s_.size() && s_[i_] == ']') {
                    ++i_;
                    return v;
                }
                fail("expected ',' or ']'");
            }
        }
        if (c == '"') {
            v.type = JsonValue::Type::string;
            v.string = string_literal();
            return v;
        }
        if (literal("true")) {
            v.type = JsonValue::Type::boolean;
            v.boolean = true;
            return v;
        }
        if (literal("false")) {
            v.type = JsonValue::Type::boolean;
            return v;
        }
        if (literal("null")) return v;
        if (c == '-' || (c >= '0' && c <= '9')) {
            v.type = JsonValue::Type::number;
            v.number = number();
            return v;
        }
        fail(std::string("unexpected character '") + c + "'");
    }
    double number() {
        const std::size_t start = i_;
        if (s_[i_] == '-') ++i_;
        if (i_ >= s_.size() || !(s_[i_] >= '0' && s_[i_] <= '9')) fail("malformed number");
        if (s_[i_] == '0' && i_ + 1 < s_.size() && s_[i_ + 1] >= '0' && s_[i_ + 1] <= '9') fail("leading zero");
        while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
        if (i_ < s_.size() && s_[i_] == '.') {
            ++i_;
            if (i_ >= s_.size() || !(s_[i_] >= '0' && s_[i_] <= '9')) fail("malformed number");
            while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
        }
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
            ++i_;
            if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
            if (i_ >= s_.size() || !(s_[i_] >= '0' && s_[i_] <= '9')) fail("malformed number");
            while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
        }
        const double d = std::strtod(s_.substr(start, i_ - start).c_str(), nullptr);
        if (!std::isfinite(d)) fail("number out of range");
        return d;
    }
    unsigned hex4() {
        if (i_ + 4 > s_.size()) fail("truncated \\u escape");
        unsigned u = 0;
        for (int k = 0; k < 4; ++k) {
            const char h = s_[i_++];
            u <<= 4;
            if (h >= '0' && h <= '9') u |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') u |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') u |= static_cast<unsigned>(h - 'A' + 10);
            else fail("bad hex digit in \\u escape");
        }
        return u;
    }
    void append_utf8(std::string& out, char32_t cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }
    std::string string_literal() {
        ++i_;  // opening quote
        std::string out;
        for (;;) {
            if (i_ >= s_.size()) fail("unterminated string");
            const unsigned char c = static_cast<unsigned char>(s_[i_]);
            if (c == '"') {
                ++i_;
                break;
            }
            if (c < 0x20) fail("control character in a string");
            if (c != '\\') {
                out += static_cast<char>(c);
                ++i_;
                continue;
            }
            ++i_;
            if (i_ >= s_.size()) fail("unterminated escape");
            const char e = s_[i_++];
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    char32_t cp = hex4();
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        if (i_ + 2 > s_.size() || s_[i_] != '\\' || s_[i_ + 1] != 'u') fail("unpaired surrogate");
                        i_ += 2;
                        const unsigned lo = hex4();
                        if (lo < 0xDC00 || lo > 0xDFFF) fail("unpaired surrogate");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                        fail("unpaired surrogate");
                    }
                    append_utf8(out, cp);
                    break;
                }
                default: fail(std::string("bad escape \\") + e);
            }
        }
        decode_utf8(out);  // throws for invalid UTF-8 inside the string
        return out;
    }

    const std::string& s_;
    int max_depth_;
    std::size_t i_ = 0;
};

}  // namespace

const JsonValue* JsonValue::get(const std::string& key) const {
    if (type != Type::object) return nullptr;
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &it->second;
}

JsonValue parse_json(const std::string& text, int max_depth) { return Parser(text, max_depth).document(); }

}  // namespace attn
