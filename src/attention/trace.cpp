#include "attention/trace.hpp"

#include "attention/embedding.hpp"
#include "attention/validate.hpp"

#include <algorithm>
#include <string>

namespace attn {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

}  // namespace

const Weights& WeightsCache::get(int d_model, int heads, std::uint32_t seed, bool share_heads) {
    if (kept_ && kept_->d_model == d_model && kept_->heads == heads && kept_->seed == seed &&
        kept_->share_heads == share_heads) {
        ++hits_;
        return kept_->weights;
    }
    ++misses_;
    kept_.reset();  // free the old set first: peak memory is one set
    kept_ = Kept{d_model, heads, seed, share_heads, glorot_weights(d_model, heads, seed, share_heads)};
    return kept_->weights;
}

std::size_t WeightsCache::bytes() const {
    if (!kept_) return 0;
    const Weights& w = kept_->weights;
    return sizeof(float) * static_cast<std::size_t>(w.w_query.size() + w.w_key.size() + w.w_value.size() + w.w_output.size());
}

void validate_config(const Config& c) {
    if (c.d_model < 1) throw Error("d_model must be at least 1, got " + str(c.d_model));
    if (c.d_model > kMaxDModel)
        throw Error(Error::Code::too_large, "d_model " + str(c.d_model) + " is above the limit of " + str(kMaxDModel));
    if (c.heads >= 1 && c.heads > c.d_model)
        throw Error(str(c.heads) + " heads do not fit in d_model " + str(c.d_model) + " (at most one head per dimension)");
    check_heads(c.d_model, c.heads);
    check_positions(AttentionPositions{c.positional, {}}, c.d_model / c.heads);
    if (c.pad_to < 0) throw Error("pad_to must not be negative, got " + str(c.pad_to));
    if (c.pad_to > kMaxTokens)
        throw Error(Error::Code::too_many_tokens, "pad_to " + str(c.pad_to) + " is above the limit of " + str(kMaxTokens) + " tokens");
    if (c.mask == MaskKind::custom && !c.custom_mask)
        throw Error(Error::Code::bad_mask, "mask \"custom\" needs a custom mask matrix");
    if (c.weights) validate_weights(*c.weights, c.d_model);
}

Trace run(const std::string& sentence, const Config& config, WeightsCache* cache) {
    validate_config(config);
    Trace tr;
    tr.config = config;
    tr.d_head = config.d_model / config.heads;

    // tokens, then padding up to pad_to
    // the byte limit first, then the token limit while tokenizing: memory stays
    // bounded by them whatever the input
    tr.tokens = tokenize(sentence, TokenizeOptions{config.lowercase, static_cast<std::size_t>(kMaxTokens)});
    if (tr.tokens.empty()) throw Error(Error::Code::empty_text, "the sentence has no tokens (it is empty or only whitespace)");
    const std::int64_t real = static_cast<std::int64_t>(tr.tokens.size());
    if (real > kMaxTokens)
        throw Error(Error::Code::too_many_tokens, "the sentence has " + str(real) + " tokens, above the limit of " + str(kMaxTokens));
    if (config.pad_to > 0 && config.pad_to < real)
        throw Error("pad_to " + str(config.pad_to) + " is shorter than the sentence's " + str(real) + " tokens");
    tr.real_tokens = static_cast<int>(real);
    while (static_cast<int>(tr.tokens.size()) < config.pad_to) tr.tokens.push_back(pad_token(sentence.size()));
    const int t = static_cast<int>(tr.tokens.size());

    const std::int64_t trace_floats = 3LL * config.heads * t * t;
    if (trace_floats > kMaxTraceScoreFloats)
        throw Error(Error::Code::too_large, "a full trace of " + str(t) + " tokens and " + str(config.heads) + " heads needs " +
                    str(trace_floats * 4 / (1024 * 1024)) + " MB of score matrices, above the limit of " +
                    str(kMaxTraceScoreFloats * 4 / (1024 * 1024)) + " MB");

    // the mask
    if (config.mask == MaskKind::custom) {
        const MaskMatrix& m = *config.custom_mask;
        check_mask_shape(m.rows(), m.cols(), t, "custom mask");
        tr.mask = m;
    } else {
        tr.mask = build_mask(config.mask, t, tr.real_tokens);
    }

    // X, P, X' = X + P
    tr.embeddings = embed_tokens(tr.tokens, config.d_model, config.seed);                     // (T, C)
    tr.positional = positional_encoding(config.positional, t, config.d_model, config.seed);   // (T, C)
    tr.input = tr.embeddings + tr.positional;                                                 // (T, C)

    if (config.weights)
        tr.weights = *config.weights;
    else if (cache)
        tr.weights = cache->get(config.d_model, config.heads, config.seed, config.share_heads);
    else
        tr.weights = glorot_weights(config.d_model, config.heads, config.seed, config.share_heads);
    tr.config.weights.reset();  // the trace keeps them once, in tr.weights
    // rope and alibi act inside attention (RoFormer's default base, 10000)
    const AttentionPositions positions{config.positional, {}};
    if (config.positional == Positional::rope) {
        const std::vector<double> theta = rope_frequencies(tr.d_head, positions.rope);
        tr.rope_frequencies = Eigen::Map<const Eigen::VectorXd>(theta.data(), static_cast<Eigen::Index>(theta.size())).cast<float>();
    }
    if (config.positional == Positional::alibi) {
        const std::vector<float> slopes = alibi_slopes(config.heads);
        tr.alibi_slopes = Eigen::Map<const Vector>(slopes.data(), static_cast<Eigen::Index>(slopes.size()));
    }
    MultiHeadTrace mh = multi_head_attention(tr.input, tr.weights, config.heads, tr.mask, config.scale, positions);
    tr.heads = std::move(mh.heads);
    tr.concat = std::move(mh.concat);
    tr.output = std::move(mh.output);
    return tr;
}

std::vector<Trace> run_batch(const std::vector<std::string>& sentences, const Config& config, WeightsCache* cache) {
    if (sentences.empty()) throw Error("the batch has no sentences");
    if (sentences.size() > static_cast<std::size_t>(kMaxBatchSentences))
        throw Error(Error::Code::too_many_tokens, "the batch has " + str(static_cast<std::int64_t>(sentences.size())) +
                                                      " sentences, above the limit of " + str(kMaxBatchSentences));
    int longest = 0;
    for (std::size_t i = 0; i < sentences.size(); ++i) {
        try {
            longest = std::max(longest, static_cast<int>(
                                            tokenize(sentences[i], {config.lowercase, static_cast<std::size_t>(kMaxTokens)})
                                                .size()));
        } catch (const Error& e) {
            throw Error(e.code(), "sentence " + str(static_cast<std::int64_t>(i + 1)) + ": " + e.what(), e.kind());
        }
    }
    Config c = config;
    c.pad_to = std::max(longest, config.pad_to);
    std::vector<Trace> out;
    for (std::size_t i = 0; i < sentences.size(); ++i) {
        try {
            out.push_back(run(sentences[i], c, cache));
        } catch (const Error& e) {
            throw Error(e.code(), "sentence " + str(static_cast<std::int64_t>(i + 1)) + ": " + e.what(), e.kind());
        }
    }
    return out;
}

}  // namespace attn
