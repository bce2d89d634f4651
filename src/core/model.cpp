#include "model.hpp"

#include "gemm.hpp"
#include "hash.hpp"
#include "kernels.hpp"
#include "mask.hpp"
#include "random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace attn {
namespace {

constexpr float kLayerNormEps = 1e-5f;

void check_range(const char* what, long long value, long long lo, long long hi) {
    if (value < lo || value > hi)
        throw Error(std::string(what) + " must be from " + std::to_string(lo) + " to " + std::to_string(hi) +
                    ", got " + std::to_string(value));
}

/// A parameter's random stream, so that adding a tensor never changes another
/// one's initial values: FNV-1a 64 of its name (hash.hpp) started from
/// 1469598103934665603, FNV's offset basis 14695981039346656037 without its
/// last digit. Not FNV-1a's published values: a typo, kept because every seeded
/// initialisation depends on it (the fixed-seed tests, the shipped models).
constexpr std::uint64_t kNameStreamBasis = 1469598103934665603ULL;
std::uint64_t name_stream(const std::string& name) { return fnv1a64(name, kNameStreamBasis); }

std::string layer_name(int l, const char* leaf) { return "layers." + std::to_string(l) + "." + leaf; }

// ---- LayerNorm over the rows of x (N×C): y = (x − μ)/σ·g + b, σ = √(var + ε) ----

void layernorm_forward(const Matrix& x, const float* gain, const float* bias, Matrix& y, std::vector<float>& mean,
                       std::vector<float>& rstd) {
    const Eigen::Index n = x.rows(), c = x.cols();
    y.resize(n, c);
    mean.resize(static_cast<std::size_t>(n));
    rstd.resize(static_cast<std::size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i) {
        const float* xi = x.data() + i * c;
        double s = 0;
        for (Eigen::Index j = 0; j < c; ++j) s += xi[j];
        const double mu = s / static_cast<double>(c);
        double v = 0;
        for (Eigen::Index j = 0; j < c; ++j) v += (xi[j] - mu) * (xi[j] - mu);
        const float r = static_cast<float>(1.0 / std::sqrt(v / static_cast<double>(c) + kLayerNormEps));
        const float m = static_cast<float>(mu);
        mean[static_cast<std::size_t>(i)] = m;
        rstd[static_cast<std::size_t>(i)] = r;
        float* yi = y.data() + i * c;
        for (Eigen::Index j = 0; j < c; ++j) yi[j] = (xi[j] - m) * r * gain[j] + bias[j];
    }
}

/// dx += LN backward of dy; dgain, dbias += their gradients.
///   dx = (g·dy − mean(g·dy) − x̂·mean(g·dy ⊙ x̂)) / σ
void layernorm_backward(const Matrix& x, const float* gain, const std::vector<float>& mean,
                        const std::vector<float>& rstd, const Matrix& dy, Matrix& dx, float* dgain, float* dbias) {
    const Eigen::Index n = x.rows(), c = x.cols();
    std::vector<float> xhat(static_cast<std::size_t>(c)), gdy(static_cast<std::size_t>(c));
    for (Eigen::Index i = 0; i < n; ++i) {
        const float* xi = x.data() + i * c;
        const float* dyi = dy.data() + i * c;
        const float m = mean[static_cast<std::size_t>(i)], r = rstd[static_cast<std::size_t>(i)];
        double sum_g = 0, sum_gx = 0;
        for (Eigen::Index j = 0; j < c; ++j) {
            const float h = (xi[j] - m) * r;
            xhat[static_cast<std::size_t>(j)] = h;
            const float g = gain[j] * dyi[j];
            gdy[static_cast<std::size_t>(j)] = g;
            sum_g += g;
            sum_gx += static_cast<double>(g) * h;
            dgain[j] += dyi[j] * h;
            dbias[j] += dyi[j];
        }
        const float mean_g = static_cast<float>(sum_g / static_cast<double>(c));
        const float mean_gx = static_cast<float>(sum_gx / static_cast<double>(c));
        float* dxi = dx.data() + i * c;
        for (Eigen::Index j = 0; j < c; ++j)
            dxi[j] += (gdy[static_cast<std::size_t>(j)] - mean_g - xhat[static_cast<std::size_t>(j)] * mean_gx) * r;
    }
}

// ---- GELU, exact: x·Φ(x) = 0.5·x·(1 + erf(x/√2)) ----

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

float gelu(float x) { return static_cast<float>(0.5 * x * (1.0 + std::erf(x * kInvSqrt2))); }
float gelu_grad(float x) {
    const double cdf = 0.5 * (1.0 + std::erf(x * kInvSqrt2));
    const double pdf = kInvSqrt2Pi * std::exp(-0.5 * static_cast<double>(x) * x);
    return static_cast<float>(cdf + x * pdf);
}

/// What attention_row() found in a row: the largest scaled score over the
/// allowed keys and the softmax's denominator Σ_j exp(s_j·scale − max) (in
/// double; 0 under uniform attention, which computes no exponentials).
struct RowWeights {
    float max = 0;
    double sum = 0;
};

/// The attention weights of one query row over its allowed keys 0 … end−1
/// (end ≥ 1) from its unscaled scores: the softmax of scores·scale (pass 1:
/// max; pass 2: exp, sum in double; pass 3: normalise), or exactly 1/end on
/// each under uniform attention (ForwardOptions::uniform_attention). Keys from
/// `end` on are not written. The one per-row rule of Model::forward and
/// trace_model.
RowWeights attention_row(const float* scores, float scale, int end, bool uniform, float* weights) {
    RowWeights out;
    out.max = scores[0] * scale;
    for (int j = 1; j < end; ++j) out.max = std::max(out.max, scores[j] * scale);
    if (uniform) {
        for (int j = 0; j < end; ++j) weights[j] = 1.0f / static_cast<float>(end);
        return out;
    }
    for (int j = 0; j < end; ++j) {
        weights[j] = std::exp(scores[j] * scale - out.max);
        out.sum += weights[j];
    }
    const float inv = static_cast<float>(1.0 / out.sum);
    for (int j = 0; j < end; ++j) weights[j] *= inv;
    return out;
}

/// Replaces the softmax of every head of `trace` by uniform attention over the
/// keys `mask` allows (a prefix of each row: padding and causal masks), and
/// recomputes each head's output, the concatenation and its product with W_O.
/// Under uniform attention row_max is 0 and row_sum the number of allowed keys
/// n (the softmax of n equal scores: weights = exp(0)/n).
void make_uniform(MultiHeadTrace& trace, const MaskMatrix& mask, const Matrix& w_output) {
    const Eigen::Index T = mask.rows();
    const int H = static_cast<int>(trace.heads.size());
    const Eigen::Index D = H > 0 ? trace.concat.cols() / H : 0;
    for (int h = 0; h < H; ++h) {
        HeadTrace& ht = trace.heads[static_cast<std::size_t>(h)];
        ht.weights.setZero(T, T);
        for (Eigen::Index i = 0; i < T; ++i) {
            int end = 0;
            while (end < T && mask(i, end)) ++end;
            ht.row_max(i) = 0.0f;
            ht.row_sum(i) = static_cast<float>(end);
            if (end > 0) attention_row(ht.scores.data() + i * T, 1.0f, end, true, ht.weights.data() + i * T);
        }
        gemm(ht.weights, ht.value, ht.output);  // (T, T)·(T, D)
        trace.concat.middleCols(h * D, D) = ht.output;
    }
    gemm(trace.concat, w_output, trace.output);  // (T, C)
}

void add_row_vector(Matrix& m, const float* v) {
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        for (Eigen::Index j = 0; j < m.cols(); ++j) m(i, j) += v[j];
}

void add_column_sums(const Matrix& m, float* out) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
        double s = 0;
        for (Eigen::Index i = 0; i < m.rows(); ++i) s += m(i, j);
        out[j] += static_cast<float>(s);
    }
}

}  // namespace

// ---- config and parameters ------------------------------------------------------------

void validate_model_config(const ModelConfig& c) {
    check_range("vocab", c.vocab, 2, kMaxModelVocab);
    check_range("context", c.context, 1, kMaxModelContext);
    check_range("layers", c.layers, 1, kMaxModelLayers);
    check_range("d_model", c.d_model, 1, kMaxModelDModel);
    check_range("heads", c.heads, 1, c.d_model);
    if (c.d_model % c.heads != 0)
        throw Error("d_model " + std::to_string(c.d_model) + " is not divisible by " + std::to_string(c.heads) +
                    " heads");
    check_range("mlp", c.mlp, 0, kMaxModelMlp);
}

std::vector<ParamInfo> parameter_layout(const ModelConfig& c) {
    std::vector<ParamInfo> out;
    std::size_t offset = 0;
    auto add = [&](std::string name, int rows, int cols, bool vector, bool decay) {
        ParamInfo p;
        p.name = std::move(name);
        p.rows = rows;
        p.cols = cols;
        p.vector = vector;
        p.decay = decay;
        p.offset = offset;
        offset += p.size();
        out.push_back(std::move(p));
    };
    const int C = c.d_model;
    add("embed", c.vocab, C, false, true);
    if (c.positional == Positional::learned) add("pos", c.context, C, false, true);
    for (int l = 0; l < c.layers; ++l) {
        if (c.layernorm) {
            add(layer_name(l, "ln1.gain"), 1, C, true, false);
            add(layer_name(l, "ln1.bias"), 1, C, true, false);
        }
        add(layer_name(l, "w_query"), C, C, false, true);
        add(layer_name(l, "w_key"), C, C, false, true);
        add(layer_name(l, "w_value"), C, C, false, true);
        add(layer_name(l, "w_output"), C, C, false, true);
        if (c.mlp > 0) {
            if (c.layernorm) {
                add(layer_name(l, "ln2.gain"), 1, C, true, false);
                add(layer_name(l, "ln2.bias"), 1, C, true, false);
            }
            add(layer_name(l, "mlp.w_in"), C, c.mlp, false, true);
            add(layer_name(l, "mlp.b_in"), 1, c.mlp, true, false);
            add(layer_name(l, "mlp.w_out"), c.mlp, C, false, true);
            add(layer_name(l, "mlp.b_out"), 1, C, true, false);
        }
    }
    if (c.layernorm) {
        add("final_ln.gain", 1, C, true, false);
        add("final_ln.bias", 1, C, true, false);
    }
    if (!c.tied) add("unembed", C, c.vocab, false, true);
    return out;
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

Eigen::Map<Matrix> Parameters::view(const std::string& name) {
    const ParamInfo& p = info(name);
    return Eigen::Map<Matrix>(data_.data() + p.offset, p.rows, p.cols);
}

Eigen::Map<const Matrix> Parameters::view(const std::string& name) const {
    const ParamInfo& p = info(name);
    return Eigen::Map<const Matrix>(data_.data() + p.offset, p.rows, p.cols);
}

void Parameters::set_zero() { std::fill(data_.begin(), data_.end(), 0.0f); }

void init_parameters(const ModelConfig& config, std::uint32_t seed, Parameters& params) {
    validate_model_config(config);
    params = Parameters(config);
    for (const ParamInfo& p : params.layout()) {
        float* out = params.flat().data() + p.offset;
        const std::string& n = p.name;
        const bool gain = n.size() > 5 && n.compare(n.size() - 5, 5, ".gain") == 0;
        if (p.vector) {  // biases 0, gains 1
            std::fill(out, out + p.size(), gain ? 1.0f : 0.0f);
            continue;
        }
        const float limit = (n == "embed" || n == "pos")
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

TrainingMemory training_memory(const ModelConfig& c, int batch, int length) {
    validate_model_config(c);
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
    const std::int64_t per_layer = mul(N, C) * (mlp ? 8 : 7) + mul(mul(N, F), 2) + mul(N, 4);
    m.activations = mul(mul(per_layer, L) + mul(mul(N, C), 2) + mul(mul(N, V), 2) + mul(N, 6) + B, kFloat);
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
    m.scratch = mul(mul(mul(N, C), 10) + mul(N, F) + largest_weight + mul(TT, 3) + mul(T, C) + mul(T, D) +
                        mul(operand, 2),
                    kFloat);
    if (!m.fits()) m.refusal = refusal(m, c, batch, length);
    return m;
}

void check_training_memory(const ModelConfig& c, int batch, int length) {
    const TrainingMemory m = training_memory(c, batch, length);
    if (!m.fits()) throw Error(Error::Code::too_large, m.refusal);
}

// ---- the fast model --------------------------------------------------------------------

struct Model::LayerCache {
    Matrix input;                       // N×C residual stream in
    Matrix normed;                      // N×C LN1 output (a copy of input without layernorm)
    std::vector<float> ln1_mean, ln1_rstd;
    Matrix q, k, v;                     // N×C, head h = columns h·D …
    std::vector<float> weights;         // B·H blocks of T×T softmax weights
    Matrix concat;                      // N×C
    Matrix mid;                         // N×C: input + concat·W_O
    Matrix m;                           // N×C LN2 output
    std::vector<float> ln2_mean, ln2_rstd;
    Matrix pre, act;                    // N×F before and after GELU
};

Model::Model(const ModelConfig& config) : config_(config) {
    validate_model_config(config_);
    params_ = Parameters(config_);
    for (int l = 0; l < config_.layers; ++l) layers_.push_back(new LayerCache());
}

Model::~Model() {
    for (LayerCache* c : layers_) delete c;
}

Eigen::Map<const Matrix> Model::attention(int b, int layer, int head) const {
    if (b < 0 || b >= batch_ || layer < 0 || layer >= config_.layers || head < 0 || head >= config_.heads)
        throw Error("attention(" + std::to_string(b) + ", " + std::to_string(layer) + ", " + std::to_string(head) +
                    ") is outside the last forward's " + std::to_string(batch_) + " sequences, " +
                    std::to_string(config_.layers) + " layers, " + std::to_string(config_.heads) + " heads");
    const std::int64_t tt = std::int64_t{length_} * length_;
    const std::int64_t block = std::int64_t{b} * config_.heads + head;
    return Eigen::Map<const Matrix>(
        layers_[static_cast<std::size_t>(layer)]->weights.data() + static_cast<std::size_t>(block * tt), length_, length_);
}

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

LossResult Model::forward(const Batch& batch, const ForwardOptions& options) {
    validate_batch(config_, batch);
    // before anything is allocated; from here on every buffer holds fewer than 2²⁸ floats
    // (kMaxTrainingBytes / 4), so each index within one (N·C, N·V, B·H·T²) fits an int
    check_training_memory(config_, batch.batch, batch.length);
    const int B = batch.batch, T = batch.length, C = config_.d_model, H = config_.heads, D = C / H, V = config_.vocab;
    const int N = B * T;
    batch_ = B;
    length_ = T;
    ids_ = batch.ids;
    targets_ = batch.targets;
    lengths_.resize(static_cast<std::size_t>(B));
    for (int b = 0; b < B; ++b) lengths_[static_cast<std::size_t>(b)] = batch.real_length(b);
    options_ = options;
    causal_ = options.causal_override < 0 ? config_.causal : options.causal_override == 1;
    const float scale = config_.scale ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(D))) : 1.0f;

    // x = E[ids] + P[0:T]                                                    (N, C)
    Matrix x(N, C);
    const auto embed = params_.view("embed");
    Matrix sinusoid;
    if (config_.positional == Positional::sinusoidal) sinusoid = positional_encoding(Positional::sinusoidal, T, C, 0);
    for (int b = 0; b < B; ++b)
        for (int t = 0; t < T; ++t) {
            const int row = b * T + t;
            x.row(row) = embed.row(batch.id(b, t));
            if (config_.positional == Positional::learned) x.row(row) += params_.view("pos").row(t);
            if (config_.positional == Positional::sinusoidal) x.row(row) += sinusoid.row(t);
        }

    LossResult result;
    double var_sum = 0, entropy_sum = 0;
    long long entropy_rows = 0;
    Matrix tmp, scores, head_out;
    for (int l = 0; l < config_.layers; ++l) {
        LayerCache& c = *layers_[static_cast<std::size_t>(l)];
        c.input = x;
        if (config_.layernorm)
            layernorm_forward(c.input, params_.view(layer_name(l, "ln1.gain")).data(),
                              params_.view(layer_name(l, "ln1.bias")).data(), c.normed, c.ln1_mean, c.ln1_rstd);
        else
            c.normed = c.input;
        gemm(c.normed, params_.view(layer_name(l, "w_query")), c.q);  // (N, C)·(C, C)
        gemm(c.normed, params_.view(layer_name(l, "w_key")), c.k);
        gemm(c.normed, params_.view(layer_name(l, "w_value")), c.v);
        c.weights.assign(static_cast<std::size_t>(std::int64_t{B} * H * T * T), 0.0f);  // fits: checked above
        c.concat.setZero(N, C);
        for (int b = 0; b < B; ++b) {
            const int len = lengths_[static_cast<std::size_t>(b)];
            for (int h = 0; h < H; ++h) {
                const bool enabled = options.head_on(l, h);
                float* w = c.weights.data() + static_cast<std::size_t>((std::int64_t{b} * H + h) * T * T);
                const auto q = c.q.block(b * T, h * D, T, D), k = c.k.block(b * T, h * D, T, D);
                gemm_bt(q, k, scores);  // (T, D)·(D, T)
                // pass 1: max over the allowed keys j < end(i); pass 2: exp, sum in
                // double; pass 3: normalise. Hidden keys stay exact zeros.
                for (int i = 0; i < T; ++i) {
                    const int end = causal_ ? std::min(i + 1, len) : len;
                    float* wi = w + static_cast<std::size_t>(i) * T;
                    const float* si = scores.data() + static_cast<std::ptrdiff_t>(i) * T;
                    if (end <= 0) continue;
                    const RowWeights row = attention_row(si, scale, end, options.uniform_attention, wi);
                    const float mx = row.max;
                    const double sum = row.sum;
                    if (i < len) {  // statistics over the real queries
                        // entropy without a log per entry: log p_j = (s_j − max) − log Z,
                        // so H = log Z − Σ_j p_j·(s_j − max)
                        double mean = 0, m2 = 0, expect = 0;
                        for (int j = 0; j < end; ++j) mean += si[j] * scale;
                        mean /= end;
                        for (int j = 0; j < end; ++j) {
                            const double sj = si[j] * scale;
                            m2 += (sj - mean) * (sj - mean);
                            expect += wi[j] * (sj - mx);
                        }
                        var_sum += m2 / end;
                        entropy_sum += options.uniform_attention ? std::log(static_cast<double>(end))
                                                                 : std::max(0.0, std::log(sum) - expect);
                        ++entropy_rows;
                    }
                }
                if (!enabled) continue;  // an ablated head's output stays zero
                const Eigen::Map<const Matrix> weights(w, T, T);
                gemm(weights, c.v.block(b * T, h * D, T, D), head_out);  // (T, T)·(T, D)
                c.concat.block(b * T, h * D, T, D) = head_out;
            }
        }
        gemm(c.concat, params_.view(layer_name(l, "w_output")), tmp);  // (N, C)
        c.mid = c.input + tmp;
        x = c.mid;
        if (config_.mlp > 0) {
            if (config_.layernorm)
                layernorm_forward(c.mid, params_.view(layer_name(l, "ln2.gain")).data(),
                                  params_.view(layer_name(l, "ln2.bias")).data(), c.m, c.ln2_mean, c.ln2_rstd);
            else
                c.m = c.mid;
            gemm(c.m, params_.view(layer_name(l, "mlp.w_in")), c.pre);  // (N, C)·(C, F)
            add_row_vector(c.pre, params_.view(layer_name(l, "mlp.b_in")).data());
            c.act.resize(c.pre.rows(), c.pre.cols());
            for (Eigen::Index i = 0; i < c.pre.size(); ++i) c.act.data()[i] = gelu(c.pre.data()[i]);
            gemm(c.act, params_.view(layer_name(l, "mlp.w_out")), tmp);  // (N, F)·(F, C)
            add_row_vector(tmp, params_.view(layer_name(l, "mlp.b_out")).data());
            x += tmp;
        }
    }
    x_final_ = x;
    if (config_.layernorm)
        layernorm_forward(x_final_, params_.view("final_ln.gain").data(), params_.view("final_ln.bias").data(),
                          normed_final_, final_mean_, final_rstd_);
    else
        normed_final_ = x_final_;
    if (config_.tied)
        gemm_bt(normed_final_, params_.view("embed"), logits_);  // (N, C)·(C, V)
    else
        gemm(normed_final_, params_.view("unembed"), logits_);  // (N, C)·(C, V)

    // cross-entropy over targeted rows; logits_grad_ = (p − onehot) / count
    int count = 0;
    for (int i = 0; i < N; ++i) count += targets_[static_cast<std::size_t>(i)] >= 0;
    target_count_ = count;
    logits_grad_.setZero(N, V);
    double loss = 0;
    for (int i = 0; i < N; ++i) {
        const std::int32_t target = targets_[static_cast<std::size_t>(i)];
        if (target < 0) continue;
        const float* li = logits_.data() + static_cast<std::ptrdiff_t>(i) * V;
        int best = 0;
        float mx = li[0];
        for (int j = 1; j < V; ++j)
            if (li[j] > mx) {
                mx = li[j];
                best = j;
            }
        // one exp per logit, kept: gi = softmax(li) / count − onehot / count
        float* gi = logits_grad_.data() + static_cast<std::ptrdiff_t>(i) * V;
        double sum = 0;
        for (int j = 0; j < V; ++j) {
            gi[j] = std::exp(li[j] - mx);
            sum += gi[j];
        }
        loss += std::log(sum) - (static_cast<double>(li[target]) - mx);
        result.correct += best == target;
        const float factor = static_cast<float>(1.0 / (sum * count));
        for (int j = 0; j < V; ++j) gi[j] *= factor;
        gi[target] -= 1.0f / static_cast<float>(count);
    }
    result.targets = count;
    result.loss = count > 0 ? loss / count : 0.0;
    if (entropy_rows > 0) {
        result.stats.score_variance = var_sum / static_cast<double>(entropy_rows);
        result.stats.row_entropy = entropy_sum / static_cast<double>(entropy_rows);
    }
    return result;
}

void Model::backward(Parameters& grads, AttentionStats* stats) {
    if (batch_ == 0) throw Error(Error::Code::bad_state, "backward() needs a forward() first");
    if (grads.size() != params_.size()) grads = Parameters(config_);
    grads.set_zero();
    const int B = batch_, T = length_, C = config_.d_model, H = config_.heads, D = C / H;
    const int N = B * T;
    const float scale = config_.scale ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(D))) : 1.0f;
    Matrix tmp, tmp2;

    // logits = normed_final · W_U (or Eᵀ)
    Matrix dx;  // gradient of the residual stream, (N, C)
    if (config_.tied) {
        gemm_at(logits_grad_, normed_final_, tmp);  // (V, N)·(N, C) → (V, C)
        grads.view("embed") += tmp;
        gemm(logits_grad_, params_.view("embed"), dx);  // (N, V)·(V, C)
    } else {
        gemm_at(normed_final_, logits_grad_, tmp);  // (C, N)·(N, V)
        grads.view("unembed") = tmp;
        gemm_bt(logits_grad_, params_.view("unembed"), dx);  // (N, V)·(V, C)
    }
    if (config_.layernorm) {
        Matrix dnorm = dx;
        dx.setZero(N, C);
        layernorm_backward(x_final_, params_.view("final_ln.gain").data(), final_mean_, final_rstd_, dnorm, dx,
                           grads.view("final_ln.gain").data(), grads.view("final_ln.bias").data());
    }

    double score_grad_sq = 0;
    Matrix dconcat, dq(N, C), dk(N, C), dv(N, C), da, dp, ds(T, T);
    for (int l = config_.layers - 1; l >= 0; --l) {
        LayerCache& c = *layers_[static_cast<std::size_t>(l)];
        if (config_.mlp > 0) {
            // x_out = mid + act·W_out + b_out
            gemm_at(c.act, dx, tmp);  // (F, N)·(N, C)
            grads.view(layer_name(l, "mlp.w_out")) = tmp;
            add_column_sums(dx, grads.view(layer_name(l, "mlp.b_out")).data());
            Matrix dact;
            gemm_bt(dx, params_.view(layer_name(l, "mlp.w_out")), dact);  // (N, C)·(C, F)
            for (Eigen::Index i = 0; i < dact.size(); ++i) dact.data()[i] *= gelu_grad(c.pre.data()[i]);
            gemm_at(c.m, dact, tmp);  // (C, N)·(N, F)
            grads.view(layer_name(l, "mlp.w_in")) = tmp;
            add_column_sums(dact, grads.view(layer_name(l, "mlp.b_in")).data());
            Matrix dm;
            gemm_bt(dact, params_.view(layer_name(l, "mlp.w_in")), dm);  // (N, F)·(F, C)
            if (config_.layernorm)
                layernorm_backward(c.mid, params_.view(layer_name(l, "ln2.gain")).data(), c.ln2_mean, c.ln2_rstd, dm,
                                   dx, grads.view(layer_name(l, "ln2.gain")).data(),
                                   grads.view(layer_name(l, "ln2.bias")).data());
            else
                dx += dm;
        }
        // mid = input + concat·W_O
        gemm_at(c.concat, dx, tmp);  // (C, N)·(N, C)
        grads.view(layer_name(l, "w_output")) = tmp;
        gemm_bt(dx, params_.view(layer_name(l, "w_output")), dconcat);  // (N, C)·(C, C)
        for (int b = 0; b < B; ++b) {
            const int len = lengths_[static_cast<std::size_t>(b)];
            for (int h = 0; h < H; ++h) {
                const bool enabled = options_.head_on(l, h);
                auto dq_bh = dq.block(b * T, h * D, T, D), dk_bh = dk.block(b * T, h * D, T, D),
                     dv_bh = dv.block(b * T, h * D, T, D);
                if (!enabled) {
                    dq_bh.setZero();
                    dk_bh.setZero();
                    dv_bh.setZero();
                    continue;
                }
                const float* w = c.weights.data() + static_cast<std::size_t>((std::int64_t{b} * H + h) * T * T);
                const Eigen::Map<const Matrix> weights(w, T, T);
                const auto d_out = dconcat.block(b * T, h * D, T, D);
                gemm_at(weights, d_out, tmp);  // dV = Pᵀ·dO: (T, T)·(T, D)
                dv_bh = tmp;
                if (options_.uniform_attention) {  // constant weights: nothing reaches the scores
                    dq_bh.setZero();
                    dk_bh.setZero();
                    continue;
                }
                gemm_bt(d_out, c.v.block(b * T, h * D, T, D), dp);  // dP = dO·Vᵀ: (T, D)·(D, T)
                // softmax JVP per row: dS = P ⊙ (dP − Σ_j P·dP); hidden keys have P = 0, dS = 0
                for (int i = 0; i < T; ++i) {
                    const int end = causal_ ? std::min(i + 1, len) : len;
                    const float* wi = w + static_cast<std::size_t>(i) * T;
                    const float* dpi = dp.data() + static_cast<std::ptrdiff_t>(i) * T;
                    float* dsi = ds.data() + static_cast<std::ptrdiff_t>(i) * T;
                    double r = 0;
                    for (int j = 0; j < end; ++j) r += static_cast<double>(wi[j]) * dpi[j];
                    for (int j = 0; j < end; ++j) {
                        const float g = wi[j] * (dpi[j] - static_cast<float>(r));
                        score_grad_sq += static_cast<double>(g) * g;
                        dsi[j] = g * scale;  // through scaled = scores · scale
                    }
                    for (int j = std::max(end, 0); j < T; ++j) dsi[j] = 0.0f;
                }
                gemm(ds, c.k.block(b * T, h * D, T, D), tmp);  // dQ = dS·K: (T, T)·(T, D)
                dq_bh = tmp;
                gemm_at(ds, c.q.block(b * T, h * D, T, D), tmp);  // dK = dSᵀ·Q: (T, T)·(T, D)
                dk_bh = tmp;
            }
        }
        gemm_at(c.normed, dq, tmp);  // (C, N)·(N, C)
        grads.view(layer_name(l, "w_query")) = tmp;
        gemm_at(c.normed, dk, tmp);
        grads.view(layer_name(l, "w_key")) = tmp;
        gemm_at(c.normed, dv, tmp);
        grads.view(layer_name(l, "w_value")) = tmp;
        gemm_bt(dq, params_.view(layer_name(l, "w_query")), da);  // (N, C)·(C, C)
        gemm_bt(dk, params_.view(layer_name(l, "w_key")), tmp);
        da += tmp;
        gemm_bt(dv, params_.view(layer_name(l, "w_value")), tmp);
        da += tmp;
        if (config_.layernorm)
            layernorm_backward(c.input, params_.view(layer_name(l, "ln1.gain")).data(), c.ln1_mean, c.ln1_rstd, da, dx,
                               grads.view(layer_name(l, "ln1.gain")).data(),
                               grads.view(layer_name(l, "ln1.bias")).data());
        else
            dx += da;
    }
    // x = E[ids] + P
    auto dembed = grads.view("embed");
    for (int i = 0; i < N; ++i) dembed.row(ids_[static_cast<std::size_t>(i)]) += dx.row(i);
    if (config_.positional == Positional::learned) {
        auto dpos = grads.view("pos");
        for (int i = 0; i < N; ++i) dpos.row(i % T) += dx.row(i);
    }
    if (stats) stats->score_grad_norm = std::sqrt(score_grad_sq);
}

// ---- the per-layer trace of one sequence -------------------------------------------

ModelTrace trace_model(const ModelConfig& config, const Parameters& params, const std::vector<std::int32_t>& ids,
                       int length, const ForwardOptions& options) {
    validate_model_config(config);
    const int T = static_cast<int>(ids.size()), C = config.d_model;
    if (T < 1 || T > config.context)
        throw Error(Error::Code::too_long_for_model, "a sequence of " + std::to_string(T) + " tokens is outside 1 … the model's context " +
                    std::to_string(config.context));
    if (length < 0) length = T;
    if (length < 1 || length > T)
        throw Error("length " + std::to_string(length) + " is outside 1 … " + std::to_string(T));
    for (std::size_t t = 0; t < ids.size(); ++t)
        if (ids[t] < 0 || ids[t] >= config.vocab)
            throw Error("token id " + std::to_string(ids[t]) + " at position " + std::to_string(t) +
                        " is outside the vocabulary 0 … " + std::to_string(config.vocab - 1));
    const bool causal = options.causal_override < 0 ? config.causal : options.causal_override == 1;

    ModelTrace out;
    out.ids = ids;
    out.length = length;
    out.embeddings.resize(T, C);
    for (int t = 0; t < T; ++t) out.embeddings.row(t) = params.view("embed").row(ids[static_cast<std::size_t>(t)]);
    if (config.positional == Positional::learned)
        out.positional = params.view("pos").topRows(T);
    else
        out.positional = positional_encoding(config.positional, T, C, 0);
    out.mask = build_mask(causal ? MaskKind::causal_padding : MaskKind::padding, T, length);
    Matrix x = out.embeddings + out.positional;
    std::vector<float> mean, rstd;
    for (int l = 0; l < config.layers; ++l) {
        LayerTrace lt;
        lt.input = x;
        if (config.layernorm)
            layernorm_forward(x, params.view(layer_name(l, "ln1.gain")).data(),
                              params.view(layer_name(l, "ln1.bias")).data(), lt.normed, mean, rstd);
        else
            lt.normed = x;
        Weights w;
        w.w_query = params.view(layer_name(l, "w_query"));
        w.w_key = params.view(layer_name(l, "w_key"));
        w.w_value = params.view(layer_name(l, "w_value"));
        w.w_output = params.view(layer_name(l, "w_output"));
        lt.attention = multi_head_attention(lt.normed, w, config.heads, out.mask, config.scale);
        if (options.uniform_attention) make_uniform(lt.attention, out.mask, w.w_output);
        if (l < static_cast<int>(options.head_enabled.size())) {
            const int D = C / config.heads;
            bool any = false;
            for (int h = 0; h < config.heads; ++h)
                if (!options.head_on(l, h)) {
                    lt.attention.concat.middleCols(h * D, D).setZero();
                    any = true;
                }
            if (any) gemm(lt.attention.concat, w.w_output, lt.attention.output);
        }
        lt.residual = lt.input + lt.attention.output;
        x = lt.residual;
        if (config.mlp > 0) {
            if (config.layernorm)
                layernorm_forward(x, params.view(layer_name(l, "ln2.gain")).data(),
                                  params.view(layer_name(l, "ln2.bias")).data(), lt.mlp_normed, mean, rstd);
            else
                lt.mlp_normed = x;
            gemm(lt.mlp_normed, params.view(layer_name(l, "mlp.w_in")), lt.mlp_hidden);
            add_row_vector(lt.mlp_hidden, params.view(layer_name(l, "mlp.b_in")).data());
            for (Eigen::Index i = 0; i < lt.mlp_hidden.size(); ++i)
                lt.mlp_hidden.data()[i] = gelu(lt.mlp_hidden.data()[i]);
            gemm(lt.mlp_hidden, params.view(layer_name(l, "mlp.w_out")), lt.mlp_output);
            add_row_vector(lt.mlp_output, params.view(layer_name(l, "mlp.b_out")).data());
            x += lt.mlp_output;
        }
        lt.output = x;
        out.layers.push_back(std::move(lt));
    }
    if (config.layernorm)
        layernorm_forward(x, params.view("final_ln.gain").data(), params.view("final_ln.bias").data(),
                          out.final_normed, mean, rstd);
    else
        out.final_normed = x;
    if (config.tied)
        gemm_bt(out.final_normed, params.view("embed"), out.logits);
    else
        gemm(out.final_normed, params.view("unembed"), out.logits);
    out.probabilities.resize(out.logits.rows(), out.logits.cols());
    for (Eigen::Index i = 0; i < out.logits.rows(); ++i) {
        const float mx = out.logits.row(i).maxCoeff();
        double sum = 0;
        for (Eigen::Index j = 0; j < out.logits.cols(); ++j) sum += std::exp(static_cast<double>(out.logits(i, j)) - mx);
        for (Eigen::Index j = 0; j < out.logits.cols(); ++j)
            out.probabilities(i, j) = static_cast<float>(std::exp(static_cast<double>(out.logits(i, j)) - mx) / sum);
    }
    return out;
}

}  // namespace attn
