#include "base/json_value.hpp"

#include "base/utf8.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>
#include <unordered_set>

namespace attn {
namespace {

constexpr std::size_t kScanMembers = 16;

/// What a document's values take in memory, counted by the first pass (Parser::Mode::count).
struct Footprint {
    std::uint64_t values = 1;   ///< the root and every list element (a JsonValue each)
    std::uint64_t members = 0;  ///< object members (a key and a JsonValue each)
    std::uint64_t heap = 0;     ///< strings longer than the in-place buffer, and the lists' and objects' blocks

    std::uint64_t bytes() const {
        return values * sizeof(JsonValue) + members * sizeof(std::pair<std::string, JsonValue>) + heap;
    }
};

/// Bytes a heap block costs beyond its contents (the allocator's header and rounding).
constexpr std::uint64_t kBlockOverhead = 16;
/// Bytes per member of a large object's duplicate check while it is built (a hash set of
/// views: the view, its node and its bucket).
constexpr std::uint64_t kKeySetBytesPerMember = 48;

// The parser runs twice over a text (parse_json): Mode::count checks the syntax and counts
// what the values would take (a Footprint) and each list's and object's length, building
// nothing; Mode::build builds the values, each list and object reserved at the length the
// first pass counted (growing by doubling would hold up to three times a long list at once).
// Duplicate keys are found by the second pass.
class Parser {
public:
    enum class Mode { count, build };

    Parser(std::string_view text, const JsonOptions& options) : text_(text), o_(options) {}

    /// Counts the document (Mode::count): its footprint, and the lengths build() reserves.
    Footprint count() {
        mode_ = Mode::count;
        footprint_ = Footprint{};
        lengths_.clear();
        document();
        footprint_.heap += lengths_.capacity() * sizeof(std::uint32_t);  // held until the build ends
        return footprint_;
    }

    /// Builds the document (Mode::build), after count().
    JsonValue build() {
        mode_ = Mode::build;
        next_length_ = 0;
        return document();
    }

private:
    std::string_view text_;
    const JsonOptions& o_;
    std::size_t pos_ = 0;
    std::vector<std::string> path_;  // keys of the objects being read
    Mode mode_ = Mode::count;
    Footprint footprint_;
    std::vector<std::uint32_t> lengths_;  // each list's and object's length, in the order they open
    std::size_t next_length_ = 0;
    std::string scratch_;                 // Mode::count's strings, one at a time

    bool counting() const { return mode_ == Mode::count; }

    JsonValue document() {
        pos_ = 0;
        // a UTF-8 byte order mark (RFC 8259 §8.1 lets a reader ignore it)
        if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
        skip_space();
        JsonValue v = value(0);
        skip_space();
        if (!eof()) error("unexpected text after the JSON value");
        return v;
    }

    /// Mode::count: a list or object opens; returns its slot in lengths_.
    std::size_t open_container() {
        lengths_.push_back(0);
        return lengths_.size() - 1;
    }
    /// Mode::count: the list or object of `slot` closes with `n` elements (counted in the
    /// footprint's values or members; its block's overhead here).
    void close_container(std::size_t slot, std::uint64_t n) {
        lengths_[slot] = static_cast<std::uint32_t>(n);  // (n is below the text's size, which is below 4 GiB)
        if (n > 0) footprint_.heap += kBlockOverhead;
    }
    /// Mode::build: the length count() found for the next list or object.
    std::size_t next_length() { return next_length_ < lengths_.size() ? lengths_[next_length_++] : 0; }

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

    /// The object at pos_ ('{'). Duplicate keys: a scan of the few first members, a hash set
    /// beyond (a tokenizer's vocabulary is one object of 50 000 keys) of views of the stored
    /// keys (the members are reserved whole, so they never move).
    JsonValue object(int depth) {
        enter(depth);
        JsonValue v;
        v.type = JsonValue::Type::object;
        const std::size_t slot = counting() ? open_container() : 0;
        if (!counting()) v.object.reserve(next_length());
        std::unordered_set<std::string_view> keys;  // filled once the object has kScanMembers members
        std::uint64_t n = 0;
        ++pos_;
        skip_space();
        if (!eof() && peek() == '}') {
            ++pos_;
            if (counting()) close_container(slot, 0);
            return v;
        }
        for (;;) {
            skip_space();
            if (eof() || peek() != '"') error("expected a string key");
            const std::size_t key_at = pos_;
            if (counting()) {
                string_literal(scratch_);
                skip_space();
                expect(':');
                skip_space();
                value(depth + 1);
                ++n;
            } else {
                std::string key;
                string_literal(key);
                skip_space();
                expect(':');
                skip_space();
                bool duplicate = false;
                if (v.object.size() < kScanMembers) {
                    for (const auto& member : v.object) duplicate = duplicate || member.first == key;
                } else {
                    if (keys.empty())
                        for (const auto& member : v.object) keys.insert(member.first);
                    duplicate = keys.count(key) > 0;
                }
                if (duplicate) {
                    if (o_.on_duplicate) o_.on_duplicate(path_, key);
                    pos_ = key_at;
                    error("duplicate key \"" + key + "\"");
                }
                path_.push_back(key);
                JsonValue member = value(depth + 1);
                path_.pop_back();
                if (v.object.size() == v.object.capacity()) keys.clear();  // (never: reserved) the views would move
                v.object.emplace_back(std::move(key), std::move(member));
                if (!keys.empty()) keys.insert(v.object.back().first);
            }
            skip_space();
            if (eof()) error("unterminated object");
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            expect('}');
            if (counting()) {
                footprint_.members += n;
                if (n > kScanMembers) footprint_.heap += n * kKeySetBytesPerMember;
                close_container(slot, n);
            }
            return v;
        }
    }

    /// The list at pos_ ('[').
    JsonValue array(int depth) {
        enter(depth);
        JsonValue v;
        v.type = JsonValue::Type::array;
        const std::size_t slot = counting() ? open_container() : 0;
        if (!counting()) v.array.reserve(next_length());
        std::uint64_t n = 0;
        ++pos_;
        skip_space();
        if (!eof() && peek() == ']') {
            ++pos_;
            if (counting()) close_container(slot, 0);
            return v;
        }
        for (;;) {
            skip_space();
            if (counting()) {
                value(depth + 1);
                ++n;
            } else {
                v.array.push_back(value(depth + 1));
            }
            skip_space();
            if (eof()) error("unterminated list");
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            expect(']');
            if (counting()) {
                footprint_.values += n;
                close_container(slot, n);
            }
            return v;
        }
    }

    JsonValue value(int depth) {
        if (eof()) error("expected a value, found the end");
        const char c = peek();
        if (c == '{') return object(depth);
        if (c == '[') return array(depth);
        JsonValue v;
        if (c == '"') {
            v.type = JsonValue::Type::string;
            string_literal(counting() ? scratch_ : v.string);
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

    /// The string literal at pos_ into `out` (replacing what it held). Mode::count adds its
    /// heap block, if it has one, to the footprint (keys too: the key of a member is a std::string).
    void string_literal(std::string& out) {
        const std::size_t start = pos_;
        ++pos_;  // the opening quote
        out.clear();
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
        // raw bytes of the string must be valid UTF-8 (ASCII is)
        const bool ascii = std::all_of(out.begin(), out.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
        if (!ascii) {
            try {
                decode_utf8(out);
            } catch (const Error&) {
                pos_ = start;
                error("a string that is not valid UTF-8");
            }
        }
        if (counting() && out.size() >= kInPlaceChars) footprint_.heap += out.size() + 1 + kBlockOverhead;
    }

    /// The characters a std::string holds without a heap block (libstdc++ 15, libc++ 22 on
    /// 64-bit, 10 on 32-bit: the smallest, so that the footprint is not below the truth).
    static constexpr std::size_t kInPlaceChars = 10;
};

}  // namespace

const JsonValue* JsonValue::get(const std::string& key) const {
    if (type != Type::object) return nullptr;
    for (const auto& member : object)
        if (member.first == key) return &member.second;
    return nullptr;
}

JsonValue parse_json(const std::string& text, const JsonOptions& options) {
    Parser parser(text, options);
    const Footprint f = parser.count();
    const std::uint64_t limit = std::max<std::uint64_t>(kJsonMemoryFloor, std::uint64_t{kJsonMemoryPerByte} * text.size());
    if (f.bytes() > limit) {
        const auto mb = [](std::uint64_t b) { return std::to_string((b + (1u << 20) - 1) >> 20) + " MiB"; };
        throw Error(options.code, options.prefix + "this " + options.what + " text of " + std::to_string(text.size()) +
                                      " bytes holds " + std::to_string(f.values + f.members) + " values, which would take " +
                                      mb(f.bytes()) + " of memory, more than " + std::to_string(kJsonMemoryPerByte) +
                                      " times its size (" + mb(limit) + "): it is not a file this engine reads");
    }
    return parser.build();
}

JsonValue parse_json(const std::string& text, int max_depth) {
    JsonOptions o;
    o.max_depth = max_depth;
    return parse_json(text, o);
}

}  // namespace attn
