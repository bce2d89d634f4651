// Tests of src/attention/multi_head.hpp: hand-computed golden values and the Eigen
// path against the double reference of reference.hpp.

#include "attention/attention.hpp"
#include "attention/mask.hpp"
#include "attention/multi_head.hpp"
#include "base/types.hpp"
#include "attention/weights.hpp"
#include "reference.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using Catch::Matchers::Contains;

namespace {

struct RandomCase {
    int t, heads, d, c;
    std::uint32_t seed;
    attn::Matrix x;
    attn::Weights w;
    attn::MaskMatrix mask;
    bool scale;
    std::string mask_kind;
};

RandomCase random_case(std::mt19937& rng) {
    RandomCase rc;
    rc.t = std::uniform_int_distribution<int>(1, 20)(rng);
    rc.heads = std::uniform_int_distribution<int>(1, 4)(rng);
    rc.d = std::uniform_int_distribution<int>(1, 8)(rng);
    rc.c = rc.heads * rc.d;
    rc.seed = static_cast<std::uint32_t>(rng());
    rc.x = ref::random_matrix(rng, rc.t, rc.c, -2, 2);
    rc.w = attn::glorot_weights(rc.c, rc.heads, rc.seed, std::bernoulli_distribution(0.2)(rng));
    rc.scale = std::bernoulli_distribution(0.8)(rng);
    switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
        case 0:
            rc.mask = attn::build_mask(attn::MaskKind::none, rc.t, rc.t);
            rc.mask_kind = "none";
            break;
        case 1:
            rc.mask = attn::build_mask(attn::MaskKind::causal, rc.t, rc.t);
            rc.mask_kind = "causal";
            break;
        case 2: {
            const int real = std::uniform_int_distribution<int>(1, rc.t)(rng);
            rc.mask = attn::build_mask(attn::MaskKind::causal_padding, rc.t, real);
            rc.mask_kind = "causal+padding real " + std::to_string(real);
            break;
        }
        default:
            // Random custom mask, fully masked rows possible.
            rc.mask = ref::random_mask(rng, rc.t, 0.6);
            rc.mask_kind = "random";
            break;
    }
    return rc;
}

std::string describe(const RandomCase& rc) {
    return "T=" + std::to_string(rc.t) + " H=" + std::to_string(rc.heads) + " D=" + std::to_string(rc.d) +
           " seed=" + std::to_string(rc.seed) + " mask=" + rc.mask_kind + " scale=" + (rc.scale ? "on" : "off");
}

std::string error_message(const attn::Matrix& x, const attn::Weights& w, int heads,
                          const attn::MaskMatrix& m) {
    try {
        attn::multi_head_attention(x, w, heads, m, true);
    } catch (const attn::Error& e) {
        return e.what();
    }
    return "<no error>";
}

attn::Weights identity_weights(int c) {
    const attn::Matrix i = attn::Matrix::Identity(c, c);
    return attn::Weights{i, i, i, i};
}

}  // namespace

// ---- golden values computed by hand ----------------------------------------------

TEST_CASE("multi_head_attention: golden values, T=2, C=2, H=1, identity weights, no scale",
          "[multi_head]") {
    // X = I (2×2), W_Q = W_K = W_V = W_O = I  →  Q = K = V = I.
    // scores = Q·Kᵀ = I = [[1, 0], [0, 1]]; scale off → scaled = scores.
    // Row 0 softmax of [1, 0]: [e/(e+1), 1/(e+1)] = [1/(1+e^-1), e^-1/(1+e^-1)]
    //   = [0.7310585786, 0.2689414214]; row 1 is the mirror image.
    // output = weights·V = weights (V = I); concat = output; Y = concat·I.
    const double a = 1.0 / (1.0 + std::exp(-1.0));  // 0.7310585786
    const double b = 1.0 - a;                       // 0.2689414214
    const attn::Matrix x = attn::Matrix::Identity(2, 2);
    const auto tr = attn::multi_head_attention(x, identity_weights(2), 1,
                                               attn::build_mask(attn::MaskKind::none, 2, 2), false);
    REQUIRE(tr.heads.size() == 1);
    const auto& h = tr.heads[0];
    CHECK(h.query == x);
    CHECK(h.key == x);
    CHECK(h.value == x);
    CHECK(h.scores == x);
    CHECK(h.scaled == x);
    CHECK(h.weights(0, 0) == Approx(a).margin(1e-6));
    CHECK(h.weights(0, 1) == Approx(b).margin(1e-6));
    CHECK(h.weights(1, 0) == Approx(b).margin(1e-6));
    CHECK(h.weights(1, 1) == Approx(a).margin(1e-6));
    for (const attn::Matrix* m : {&h.output, &tr.concat, &tr.output}) {
        CHECK((*m)(0, 0) == Approx(a).margin(1e-6));
        CHECK((*m)(0, 1) == Approx(b).margin(1e-6));
        CHECK((*m)(1, 0) == Approx(b).margin(1e-6));
        CHECK((*m)(1, 1) == Approx(a).margin(1e-6));
    }
}

TEST_CASE("multi_head_attention: golden values, T=2, C=2, H=1, scaled by 1/sqrt(2)", "[multi_head]") {
    // Same as above with the scale on: D = 2, scaled = I/sqrt(2) = [[0.7071, 0], [0, 0.7071]].
    // Row 0 softmax of [1/sqrt 2, 0]: [1/(1+e^-0.70710678), …]; e^-0.70710678 = 0.4930686914,
    // 1/1.4930686914 = 0.6697615493, and 1 - that = 0.3302384507.
    const double a = 1.0 / (1.0 + std::exp(-1.0 / std::sqrt(2.0)));
    CHECK(a == Approx(0.6697615493).margin(1e-9));  // the arithmetic of the comment above
    const auto tr = attn::multi_head_attention(attn::Matrix::Identity(2, 2), identity_weights(2), 1,
                                               attn::build_mask(attn::MaskKind::none, 2, 2), true);
    const auto& h = tr.heads[0];
    CHECK(h.scaled(0, 0) == Approx(0.7071067812).margin(1e-6));
    CHECK(h.scaled(0, 1) == 0.0f);
    CHECK(h.weights(0, 0) == Approx(0.6697615493).margin(1e-6));
    CHECK(h.weights(0, 1) == Approx(0.3302384507).margin(1e-6));
    CHECK(tr.output(1, 1) == Approx(0.6697615493).margin(1e-6));
    CHECK(tr.output(1, 0) == Approx(0.3302384507).margin(1e-6));
}

TEST_CASE("multi_head_attention: golden values, T=3, C=2, H=1, causal mask", "[multi_head]") {
    // X = [[1,0],[0,1],[1,1]], W_Q = W_K = I, W_V = [[1,0],[0,2]], W_O = [[0,1],[1,0]] (swap).
    // Q = K = X, V = X·W_V = [[1,0],[0,2],[1,2]].
    // scores = X·Xᵀ = [[1,0,1],[0,1,1],[1,1,2]]; scale off.
    // Causal weights:
    //   row 0: only key 0 → [1, 0, 0].
    //   row 1: keys 0,1 with scores [0, 1] → [1/(1+e), e/(1+e)] = [0.2689414214, 0.7310585786, 0].
    //   row 2: scores [1, 1, 2] → [e, e, e²]/(2e + e²) = [1, 1, e]/(2 + e)
    //          = [0.2119415576, 0.2119415576, 0.5761168848].
    // output = weights·V:
    //   row 0: [1, 0];
    //   row 1: 0.2689414214·[1,0] + 0.7310585786·[0,2] = [0.2689414214, 1.4621171573];
    //   row 2: p·[1,0] + p·[0,2] + q·[1,2] with p = 1/(2+e), q = e/(2+e)
    //          = [p+q, 2p+2q] = [(1+e)/(2+e), 2(1+e)/(2+e)] = [0.7880584424, 1.5761168848].
    // Y = concat·W_O swaps the two columns:
    //   [[0, 1], [1.4621171573, 0.2689414214], [1.5761168848, 0.7880584424]].
    attn::Matrix x(3, 2), wv(2, 2), wo(2, 2);
    x << 1, 0, 0, 1, 1, 1;
    wv << 1, 0, 0, 2;
    wo << 0, 1, 1, 0;
    const attn::Weights w{attn::Matrix::Identity(2, 2), attn::Matrix::Identity(2, 2), wv, wo};
    const auto tr =
        attn::multi_head_attention(x, w, 1, attn::build_mask(attn::MaskKind::causal, 3, 3), false);
    const auto& h = tr.heads[0];
    attn::Matrix scores(3, 3);
    scores << 1, 0, 1, 0, 1, 1, 1, 1, 2;
    CHECK(h.scores == scores);
    CHECK(h.scaled == scores);
    attn::Matrix v(3, 2);
    v << 1, 0, 0, 2, 1, 2;
    CHECK(h.value == v);

    const double e = std::exp(1.0);
    const double w10 = 1 / (1 + e), w11 = e / (1 + e);
    const double p = 1 / (2 + e), q = e / (2 + e);
    const double expected_weights[3][3] = {{1, 0, 0}, {w10, w11, 0}, {p, p, q}};
    const double expected_out[3][2] = {{1, 0}, {w10, 2 * w11}, {p + q, 2 * (p + q)}};
    // The numbers in the comment above, checked against the closed forms.
    CHECK(w10 == Approx(0.2689414214).margin(1e-9));
    CHECK(p == Approx(0.2119415576).margin(1e-9));
    CHECK(q == Approx(0.5761168848).margin(1e-9));
    CHECK(p + q == Approx(0.7880584424).margin(1e-9));
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            INFO("weights " << i << "," << j);
            CHECK(h.weights(i, j) == Approx(expected_weights[i][j]).margin(1e-6));
        }
        for (int j = 0; j < 2; ++j) {
            INFO("output " << i << "," << j);
            CHECK(h.output(i, j) == Approx(expected_out[i][j]).margin(1e-6));
            CHECK(tr.concat(i, j) == Approx(expected_out[i][j]).margin(1e-6));
            CHECK(tr.output(i, 1 - j) == Approx(expected_out[i][j]).margin(1e-6));
        }
    }
    // Masked entries are exact zeros.
    CHECK(h.weights(0, 1) == 0.0f);
    CHECK(h.weights(0, 2) == 0.0f);
    CHECK(h.weights(1, 2) == 0.0f);
    CHECK(h.weights(0, 0) == 1.0f);
}

TEST_CASE("multi_head_attention: golden values, T=2, C=2, H=2 heads of width 1, W_O not symmetric",
          "[multi_head]") {
    // X = I, W_Q = W_K = W_V = I, W_O = [[1,2],[3,4]]; D = 1 so the scale is 1/sqrt(1) = 1.
    // Head 0 uses column 0: q = k = v = [1, 0]ᵀ; scores = q·kᵀ = [[1,0],[0,0]].
    //   row 0: softmax [1, 0] = [a, b] with a = 1/(1+e^-1) = 0.7310585786, b = 1 - a;
    //   row 1: softmax [0, 0] = [1/2, 1/2].  output = weights·v = [a, 1/2]ᵀ.
    // Head 1 uses column 1: q = k = v = [0, 1]ᵀ; scores = [[0,0],[0,1]].
    //   row 0: [1/2, 1/2]; row 1: [b, a].  output = [1/2, a]ᵀ.
    // concat = [[a, 1/2], [1/2, a]].
    // Y = concat·W_O: row 0 = [a·1 + 1/2·3, a·2 + 1/2·4] = [a + 1.5, 2a + 2] = [2.2310585786, 3.4621171573];
    //                 row 1 = [1/2·1 + a·3, 1/2·2 + a·4] = [0.5 + 3a, 1 + 4a] = [2.6931757359, 3.9242343146].
    // (With W_Oᵀ by mistake row 0 would be [a + 1, 3a + 2] = [1.73…, 4.19…].)
    const double a = 1.0 / (1.0 + std::exp(-1.0));
    attn::Matrix wo(2, 2);
    wo << 1, 2, 3, 4;
    const attn::Matrix i2 = attn::Matrix::Identity(2, 2);
    const attn::Weights w{i2, i2, i2, wo};
    const auto tr = attn::multi_head_attention(i2, w, 2, attn::build_mask(attn::MaskKind::none, 2, 2), true);
    REQUIRE(tr.heads.size() == 2);
    REQUIRE(tr.heads[0].weights.rows() == 2);
    REQUIRE(tr.heads[0].query.cols() == 1);
    CHECK(tr.heads[0].scores(0, 0) == 1.0f);
    CHECK(tr.heads[0].scores(1, 1) == 0.0f);
    CHECK(tr.heads[1].scores(1, 1) == 1.0f);
    CHECK(tr.heads[1].scores(0, 0) == 0.0f);
    CHECK(tr.heads[0].weights(1, 0) == 0.5f);
    CHECK(tr.heads[0].weights(1, 1) == 0.5f);
    CHECK(tr.heads[1].weights(0, 0) == 0.5f);
    CHECK(tr.heads[1].weights(1, 1) == Approx(a).margin(1e-6));
    CHECK(tr.concat(0, 0) == Approx(a).margin(1e-6));
    CHECK(tr.concat(0, 1) == Approx(0.5).margin(1e-6));
    CHECK(tr.concat(1, 0) == Approx(0.5).margin(1e-6));
    CHECK(tr.concat(1, 1) == Approx(a).margin(1e-6));
    CHECK(tr.output(0, 0) == Approx(2.2310585786).margin(1e-5));
    CHECK(tr.output(0, 1) == Approx(3.4621171573).margin(1e-5));
    CHECK(tr.output(1, 0) == Approx(2.6931757359).margin(1e-5));
    CHECK(tr.output(1, 1) == Approx(3.9242343146).margin(1e-5));
    CHECK(a + 1.5 == Approx(2.2310585786).margin(1e-9));
    CHECK(0.5 + 3 * a == Approx(2.6931757359).margin(1e-9));
    CHECK(1 + 4 * a == Approx(3.9242343146).margin(1e-9));
}

TEST_CASE("multi_head_attention: golden projection X·W picks columns per head", "[multi_head]") {
    // T=1, C=2, H=2: X = [[1, 2]], W_Q = [[1,2],[3,4]].
    // Q = X·W_Q = [1·1 + 2·3, 1·2 + 2·4] = [7, 10]; head 0 gets [7], head 1 gets [10].
    // (W_Q·X would not type-check; Xᵀ-style W_Qᵀ would give [5, 11].)
    // With one token the weights are [[1]] and the output is V.
    attn::Matrix x(1, 2), wq(2, 2), wk(2, 2), wv(2, 2);
    x << 1, 2;
    wq << 1, 2, 3, 4;
    wk << 0, 1, 1, 0;  // K = [2, 1]
    wv << 2, 0, 0, 3;  // V = [2, 6]
    const attn::Weights w{wq, wk, wv, attn::Matrix::Identity(2, 2)};
    const auto tr = attn::multi_head_attention(x, w, 2, attn::build_mask(attn::MaskKind::none, 1, 1), true);
    CHECK(tr.heads[0].query(0, 0) == 7.0f);
    CHECK(tr.heads[1].query(0, 0) == 10.0f);
    CHECK(tr.heads[0].key(0, 0) == 2.0f);
    CHECK(tr.heads[1].key(0, 0) == 1.0f);
    CHECK(tr.heads[0].scores(0, 0) == 14.0f);  // 7·2
    CHECK(tr.heads[1].scores(0, 0) == 10.0f);  // 10·1
    CHECK(tr.heads[0].weights(0, 0) == 1.0f);
    CHECK(tr.heads[1].weights(0, 0) == 1.0f);
    CHECK(tr.output(0, 0) == 2.0f);
    CHECK(tr.output(0, 1) == 6.0f);
}

// ---- against the double reference ---------------------------------------------------

TEST_CASE("multi_head_attention: 200 random configurations match the double reference", "[multi_head]") {
    std::mt19937 rng(20240501);
    double worst = 0.0;
    for (int iter = 0; iter < 200; ++iter) {
        const RandomCase rc = random_case(rng);
        INFO("case " << iter << ": " << describe(rc));
        const auto tr = attn::multi_head_attention(rc.x, rc.w, rc.heads, rc.mask, rc.scale);
        const ref::Result r = ref::multi_head(rc.x, rc.w, rc.heads, rc.mask, rc.scale);
        REQUIRE(tr.heads.size() == static_cast<std::size_t>(rc.heads));
        for (int h = 0; h < rc.heads; ++h) {
            const auto& g = tr.heads[h];
            const auto& e = r.heads[h];
            const std::pair<const attn::Matrix*, const ref::Mat*> pairs[] = {
                {&g.query, &e.query},   {&g.key, &e.key},         {&g.value, &e.value},
                {&g.scores, &e.scores}, {&g.scaled, &e.scaled},   {&g.weights, &e.weights},
                {&g.output, &e.output}};
            const char* names[] = {"query", "key", "value", "scores", "scaled", "weights", "output"};
            for (int k = 0; k < 7; ++k) {
                const ref::Diff d = ref::compare(*pairs[k].first, *pairs[k].second, 1e-5);
                INFO("head " << h << " " << d.describe(names[k]));
                CHECK(d.ok());
                worst = std::max(worst, d.max_diff / std::max(1.0, d.magnitude));
            }
        }
        const ref::Diff dc = ref::compare(tr.concat, r.concat, 1e-5);
        const ref::Diff dout = ref::compare(tr.output, r.output, 1e-5);
        INFO(dc.describe("concat"));
        INFO(dout.describe("output"));
        CHECK(dc.ok());
        CHECK(dout.ok());
        worst = std::max(worst, dout.max_diff / std::max(1.0, dout.magnitude));
    }
    INFO("worst relative difference over all cases: " << worst);
    CHECK(worst <= 1e-5);
}

TEST_CASE("multi_head_attention: weights rows sum to 1 and masked entries are exactly 0 (200 configs)",
          "[multi_head]") {
    std::mt19937 rng(99);
    for (int iter = 0; iter < 200; ++iter) {
        const RandomCase rc = random_case(rng);
        INFO("case " << iter << ": " << describe(rc));
        const auto tr = attn::multi_head_attention(rc.x, rc.w, rc.heads, rc.mask, rc.scale);
        for (int h = 0; h < rc.heads; ++h) {
            const attn::Matrix& w = tr.heads[h].weights;
            REQUIRE(w.rows() == rc.t);
            REQUIRE(w.cols() == rc.t);
            REQUIRE(w.allFinite());
            CHECK(tr.heads[h].scaled.allFinite());
            for (int i = 0; i < rc.t; ++i) {
                INFO("head " << h << " row " << i);
                double sum = 0;
                for (int j = 0; j < rc.t; ++j) {
                    if (!rc.mask(i, j)) CHECK(w(i, j) == 0.0f);
                    CHECK(w(i, j) >= 0.0f);
                    sum += w(i, j);
                }
                if (rc.mask.row(i).any()) {
                    CHECK(std::abs(sum - 1.0) <= 1e-5);
                } else {
                    // Fully masked row: zero weights and a zero output row.
                    CHECK(sum == 0.0);
                    CHECK((tr.heads[h].output.row(i).array() == 0.0f).all());
                }
            }
        }
    }
}

TEST_CASE("multi_head_output: equals the Eigen reference trace's output exactly and the kernels' within 1e-5", "[multi_head]") {
    // multi_head_output is the independent Eigen path (no SIMD kernels): the
    // same operations as multi_head_attention_reference, so the same bits;
    // the traced path on the kernels rounds differently, within float error.
    std::mt19937 rng(4242);
    for (int iter = 0; iter < 100; ++iter) {
        const RandomCase rc = random_case(rng);
        INFO("case " << iter << ": " << describe(rc));
        const auto ref = attn::multi_head_attention_reference(rc.x, rc.w, rc.heads, rc.mask, rc.scale);
        const auto tr = attn::multi_head_attention(rc.x, rc.w, rc.heads, rc.mask, rc.scale);
        const attn::Matrix out = attn::multi_head_output(rc.x, rc.w, rc.heads, rc.mask, rc.scale);
        REQUIRE(out.rows() == rc.t);
        REQUIRE(out.cols() == rc.c);
        INFO("max |diff| vs the kernels = " << (out - tr.output).cwiseAbs().maxCoeff());
        CHECK(out == ref.output);
        CHECK((out - tr.output).cwiseAbs().maxCoeff() <= 1e-5f * std::max(1.0f, tr.output.cwiseAbs().maxCoeff()));
    }
}

TEST_CASE("multi_head_attention: H = 1 equals a single-head computation", "[multi_head]") {
    std::mt19937 rng(31337);
    for (int iter = 0; iter < 50; ++iter) {
        const int t = std::uniform_int_distribution<int>(1, 20)(rng);
        const int c = std::uniform_int_distribution<int>(1, 8)(rng);
        const attn::Matrix x = ref::random_matrix(rng, t, c, -2, 2);
        const attn::Weights w = attn::glorot_weights(c, 1, static_cast<std::uint32_t>(rng()));
        const attn::MaskMatrix m = ref::random_mask(rng, t, 0.7);
        INFO("T=" << t << " C=" << c);
        const auto tr = attn::multi_head_attention(x, w, 1, m, true);
        REQUIRE(tr.heads.size() == 1);

        // Single head through the library's own steps, full width D = C.
        const attn::Matrix q = x * w.w_query, k = x * w.w_key, v = x * w.w_value;
        attn::Matrix s, wts, out;
        attn::attention_scores(q, k, s);
        const attn::Matrix scaled = s * attn::score_scale(c, true);
        attn::masked_softmax(scaled, m, wts);
        attn::attention_output(wts, v, out);
        const attn::Matrix y = out * w.w_output;
        CHECK((tr.heads[0].weights - wts).cwiseAbs().maxCoeff() <= 1e-6f);
        CHECK((tr.heads[0].output - out).cwiseAbs().maxCoeff() <= 1e-5f);
        CHECK((tr.output - y).cwiseAbs().maxCoeff() <= 1e-5f);
        CHECK(tr.concat == tr.heads[0].output);

        // And the double reference's single head, written out here: softmax(QKᵀ/sqrt(C))·V·W_O.
        const ref::Mat xd = ref::from(x);
        const ref::Mat qd = ref::project_columns(xd, ref::from(w.w_query), 0, c);
        const ref::Mat kd = ref::project_columns(xd, ref::from(w.w_key), 0, c);
        const ref::Mat vd = ref::project_columns(xd, ref::from(w.w_value), 0, c);
        const ref::Mat wd = ref::masked_softmax(ref::scaled(ref::scores(qd, kd), 1.0 / std::sqrt(double(c))),
                                                ref::from(m));
        const ref::Mat yd = ref::matmul(ref::matmul(wd, vd), ref::from(w.w_output));
        const ref::Diff d = ref::compare(tr.output, yd, 1e-5);
        INFO(d.describe("output"));
        CHECK(d.ok());
    }
}

TEST_CASE("multi_head_attention: concat holds each head's output in its columns, scaled = scores/sqrt(D)",
          "[multi_head]") {
    std::mt19937 rng(8);
    for (int iter = 0; iter < 50; ++iter) {
        const RandomCase rc = random_case(rng);
        INFO(describe(rc));
        const auto tr = attn::multi_head_attention(rc.x, rc.w, rc.heads, rc.mask, rc.scale);
        REQUIRE(tr.concat.rows() == rc.t);
        REQUIRE(tr.concat.cols() == rc.c);
        REQUIRE(tr.output.rows() == rc.t);
        REQUIRE(tr.output.cols() == rc.c);
        for (int h = 0; h < rc.heads; ++h) {
            const auto& hd = tr.heads[h];
            CHECK(hd.query.rows() == rc.t);
            CHECK(hd.query.cols() == rc.d);
            CHECK(hd.key.cols() == rc.d);
            CHECK(hd.value.cols() == rc.d);
            CHECK(hd.output.cols() == rc.d);
            CHECK(hd.scores.rows() == rc.t);
            CHECK(hd.scores.cols() == rc.t);
            CHECK(tr.concat.middleCols(h * rc.d, rc.d) == hd.output);
            const float f = rc.scale ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(rc.d))) : 1.0f;
            for (int i = 0; i < rc.t; ++i)
                for (int j = 0; j < rc.t; ++j)
                    CHECK(std::abs(hd.scaled(i, j) - hd.scores(i, j) * f) <=
                          1e-6f * std::max(1.0f, std::abs(hd.scores(i, j))));
            if (!rc.scale) CHECK(hd.scaled == hd.scores);
        }
    }
}

TEST_CASE("multi_head_attention: shared head weights give identical heads", "[multi_head]") {
    std::mt19937 rng(77);
    const attn::Matrix x = ref::random_matrix(rng, 6, 12, -1, 1);
    const attn::Weights w = attn::glorot_weights(12, 3, 5, true);
    const auto tr = attn::multi_head_attention(x, w, 3, attn::build_mask(attn::MaskKind::causal, 6, 6), true);
    // Each head projects with its own columns, so identical weights give
    // bit-identical heads (the "heads differ" demo's measure drops to exactly 0).
    for (int h = 1; h < 3; ++h) {
        CHECK(tr.heads[h].query == tr.heads[0].query);
        CHECK(tr.heads[h].weights == tr.heads[0].weights);
        CHECK(tr.heads[h].output == tr.heads[0].output);
    }
    const attn::Weights w2 = attn::glorot_weights(12, 3, 5, false);
    const auto tr2 = attn::multi_head_attention(x, w2, 3, attn::build_mask(attn::MaskKind::causal, 6, 6), true);
    CHECK((tr2.heads[1].weights - tr2.heads[0].weights).cwiseAbs().maxCoeff() > 1e-3f);
}

TEST_CASE("multi_head_attention: without a mask permuting the rows of X permutes the output",
          "[multi_head]") {
    std::mt19937 rng(123);
    for (int iter = 0; iter < 100; ++iter) {
        const int t = std::uniform_int_distribution<int>(1, 20)(rng);
        const int heads = std::uniform_int_distribution<int>(1, 4)(rng);
        const int c = heads * std::uniform_int_distribution<int>(1, 8)(rng);
        const attn::Matrix x = ref::random_matrix(rng, t, c, -2, 2);
        const attn::Weights w = attn::glorot_weights(c, heads, static_cast<std::uint32_t>(rng()));
        std::vector<int> perm(t);
        for (int i = 0; i < t; ++i) perm[i] = i;
        std::shuffle(perm.begin(), perm.end(), rng);
        attn::Matrix xp(t, c);
        for (int i = 0; i < t; ++i) xp.row(i) = x.row(perm[i]);
        const attn::MaskMatrix m = attn::build_mask(attn::MaskKind::none, t, t);
        const attn::Matrix y = attn::multi_head_output(x, w, heads, m, true);
        const attn::Matrix yp = attn::multi_head_output(xp, w, heads, m, true);
        double worst = 0;
        for (int i = 0; i < t; ++i)
            worst = std::max(worst, static_cast<double>((yp.row(i) - y.row(perm[i])).cwiseAbs().maxCoeff()));
        INFO("T=" << t << " H=" << heads << " C=" << c << " max |diff| = " << worst);
        CHECK(worst <= 1e-5);
    }
}

TEST_CASE("multi_head_attention: a fully masked row gives zero weights and zero output, no NaN",
          "[multi_head]") {
    std::mt19937 rng(2);
    const attn::Matrix x = ref::random_matrix(rng, 4, 6, -1, 1);
    const attn::Weights w = attn::glorot_weights(6, 2, 1);
    attn::MaskMatrix m = attn::build_mask(attn::MaskKind::none, 4, 4);
    m.row(2).setConstant(false);
    const auto tr = attn::multi_head_attention(x, w, 2, m, true);
    for (const auto& h : tr.heads) {
        CHECK(h.weights.allFinite());
        CHECK((h.weights.row(2).array() == 0.0f).all());
        CHECK((h.output.row(2).array() == 0.0f).all());
        CHECK(h.scaled.allFinite());
    }
    CHECK(tr.output.allFinite());
    CHECK((tr.concat.row(2).array() == 0.0f).all());
    CHECK((tr.output.row(2).array() == 0.0f).all());
    CHECK((attn::multi_head_output(x, w, 2, m, true).row(2).array() == 0.0f).all());
}

TEST_CASE("multi_head_attention: huge inputs stay finite", "[multi_head]") {
    // Scores of order 1e4 and more: the stable softmax must not overflow.
    attn::Matrix x(3, 2);
    x << 100, 0, 0, 100, -100, 50;
    const attn::Matrix i2 = attn::Matrix::Identity(2, 2);
    const auto tr = attn::multi_head_attention(x, attn::Weights{i2, i2, i2, i2}, 1,
                                               attn::build_mask(attn::MaskKind::none, 3, 3), false);
    const auto& h = tr.heads[0];
    CHECK(h.weights.allFinite());
    CHECK(tr.output.allFinite());
    // Row 0: scores [1e4, 0, -1e4] → one-hot on key 0.
    CHECK(h.scores(0, 0) == 1e4f);
    CHECK(h.weights(0, 0) == 1.0f);
    CHECK(h.weights(0, 1) == 0.0f);
    for (int i = 0; i < 3; ++i) CHECK(h.weights.row(i).sum() == Approx(1.0f).margin(1e-5));
}

// ---- validation -----------------------------------------------------------------------

TEST_CASE("multi_head_attention: shape errors throw attn::Error naming the shapes", "[multi_head]") {
    const attn::Matrix x = attn::Matrix::Ones(3, 4);
    const attn::Weights w = attn::glorot_weights(4, 2, 1);
    const attn::MaskMatrix m = attn::build_mask(attn::MaskKind::none, 3, 3);
    CHECK_NOTHROW(attn::multi_head_attention(x, w, 2, m, true));

    SECTION("heads not dividing C") {
        const std::string msg = error_message(x, w, 3, m);
        INFO(msg);
        CHECK_THROWS_AS(attn::multi_head_attention(x, w, 3, m, true), attn::Error);
        CHECK_THROWS_AS(attn::multi_head_output(x, w, 3, m, true), attn::Error);
        CHECK_THAT(msg, Contains("3"));
        CHECK_THAT(msg, Contains("4"));
    }
    SECTION("zero heads") {
        CHECK_THROWS_AS(attn::multi_head_attention(x, w, 0, m, true), attn::Error);
        CHECK_THROWS_AS(attn::multi_head_output(x, w, 0, m, true), attn::Error);
    }
    SECTION("mask of the wrong shape") {
        const attn::MaskMatrix bad = attn::build_mask(attn::MaskKind::none, 2, 2);
        const std::string msg = error_message(x, w, 2, bad);
        INFO(msg);
        CHECK_THROWS_AS(attn::multi_head_attention(x, w, 2, bad, true), attn::Error);
        CHECK_THROWS_AS(attn::multi_head_output(x, w, 2, bad, true), attn::Error);
        CHECK_THAT(msg, Contains("2"));
        CHECK_THAT(msg, Contains("3"));
    }
    SECTION("weights of the wrong width") {
        const attn::Weights w6 = attn::glorot_weights(6, 2, 1);
        const std::string msg = error_message(x, w6, 2, m);
        INFO(msg);
        CHECK_THROWS_AS(attn::multi_head_attention(x, w6, 2, m, true), attn::Error);
        CHECK_THROWS_AS(attn::multi_head_output(x, w6, 2, m, true), attn::Error);
        CHECK_THAT(msg, Contains("6"));
        CHECK_THAT(msg, Contains("4"));
    }
    SECTION("one weight matrix of the wrong shape") {
        attn::Weights bad = w;
        bad.w_output = attn::Matrix::Ones(4, 5);
        const std::string msg = error_message(x, bad, 2, m);
        INFO(msg);
        CHECK_THROWS_AS(attn::multi_head_attention(x, bad, 2, m, true), attn::Error);
        CHECK_THAT(msg, Contains("5"));
    }
}

TEST_CASE("multi_head_attention: the kernel path equals multi_head_attention_reference within 1e-5",
          "[multi_head]") {
    std::mt19937 rng(4242);
    auto close = [](const attn::Matrix& a, const attn::Matrix& b) {
        if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
        for (Eigen::Index i = 0; i < a.rows(); ++i)
            for (Eigen::Index j = 0; j < a.cols(); ++j)
                if (!(std::abs(a(i, j) - b(i, j)) <= 1e-5f * std::max(1.0f, std::abs(b(i, j))))) return false;
        return true;
    };
    for (int iter = 0; iter < 100; ++iter) {
        const RandomCase rc = random_case(rng);
        INFO("case " << iter << ": " << describe(rc));
        const auto fast = attn::multi_head_attention(rc.x, rc.w, rc.heads, rc.mask, rc.scale);
        const auto slow = attn::multi_head_attention_reference(rc.x, rc.w, rc.heads, rc.mask, rc.scale);
        REQUIRE(fast.heads.size() == slow.heads.size());
        for (std::size_t h = 0; h < fast.heads.size(); ++h) {
            INFO("head " << h);
            const auto& f = fast.heads[h];
            const auto& s = slow.heads[h];
            CHECK(close(f.query, s.query));
            CHECK(close(f.key, s.key));
            CHECK(close(f.value, s.value));
            CHECK(close(f.scores, s.scores));
            CHECK(close(f.scaled, s.scaled));
            CHECK(close(f.weights, s.weights));
            CHECK(close(f.output, s.output));
        }
        CHECK(close(fast.concat, slow.concat));
        CHECK(close(fast.output, slow.output));
        CHECK(close(attn::multi_head_output(rc.x, rc.w, rc.heads, rc.mask, rc.scale), slow.output));
    }
}

TEST_CASE("multi_head_attention: no tokens (T = 0) give empty outputs on every path with any number of heads",
          "[multi_head]") {
    // A 0-row x has a null data pointer: taking a head's columns of it must not
    // offset that pointer (UBSan: "applying non-zero offset to null pointer").
    for (const int heads : {1, 2, 4, 8}) {
        INFO(heads << " heads");
        const attn::Matrix x(0, 8);
        const attn::Weights w = attn::glorot_weights(8, heads, 3);
        const attn::MaskMatrix m(0, 0);
        for (const auto& tr : {attn::multi_head_attention(x, w, heads, m, true),
                               attn::multi_head_attention_reference(x, w, heads, m, true)}) {
            REQUIRE(tr.heads.size() == static_cast<std::size_t>(heads));
            for (const auto& h : tr.heads) {
                CHECK(h.query.rows() == 0);
                CHECK(h.query.cols() == 8 / heads);
                CHECK(h.weights.size() == 0);
                CHECK(h.output.rows() == 0);
            }
            CHECK(tr.concat.rows() == 0);
            CHECK(tr.concat.cols() == 8);
            CHECK(tr.output.rows() == 0);
            CHECK(tr.output.cols() == 8);
        }
        const attn::Matrix y = attn::multi_head_output(x, w, heads, m, true);
        CHECK(y.rows() == 0);
        CHECK(y.cols() == 8);
    }
}

TEST_CASE("multi_head: x entries that are not finite or beyond 1e6 throw attn::Error naming the entry", "[multi_head]") {
    // x = 1e20 made the reference NaN (inf - inf in softmax) while the fast path stayed finite.
    const attn::Weights w = attn::glorot_weights(4, 2, 1);
    const attn::MaskMatrix m = attn::build_mask(attn::MaskKind::none, 3, 3);
    for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 1e20f, -2e6f}) {
        attn::Matrix x = attn::Matrix::Ones(3, 4);
        x(2, 1) = bad;
        INFO("x(2, 1) = " << bad);
        for (int path = 0; path < 3; ++path) {
            std::string message = "<no error>";
            try {
                if (path == 0) attn::multi_head_attention(x, w, 2, m, true);
                if (path == 1) attn::multi_head_attention_reference(x, w, 2, m, true);
                if (path == 2) attn::multi_head_output(x, w, 2, m, true);
            } catch (const attn::Error& e) {
                message = e.what();
            }
            INFO("path " << path << ": " << message);
            CHECK_THAT(message, Contains("x[2][1]"));
        }
    }
}

TEST_CASE("multi_head: the largest accepted inputs and weights (1e6) give finite outputs at C = 1024 unscaled",
          "[multi_head]") {
    // the worst case of the bound: unscaled scores of D·(C·1e6·1e6)² = 1e33, outputs near C²·1e18
    std::mt19937 rng(77);
    const int t = 3, c = 1024;
    auto extreme = [&](int rows, int cols) {
        attn::Matrix m(rows, cols);
        for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = (rng() & 1) ? 1e6f : -1e6f;
        return m;
    };
    const attn::Matrix x = extreme(t, c);
    const attn::Weights w{extreme(c, c), extreme(c, c), extreme(c, c), extreme(c, c)};
    const attn::MaskMatrix m = attn::build_mask(attn::MaskKind::causal, t, t);
    const auto tr = attn::multi_head_attention_reference(x, w, 1, m, false);
    CHECK(tr.heads[0].scores.allFinite());
    CHECK(tr.heads[0].weights.allFinite());
    CHECK(tr.output.allFinite());
    CHECK(attn::multi_head_attention(x, w, 1, m, false).output.allFinite());
    CHECK(attn::multi_head_output(x, w, 1, m, false).allFinite());
}

// ---- the relative positions: rope and alibi ---------------------------------------------

TEST_CASE("multi_head_attention: rope and alibi, 200 random configurations match the double reference on every path",
          "[multi_head][modern]") {
    std::mt19937 rng(20261205);
    double worst = 0.0;
    for (int iter = 0; iter < 200; ++iter) {
        RandomCase rc = random_case(rng);
        const attn::Positional kind = iter % 2 == 0 ? attn::Positional::rope : attn::Positional::alibi;
        if (kind == attn::Positional::rope && rc.d % 2 != 0) {  // rope turns pairs: an even head width
            rc.d += 1;
            rc.c = rc.heads * rc.d;
            rc.x = ref::random_matrix(rng, rc.t, rc.c, -2, 2);
            rc.w = attn::glorot_weights(rc.c, rc.heads, rc.seed, false);
        }
        INFO("case " << iter << ": " << describe(rc) << " " << attn::positional_name(kind));
        const attn::AttentionPositions positions{kind, {}};
        const auto tr = attn::multi_head_attention(rc.x, rc.w, rc.heads, rc.mask, rc.scale, positions);
        const auto eigen = attn::multi_head_attention_reference(rc.x, rc.w, rc.heads, rc.mask, rc.scale, positions);
        const ref::Result r = ref::multi_head(rc.x, rc.w, rc.heads, rc.mask, rc.scale, kind);
        for (int h = 0; h < rc.heads; ++h) {
            for (const auto* g : {&tr.heads[h], &eigen.heads[h]}) {
                const auto& e = r.heads[h];
                const std::pair<const attn::Matrix*, const ref::Mat*> pairs[] = {
                    {&g->query, &e.query}, {&g->key, &e.key}, {&g->scaled, &e.scaled}, {&g->weights, &e.weights},
                    {&g->output, &e.output}};
                const char* names[] = {"query", "key", "scaled", "weights", "output"};
                for (int k = 0; k < 5; ++k) {
                    const ref::Diff d = ref::compare(*pairs[k].first, *pairs[k].second, 1e-5);
                    INFO("head " << h << " " << d.describe(names[k]));
                    CHECK(d.ok());
                    worst = std::max(worst, d.max_diff / std::max(1.0, d.magnitude));
                }
                if (kind == attn::Positional::rope) {
                    CHECK(ref::compare(g->query_before_rope, e.query_before_rope, 1e-5).ok());
                    CHECK(ref::compare(g->key_before_rope, e.key_before_rope, 1e-5).ok());
                } else {
                    CHECK(g->query_before_rope.size() == 0);
                }
            }
        }
        const ref::Diff dout = ref::compare(tr.output, r.output, 1e-5);
        INFO(dout.describe("output"));
        CHECK(dout.ok());
        // the output-only path (engine.forwardReference) gives the Eigen trace's output exactly
        CHECK(attn::multi_head_output(rc.x, rc.w, rc.heads, rc.mask, rc.scale, positions) == eigen.output);
        worst = std::max(worst, dout.max_diff / std::max(1.0, dout.magnitude));
    }
    WARN("rope and alibi, worst relative difference from the double reference: " << worst);
    CHECK(worst <= 1e-5);
}

TEST_CASE("multi_head_attention: rope with an odd head width is refused by name", "[multi_head][modern]") {
    const attn::Matrix x = attn::Matrix::Ones(2, 3);
    const attn::Weights w = identity_weights(3);
    const attn::MaskMatrix m = attn::build_mask(attn::MaskKind::none, 2, 2);
    CHECK_THROWS_WITH(attn::multi_head_attention(x, w, 1, m, true, {attn::Positional::rope, {}}),
                      Contains("rope") && Contains("even"));
    CHECK_NOTHROW(attn::multi_head_attention(x, w, 1, m, true, {attn::Positional::alibi, {}}));
}
