#include "checkpoints/safetensors.hpp"

#include "attention/json.hpp"
#include "base/json_value.hpp"
#include "base/utf8.hpp"
#include "base/types.hpp"

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

// ---- the header: JSON read by the core's one parser (json_value.hpp) -------------
// The header is untrusted: the parser bounds-checks every access, limits
// nesting, keeps integer literals exact and refuses integers beyond int64
// (offsets are 64-bit), and rejects duplicate keys with the messages below.
// Non-integer numbers, true, false and null parse (so that the error can say
// "shape must be integers" rather than "bad JSON") but are rejected wherever
// the format needs something else.

const char* type_name(const JsonValue& v) {
    switch (v.type) {
        case JsonValue::Type::null: return "null";
        case JsonValue::Type::boolean: return "a boolean";
        case JsonValue::Type::number: return v.is_integer ? "an integer" : "a non-integer number";
        case JsonValue::Type::string: return "a string";
        case JsonValue::Type::array: return "a list";
        case JsonValue::Type::object: return "an object";
    }
    return "?";
}

bool is_integer(const JsonValue& v) { return v.is(JsonValue::Type::number) && v.is_integer; }

JsonValue parse_header(const std::string& header) {
    JsonOptions o;
    o.max_depth = 64;
    o.exact_integers = true;
    o.prefix = "safetensors: ";
    o.what = "JSON header";
    o.code = Error::Code::bad_checkpoint;
    o.on_duplicate = [](const std::vector<std::string>& path, const std::string& key) {
        if (path.empty()) fail("duplicate name " + quoted(key));
        if (path.size() == 1 && path[0] == "__metadata__") fail("duplicate metadata key " + quoted(key));
        if (path.size() == 1) fail("tensor " + quoted(path[0]) + " has the field " + quoted(key) + " twice");
    };
    return parse_json(header, o);
}

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

/// The element types of the safetensors format and their sizes in bytes.
struct DTypeInfo {
    const char* name;
    unsigned size;
};
constexpr DTypeInfo kDTypes[] = {{"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4},
                                 {"I16", 2}, {"I8", 1},  {"U64", 8}, {"U32", 4},  {"U16", 2}, {"U8", 1},
                                 {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};

const DTypeInfo* find_dtype(const std::string& name) {
    for (const DTypeInfo& t : kDTypes)
        if (name == t.name) return &t;
    return nullptr;
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

namespace {

/// The header of `bytes`, validated. `whole_file`: bytes is the whole file, F32
/// only, the tensors end exactly at its end (read_safetensors_index). Else
/// bytes holds at least the header, any dtype of kDTypes is accepted and the
/// data's size is where the tensors end (read_safetensors_header).
SafeTensorsIndex parse_index(const std::string& bytes, bool whole_file) {
    if (bytes.size() < 8)
        fail("file has " + std::to_string(bytes.size()) + " bytes, fewer than the 8 of the header size");
    const std::uint64_t header_size = get_u64(bytes);
    if (header_size > kMaxSafetensorsHeader)
        fail("header size " + std::to_string(header_size) + " is above the limit of " +
             std::to_string(kMaxSafetensorsHeader) + " bytes");
    if (header_size > bytes.size() - 8)
        fail("header size " + std::to_string(header_size) + " runs past the end of the " +
             (whole_file ? "file (" : "bytes given (") + std::to_string(bytes.size()) + " bytes)");
    const std::string header = bytes.substr(8, static_cast<std::size_t>(header_size));
    try {
        decode_utf8(header);
    } catch (const Error& e) {
        fail(std::string("header is not valid UTF-8 (") + e.what() + ")");
    }
    const JsonValue root = parse_header(header);
    if (root.type != JsonValue::Type::object)
        fail(std::string("header is ") + type_name(root) + ", not a JSON object");

    struct Entry {
        std::size_t order;  // position in the header, the tie-break for empty tensors
        TensorEntry tensor;
    };
    std::vector<Entry> entries;
    std::set<std::string> names;
    SafeTensorsIndex result;
    result.data_start = 8 + static_cast<std::size_t>(header_size);
    // a header alone: the data ends where the tensors end (checked to tile it below)
    std::uint64_t data_size = bytes.size() - 8 - header_size;
    if (!whole_file) data_size = std::numeric_limits<std::uint64_t>::max();

    for (const auto& [name, value] : root.object) {
        if (!names.insert(name).second) fail("duplicate name " + quoted(name));
        if (name == "__metadata__") {
            if (value.type != JsonValue::Type::object)
                fail(std::string("__metadata__ is ") + type_name(value) + ", not an object of strings");
            for (const auto& [key, v] : value.object) {
                if (v.type != JsonValue::Type::string)
                    fail("metadata value of " + quoted(key) + " is " + type_name(v) + ", not a string");
                if (!result.metadata.emplace(key, v.string).second) fail("duplicate metadata key " + quoted(key));
            }
            continue;
        }
        const std::string who = "tensor " + quoted(name);
        if (value.type != JsonValue::Type::object)
            fail(who + " is " + type_name(value) + ", not an object");
        const JsonValue* dtype = nullptr;
        const JsonValue* shape = nullptr;
        const JsonValue* offsets = nullptr;
        for (const auto& [field, v] : value.object) {
            const JsonValue** slot = field == "dtype" ? &dtype
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

        if (dtype->type != JsonValue::Type::string)
            fail(who + " has a dtype that is " + type_name(*dtype) + ", not a string");
        const DTypeInfo* type = find_dtype(dtype->string);
        if (whole_file ? dtype->string != "F32" : !type)
            fail(who + " has dtype " + dtype->string + (whole_file ? "; only F32 is supported" : ", not a safetensors dtype"));

        Entry entry;
        entry.order = entries.size();
        entry.tensor.name = name;
        entry.tensor.dtype = type->name;
        entry.tensor.element_size = type->size;
        if (shape->type != JsonValue::Type::array)
            fail(who + " has a shape that is " + type_name(*shape) + ", not a list of non-negative integers");
        for (const JsonValue& d : shape->array) {
            if (!is_integer(d) || d.integer < 0)
                fail(who + " has a shape that is not a list of non-negative integers");
            entry.tensor.shape.push_back(d.integer);
        }
        std::uint64_t count = 0;
        if (!element_count(entry.tensor.shape, count)) fail(who + " has a shape whose element count overflows");

        if (offsets->type != JsonValue::Type::array || offsets->array.size() != 2 || !is_integer(offsets->array[0]) ||
            !is_integer(offsets->array[1]))
            fail(who + " has data_offsets that are not two integers [begin, end]");
        const std::int64_t begin = offsets->array[0].integer, end = offsets->array[1].integer;
        if (begin < 0 || end < 0) fail(who + " has negative data_offsets");
        if (begin > end)
            fail(who + " has data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                 "] with begin after end");
        entry.tensor.begin = static_cast<std::uint64_t>(begin);
        entry.tensor.end = static_cast<std::uint64_t>(end);
        const std::uint64_t need = count * type->size;  // count <= INT64_MAX / 4: 8 per element cannot wrap
        if (entry.tensor.end - entry.tensor.begin != need)
            fail(who + " has " + std::to_string(entry.tensor.end - entry.tensor.begin) + " bytes of data_offsets but its shape needs " +
                 std::to_string(need) + " (" + std::to_string(type->size) + " per " + type->name + " element)");
        if (entry.tensor.end > data_size)
            fail(who + " has data_offsets ending at " + std::to_string(entry.tensor.end) + ", past the end of the data (" +
                 std::to_string(data_size) + " bytes)");
        entries.push_back(std::move(entry));
    }

    // The tensors must tile the data exactly: sorted by offset, each begins
    // where the previous one ended, and the last ends at the end of the file.
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        if (a.tensor.begin != b.tensor.begin) return a.tensor.begin < b.tensor.begin;
        if (a.tensor.end != b.tensor.end) return a.tensor.end < b.tensor.end;
        return a.order < b.order;
    });
    std::uint64_t at = 0;
    for (const Entry& e : entries) {
        if (e.tensor.begin < at) fail("tensor " + quoted(e.tensor.name) + " overlaps the tensor before it in the data");
        if (e.tensor.begin > at)
            fail("tensor " + quoted(e.tensor.name) + " begins at " + std::to_string(e.tensor.begin) + ", leaving a gap after byte " +
                 std::to_string(at));
        at = e.tensor.end;
    }
    if (!whole_file) data_size = at;
    if (at != data_size)
        fail("the tensors end at byte " + std::to_string(at) + " of the data but the file has " +
             std::to_string(data_size) + " bytes of data");

    for (Entry& e : entries) result.tensors.push_back(std::move(e.tensor));
    result.data_size = data_size;
    return result;
}

}  // namespace

SafeTensorsIndex read_safetensors_index(const std::string& bytes) { return parse_index(bytes, true); }

SafeTensorsIndex read_safetensors_header(const std::string& bytes) { return parse_index(bytes, false); }

const TensorEntry* SafeTensorsIndex::find(const std::string& name) const {
    for (const TensorEntry& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

float f16_to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
    std::uint32_t u;
    if (exponent == 0x1F) {
        u = sign | 0x7F800000u | (mantissa << 13);  // infinity, NaN (payload kept)
    } else if (exponent != 0) {
        u = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
        u = sign;  // ±0
    } else {
        // subnormal: mantissa · 2^-24, normalised into a float32 (which holds it exactly)
        int e = -1;
        std::uint32_t m = mantissa;
        do {
            ++e;
            m <<= 1;
        } while ((m & 0x400u) == 0);
        u = sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((m & 0x3FFu) << 13);
    }
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

float bf16_to_float(std::uint16_t h) {
    const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

float tensor_float(const std::string& bytes, const SafeTensorsIndex& index, const TensorEntry& entry, std::size_t i) {
    return get_f32(reinterpret_cast<const unsigned char*>(bytes.data()) + index.data_start + entry.begin + 4 * i);
}

SafeTensors read_safetensors(const std::string& bytes) {
    const SafeTensorsIndex index = read_safetensors_index(bytes);
    SafeTensors result;
    result.metadata = index.metadata;
    for (const TensorEntry& e : index.tensors) {
        Tensor t;
        t.name = e.name;
        t.shape = e.shape;
        const std::size_t n = static_cast<std::size_t>((e.end - e.begin) / 4);
        t.data.resize(n);
        for (std::size_t i = 0; i < n; ++i) t.data[i] = tensor_float(bytes, index, e, i);
        result.tensors.push_back(std::move(t));
    }
    return result;
}

}  // namespace attn
