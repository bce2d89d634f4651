#pragma once
// N-gram baselines for the text task, and a model's held-out perplexity on the
// same words, so the three numbers are comparable.
//
// Same data as the text task (tasks_text.cpp): the corpus tokenized by the project
// tokenizer, lower-cased; the task's vocabulary ([PAD], [UNK], the max_vocab
// most frequent words of the whole corpus; the rest [UNK]); the first 90% of
// the words train, the last 10% held out (words [E, N), E = N·9/10).
//
// Held-out targets: every held-out word but the first, words E+1 … N−1, each
// predicted from what precedes it inside the held-out split. [UNK] is a word
// like any other (it is in the vocabulary); [PAD] is never a target.
//   unigram:  p(w) = (c(w) + 1) / (M + V)                 add-one
//   bigram:   p(w | v) = (c(v w) + 1) / (c(v ·) + V)       add-one
//   bigram-kn: interpolated Kneser-Ney, one discount d = 0.75:
//             p(w | v) = max(c(v w) − d, 0) / c(v ·) + d · n(v ·) / c(v ·) · q(w)
//             q(w) = (n(· w) + 1) / (n(· ·) + V)           continuation, add-one
//             (a history never seen in training: p(w | v) = q(w))
// with c counts over the training split, M its length, c(v ·) the bigrams
// starting with v, n(v ·) the distinct words after v, n(· w) the distinct
// words before w, n(· ·) the distinct bigrams, V the vocabulary without [PAD]
// (every word a target can be). Perplexity = exp(mean −ln p) over the targets.
//
// The model reads the held-out words in windows of T + 1 words with stride T
// (window k starts at E + k·T; the last may be shorter), so every target is
// predicted exactly once, from the previous 1 … T words of its window.

#include "model/model.hpp"
#include "train/tasks.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

/// The text task's data: vocabulary, the corpus as ids, the split point.
struct TextSplit {
    std::vector<std::string> vocabulary;  ///< the task's: [PAD], [UNK], then by frequency
    std::vector<std::int32_t> words;      ///< the whole corpus as ids (N)
    std::size_t train_end = 0;            ///< E = N·9/10: words [0, E) train, [E, N) held out
};

/// Tokenizes and splits as make_task(TaskKind::text, {corpus, max_vocab,
/// length}) does; throws its errors (empty or too short a corpus, ...).
TextSplit split_text(const std::string& corpus, int max_vocab = 2000, int length = 0);

/// The same split of `corpus` read with a given vocabulary (a model's, which
/// may come from another text): words outside it are [UNK]. The vocabulary
/// must start with [PAD], [UNK]. Throws attn::Error when it does not, or when
/// the corpus has fewer than 4 words.
TextSplit split_text_with_vocabulary(const std::string& corpus, const std::vector<std::string>& vocabulary);

struct BaselineResult {
    std::int64_t train_words = 0;    ///< M
    std::int64_t targets = 0;        ///< held-out targets, N − E − 1
    int vocabulary = 0;              ///< V (without [PAD])
    double unknown_share = 0;        ///< share of the targets that are [UNK]
    double unigram = 0;              ///< perplexities
    double bigram = 0;
    double bigram_kn = 0;
};

/// The three baselines' held-out perplexities (counts from the training split).
BaselineResult ngram_baselines(const TextSplit& split);

struct ModelPerplexity {
    std::int64_t targets = 0;
    double loss = 0;        ///< mean cross-entropy (nats) over the targets
    double perplexity = 0;  ///< exp(loss)
    double accuracy = 0;    ///< share of targets that are the model's most likely next word
};

/// A causal model's held-out perplexity on the same targets, in windows of
/// `length` + 1 words (0 = the model's context). Throws attn::Error when the
/// model's vocabulary size differs from the split's or it is not causal.
ModelPerplexity model_perplexity(const ModelConfig& config, const Parameters& params, const TextSplit& split,
                                 int length = 0);

}  // namespace attn
