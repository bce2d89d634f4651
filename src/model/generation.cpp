#include "model/generation.hpp"

#include "base/random.hpp"
#include "model/block.hpp"
#include "model/layers.hpp"

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

/// Keeps each head's attention weights of the last new row (KvCache::weights).
class WeightsTap final : public Tap {
public:
    explicit WeightsTap(std::vector<std::vector<std::vector<float>>>& out) : Tap(true), out_(out) {}

private:
    bool keeps(Point point, int) const override { return point == Point::weights; }
    void put(Point, const Site& at, const Eigen::Ref<const Matrix>& value) const override {
        std::vector<float>& w = out_[static_cast<std::size_t>(at.layer)][static_cast<std::size_t>(at.head)];
        const Eigen::Index last = value.rows() - 1;
        w.resize(static_cast<std::size_t>(value.cols()));
        for (Eigen::Index j = 0; j < value.cols(); ++j) w[static_cast<std::size_t>(j)] = value(last, j);
    }

    std::vector<std::vector<std::vector<float>>>& out_;
};

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
    kv_.resize(static_cast<std::size_t>(c.layers));
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
    forget_last();
}

void KvCache::forget_last() {
    logits_.resize(0, 0);
    for (auto& layer : weights_)
        for (auto& w : layer) w.clear();
}

void KvCache::check_token(std::int32_t id, int t) const {
    const ModelConfig& c = model_.config();
    if (t >= c.context)
        throw Error(Error::Code::too_long_for_model, "the text has " + std::to_string(t) + " tokens, the most this model reads (its context): it cannot add another");
    if (id < 0 || id >= c.vocab)
        throw Error("token id " + std::to_string(id) + " is outside the vocabulary 0 … " + std::to_string(c.vocab - 1));
}

void KvCache::append(std::int32_t id) {
    const int t = length();
    check_token(id, t);
    // a NaN or an infinity is refused where it first appears (block.hpp), before the cache takes the
    // token; the last append's logits and weights are then forgotten (some layers' rows were redone)
    try {
        append_row(id, t);
    } catch (const Error&) {
        forget_last();
        throw;
    }
    ids_.push_back(id);
}

void KvCache::append(const std::vector<std::int32_t>& ids) {
    const int start = length();
    for (std::size_t i = 0; i < ids.size(); ++i) check_token(ids[i], start + static_cast<int>(i));
    try {
        for (std::size_t at = 0; at < ids.size(); at += kPrefillRows) {
            const int n = static_cast<int>(std::min<std::size_t>(kPrefillRows, ids.size() - at));
            append_rows(ids.data() + at, n, length());
            ids_.insert(ids_.end(), ids.begin() + static_cast<std::ptrdiff_t>(at), ids.begin() + static_cast<std::ptrdiff_t>(at) + n);
        }
    } catch (const Error&) {
        ids_.resize(static_cast<std::size_t>(start));  // (the rows after it in kv_ are not read)
        forget_last();
        throw;
    }
}

void KvCache::append_row(std::int32_t id, int t) { append_rows(&id, 1, t); }

void KvCache::append_rows(const std::int32_t* new_ids, int n, int t) {
    const ModelConfig& c = model_.config();
    mark_panels(slots_, model_.params());  // as stored now
    const ParamPtrs p = bind(slots_, model_.params());
    const std::vector<std::int32_t> ids(new_ids, new_ids + n);
    const std::vector<int> lengths = {n};
    const ForwardOptions options;  // the model as it is: every head, its own mask and scale
    const WeightsTap rec(weights_);  // (each head's last row)
    Matrix x, h;
    embedding_forward(c, p, ids, 1, n, embedding_, x, rec, t);  // the new rows, at positions t …
    check_finite(c.embed_layernorm ? Point::embed_norm : Point::token_embed, x);
    relative_positions(c, t, n, positions_);
    LayerState state;  // one block's buffers, reused by every layer
    for (int l = 0; l < c.layers; ++l) {
        AttentionRun run = attention_run(c, 1, n, lengths, options, l, &positions_);
        run.cache = &kv_[static_cast<std::size_t>(l)];
        run.past = t;
        block_forward(c, p.layers[static_cast<std::size_t>(l)], run, state, x, nullptr, rec);
        check_block_finite(c, run, state, x);
    }
    // the logits of the last row only (the others' would be V × C products no one reads)
    const Matrix last = x.bottomRows(1);
    LayerNormCache ln;
    final_norm_forward(c, p, last, ln, h, rec);
    check_finite(Point::final_norm, h);
    HeadCache head;
    head_forward(c, p, h, head, logits_);
    check_finite(Point::logits, logits_);
}

}  // namespace attn
