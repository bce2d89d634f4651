#include "base/json_value.hpp"

#include "base/utf8.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>
#include <unordered_set>

namespace attn {
namespace {

constexpr std::size_t kScanMembers = 16;

class Parser {
public:
    Parser(std::string_view text, const JsonOptions& options) : text_(text), o_(options) {}

    JsonValue document() {
        skip_space();
        JsonValue v = value(0);
        skip_space();
        if (!eof()) error("unexpected text after the JSON value");
        return v;
    }

private:
    std::string_view text_;
    const JsonOptions& o_;
    std::size_t pos_ = 0;
    std::vector<std::string> path_;  // keys of the objects being read

    bool eof() const { return pos_ >= text_.size(); }
    char peek() const { return text_[pos_]; }  // only when !eof()

    [[noreturn]] void error(const std::string& what) const {
        throw Error(o_.code, o_.prefix + "invalid " + o_.what + " at byte " + std::to_string(pos_) + ": " + what,
                    Error::Kind::type);
    }
    void skip_space() {
        while (!eof() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
    }
    void expect(char c) {
        if (eof()) error(std::string("expected '") + c + "', found the end");
        if (peek() != c) error(std::string("expected '") + c + "'");
        ++pos_;
    }
    void expect_word(const char* word) {
        const std::size_t n = std::strlen(word);
        if (text_.substr(pos_, n) != word) error("invalid literal");
        pos_ += n;
    }
    void enter(int depth) {
        if (depth >= o_.max_depth) error("nesting deeper than " + std::to_string(o_.max_depth));
    }

    JsonValue value(int depth) {
        if (eof()) error("expected a value, found the end");
        JsonValue v;
        const char c = peek();
        if (c == '{') {
            enter(depth);
            v.type = JsonValue::Type::object;
            std::unordered_set<std::string> keys;  // filled once the object has kScanMembers members
            ++pos_;
            skip_space();
            if (!eof() && peek() == '}') {
                ++pos_;
                return v;
            }
            for (;;) {
                skip_space();
                if (eof() || peek() != '"') error("expected a string key");
                const std::size_t key_at = pos_;
                std::string key = string_literal();
                skip_space();
                expect(':');
                skip_space();
                // duplicates: a scan of the few first members, a hash set beyond
                // (a tokenizer's vocabulary is one object of 50 000 keys)
                bool duplicate = false;
                if (v.object.size() < kScanMembers) {
                    for (const auto& member : v.object) duplicate = duplicate || member.first == key;
                } else {
                    if (keys.empty())
                        for (const auto& member : v.object) keys.insert(member.first);
                    duplicate = !keys.insert(key).second;
                }
                if (duplicate) {
                    if (o_.on_duplicate) o_.on_duplicate(path_, key);
                    pos_ = key_at;
                    error("duplicate key \"" + key + "\"");
                }
                path_.push_back(key);
                JsonValue member = value(depth + 1);
                path_.pop_back();
                v.object.emplace_back(std::move(key), std::move(member));
                skip_space();
                if (eof()) error("unterminated object");
                if (peek() == ',') {
                    ++pos_;
                    continue;
                }
                expect('}');
                return v;
            }
        }
        if (c == '[') {
            enter(depth);
            v.type = JsonValue::Type::array;
            ++pos_;
            skip_space();
            if (!eof() && peek() == ']') {
                ++pos_;
                return v;
            }
            for (;;) {
                skip_space();
                v.array.push_back(value(depth + 1));
                skip_space();
                if (eof()) error("unterminated list");
                if (peek() == ',') {
                    ++pos_;
                    continue;
                }
                expect(']');
                return v;
            }
        }
        if (c == '"') {
            v.type = JsonValue::Type::string;
            v.string = string_literal();
            return v;
        }
        if (c == 't') {
            expect_word("true");
            v.type = JsonValue::Type::boolean;
            v.boolean = true;
            return v;
        }
        if (c == 'f') {
            expect_word("false");
            v.type = JsonValue::Type::boolean;
            return v;
        }
        if (c == 'n') {
            expect_word("null");
            return v;
        }
        if (c == '-' || (c >= '0' && c <= '9')) return number();
        error(std::string("unexpected character '") + c + "'");
    }

    bool digit_here() const { return !eof() && peek() >= '0' && peek() <= '9'; }

    JsonValue number() {
        const std::size_t start = pos_;
        bool negative = false;
        if (peek() == '-') {
            negative = true;
            ++pos_;
        }
        if (!digit_here()) error("expected a digit");
        // the magnitude as unsigned; -9223372036854775808 is allowed
        const std::uint64_t limit =
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1u : 0u);
        std::uint64_t magnitude = 0;
        bool too_big = false;
        if (peek() == '0') {
            ++pos_;
            if (digit_here()) error("number with a leading zero");
        } else {
            while (digit_here()) {
                const std::uint64_t d = static_cast<std::uint64_t>(peek() - '0');
                if (magnitude > (limit - d) / 10) too_big = true;
                else magnitude = magnitude * 10 + d;
                ++pos_;
            }
        }
        bool real = false;
        if (!eof() && peek() == '.') {
            real = true;
            ++pos_;
            if (!digit_here()) error("expected a digit after '.'");
            while (digit_here()) ++pos_;
        }
        if (!eof() && (peek() == 'e' || peek() == 'E')) {
            real = true;
            ++pos_;
            if (!eof() && (peek() == '+' || peek() == '-')) ++pos_;
            if (!digit_here()) error("expected a digit in the exponent");
            while (digit_here()) ++pos_;
        }
        JsonValue v;
        v.type = JsonValue::Type::number;
        if (!real && too_big && o_.exact_integers) {
            pos_ = start;
            error("integer beyond the 64-bit range");
        }
        if (!real && !too_big) {
            v.is_integer = true;
            if (!negative) v.integer = static_cast<std::int64_t>(magnitude);
            else if (magnitude == limit) v.integer = std::numeric_limits<std::int64_t>::min();
            else v.integer = -static_cast<std::int64_t>(magnitude);
        }
        v.number = std::strtod(std::string(text_.substr(start, pos_ - start)).c_str(), nullptr);
        if (!std::isfinite(v.number)) {
            pos_ = start;
            error("number out of range");
        }
        return v;
    }

    unsigned hex4() {
        if (text_.size() - pos_ < 4) error("truncated \\u escape");
        unsigned value = 0;
        for (int i = 0; i < 4; ++i) {
            const char h = text_[pos_ + static_cast<std::size_t>(i)];
            unsigned d;
            if (h >= '0' && h <= '9') d = static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') d = static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') d = static_cast<unsigned>(h - 'A' + 10);
            else error("invalid hex digit in \\u escape");
            value = value * 16 + d;
        }
        pos_ += 4;
        return value;
    }

    static void put_utf8(std::string& out, char32_t cp) {
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
        const std::size_t start = pos_;
        ++pos_;  // the opening quote
        std::string out;
        for (;;) {
            if (eof()) error("unterminated string");
            const unsigned char c = static_cast<unsigned char>(peek());
            if (c == '"') {
                ++pos_;
                break;
            }
            if (c < 0x20) error("control character in a string (must be escaped)");
            if (c != '\\') {
                out += static_cast<char>(c);
                ++pos_;
                continue;
            }
            ++pos_;
            if (eof()) error("unterminated escape");
            const char e = peek();
            ++pos_;
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
                    if (cp >= 0xDC00 && cp <= 0xDFFF) error("unpaired low surrogate in \\u escape");
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        if (text_.size() - pos_ < 2 || text_[pos_] != '\\' || text_[pos_ + 1] != 'u')
                            error("unpaired high surrogate in \\u escape");
                        pos_ += 2;
                        const char32_t low = hex4();
                        if (low < 0xDC00 || low > 0xDFFF) error("unpaired high surrogate in \\u escape");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    }
                    put_utf8(out, cp);
                    break;
                }
                default: --pos_; error("invalid escape");
            }
        }
        try {
            decode_utf8(out);  // raw bytes of the string must be valid UTF-8
        } catch (const Error&) {
            pos_ = start;
            error("a string that is not valid UTF-8");
        }
        return out;
    }
};

}  // namespace

const JsonValue* JsonValue::get(const std::string& key) const {
    if (type != Type::object) return nullptr;
    for (const auto& member : object)
        if (member.first == key) return &member.second;
    return nullptr;
}

JsonValue parse_json(const std::string& text, const JsonOptions& options) { return Parser(text, options).document(); }

JsonValue parse_json(const std::string& text, int max_depth) {
    JsonOptions o;
    o.max_depth = max_depth;
    return parse_json(text, o);
}

}  // namespace attn
