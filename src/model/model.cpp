#include "model/model.hpp"

#include "kernels/gemm.hpp"
#include "base/hash.hpp"
#include "kernels/kernels.hpp"
#include "model/layers.hpp"
#include "attention/mask.hpp"
#include "base/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
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

// ---- config and parameters ------------------------------------------------------------

const char* activation_name(Activation a) { return a == Activation::gelu_tanh ? "gelu_tanh" : "gelu_erf"; }

Activation parse_activation(const std::string& name) {
    if (name == "gelu_erf") return Activation::gelu_erf;
    if (name == "gelu_tanh") return Activation::gelu_tanh;
    throw Error("activation must be \"gelu_erf\" or \"gelu_tanh\", got \"" + name.substr(0, 32) + "\"");
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
    const int C = c.d_model, F = c.mlp;
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
            add(layer_name(l, "ln1.bias"), 1, C, true, false, ls.ln1_bias);
        }
        add(layer_name(l, "w_query"), C, C, false, true, ls.w_query);
        if (c.attn_bias) add(layer_name(l, "b_query"), 1, C, true, false, ls.b_query);
        add(layer_name(l, "w_key"), C, C, false, true, ls.w_key);
        if (c.attn_bias) add(layer_name(l, "b_key"), 1, C, true, false, ls.b_key);
        add(layer_name(l, "w_value"), C, C, false, true, ls.w_value);
        if (c.attn_bias) add(layer_name(l, "b_value"), 1, C, true, false, ls.b_value);
        add(layer_name(l, "w_output"), C, C, false, true, ls.w_output);
        if (c.attn_bias) add(layer_name(l, "b_output"), 1, C, true, false, ls.b_output);
        if (F > 0) {
            if (c.layernorm) {
                add(layer_name(l, "ln2.gain"), 1, C, true, false, ls.ln2_gain);
                add(layer_name(l, "ln2.bias"), 1, C, true, false, ls.ln2_bias);
            }
            add(layer_name(l, "mlp.w_in"), C, F, false, true, ls.w_in);
            add(layer_name(l, "mlp.b_in"), 1, F, true, false, ls.b_in);
            add(layer_name(l, "mlp.w_out"), F, C, false, true, ls.w_out);
            add(layer_name(l, "mlp.b_out"), 1, C, true, false, ls.b_out);
        }
    }
    if (c.layernorm && c.norm == Norm::pre) {
        add("final_ln.gain", 1, C, true, false, s.final_ln_gain);
        add("final_ln.bias", 1, C, true, false, s.final_ln_bias);
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

ParamSlots resolve_slots(const ModelConfig& c, const Parameters& params) {
    ParamSlots slots = resolve_slots(c);
    mark_panels(slots, params);
    return slots;
}

Parameters::Parameters(const ModelConfig& config) : layout_(parameter_layout(config)) {
    std::size_t n = 0;
    for (const ParamInfo& p : layout_) n += p.size();
    data_.assign(n, 0.0f);
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
    return p;
}

/// The blocks' product matrices, by their leaf names (use_panels).
bool product_matrix(const std::string& name) {
    if (name.compare(0, 7, "layers.") != 0) return false;
    const std::size_t dot = name.find('.', 7);
    if (dot == std::string::npos) return false;
    const std::string leaf = name.substr(dot + 1);
    return leaf == "w_query" || leaf == "w_key" || leaf == "w_value" || leaf == "w_output" || leaf == "mlp.w_in" ||
           leaf == "mlp.w_out";
}

}  // namespace

Eigen::Map<Matrix> Parameters::view(const std::string& name) {
    const ParamInfo& p = row_major_info(*this, name);
    return Eigen::Map<Matrix>(data_.data() + p.offset, p.rows, p.cols);
}

Eigen::Map<const Matrix> Parameters::view(const std::string& name) const {
    const ParamInfo& p = row_major_info(*this, name);
    return Eigen::Map<const Matrix>(data_.data() + p.offset, p.rows, p.cols);
}

Matrix Parameters::matrix(const std::string& name) const {
    const ParamInfo& p = info(name);
    const float* d = data_.data() + p.offset;
    if (!p.panels) return Eigen::Map<const Matrix>(d, p.rows, p.cols);
    Matrix m(p.rows, p.cols);
    unpack_matrix_panels(d, p.rows, p.cols, m.data());
    return m;
}

void Parameters::use_panels() {
    if (panels_) return;
    std::vector<float> tmp;
    for (ParamInfo& p : layout_) {
        if (p.vector || !product_matrix(p.name) || !fits_panels(p.cols)) continue;
        float* d = data_.data() + p.offset;
        tmp.assign(d, d + p.size());
        pack_matrix_panels(tmp.data(), p.rows, p.cols, d);
        p.panels = true;
    }
    panels_ = true;
}

void Parameters::set_zero() { std::fill(data_.begin(), data_.end(), 0.0f); }

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

// ---- memory ---------------------------------------------------------------------------

namespace {

/// a·b in 64 bits; throws too_large instead of wrapping (the validated
/// limits keep every product of the estimate far below 2⁶³: this is the
/// guarantee, not the expected path).
std::int64_t mul(std::int64_t a, std::int64_t b) {
    std::int64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out))
        throw Error(Error::Code::too_large, "a training size overflows 64 bits (" + std::to_string(a) + " × " +
                                                std::to_string(b) + ")");
    return out;
}

std::int64_t parameter_count(const ModelConfig& c) {
    std::int64_t n = 0;
    for (const ParamInfo& p : parameter_layout(c)) n += mul(p.rows, p.cols);
    return n;
}

}  // namespace

std::string format_bytes(std::int64_t bytes) {
    char buf[48];
    const double b = static_cast<double>(bytes);
    if (b >= 1e9)
        std::snprintf(buf, sizeof buf, "%.1f GB", b / 1e9);
    else if (b >= 1e6)
        std::snprintf(buf, sizeof buf, "%.0f MB", b / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.0f kB", std::max(1.0, b / 1e3));
    return buf;
}

namespace {

/// Why m is refused: the largest part named with the settings that make it, the limit, what to lower.
std::string refusal(const TrainingMemory& m, const ModelConfig& c, int batch, int length) {
    const std::string limit = "; the limit for training is " + format_bytes(kMaxTrainingBytes) + " in all";
    std::string what;
    const std::int64_t model_bytes = m.parameters + m.gradients + m.optimizer;
    if (m.attention >= m.activations + m.scratch && m.attention >= model_bytes)
        what = "batch " + std::to_string(batch) + " × " + std::to_string(c.heads) + " heads × " +
               std::to_string(length) + "² tokens × " + std::to_string(c.layers) + (c.layers == 1 ? " layer" : " layers") +
               " needs " + format_bytes(m.attention) + " of attention weights (" + format_bytes(m.total()) +
               " for the whole step)" + limit + " — lower batch, heads, length or layers";
    else if (m.activations + m.scratch >= model_bytes)
        what = "batch " + std::to_string(batch) + " × " + std::to_string(length) + " tokens × " +
               std::to_string(c.layers) + (c.layers == 1 ? " layer" : " layers") + " of width " +
               std::to_string(std::max({c.d_model, c.vocab, c.mlp})) + " needs " +
               format_bytes(m.activations + m.scratch) + " of activations (" + format_bytes(m.total()) +
               " for the whole step)" + limit + " — lower batch, length, layers, d_model, mlp or the vocabulary";
    else
        what = "a model of " + std::to_string(m.parameters / 4) + " parameters needs " + format_bytes(model_bytes) +
               " for its weights, gradients and AdamW state (" + format_bytes(m.total()) + " for the whole step)" +
               limit + " — lower d_model, layers, mlp or the vocabulary";
    return what;
}

}  // namespace

namespace {
TrainingMemory memory_parts(const ModelConfig& c, int batch, int length);
}

TrainingMemory training_memory(const ModelConfig& c, int batch, int length) {
    validate_model_config(c);
    return memory_parts(c, batch, length);
}

namespace {
/// training_memory() without the training limits' check (a loaded model's learn_memory uses it too).
TrainingMemory memory_parts(const ModelConfig& c, int batch, int length) {
    if (batch < 1) throw Error("a batch needs at least 1 sequence, got " + std::to_string(batch));
    if (length < 1) throw Error("a sequence needs at least 1 token, got " + std::to_string(length));
    constexpr std::int64_t kFloat = sizeof(float);  // ids and targets are int32: the same 4 bytes
    const std::int64_t B = batch, T = length, C = c.d_model, H = c.heads, D = C / H, F = c.mlp, V = c.vocab,
                       L = c.layers, P = parameter_count(c);
    const std::int64_t N = mul(B, T), TT = mul(T, T);
    const bool mlp = F > 0;
    TrainingMemory m;
    m.parameters = mul(P, kFloat);
    m.gradients = mul(P, kFloat);
    m.optimizer = mul(mul(P, 5), kFloat);
    // per layer: input, normed, q, k, v, concat, mid (+ m with an MLP): N×C each;
    // pre, act: N×F; LayerNorm means and rstds: N each. After the layers:
    // x_final, normed_final (N×C), logits and their gradient (N×V), final
    // LayerNorm statistics (2N); ids and targets, the batch's and the model's
    // copies (4N) and the lengths (B).
    const std::int64_t per_layer = mul(N, C) * ((mlp ? 8 : 7) + (c.norm == Norm::post ? 2 : 0)) + mul(mul(N, F), 2) + mul(N, 4);
    m.activations = mul(mul(per_layer, L) + mul(mul(N, C), 2 + (c.embed_layernorm ? 1 : 0) + (c.output_transform ? 3 : 0)) + mul(mul(N, V), 2) + mul(N, 6) + B, kFloat);
    m.attention = mul(mul(mul(mul(L, B), H), TT), kFloat);
    // forward: x and tmp (N×C), the sinusoids (T×C), scores (T×T), a head's output (T×D);
    // backward: dx, its LayerNorm copy, dconcat, dq, dk, dv, da, dm (N×C), dact (N×F),
    // tmp (the largest weight gradient or N×C), dp and ds (T×T); the gemm
    // workspace: both operands of a product packed, rows and columns padded
    // (kernels.hpp: tiles of 4 rows, panels of 8 columns; 8 is a bound of both).
    const std::int64_t widest = std::max({C, V, F});
    const std::int64_t operand = std::max({mul(N + 8, widest + 8), mul(C + 8, widest + 8), mul(F + 8, C + 8),
                                           mul(T + 8, T + 8), mul(V + 8, C + 8)});
    const std::int64_t largest_weight = std::max({mul(V, C), mul(C, F), mul(C, C), mul(N, C)});
    m.scratch = mul(mul(mul(N, C), 10 + (c.output_transform ? 2 : 0) + (c.embed_layernorm ? 1 : 0)) + mul(N, F) + largest_weight + mul(TT, 3) + mul(T, C) + mul(T, D) +
                        mul(operand, 2),
                    kFloat);
    if (!m.fits()) m.refusal = refusal(m, c, batch, length);
    return m;
}
}  // namespace

std::int64_t learn_memory(const ModelConfig& c, int length) {
    validate_inference_config(c);
    const TrainingMemory m = memory_parts(c, 1, length);
    const std::int64_t T = length, C = c.d_model, H = c.heads, D = C / H, F = c.mlp, V = c.vocab;
    // the trace: logits, probabilities and d_logits (T×V each); every layer's vectors
    // (input, normed, residual, mlp_*, output, concat, the attention's output: 8 T×C, 2 T×F;
    // d_output, d_input and d_attention: 3 T×C); the asked layer's heads: per head 3 T×T and
    // 4 T×D of the forward and 4 T×T and 3 T×D of the gradients; the embeddings (5 T×C); the
    // layer's gradients (at most 4C² + 2CF + 4C + F + 4C floats), and a row-major copy of
    // the largest product matrix (C·max(C, F)) that the backward of a model whose weights
    // are panels (Parameters::use_panels) multiplies by.
    const std::int64_t trace = mul(mul(T, V), 3) + mul(mul(mul(T, C), 11) + mul(mul(T, F), 2), c.layers) +
                               mul(H, mul(mul(T, T), 7) + mul(mul(T, D), 7)) + mul(mul(T, C), 5);
    const std::int64_t layer = mul(mul(C, C), 4) + mul(mul(C, F), 2) + mul(C, 8) + F + mul(C, std::max(C, F));
    return m.activations + m.attention + m.scratch + mul(trace + layer, 4);
}

void check_training_memory(const ModelConfig& c, int batch, int length) {
    const TrainingMemory m = training_memory(c, batch, length);
    if (!m.fits()) throw Error(Error::Code::too_large, m.refusal);
}
// ---- batches ----------------------------------------------------------------------------

namespace {

void validate_batch(const ModelConfig& c, const Batch& batch) {
    if (batch.batch < 1) throw Error("a batch needs at least 1 sequence, got " + std::to_string(batch.batch));
    if (batch.length < 1 || batch.length > c.context)
        throw Error("sequence length " + std::to_string(batch.length) + " is outside 1 … the model's context " +
                    std::to_string(c.context));
    const std::int64_t n = std::int64_t{batch.batch} * batch.length;
    if (static_cast<std::int64_t>(batch.ids.size()) != n || static_cast<std::int64_t>(batch.targets.size()) != n)
        throw Error("a batch of " + std::to_string(batch.batch) + "×" + std::to_string(batch.length) + " needs " +
                    std::to_string(n) + " ids and targets, got " + std::to_string(batch.ids.size()) + " and " +
                    std::to_string(batch.targets.size()));
    if (!batch.lengths.empty() && batch.lengths.size() != static_cast<std::size_t>(batch.batch))
        throw Error("lengths has " + std::to_string(batch.lengths.size()) + " entries for " +
                    std::to_string(batch.batch) + " sequences");
    for (int b = 0; b < batch.batch; ++b) {
        const int len = batch.real_length(b);
        if (len < 0 || len > batch.length)
            throw Error("sequence " + std::to_string(b) + " has length " + std::to_string(len) + ", outside 0 … " +
                        std::to_string(batch.length));
        for (int t = 0; t < batch.length; ++t) {
            const std::int32_t id = batch.id(b, t), target = batch.target(b, t);
            if (id < 0 || id >= c.vocab)
                throw Error("token id " + std::to_string(id) + " at sequence " + std::to_string(b) + ", position " +
                            std::to_string(t) + " is outside the vocabulary 0 … " + std::to_string(c.vocab - 1));
            if (target < kNoTarget || target >= c.vocab)
                throw Error("target " + std::to_string(target) + " at sequence " + std::to_string(b) +
                            ", position " + std::to_string(t) + " is outside −1 … " + std::to_string(c.vocab - 1));
            if (t >= len && target != kNoTarget)
                throw Error("sequence " + std::to_string(b) + " has a target at position " + std::to_string(t) +
                            ", past its length " + std::to_string(len));
        }
    }
}

}  // namespace
// ---- the model: a loop over the layer kinds ---------------------------------------------

namespace detail {

/// What one block keeps of a forward for its backward.
struct LayerState {
    Matrix input;   // N×C residual stream in
    Matrix normed;  // N×C the attention's input (LN1 output in pre-LN; a copy of input otherwise)
    LayerNormCache ln1, ln2;
    AttentionCache attention;
    Matrix sum1;    // post-LN: input + attention output, before LN1
    Matrix mid;     // N×C: pre-LN input + attention output; post-LN LN1(sum1)
    Matrix m;       // N×C the MLP's input (pre-LN: LN2(mid))
    MlpCache mlp;
    Matrix sum2;    // post-LN: mid + MLP output, before LN2
};

struct ForwardState {
    ParamSlots slots;  // built once per Model (the layout cannot change: the config is fixed)
    int B = 0, T = 0;
    std::vector<int> lengths;
    std::vector<std::int32_t> ids, targets;
    ForwardOptions options;
    bool causal = false;
    EmbeddingCache embedding;
    std::vector<LayerState> layers;  // L when kept for backward, 1 (reused) when only run
    Matrix x_final, normed_final, logits, logits_grad;
    LayerNormCache final_ln;
    HeadCache head;
    int target_count = 0;
};

}  // namespace detail

using detail::ForwardState;
using detail::LayerState;

namespace {

/// Softmax of each logits row, in double (the trace's probabilities): one exp
/// per logit, kept for the division (T·V of them: 26 M at T = 512 with GPT-2's
/// vocabulary).
Matrix row_softmax(const Matrix& logits) {
    Matrix out(logits.rows(), logits.cols());
    std::vector<double> e(static_cast<std::size_t>(logits.cols()));
    for (Eigen::Index i = 0; i < logits.rows(); ++i) {
        const float mx = logits.row(i).maxCoeff();
        double sum = 0;
        for (Eigen::Index j = 0; j < logits.cols(); ++j) {
            e[static_cast<std::size_t>(j)] = std::exp(static_cast<double>(logits(i, j)) - mx);
            sum += e[static_cast<std::size_t>(j)];
        }
        for (Eigen::Index j = 0; j < logits.cols(); ++j)
            out(i, j) = static_cast<float>(e[static_cast<std::size_t>(j)] / sum);
    }
    return out;
}

/// The k likeliest tokens of row i of `probabilities` into ids[0…k) and p[0…k): the largest
/// first, equal probabilities by id. order: scratch of V entries.
void top_of_row(const Matrix& probabilities, Eigen::Index i, int k, std::vector<int>& order, std::int32_t* ids, float* p) {
    const int V = static_cast<int>(probabilities.cols());
    order.resize(static_cast<std::size_t>(V));
    for (int j = 0; j < V; ++j) order[static_cast<std::size_t>(j)] = j;
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) {
        const float pa = probabilities(i, a), pb = probabilities(i, b);
        return pa > pb || (pa == pb && a < b);
    });
    for (int j = 0; j < k; ++j) {
        ids[j] = order[static_cast<std::size_t>(j)];
        p[j] = probabilities(i, ids[j]);
    }
}

/// The output head of a recorded run: kTraceLogitRows positions at a time (their logits, the
/// softmax as row_softmax computes it, its top-k; both copied into the trace when it keeps
/// the logits), so the unembedding is never packed whole for one large product (154 MB at
/// GPT-2 small) and, without the trace's logits, no N×V matrix is ever whole. The products'
/// entries do not depend on the rows beside them (gemm.hpp): the whole product's numbers.
CrossEntropy head_in_blocks(const ModelConfig& cfg, const ParamPtrs& p, const Matrix& h,
                            const std::vector<std::int32_t>& targets, ModelTrace& tr, bool keep_logits, int top_k) {
    const int N = static_cast<int>(h.rows()), C = cfg.d_model, V = cfg.vocab;
    const int k = std::min(top_k, V);
    tr.top_k = k;
    tr.top_ids.assign(static_cast<std::size_t>(N) * k, 0);
    tr.top_p.assign(static_cast<std::size_t>(N) * k, 0.0f);
    if (cfg.output_transform) tr.transformed.resize(N, C);
    if (keep_logits) {
        tr.logits.resize(N, V);
        tr.probabilities.resize(N, V);
    }
    Matrix rows, logits;
    HeadCache head;
    std::vector<int> order;
    CrossEntropy out;
    double loss = 0;
    for (int r0 = 0; r0 < N; r0 += kTraceLogitRows) {
        const int n = std::min(kTraceLogitRows, N - r0);
        rows = h.middleRows(r0, n);
        head_forward(cfg, p, rows, head, logits);
        const std::vector<std::int32_t> block_targets(targets.begin() + r0, targets.begin() + r0 + n);
        const CrossEntropy ce = cross_entropy(logits, block_targets, nullptr);
        loss += ce.loss * ce.targets;
        out.targets += ce.targets;
        out.correct += ce.correct;
        if (cfg.output_transform) tr.transformed.middleRows(r0, n) = head.transformed;
        const Matrix probabilities = row_softmax(logits);
        if (keep_logits) {
            tr.logits.middleRows(r0, n) = logits;
            tr.probabilities.middleRows(r0, n) = probabilities;
        }
        for (int i = 0; i < n; ++i)
            top_of_row(probabilities, i, k, order, tr.top_ids.data() + static_cast<std::size_t>(r0 + i) * k,
                       tr.top_p.data() + static_cast<std::size_t>(r0 + i) * k);
    }
    out.loss = out.targets > 0 ? loss / out.targets : 0.0;
    return out;
}

/// The forward of one block (x: its input, then its output).
/// lt (a recorder's layer, or null): its heads' matrices when keep_heads, its vectors when keep_vectors.
void block_forward(const ModelConfig& cfg, const LayerParams<const float*>& p, const AttentionRun& run, LayerState& c,
                   Matrix& x, AttentionStatsSum& stats, LayerTrace* lt, bool keep_heads, bool keep_vectors) {
    if (lt && !keep_heads && !keep_vectors) lt = nullptr;
    const bool post = cfg.norm == Norm::post;
    Matrix tmp;
    c.input = x;
    if (cfg.layernorm && !post)
        layernorm_forward(c.input, p.ln1_gain, p.ln1_bias, cfg.ln_eps, c.normed, c.ln1);
    else
        c.normed = c.input;
    attention_forward(cfg, p, c.normed, run, c.attention, tmp, &stats, lt && keep_heads ? &lt->attention : nullptr);
    if (post) {
        c.sum1 = c.input + tmp;
        layernorm_forward(c.sum1, p.ln1_gain, p.ln1_bias, cfg.ln_eps, c.mid, c.ln1);
    } else {
        c.mid = c.input + tmp;
    }
    if (lt && keep_vectors) {
        lt->input = c.input;
        lt->normed = c.normed;
        if (!keep_heads) {
            lt->attention.concat = c.attention.concat;
            lt->attention.output = tmp;
        }
        lt->residual = post ? c.sum1 : c.mid;
        if (post) lt->mlp_normed = c.mid;
    }
    x = c.mid;
    if (cfg.mlp > 0) {
        if (cfg.layernorm && !post)
            layernorm_forward(c.mid, p.ln2_gain, p.ln2_bias, cfg.ln_eps, c.m, c.ln2);
        else
            c.m = c.mid;
        mlp_forward(cfg, p, c.m, c.mlp, tmp);
        if (post) {
            c.sum2 = c.mid + tmp;
            layernorm_forward(c.sum2, p.ln2_gain, p.ln2_bias, cfg.ln_eps, x, c.ln2);
        } else {
            x += tmp;
        }
        if (lt && keep_vectors) {
            lt->mlp_normed = c.m;
            lt->mlp_hidden = c.mlp.act;
            lt->mlp_output = tmp;
        }
    }
    if (lt && keep_vectors) lt->output = x;
}

/// The backward of one block: dx, ∂loss/∂(its output), becomes ∂loss/∂(its input).
void block_backward(const ModelConfig& cfg, const LayerParams<const float*>& p, const LayerParams<float*>& g,
                    const AttentionRun& run, const LayerState& c, Matrix& dx, double& score_grad_sq,
                    std::vector<HeadGradTrace>* heads, Matrix* d_attention) {
    const int N = static_cast<int>(dx.rows()), C = cfg.d_model;
    Matrix dm, da;
    if (cfg.norm == Norm::post) {
        Matrix dmid;
        if (cfg.mlp > 0) {  // x = LN2(mid + MLP(mid))
            Matrix dsum2 = Matrix::Zero(N, C);
            layernorm_backward(c.sum2, p.ln2_gain, c.ln2, dx, dsum2, g.ln2_gain, g.ln2_bias);
            mlp_backward(cfg, p, g, c.m, c.mlp, dsum2, dm);
            dmid = dsum2 + dm;
        } else {
            dmid = dx;
        }
        Matrix dsum1 = Matrix::Zero(N, C);  // mid = LN1(input + MHA(input))
        layernorm_backward(c.sum1, p.ln1_gain, c.ln1, dmid, dsum1, g.ln1_gain, g.ln1_bias);
        if (d_attention) *d_attention = dsum1;
        attention_backward(cfg, p, g, c.normed, run, c.attention, dsum1, da, score_grad_sq, heads);
        dx = dsum1 + da;
        return;
    }
    if (cfg.mlp > 0) {  // x = mid + MLP(m), m = LN2(mid)
        mlp_backward(cfg, p, g, c.m, c.mlp, dx, dm);
        if (cfg.layernorm)
            layernorm_backward(c.mid, p.ln2_gain, c.ln2, dm, dx, g.ln2_gain, g.ln2_bias);
        else
            dx += dm;
    }
    // mid = input + MHA(normed), normed = LN1(input)
    if (d_attention) *d_attention = dx;
    attention_backward(cfg, p, g, c.normed, run, c.attention, dx, da, score_grad_sq, heads);
    if (cfg.layernorm)
        layernorm_backward(c.input, p.ln1_gain, c.ln1, da, dx, g.ln1_gain, g.ln1_bias);
    else
        dx += da;
}

AttentionRun attention_run(const ModelConfig& cfg, const ForwardState& s, int layer) {
    AttentionRun run;
    run.B = s.B;
    run.T = s.T;
    run.lengths = &s.lengths;
    run.causal = s.causal;
    const int D = cfg.d_model / cfg.heads;
    const bool scale = s.options.scale_override < 0 ? cfg.scale : s.options.scale_override == 1;
    run.scale = scale ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(D))) : 1.0f;
    run.layer = layer;
    run.options = &s.options;
    return run;
}

/// The forward of a validated batch on `params` (of cfg's layout; s.slots are set
/// from it: where each tensor is, and whether the product matrices are panels).
/// keep: every layer's activations stay for backward (else one layer's buffers are
/// reused); need_grad: the logits' gradient is computed.
LossResult forward_pass(const ModelConfig& cfg, const Parameters& params, ForwardState& s, const Batch& batch,
                        const ForwardOptions& options, Recorder* recorder, bool keep) {
    if (recorder && batch.batch != 1)
        throw Error("a recorder keeps the trace of one sequence; the batch has " + std::to_string(batch.batch));
    if (s.slots.layers.size() != static_cast<std::size_t>(cfg.layers)) s.slots = resolve_slots(cfg);
    mark_panels(s.slots, params);
    const ParamPtrs p = bind(s.slots, params.flat().data());
    const int B = batch.batch, T = batch.length;
    s.B = B;
    s.T = T;
    s.ids = batch.ids;
    s.targets = batch.targets;
    s.lengths.resize(static_cast<std::size_t>(B));
    for (int b = 0; b < B; ++b) s.lengths[static_cast<std::size_t>(b)] = batch.real_length(b);
    s.options = options;
    s.causal = options.causal_override < 0 ? cfg.causal : options.causal_override == 1;
    s.layers.resize(keep ? static_cast<std::size_t>(cfg.layers) : 1);

    ModelTrace* tr = recorder ? &recorder->trace : nullptr;
    if (tr) {
        *tr = ModelTrace{};
        tr->ids = batch.ids;
        tr->length = s.lengths[0];
        tr->mask = build_mask(s.causal ? MaskKind::causal_padding : MaskKind::padding, T, tr->length);
        tr->layers.resize(static_cast<std::size_t>(cfg.layers));
        recorder->gradients = GradientTrace{};
    }
    Matrix x;
    embedding_forward(cfg, p, s.ids, B, T, s.embedding, x, tr);
    AttentionStatsSum stats;
    for (int l = 0; l < cfg.layers; ++l) {
        LayerState& c = s.layers[keep ? static_cast<std::size_t>(l) : 0];
        block_forward(cfg, p.layers[static_cast<std::size_t>(l)], attention_run(cfg, s, l), c, x, stats,
                      tr ? &tr->layers[static_cast<std::size_t>(l)] : nullptr, recorder && recorder->keeps(l),
                      recorder && recorder->keeps_vectors(l));
    }
    s.x_final = std::move(x);
    if (cfg.layernorm && cfg.norm == Norm::pre)
        layernorm_forward(s.x_final, p.final_ln_gain, p.final_ln_bias, cfg.ln_eps, s.normed_final, s.final_ln);
    else
        s.normed_final = s.x_final;
    CrossEntropy ce;
    if (tr && !keep) {  // a recorded run: the trace has the logits (when it keeps them); Model::logits() is empty
        s.logits.resize(0, 0);
        tr->final_normed = s.normed_final;
        ce = head_in_blocks(cfg, p, s.normed_final, s.targets, *tr, recorder->logits, recorder->top_k);
    } else {
        head_forward(cfg, p, s.normed_final, s.head, s.logits);
        ce = cross_entropy(s.logits, s.targets, keep ? &s.logits_grad : nullptr);
        if (tr) {
            tr->final_normed = s.normed_final;
            if (cfg.output_transform) tr->transformed = s.head.transformed;
            tr->logits = s.logits;
            tr->probabilities = row_softmax(s.logits);
            const int k = std::min(recorder->top_k, cfg.vocab);  // a training forward's (rarely asked)
            tr->top_k = k;
            tr->top_ids.assign(static_cast<std::size_t>(s.T) * k, 0);
            tr->top_p.assign(static_cast<std::size_t>(s.T) * k, 0.0f);
            std::vector<int> order;
            for (int i = 0; i < s.T; ++i)
                top_of_row(tr->probabilities, i, k, order, tr->top_ids.data() + static_cast<std::size_t>(i) * k,
                           tr->top_p.data() + static_cast<std::size_t>(i) * k);
        }
    }
    s.target_count = ce.targets;
    LossResult result;
    result.loss = ce.loss;
    result.targets = ce.targets;
    result.correct = ce.correct;
    if (stats.rows > 0) {
        result.stats.score_variance = stats.variance / static_cast<double>(stats.rows);
        result.stats.row_entropy = stats.entropy / static_cast<double>(stats.rows);
    }
    return result;
}

/// run_memory()'s parts, in floats.
struct RunParts {
    std::int64_t run = 0;      ///< the forward's own buffers and the products' workspace
    std::int64_t logits = 0;   ///< the output head: whole logits (and the trace's copies), or one block's
    std::int64_t vectors = 0;  ///< the trace's embeddings, final vectors and the kept layers' vectors
    std::int64_t heads = 0;    ///< the kept layers' heads (Q, K, V, scores, scaled, weights, output)
    std::int64_t total() const { return run + logits + vectors + heads; }
};

/// What a forward-only run allocates (forward_pass with keep = false), buffer by buffer.
RunParts run_parts(const ModelConfig& c, int batch, int length, const TraceKeep* keep) {
    const std::int64_t B = batch, T = length, C = c.d_model, H = c.heads, D = C / H, F = c.mlp, V = c.vocab,
                       L = c.layers;
    const std::int64_t N = mul(B, T), NC = mul(N, C), TT = mul(T, T), TC = mul(T, C);
    RunParts r;
    // the one LayerState reused by every layer: input, normed, sum1, mid, m, sum2 (6 N×C), q, k, v,
    // concat (4 N×C), the weights (B·H·T²), pre and act (2 N×F), 4 LayerNorm statistics (N each);
    // x and a block's tmp (2 N×C); after the layers x_final and normed_final (2 N×C) and their
    // statistics (2 N); the embedding's sum before LN_e (N×C), statistics (2 N) and sinusoids (T×C);
    // one head's scores (T×T) and output (T×D)
    r.run = mul(NC, 15) + mul(mul(N, F), 2) + mul(mul(B, H), TT) + mul(N, 8) + TC + TT + mul(T, D);
    // and 1 MB for what is not counted one by one: ids, targets, lengths, the allocator's headers
    r.run += (1 << 20) / 4;
    // the products' workspace: row tiles of a left operand (at most N rows, of C, F or T columns) and
    // the packed right operand: a weight (C×C, C×F, F×C), K or V of a head (D×T, T×D), or a block of
    // 64 columns of the unembedding (C×64); kernels.hpp pads rows to 4 and columns to 8
    const std::int64_t right = std::max({mul(C + 8, C + 8), mul(C + 8, F + 8), mul(T + 8, D + 8), mul(C + 8, 64)});
    r.run += mul(N + 8, std::max({C, F, T}) + 8) + right;
    if (!keep) {
        // logits (N×V), the unembedding packed whole for the one product ((V + 8)×C), the
        // cross-entropy's exps (V), the MLM head's pre, act and transformed (3 N×C)
        r.logits = mul(N, V) + mul(V + 8, C + 8) + V + (c.output_transform ? mul(NC, 3) : 0);
        return r;
    }
    // a recorded run's head, in blocks of R rows (head_in_blocks): the normed rows, the head cache
    // (3 R×C), logits and probabilities (2 R×V), the cross-entropy's and row_softmax's exps (V floats,
    // V doubles), the top-k's order (V ints); the trace's logits and probabilities (2 T×V) when kept
    const std::int64_t R = std::min<std::int64_t>(kTraceLogitRows, N);
    r.logits = mul(mul(R, C), 4) + mul(mul(R, V), 2) + 4 * V + (keep->logits ? mul(mul(T, V), 2) : 0);
    const std::int64_t k = std::min<std::int64_t>(std::max(keep->top_k, 0), V);
    r.logits += mul(mul(T, k), 2);  // top_ids, top_p
    // embeddings, positional, token_type, embed_normed, final_normed, transformed (6 T×C); the mask
    // (T² bytes) and ids
    r.vectors = mul(TC, 6) + TT / 4 + 1 + T;
    // per layer whose vectors are kept: input, normed, residual, mlp_normed, mlp_output, output, the
    // attention's concat and output (8 T×C), mlp_hidden (T×F)
    const std::int64_t vector_layers = keep->vectors < 0 ? L : 1, head_layers = keep->layer < 0 ? L : 1;
    r.vectors += mul(vector_layers, mul(TC, 8) + mul(T, F));
    // per layer whose heads are kept: each head's scores, scaled, weights (3 T×T), query, key,
    // value, output (4 T×D), row_max, row_sum (2 T); the attention's concat and output (2 T×C)
    r.heads = mul(head_layers, mul(H, mul(TT, 3) + mul(T, 4 * D) + 2 * T) + mul(TC, 2));
    return r;
}

/// Why a run of `length` tokens keeping `keep` is refused: its size, its largest parts, what to ask instead.
std::string run_refusal(const std::string& what, const RunParts& r, const TraceKeep* keep) {
    std::string out = what + " needs " + format_bytes(r.total() * 4) + ", more than the " +
                      format_bytes(kMaxTrainingBytes) + " limit";
    if (!keep) return out + " — use fewer tokens";
    struct Part {
        std::int64_t floats;
        std::string name, way;  // way: empty when it is already the least there is
    };
    std::vector<Part> parts = {
        {r.logits, keep->logits ? "the full logits and probabilities" : "the output head", keep->logits ? "ask for the top-k next tokens instead of the full logits" : ""},
        {r.vectors, keep->vectors < 0 ? "every layer's vectors" : "the vectors of one layer", keep->vectors < 0 ? "keep one layer's vectors" : ""},
        {r.heads, keep->layer < 0 ? "every layer's heads" : "the heads of one layer", keep->layer < 0 ? "trace one layer" : ""},
    };
    std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.floats > b.floats; });
    out += " (";
    std::vector<std::string> ways;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        out += (i ? "; " : "") + parts[i].name + " " + format_bytes(parts[i].floats * 4);
        if (!parts[i].way.empty()) ways.push_back(parts[i].way);
    }
    out += ") — ";
    for (const std::string& w : ways) out += w + ", ";
    return out + (ways.empty() ? "use fewer tokens" : "or use fewer tokens");
}

}  // namespace

std::int64_t run_memory(const ModelConfig& config, int batch, int length, const TraceKeep* keep) {
    return run_parts(config, batch, length, keep).total() * 4;
}

namespace {

TraceKeep keep_of(const Recorder& r) {
    TraceKeep k;
    k.layer = r.layer;
    k.vectors = r.vectors;
    k.logits = r.logits;
    k.top_k = r.top_k;
    return k;
}

}  // namespace

Model::Model(const ModelConfig& config) : config_(config) {
    validate_inference_config(config_);
    params_ = Parameters(config_);
    state_ = new ForwardState();
    state_->slots = resolve_slots(config_);
}

Model::Model(const ModelConfig& config, Parameters params) : Model(config) {
    if (params.size() != params_.size())
        throw Error("the parameters have " + std::to_string(params.size()) + " values; the config's layout has " +
                    std::to_string(params_.size()));
    params_ = std::move(params);
}

Model::~Model() { delete state_; }

const Matrix& Model::logits() const { return state_->logits; }

Eigen::Map<const Matrix> Model::attention(int b, int layer, int head) const {
    const ForwardState& s = *state_;
    const bool kept = trained_forward_ || layer == config_.layers - 1;
    if (b < 0 || b >= s.B || layer < 0 || layer >= config_.layers || head < 0 || head >= config_.heads || !kept)
        throw Error("attention(" + std::to_string(b) + ", " + std::to_string(layer) + ", " + std::to_string(head) +
                    ") is outside the last forward's " + std::to_string(s.B) + " sequences, " +
                    std::to_string(trained_forward_ ? config_.layers : 1) + " kept layers, " +
                    std::to_string(config_.heads) + " heads");
    const std::int64_t tt = std::int64_t{s.T} * s.T;
    const std::int64_t block = std::int64_t{b} * config_.heads + head;
    const LayerState& c = s.layers[trained_forward_ ? static_cast<std::size_t>(layer) : 0];
    return Eigen::Map<const Matrix>(c.attention.weights.data() + static_cast<std::size_t>(block * tt), s.T, s.T);
}

LossResult Model::forward(const Batch& batch, const ForwardOptions& options, Recorder* recorder) {
    if (!trainable_checked_) {
        validate_model_config(config_);  // a model that is trained: the training limits
        trainable_checked_ = true;
    }
    validate_batch(config_, batch);
    // before anything is allocated, once per batch shape; from here on every buffer holds fewer than
    // 2²⁸ floats (kMaxTrainingBytes / 4), so each index within one (N·C, N·V, B·H·T²) fits an int
    if (batch.batch != checked_batch_ || batch.length != checked_length_) {
        check_training_memory(config_, batch.batch, batch.length);
        checked_batch_ = batch.batch;
        checked_length_ = batch.length;
    }
    trained_forward_ = false;
    const LossResult r = forward_pass(config_, params_, *state_, batch, options, recorder, true);
    trained_forward_ = true;
    return r;
}

LossResult Model::run(const Batch& batch, const ForwardOptions& options, Recorder* recorder) {
    validate_batch(config_, batch);
    const TraceKeep keep = recorder ? keep_of(*recorder) : TraceKeep{};
    const RunParts parts = run_parts(config_, batch.batch, batch.length, recorder ? &keep : nullptr);
    if (parts.total() * 4 > kMaxTrainingBytes)
        throw Error(Error::Code::too_large,
                    run_refusal("running batch " + std::to_string(batch.batch) + " × " + std::to_string(batch.length) +
                                    " tokens" + (recorder ? " with a trace" : ""),
                                parts, recorder ? &keep : nullptr));
    trained_forward_ = false;
    return forward_pass(config_, params_, *state_, batch, options, recorder, false);
}

namespace {

/// The backward of the last forward from the loss down to layer `lowest` (its
/// gradients included): the head, LN_f, then the blocks from the top. The one
/// loop of Model::backward (lowest 0, then the embeddings) and
/// Model::backward_layer. dx: out, ∂loss/∂(layer `lowest`'s input stream) (N, C).
/// Returns Σ ‖∂loss/∂scaled scores‖² of the layers visited.
double backward_to_layer(const ModelConfig& config, ForwardState& s, const ParamPtrs& p, const GradPtrs& g, int lowest,
                         Recorder* recorder, Matrix& dx) {
    const int N = s.B * s.T, C = config.d_model;
    GradientTrace* gt = recorder ? &recorder->gradients : nullptr;
    if (gt) {
        gt->d_logits = s.logits_grad;
        gt->layers.assign(static_cast<std::size_t>(config.layers), LayerGradTrace{});
    }
    Matrix dh;
    head_backward(config, p, g, s.normed_final, s.head, s.logits_grad, dh);
    if (config.layernorm && config.norm == Norm::pre) {
        dx.setZero(N, C);
        layernorm_backward(s.x_final, p.final_ln_gain, s.final_ln, dh, dx, g.final_ln_gain, g.final_ln_bias);
    } else {
        dx = std::move(dh);
    }
    double score_grad_sq = 0;
    for (int l = config.layers - 1; l >= lowest; --l) {
        LayerGradTrace* lt = gt ? &gt->layers[static_cast<std::size_t>(l)] : nullptr;
        if (lt) lt->d_output = dx;
        block_backward(config, p.layers[static_cast<std::size_t>(l)], g.layers[static_cast<std::size_t>(l)],
                       attention_run(config, s, l), s.layers[static_cast<std::size_t>(l)], dx, score_grad_sq,
                       lt && recorder->keeps(l) ? &lt->heads : nullptr, lt && recorder->keeps(l) ? &lt->d_attention : nullptr);
        if (lt) lt->d_input = dx;
    }
    return score_grad_sq;
}

}  // namespace

void Model::backward(Parameters& grads, AttentionStats* stats, Recorder* recorder) {
    ForwardState& s = *state_;
    if (!trained_forward_) throw Error(Error::Code::bad_state, "backward() needs a forward() first");
    if (recorder && s.B != 1) throw Error("a recorder keeps the gradients of one sequence; the batch has " + std::to_string(s.B));
    if (grads.size() != params_.size()) grads = Parameters(config_);
    grads.set_zero();
    const ParamPtrs p = bind(s.slots, static_cast<const float*>(params_.flat().data()));
    const GradPtrs g = bind(s.slots, grads.flat().data());
    Matrix dx;
    const double score_grad_sq = backward_to_layer(config_, s, p, g, 0, recorder, dx);
    embedding_backward(config_, p, g, s.ids, s.B, s.T, s.embedding, dx);
    if (stats) stats->score_grad_norm = std::sqrt(score_grad_sq);
}

Eigen::Map<const Matrix> LayerGradients::view(const std::string& name) const {
    for (const ParamInfo& i : layout)
        if (i.name == name) return {flat.data() + i.offset, i.rows, i.cols};
    throw Error("layer " + std::to_string(layer) + " has no gradient named \"" + name + "\"");
}

bool LayerGradients::has(const std::string& name) const {
    for (const ParamInfo& i : layout)
        if (i.name == name) return true;
    return false;
}

LossResult Model::learn_forward(const Batch& batch, const ForwardOptions& options, Recorder* recorder) {
    validate_batch(config_, batch);
    if (batch.batch != 1)
        throw Error("the backward of a loaded model reads one sentence; the batch has " + std::to_string(batch.batch));
    const std::int64_t need = learn_memory(config_, batch.length);
    if (need > kMaxLearnBytes)
        throw Error(Error::Code::too_large,
                    "the backward of " + std::to_string(batch.length) + " tokens through this model needs " +
                        format_bytes(need) + " beyond its weights; the limit is " + format_bytes(kMaxLearnBytes) +
                        " — use a shorter sentence");
    trained_forward_ = false;
    const LossResult r = forward_pass(config_, params_, *state_, batch, options, recorder, true);
    trained_forward_ = true;
    return r;
}

void Model::backward_layer(int layer, LayerGradients& grads, Recorder* recorder) {
    ForwardState& s = *state_;
    if (!trained_forward_) throw Error(Error::Code::bad_state, "backward_layer() needs a learn_forward() first");
    if (layer < 0 || layer >= config_.layers)
        throw Error("layer " + std::to_string(layer) + " is not in this model (" + std::to_string(config_.layers) +
                    " layers, from 0)");
    if (recorder && s.B != 1) throw Error("a recorder keeps the gradients of one sequence; the batch has " + std::to_string(s.B));
    // the layer's tensors, contiguous in the layout: their own small buffer
    const std::string prefix = "layers." + std::to_string(layer) + ".";
    grads.layer = layer;
    grads.layout.clear();
    std::size_t base = 0, n = 0;
    for (const ParamInfo& info : params_.layout()) {
        if (info.name.compare(0, prefix.size(), prefix) != 0) continue;
        if (grads.layout.empty()) base = info.offset;
        if (info.offset != base + n) throw Error(Error::Code::bad_state, "layer " + std::to_string(layer) + "'s tensors are not contiguous");
        ParamInfo i = info;
        i.offset = n;
        i.panels = false;  // gradients are row-major
        n += info.size();
        grads.layout.push_back(i);
    }
    grads.flat.assign(n, 0.0f);
    const ParamPtrs p = bind(s.slots, static_cast<const float*>(params_.flat().data()));
    GradPtrs g;  // null everywhere (not asked for) but the layer's tensors
    g.layers.resize(static_cast<std::size_t>(config_.layers));
    zip_layer_fields(g.layers[static_cast<std::size_t>(layer)], s.slots.layers[static_cast<std::size_t>(layer)],
                     [&](float*& ptr, const Slot& slot) {
                         ptr = slot.offset < 0 ? nullptr : grads.flat.data() + (static_cast<std::size_t>(slot.offset) - base);
                     });
    Matrix dx;  // the layers below do not change the asked layer's gradients: not visited
    backward_to_layer(config_, s, p, g, layer, recorder, dx);
}

namespace {

/// The batch of one that a trace runs: ids of T tokens, the first `length` real.
Batch trace_batch(const ModelConfig& config, const std::vector<std::int32_t>& ids, int length) {
    const int T = static_cast<int>(ids.size());
    if (T < 1 || T > config.context)
        throw Error(Error::Code::too_long_for_model, "a sequence of " + std::to_string(T) +
                                                         " tokens is outside 1 … the model's context " +
                                                         std::to_string(config.context));
    if (length < 0) length = T;
    if (length < 1 || length > T) throw Error("length " + std::to_string(length) + " is outside 1 … " + std::to_string(T));
    for (std::size_t t = 0; t < ids.size(); ++t)
        if (ids[t] < 0 || ids[t] >= config.vocab)
            throw Error("token id " + std::to_string(ids[t]) + " at position " + std::to_string(t) +
                        " is outside the vocabulary 0 … " + std::to_string(config.vocab - 1));
    Batch b;
    b.batch = 1;
    b.length = T;
    b.ids = ids;
    b.targets.assign(ids.size(), kNoTarget);
    if (length < T) b.lengths = {length};
    return b;
}

}  // namespace

ModelTrace Model::trace(const std::vector<std::int32_t>& ids, int length, const ForwardOptions& options, int layer) {
    return trace_model(config_, params_, ids, length, options, layer);
}

ModelTrace Model::trace(const std::vector<std::int32_t>& ids, int length, const ForwardOptions& options,
                        const TraceKeep& keep) {
    return trace_model(config_, params_, ids, length, options, keep);
}

ModelTrace trace_model(const ModelConfig& config, const Parameters& params, const std::vector<std::int32_t>& ids,
                       int length, const ForwardOptions& options, int layer) {
    TraceKeep keep;
    keep.layer = layer;
    return trace_model(config, params, ids, length, options, keep);
}

ModelTrace trace_model(const ModelConfig& config, const Parameters& params, const std::vector<std::int32_t>& ids,
                       int length, const ForwardOptions& options, const TraceKeep& keep) {
    const int layer = keep.layer;
    validate_inference_config(config);
    std::size_t expected = 0;
    for (const ParamInfo& p : parameter_layout(config)) expected += p.size();
    if (params.size() != expected)
        throw Error("the parameters have " + std::to_string(params.size()) + " values; the config's layout has " +
                    std::to_string(expected));
    if (layer < -1 || layer >= config.layers)
        throw Error("trace layer " + std::to_string(layer) + " is outside -1 (all) … " + std::to_string(config.layers - 1));
    if (keep.vectors < -1 || keep.vectors >= config.layers)
        throw Error("trace vectors " + std::to_string(keep.vectors) + " is outside -1 (all) … " + std::to_string(config.layers - 1));
    if (keep.top_k < 0) throw Error("trace top_k " + std::to_string(keep.top_k) + " is negative");
    const Batch b = trace_batch(config, ids, length);
    validate_batch(config, b);
    const RunParts parts = run_parts(config, 1, b.length, &keep);
    if (parts.total() * 4 > kMaxTrainingBytes)
        throw Error(Error::Code::too_large, run_refusal("tracing " + std::to_string(b.length) + " tokens", parts, &keep));
    ForwardState s;
    Recorder recorder;
    recorder.layer = layer;
    recorder.vectors = keep.vectors;
    recorder.logits = keep.logits;
    recorder.top_k = keep.top_k;
    forward_pass(config, params, s, b, options, &recorder, false);
    return std::move(recorder.trace);
}

}  // namespace attn
