#pragma once
// Shared helpers of the model tests (test_model.cpp, test_architecture.cpp,
// test_recorder.cpp): random configs (with or without the architecture
// options), batches and perturbed parameters, and the relative error of a
// float tensor against the double reference.

#include "core/model.hpp"
#include "core/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace model_test {

using attn::Batch;
using attn::ModelConfig;
using attn::Positional;

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

}  // namespace model_test
