#include "safetensors.hpp"

#include "json.hpp"
#include "tokenizer.hpp"
#include "types.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <string_view>
#include <utility>

namespace attn {
namespace {

[[noreturn]] void fail(const std::string& message) {
    // Malformed files are malformed input: a TypeError on the JS side.
    throw Error(Error::Code::bad_checkpoint, "safetensors: " + message, Error::Kind::type);
}

std::string quoted(const std::string& name) { return "'" + name + "'"; }

// ---- a small strict JSON parser (RFC 8259) -----------------------------------
// The header is untrusted: every access is bounds-checked, nesting is limited,
// integers must fit int64. Non-integer numbers, true, false and null parse (so
// that the error can say "shape must be integers" rather than "bad JSON") but
// are rejected wherever the format needs something else.

struct HeaderJson {
    enum class Type { null, boolean, integer, real, string, array, object };
    Type type = Type::null;
    std::int64_t integer = 0;
    std::string text;  ///< string value, or the literal of a real number
    std::vector<HeaderJson> items;
    std::vector<std::pair<std::string, HeaderJson>> members;  ///< in file order
};

const char* type_name(HeaderJson::Type type) {
    switch (type) {
        case HeaderJson::Type::null: return "null";
        case HeaderJson::Type::boolean: return "a boolean";
        case HeaderJson::Type::integer: return "an integer";
        case HeaderJson::Type::real: return "a non-integer number";
        case HeaderJson::Type::string: return "a string";
        case HeaderJson::Type::array: return "a list";
        case HeaderJson::Type::object: return "an object";
    }
    return "?";
}

constexpr int kMaxJsonDepth = 64;

class HeaderParser {
public:
    explicit HeaderParser(std::string_view text) : text_(text) {}

    /// The whole text as one value, whitespace (the header's space padding) around it.
    HeaderJson parse_document() {
        skip_space();
        HeaderJson value = parse_value(0);
        skip_space();
        if (!eof()) error("unexpected text after the JSON value");
        return value;
    }

private:
    std::string_view text_;
    std::size_t pos_ = 0;

    bool eof() const { return pos_ >= text_.size(); }
    char peek() const { return text_[pos_]; }  // only when !eof()

    [[noreturn]] void error(const std::string& what) const {
        fail("invalid JSON header at byte " + std::to_string(pos_) + ": " + what);
    }

    void skip_space() {
        while (!eof() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
    }

    void expect(char c) {
        if (eof()) error(std::string("expected '") + c + "', found the end of the header");
        if (peek() != c) error(std::string("expected '") + c + "'");
        ++pos_;
    }

    void expect_word(const char* word) {
        const std::size_t n = std::strlen(word);
        if (text_.substr(pos_, n) != word) error("invalid literal");
        pos_ += n;
    }

    HeaderJson parse_value(int depth) {
        if (eof()) error("expected a value, found the end of the header");
        HeaderJson v;
        const char c = peek();
        if (c == '{') {
            if (depth >= kMaxJsonDepth) error("nesting deeper than 64");
            v.type = HeaderJson::Type::object;
            ++pos_;
            skip_space();
            if (!eof() && peek() == '}') {
                ++pos_;
                return v;
            }
            for (;;) {
                skip_space();
                if (eof() || peek() != '"') error("expected a string key");
                std::string key = parse_string();
                skip_space();
                expect(':');
                skip_space();
                HeaderJson member = parse_value(depth + 1);
                v.members.emplace_back(std::move(key), std::move(member));
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
            if (depth >= kMaxJsonDepth) error("nesting deeper than 64");
            v.type = HeaderJson::Type::array;
            ++pos_;
            skip_space();
            if (!eof() && peek() == ']') {
                ++pos_;
                return v;
            }
            for (;;) {
                skip_space();
                v.items.push_back(parse_value(depth + 1));
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
            v.type = HeaderJson::Type::string;
            v.text = parse_string();
            return v;
        }
        if (c == 't') {
            expect_word("true");
            v.type = HeaderJson::Type::boolean;
            return v;
        }
        if (c == 'f') {
            expect_word("false");
            v.type = HeaderJson::Type::boolean;
            return v;
        }
        if (c == 'n') {
            expect_word("null");
            return v;
        }
        if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
        error("unexpected character");
    }

    bool digit_here() const { return !eof() && peek() >= '0' && peek() <= '9'; }

    HeaderJson parse_number() {
        const std::size_t start = pos_;
        bool negative = false;
        if (peek() == '-') {
            negative = true;
            ++pos_;
        }
        if (!digit_here()) error("expected a digit");
        // Accumulate the magnitude as unsigned; -9223372036854775808 is allowed.
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
        HeaderJson v;
        if (real) {
            v.type = HeaderJson::Type::real;
            v.text = std::string(text_.substr(start, pos_ - start));
            return v;
        }
        if (too_big) {
            pos_ = start;
            error("integer beyond the 64-bit range");
        }
        v.type = HeaderJson::Type::integer;
        if (!negative) v.integer = static_cast<std::int64_t>(magnitude);
        else if (magnitude == limit) v.integer = std::numeric_limits<std::int64_t>::min();
        else v.integer = -static_cast<std::int64_t>(magnitude);
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

    // The header was checked as UTF-8 before parsing, so raw bytes ≥ 0x80 are
    // copied as they are; only escapes need decoding.
    std::string parse_string() {
        ++pos_;  // the opening quote
        std::string out;
        for (;;) {
            if (eof()) error("unterminated string");
            const unsigned char c = static_cast<unsigned char>(peek());
            if (c == '"') {
                ++pos_;
                return out;
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
    }
};

// ---- little-endian bytes, whatever the host -------------------------------------

void put_u64(std::string& out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

std::uint64_t get_u64(const std::string& bytes) {  // bytes.size() >= 8
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)])) << (8 * i);
    return v;
}

// Floats go through memcpy into a uint32: no type punning, no misaligned loads.
void put_f32(std::string& out, float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    for (int i = 0; i < 4; ++i) out += static_cast<char>((u >> (8 * i)) & 0xFF);
}

float get_f32(const unsigned char* p) {
    const std::uint32_t u = static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
                            (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

/// Elements of a shape, or false when a dimension is negative or the product
/// (times 4 bytes) does not fit int64. A zero dimension makes it 0 whatever the rest.
bool element_count(const std::vector<std::int64_t>& shape, std::uint64_t& count) {
    count = 1;
    for (std::int64_t d : shape)
        if (d < 0) return false;
    for (std::int64_t d : shape)
        if (d == 0) {
            count = 0;
            return true;
        }
    const std::uint64_t max_elements = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / 4;
    for (std::int64_t d : shape) {
        const std::uint64_t ud = static_cast<std::uint64_t>(d);
        if (count > max_elements / ud) return false;
        count *= ud;
    }
    return true;
}

bool valid_utf8(const std::string& s) {
    try {
        decode_utf8(s);
    } catch (const Error&) {
        return false;
    }
    return true;
}

}  // namespace

const Tensor* SafeTensors::find(const std::string& name) const {
    for (const Tensor& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

std::string write_safetensors(const SafeTensors& file) {
    // pass 1: validate and lay the tensors out back to back from offset 0
    std::set<std::string> names;
    std::string header = "{";
    std::uint64_t offset = 0;
    for (const Tensor& t : file.tensors) {
        if (t.name.empty()) throw Error(Error::Code::bad_checkpoint, "safetensors: a tensor has an empty name");
        if (t.name == "__metadata__") throw Error(Error::Code::bad_checkpoint, "safetensors: a tensor cannot be called '__metadata__'");
        if (!valid_utf8(t.name)) throw Error(Error::Code::bad_checkpoint, "safetensors: tensor name is not valid UTF-8", Error::Kind::type);
        if (!names.insert(t.name).second) throw Error(Error::Code::bad_checkpoint, "safetensors: duplicate tensor name " + quoted(t.name));
        std::uint64_t count = 0;
        if (!element_count(t.shape, count))
            throw Error(Error::Code::bad_checkpoint, "safetensors: tensor " + quoted(t.name) + " has a negative or too large shape");
        if (count != t.data.size())
            throw Error(Error::Code::bad_checkpoint, "safetensors: tensor " + quoted(t.name) + " has " + std::to_string(t.data.size()) +
                        " floats but its shape needs " + std::to_string(count));
        if (header.size() > 1) header += ',';
        header += json_quote(t.name) + ":{\"dtype\":\"F32\",\"shape\":[";
        for (std::size_t i = 0; i < t.shape.size(); ++i) {
            if (i) header += ',';
            header += std::to_string(t.shape[i]);
        }
        header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + 4 * count) + "]}";
        offset += 4 * count;
    }
    if (!file.metadata.empty()) {
        if (header.size() > 1) header += ',';
        header += "\"__metadata__\":{";
        bool first = true;
        for (const auto& [key, value] : file.metadata) {
            if (!valid_utf8(key) || !valid_utf8(value))
                throw Error(Error::Code::bad_checkpoint, "safetensors: metadata entry " + quoted(key) + " is not valid UTF-8", Error::Kind::type);
            if (!first) header += ',';
            first = false;
            header += json_quote(key) + ":" + json_quote(value);
        }
        header += "}";
    }
    header += "}";
    // Hugging Face pads the header with spaces so the data starts 8-byte aligned.
    while ((8 + header.size()) % 8 != 0) header += ' ';
    if (header.size() > kMaxSafetensorsHeader)
        throw Error(Error::Code::bad_checkpoint, "safetensors: header of " + std::to_string(header.size()) + " bytes is above the limit of " +
                    std::to_string(kMaxSafetensorsHeader));

    // pass 2: the bytes
    std::string out;
    out.reserve(8 + header.size() + static_cast<std::size_t>(offset));
    put_u64(out, header.size());
    out += header;
    for (const Tensor& t : file.tensors)
        for (float f : t.data) put_f32(out, f);
    return out;
}

SafeTensors read_safetensors(const std::string& bytes) {
    if (bytes.size() < 8)
        fail("file has " + std::to_string(bytes.size()) + " bytes, fewer than the 8 of the header size");
    const std::uint64_t header_size = get_u64(bytes);
    if (header_size > kMaxSafetensorsHeader)
        fail("header size " + std::to_string(header_size) + " is above the limit of " +
             std::to_string(kMaxSafetensorsHeader) + " bytes");
    if (header_size > bytes.size() - 8)
        fail("header size " + std::to_string(header_size) + " runs past the end of the file (" +
             std::to_string(bytes.size()) + " bytes)");
    const std::string header = bytes.substr(8, static_cast<std::size_t>(header_size));
    try {
        decode_utf8(header);
    } catch (const Error& e) {
        fail(std::string("header is not valid UTF-8 (") + e.what() + ")");
    }
    const HeaderJson root = HeaderParser(header).parse_document();
    if (root.type != HeaderJson::Type::object)
        fail(std::string("header is ") + type_name(root.type) + ", not a JSON object");

    struct Entry {
        std::size_t order;  // position in the header, the tie-break for empty tensors
        std::uint64_t begin, end;
        Tensor tensor;
    };
    std::vector<Entry> entries;
    std::set<std::string> names;
    SafeTensors result;
    const std::uint64_t data_size = bytes.size() - 8 - header_size;

    for (const auto& [name, value] : root.members) {
        if (!names.insert(name).second) fail("duplicate name " + quoted(name));
        if (name == "__metadata__") {
            if (value.type != HeaderJson::Type::object)
                fail(std::string("__metadata__ is ") + type_name(value.type) + ", not an object of strings");
            for (const auto& [key, v] : value.members) {
                if (v.type != HeaderJson::Type::string)
                    fail("metadata value of " + quoted(key) + " is " + type_name(v.type) + ", not a string");
                if (!result.metadata.emplace(key, v.text).second) fail("duplicate metadata key " + quoted(key));
            }
            continue;
        }
        const std::string who = "tensor " + quoted(name);
        if (value.type != HeaderJson::Type::object)
            fail(who + " is " + type_name(value.type) + ", not an object");
        const HeaderJson* dtype = nullptr;
        const HeaderJson* shape = nullptr;
        const HeaderJson* offsets = nullptr;
        for (const auto& [field, v] : value.members) {
            const HeaderJson** slot = field == "dtype" ? &dtype
                                     : field == "shape" ? &shape
                                     : field == "data_offsets" ? &offsets
                                                                 : nullptr;
            if (!slot) fail(who + " has an unknown field " + quoted(field));
            if (*slot) fail(who + " has the field " + quoted(field) + " twice");
            *slot = &v;
        }
        if (!dtype) fail(who + " lacks 'dtype'");
        if (!shape) fail(who + " lacks 'shape'");
        if (!offsets) fail(who + " lacks 'data_offsets'");

        if (dtype->type != HeaderJson::Type::string)
            fail(who + " has a dtype that is " + type_name(dtype->type) + ", not a string");
        if (dtype->text != "F32") fail(who + " has dtype " + dtype->text + "; only F32 is supported");

        Entry entry;
        entry.order = entries.size();
        entry.tensor.name = name;
        if (shape->type != HeaderJson::Type::array)
            fail(who + " has a shape that is " + type_name(shape->type) + ", not a list of non-negative integers");
        for (const HeaderJson& d : shape->items) {
            if (d.type != HeaderJson::Type::integer || d.integer < 0)
                fail(who + " has a shape that is not a list of non-negative integers");
            entry.tensor.shape.push_back(d.integer);
        }
        std::uint64_t count = 0;
        if (!element_count(entry.tensor.shape, count)) fail(who + " has a shape whose element count overflows");

        if (offsets->type != HeaderJson::Type::array || offsets->items.size() != 2 ||
            offsets->items[0].type != HeaderJson::Type::integer || offsets->items[1].type != HeaderJson::Type::integer)
            fail(who + " has data_offsets that are not two integers [begin, end]");
        const std::int64_t begin = offsets->items[0].integer, end = offsets->items[1].integer;
        if (begin < 0 || end < 0) fail(who + " has negative data_offsets");
        if (begin > end)
            fail(who + " has data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                 "] with begin after end");
        entry.begin = static_cast<std::uint64_t>(begin);
        entry.end = static_cast<std::uint64_t>(end);
        if (entry.end - entry.begin != 4 * count)
            fail(who + " has " + std::to_string(entry.end - entry.begin) + " bytes of data_offsets but its shape needs " +
                 std::to_string(4 * count) + " (4 per F32 element)");
        if (entry.end > data_size)
            fail(who + " has data_offsets ending at " + std::to_string(entry.end) + ", past the end of the data (" +
                 std::to_string(data_size) + " bytes)");
        entries.push_back(std::move(entry));
    }

    // The tensors must tile the data exactly: sorted by offset, each begins
    // where the previous one ended, and the last ends at the end of the file.
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        if (a.begin != b.begin) return a.begin < b.begin;
        if (a.end != b.end) return a.end < b.end;
        return a.order < b.order;
    });
    std::uint64_t at = 0;
    for (const Entry& e : entries) {
        if (e.begin < at) fail("tensor " + quoted(e.tensor.name) + " overlaps the tensor before it in the data");
        if (e.begin > at)
            fail("tensor " + quoted(e.tensor.name) + " begins at " + std::to_string(e.begin) + ", leaving a gap after byte " +
                 std::to_string(at));
        at = e.end;
    }
    if (at != data_size)
        fail("the tensors end at byte " + std::to_string(at) + " of the data but the file has " +
             std::to_string(data_size) + " bytes of data");

    const unsigned char* data = reinterpret_cast<const unsigned char*>(bytes.data()) + 8 + header_size;
    for (Entry& e : entries) {
        const std::size_t n = static_cast<std::size_t>((e.end - e.begin) / 4);
        e.tensor.data.resize(n);
        const unsigned char* p = data + e.begin;
        for (std::size_t i = 0; i < n; ++i) e.tensor.data[i] = get_f32(p + 4 * i);
        result.tensors.push_back(std::move(e.tensor));
    }
    return result;
}

}  // namespace attn
