// HubLoader (pretrained.hpp): a Hub model.safetensors streamed into our Model.
//
// From the header alone it decides which of the file's tensors the model needs
// (a Source each), checks their names, shapes and dtypes against the config,
// and allocates the model: its parameters are the only large allocations (the float32
// values, and the 16-bit chunks of a file kept 16-bit: Parameters). Then
// feed() converts the bytes as they arrive, in any chunk sizes, straight into
// the parameter buffer: an element split between two chunks waits in a carry
// of at most 4 bytes. Bytes outside the needed ranges (attn.bias buffers, the
// pooler, position_ids) are skipped.
//
// Which tensors, and where they go, is the family's (families/: read_file and plan, through
// the HubTensors interface this file implements); the rest is this file's: dtypes, streaming,
// the shape messages, the legacy LayerNorm names.
//
// One rule maps every Hub tensor, seen as [R, K] (a vector is [1, K]), onto
// our row-major [in, out] tensors: element (r, c) goes to
//     out[c / split] + r·row_stride + (c % split)·col_stride   (out: the target tensor's start)
//   Conv1D [in, out], same layout:  split K, row_stride K, col_stride 1
//   nn.Linear [out, in], transposed: split K, row_stride 1, col_stride R
//   c_attn [C, 3C] → q | k | v:     split C, row_stride C, col_stride 1, three bases

#include "base/json_value.hpp"
#include "checkpoints/pretrained.hpp"
#include "families/family.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <set>
#include <string>
#include <vector>

namespace attn {
namespace {

[[noreturn]] void fail(const std::string& message) { throw Error(Error::Code::bad_checkpoint, "model.safetensors: " + message); }

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

enum class Kind { f32, f16, bf16 };

struct Source {
    std::string name;  ///< as in the file
    Kind kind = Kind::f32;
    unsigned element_size = 4;
    std::uint64_t begin = 0, end = 0;  ///< absolute file offsets
    std::int64_t rows = 1, cols = 1;   ///< the Hub tensor as [R, K]
    std::int64_t split = 1;
    std::string targets[3];            ///< our tensors (1, or 3 for split3)
    unsigned target_count = 1;
    float* out[3] = {};                ///< where their values go when float32: flat() + ParamInfo::stored
    std::uint16_t* out16[3] = {};      ///< or, stored as 16-bit values, their place (Parameters::half_data)
    bool half = false;                 ///< stored as 16-bit values: the file's bits are copied
    std::size_t row_stride = 0, col_stride = 1;
    // progress
    std::uint64_t done = 0;  ///< bytes converted (or waiting in the carry)
    std::int64_t r = 0, c = 0;
};

float convert(Kind kind, const std::uint8_t* p) {
    if (kind == Kind::f32) {
        const std::uint32_t u = static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
                                (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
        float f;
        std::memcpy(&f, &u, sizeof f);
        return f;
    }
    const auto h = static_cast<std::uint16_t>(p[0] | (p[1] << 8));
    return kind == Kind::f16 ? f16_to_float(h) : bf16_to_float(h);
}

}  // namespace

struct HubLoader::Impl final : HubTensors {
    /// Everything decided before the parameters are allocated: the header read and checked against
    /// the config and the file's size, the family's plan, the byte ranges needed.
    void plan(const ModelConfig& config, const std::string& header, std::uint64_t file_size, bool keep_16bit);

    ModelConfig config;
    std::vector<ParamInfo> slots;  ///< parameter_layout(config): where each tensor goes, known before the model exists
    SafeTensorsIndex index;
    std::vector<Source> sources;  ///< in file order
    std::vector<ByteRange> needed;
    std::uint64_t needed_bytes = 0;
    std::unique_ptr<Model> model;
    WeightFormat storage = WeightFormat::f32;
    std::set<std::string> filled;  ///< our names the sources write (each exactly once)
    // streaming
    std::size_t cur = 0;     ///< the source being filled
    std::uint64_t pos = 0;   ///< the end of the bytes fed so far
    std::uint64_t fed = 0;
    std::uint8_t carry[8] = {};
    unsigned carry_n = 0;
    bool finished = false;

    std::string prefix;      ///< "transformer.", "bert." or ""
    std::string size_note;   ///< the config's fields, for messages

    const TensorEntry* find(const std::string& name) const { return index.find(name); }

    /// The entry of `name` under the model's prefix (or, for a head tensor, without it),
    /// LayerNorm.weight/bias also as the legacy gamma/beta.
    const TensorEntry* lookup(const std::string& name, bool top_level = false) const {
        const std::string full = top_level ? name : prefix + name;
        if (const TensorEntry* e = find(full)) return e;
        const auto legacy = [](std::string n) {
            const auto swap = [&](const std::string& from, const std::string& to) {
                if (n.size() >= from.size() && n.compare(n.size() - from.size(), from.size(), from) == 0)
                    n = n.substr(0, n.size() - from.size()) + to;
            };
            swap("LayerNorm.weight", "LayerNorm.gamma");
            swap("LayerNorm.bias", "LayerNorm.beta");
            return n;
        };
        return find(legacy(full));
    }

    bool has(const std::string& name) const override { return find(name) != nullptr; }
    void sizes(const std::string& note) override { size_note = note; }

    /// The family's plan asks for the Hub tensor `name` of shape `shape` into our `targets` (1 or 3 names) by `layout`.
    void add(const std::string& name, const std::vector<std::int64_t>& shape, const std::vector<std::string>& targets,
             HubLayout layout, const std::string& why, bool top_level) override {
        const TensorEntry* e = lookup(name, top_level);
        const std::string full = top_level ? name : prefix + name;
        if (!e) fail("has no tensor " + quoted(full) + ", which " + why + " needs");
        if (e->shape != shape) {
            // the token embedding's rows are the vocabulary: say so rather than only the shapes
            const bool vocab_rows = targets.front() == "embed" && e->shape.size() == 2 && shape.size() == 2 &&
                                    e->shape[1] == shape[1];
            if (vocab_rows)
                fail("tensor " + quoted(e->name) + " has " + std::to_string(e->shape[0]) +
                     " rows (its vocabulary) but config.json's vocab_size is " + std::to_string(shape[0]) +
                     ": the vocabulary and model sizes disagree");
            fail("tensor " + quoted(e->name) + " has shape " + shape_text(e->shape) + " but the config (" + size_note +
                 ") needs " + shape_text(shape));
        }
        Source s;
        s.name = e->name;
        if (e->dtype == "F32") s.kind = Kind::f32;
        else if (e->dtype == "F16") s.kind = Kind::f16;
        else if (e->dtype == "BF16") s.kind = Kind::bf16;
        else fail("tensor " + quoted(e->name) + " has dtype " + e->dtype + "; this engine reads F32, F16 and BF16 weights");
        s.element_size = e->element_size;
        s.begin = index.data_start + e->begin;
        s.end = index.data_start + e->end;
        s.rows = shape.size() == 2 ? shape[0] : 1;
        s.cols = shape.back();
        if (targets.empty() || targets.size() > 3) throw Error(Error::Code::internal, "hub loader: 1 or 3 targets");
        s.target_count = static_cast<unsigned>(targets.size());
        for (std::size_t i = 0; i < targets.size(); ++i) {
            if (std::none_of(slots.begin(), slots.end(), [&](const ParamInfo& p) { return p.name == targets[i]; }))
                throw Error(Error::Code::internal, "hub loader: the model has no parameter " + targets[i]);
            if (!filled.insert(targets[i]).second) throw Error(Error::Code::internal, "hub loader: " + targets[i] + " twice");
            s.targets[i] = targets[i];
        }
        switch (layout) {
            case HubLayout::same: s.split = s.cols; s.row_stride = static_cast<std::size_t>(s.cols); s.col_stride = 1; break;
            case HubLayout::transposed: s.split = s.cols; s.row_stride = 1; s.col_stride = static_cast<std::size_t>(s.rows); break;
            case HubLayout::split3: s.split = s.cols / 3; s.row_stride = static_cast<std::size_t>(s.split); s.col_stride = 1; break;
        }
        sources.push_back(s);
    }
};

std::uint64_t HubLoader::header_size(const std::string& first8) {
    if (first8.size() < 8)
        fail("the file has " + std::to_string(first8.size()) + " bytes, fewer than the 8 of the header size");
    std::uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(static_cast<unsigned char>(first8[static_cast<std::size_t>(i)])) << (8 * i);
    if (n > kMaxSafetensorsHeader)
        fail("header size " + std::to_string(n) + " is above the limit of " + std::to_string(kMaxSafetensorsHeader) + " bytes");
    return 8 + n;
}

namespace {

/// The too_large message of a model of `floats` parameters that take `bytes` held as `format`
/// (its large tensors; the rest float32).
std::string parameter_refusal(std::uint64_t floats, std::uint64_t bytes, WeightFormat format) {
    const std::string as = format == WeightFormat::f32 ? "float32" : std::string(weight_format_name(format)) + " and float32";
    return "the model has " + std::to_string(floats) + " parameters (" + format_bytes(static_cast<std::int64_t>(bytes)) + " as " + as +
           "), above the " + format_bytes(static_cast<std::int64_t>(parameter_limit(format))) + " this engine holds";
}

std::uint64_t parameter_count(const ModelConfig& config) {
    std::uint64_t floats = 0;
    for (const ParamInfo& p : parameter_layout(config)) floats += static_cast<std::uint64_t>(p.rows) * static_cast<std::uint64_t>(p.cols);
    return floats;
}

/// Reads one string field of config.json's top level; "" when absent or not a string.
std::string top_level_string(const JsonValue& root, const char* key) {
    const JsonValue* v = root.get(key);
    return v && v->is(JsonValue::Type::string) ? v->string : std::string();
}

}  // namespace

std::uint64_t parameter_bytes(const ModelConfig& config) { return parameter_count(config) * 4; }

WeightFormat declared_weight_format(const std::string& config_json) {
    JsonOptions o;
    o.prefix = "config.json: ";
    o.code = Error::Code::bad_checkpoint;
    const JsonValue root = parse_json(config_json, o);
    if (!root.is(JsonValue::Type::object)) return WeightFormat::f32;
    // transformers 5 writes "dtype"; a config saved by both may carry both: the newer name wins
    std::string dtype = top_level_string(root, "dtype");
    if (dtype.empty()) dtype = top_level_string(root, "torch_dtype");
    if (dtype == "bfloat16") return WeightFormat::bf16;
    if (dtype == "float16") return WeightFormat::f16;
    return WeightFormat::f32;
}

HubSizeCheck check_hub_size(const ModelConfig& config, WeightFormat format) {
    HubSizeCheck c;
    const ModelConfig smallest = smallest_file_config(config);
    c.format = format;
    c.parameter_bytes = parameter_bytes(smallest, format);
    c.largest_bytes = parameter_bytes(largest_file_config(config), format);
    c.limit_bytes = parameter_limit(format);
    c.fits = c.parameter_bytes <= c.limit_bytes;
    if (!c.fits) c.refusal = parameter_refusal(parameter_count(smallest), c.parameter_bytes, format);
    else c.refusal = allocation_refusal(smallest, format);
    c.fits = c.refusal.empty();
    return c;
}

// Everything the header can say is checked before the parameters are allocated: a 2.5 KB
// file whose header describes gigabytes costs nothing.

void HubLoader::Impl::plan(const ModelConfig& config, const std::string& header, std::uint64_t file_size, bool keep_16bit) {
    Impl& m = *this;
    const Family* family = family_of(config);
    if (!family)
        throw Error(Error::Code::bad_checkpoint, "the Hub loader reads " + family_titles() + " models; the config's family is \"" +
                                                     config.family + "\"");
    const std::uint64_t size = header_size(header);
    if (header.size() < size)
        fail("the header needs " + std::to_string(size) + " bytes; " + std::to_string(header.size()) + " were given");
    m.index = read_safetensors_header(header.substr(0, static_cast<std::size_t>(size)));
    const std::uint64_t described = m.index.data_start + m.index.data_size;
    if (file_size < described)
        for (const TensorEntry& t : m.index.tensors)  // the first tensor the file's end cuts (finish()'s message)
            if (m.index.data_start + t.end > file_size)
                fail("the file ends at byte " + std::to_string(file_size) + " but tensor " + quoted(t.name) + " needs bytes " +
                     std::to_string(m.index.data_start + t.begin) + " to " + std::to_string(m.index.data_start + t.end) +
                     " (the file is truncated; the header says " + std::to_string(described) + " bytes)");
    m.config = config;
    // decided by the file: the names' prefix, an untied output layer, BERT's masked-LM head
    m.prefix = family->read_file(m, m.config);
    validate_inference_config(m.config);
    m.slots = parameter_layout(m.config);
    family->plan(m.config, m);
    for (const ParamInfo& p : m.slots)
        if (!m.filled.count(p.name)) throw Error(Error::Code::internal, "hub loader: nothing fills " + p.name);
    if (keep_16bit) {  // every matrix F16, or every one BF16: stays 16-bit
        bool all_f16 = true, all_bf16 = true;
        for (const Source& s : m.sources)
            if (s.rows > 1) {
                all_f16 = all_f16 && s.kind == Kind::f16;
                all_bf16 = all_bf16 && s.kind == Kind::bf16;
            }
        m.storage = all_bf16 ? WeightFormat::bf16 : all_f16 ? WeightFormat::f16 : WeightFormat::f32;
    }
    const std::uint64_t bytes = attn::parameter_bytes(m.config, m.storage);  // counted before allocating
    if (bytes > parameter_limit(m.storage)) {
        std::uint64_t floats = 0;
        for (const ParamInfo& p : m.slots) floats += p.size();
        throw Error(Error::Code::too_large, parameter_refusal(floats, bytes, m.storage));
    }
    const std::string split = allocation_refusal(m.config, m.storage);
    if (!split.empty()) throw Error(Error::Code::too_large, split);
    std::sort(m.sources.begin(), m.sources.end(), [](const Source& a, const Source& b) { return a.begin < b.begin; });
    for (const Source& s : m.sources) {
        m.needed_bytes += s.end - s.begin;
        if (s.end == s.begin) continue;
        if (!m.needed.empty() && m.needed.back().end == s.begin) m.needed.back().end = s.end;
        else m.needed.push_back({s.begin, s.end});
    }
}

void HubLoader::check(const ModelConfig& config, const std::string& header, std::uint64_t file_size, bool keep_16bit) {
    Impl m;
    m.plan(config, header, file_size, keep_16bit);
}

HubLoader::HubLoader(const ModelConfig& config, const std::string& header, std::uint64_t file_size, bool keep_16bit,
                     std::size_t chunk_bytes)
    : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.plan(config, header, file_size, keep_16bit);
    const std::uint64_t bytes = attn::parameter_bytes(m.config, m.storage);
    try {
        m.model = std::make_unique<Model>(m.config, Parameters(m.config, m.storage, chunk_bytes));
    } catch (const std::bad_alloc&) {
        throw Error(Error::Code::out_of_memory, "cannot allocate the model's " + format_bytes(static_cast<std::int64_t>(bytes)) +
                                                    " of parameters");
    }
    // where each source's tensors are stored (flat(), or their 16-bit chunk), known now
    Parameters& params = m.model->params();
    for (Source& s : m.sources) {
        for (unsigned i = 0; i < s.target_count; ++i) {
            const ParamInfo& info = params.info(s.targets[i]);
            const bool half = info.format != WeightFormat::f32;
            if (i > 0 && half != s.half) throw Error(Error::Code::internal, "hub loader: " + s.name + "'s targets are stored differently");
            s.half = half;
            if (half) s.out16[i] = params.half_data(info);
            else s.out[i] = params.flat().data() + info.stored;
        }
    }
}

HubLoader::~HubLoader() = default;

const std::vector<ByteRange>& HubLoader::needed() const { return impl_->needed; }
WeightFormat HubLoader::storage() const { return impl_->storage; }
std::uint64_t HubLoader::parameter_bytes() const { return impl_->model->params().bytes(); }
std::size_t HubLoader::half_chunks() const { return impl_->model->params().half_chunk_bytes().size(); }
std::uint64_t HubLoader::needed_bytes() const { return impl_->needed_bytes; }
std::uint64_t HubLoader::fed_bytes() const { return impl_->fed; }

void HubLoader::feed(std::uint64_t offset, const std::uint8_t* data, std::size_t size) {
    Impl& m = *impl_;
    if (m.finished) throw Error(Error::Code::bad_state, "the Hub loader has finished: feed() after finish()");
    if (offset < m.pos)
        throw Error(Error::Code::bad_input, "feed: offset " + std::to_string(offset) + " is before the end of the bytes already fed (" +
                                                std::to_string(m.pos) + "); feed the file in increasing order");
    const std::uint64_t end = offset + size;
    while (m.cur < m.sources.size()) {
        Source& s = m.sources[m.cur];
        const std::uint64_t at = s.begin + s.done;  // the next byte this tensor needs
        if (at >= end) break;
        if (at < offset)
            fail("bytes " + std::to_string(at) + " to " + std::to_string(offset) + " of tensor " + quoted(s.name) +
                 " were skipped");
        const std::uint8_t* p = data + (at - offset);
        std::uint64_t n = std::min(s.end, end) - at;
        s.done += n;
        const auto put = [&](const std::uint8_t* bytes) {
            const float v = convert(s.kind, bytes);
            if (!std::isfinite(v))
                fail("tensor " + quoted(s.name) + " has a non-finite value (" + (std::isnan(v) ? "NaN" : "infinity") +
                     ") at row " + std::to_string(s.r) + ", column " + std::to_string(s.c));
            const std::int64_t block = s.c / s.split, col = s.c % s.split;
            const std::size_t at = static_cast<std::size_t>(s.r) * s.row_stride + static_cast<std::size_t>(col) * s.col_stride;
            if (s.half)  // the file's own 16 bits (a 16-bit source: the storage is its format)
                s.out16[block][at] = static_cast<std::uint16_t>(bytes[0] | (bytes[1] << 8));
            else
                s.out[block][at] = v;
            if (++s.c == s.cols) {
                s.c = 0;
                ++s.r;
            }
        };
        const unsigned es = s.element_size;
        // `count` whole elements at q, as put() on each (which stays the path of an element split
        // between chunks, and of a non-finite value's message), a row's block at a time: the
        // target pointer and stride found once per run, not a division per element, and a 16-bit
        // source's finiteness read from its exponent bits
        // whether a value's bits are finite, and where each goes
        const std::uint16_t exponent = s.kind == Kind::bf16 ? 0x7F80 : 0x7C00;  // (16-bit) all ones: infinity or NaN
        const auto finite = [&](const std::uint8_t* b) {
            return s.half ? (((b[0] | (b[1] << 8)) & exponent) != exponent) : std::isfinite(convert(s.kind, b));
        };
        // `rows` whole rows of a transposed tensor (nn.Linear [out, in]: element (r, c) goes to
        // out[0] + r + c·R), 64 bytes of each row at a time over all of them: a column's writes are
        // consecutive, where row by row each would be R apart (another page: the TLB misses made
        // Llama-3.2-1B's 32 MiB matrices load at a fifth of Qwen2.5-0.5B's speed). A non-finite
        // value: the first in the file's order is named (put()).
        const auto put_rows = [&](const std::uint8_t* q, std::uint64_t rows) {
            const std::uint64_t K = static_cast<std::uint64_t>(s.cols), r0 = static_cast<std::uint64_t>(s.r);
            const std::uint64_t tile = 64 / es;
            for (std::uint64_t c0 = 0; c0 < K; c0 += tile) {
                const std::uint64_t c1 = std::min(K, c0 + tile);
                for (std::uint64_t r = 0; r < rows; ++r) {
                    const std::uint8_t* row = q + r * K * es;
                    bool ok = true;
                    for (std::uint64_t c = c0; c < c1; ++c) {
                        const std::uint8_t* b = row + c * es;
                        ok = ok && finite(b);
                        const std::size_t at = static_cast<std::size_t>(r0 + r) * s.row_stride + static_cast<std::size_t>(c) * s.col_stride;
                        if (s.half) s.out16[0][at] = static_cast<std::uint16_t>(b[0] | (b[1] << 8));
                        else s.out[0][at] = convert(s.kind, b);
                    }
                    if (ok) continue;
                    for (std::uint64_t i = 0; i < rows * K; ++i)  // the first in the file's order
                        if (!finite(q + i * es)) {
                            s.r = static_cast<std::int64_t>(r0 + i / K);
                            s.c = static_cast<std::int64_t>(i % K);
                            put(q + i * es);  // throws, naming the row and column
                        }
                }
            }
            s.r = static_cast<std::int64_t>(r0 + rows);
            s.c = 0;
        };
        const auto put_run = [&](const std::uint8_t* q, std::uint64_t count) {
            while (count > 0) {
                if (s.col_stride != 1 && s.split == s.cols && s.c == 0 && count >= static_cast<std::uint64_t>(s.cols)) {
                    const std::uint64_t rows = count / static_cast<std::uint64_t>(s.cols);
                    put_rows(q, rows);
                    q += rows * static_cast<std::uint64_t>(s.cols) * es;
                    count -= rows * static_cast<std::uint64_t>(s.cols);
                    continue;
                }
                const std::int64_t block = s.c / s.split, col = s.c % s.split;
                const std::uint64_t run = std::min<std::uint64_t>(count, static_cast<std::uint64_t>(s.split - col));
                const std::size_t first = static_cast<std::size_t>(s.r) * s.row_stride + static_cast<std::size_t>(col) * s.col_stride;
                const std::size_t stride = s.col_stride;
                if (s.half) {
                    std::uint16_t* o = s.out16[block] + first;
                    for (std::uint64_t i = 0; i < run; ++i) {
                        const auto h = static_cast<std::uint16_t>(q[2 * i] | (q[2 * i + 1] << 8));
                        if ((h & exponent) == exponent) {
                            s.c += static_cast<std::int64_t>(i);
                            put(q + 2 * i);  // throws, naming the row and column
                        }
                        o[i * stride] = h;
                    }
                } else {
                    float* o = s.out[block] + first;
                    for (std::uint64_t i = 0; i < run; ++i) {
                        const float v = convert(s.kind, q + i * es);
                        if (!std::isfinite(v)) {
                            s.c += static_cast<std::int64_t>(i);
                            put(q + i * es);  // throws, naming the row and column
                        }
                        o[i * stride] = v;
                    }
                }
                s.c += static_cast<std::int64_t>(run);
                if (s.c == s.cols) {
                    s.c = 0;
                    ++s.r;
                }
                q += run * es;
                count -= run;
            }
        };
        while (n > 0) {
            if (m.carry_n > 0 || n < es) {  // an element split between chunks
                const unsigned take = static_cast<unsigned>(std::min<std::uint64_t>(es - m.carry_n, n));
                std::memcpy(m.carry + m.carry_n, p, take);
                m.carry_n += take;
                p += take;
                n -= take;
                if (m.carry_n == es) {
                    put(m.carry);
                    m.carry_n = 0;
                }
                continue;
            }
            const std::uint64_t whole = n / es;
            put_run(p, whole);
            p += whole * es;
            n -= whole * es;
        }
        if (s.done == s.end - s.begin) ++m.cur;
        else break;
    }
    m.pos = end;
    m.fed += size;
}

std::unique_ptr<Model> HubLoader::finish() {
    Impl& m = *impl_;
    if (m.finished) throw Error(Error::Code::bad_state, "the Hub loader has finished already");
    if (m.cur < m.sources.size()) {
        const Source& s = m.sources[m.cur];
        fail("the file ends at byte " + std::to_string(m.pos) + " but tensor " + quoted(s.name) + " needs bytes " +
             std::to_string(s.begin) + " to " + std::to_string(s.end) + " (the file is truncated; the header says " +
             std::to_string(m.index.data_start + m.index.data_size) + " bytes)");
    }
    m.finished = true;
    // a loaded model is only run: its product matrices as the kernels' panels, so that no
    // forward packs them again (in place, one matrix's copy at a time)
    m.model->params().use_panels();
    return std::move(m.model);
}

}  // namespace attn
