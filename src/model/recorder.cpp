// The Recorder's tap (tap.hpp): which named intermediate goes where in a
// ModelTrace and a GradientTrace, and which a Recorder keeps.

#include "model/tap.hpp"

#include "attention/mask.hpp"
#include "kernels/bounds.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace attn {
namespace {

/// Softmax of each logits row, in double (the trace's probabilities): one exp
/// per logit, kept for the division (T·V of them: 26 M at T = 512 with GPT-2's
/// vocabulary). Read row by row through pointers: a row of the Ref is contiguous.
Matrix row_softmax(const Eigen::Ref<const Matrix>& logits) {
    const Eigen::Index V = logits.cols();
    Matrix out(logits.rows(), V);
    std::vector<double> e(static_cast<std::size_t>(V));
    for (Eigen::Index i = 0; i < logits.rows(); ++i) {
        const float* li = logits.data() + i * logits.outerStride();
        float* oi = out.data() + i * V;
        const float mx = *std::max_element(li, li + V);
        double sum = 0;
        for (Eigen::Index j = 0; j < V; ++j) {
            e[static_cast<std::size_t>(j)] = std::exp(static_cast<double>(li[j]) - mx);
            sum += e[static_cast<std::size_t>(j)];
        }
        for (Eigen::Index j = 0; j < V; ++j) oi[j] = static_cast<float>(e[static_cast<std::size_t>(j)] / sum);
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

/// Which of the Recorder's rules keeps a point.
enum class Rule {
    always,   ///< the model's intermediates, and the per-layer stream gradients of every visited layer
    layer,    ///< Recorder::keeps(layer) (its `layer` field): a head's, and the attention's output gradient
    vectors,  ///< Recorder::keeps_vectors(layer)
    either,   ///< the attention's concat and output: kept with the heads or with the vectors
};

Rule rule_of(Point p) {
    switch (p) {
        case Point::q: case Point::k: case Point::v: case Point::q_before_rope: case Point::k_before_rope:
        case Point::scores: case Point::scaled: case Point::row_max:
        case Point::row_sum: case Point::weights: case Point::head_out:
        case Point::d_attn_out: case Point::d_head_out: case Point::d_weights: case Point::d_scaled:
        case Point::d_scores: case Point::d_q: case Point::d_k: case Point::d_v: case Point::d_q_before_rope:
        case Point::d_k_before_rope:
            return Rule::layer;
        case Point::block_in: case Point::attn_norm: case Point::attn_norm_rms: case Point::attn_residual:
        case Point::ffn_norm: case Point::ffn_norm_rms: case Point::ffn_gate: case Point::ffn_up:
        case Point::ffn_hidden: case Point::ffn_out: case Point::block_out:
            return Rule::vectors;
        case Point::attn_concat: case Point::attn_out:
            return Rule::either;
        default:
            return Rule::always;
    }
}

/// The head's matrix `p` names in a HeadTrace (null: p is not one of a head's).
Matrix* head_field(HeadTrace& h, Point p) {
    switch (p) {
        case Point::q: return &h.query;
        case Point::k: return &h.key;
        case Point::v: return &h.value;
        case Point::scores: return &h.scores;
        case Point::scaled: return &h.scaled;
        case Point::weights: return &h.weights;
        case Point::head_out: return &h.output;
        case Point::q_before_rope: return &h.query_before_rope;
        case Point::k_before_rope: return &h.key_before_rope;
        default: return nullptr;
    }
}

Matrix* head_grad_field(HeadGradTrace& h, Point p) {
    switch (p) {
        case Point::d_head_out: return &h.d_output;
        case Point::d_weights: return &h.d_weights;
        case Point::d_scaled: return &h.d_scaled;
        case Point::d_scores: return &h.d_scores;
        case Point::d_q: return &h.d_query;
        case Point::d_k: return &h.d_key;
        case Point::d_v: return &h.d_value;
        case Point::d_q_before_rope: return &h.d_query_before_rope;
        case Point::d_k_before_rope: return &h.d_key_before_rope;
        default: return nullptr;
    }
}

/// The layer's (T×C, T×F) matrix `p` names in a LayerTrace or its attention (null: none).
Matrix* layer_field(LayerTrace& l, Point p) {
    switch (p) {
        case Point::block_in: return &l.input;
        case Point::attn_norm: return &l.normed;
        case Point::attn_concat: return &l.attention.concat;
        case Point::attn_out: return &l.attention.output;
        case Point::attn_residual: return &l.residual;
        case Point::ffn_norm: return &l.mlp_normed;
        case Point::ffn_gate: return &l.mlp_gate;
        case Point::ffn_up: return &l.mlp_up;
        case Point::ffn_hidden: return &l.mlp_hidden;
        case Point::ffn_out: return &l.mlp_output;
        case Point::block_out: return &l.output;
        default: return nullptr;
    }
}

Matrix* layer_grad_field(LayerGradTrace& l, Point p) {
    switch (p) {
        case Point::d_block_out: return &l.d_output;
        case Point::d_attn_out: return &l.d_attention;
        case Point::d_block_in: return &l.d_input;
        default: return nullptr;
    }
}

/// What an intermediate is, in the words of a message ("the attention scores", "the MLP's hidden layer").
const char* point_words(Point p) {
    switch (p) {
        case Point::token_embed: return "the token embeddings";
        case Point::pos_embed: return "the position embeddings";
        case Point::type_embed: return "the token type embeddings";
        case Point::embed_norm: return "the embeddings";
        case Point::block_in: return "the block's inputs";
        case Point::attn_norm: return "the attention's normalised inputs (LN1)";
        case Point::attn_norm_rms: return "the root mean squares of the attention's inputs (RMSNorm)";
        case Point::q: return "the queries";
        case Point::k: return "the keys";
        case Point::q_before_rope: return "the queries before RoPE";
        case Point::k_before_rope: return "the keys before RoPE";
        case Point::v: return "the values";
        case Point::scores: return "the attention scores";
        case Point::scaled: return "the scaled scores";
        case Point::row_max: return "the largest scaled scores";
        case Point::row_sum: return "the softmax sums";
        case Point::weights: return "the attention weights";
        case Point::head_out: return "the outputs";
        case Point::attn_concat: return "the heads' outputs";
        case Point::attn_out: return "the attention's outputs";
        case Point::attn_residual: return "the stream's values after the attention";
        case Point::ffn_norm: return "the MLP's normalised inputs";
        case Point::ffn_norm_rms: return "the root mean squares of the MLP's inputs (RMSNorm)";
        case Point::ffn_gate: return "the MLP's gate values";
        case Point::ffn_up: return "the MLP's up-projected values";
        case Point::ffn_hidden: return "the MLP's hidden values";
        case Point::ffn_out: return "the MLP's outputs";
        case Point::block_out: return "the block's outputs";
        case Point::final_norm: return "the final norm's outputs";
        case Point::final_norm_rms: return "the root mean squares of the final norm's inputs (RMSNorm)";
        case Point::head_transform: return "the output head's transformed values";
        case Point::logits: return "the logits";
        case Point::d_logits: return "the gradients of the logits";
        case Point::d_block_out: return "the gradients of the block's outputs";
        case Point::d_attn_out: return "the gradients of the attention's outputs";
        case Point::d_head_out: return "the gradients of the outputs";
        case Point::d_weights: return "the gradients of the attention weights";
        case Point::d_scaled: return "the gradients of the scaled scores";
        case Point::d_scores: return "the gradients of the attention scores";
        case Point::d_q: return "the gradients of the queries";
        case Point::d_k: return "the gradients of the keys";
        case Point::d_q_before_rope: return "the gradients of the queries before RoPE";
        case Point::d_k_before_rope: return "the gradients of the keys before RoPE";
        case Point::d_v: return "the gradients of the values";
        case Point::d_block_in: return "the gradients of the block's inputs";
    }
    return "the values";
}

}  // namespace

void throw_not_finite(Point point, const Site& at) {
    std::string where = at.layer >= 0 ? "layer " + std::to_string(at.layer) + ", " : "";
    where += point_words(point);
    if (at.head >= 0) where += " of head " + std::to_string(at.head);
    throw Error(Error::Code::not_finite,
                where + " are not finite (NaN or infinity): the weights are finite, but their products overflow float32 "
                        "(above 3.4e38); this checkpoint's weights are too large to run");
}

void TraceTap::start_forward(const ModelConfig& config, const std::vector<std::int32_t>& ids, int length, bool causal) {
    if (!r_) return;
    tokens_ = static_cast<int>(ids.size());
    ModelTrace& tr = r_->trace;
    tr = ModelTrace{};
    tr.ids = ids;
    tr.length = length;
    tr.mask = build_mask(causal ? MaskKind::causal_padding : MaskKind::padding, tokens_, length);
    tr.layers.resize(static_cast<std::size_t>(config.layers));
    for (int l = 0; l < config.layers; ++l)
        if (r_->keeps(l)) tr.layers[static_cast<std::size_t>(l)].attention.heads.resize(static_cast<std::size_t>(config.heads));
    // the relative positions' constants, which the page draws from (the same in every layer)
    if (config.positional == Positional::rope) {
        const std::vector<double> theta = rope_frequencies(head_dim_of(config), rope_settings(config));
        tr.rope_frequencies.resize(static_cast<Eigen::Index>(theta.size()));
        for (std::size_t i = 0; i < theta.size(); ++i) tr.rope_frequencies(static_cast<Eigen::Index>(i)) = static_cast<float>(theta[i]);
    }
    if (config.positional == Positional::alibi) {
        const std::vector<float> slopes = alibi_slopes(config.heads);
        tr.alibi_slopes = Eigen::Map<const Vector>(slopes.data(), static_cast<Eigen::Index>(slopes.size()));
    }
    r_->gradients = GradientTrace{};
}

void TraceTap::start_backward(int layers) {
    if (!r_) return;
    r_->gradients.layers.assign(static_cast<std::size_t>(layers), LayerGradTrace{});
}

bool TraceTap::keeps(Point point, int layer) const {
    switch (rule_of(point)) {
        case Rule::always: return true;
        case Rule::layer: return r_->keeps(layer);
        case Rule::vectors: return r_->keeps_vectors(layer);
        case Rule::either: return r_->keeps(layer) || r_->keeps_vectors(layer);
    }
    return false;
}

void TraceTap::check_kept() const {
    if (not_finite_) throw_not_finite(not_finite_point_, not_finite_at_);
}

void TraceTap::put(Point point, const Site& at, const Eigen::Ref<const Matrix>& value) const {
    // what the trace keeps is finite (a pass over the values it copies); a block's value that is
    // not waits for the block's own check, which can say where it began (check_kept)
    if (!all_finite(value)) {
        if (at.layer < 0 || point >= Point::d_logits) throw_not_finite(point, at);
        if (!not_finite_) {
            not_finite_ = true;
            not_finite_point_ = point;
            not_finite_at_ = at;
        }
        return;
    }
    ModelTrace& tr = r_->trace;
    GradientTrace& gt = r_->gradients;
    const auto layer = static_cast<std::size_t>(at.layer), head = static_cast<std::size_t>(at.head);
    switch (point) {
        case Point::token_embed: tr.embeddings = value; return;
        case Point::pos_embed: tr.positional = value; return;
        case Point::type_embed: tr.token_type = value; return;
        case Point::embed_norm: tr.embed_normed = value; return;
        case Point::final_norm: tr.final_normed = value; return;
        case Point::head_transform:
            if (at.row == 0) tr.transformed.resize(tokens_, value.cols());
            tr.transformed.middleRows(at.row, value.rows()) = value;
            return;
        case Point::logits: {
            // the trace's logits and probabilities when it keeps them, and the top-k of each row
            const int V = static_cast<int>(value.cols()), n = static_cast<int>(value.rows());
            const int k = std::min(r_->top_k, V);
            if (at.row == 0) {
                tr.top_k = k;
                tr.top_ids.assign(static_cast<std::size_t>(tokens_) * k, 0);
                tr.top_p.assign(static_cast<std::size_t>(tokens_) * k, 0.0f);
                if (r_->logits) {
                    tr.logits.resize(tokens_, V);
                    tr.probabilities.resize(tokens_, V);
                }
            }
            if (!r_->logits && k == 0) return;
            const Matrix probabilities = row_softmax(value);
            if (r_->logits) {
                tr.logits.middleRows(at.row, n) = value;
                tr.probabilities.middleRows(at.row, n) = probabilities;
            }
            std::vector<int> order;
            for (int i = 0; i < n; ++i)
                top_of_row(probabilities, i, k, order, tr.top_ids.data() + static_cast<std::size_t>(at.row + i) * k,
                           tr.top_p.data() + static_cast<std::size_t>(at.row + i) * k);
            return;
        }
        case Point::final_norm_rms: tr.final_rms = value.col(0); return;
        case Point::attn_norm_rms: tr.layers[layer].normed_rms = value.col(0); return;
        case Point::ffn_norm_rms: tr.layers[layer].mlp_normed_rms = value.col(0); return;
        case Point::row_max: tr.layers[layer].attention.heads[head].row_max = value.col(0); return;
        case Point::row_sum: tr.layers[layer].attention.heads[head].row_sum = value.col(0); return;
        case Point::d_logits: gt.d_logits = value; return;
        default: break;
    }
    // the backward's go to the gradients only: its forward may have had no recorder
    const bool gradient = point >= Point::d_logits;
    Matrix* field = nullptr;
    if (at.head >= 0 && gradient) {
        std::vector<HeadGradTrace>& heads = gt.layers[layer].heads;
        if (heads.size() <= head) heads.resize(head + 1);  // every head of a visited kept layer comes
        field = head_grad_field(heads[head], point);
    } else if (at.head >= 0) {
        field = head_field(tr.layers[layer].attention.heads[head], point);
    } else {
        field = gradient ? layer_grad_field(gt.layers[layer], point) : layer_field(tr.layers[layer], point);
    }
    if (field) *field = value;
}

}  // namespace attn
