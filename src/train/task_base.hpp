#pragma once
// What the task families share (internal to src/core: vocabulary.cpp,
// answer_keys.cpp, tasks_*.cpp, task_registry.cpp): the sequence's random
// stream, the task base that turns one generated sequence into a batch, the
// answer keys' helpers, and each family's factory (the registry calls them).

#include "train/tasks.hpp"

#include "base/random.hpp"
#include "text/tokenizer.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attn::task_detail {

/// A long text tokenized in pieces of at most kMaxSentenceBytes (vocabulary.cpp).
std::vector<Token> tokenize_long(const std::string& text, const TokenizeOptions& options);

/// Throws attn::Error unless 0 <= length <= ids.size() (answer_keys.cpp).
void check_sequence(const std::vector<std::int32_t>& ids, int length);
/// T×T zeros, T = ids.size().
Matrix empty_key(const std::vector<std::int32_t>& ids);
/// "previous-token": query i → key i − 1 (row 0 unscored).
AnswerKey previous_token_key(const std::vector<std::int32_t>& ids, int length);


/// The seed of every probe: probes are the same whatever the training seed.
inline constexpr std::uint64_t kProbeSeed = 0x5EED2026;
inline constexpr int kMaxBatch = 65536;

/// The random numbers of one sequence: a counter-based stream keyed by
/// (seed, split, batch index, sequence in the batch), so every sequence is a
/// pure function of those numbers and independent of the batch size.
class SequenceRng {
public:
    SequenceRng(std::uint64_t seed, Split split, std::uint64_t index, std::uint64_t sequence)
        : state_(counter_hash(seed, split == Split::train ? Stream::task : Stream::heldout, index, sequence)),
          split_(split) {}

    Split split() const { return split_; }

    std::uint64_t next() { return splitmix64(state_ ^ counter_++); }

    /// Uniform in [0, n), n >= 1 (multiply-shift on the top 32 bits: the same on every platform).
    int below(int n) {
        const std::uint64_t top = next() >> 32;
        return static_cast<int>((top * static_cast<std::uint64_t>(n)) >> 32);
    }
    /// Uniform in [lo, hi].
    int between(int lo, int hi) { return lo + below(hi - lo + 1); }

private:
    std::uint64_t state_;
    std::uint64_t counter_ = 0;
    Split split_;
};

inline void check_option(const char* task, const char* option, int value, int lo, int hi) {
    if (value < lo || value > hi)
        throw Error(std::string(task) + ": option " + option + " = " + std::to_string(value) + " is out of range " +
                    std::to_string(lo) + ".." + std::to_string(hi));
}

inline std::vector<std::string> with_pad(std::vector<std::string> tokens) {
    tokens.insert(tokens.begin(), kPadText);
    return tokens;
}

inline std::vector<std::string> letters(int count) {
    std::vector<std::string> out;
    for (int i = 0; i < count; ++i) out.emplace_back(1, static_cast<char>('a' + i));
    return out;
}

inline std::vector<std::string> digits() {
    std::vector<std::string> out;
    for (int i = 0; i < 10; ++i) out.emplace_back(1, static_cast<char>('0' + i));
    return out;
}

inline std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

/// What the tasks share: the vocabulary, the context, and a batch made of
/// independently generated sequences.
class TaskBase : public Task {
public:
    const Vocabulary& vocabulary() const override { return vocab_; }
    int context() const override { return context_; }

    Batch sample(int batch, std::uint64_t seed, std::uint64_t index, Split split) const override {
        check_option(task_name(kind()), "batch", batch, 1, kMaxBatch);
        Batch out;
        out.batch = batch;
        out.length = context_;
        const std::size_t T = static_cast<std::size_t>(context_);
        out.ids.assign(static_cast<std::size_t>(batch) * T, kPadId);
        out.targets.assign(static_cast<std::size_t>(batch) * T, kNoTarget);
        if (padded()) out.lengths.resize(static_cast<std::size_t>(batch));
        for (int b = 0; b < batch; ++b) {
            SequenceRng rng(seed, split, index, static_cast<std::uint64_t>(b));
            const std::size_t row = static_cast<std::size_t>(b) * T;
            const int length = generate(rng, out.ids.data() + row, out.targets.data() + row);
            if (padded()) out.lengths[static_cast<std::size_t>(b)] = length;
        }
        return out;
    }

    /// By default the held-out sequence 0 of the fixed probe seed.
    Example probe() const override {
        SequenceRng rng(kProbeSeed, Split::heldout, 0, 0);
        return example(rng);
    }

protected:
    TaskBase(Vocabulary vocab, int context) : vocab_(std::move(vocab)), context_(context) {}

    /// Writes one sequence into ids and targets (T each, pre-filled with
    /// [PAD] and kNoTarget) and returns its real length.
    virtual int generate(SequenceRng& rng, std::int32_t* ids, std::int32_t* targets) const = 0;
    /// True when sequences are shorter than T and the batch carries lengths.
    virtual bool padded() const { return false; }

    Example example(SequenceRng& rng) const {
        Example e;
        e.ids.assign(static_cast<std::size_t>(context_), kPadId);
        e.targets.assign(static_cast<std::size_t>(context_), kNoTarget);
        e.length = generate(rng, e.ids.data(), e.targets.data());
        return e;
    }

    int id(const char* text) const { return vocab_.find(text); }

    Vocabulary vocab_;
    int context_;
};

// ---- the families' factories: the task's size (options.length, checked against
// the registry's range); the text task also reads its corpus and max_vocab.
std::unique_ptr<Task> make_copy_task(int n, const TaskOptions& options);
std::unique_ptr<Task> make_reverse_task(int n, const TaskOptions& options);
std::unique_ptr<Task> make_sort_task(int n, const TaskOptions& options);
std::unique_ptr<Task> make_previous_token_task(int T, const TaskOptions& options);
std::unique_ptr<Task> make_induction_task(int T, const TaskOptions& options);
std::unique_ptr<Task> make_recall_task(int n, const TaskOptions& options);
std::unique_ptr<Task> make_brackets_task(int T, const TaskOptions& options);
std::unique_ptr<Task> make_coreference_task(int T, const TaskOptions& options);
std::unique_ptr<Task> make_text_task(int T, const TaskOptions& options);
/// Tokens of the longest sentence the coreference templates make: its smallest size.
int longest_coreference_sentence();

}  // namespace attn::task_detail
