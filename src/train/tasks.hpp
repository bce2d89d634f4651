#pragma once
// Toy tasks for training, each with a documented vocabulary, a seeded
// generator, held-out samples, and its *answer keys*: the attention patterns a
// head that solves the task should have, with a score in [0, 1] of how close a
// head's weights are to a key.
//
// Sampling is counter-based (random.hpp): the batch for (seed, index) is a pure
// function of those numbers, identical natively and in WebAssembly. Training
// batches use split::train, evaluation uses split::heldout, which draws from
// an independent stream (and, for tasks with a small finite space such as
// coreference, from a disjoint part of that space).

#include "model/batch.hpp"
#include "model/model.hpp"
#include "base/types.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace attn {

/// Token strings ↔ ids. Id 0 is always "[PAD]". Text tasks also have id 1 "[UNK]".
class Vocabulary {
public:
    Vocabulary() = default;
    explicit Vocabulary(std::vector<std::string> tokens);  ///< tokens[0] must be "[PAD]"; no duplicates
    int size() const { return static_cast<int>(tokens_.size()); }
    const std::string& text(int id) const;                    ///< throws attn::Error when out of range
    const std::vector<std::string>& tokens() const { return tokens_; }
    /// The id of a token text, or -1 when absent.
    int find(const std::string& text) const;
    /// Tokenizes `text` with the project tokenizer (tokenizer.hpp), lower-cased,
    /// and maps each token to its id; unknown tokens map to "[UNK]" when the
    /// vocabulary has it, else throw attn::Error naming the token.
    std::vector<std::int32_t> encode(const std::string& text) const;

private:
    std::vector<std::string> tokens_;
    std::unordered_map<std::string, int> index_;
};

enum class TaskKind { copy, reverse, sort, previous_token, induction, recall, brackets, coreference, text };

/// The registry's names (task_registry.hpp): "copy" | "reverse" | "sort" |
/// "previous-token" | "induction" | "recall" | "brackets" | "coreference" |
/// "text"; throws attn::Error listing them.
TaskKind parse_task(const std::string& name);
const char* task_name(TaskKind kind);
/// Every task in the registry's order (TaskKind's).
const std::vector<TaskKind>& all_tasks();

enum class Split { train, heldout };

/// One named attention pattern for one sequence: key(i, j) = 1 where query i
/// should put its weight, 0 elsewhere; a row of zeros = no expectation for
/// that query (not scored).
struct AnswerKey {
    std::string name;  ///< "anti-diagonal", "previous-token", "induction", ...
    Matrix key;        ///< T×T
};

/// Score of one head's weights (T×T, rows are softmax distributions) against a
/// key: the mean, over the query rows whose key row is not all zero, of the
/// weight the row puts on the key's positions. 1 = all weight where the key
/// says; 0 when no row is scored.
double answer_key_score(const Eigen::Ref<const Matrix>& weights, const Matrix& key);

/// A head's score against one key and its evidence: the query rows the key
/// scores (0: the key scores no row of this sequence, and there is no score).
struct PatternScore {
    std::string name;
    double score = 0;  ///< answer_key_score; meaningless when rows == 0
    int rows = 0;
};
/// One head's weights (T×T) against each key, in the keys' order.
std::vector<PatternScore> pattern_scores(const Eigen::Ref<const Matrix>& weights, const std::vector<AnswerKey>& keys);

/// The head patterns the pages name heads by (web/app/kit/patterns.js shows these
/// numbers): standard_keys(ids, length, causal) plus `extra` keys (a task's
/// own, e.g. coreference's "antecedent"), scored for each head's weights.
std::vector<std::vector<PatternScore>> head_patterns(const std::vector<const Matrix*>& heads,
                                                     const std::vector<std::int32_t>& ids, int length, bool causal,
                                                     const std::vector<AnswerKey>& extra = {});

/// Generic patterns over any sequence of `length` (ids.size() >= length), used
/// to name heads of any model: previous-token (sub-diagonal; row 0 unscored),
/// first-token (column 0), same-token (earlier or other positions with the
/// same token id; rows with none unscored), induction (position after an earlier
/// occurrence of the current token; rows with none unscored). `causal` limits
/// same-token to earlier positions.
std::vector<AnswerKey> standard_keys(const std::vector<std::int32_t>& ids, int length, bool causal);

/// Tokens a text task's vocabulary has besides the corpus's words: [PAD] and [UNK].
inline constexpr int kTextReservedTokens = 2;
/// The largest max_vocab of a text task: the model's vocabulary limit less the
/// reserved tokens, so that every accepted max_vocab gives a model that fits.
inline constexpr int kMaxTextVocab = kMaxModelVocab - kTextReservedTokens;
/// The longest text corpus (bytes of UTF-8) the text task takes: 3 bytes for
/// each of the 8,000,000 UTF-16 units web/trainer.js accepts (no JS string
/// it takes is refused here). The CLI reads at most this much of --corpus.
inline constexpr std::size_t kMaxCorpusBytes = 24000000;

/// Settings a task takes (each task documents which it reads).
struct TaskOptions {
    int length = 0;        ///< task-specific sequence size; 0 = the task's default
    std::string corpus;    ///< text: the training text (UTF-8)
    int max_vocab = 2000;  ///< text: most frequent words kept (2 … kMaxTextVocab), the rest [UNK]
};

/// A sequence for display: the probe the training lab shows.
struct Example {
    std::vector<std::int32_t> ids;      ///< T
    std::vector<std::int32_t> targets;  ///< T, kNoTarget where no loss
    int length = 0;                     ///< real tokens (ids past it are [PAD])
};

class Task {
public:
    virtual ~Task() = default;
    virtual TaskKind kind() const = 0;
    /// One sentence: what the task is (its row of the registry, task_registry.hpp).
    std::string description() const;
    /// One sentence: the attention pattern a head that solves it should have (the registry's).
    std::string pattern() const;
    virtual const Vocabulary& vocabulary() const = 0;
    /// The sequence length T every batch has (the model's context must be >= it).
    virtual int context() const = 0;
    /// True when the task is next-token prediction and needs a causal mask to
    /// be honest (copy, previous-token, induction, recall, brackets, text; the registry's).
    bool causal() const;
    /// B sequences for (seed, index), deterministic.
    virtual Batch sample(int batch, std::uint64_t seed, std::uint64_t index, Split split) const = 0;
    /// The task's answer keys for one sequence (its primary key first).
    virtual std::vector<AnswerKey> answer_keys(const std::vector<std::int32_t>& ids, int length) const = 0;
    /// A fixed, representative sequence (the same for every seed).
    virtual Example probe() const = 0;
    /// Whether the first `length` ids are a sequence this task's generator can
    /// make: 1 yes, 0 no, -1 when the task has no grammar to check against
    /// (the default; e.g. text, where any word order is allowed). The
    /// playground says "outside its grammar" at the answer when it is 0.
    virtual int grammar(const std::vector<std::int32_t>& ids, int length) const {
        (void)ids;
        (void)length;
        return -1;
    }
};

/// The registry's factory (task_registry.hpp). Throws attn::Error for bad
/// options (length out of the task's range, an empty corpus for text, ...),
/// naming the option and the allowed range.
std::unique_ptr<Task> make_task(TaskKind kind, const TaskOptions& options = {});

}  // namespace attn
