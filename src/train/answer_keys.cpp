// Answer keys: the score of a head against a key, and the standard keys that
// name the heads of any model (tasks.hpp). The tasks' own keys are in their files.

#include "train/task_base.hpp"

#include <algorithm>

namespace attn {

// ---- answer keys ------------------------------------------------------------------

namespace task_detail {

void check_sequence(const std::vector<std::int32_t>& ids, int length) {
    if (length < 0 || static_cast<std::size_t>(length) > ids.size())
        throw Error("answer keys: length " + std::to_string(length) + " is out of range 0.." +
                    std::to_string(ids.size()) + " (the number of ids)");
}

/// T×T zeros, T = ids.size(): keys cover the whole (padded) sequence, so they
/// line up with the attention weights of a forward pass over it.
Matrix empty_key(const std::vector<std::int32_t>& ids) {
    const Eigen::Index n = static_cast<Eigen::Index>(ids.size());
    return Matrix::Zero(n, n);
}

AnswerKey previous_token_key(const std::vector<std::int32_t>& ids, int length) {
    AnswerKey k{"previous-token", empty_key(ids)};
    for (int i = 1; i < length; ++i) k.key(i, i - 1) = 1;
    return k;
}

}  // namespace task_detail

double answer_key_score(const Eigen::Ref<const Matrix>& weights, const Matrix& key) {
    if (weights.rows() != key.rows() || weights.cols() != key.cols())
        throw Error("answer_key_score: weights are " + std::to_string(weights.rows()) + "x" +
                    std::to_string(weights.cols()) + " but the key is " + std::to_string(key.rows()) + "x" +
                    std::to_string(key.cols()));
    double total = 0;
    int scored = 0;
    for (Eigen::Index i = 0; i < key.rows(); ++i) {
        bool any = false;
        double on_key = 0;
        for (Eigen::Index j = 0; j < key.cols(); ++j)
            if (key(i, j) != 0) {
                any = true;
                on_key += weights(i, j);
            }
        if (any) {
            total += on_key;
            ++scored;
        }
    }
    return scored ? total / scored : 0.0;
}

std::vector<AnswerKey> standard_keys(const std::vector<std::int32_t>& ids, int length, bool causal) {
    using namespace task_detail;
    check_sequence(ids, length);
    std::vector<AnswerKey> keys;
    keys.push_back(previous_token_key(ids, length));

    AnswerKey first{"first-token", empty_key(ids)};
    for (int i = 0; i < length; ++i) first.key(i, 0) = 1;
    keys.push_back(std::move(first));

    AnswerKey same{"same-token", empty_key(ids)};
    for (int i = 0; i < length; ++i)
        for (int j = 0; j < (causal ? i : length); ++j)
            if (j != i && ids[j] == ids[i]) same.key(i, j) = 1;
    keys.push_back(std::move(same));

    // Induction: attend to the token that followed an earlier copy of the current one.
    AnswerKey induction{"induction", empty_key(ids)};
    for (int i = 0; i < length; ++i)
        for (int k = 0; k < i; ++k)
            if (ids[k] == ids[i]) induction.key(i, k + 1) = 1;
    keys.push_back(std::move(induction));
    return keys;
}

std::vector<PatternScore> pattern_scores(const Eigen::Ref<const Matrix>& weights, const std::vector<AnswerKey>& keys) {
    std::vector<PatternScore> out;
    for (const AnswerKey& k : keys) {
        PatternScore p{k.name, answer_key_score(weights, k.key), 0};
        for (Eigen::Index i = 0; i < k.key.rows(); ++i) p.rows += k.key.row(i).any() ? 1 : 0;
        out.push_back(std::move(p));
    }
    return out;
}

std::vector<std::vector<PatternScore>> head_patterns(const std::vector<const Matrix*>& heads,
                                                     const std::vector<std::int32_t>& ids, int length, bool causal,
                                                     const std::vector<AnswerKey>& extra) {
    std::vector<AnswerKey> keys = standard_keys(ids, length, causal);
    for (const AnswerKey& k : extra)
        if (std::none_of(keys.begin(), keys.end(), [&](const AnswerKey& s) { return s.name == k.name; })) keys.push_back(k);
    std::vector<std::vector<PatternScore>> out;
    for (const Matrix* w : heads) out.push_back(pattern_scores(*w, keys));
    return out;
}

}  // namespace attn
