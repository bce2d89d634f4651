#include "model/generation.hpp"

#include "kernels/gemm.hpp"
#include "model/layers.hpp"
#include "attention/positional.hpp"
#include "base/random.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace attn {

namespace {

std::string number(double x) {
    std::string s = std::to_string(x);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

/// y (1×n) = x (1×m)·W (m×n) (+ b).
void row_affine(const Matrix& x, const float* w, const float* b, int m, int n, Matrix& y, bool panels) {
    if (panels && fits_panels(n))
        gemm_panels(x, w, m, n, y);  // the weights as Parameters::use_panels stores them
    else
        y.noalias() = x * as_matrix(w, m, n);
    if (b) y += as_matrix(b, 1, n);
}

}  // namespace

void validate_generation_options(const GenerationOptions& o, int vocab) {
    if (!o.sample) return;
    if (!(o.temperature >= kMinTemperature && o.temperature <= kMaxTemperature))
        throw Error("the temperature " + number(o.temperature) + " is outside " + number(kMinTemperature) + " … " +
                    number(kMaxTemperature));
    if (o.top_k < 0 || o.top_k > vocab)
        throw Error("top-k " + std::to_string(o.top_k) + " is outside 0 (every token) … the vocabulary's " +
                    std::to_string(vocab));
}

std::int32_t choose_token(const float* logits, int vocab, const GenerationOptions& o, int position) {
    validate_generation_options(o, vocab);
    if (vocab < 1) throw Error("there are no logits to choose from");
    if (!o.sample) {
        int best = 0;
        for (int j = 1; j < vocab; ++j)
            if (logits[j] > logits[best]) best = j;
        return best;
    }
    // the candidates: the top_k largest logits, the largest first (equal ones by id)
    std::vector<int> order(static_cast<std::size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    const int k = o.top_k == 0 ? vocab : o.top_k;
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) {
        return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    });
    // softmax(logits / temperature) over them, in double, the largest first
    std::vector<double> p(static_cast<std::size_t>(k));
    const double top = logits[order[0]];
    double total = 0;
    for (int i = 0; i < k; ++i) total += p[static_cast<std::size_t>(i)] = std::exp((logits[order[static_cast<std::size_t>(i)]] - top) / o.temperature);
    // u in [0, 1) from the counter-based stream: 53 bits of the hash
    const std::uint64_t h = counter_hash(o.seed, Stream::generation, static_cast<std::uint64_t>(position), 0);
    const double u = static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
    double cumulative = 0;
    for (int i = 0; i < k; ++i) {
        cumulative += p[static_cast<std::size_t>(i)];
        if (u * total < cumulative) return order[static_cast<std::size_t>(i)];
    }
    return order[static_cast<std::size_t>(k - 1)];  // u·total rounded up to the sum
}

KvCache::KvCache(const Model& model) : model_(model), slots_(resolve_slots(model.config(), model.params())) {
    const ModelConfig& c = model.config();
    if (!c.causal)
        throw Error(family_title(c.family, "this model") +
                    " is not causal: every token reads the tokens after it too, so it cannot write a text one token at "
                    "a time (generation needs a causal model such as GPT-2)");
    keys_.resize(static_cast<std::size_t>(c.layers));
    values_.resize(static_cast<std::size_t>(c.layers));
    weights_.assign(static_cast<std::size_t>(c.layers), std::vector<std::vector<float>>(static_cast<std::size_t>(c.heads)));
}

KvCache::~KvCache() = default;

const std::vector<float>& KvCache::weights(int layer, int head) const {
    const ModelConfig& c = model_.config();
    if (layer < 0 || layer >= c.layers || head < 0 || head >= c.heads)
        throw Error("layer " + std::to_string(layer) + " head " + std::to_string(head) + " is outside the model's " +
                    std::to_string(c.layers) + " layers × " + std::to_string(c.heads) + " heads");
    return weights_[static_cast<std::size_t>(layer)][static_cast<std::size_t>(head)];
}

void KvCache::truncate(int length) {
    if (length < 0 || length > this->length())
        throw Error("truncate to " + std::to_string(length) + " tokens: the cache holds " + std::to_string(this->length()));
    ids_.resize(static_cast<std::size_t>(length));
    logits_.resize(0, 0);
    for (auto& layer : weights_)
        for (auto& w : layer) w.clear();
}

void KvCache::append(std::int32_t id) {
    const ModelConfig& c = model_.config();
    const int C = c.d_model, H = c.heads, D = C / H, t = length();
    if (t >= c.context)
        throw Error(Error::Code::too_long_for_model, "the text has " + std::to_string(t) + " tokens, the most this model reads (its context): it cannot add another");
    if (id < 0 || id >= c.vocab)
        throw Error("token id " + std::to_string(id) + " is outside the vocabulary 0 … " + std::to_string(c.vocab - 1));
    mark_panels(slots_, model_.params());  // as stored now
    const ParamPtrs p = bind(slots_, model_.params().flat().data());
    const bool post = c.norm == Norm::post;

    // the new row's embedding
    Matrix x = as_matrix(p.embed, c.vocab, C).row(id);
    if (c.positional == Positional::learned) x += as_matrix(p.pos, c.context, C).row(t);
    if (c.positional == Positional::sinusoidal) {
        if (sinusoid_.rows() != c.context) sinusoid_ = positional_encoding(Positional::sinusoidal, c.context, C, 0);
        x += sinusoid_.row(t);
    }
    if (c.token_types > 0) x += as_matrix(p.token_type, c.token_types, C).row(0);
    LayerNormCache ln;
    Matrix a, tmp;
    if (c.embed_layernorm) {
        tmp = x;
        layernorm_forward(tmp, p.embed_ln_gain, p.embed_ln_bias, c.ln_eps, x, ln);
    }
    const float scale = c.scale ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(D))) : 1.0f;
    Matrix q, k, v, concat(1, C), out;
    std::vector<float> s;
    for (int l = 0; l < c.layers; ++l) {
        const LayerParams<const float*>& lp = p.layers[static_cast<std::size_t>(l)];
        if (c.layernorm && !post)
            layernorm_forward(x, lp.ln1_gain, lp.ln1_bias, c.ln_eps, a, ln);
        else
            a = x;
        row_affine(a, lp.w_query, lp.b_query, C, C, q, lp.panels);
        row_affine(a, lp.w_key, lp.b_key, C, C, k, lp.panels);
        row_affine(a, lp.w_value, lp.b_value, C, C, v, lp.panels);
        // the cache's new row (capacity doubles, up to the context)
        Matrix& K = keys_[static_cast<std::size_t>(l)];
        Matrix& V = values_[static_cast<std::size_t>(l)];
        if (K.rows() <= t) {
            const Eigen::Index rows = std::min<Eigen::Index>(c.context, std::max<Eigen::Index>(8, 2 * K.rows()));
            K.conservativeResize(rows, C);
            V.conservativeResize(rows, C);
        }
        K.row(t) = k;
        V.row(t) = v;
        for (int h = 0; h < H; ++h) {
            // pass 1: scores over keys 0 … t and their max; pass 2: exp and sum; pass 3: normalise and weight V
            s.resize(static_cast<std::size_t>(t + 1));
            float top = -INFINITY;
            for (int j = 0; j <= t; ++j) {
                float dot = 0;
                for (int d = 0; d < D; ++d) dot += q(0, h * D + d) * K(j, h * D + d);
                s[static_cast<std::size_t>(j)] = dot * scale;
                top = std::max(top, s[static_cast<std::size_t>(j)]);
            }
            float sum = 0;
            for (float& e : s) sum += e = std::exp(e - top);
            for (float& e : s) e /= sum;
            for (int d = 0; d < D; ++d) {
                float o = 0;
                for (int j = 0; j <= t; ++j) o += s[static_cast<std::size_t>(j)] * V(j, h * D + d);
                concat(0, h * D + d) = o;
            }
            weights_[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)] = s;
        }
        row_affine(concat, lp.w_output, lp.b_output, C, C, out, lp.panels);
        if (post) {
            tmp = x + out;
            layernorm_forward(tmp, lp.ln1_gain, lp.ln1_bias, c.ln_eps, x, ln);
        } else {
            x += out;
        }
        if (c.mlp > 0) {
            MlpCache mlp;
            if (c.layernorm && !post)
                layernorm_forward(x, lp.ln2_gain, lp.ln2_bias, c.ln_eps, a, ln);
            else
                a = x;
            mlp_forward(c, lp, a, mlp, out);
            if (post) {
                tmp = x + out;
                layernorm_forward(tmp, lp.ln2_gain, lp.ln2_bias, c.ln_eps, x, ln);
            } else {
                x += out;
            }
        }
    }
    if (c.layernorm && !post) {
        tmp = x;
        layernorm_forward(tmp, p.final_ln_gain, p.final_ln_bias, c.ln_eps, x, ln);
    }
    HeadCache head;
    head_forward(c, p, x, head, logits_);
    ids_.push_back(id);
}

}  // namespace attn
