// The parameters of a config: the one name table (parameter_layout and the
// layer kinds' ParamSlots), the flat buffer with its named views and panels,
// and the seeded initialisation (model.hpp).

#include "model/layers.hpp"
#include "model/model.hpp"

#include "base/hash.hpp"
#include "base/random.hpp"
#include "kernels/gemm.hpp"

#include <algorithm>
#include <utility>
#include <cmath>
#include <string>

namespace attn {
namespace {

/// A parameter's random stream, so that adding a tensor never changes another
/// one's initial values: FNV-1a 64 of its name (hash.hpp) started from
/// 1469598103934665603, FNV's offset basis 14695981039346656037 without its
/// last digit. Not FNV-1a's published values: a typo, kept because every seeded
/// initialisation depends on it (the fixed-seed tests, the shipped models).
constexpr std::uint64_t kNameStreamBasis = 1469598103934665603ULL;
std::uint64_t name_stream(const std::string& name) { return fnv1a64(name, kNameStreamBasis); }

std::string layer_name(int l, const char* leaf) { return "layers." + std::to_string(l) + "." + leaf; }
}  // namespace

const char* activation_name(Activation a) {
    switch (a) {
        case Activation::gelu_erf: return "gelu_erf";
        case Activation::gelu_tanh: return "gelu_tanh";
        case Activation::silu: return "silu";
    }
    return "gelu_erf";
}

Activation parse_activation(const std::string& name) {
    for (const Activation a : {Activation::gelu_erf, Activation::gelu_tanh, Activation::silu})
        if (name == activation_name(a)) return a;
    throw Error("activation must be \"gelu_erf\", \"gelu_tanh\" or \"silu\", got \"" + name.substr(0, 32) + "\"");
}

const char* norm_name(Norm n) { return n == Norm::post ? "post" : "pre"; }

Norm parse_norm(const std::string& name) {
    if (name == "pre") return Norm::pre;
    if (name == "post") return Norm::post;
    throw Error("norm must be \"pre\" or \"post\", got \"" + name.substr(0, 32) + "\"");
}

namespace {

/// THE name table: every tensor of a config, in layout order, with its shape,
/// kind and the slot of the layer kinds that reads it. parameter_layout() and
/// resolve_slots() are both this list, so the checkpoint names and the
/// structure the forward reads cannot drift apart.
template <class Add>
void parameter_table(const ModelConfig& c, ParamSlots& s, Add add) {
    const int C = c.d_model, F = c.mlp, D = head_dim_of(c), QC = c.heads * D, KC = kv_heads_of(c) * D;
    const bool norm_bias = !c.rmsnorm, qkv_b = qkv_biased(c), mlp_b = c.mlp_bias;
    // add(name, rows, cols, vector, decay, slot)
    add("embed", c.vocab, C, false, true, s.embed);
    if (c.positional == Positional::learned) add("pos", c.context, C, false, true, s.pos);
    if (c.token_types > 0) add("token_type", c.token_types, C, false, true, s.token_type);
    if (c.embed_layernorm) {
        add("embed_ln.gain", 1, C, true, false, s.embed_ln_gain);
        add("embed_ln.bias", 1, C, true, false, s.embed_ln_bias);
    }
    s.layers.resize(static_cast<std::size_t>(c.layers));
    for (int l = 0; l < c.layers; ++l) {
        LayerParams<Slot>& ls = s.layers[static_cast<std::size_t>(l)];
        if (c.layernorm) {
            add(layer_name(l, "ln1.gain"), 1, C, true, false, ls.ln1_gain);
            if (norm_bias) add(layer_name(l, "ln1.bias"), 1, C, true, false, ls.ln1_bias);
        }
        // Q (C×H·D) and K, V (C×H_kv·D); O (H·D×C) back to the stream
        add(layer_name(l, "w_query"), C, QC, false, true, ls.w_query);
        if (qkv_b) add(layer_name(l, "b_query"), 1, QC, true, false, ls.b_query);
        add(layer_name(l, "w_key"), C, KC, false, true, ls.w_key);
        if (qkv_b) add(layer_name(l, "b_key"), 1, KC, true, false, ls.b_key);
        add(layer_name(l, "w_value"), C, KC, false, true, ls.w_value);
        if (qkv_b) add(layer_name(l, "b_value"), 1, KC, true, false, ls.b_value);
        add(layer_name(l, "w_output"), QC, C, false, true, ls.w_output);
        if (c.attn_bias) add(layer_name(l, "b_output"), 1, C, true, false, ls.b_output);
        if (c.qk_norm) {  // one gain of D for every head's q, one for every head's k
            add(layer_name(l, "q_norm.gain"), 1, D, true, false, ls.q_norm_gain);
            add(layer_name(l, "k_norm.gain"), 1, D, true, false, ls.k_norm_gain);
        }
        if (F > 0) {
            if (c.layernorm) {
                add(layer_name(l, "ln2.gain"), 1, C, true, false, ls.ln2_gain);
                if (norm_bias) add(layer_name(l, "ln2.bias"), 1, C, true, false, ls.ln2_bias);
            }
            if (c.gated_mlp) {
                add(layer_name(l, "mlp.w_gate"), C, F, false, true, ls.w_gate);
                if (mlp_b) add(layer_name(l, "mlp.b_gate"), 1, F, true, false, ls.b_gate);
            }
            add(layer_name(l, "mlp.w_in"), C, F, false, true, ls.w_in);
            if (mlp_b) add(layer_name(l, "mlp.b_in"), 1, F, true, false, ls.b_in);
            add(layer_name(l, "mlp.w_out"), F, C, false, true, ls.w_out);
            if (mlp_b) add(layer_name(l, "mlp.b_out"), 1, C, true, false, ls.b_out);
        }
    }
    if (c.layernorm && c.norm == Norm::pre) {
        add("final_ln.gain", 1, C, true, false, s.final_ln_gain);
        if (norm_bias) add("final_ln.bias", 1, C, true, false, s.final_ln_bias);
    }
    if (c.output_transform) {
        add("head.w_transform", C, C, false, true, s.head_w);
        add("head.b_transform", 1, C, true, false, s.head_b);
        add("head.ln.gain", 1, C, true, false, s.head_ln_gain);
        add("head.ln.bias", 1, C, true, false, s.head_ln_bias);
    }
    if (!c.tied) add("unembed", C, c.vocab, false, true, s.unembed);
    if (c.output_bias) add("unembed_bias", 1, c.vocab, true, false, s.unembed_bias);
}

}  // namespace

std::vector<ParamInfo> parameter_layout(const ModelConfig& c) {
    std::vector<ParamInfo> out;
    std::size_t offset = 0;
    ParamSlots slots;
    parameter_table(c, slots, [&](std::string name, int rows, int cols, bool vector, bool decay, Slot&) {
        ParamInfo p;
        p.name = std::move(name);
        p.rows = rows;
        p.cols = cols;
        p.vector = vector;
        p.decay = decay;
        p.offset = offset;
        p.stored = offset;
        offset += p.size();
        out.push_back(std::move(p));
    });
    return out;
}

ParamSlots resolve_slots(const ModelConfig& c) {
    ParamSlots slots;
    std::size_t offset = 0;
    parameter_table(c, slots, [&](const std::string&, int rows, int cols, bool, bool, Slot& slot) {
        slot.offset = static_cast<std::ptrdiff_t>(offset);
        offset += static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    });
    return slots;
}

ModelParams<const float*> bind(const ParamSlots& slots, const Parameters& params) {
    ModelParams<const float*> out;
    const auto at = [&](const float*& ptr, const Slot& s) -> const ParamInfo* {
        const ParamInfo* p = s.offset < 0 ? nullptr : params.at_offset(static_cast<std::size_t>(s.offset));
        if (!p) {
            if (s.offset >= 0) throw Error(Error::Code::internal, "a slot names no tensor of the parameters");
            ptr = nullptr;
            return nullptr;
        }
        // a 16-bit tensor's pointer points at its 16-bit values (half_values())
        ptr = p->format == WeightFormat::f32 ? params.flat().data() + p->stored
                                             : reinterpret_cast<const float*>(params.half_data(*p));
        return p;
    };
    zip_model_fields(out, slots, [&](const float*& ptr, const Slot& s) {
        const ParamInfo* p = at(ptr, s);
        if (p && p->format != WeightFormat::f32) out.embed_format = p->format;  // embed, unembed
    });
    out.layers.resize(slots.layers.size());
    for (std::size_t l = 0; l < slots.layers.size(); ++l) {
        Storage storage = params.panels() ? Storage::panels : Storage::row_major;
        zip_layer_fields(out.layers[l], slots.layers[l], [&](const float*& ptr, const Slot& s) {
            const ParamInfo* p = at(ptr, s);
            if (!p || p->format == WeightFormat::f32) return;
            if (!p->panels) throw Error(Error::Code::bad_state, "16-bit weights are multiplied as panels: use_panels() first");
            storage = p->format == WeightFormat::bf16 ? Storage::panels_bf16 : Storage::panels_f16;
        });
        out.layers[l].panels = storage;
    }
    return out;
}

ParamSlots resolve_slots(const ModelConfig& c, const Parameters& params) {
    ParamSlots slots = resolve_slots(c);
    mark_panels(slots, params);
    return slots;
}

Parameters::Parameters(const ModelConfig& config) : Parameters(config, WeightFormat::f32) {}

namespace {
bool product_matrix(const std::string& name);

/// Stored as 16-bit values in a 16-bit Parameters: the product matrices the kernels read as
/// panels, the token embedding and the unembedding (the large tensors).
bool stored_half(const ParamInfo& p) {
    return !p.vector && ((product_matrix(p.name) && fits_panels(p.cols)) || p.name == "embed" || p.name == "unembed");
}
}  // namespace

namespace {

/// Where Parameters(config, format, chunk_bytes) puts the values: how many floats, and how many
/// 16-bit values each chunk holds.
struct Placement {
    std::size_t floats = 0;
    std::vector<std::size_t> chunks;
    std::uint64_t bytes() const {
        std::uint64_t b = std::uint64_t{floats} * 4;
        for (const std::size_t n : chunks) b += std::uint64_t{n} * 2;
        return b;
    }
};

/// Sets each tensor's format and place (ParamInfo::stored, chunk): the 16-bit ones in layout order
/// into chunks of at most `chunk_bytes` (a larger tensor alone in its own), each whole in its chunk.
Placement place(std::vector<ParamInfo>& layout, WeightFormat format, std::size_t chunk_bytes) {
    Placement out;
    const std::size_t most = chunk_bytes / 2;  // 16-bit values a chunk holds
    for (ParamInfo& p : layout) {
        if (format != WeightFormat::f32 && stored_half(p)) {
            const std::size_t n = (p.size() + 7) / 8 * 8;  // each tensor 16-byte aligned, for the SIMD loads
            if (out.chunks.empty() || (out.chunks.back() > 0 && n > most - std::min(most, out.chunks.back())))
                out.chunks.push_back(0);
            p.format = format;
            p.chunk = static_cast<std::uint32_t>(out.chunks.size() - 1);
            p.stored = out.chunks.back();
            out.chunks.back() += n;
        } else {
            p.stored = out.floats;
            out.floats += p.size();
        }
    }
    return out;
}

std::string shape_of(const ParamInfo& p) { return std::to_string(p.rows) + " × " + std::to_string(p.cols); }

/// The bytes with thousands separators ("2,147,483,648").
std::string grouped(std::uint64_t n) {
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

/// allocation_refusal() of a placed layout.
std::string refusal_of(const std::vector<ParamInfo>& layout, const Placement& placed, std::uint64_t ceiling) {
    const auto above = [&](std::uint64_t bytes) {
        return grouped(bytes) + " bytes, above the " + grouped(ceiling) + " bytes (" + format_bytes(static_cast<std::int64_t>(ceiling)) +
               ") one allocation holds in this engine";
    };
    for (const ParamInfo& p : layout)  // (a chunk above the ceiling holds one tensor: place() with chunk_bytes ≤ ceiling)
        if (p.format != WeightFormat::f32 && std::uint64_t{placed.chunks[p.chunk]} * 2 > ceiling)
            return "the model's tensor " + p.name + " (" + shape_of(p) + ", " + weight_format_name(p.format) + ") takes " +
                   above(std::uint64_t{placed.chunks[p.chunk]} * 2) + ": a tensor is never split between allocations";
    if (std::uint64_t{placed.floats} * 4 > ceiling)
        return "the model's float32 values, one allocation, take " + above(std::uint64_t{placed.floats} * 4);
    return {};
}

}  // namespace

std::uint64_t parameter_bytes(const ModelConfig& config, WeightFormat format) {
    std::vector<ParamInfo> layout = parameter_layout(config);
    return place(layout, format, kHalfChunkBytes).bytes();
}

std::string allocation_refusal(const ModelConfig& config, WeightFormat format, std::uint64_t ceiling) {
    std::vector<ParamInfo> layout = parameter_layout(config);
    // chunks no larger than the ceiling: one above it is a single tensor
    const Placement placed = place(layout, format, static_cast<std::size_t>(std::min<std::uint64_t>(kHalfChunkBytes, ceiling)));
    return refusal_of(layout, placed, ceiling);
}

Parameters::Parameters(const ModelConfig& config, WeightFormat format, std::size_t chunk_bytes)
    : layout_(parameter_layout(config)) {
    if (chunk_bytes < 16) throw Error("the 16-bit chunk size must be 16 bytes at least, got " + std::to_string(chunk_bytes));
    half_format_ = format;
    for (const ParamInfo& p : layout_) count_ += p.size();
    const Placement placed = place(layout_, format, static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes, kMaxAllocationBytes)));
    if (placed.chunks.empty()) half_format_ = WeightFormat::f32;
    // the 16-bit chunks are new allocations: each within one allocation's ceiling (the float32
    // values are one vector, as they always were: a bad_alloc says when they do not fit)
    for (const std::size_t n : placed.chunks)
        if (std::uint64_t{n} * 2 > kMaxAllocationBytes)
            throw Error(Error::Code::too_large, refusal_of(layout_, placed, kMaxAllocationBytes));
    data_.assign(placed.floats, 0.0f);
    chunks_.resize(placed.chunks.size());
    for (std::size_t i = 0; i < chunks_.size(); ++i) chunks_[i].assign(placed.chunks[i], 0);
}

const std::uint16_t* Parameters::half_data(const ParamInfo& p) const {
    if (p.format == WeightFormat::f32 || p.chunk >= chunks_.size() || p.stored + p.size() > chunks_[p.chunk].size())
        throw Error(Error::Code::internal, "the parameter \"" + p.name + "\" has no 16-bit values here");
    return chunks_[p.chunk].data() + p.stored;
}

std::uint16_t* Parameters::half_data(const ParamInfo& p) {
    return const_cast<std::uint16_t*>(static_cast<const Parameters&>(*this).half_data(p));
}

std::vector<std::size_t> Parameters::half_chunk_bytes() const {
    std::vector<std::size_t> out;
    for (const std::vector<std::uint16_t>& c : chunks_) out.push_back(c.capacity() * sizeof(std::uint16_t));
    return out;
}

std::size_t Parameters::bytes() const {
    std::size_t b = data_.capacity() * sizeof(float);
    for (const std::vector<std::uint16_t>& c : chunks_) b += c.capacity() * sizeof(std::uint16_t);
    return b;
}

const ParamInfo* Parameters::at_offset(std::size_t offset) const {
    const auto it = std::lower_bound(layout_.begin(), layout_.end(), offset,
                                     [](const ParamInfo& p, std::size_t o) { return p.offset < o; });
    return it != layout_.end() && it->offset == offset ? &*it : nullptr;
}

void Parameters::promote(const std::string& prefix) {
    std::size_t add = 0;
    for (const ParamInfo& p : layout_)
        if (p.format != WeightFormat::f32 && p.name.compare(0, prefix.size(), prefix) == 0) add += p.size();
    if (add == 0) return;
    data_.reserve(data_.size() + add);  // one allocation, not one per tensor
    for (ParamInfo& p : layout_) {
        if (p.format == WeightFormat::f32 || p.name.compare(0, prefix.size(), prefix) != 0) continue;
        const std::size_t at = data_.size();
        data_.resize(at + p.size());
        half::widen(half_data(p), p.size(), p.format, data_.data() + at);  // panels stay panels
        p.format = WeightFormat::f32;
        p.stored = at;
        p.chunk = 0;
    }
    // a chunk that holds no 16-bit tensor now is freed
    std::vector<bool> used(chunks_.size(), false);
    for (const ParamInfo& p : layout_)
        if (p.format != WeightFormat::f32) used[p.chunk] = true;
    for (std::size_t i = 0; i < chunks_.size(); ++i)
        if (!used[i]) std::vector<std::uint16_t>().swap(chunks_[i]);
    if (std::find(used.begin(), used.end(), true) != used.end()) return;
    chunks_.clear();
    half_format_ = WeightFormat::f32;
}

const ParamInfo& Parameters::info(const std::string& name) const {
    for (const ParamInfo& p : layout_)
        if (p.name == name) return p;
    throw Error("the model has no parameter \"" + name + "\"");
}

bool Parameters::has(const std::string& name) const {
    for (const ParamInfo& p : layout_)
        if (p.name == name) return true;
    return false;
}

namespace {

const ParamInfo& row_major_info(const Parameters& params, const std::string& name) {
    const ParamInfo& p = params.info(name);
    if (p.panels)
        throw Error(Error::Code::bad_state, "the parameter \"" + name + "\" is stored as panels: it has no row-major view");
    if (p.format != WeightFormat::f32)
        throw Error(Error::Code::bad_state, "the parameter \"" + name + "\" is stored as 16-bit values: it has no float32 view");
    return p;
}

/// The blocks' product matrices, by their leaf names (use_panels).
bool product_matrix(const std::string& name) {
    if (name.compare(0, 7, "layers.") != 0) return false;
    const std::size_t dot = name.find('.', 7);
    if (dot == std::string::npos) return false;
    const std::string leaf = name.substr(dot + 1);
    return leaf == "w_query" || leaf == "w_key" || leaf == "w_value" || leaf == "w_output" || leaf == "mlp.w_gate" ||
           leaf == "mlp.w_in" || leaf == "mlp.w_out";
}

}  // namespace

Eigen::Map<Matrix> Parameters::view(const std::string& name) {
    const ParamInfo& p = row_major_info(*this, name);
    return Eigen::Map<Matrix>(data_.data() + p.stored, p.rows, p.cols);
}

Eigen::Map<const Matrix> Parameters::view(const std::string& name) const {
    const ParamInfo& p = row_major_info(*this, name);
    return Eigen::Map<const Matrix>(data_.data() + p.stored, p.rows, p.cols);
}

Matrix Parameters::matrix(const std::string& name) const {
    const ParamInfo& p = info(name);
    if (p.format != WeightFormat::f32) {
        Matrix m(p.rows, p.cols);
        const std::uint16_t* h = half_data(p);
        if (p.panels) unpack_matrix_panels(h, p.format, p.rows, p.cols, m.data());
        else half::widen(h, p.size(), p.format, m.data());
        return m;
    }
    const float* d = data_.data() + p.stored;
    if (!p.panels) return Eigen::Map<const Matrix>(d, p.rows, p.cols);
    Matrix m(p.rows, p.cols);
    unpack_matrix_panels(d, p.rows, p.cols, m.data());
    return m;
}

void Parameters::use_panels() {
    if (panels_) return;
    std::vector<float> tmp;
    std::vector<std::uint16_t> tmp16;
    for (ParamInfo& p : layout_) {
        if (p.vector || !product_matrix(p.name) || !fits_panels(p.cols)) continue;
        if (p.format != WeightFormat::f32) {
            std::uint16_t* h = half_data(p);
            tmp16.assign(h, h + p.size());
            pack_matrix_panels(tmp16.data(), p.rows, p.cols, h);
        } else {
            float* d = data_.data() + p.stored;
            tmp.assign(d, d + p.size());
            pack_matrix_panels(tmp.data(), p.rows, p.cols, d);
        }
        p.panels = true;
    }
    panels_ = true;
}

void Parameters::set_zero() {
    std::fill(data_.begin(), data_.end(), 0.0f);
    for (std::vector<std::uint16_t>& c : chunks_) std::fill(c.begin(), c.end(), std::uint16_t{0});
}

void init_parameters(const ModelConfig& config, std::uint32_t seed, Parameters& params) {
    validate_inference_config(config);
    params = Parameters(config);
    for (const ParamInfo& p : params.layout()) {
        float* out = params.flat().data() + p.offset;
        const std::string& n = p.name;
        const bool gain = n.size() > 5 && n.compare(n.size() - 5, 5, ".gain") == 0;
        if (p.vector) {  // biases 0, gains 1
            std::fill(out, out + p.size(), gain ? 1.0f : 0.0f);
            continue;
        }
        const float limit = (n == "embed" || n == "pos" || n == "token_type")
                                ? kUnitVarianceLimit
                                : static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.rows)));
        const auto stream = static_cast<Stream>(name_stream(n));
        for (int r = 0; r < p.rows; ++r)
            counter_uniform_row(seed, stream, static_cast<std::uint64_t>(r), limit,
                                [&](int j, float v) { out[static_cast<std::size_t>(r) * p.cols + j] = v; }, p.cols);
    }
}

}  // namespace attn
