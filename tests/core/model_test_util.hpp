#pragma once
// Shared helpers of the model tests (test_model.cpp, test_architecture.cpp,
// test_pretrained_backward.cpp,
// test_recorder.cpp): random configs (GPT-2's and BERT's options, or random ones),
// batches, ids and perturbed parameters, the relative error of a
// float tensor against the double reference, and the three checks every
// option of the model goes through: the reference against central finite
// differences, the fast path against the reference, the per-sequence trace
// against the batched forward.

#include "model/model.hpp"
#include "train/trainer.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace model_test {

using attn::Batch;
using attn::ModelConfig;
using attn::Positional;

/// A config of these sizes, every other option at its default.
inline ModelConfig sized_config(int vocab, int context, int d_model, int heads, int layers = 1, int mlp = 0) {
    ModelConfig c;
    c.vocab = vocab;
    c.context = context;
    c.d_model = d_model;
    c.heads = heads;
    c.layers = layers;
    c.mlp = mlp;
    return c;
}

/// `c` with GPT-2's architecture options: causal, tied, Q/K/V/O biases, tanh GELU, family "gpt2".
inline ModelConfig gpt2_options(ModelConfig c) {
    c.causal = true;
    c.tied = true;
    c.attn_bias = true;
    c.activation = attn::Activation::gelu_tanh;
    c.family = "gpt2";
    return c;
}

/// `c` with BERT's architecture options: post-LN (eps 1e-12), tied, Q/K/V/O biases, token
/// types, the embeddings' LayerNorm, the MLM head's transform and output bias, family "bert".
inline ModelConfig bert_options(ModelConfig c) {
    c.tied = true;
    c.attn_bias = true;
    c.ln_eps = 1e-12f;
    c.norm = attn::Norm::post;
    c.token_types = 2;
    c.embed_layernorm = true;
    c.output_transform = true;
    c.output_bias = true;
    c.family = "bert";
    return c;
}

inline ModelConfig random_config(std::mt19937& rng) {
    ModelConfig c;
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    auto coin = [&]() { return std::bernoulli_distribution(0.5)(rng); };
    c.vocab = pick(3, 9);
    c.context = pick(2, 7);
    c.layers = pick(1, 2);
    c.heads = pick(1, 3);
    c.d_model = c.heads * pick(1, 4);
    c.mlp = coin() ? 0 : pick(1, 6);
    c.layernorm = coin();
    // LayerNorm over 2 or 3 features is ill-conditioned in float (x̂ = ±1 for
    // C = 2, and ∂x̂/∂x grows as 1/σ): the float path then legitimately differs
    // from the double reference by more than 1e-4. Such widths are checked
    // without layernorm only.
    if (c.layernorm && c.d_model < 4) c.d_model = c.heads * (4 / c.heads + (4 % c.heads != 0));
    c.positional = static_cast<Positional>(pick(0, 2));
    c.causal = coin();
    c.scale = coin();
    c.tied = coin();
    return c;
}

/// T random token ids of the config's vocabulary.
inline std::vector<std::int32_t> random_ids(std::mt19937& rng, const ModelConfig& c, int T) {
    std::vector<std::int32_t> ids(static_cast<std::size_t>(T));
    for (std::int32_t& id : ids) id = std::uniform_int_distribution<int>(0, c.vocab - 1)(rng);
    return ids;
}

/// Random batch: some sequences padded (length < T, possibly 0), targets
/// random or -1.
inline Batch random_batch(std::mt19937& rng, const ModelConfig& c, bool padded) {
    Batch b;
    b.batch = std::uniform_int_distribution<int>(1, 3)(rng);
    b.length = std::uniform_int_distribution<int>(1, c.context)(rng);
    for (int s = 0; s < b.batch; ++s) {
        const int len = padded ? std::uniform_int_distribution<int>(0, b.length)(rng) : b.length;
        if (padded) b.lengths.push_back(len);
        for (int t = 0; t < b.length; ++t) {
            b.ids.push_back(t < len ? std::uniform_int_distribution<int>(0, c.vocab - 1)(rng) : 0);
            const bool target = t < len && std::bernoulli_distribution(0.8)(rng);
            b.targets.push_back(target ? std::uniform_int_distribution<int>(0, c.vocab - 1)(rng) : attn::kNoTarget);
        }
    }
    bool any = false;
    for (std::int32_t t : b.targets) any |= t >= 0;
    if (!any) {  // at least one target, at a real position
        for (int s = 0; s < b.batch && !any; ++s)
            if (b.real_length(s) > 0) {
                b.targets[static_cast<std::size_t>(s) * b.length] = 0;
                any = true;
            }
        if (!any) {
            if (padded) b.lengths[0] = 1;
            b.targets[0] = 0;
        }
    }
    return b;
}

/// Seeded init, then every value perturbed, so gains are not 1 and biases not 0.
inline attn::Parameters random_params(std::mt19937& rng, const ModelConfig& c, float spread = 0.3f) {
    attn::Parameters p;
    attn::init_parameters(c, static_cast<std::uint32_t>(rng()), p);
    std::uniform_real_distribution<float> u(-spread, spread);
    for (float& v : p.flat()) v += u(rng);
    return p;
}

inline std::vector<double> to_double(const attn::Parameters& p) { return {p.flat().begin(), p.flat().end()}; }

/// The config as its JSON (every option that differs from the defaults), for INFO.
inline std::string describe(const ModelConfig& c) { return attn::model_config_json(c); }

/// max |a − b| / max(max |b|, floor) over one tensor.
inline double relative_error(const float* a, const double* b, std::size_t n, double floor = 1e-3) {
    double diff = 0, scale = floor;
    for (std::size_t i = 0; i < n; ++i) {
        diff = std::max(diff, std::fabs(a[i] - b[i]));
        scale = std::max(scale, std::fabs(b[i]));
    }
    return diff / scale;
}

/// The same of a matrix against the reference's row-major doubles (the recorder's intermediates).
inline double relative_error(const attn::Matrix& a, const std::vector<double>& b) {
    REQUIRE(static_cast<std::size_t>(a.size()) == b.size());
    const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rows = a;
    return relative_error(rows.data(), b.data(), b.size());
}

/// relative_error of one tensor of a fast gradient against the reference's.
/// layers.{l}.b_key's gradient is exactly 0 in exact arithmetic (q·b_K adds
/// the same number to every score of a row, which the softmax ignores), so its
/// float rounding is judged on the scale of the same layer's b_query gradient.
inline double gradient_error(const attn::Parameters& grads, const std::vector<double>& ref, const attn::ParamInfo& info) {
    double floor = 1e-3;
    const std::string suffix = ".b_key";
    if (info.name.size() > suffix.size() && info.name.compare(info.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        const attn::ParamInfo& q = grads.info(info.name.substr(0, info.name.size() - suffix.size()) + ".b_query");
        for (std::size_t i = q.offset; i < q.offset + q.size(); ++i) floor = std::max(floor, std::fabs(ref[i]));
    }
    return relative_error(grads.flat().data() + info.offset, ref.data() + info.offset, info.size(), floor);
}

/// Draws every architecture option of pretrained.hpp onto c (post-LN, the
/// embedding LayerNorm and the MLM head only with layernorm).
inline void add_random_options(std::mt19937& rng, ModelConfig& c) {
    auto coin = [&]() { return std::bernoulli_distribution(0.5)(rng); };
    c.attn_bias = coin();
    c.activation = coin() ? attn::Activation::gelu_tanh : attn::Activation::gelu_erf;
    const float eps[] = {1e-5f, 1e-12f, 1e-3f};
    c.ln_eps = eps[std::uniform_int_distribution<int>(0, 2)(rng)];
    c.norm = c.layernorm && coin() ? attn::Norm::post : attn::Norm::pre;
    c.token_types = coin() ? 2 : 0;
    c.embed_layernorm = c.layernorm && coin();
    c.output_transform = c.layernorm && coin();
    c.output_bias = coin();
}

/// random_config with every architecture option drawn too.
inline ModelConfig random_arch_config(std::mt19937& rng) {
    ModelConfig c = random_config(rng);
    add_random_options(rng, c);
    return c;
}

/// Draws the modern decoders' options (model.hpp) onto c: the positional kind among all five
/// (rope with a random base, sometimes Llama 3's scaling with bands a short context reaches;
/// alibi), RMSNorm, the gated MLP (SiLU or GELU, with or without biases), grouped-query K/V
/// heads, a head width other than C/H, biases on Q, K, V only, the per-head q/k norm.
/// Keeps the rules between options (check_model_config).
inline void add_modern_options(std::mt19937& rng, ModelConfig& c) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    auto coin = [&]() { return std::bernoulli_distribution(0.5)(rng); };
    c.positional = static_cast<Positional>(pick(0, 4));
    if (coin()) {  // grouped-query attention: 2 to 4 query heads over fewer K/V heads
        c.heads = pick(2, 4);
        const int divisors[][2] = {{1, 1}, {1, 1}, {1, 1}, {1, 2}};
        c.kv_heads = divisors[c.heads - 1][pick(0, 1)];
        c.head_dim = 2 * pick(1, 3);
    } else if (coin()) {  // a head width of its own
        c.head_dim = 2 * pick(1, 3);
    }
    if (c.head_dim > 0 && c.d_model < 4) c.d_model = 4;  // (C need not divide by H with head_dim)
    if (c.positional == Positional::rope) {
        if (attn::head_dim_of(c) % 2 != 0) c.head_dim = 2 * pick(1, 3);
        const double bases[] = {10000, 100, 500000};
        c.rope_base = bases[pick(0, 2)];
        if (coin()) {  // llama3: short original contexts, so that all three bands occur for small D
            c.rope_scaling = attn::RopeScaling::llama3;
            c.rope_factor = pick(2, 32);
            c.rope_low_freq_factor = 1;
            c.rope_high_freq_factor = pick(2, 8);
            c.rope_original_context = pick(8, 256);
        }
    }
    c.qkv_bias = !c.attn_bias && coin();
    c.qk_norm = coin();
    if (coin()) {  // RMSNorm replaces the blocks' and the final LayerNorm, and nothing else
        c.rmsnorm = true;
        c.layernorm = true;
        c.embed_layernorm = false;
        c.output_transform = false;
        if (c.d_model < 4) c.d_model = c.heads * (4 / c.heads + (4 % c.heads != 0));
    }
    if (c.mlp > 0 && coin()) {
        c.gated_mlp = true;
        if (coin()) c.activation = attn::Activation::silu;
    }
    c.mlp_bias = coin();
    if (c.head_dim == 0 && c.d_model % c.heads != 0) c.head_dim = 2;
}

/// random_arch_config with the modern decoders' options drawn too.
inline ModelConfig random_modern_config(std::mt19937& rng) {
    ModelConfig c = random_arch_config(rng);
    add_modern_options(rng, c);
    return c;
}

/// A small Llama-shaped config: pre-norm RMSNorm, RoPE, grouped-query attention with a head
/// width of its own, the gated MLP with SiLU and no biases, causal, untied.
inline ModelConfig llama_like(int vocab = 11, int context = 8) {
    ModelConfig c = sized_config(vocab, context, 8, 4, 2, 12);
    c.layernorm = true;
    c.rmsnorm = true;
    c.positional = Positional::rope;
    c.kv_heads = 2;
    c.head_dim = 4;
    c.gated_mlp = true;
    c.mlp_bias = false;
    c.activation = attn::Activation::silu;
    c.causal = true;
    c.ln_eps = 1e-5f;
    return c;
}

// ---- the checks every option goes through ----------------------------------------------

/// The reference's gradients (model_reference.cpp, double) against central finite
/// differences of its loss: `trials` configs of `make`, each with a random batch
/// (every third padded) and random parameters, `per_tensor` random entries of every
/// tensor. Returns how many entries were checked; worst (when given): the largest
/// |fd − analytic| / max(|fd|, 1e-3).
inline int check_reference_by_finite_differences(std::mt19937& rng, ModelConfig (*make)(std::mt19937&), int trials,
                                                 int per_tensor, double* worst = nullptr) {
    int checked = 0;
    for (int trial = 0; trial < trials; ++trial) {
        const ModelConfig c = make(rng);
        const Batch batch = random_batch(rng, c, trial % 3 == 0);
        const std::vector<double> p = to_double(random_params(rng, c));
        std::vector<double> g;
        attn::reference_loss_and_grads(c, p, batch, &g);
        for (const auto& info : attn::parameter_layout(c)) {
            for (int k = 0; k < per_tensor; ++k) {
                const std::size_t i = info.offset + std::uniform_int_distribution<std::size_t>(0, info.size() - 1)(rng);
                std::vector<double> q = p;
                const double h = 1e-6;
                q[i] = p[i] + h;
                const double up = attn::reference_loss_and_grads(c, q, batch, nullptr);
                q[i] = p[i] - h;
                const double down = attn::reference_loss_and_grads(c, q, batch, nullptr);
                const double fd = (up - down) / (2 * h);
                INFO(describe(c) << " " << info.name << " entry " << i - info.offset << ": analytic " << g[i]
                                 << ", finite difference " << fd);
                CHECK(std::fabs(fd - g[i]) <= 1e-6 + 1e-5 * std::fabs(fd));
                if (worst) *worst = std::max(*worst, std::fabs(fd - g[i]) / std::max(std::fabs(fd), 1e-3));
                ++checked;
            }
        }
    }
    return checked;
}

/// The fast path's loss and gradients on one batch beside the double reference's.
struct ReferenceComparison {
    double loss_error = 0;  ///< |loss − reference| / max(1, |reference|)
    double loss = 0, reference_loss = 0;
    attn::Parameters grads;  ///< the fast gradients
    std::vector<std::pair<std::string, double>> gradient_errors;  ///< per tensor: gradient_error
};

/// Runs m's forward and backward on `batch` and the reference on m's parameters.
inline ReferenceComparison compare_with_reference(attn::Model& m, const Batch& batch) {
    ReferenceComparison out;
    out.loss = m.forward(batch).loss;
    m.backward(out.grads);
    std::vector<double> ref;
    out.reference_loss = attn::reference_loss_and_grads(m.config(), to_double(m.params()), batch, &ref);
    out.loss_error = std::fabs(out.loss - out.reference_loss) / std::max(1.0, std::fabs(out.reference_loss));
    for (const auto& info : out.grads.layout()) out.gradient_errors.emplace_back(info.name, gradient_error(out.grads, ref, info));
    return out;
}

/// Every tensor's gradient error below `tolerance`, each named; returns the worst.
inline double check_gradients(const ReferenceComparison& r, double tolerance) {
    double worst = 0;
    for (const auto& [name, e] : r.gradient_errors) {
        INFO(name);
        CHECK(e < tolerance);
        worst = std::max(worst, e);
    }
    return worst;
}

/// After m.forward(b, options): each real sequence's trace_model (the per-layer
/// trace, one sequence) has the batched forward's attention weights and logits,
/// and probability rows that sum to 1.
inline void check_trace_matches_batch(const attn::Model& m, const Batch& b, const attn::ForwardOptions& options,
                                      const std::string& label) {
    const ModelConfig& c = m.config();
    for (int s = 0; s < b.batch; ++s) {
        const int len = b.real_length(s);
        if (len == 0) continue;  // a trace has at least one real token
        const std::vector<std::int32_t> ids(b.ids.begin() + s * b.length, b.ids.begin() + (s + 1) * b.length);
        const attn::ModelTrace tr = attn::trace_model(c, m.params(), ids, len, options);
        INFO(describe(c) << ", " << label);
        REQUIRE(tr.layers.size() == static_cast<std::size_t>(c.layers));
        for (int l = 0; l < c.layers; ++l)
            for (int h = 0; h < c.heads; ++h) {
                const attn::Matrix& tw = tr.layers[static_cast<std::size_t>(l)].attention.heads[static_cast<std::size_t>(h)].weights;
                CHECK((tw - m.attention(s, l, h)).cwiseAbs().maxCoeff() < 1e-5f);
            }
        const attn::Matrix batched = m.logits().middleRows(s * b.length, b.length);
        CHECK((tr.logits - batched).cwiseAbs().maxCoeff() < 1e-4f * std::max(1.0f, batched.cwiseAbs().maxCoeff()));
        for (int t = 0; t < b.length; ++t) CHECK(tr.probabilities.row(t).sum() == Approx(1.0).epsilon(1e-5));
    }
}

}  // namespace model_test
