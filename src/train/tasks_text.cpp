// The text task: a word-level language model on a corpus the caller gives.

#include "train/task_base.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <utility>

namespace attn::task_detail {
namespace {

// ---- text: a word-level language model --------------------------------------------------
// Vocabulary [PAD] [UNK] then the max_vocab most frequent words of the corpus
// (lower-cased; ties broken by first occurrence). The first 90% of the words
// are the training split, the last 10% held out; a sample is a random window
// of T + 1 words of its split: ids the first T, targets the next word of each.

class TextTask final : public TaskBase {
public:
    TextTask(std::vector<std::string> vocabulary, std::vector<std::int32_t> words, int T)
        : TaskBase(Vocabulary(std::move(vocabulary)), T), words_(std::move(words)) {
        train_end_ = static_cast<int>(static_cast<std::int64_t>(words_.size()) * 9 / 10);
    }
    TaskKind kind() const override { return TaskKind::text; }

    std::vector<AnswerKey> answer_keys(const std::vector<std::int32_t>& ids, int length) const override {
        return standard_keys(ids, length, true);
    }

    /// The first window of the held-out text.
    Example probe() const override {
        Example e;
        e.length = context_;
        e.ids.assign(words_.begin() + train_end_, words_.begin() + train_end_ + context_);
        e.targets.assign(words_.begin() + train_end_ + 1, words_.begin() + train_end_ + context_ + 1);
        return e;
    }

    /// The fewest words a corpus needs for one window of T + 1 words in each split.
    static std::int64_t minimum_words(int T) {
        std::int64_t n = T + 1;
        while (n * 9 / 10 < T + 1 || n - n * 9 / 10 < T + 1) ++n;
        return n;
    }

private:
    int generate(SequenceRng& rng, std::int32_t* ids, std::int32_t* targets) const override {
        const bool train = rng.split() == Split::train;
        const int begin = train ? 0 : train_end_;
        const int end = train ? train_end_ : static_cast<int>(words_.size());
        const int start = begin + rng.below(end - begin - context_);  // window [start, start + T]
        std::copy(words_.begin() + start, words_.begin() + start + context_, ids);
        std::copy(words_.begin() + start + 1, words_.begin() + start + context_ + 1, targets);
        return context_;
    }

    std::vector<std::int32_t> words_;  ///< the corpus as ids
    int train_end_ = 0;                ///< words [0, train_end_) train, the rest held out
};

}  // namespace

std::unique_ptr<Task> make_text_task(int T, const TaskOptions& options) {
    if (options.max_vocab > kMaxTextVocab)
        throw Error("text: option max_vocab = " + std::to_string(options.max_vocab) + " is above " +
                    std::to_string(kMaxTextVocab) + ": a model's vocabulary holds at most " +
                    std::to_string(kMaxModelVocab) + " tokens and [PAD] and [UNK] take " +
                    std::to_string(kTextReservedTokens) + " of them; lower max_vocab");
    check_option("text", "max_vocab", options.max_vocab, 2, kMaxTextVocab);
    if (options.corpus.empty()) throw Error("text: option corpus is empty; give the text to learn from");
    if (options.corpus.size() > kMaxCorpusBytes)
        throw Error(Error::Code::too_many_tokens, "text: option corpus has " + std::to_string(options.corpus.size()) +
                    " bytes, above the limit of " + std::to_string(kMaxCorpusBytes) + " bytes");
    TokenizeOptions lower;
    lower.lowercase = true;
    std::vector<Token> tokens;
    try {
        tokens = tokenize_long(options.corpus, lower);
    } catch (const Error& e) {
        throw Error(std::string("text: option corpus is not valid UTF-8: ") + e.what(), Error::Kind::type);
    }
    const std::int64_t needed = TextTask::minimum_words(T);
    if (static_cast<std::int64_t>(tokens.size()) < needed)
        throw Error("text: option corpus has " + std::to_string(tokens.size()) + " words; length " +
                    std::to_string(T) + " needs at least " + std::to_string(needed) +
                    " (a window of length + 1 words in both the first 90% and the held-out last 10%)");
    if (tokens.size() > static_cast<std::size_t>(1) << 30)
        throw Error("text: option corpus has " + std::to_string(tokens.size()) + " words, more than 2^30");

    // Count words in order of first occurrence, then rank by count (stable:
    // equal counts keep first-occurrence order).
    std::unordered_map<std::string, int> first_seen;
    std::vector<std::string> order;
    std::vector<std::int64_t> counts;
    for (const Token& t : tokens) {
        const auto [it, inserted] = first_seen.emplace(t.text, static_cast<int>(order.size()));
        if (inserted) {
            order.push_back(t.text);
            counts.push_back(0);
        }
        ++counts[static_cast<std::size_t>(it->second)];
    }
    std::vector<int> rank(order.size());
    std::iota(rank.begin(), rank.end(), 0);
    std::stable_sort(rank.begin(), rank.end(), [&](int a, int b) {
        return counts[static_cast<std::size_t>(a)] > counts[static_cast<std::size_t>(b)];
    });
    const std::size_t kept = std::min(rank.size(), static_cast<std::size_t>(options.max_vocab));
    std::vector<std::string> vocabulary = {kPadText, "[UNK]"};  // the kTextReservedTokens
    const std::int32_t unknown = 1;  // "[UNK]", second in the vocabulary
    std::vector<std::int32_t> id_of_word(order.size(), unknown);
    for (std::size_t r = 0; r < kept; ++r) {
        id_of_word[static_cast<std::size_t>(rank[r])] = static_cast<std::int32_t>(vocabulary.size());
        vocabulary.push_back(order[static_cast<std::size_t>(rank[r])]);
    }
    std::vector<std::int32_t> words;
    words.reserve(tokens.size());
    for (const Token& t : tokens) words.push_back(id_of_word[static_cast<std::size_t>(first_seen.at(t.text))]);
    return std::make_unique<TextTask>(std::move(vocabulary), std::move(words), T);
}

}  // namespace attn::task_detail
