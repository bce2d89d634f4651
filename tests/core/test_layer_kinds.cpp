// Each layer kind of layers.hpp against its own double reference
// (layer_reference.hpp), kind by kind: over many seeded random shapes and
// architecture options, the fast forward equals the reference's, the fast
// backward's input and parameter gradients equal the reference's, and the
// reference's gradients equal central finite differences of the reference's
// own forward (of J = Σ out ⊙ R for a random R, so ∂J/∂out = R).
// The whole model's composition is tested in test_model.cpp / test_architecture.cpp.

#include "model/block.hpp"
#include "model/layer_reference.hpp"
#include "model/layers.hpp"
#include "model/model.hpp"
#include "model_test_util.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

using attn::Matrix;
using attn::ModelConfig;
using attn::reference::Mat;
using namespace model_test;

namespace {

int pick(std::mt19937& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
bool coin(std::mt19937& rng) { return std::bernoulli_distribution(0.5)(rng); }

/// random_arch_config, sometimes wider and longer (past the 4×8 tiles of the
/// products); widths of at least 4 wherever a LayerNorm runs (model_test_util.hpp).
ModelConfig kind_config(std::mt19937& rng) {
    ModelConfig c = random_arch_config(rng);
    if (coin(rng)) {
        c.heads = pick(rng, 1, 4);
        c.d_model = c.heads * pick(rng, 1, 5);
        c.context = pick(rng, 2, 12);
        c.vocab = pick(rng, 3, 20);
    }
    if (c.d_model < 4 && (c.layernorm || c.embed_layernorm || c.output_transform))
        c.d_model = c.heads * ((4 + c.heads - 1) / c.heads);
    return c;
}

Matrix random_matrix(std::mt19937& rng, int rows, int cols, float spread = 1.0f) {
    std::uniform_real_distribution<float> u(-spread, spread);
    Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = u(rng);
    return m;
}

/// Rows b·T … b·T + T − 1 of m, in double, for each sequence b.
std::vector<Mat> split(const Matrix& m, int B, int T) {
    std::vector<Mat> out;
    for (int b = 0; b < B; ++b) {
        Mat s(T, static_cast<int>(m.cols()));
        for (int t = 0; t < T; ++t)
            for (int j = 0; j < s.cols; ++j) s(t, j) = m(b * T + t, j);
        out.push_back(s);
    }
    return out;
}

/// The sequences' rows one after another (row-major), as the fast path's N rows.
std::vector<double> join(const std::vector<Mat>& seqs) {
    std::vector<double> out;
    for (const Mat& s : seqs) out.insert(out.end(), s.v.begin(), s.v.end());
    return out;
}

double dot(const std::vector<Mat>& a, const std::vector<Mat>& b) {
    double s = 0;
    for (std::size_t k = 0; k < a.size(); ++k)
        for (std::size_t i = 0; i < a[k].v.size(); ++i) s += a[k].v[i] * b[k].v[i];
    return s;
}

std::vector<std::int32_t> sequence(const std::vector<std::int32_t>& all, int b, int T) {
    return {all.begin() + static_cast<std::ptrdiff_t>(b) * T, all.begin() + static_cast<std::ptrdiff_t>(b + 1) * T};
}

/// Every tensor's fast gradient against the reference's (gradient_error: the
/// b_key rule of model_test_util.hpp), each named; tensors the kind does not
/// read are zero in both.
void check_parameter_gradients(const attn::Parameters& fast, const std::vector<double>& ref, double tolerance) {
    for (const attn::ParamInfo& info : fast.layout()) {
        INFO("gradient of " << info.name);
        CHECK(gradient_error(fast, ref, info) < tolerance);
    }
}

/// Central differences of J (which reads `params` and `inputs`) at `per_tensor`
/// random entries of each tensor named in `names` and `per_input` random input
/// entries, against the analytic gradients g (params) and dinputs.
void check_finite_differences(std::mt19937& rng, const ModelConfig& c, std::vector<double>& params,
                              const std::vector<double>& g, const std::vector<std::string>& names,
                              std::vector<Mat>* inputs, const std::vector<Mat>* dinputs,
                              const std::function<double()>& J, int per_tensor, int per_input,
                              double* worst = nullptr) {
    const double h = 1e-6;
    auto central = [&](double& x) {
        const double keep = x;
        x = keep + h;
        const double up = J();
        x = keep - h;
        const double down = J();
        x = keep;
        return (up - down) / (2 * h);
    };
    for (const attn::ParamInfo& info : attn::parameter_layout(c)) {
        if (std::find(names.begin(), names.end(), info.name) == names.end()) continue;
        for (int k = 0; k < per_tensor; ++k) {
            const std::size_t i = info.offset + std::uniform_int_distribution<std::size_t>(0, info.size() - 1)(rng);
            const double fd = central(params[i]);
            INFO(describe(c) << " " << info.name << " entry " << i - info.offset << ": analytic " << g[i]
                             << ", finite difference " << fd);
            CHECK(std::fabs(fd - g[i]) <= 1e-6 + 1e-5 * std::fabs(fd));
            if (worst) *worst = std::max(*worst, std::fabs(fd - g[i]) / std::max(std::fabs(fd), 1e-3));
        }
    }
    if (!inputs) return;
    for (int k = 0; k < per_input; ++k) {
        const std::size_t s = std::uniform_int_distribution<std::size_t>(0, inputs->size() - 1)(rng);
        Mat& x = (*inputs)[s];
        if (x.v.empty()) continue;
        const std::size_t i = std::uniform_int_distribution<std::size_t>(0, x.v.size() - 1)(rng);
        const double fd = central(x.v[i]);
        const double analytic = (*dinputs)[s].v[i];
        INFO(describe(c) << " input of sequence " << s << " entry " << i << ": analytic " << analytic
                         << ", finite difference " << fd);
        CHECK(std::fabs(fd - analytic) <= 1e-6 + 1e-5 * std::fabs(fd));
        if (worst) *worst = std::max(*worst, std::fabs(fd - analytic) / std::max(std::fabs(fd), 1e-3));
    }
}

/// The names of parameter_layout(c) that start with one of `prefixes` (or equal one).
std::vector<std::string> tensors_named(const ModelConfig& c, const std::vector<std::string>& prefixes) {
    std::vector<std::string> out;
    for (const attn::ParamInfo& info : attn::parameter_layout(c))
        for (const std::string& p : prefixes)
            if (info.name.compare(0, p.size(), p) == 0) {
                out.push_back(info.name);
                break;
            }
    return out;
}

/// Random parameters (float, as the fast path reads them), their double copy,
/// the fast path's pointers and zeroed gradients, the reference's zeroed gradients.
struct Weights {
    attn::Parameters params, grads;
    std::vector<double> values, ref_grads;
    attn::ParamSlots slots;
    attn::ParamPtrs p;
    attn::GradPtrs g;
    Weights(std::mt19937& rng, const ModelConfig& c)
        : params(random_params(rng, c)), grads(c), values(to_double(params)), ref_grads(values.size(), 0.0),
          slots(attn::resolve_slots(c)) {
        const float* base = params.flat().data();
        p = attn::bind(slots, base);
        g = attn::bind(slots, grads.flat().data());
    }
};

constexpr int kTrials = 40;
constexpr double kForwardTolerance = 2e-5;   // float against double, relative to the tensor's largest entry
constexpr double kBackwardTolerance = 1e-4;  // as the whole model's gradients (test_model.cpp)

}  // namespace

// ---- LayerNorm ------------------------------------------------------------------------------

namespace {

struct LayerNormTrial {
    int N = 0, C = 0;
    double eps = 0;
    std::vector<float> gain, bias;
    Matrix x, dy;
    LayerNormTrial(std::mt19937& rng) {
        N = pick(rng, 1, 9);
        C = pick(rng, 4, 16);
        const float epss[] = {1e-5f, 1e-12f, 1e-3f};
        eps = epss[pick(rng, 0, 2)];
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (int j = 0; j < C; ++j) {
            gain.push_back(1.0f + 0.5f * u(rng));
            bias.push_back(0.5f * u(rng));
        }
        const float spread[] = {0.05f, 1.0f, 8.0f};  // small rows: ε matters; large: it does not
        x = random_matrix(rng, N, C, spread[pick(rng, 0, 2)]);
        x.array() += u(rng) * 3.0f;  // a mean to remove
        dy = random_matrix(rng, N, C);
    }
};

attn::reference::Param param_of(const std::vector<double>& w, std::vector<double>* g) {
    return {w.data(), g ? g->data() : nullptr, static_cast<int>(w.size())};
}

}  // namespace

TEST_CASE("layer kinds: fast LayerNorm forward and backward equal its double reference", "[kinds]") {
    std::mt19937 rng(101);
    for (int trial = 0; trial < kTrials; ++trial) {
        const LayerNormTrial t(rng);
        INFO("trial " << trial << ": " << t.N << "×" << t.C << ", eps " << t.eps);
        Matrix y, dx = Matrix::Zero(t.N, t.C);
        attn::LayerNormCache cache;
        attn::layernorm_forward(t.x, t.gain.data(), t.bias.data(), static_cast<float>(t.eps), y, cache);
        std::vector<float> dgain(t.gain.size(), 0.0f), dbias(t.bias.size(), 0.0f);
        attn::layernorm_backward(t.x, t.gain.data(), cache, t.dy, dx, dgain.data(), dbias.data());

        const std::vector<double> gw(t.gain.begin(), t.gain.end()), bw(t.bias.begin(), t.bias.end());
        std::vector<double> gg(gw.size(), 0.0), bg(bw.size(), 0.0);
        const Mat x = split(t.x, 1, t.N)[0];
        const auto ref = attn::reference::layernorm_forward(x, param_of(gw, &gg), param_of(bw, &bg), t.eps);
        const Mat rdx = attn::reference::layernorm_backward(x, ref, split(t.dy, 1, t.N)[0], param_of(gw, &gg),
                                                            param_of(bw, &bg));
        CHECK(relative_error(y, ref.y.v) < kForwardTolerance);
        CHECK(relative_error(dx, rdx.v) < kBackwardTolerance);
        CHECK(relative_error(dgain.data(), gg.data(), gg.size()) < kBackwardTolerance);
        CHECK(relative_error(dbias.data(), bg.data(), bg.size()) < kBackwardTolerance);
    }
}

TEST_CASE("layer kinds: the LayerNorm reference's gradients equal central finite differences", "[kinds]") {
    std::mt19937 rng(102);
    for (int trial = 0; trial < kTrials; ++trial) {
        const LayerNormTrial t(rng);
        INFO("trial " << trial << ": " << t.N << "×" << t.C << ", eps " << t.eps);
        std::vector<double> gw(t.gain.begin(), t.gain.end()), bw(t.bias.begin(), t.bias.end());
        std::vector<double> gg(gw.size(), 0.0), bg(bw.size(), 0.0);
        std::vector<Mat> x = split(t.x, 1, t.N);
        const std::vector<Mat> r = split(t.dy, 1, t.N);
        const auto acts = attn::reference::layernorm_forward(x[0], param_of(gw, nullptr), param_of(bw, nullptr), t.eps);
        const std::vector<Mat> dx = {
            attn::reference::layernorm_backward(x[0], acts, r[0], param_of(gw, &gg), param_of(bw, &bg))};
        auto J = [&] {
            return dot({attn::reference::layernorm_forward(x[0], param_of(gw, nullptr), param_of(bw, nullptr), t.eps).y}, r);
        };
        const double h = 1e-6;
        for (int k = 0; k < 4; ++k) {  // the gain and the bias
            for (int which = 0; which < 2; ++which) {
                std::vector<double>& w = which ? bw : gw;
                const std::vector<double>& g = which ? bg : gg;
                const std::size_t i = std::uniform_int_distribution<std::size_t>(0, w.size() - 1)(rng);
                const double keep = w[i];
                w[i] = keep + h;
                const double up = J();
                w[i] = keep - h;
                const double down = J();
                w[i] = keep;
                const double fd = (up - down) / (2 * h);
                INFO((which ? "bias " : "gain ") << i << ": analytic " << g[i] << ", finite difference " << fd);
                CHECK(std::fabs(fd - g[i]) <= 1e-6 + 1e-5 * std::fabs(fd));
            }
        }
        ModelConfig c;  // only describe() of check_finite_differences reads it: no tensor is named
        check_finite_differences(rng, c, gw, gg, {}, &x, &dx, J, 0, 8);
    }
}

// ---- RMSNorm --------------------------------------------------------------------------------

TEST_CASE("layer kinds: fast RMSNorm forward and backward equal its double reference", "[kinds][modern]") {
    std::mt19937 rng(111);
    double worst = 0;
    for (int trial = 0; trial < kTrials; ++trial) {
        const LayerNormTrial t(rng);  // (its bias is unused: RMSNorm has a gain only)
        INFO("trial " << trial << ": " << t.N << "×" << t.C << ", eps " << t.eps);
        Matrix y, dx = Matrix::Zero(t.N, t.C);
        attn::LayerNormCache cache;
        attn::rmsnorm_forward(t.x, t.gain.data(), static_cast<float>(t.eps), y, cache);
        std::vector<float> dgain(t.gain.size(), 0.0f);
        attn::rmsnorm_backward(t.x, t.gain.data(), cache, t.dy, dx, dgain.data());

        const std::vector<double> gw(t.gain.begin(), t.gain.end());
        std::vector<double> gg(gw.size(), 0.0);
        const Mat x = split(t.x, 1, t.N)[0];
        const auto ref = attn::reference::rmsnorm_forward(x, param_of(gw, &gg), t.eps);
        const Mat rdx = attn::reference::rmsnorm_backward(x, ref, split(t.dy, 1, t.N)[0], param_of(gw, &gg));
        CHECK(relative_error(y, ref.y.v) < kForwardTolerance);
        CHECK(relative_error(dx, rdx.v) < kBackwardTolerance);
        CHECK(relative_error(dgain.data(), gg.data(), gg.size()) < kBackwardTolerance);
        for (int i = 0; i < t.N; ++i)  // the cache's 1/rms, which the trace reports as rms
            CHECK(std::fabs(cache.rstd[static_cast<std::size_t>(i)] - ref.inv_sigma[static_cast<std::size_t>(i)]) <=
                  1e-6 * ref.inv_sigma[static_cast<std::size_t>(i)]);
        worst = std::max({worst, relative_error(y, ref.y.v), relative_error(dx, rdx.v)});
    }
    WARN("RMSNorm, fast against the double reference: " << worst);
}

TEST_CASE("layer kinds: the RMSNorm reference's gradients equal central finite differences", "[kinds][modern]") {
    std::mt19937 rng(112);
    double worst = 0;
    for (int trial = 0; trial < kTrials; ++trial) {
        const LayerNormTrial t(rng);
        INFO("trial " << trial << ": " << t.N << "×" << t.C << ", eps " << t.eps);
        std::vector<double> gw(t.gain.begin(), t.gain.end());
        std::vector<double> gg(gw.size(), 0.0);
        std::vector<Mat> x = split(t.x, 1, t.N);
        const std::vector<Mat> r = split(t.dy, 1, t.N);
        const auto acts = attn::reference::rmsnorm_forward(x[0], param_of(gw, nullptr), t.eps);
        const std::vector<Mat> dx = {attn::reference::rmsnorm_backward(x[0], acts, r[0], param_of(gw, &gg))};
        auto J = [&] { return dot({attn::reference::rmsnorm_forward(x[0], param_of(gw, nullptr), t.eps).y}, r); };
        const double h = 1e-6;
        for (int k = 0; k < 6; ++k) {  // the gain
            const std::size_t i = std::uniform_int_distribution<std::size_t>(0, gw.size() - 1)(rng);
            const double keep = gw[i];
            gw[i] = keep + h;
            const double up = J();
            gw[i] = keep - h;
            const double down = J();
            gw[i] = keep;
            const double fd = (up - down) / (2 * h);
            INFO("gain " << i << ": analytic " << gg[i] << ", finite difference " << fd);
            CHECK(std::fabs(fd - gg[i]) <= 1e-6 + 1e-5 * std::fabs(fd));
            worst = std::max(worst, std::fabs(fd - gg[i]) / std::max(std::fabs(fd), 1e-3));
        }
        ModelConfig c;
        check_finite_differences(rng, c, gw, gg, {}, &x, &dx, J, 0, 8, &worst);
    }
    WARN("RMSNorm, the reference against central differences: largest relative difference " << worst);
}

// ---- RoPE's and ALiBi's constants -----------------------------------------------------------

TEST_CASE("layer kinds: RoPE's frequencies (with llama3 scaling) and ALiBi's slopes equal their references", "[kinds][modern]") {
    // ALiBi: a power of two H gives 2^(−8h/H); the paper's examples: 8 heads start at 1/2, 16 at 1/√2
    const std::vector<float> eight = attn::alibi_slopes(8);
    for (int h = 1; h <= 8; ++h) CHECK(eight[static_cast<std::size_t>(h - 1)] == static_cast<float>(std::exp2(-h)));
    CHECK(attn::alibi_slopes(16)[0] == static_cast<float>(std::sqrt(0.5)));
    // not a power of two: the 8 slopes of 8 heads, then the odd ones of 16 heads
    const std::vector<float> twelve = attn::alibi_slopes(12);
    REQUIRE(twelve.size() == 12);
    for (int k = 0; k < 4; ++k) CHECK(twelve[static_cast<std::size_t>(8 + k)] == static_cast<float>(std::exp2(-0.5 * (2 * k + 1))));
    for (int H = 1; H <= 40; ++H) {
        const std::vector<float> fast = attn::alibi_slopes(H);
        const std::vector<double> ref = attn::reference::alibi_slope(H);
        REQUIRE(fast.size() == ref.size());
        for (int h = 0; h < H; ++h) CHECK(fast[static_cast<std::size_t>(h)] == static_cast<float>(ref[static_cast<std::size_t>(h)]));
    }
    // RoPE: base^(−2i/D), and llama3's three bands (Llama 3.2's settings: factor 32, 1, 4, 8192)
    std::mt19937 rng(121);
    int kept = 0, divided = 0, blended = 0;
    for (int trial = 0; trial < 200; ++trial) {
        attn::RopeSettings r;
        const double bases[] = {10000, 500000, 100, 1e6};
        r.base = bases[pick(rng, 0, 3)];
        const int D = 2 * pick(rng, 1, 64);
        if (coin(rng)) {
            r.scaling = attn::RopeScaling::llama3;
            r.factor = coin(rng) ? 32 : 8;
            r.low_freq_factor = 1;
            r.high_freq_factor = 4;
            r.original_context = coin(rng) ? 8192 : pick(rng, 8, 512);
        }
        const std::vector<double> fast = attn::rope_frequencies(D, r), ref = attn::reference::rope_theta(D, r);
        REQUIRE(fast.size() == ref.size());
        for (std::size_t i = 0; i < ref.size(); ++i) {
            CHECK(std::fabs(fast[i] - ref[i]) <= 1e-13 * ref[i]);
            if (r.scaling == attn::RopeScaling::llama3) {
                const double plain = std::pow(r.base, -2.0 * static_cast<double>(i) / D);
                kept += ref[i] == plain;
                divided += std::fabs(ref[i] - plain / r.factor) < 1e-15 * plain;
                blended += ref[i] < plain && ref[i] > plain / r.factor;
            }
        }
    }
    CHECK(kept > 100);
    CHECK(divided > 100);
    CHECK(blended > 20);
    // the table's cos and sin, and the rotation: R(m) then R(−m) gives x back; ⟨R(m)q, R(n)k⟩ depends on m − n
    attn::RopeSettings r;
    attn::RopeTable table;
    attn::rope_table(8, r, 3, 5, table);
    const std::vector<double> theta = attn::reference::rope_theta(8, r);
    for (int row = 0; row < 5; ++row)
        for (int i = 0; i < 4; ++i) {
            CHECK(table.cos_row(row)[i] == static_cast<float>(std::cos((3 + row) * theta[static_cast<std::size_t>(i)])));
            CHECK(table.sin_row(row)[i] == static_cast<float>(std::sin((3 + row) * theta[static_cast<std::size_t>(i)])));
        }
    std::vector<float> x(16), y;
    for (float& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);
    y = x;
    attn::rope_rotate_row(y.data(), 2, 8, table.cos_row(4), table.sin_row(4));
    attn::rope_rotate_row(y.data(), 2, 8, table.cos_row(4), table.sin_row(4), true);
    for (int i = 0; i < 16; ++i) CHECK(y[static_cast<std::size_t>(i)] == Approx(x[static_cast<std::size_t>(i)]).margin(1e-6));
    attn::RopeTable all;
    attn::rope_table(8, r, 0, 12, all);
    const auto rotated_dot = [&](int m, int n) {
        std::vector<float> q(x.begin(), x.begin() + 8), k(x.begin() + 8, x.end());
        attn::rope_rotate_row(q.data(), 1, 8, all.cos_row(m), all.sin_row(m));
        attn::rope_rotate_row(k.data(), 1, 8, all.cos_row(n), all.sin_row(n));
        double d = 0;
        for (int i = 0; i < 8; ++i) d += static_cast<double>(q[static_cast<std::size_t>(i)]) * k[static_cast<std::size_t>(i)];
        return d;
    };
    CHECK(rotated_dot(7, 4) == Approx(rotated_dot(3, 0)).margin(1e-5));
    CHECK(rotated_dot(11, 2) == Approx(rotated_dot(9, 0)).margin(1e-5));
}

// ---- embedding ------------------------------------------------------------------------------

namespace {

struct EmbeddingTrial {
    ModelConfig c;
    int B = 0, T = 0;
    std::vector<std::int32_t> ids;
    Matrix dout;
    EmbeddingTrial(std::mt19937& rng) : c(kind_config(rng)) {
        B = pick(rng, 1, 3);
        T = pick(rng, 1, c.context);
        for (int i = 0; i < B * T; ++i) ids.push_back(pick(rng, 0, c.vocab - 1));
        dout = random_matrix(rng, B * T, c.d_model);
    }
    std::vector<std::string> tensors() const { return tensors_named(c, {"embed", "pos", "token_type"}); }
};

}  // namespace

TEST_CASE("layer kinds: fast embedding forward and backward equal its double reference", "[kinds]") {
    std::mt19937 rng(201);
    for (int trial = 0; trial < kTrials; ++trial) {
        const EmbeddingTrial t(rng);
        INFO("trial " << trial << ": " << describe(t.c) << ", B " << t.B << ", T " << t.T);
        Weights w(rng, t.c);
        attn::EmbeddingCache cache;
        Matrix x;
        attn::embedding_forward(t.c, w.p, t.ids, t.B, t.T, cache, x, attn::Tap{});
        attn::embedding_backward(t.c, w.p, w.g, t.ids, t.B, t.T, cache, t.dout);

        const attn::reference::Tensors ref(t.c, w.values, &w.ref_grads);
        const std::vector<Mat> dout = split(t.dout, t.B, t.T);
        std::vector<Mat> out;
        for (int b = 0; b < t.B; ++b) {
            const std::vector<std::int32_t> ids = sequence(t.ids, b, t.T);
            const auto acts = attn::reference::embedding_forward(t.c, ref.embedding(), ids);
            attn::reference::embedding_backward(t.c, ref.embedding(), ids, acts, dout[static_cast<std::size_t>(b)]);
            out.push_back(acts.out);
        }
        CHECK(relative_error(x, join(out)) < kForwardTolerance);
        check_parameter_gradients(w.grads, w.ref_grads, kBackwardTolerance);
    }
}

TEST_CASE("layer kinds: the embedding reference's gradients equal central finite differences", "[kinds]") {
    std::mt19937 rng(202);
    for (int trial = 0; trial < kTrials; ++trial) {
        const EmbeddingTrial t(rng);
        Weights w(rng, t.c);
        const attn::reference::Tensors ref(t.c, w.values, &w.ref_grads);
        const attn::reference::Tensors plain(t.c, w.values, nullptr);
        const std::vector<Mat> r = split(t.dout, t.B, t.T);
        for (int b = 0; b < t.B; ++b) {
            const std::vector<std::int32_t> ids = sequence(t.ids, b, t.T);
            const auto acts = attn::reference::embedding_forward(t.c, ref.embedding(), ids);
            attn::reference::embedding_backward(t.c, ref.embedding(), ids, acts, r[static_cast<std::size_t>(b)]);
        }
        auto J = [&] {
            std::vector<Mat> out;
            for (int b = 0; b < t.B; ++b)
                out.push_back(attn::reference::embedding_forward(t.c, plain.embedding(), sequence(t.ids, b, t.T)).out);
            return dot(out, r);
        };
        check_finite_differences(rng, t.c, w.values, w.ref_grads, t.tensors(), nullptr, nullptr, J, 3, 0);
    }
}

// ---- attention ------------------------------------------------------------------------------

namespace {

struct AttentionTrial {
    ModelConfig c;
    int B = 0, T = 0, layer = 0;
    std::vector<int> lengths;
    attn::ForwardOptions options;
    float scale = 1.0f;
    Matrix a, dout;
    attn::RelativePositions positions;  // rope's table, alibi's slopes
    /// modern: the modern decoders' options drawn too (add_modern_options), after the others.
    explicit AttentionTrial(std::mt19937& rng, bool modern = false) : c(kind_config(rng)) {
        if (modern) add_modern_options(rng, c);
        B = pick(rng, 1, 3);
        T = pick(rng, 1, c.context);
        layer = pick(rng, 0, c.layers - 1);
        const bool padded = coin(rng);
        for (int b = 0; b < B; ++b) lengths.push_back(padded ? pick(rng, 0, T) : T);
        options.uniform_attention = pick(rng, 0, 3) == 0;
        if (pick(rng, 0, 2) == 0) {  // some heads ablated, in this layer or another
            options.head_enabled.assign(static_cast<std::size_t>(c.layers), std::vector<bool>(static_cast<std::size_t>(c.heads), true));
            for (auto& heads : options.head_enabled)
                for (std::size_t h = 0; h < heads.size(); ++h) heads[h] = coin(rng);
        }
        const int D = attn::head_dim_of(c);
        scale = c.scale ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(D))) : 1.0f;
        a = random_matrix(rng, B * T, c.d_model);
        dout = random_matrix(rng, B * T, c.d_model);
        attn::relative_positions(c, 0, T, positions);
    }
    attn::AttentionRun fast_run() const {
        attn::AttentionRun run;
        run.B = B;
        run.T = T;
        run.lengths = &lengths;
        run.causal = c.causal;
        run.scale = scale;
        run.layer = layer;
        run.options = &options;
        if (c.positional == attn::Positional::rope) run.rope = &positions.rope;
        if (c.positional == attn::Positional::alibi) run.alibi = &positions.alibi;
        return run;
    }
    attn::reference::AttentionRun reference_run(int b) const {
        attn::reference::AttentionRun run;
        run.heads = c.heads;
        run.length = lengths[static_cast<std::size_t>(b)];
        run.causal = c.causal;
        run.scale = scale;
        run.uniform = options.uniform_attention;
        for (int h = 0; h < c.heads; ++h) run.head_on.push_back(options.head_on(layer, h));
        run.kv_heads = c.kv_heads;
        run.head_dim = c.head_dim;
        run.positional = c.positional;
        run.rope = attn::rope_settings(c);
        run.qk_norm = c.qk_norm;
        run.eps = c.ln_eps;
        return run;
    }
    std::string describe_run() const {
        std::string s = describe(c) + ", B " + std::to_string(B) + ", T " + std::to_string(T) + ", layer " +
                        std::to_string(layer) + ", lengths";
        for (int len : lengths) s += " " + std::to_string(len);
        if (options.uniform_attention) s += ", uniform";
        for (int h = 0; h < c.heads; ++h)
            if (!options.head_on(layer, h)) s += ", head " + std::to_string(h) + " ablated";
        return s;
    }
};

}  // namespace

namespace {

/// kTrials attention trials (modern: with the modern decoders' options): the fast forward's
/// output and softmax weights, its backward's input and parameter gradients and Σ‖dS′‖²
/// against the double reference's. Returns the largest forward and backward errors.
std::pair<double, double> check_attention_against_reference(std::uint32_t seed, bool modern) {
    std::mt19937 rng(seed);
    double worst_forward = 0, worst_backward = 0;
    for (int trial = 0; trial < kTrials; ++trial) {
        const AttentionTrial t(rng, modern);
        INFO("trial " << trial << ": " << t.describe_run());
        Weights w(rng, t.c);
        const auto l = static_cast<std::size_t>(t.layer);
        attn::AttentionCache cache;
        Matrix out, da;
        double score_grad_sq = 0;
        const attn::AttentionRun run = t.fast_run();
        attn::attention_forward(t.c, w.p.layers[l], t.a, run, cache, out, nullptr, attn::Tap{});
        attn::attention_backward(t.c, w.p.layers[l], w.g.layers[l], t.a, run, cache, t.dout, da, score_grad_sq, attn::Tap{});

        const attn::reference::Tensors ref(t.c, w.values, &w.ref_grads);
        const std::vector<Mat> a = split(t.a, t.B, t.T), dout = split(t.dout, t.B, t.T);
        std::vector<Mat> rout, rda;
        double ref_score_grad_sq = 0;
        for (int b = 0; b < t.B; ++b) {
            const auto bi = static_cast<std::size_t>(b);
            const auto acts = attn::reference::attention_forward(ref.attention(t.layer), a[bi], t.reference_run(b));
            rda.push_back(attn::reference::attention_backward(ref.attention(t.layer), a[bi], t.reference_run(b), acts,
                                                              dout[bi], nullptr, &ref_score_grad_sq));
            rout.push_back(acts.out);
            for (int h = 0; h < t.c.heads; ++h) {  // the softmax weights themselves, block b·H + h
                const float* fw = cache.weights.data() + static_cast<std::size_t>((b * t.c.heads + h) * t.T * t.T);
                const Mat& rw = acts.weights[static_cast<std::size_t>(h)];
                CHECK(relative_error(fw, rw.v.data(), rw.v.size()) < kForwardTolerance);
            }
        }
        CHECK(relative_error(out, join(rout)) < kForwardTolerance);
        CHECK(relative_error(da, join(rda)) < kBackwardTolerance);
        check_parameter_gradients(w.grads, w.ref_grads, kBackwardTolerance);
        CHECK(std::fabs(score_grad_sq - ref_score_grad_sq) <= 1e-4 * std::max(1e-3, ref_score_grad_sq));
        worst_forward = std::max(worst_forward, relative_error(out, join(rout)));
        worst_backward = std::max(worst_backward, relative_error(da, join(rda)));
        for (const attn::ParamInfo& info : w.grads.layout())
            worst_backward = std::max(worst_backward, gradient_error(w.grads, w.ref_grads, info));
    }
    return {worst_forward, worst_backward};
}

/// kTrials attention trials: the reference's input and parameter gradients (the q/k norms'
/// gains too) against central finite differences of its own forward.
double check_attention_reference_by_finite_differences(std::uint32_t seed, bool modern) {
    double worst = 0;
    std::mt19937 rng(seed);
    for (int trial = 0; trial < kTrials; ++trial) {
        const AttentionTrial t(rng, modern);
        INFO("trial " << trial << ": " << t.describe_run());
        Weights w(rng, t.c);
        const attn::reference::Tensors ref(t.c, w.values, &w.ref_grads);
        const attn::reference::Tensors plain(t.c, w.values, nullptr);
        std::vector<Mat> a = split(t.a, t.B, t.T);
        const std::vector<Mat> r = split(t.dout, t.B, t.T);
        std::vector<Mat> da;
        for (int b = 0; b < t.B; ++b) {
            const auto bi = static_cast<std::size_t>(b);
            const auto acts = attn::reference::attention_forward(ref.attention(t.layer), a[bi], t.reference_run(b));
            da.push_back(attn::reference::attention_backward(ref.attention(t.layer), a[bi], t.reference_run(b), acts, r[bi]));
        }
        auto J = [&] {
            std::vector<Mat> out;
            for (int b = 0; b < t.B; ++b)
                out.push_back(attn::reference::attention_forward(plain.attention(t.layer), a[static_cast<std::size_t>(b)],
                                                                 t.reference_run(b)).out);
            return dot(out, r);
        };
        const std::string layer = "layers." + std::to_string(t.layer) + ".";
        const std::vector<std::string> names =
            tensors_named(t.c, {layer + "w_", layer + "b_", layer + "q_norm.", layer + "k_norm."});
        check_finite_differences(rng, t.c, w.values, w.ref_grads, names, &a, &da, J, 3, 6, &worst);
    }
    return worst;
}

}  // namespace

TEST_CASE("layer kinds: fast attention forward and backward equal its double reference", "[kinds]") {
    check_attention_against_reference(301, false);
}

TEST_CASE("layer kinds: the attention reference's gradients equal central finite differences", "[kinds]") {
    check_attention_reference_by_finite_differences(302, false);
}

TEST_CASE("layer kinds: fast attention with rope, alibi, grouped-query heads, head_dim, qkv_bias and qk_norm "
          "equals its double reference",
          "[kinds][modern]") {
    const auto [forward, backward] = check_attention_against_reference(311, true);
    WARN("modern attention, fast against the double reference: forward " << forward << ", backward " << backward);
}

TEST_CASE("layer kinds: the modern attention reference's gradients equal central finite differences", "[kinds][modern]") {
    WARN("modern attention, the reference against central differences: largest relative difference "
         << check_attention_reference_by_finite_differences(312, true));
}

// ---- MLP ------------------------------------------------------------------------------------

namespace {

struct MlpTrial {
    ModelConfig c;
    int N = 0, layer = 0;
    Matrix m, dout;
    /// gated: the gated MLP (SwiGLU with SiLU, or GELU), with or without biases.
    explicit MlpTrial(std::mt19937& rng, bool gated = false) : c(kind_config(rng)) {
        if (gated) {
            c.gated_mlp = true;
            c.mlp_bias = coin(rng);
            if (coin(rng)) c.activation = attn::Activation::silu;
        }
        c.mlp = pick(rng, 1, 12);
        N = pick(rng, 1, 12);
        layer = pick(rng, 0, c.layers - 1);
        m = random_matrix(rng, N, c.d_model, 1.5f);  // pre-activations over GELU's bend, both signs
        dout = random_matrix(rng, N, c.d_model);
    }
};

}  // namespace

namespace {

/// kTrials MLP trials (gated: the gated MLP): the fast forward and backward against the double
/// reference; returns the largest error.
double check_mlp_against_reference(std::uint32_t seed, bool gated) {
    std::mt19937 rng(seed);
    double worst = 0;
    for (int trial = 0; trial < kTrials; ++trial) {
        const MlpTrial t(rng, gated);
        INFO("trial " << trial << ": " << describe(t.c) << ", N " << t.N << ", layer " << t.layer);
        Weights w(rng, t.c);
        const auto l = static_cast<std::size_t>(t.layer);
        attn::MlpCache cache;
        Matrix out, dm;
        attn::mlp_forward(t.c, w.p.layers[l], t.m, cache, out);
        attn::mlp_backward(t.c, w.p.layers[l], w.g.layers[l], t.m, cache, t.dout, dm);

        const attn::reference::Tensors ref(t.c, w.values, &w.ref_grads);
        const Mat m = split(t.m, 1, t.N)[0];
        const auto acts = attn::reference::mlp_forward(t.c.activation, ref.mlp(t.layer), m);
        const Mat rdm = attn::reference::mlp_backward(t.c.activation, ref.mlp(t.layer), m, acts, split(t.dout, 1, t.N)[0]);
        CHECK(relative_error(out, acts.out.v) < kForwardTolerance);
        CHECK(relative_error(dm, rdm.v) < kBackwardTolerance);
        check_parameter_gradients(w.grads, w.ref_grads, kBackwardTolerance);
        worst = std::max({worst, relative_error(out, acts.out.v), relative_error(dm, rdm.v)});
    }
    return worst;
}

double check_mlp_reference_by_finite_differences(std::uint32_t seed, bool gated) {
    double worst = 0;
    std::mt19937 rng(seed);
    for (int trial = 0; trial < kTrials; ++trial) {
        const MlpTrial t(rng, gated);
        Weights w(rng, t.c);
        const attn::reference::Tensors ref(t.c, w.values, &w.ref_grads);
        const attn::reference::Tensors plain(t.c, w.values, nullptr);
        std::vector<Mat> m = split(t.m, 1, t.N);
        const std::vector<Mat> r = split(t.dout, 1, t.N);
        const auto acts = attn::reference::mlp_forward(t.c.activation, ref.mlp(t.layer), m[0]);
        const std::vector<Mat> dm = {attn::reference::mlp_backward(t.c.activation, ref.mlp(t.layer), m[0], acts, r[0])};
        auto J = [&] { return dot({attn::reference::mlp_forward(t.c.activation, plain.mlp(t.layer), m[0]).out}, r); };
        const std::vector<std::string> names = tensors_named(t.c, {"layers." + std::to_string(t.layer) + ".mlp."});
        check_finite_differences(rng, t.c, w.values, w.ref_grads, names, &m, &dm, J, 3, 6, &worst);
    }
    return worst;
}

}  // namespace

TEST_CASE("layer kinds: fast MLP forward and backward equal its double reference", "[kinds]") {
    check_mlp_against_reference(401, false);
}

TEST_CASE("layer kinds: the MLP reference's gradients equal central finite differences", "[kinds]") {
    check_mlp_reference_by_finite_differences(402, false);
}

TEST_CASE("layer kinds: the fast gated MLP (SwiGLU) equals its double reference", "[kinds][modern]") {
    WARN("gated MLP, fast against the double reference: " << check_mlp_against_reference(411, true));
}

TEST_CASE("layer kinds: the gated MLP reference's gradients equal central finite differences", "[kinds][modern]") {
    WARN("gated MLP, the reference against central differences: largest relative difference "
         << check_mlp_reference_by_finite_differences(412, true));
}

// ---- output head ----------------------------------------------------------------------------

namespace {

struct HeadTrial {
    ModelConfig c;
    int N = 0;
    Matrix h, dlogits;
    HeadTrial(std::mt19937& rng) : c(kind_config(rng)) {
        N = pick(rng, 1, 12);
        h = random_matrix(rng, N, c.d_model);
        dlogits = random_matrix(rng, N, c.vocab);
    }
    std::vector<std::string> tensors() const { return tensors_named(c, {"embed", "unembed", "head."}); }
};

}  // namespace

TEST_CASE("layer kinds: fast output head forward and backward equal its double reference", "[kinds]") {
    std::mt19937 rng(501);
    for (int trial = 0; trial < kTrials; ++trial) {
        const HeadTrial t(rng);
        INFO("trial " << trial << ": " << describe(t.c) << ", N " << t.N);
        Weights w(rng, t.c);
        attn::HeadCache cache;
        Matrix logits, dh;
        attn::head_forward(t.c, w.p, t.h, cache, logits);
        attn::head_backward(t.c, w.p, w.g, t.h, cache, t.dlogits, dh);

        const attn::reference::Tensors ref(t.c, w.values, &w.ref_grads);
        const Mat h = split(t.h, 1, t.N)[0];
        const auto acts = attn::reference::head_forward(t.c, ref.head(), h);
        const Mat rdh = attn::reference::head_backward(t.c, ref.head(), h, acts, split(t.dlogits, 1, t.N)[0]);
        CHECK(relative_error(logits, acts.logits.v) < kForwardTolerance);
        CHECK(relative_error(dh, rdh.v) < kBackwardTolerance);
        check_parameter_gradients(w.grads, w.ref_grads, kBackwardTolerance);
    }
}

TEST_CASE("layer kinds: the output head reference's gradients equal central finite differences", "[kinds]") {
    std::mt19937 rng(502);
    for (int trial = 0; trial < kTrials; ++trial) {
        const HeadTrial t(rng);
        Weights w(rng, t.c);
        const attn::reference::Tensors ref(t.c, w.values, &w.ref_grads);
        const attn::reference::Tensors plain(t.c, w.values, nullptr);
        std::vector<Mat> h = split(t.h, 1, t.N);
        const std::vector<Mat> r = split(t.dlogits, 1, t.N);
        const auto acts = attn::reference::head_forward(t.c, ref.head(), h[0]);
        const std::vector<Mat> dh = {attn::reference::head_backward(t.c, ref.head(), h[0], acts, r[0])};
        auto J = [&] { return dot({attn::reference::head_forward(t.c, plain.head(), h[0]).logits}, r); };
        check_finite_differences(rng, t.c, w.values, w.ref_grads, t.tensors(), &h, &dh, J, 3, 6);
    }
}

// ---- cross-entropy --------------------------------------------------------------------------

namespace {

struct CrossEntropyTrial {
    int B = 0, T = 0, V = 0, count = 0;
    Matrix logits;
    std::vector<std::int32_t> targets;
    CrossEntropyTrial(std::mt19937& rng) {
        B = pick(rng, 1, 3);
        T = pick(rng, 1, 8);
        V = pick(rng, 2, 20);
        const float spread[] = {0.1f, 3.0f, 30.0f};  // near-uniform to saturated rows
        logits = random_matrix(rng, B * T, V, spread[pick(rng, 0, 2)]);
        for (int i = 0; i < B * T; ++i) targets.push_back(pick(rng, 0, 4) == 0 ? attn::kNoTarget : pick(rng, 0, V - 1));
        if (std::count(targets.begin(), targets.end(), attn::kNoTarget) == B * T) targets[0] = 0;
        for (std::int32_t x : targets) count += x >= 0;
    }
};

}  // namespace

TEST_CASE("layer kinds: fast cross-entropy and its gradient equal the double reference", "[kinds]") {
    std::mt19937 rng(601);
    for (int trial = 0; trial < kTrials; ++trial) {
        const CrossEntropyTrial t(rng);
        INFO("trial " << trial << ": B " << t.B << ", T " << t.T << ", V " << t.V << ", targets " << t.count);
        Matrix grad;
        const attn::CrossEntropy fast = attn::cross_entropy(t.logits, t.targets, &grad);
        const attn::CrossEntropy loss_only = attn::cross_entropy(t.logits, t.targets, nullptr);
        double loss = 0;
        std::vector<Mat> dlogits;
        const std::vector<Mat> logits = split(t.logits, t.B, t.T);
        for (int b = 0; b < t.B; ++b)
            dlogits.push_back(attn::reference::cross_entropy(logits[static_cast<std::size_t>(b)], sequence(t.targets, b, t.T),
                                                             t.count, loss));
        // the most likely logit of each targeted row, by a plain scan (first of equals)
        int correct = 0;
        for (int i = 0; i < t.B * t.T; ++i) {
            if (t.targets[static_cast<std::size_t>(i)] < 0) continue;
            int best = 0;
            for (int v = 1; v < t.V; ++v) best = t.logits(i, v) > t.logits(i, best) ? v : best;
            correct += best == t.targets[static_cast<std::size_t>(i)];
        }
        CHECK(std::fabs(fast.loss - loss) <= 1e-5 * std::max(1.0, loss));
        CHECK(loss_only.loss == fast.loss);
        CHECK(fast.targets == t.count);
        CHECK(fast.correct == correct);
        CHECK(loss_only.correct == correct);
        CHECK(relative_error(grad, join(dlogits)) < kBackwardTolerance);
    }
}

TEST_CASE("layer kinds: the cross-entropy reference's gradient equals central finite differences", "[kinds]") {
    std::mt19937 rng(602);
    for (int trial = 0; trial < kTrials; ++trial) {
        const CrossEntropyTrial t(rng);
        std::vector<Mat> logits = split(t.logits, t.B, t.T);
        std::vector<Mat> dlogits;
        double loss = 0;
        for (int b = 0; b < t.B; ++b)
            dlogits.push_back(attn::reference::cross_entropy(logits[static_cast<std::size_t>(b)], sequence(t.targets, b, t.T),
                                                             t.count, loss));
        auto J = [&] {
            double l = 0;
            for (int b = 0; b < t.B; ++b)
                attn::reference::cross_entropy(logits[static_cast<std::size_t>(b)], sequence(t.targets, b, t.T), t.count, l);
            return l;
        };
        CHECK(std::fabs(J() - loss) == 0.0);
        ModelConfig c;  // only describe() reads it: no tensor is named
        std::vector<double> none;
        check_finite_differences(rng, c, none, none, {}, &logits, &dlogits, J, 0, 10);
    }
}
