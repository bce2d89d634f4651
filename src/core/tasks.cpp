#include "tasks.hpp"

#include "random.hpp"
#include "tokenizer.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <string_view>
#include <utility>

namespace attn {

// ---- vocabulary -------------------------------------------------------------------

Vocabulary::Vocabulary(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
    if (tokens_.empty() || tokens_[0] != kPadText)
        throw Error(std::string("vocabulary: token 0 must be \"") + kPadText + "\"");
    for (std::size_t i = 0; i < tokens_.size(); ++i)
        if (!index_.emplace(tokens_[i], static_cast<int>(i)).second)
            throw Error("vocabulary: duplicate token '" + tokens_[i] + "'");
}

const std::string& Vocabulary::text(int id) const {
    if (id < 0 || id >= size())
        throw Error("vocabulary: id " + std::to_string(id) + " is out of range 0.." + std::to_string(size() - 1));
    return tokens_[static_cast<std::size_t>(id)];
}

int Vocabulary::find(const std::string& text) const {
    const auto it = index_.find(text);
    return it == index_.end() ? -1 : it->second;
}

namespace {
/// A long text tokenized in pieces of at most kMaxSentenceBytes, each cut after
/// an ASCII whitespace byte (never inside a word or a UTF-8 sequence; a piece
/// without any whitespace is cut at a code-point boundary), so the tokenizer's
/// working memory is bounded by a piece, not by the corpus. Offsets are the
/// text's.
std::vector<Token> tokenize_long(const std::string& text, const TokenizeOptions& options) {
    std::vector<Token> out;
    const auto space = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; };
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t end = std::min(text.size(), i + kMaxSentenceBytes);
        if (end < text.size()) {
            std::size_t cut = end;
            while (cut > i && !space(text[cut - 1])) --cut;
            if (cut == i) {
                cut = end;
                while (cut > i && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
            }
            end = cut;
        }
        std::vector<Token> piece;
        try {
            piece = tokenize(std::string_view(text).substr(i, end - i), options);
        } catch (const Error& e) {
            throw Error("(in the part starting at byte " + std::to_string(i) + ") " + e.what(), e.kind());
        }
        for (Token& t : piece) {
            t.start += i;
            t.end += i;
            out.push_back(std::move(t));
        }
        i = end;
    }
    return out;
}

}  // namespace

std::vector<std::int32_t> Vocabulary::encode(const std::string& text) const {
    TokenizeOptions options;
    options.lowercase = true;
    const int unknown = find("[UNK]");
    std::vector<std::int32_t> ids;
    for (const Token& token : tokenize_long(text, options)) {
        int id = find(token.text);
        if (id < 0) {
            if (unknown < 0) throw Error("vocabulary: the token '" + token.text + "' is not in the vocabulary");
            id = unknown;
        }
        ids.push_back(id);
    }
    return ids;
}

// ---- task names ---------------------------------------------------------------------

const std::vector<TaskKind>& all_tasks() {
    static const std::vector<TaskKind> kinds = {TaskKind::copy,      TaskKind::reverse,        TaskKind::sort,
                                                TaskKind::previous_token, TaskKind::induction, TaskKind::recall,
                                                TaskKind::brackets,  TaskKind::coreference,    TaskKind::text};
    return kinds;
}

const char* task_name(TaskKind kind) {
    switch (kind) {
        case TaskKind::copy: return "copy";
        case TaskKind::reverse: return "reverse";
        case TaskKind::sort: return "sort";
        case TaskKind::previous_token: return "previous-token";
        case TaskKind::induction: return "induction";
        case TaskKind::recall: return "recall";
        case TaskKind::brackets: return "brackets";
        case TaskKind::coreference: return "coreference";
        case TaskKind::text: return "text";
    }
    return "?";
}

TaskKind parse_task(const std::string& name) {
    std::string names;
    for (TaskKind kind : all_tasks()) {
        if (name == task_name(kind)) return kind;
        names += std::string(names.empty() ? "" : ", ") + task_name(kind);
    }
    throw Error("unknown task '" + name + "'; the tasks are " + names);
}

// ---- answer keys ------------------------------------------------------------------

namespace {

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

}  // namespace

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

// ---- sampling ---------------------------------------------------------------------

namespace {

/// The seed of every probe: probes are the same whatever the training seed.
constexpr std::uint64_t kProbeSeed = 0x5EED2026;
constexpr int kMaxBatch = 65536;

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

void check_option(const char* task, const char* option, int value, int lo, int hi) {
    if (value < lo || value > hi)
        throw Error(std::string(task) + ": option " + option + " = " + std::to_string(value) + " is out of range " +
                    std::to_string(lo) + ".." + std::to_string(hi));
}

/// options.length, or the task's default when it is 0, checked against [lo, hi].
int length_option(const char* task, const TaskOptions& options, int fallback, int lo, int hi) {
    const int n = options.length == 0 ? fallback : options.length;
    check_option(task, "length", n, lo, hi);
    return n;
}

std::vector<std::string> with_pad(std::vector<std::string> tokens) {
    tokens.insert(tokens.begin(), kPadText);
    return tokens;
}

std::vector<std::string> letters(int count) {
    std::vector<std::string> out;
    for (int i = 0; i < count; ++i) out.emplace_back(1, static_cast<char>('a' + i));
    return out;
}

std::vector<std::string> digits() {
    std::vector<std::string> out;
    for (int i = 0; i < 10; ++i) out.emplace_back(1, static_cast<char>('0' + i));
    return out;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
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

// ---- reverse: x → x reversed -------------------------------------------------------------
// Vocabulary [PAD] "0".."9": digit d has id d + 1.

class ReverseTask final : public TaskBase {
public:
    explicit ReverseTask(int n) : TaskBase(Vocabulary(with_pad(digits())), n) {}
    TaskKind kind() const override { return TaskKind::reverse; }
    std::string description() const override { return "Read a row of digits and write it out backwards."; }
    std::string pattern() const override {
        return "Each position looks at its mirror position from the other end, an anti-diagonal line.";
    }
    bool causal() const override { return false; }

    std::vector<AnswerKey> answer_keys(const std::vector<std::int32_t>& ids, int length) const override {
        check_sequence(ids, length);
        AnswerKey k{"anti-diagonal", empty_key(ids)};
        for (int i = 0; i < length; ++i) k.key(i, length - 1 - i) = 1;
        return {std::move(k)};
    }

private:
    int generate(SequenceRng& rng, std::int32_t* ids, std::int32_t* targets) const override {
        const int n = context_;
        for (int i = 0; i < n; ++i) ids[i] = 1 + rng.below(10);
        for (int i = 0; i < n; ++i) targets[i] = ids[n - 1 - i];
        return n;
    }
};

// ---- sort: x → x in ascending order ----------------------------------------------------

class SortTask final : public TaskBase {
public:
    explicit SortTask(int n) : TaskBase(Vocabulary(with_pad(digits())), n) {}
    TaskKind kind() const override { return TaskKind::sort; }
    std::string description() const override { return "Read a row of digits and write them in ascending order."; }
    std::string pattern() const override {
        return "Each output position looks at the input digits that belong in that place of the sorted row.";
    }
    bool causal() const override { return false; }

    std::vector<AnswerKey> answer_keys(const std::vector<std::int32_t>& ids, int length) const override {
        check_sequence(ids, length);
        std::vector<std::int32_t> sorted(ids.begin(), ids.begin() + length);
        std::sort(sorted.begin(), sorted.end());
        AnswerKey k{"sorted-source", empty_key(ids)};
        for (int i = 0; i < length; ++i)
            for (int j = 0; j < length; ++j)
                if (ids[j] == sorted[i]) k.key(i, j) = 1;
        return {std::move(k)};
    }

private:
    int generate(SequenceRng& rng, std::int32_t* ids, std::int32_t* targets) const override {
        const int n = context_;
        for (int i = 0; i < n; ++i) ids[i] = 1 + rng.below(10);
        std::copy(ids, ids + n, targets);
        std::sort(targets, targets + n);
        return n;
    }
};

// ---- copy: x | x, next-token prediction -------------------------------------------------
// Vocabulary [PAD] "0".."9" "|". Sequence x_0 … x_{n-1} | x_0 … x_{n-1} (2n + 1
// tokens); position p in [n, 2n-1] predicts seq[p+1] = x_{p-n}.

class CopyTask final : public TaskBase {
public:
    explicit CopyTask(int n) : TaskBase(Vocabulary(with_pad(concat(digits(), {"|"}))), 2 * n + 1), n_(n) {}
    TaskKind kind() const override { return TaskKind::copy; }
    std::string description() const override {
        return "Read a row of digits, then after the bar write the same digits again, one at a time.";
    }
    std::string pattern() const override {
        return "Each position after the bar looks back at the digit it has to write next, a diagonal line.";
    }
    bool causal() const override { return true; }

    std::vector<AnswerKey> answer_keys(const std::vector<std::int32_t>& ids, int length) const override {
        check_sequence(ids, length);
        AnswerKey k{"copy-source", empty_key(ids)};
        const int bar = id("|");
        const int n = static_cast<int>(std::find(ids.begin(), ids.begin() + length, bar) - ids.begin());
        for (int p = n; p + 1 < length && p - n < n; ++p) k.key(p, p - n) = 1;
        return {std::move(k)};
    }

private:
    int generate(SequenceRng& rng, std::int32_t* ids, std::int32_t* targets) const override {
        const int n = n_;
        for (int i = 0; i < n; ++i) ids[i] = ids[n + 1 + i] = 1 + rng.below(10);
        ids[n] = id("|");
        for (int p = n; p <= 2 * n - 1; ++p) targets[p] = ids[p + 1];
        return 2 * n + 1;
    }
    int n_;
};

// ---- previous-token: output the token before ---------------------------------------------
// Vocabulary [PAD] "a".."p".

class PreviousTokenTask final : public TaskBase {
public:
    explicit PreviousTokenTask(int T) : TaskBase(Vocabulary(with_pad(letters(16))), T) {}
    TaskKind kind() const override { return TaskKind::previous_token; }
    std::string description() const override { return "At every position, say which letter came just before."; }
    std::string pattern() const override { return "Each position looks at the position right before it."; }
    bool causal() const override { return true; }

    std::vector<AnswerKey> answer_keys(const std::vector<std::int32_t>& ids, int length) const override {
        check_sequence(ids, length);
        return {previous_token_key(ids, length)};
    }

private:
    int generate(SequenceRng& rng, std::int32_t* ids, std::int32_t* targets) const override {
        for (int i = 0; i < context_; ++i) ids[i] = 1 + rng.below(16);
        for (int i = 1; i < context_; ++i) targets[i] = ids[i - 1];
        return context_;
    }
};

// ---- induction: finish a repeated segment -------------------------------------------------
// Vocabulary [PAD] "a".."z". A segment of L letters at a random start s is
// repeated at a random later start c (c >= s + L, c + L <= T); offsets and
// lengths are random because with a fixed offset layer 0 can solve the task
// by position alone. Targets only at p in [c, c+L-2]: the next token.
//
// So that the answer key can be recovered from the ids alone, the generator
// makes the planted pair the only repeat of three or more tokens: the
// segment's letters are distinct and appear nowhere else, the filler never
// repeats a three-letter run, and the filler next to the two copies differs so
// the repeat does not extend past the segment.

class InductionTask final : public TaskBase {
public:
    explicit InductionTask(int T) : TaskBase(Vocabulary(with_pad(letters(26))), T) {}
    TaskKind kind() const override { return TaskKind::induction; }
    std::string description() const override {
        return "A run of letters appears twice; on its second appearance, predict each next letter.";
    }
    std::string pattern() const override {
        return "Each position in the repeat looks at the letter that followed the same letter the first time.";
    }
    bool causal() const override { return true; }

    /// "induction": for every maximal repeat ids[a, a+r) == ids[b, b+r) (a + r <= b,
    /// r >= 3), rows b … b+r-2 → columns a+1 … a+r-1. Then "previous-token".
    std::vector<AnswerKey> answer_keys(const std::vector<std::int32_t>& ids, int length) const override {
        check_sequence(ids, length);
        AnswerKey k{"induction", empty_key(ids)};
        for (int a = 0; a < length; ++a)
            for (int b = a + 1; b < length; ++b) {
                if (a > 0 && ids[a - 1] == ids[b - 1]) continue;  // not maximal to the left
                int r = 0;
                while (b + r < length && a + r < b && ids[a + r] == ids[b + r]) ++r;
                if (r < 3) continue;
                for (int m = 0; m <= r - 2; ++m) k.key(b + m, a + m + 1) = 1;
            }
        return {std::move(k), previous_token_key(ids, length)};
    }

    /// The longest segment the task uses, so the repeat is easy to see.
    Example probe() const override {
        SequenceRng rng(kProbeSeed, Split::heldout, 0, 0);
        Example e;
        e.ids.assign(static_cast<std::size_t>(context_), kPadId);
        e.targets.assign(static_cast<std::size_t>(context_), kNoTarget);
        e.length = generate_with(rng, e.ids.data(), e.targets.data(), max_segment());
        return e;
    }

private:
    int max_segment() const { return std::clamp(context_ / 3, 3, 10); }

    int generate(SequenceRng& rng, std::int32_t* ids, std::int32_t* targets) const override {
        return generate_with(rng, ids, targets, 0);
    }

    int generate_with(SequenceRng& rng, std::int32_t* ids, std::int32_t* targets, int forced_length) const {
        const int T = context_;
        const int L = forced_length ? forced_length : rng.between(3, max_segment());
        const int s = rng.between(0, T - 2 * L);
        const int c = rng.between(s + L, T - L);

        // pass 1: L distinct letters for the segment (a partial Fisher–Yates);
        // the other 26 - L letters are the filler's.
        std::array<int, 26> pool;
        std::iota(pool.begin(), pool.end(), 1);
        for (int k = 0; k < L; ++k) std::swap(pool[static_cast<std::size_t>(k)], pool[static_cast<std::size_t>(rng.between(k, 25))]);
        for (int k = 0; k < L; ++k) ids[s + k] = ids[c + k] = pool[static_cast<std::size_t>(k)];
        const int filler_letters = 26 - L;
        const int* filler = pool.data() + L;
        std::vector<char> is_filler(static_cast<std::size_t>(T), 1);
        for (int k = 0; k < L; ++k) is_filler[static_cast<std::size_t>(s + k)] = is_filler[static_cast<std::size_t>(c + k)] = 0;
        const bool apart = c > s + L;  // filler between the copies

        // pass 2: the filler, left to right, never repeating a three-letter run.
        // A context with every continuation used needs one two-letter run to
        // have occurred 16+ times before: practically never, and then we redraw.
        std::vector<char> seen(27 * 27 * 27);
        std::vector<int> allowed;
        allowed.reserve(26);
        for (int attempt = 0; attempt < 64; ++attempt) {
            std::fill(seen.begin(), seen.end(), 0);
            bool stuck = false;
            for (int t = 0; t < T && !stuck; ++t) {
                if (!is_filler[static_cast<std::size_t>(t)]) continue;
                const bool run = t >= 2 && is_filler[static_cast<std::size_t>(t - 1)] && is_filler[static_cast<std::size_t>(t - 2)];
                const int prefix = run ? (ids[t - 2] * 27 + ids[t - 1]) * 27 : 0;
                allowed.clear();
                for (int f = 0; f < filler_letters; ++f) {
                    const int x = filler[f];
                    if (run && seen[static_cast<std::size_t>(prefix + x)]) continue;
                    if (apart && t == c - 1 && s >= 1 && x == ids[s - 1]) continue;  // would extend the repeat left
                    if (apart && t == c + L && x == ids[s + L]) continue;            // would extend it right
                    allowed.push_back(x);
                }
                if (allowed.empty()) {
                    stuck = true;
                    break;
                }
                ids[t] = allowed[static_cast<std::size_t>(rng.below(static_cast<int>(allowed.size())))];
                if (run) seen[static_cast<std::size_t>(prefix + ids[t])] = 1;
            }
            if (!stuck) break;
        }
        for (int p = c; p <= c + L - 2; ++p) targets[p] = ids[p + 1];
        return T;
    }
};

// ---- recall: key-value lookup ----------------------------------------------------------
// Vocabulary [PAD] "a".."h" "0".."9" "?". Sequence k1 v1 … kn vn ? kq with
// distinct keys; the last position predicts the value of kq.

class RecallTask final : public TaskBase {
public:
    explicit RecallTask(int n) : TaskBase(Vocabulary(with_pad(concat(concat(letters(8), digits()), {"?"}))), 2 * n + 2), n_(n) {}
    TaskKind kind() const override { return TaskKind::recall; }
    std::string description() const override {
        return "Read pairs of a letter and a digit, then answer with the digit that went with the asked letter.";
    }
    std::string pattern() const override {
        return "The last position looks at the digit written right after the asked letter.";
    }
    bool causal() const override { return true; }

    /// "matching-value": the last row → the token after each earlier copy of the last token (before the "?").
    std::vector<AnswerKey> answer_keys(const std::vector<std::int32_t>& ids, int length) const override {
        check_sequence(ids, length);
        AnswerKey k{"matching-value", empty_key(ids)};
        const int last = length - 1;
        for (int j = 0; j + 1 <= last - 2; ++j)
            if (ids[j] == ids[last]) k.key(last, j + 1) = 1;
        return {std::move(k)};
    }

private:
    int generate(SequenceRng& rng, std::int32_t* ids, std::int32_t* targets) const override {
        const int n = n_;
        std::array<int, 8> keys;
        std::iota(keys.begin(), keys.end(), 1);
        for (int k = 0; k < n; ++k) std::swap(keys[static_cast<std::size_t>(k)], keys[static_cast<std::size_t>(rng.between(k, 7))]);
        const int first_digit = id("0");
        for (int k = 0; k < n; ++k) {
            ids[2 * k] = keys[static_cast<std::size_t>(k)];
            ids[2 * k + 1] = first_digit + rng.below(10);
        }
        const int q = rng.below(n);
        ids[2 * n] = id("?");
        ids[2 * n + 1] = ids[2 * q];
        targets[2 * n + 1] = ids[2 * q + 1];
        return 2 * n + 2;
    }
    int n_;
};

// ---- brackets: which bracket closes here -------------------------------------------------
// Vocabulary [PAD] ( [ { ) ] } _ (ids 1-3 opens, 4-6 closes, 7 "_"). A random
// well-nested string, depth <= 4, with every close written "_"; its target is
// the close that matches its open.

class BracketsTask final : public TaskBase {
public:
    explicit BracketsTask(int T) : TaskBase(Vocabulary({kPadText, "(", "[", "{", ")", "]", "}", "_"}), T) {}
    TaskKind kind() const override { return TaskKind::brackets; }
    std::string description() const override {
        return "In a string of nested brackets, name the right closing bracket at every blank.";
    }
    std::string pattern() const override {
        return "Each blank looks at the opening bracket it closes, the latest one still open.";
    }
    bool causal() const override { return true; }

    /// "matching-bracket": each close ("_" or a closing bracket) → the open it matches.
    std::vector<AnswerKey> answer_keys(const std::vector<std::int32_t>& ids, int length) const override {
        check_sequence(ids, length);
        AnswerKey k{"matching-bracket", empty_key(ids)};
        std::vector<int> open;
        for (int t = 0; t < length; ++t) {
            if (ids[t] >= 1 && ids[t] <= 3) {
                open.push_back(t);
            } else if (ids[t] >= 4 && ids[t] <= 7 && !open.empty()) {
                k.key(t, open.back()) = 1;
                open.pop_back();
            }
        }
        return {std::move(k)};
    }

    /// The first held-out string of the probe seed that nests at least 3 deep.
    Example probe() const override {
        const int want = std::min(3, context_ / 2);
        for (std::uint64_t index = 0; index < 1000; ++index) {
            SequenceRng rng(kProbeSeed, Split::heldout, index, 0);
            Example e = example(rng);
            int depth = 0, deepest = 0;
            for (int t = 0; t < e.length; ++t) {
                depth += e.ids[static_cast<std::size_t>(t)] <= 3 ? 1 : -1;
                deepest = std::max(deepest, depth);
            }
            if (deepest >= want) return e;
        }
        return TaskBase::probe();
    }

private:
    static constexpr int kMaxDepth = 4;

    int generate(SequenceRng& rng, std::int32_t* ids, std::int32_t* targets) const override {
        const int T = context_;
        std::vector<int> open;
        open.reserve(kMaxDepth);
        for (int t = 0; t < T; ++t) {
            const int depth = static_cast<int>(open.size());
            // T is even, so depth and T - t have the same parity and the string closes exactly at T.
            const bool must_close = depth == T - t || depth == kMaxDepth;
            const bool opens = depth == 0 || (!must_close && rng.below(2) == 0);
            if (opens) {
                ids[t] = 1 + rng.below(3);
                open.push_back(t);
            } else {
                ids[t] = 7;
                targets[t] = ids[open.back()] + 3;
                open.pop_back();
            }
        }
        return T;
    }
};

// ---- coreference: what does "it" refer to ------------------------------------------------
// Sentences with an animate noun, an obstacle and "it ... too <adjective>".
// The adjective fits only one of the two nouns, so it decides the antecedent;
// the target at "it" is that noun's id. Two of the four templates put the
// obstacle first, so position alone does not give the answer.
//
// Held-out split: every (template, noun, obstacle, adjective) tuple is hashed
// (FNV-1a 64 of "template|noun|obstacle|adjective", then splitmix64); hash % 5
// == 0 (about 20% of the 3,936 tuples) is held out and never used for
// training. The negation and the verb vary inside a tuple.

// The living things that can be tired, scared, ...
const std::vector<std::string> kAnimates = {"animal", "dog", "cat",   "horse", "child", "man",
                                            "woman",  "boy", "girl", "cow",   "fox",   "bird"};
// Adjectives that fit only a living thing.
const std::vector<std::string> kAnimateAdjectives = {"tired", "scared", "lazy", "slow", "sleepy", "weak", "afraid"};

struct Obstacle {
    std::string noun;
    std::vector<std::string> adjectives;  ///< fit this obstacle and no living thing
    std::vector<std::string> verbs;       ///< what one does to get past it
};
const std::vector<Obstacle> kObstacles = {
    {"street", {"wide", "busy", "crowded", "icy"}, {"cross"}},
    {"road", {"wide", "busy", "long", "icy"}, {"cross"}},
    {"river", {"wide", "deep", "long"}, {"cross"}},
    {"bridge", {"long", "high", "icy", "crowded"}, {"cross"}},
    {"field", {"wide", "long", "muddy"}, {"cross"}},
    {"wall", {"high", "icy"}, {"climb", "jump"}},
    {"hill", {"high", "steep", "icy", "muddy"}, {"climb"}},
    {"fence", {"high", "sharp"}, {"climb", "jump"}},
};
const std::vector<std::string> kNegations = {"didn't", "did not", "couldn't", "could not", "wouldn't", "would not"};

// {N} animate noun, {O} obstacle, {V} verb, {X} negation, {A} adjective.
const std::vector<std::string> kTemplates = {
    "the {N} {X} {V} the {O} because it was too {A} .",
    "the {O} stopped the {N} because it was too {A} .",
    "the {N} looked at the {O} but it was too {A} to {V} .",
    "the {O} was in front of the {N} and it was too {A} to {V} .",
};

const std::vector<std::string> kCoreferenceVocabulary = {
    kPadText, "[UNK]", "the", "because", "it", "was", "too", ".", "but", "and", "to", "looked", "at",
    "stopped", "in", "front", "of", "didn't", "did", "not", "couldn't", "could", "wouldn't", "would",
    "cross", "climb", "jump",
    "animal", "dog", "cat", "horse", "child", "man", "woman", "boy", "girl", "cow", "fox", "bird",
    "street", "road", "river", "bridge", "field", "wall", "hill", "fence",
    "tired", "scared", "lazy", "slow", "sleepy", "weak", "afraid",
    "wide", "busy", "crowded", "icy", "long", "deep", "high", "muddy", "steep", "sharp",
};

std::uint64_t fnv1a64(std::string_view text) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char ch : text) {
        h ^= ch;
        h *= 0x100000001b3ULL;
    }
    return h;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

class CoreferenceTask final : public TaskBase {
public:
    explicit CoreferenceTask(int T) : TaskBase(Vocabulary(kCoreferenceVocabulary), T) {
        for (const auto& n : kAnimates) animate_ids_.push_back(id(n.c_str()));
        for (const auto& o : kObstacles) obstacle_ids_.push_back(id(o.noun.c_str()));
        for (const auto& a : kAnimateAdjectives) animate_adjective_ids_.push_back(id(a.c_str()));
        for (const auto& o : kObstacles)
            for (const auto& a : o.adjectives) obstacle_adjective_ids_.push_back(id(a.c_str()));
        // Every tuple, in its split and class (0: the animate noun is meant, 1: the obstacle).
        for (int t = 0; t < static_cast<int>(kTemplates.size()); ++t)
            for (int n = 0; n < static_cast<int>(kAnimates.size()); ++n)
                for (int o = 0; o < static_cast<int>(kObstacles.size()); ++o) {
                    const Obstacle& ob = kObstacles[static_cast<std::size_t>(o)];
                    const int animate_count = static_cast<int>(kAnimateAdjectives.size());
                    for (int a = 0; a < animate_count + static_cast<int>(ob.adjectives.size()); ++a) {
                        const bool animate = a < animate_count;
                        const std::string& adjective =
                            animate ? kAnimateAdjectives[static_cast<std::size_t>(a)]
                                    : ob.adjectives[static_cast<std::size_t>(a - animate_count)];
                        const std::string key = std::to_string(t) + "|" + kAnimates[static_cast<std::size_t>(n)] +
                                                "|" + ob.noun + "|" + adjective;
                        const bool heldout = splitmix64(fnv1a64(key)) % 5 == 0;
                        tuples_[heldout ? 1 : 0][animate ? 0 : 1].push_back({t, n, o, a});
                    }
                }
    }
    TaskKind kind() const override { return TaskKind::coreference; }
    std::string description() const override {
        return "In a sentence about an animal and an obstacle, tell which one the word \"it\" means.";
    }
    std::string pattern() const override {
        return "The word \"it\" looks at the noun it stands for, picked out by the adjective.";
    }
    bool causal() const override { return false; }

    /// "antecedent": each "it" → the nouns of the kind its adjective (the word
    /// after the next "too") fits; rows without such an adjective unscored.
    std::vector<AnswerKey> answer_keys(const std::vector<std::int32_t>& ids, int length) const override {
        check_sequence(ids, length);
        AnswerKey k{"antecedent", empty_key(ids)};
        const int it = id("it"), too = id("too");
        auto contains = [](const std::vector<int>& set, int x) { return std::find(set.begin(), set.end(), x) != set.end(); };
        for (int p = 0; p < length; ++p) {
            if (ids[p] != it) continue;
            int q = p + 1;
            while (q < length && ids[q] != too) ++q;
            if (q + 1 >= length) continue;
            const int adjective = ids[q + 1];
            const std::vector<int>* nouns = contains(animate_adjective_ids_, adjective)    ? &animate_ids_
                                            : contains(obstacle_adjective_ids_, adjective) ? &obstacle_ids_
                                                                                           : nullptr;
            if (!nouns) continue;
            for (int j = 0; j < length; ++j)
                if (contains(*nouns, ids[j])) k.key(p, j) = 1;
        }
        return {std::move(k)};
    }

    /// The playground's default sentence.
    Example probe() const override {
        return sentence_example("The animal didn't cross the street because it was too tired.", "animal");
    }

    /// 1 when the sentence is one the generator makes: one of the four
    /// templates word for word, an animate noun at {N}, an obstacle at {O},
    /// one of its verbs at {V}, a negation at {X} and an adjective at {A} that
    /// fits the animal or that obstacle (held-out tuples count: the grammar
    /// makes them, training never showed them). Else 0.
    int grammar(const std::vector<std::int32_t>& ids, int length) const override {
        check_sequence(ids, length);
        std::vector<std::string> words;
        for (int p = 0; p < length; ++p) words.push_back(vocab_.text(ids[static_cast<std::size_t>(p)]));
        for (const std::string& t : kTemplates)
            if (matches_template(t, words)) return 1;
        return 0;
    }

private:
    struct Tuple {
        int templ, noun, obstacle, adjective;
    };
    bool padded() const override { return true; }

    Example sentence_example(const std::string& text, const char* antecedent) const {
        Example e;
        const std::vector<std::int32_t> ids = vocab_.encode(text);
        e.length = static_cast<int>(ids.size());
        e.ids.assign(static_cast<std::size_t>(context_), kPadId);
        e.targets.assign(static_cast<std::size_t>(context_), kNoTarget);
        std::copy(ids.begin(), ids.end(), e.ids.begin());
        for (int p = 0; p < e.length; ++p)
            if (e.ids[static_cast<std::size_t>(p)] == id("it")) e.targets[static_cast<std::size_t>(p)] = id(antecedent);
        return e;
    }

    int generate(SequenceRng& rng, std::int32_t* ids, std::int32_t* targets) const override {
        // Half the sentences mean the animate noun, half the obstacle (there
        // are more animate adjectives, so picking a tuple uniformly would not).
        const int meaning = rng.below(2);
        const std::vector<Tuple>& pool = tuples_[rng.split() == Split::heldout ? 1 : 0][meaning];
        const Tuple& tu = pool[static_cast<std::size_t>(rng.below(static_cast<int>(pool.size())))];
        const Obstacle& ob = kObstacles[static_cast<std::size_t>(tu.obstacle)];
        const int animate_count = static_cast<int>(kAnimateAdjectives.size());
        const std::string& adjective = tu.adjective < animate_count
                                           ? kAnimateAdjectives[static_cast<std::size_t>(tu.adjective)]
                                           : ob.adjectives[static_cast<std::size_t>(tu.adjective - animate_count)];
        const std::string& noun = kAnimates[static_cast<std::size_t>(tu.noun)];
        std::string text = kTemplates[static_cast<std::size_t>(tu.templ)];
        text = replace_all(text, "{N}", noun);
        text = replace_all(text, "{O}", ob.noun);
        text = replace_all(text, "{A}", adjective);
        text = replace_all(text, "{X}", kNegations[static_cast<std::size_t>(rng.below(static_cast<int>(kNegations.size())))]);
        text = replace_all(text, "{V}", ob.verbs[static_cast<std::size_t>(rng.below(static_cast<int>(ob.verbs.size())))]);
        const std::vector<std::int32_t> encoded = vocab_.encode(text);
        const int length = static_cast<int>(encoded.size());
        std::copy(encoded.begin(), encoded.end(), ids);
        const int antecedent = id(meaning == 0 ? noun.c_str() : ob.noun.c_str());
        for (int p = 0; p < length; ++p)
            if (ids[p] == id("it")) targets[p] = antecedent;
        return length;
    }

    /// Word by word against one template; {X} may be two words ("did not").
    static bool matches_template(const std::string& templ, const std::vector<std::string>& words) {
        std::vector<std::string> slots;
        for (std::size_t at = 0; at < templ.size();) {
            const std::size_t end = std::min(templ.find(' ', at), templ.size());
            slots.push_back(templ.substr(at, end - at));
            at = end + 1;
        }
        auto in = [](const std::vector<std::string>& set, const std::string& w) { return std::find(set.begin(), set.end(), w) != set.end(); };
        const Obstacle* obstacle = nullptr;
        bool has_verb = false;  // "the {O} stopped the {N} ..." has none
        std::string verb, adjective;
        std::size_t w = 0;
        for (const std::string& slot : slots) {
            if (slot == "{X}") {
                // one word ("didn't") or two ("did not")
                std::size_t used = 0;
                for (const std::string& x : kNegations) {
                    const std::size_t n = x.find(' ') == std::string::npos ? 1 : 2;
                    if (w + n > words.size()) continue;
                    if ((n == 1 ? words[w] : words[w] + " " + words[w + 1]) == x) used = n;
                }
                if (!used) return false;
                w += used;
                continue;
            }
            if (w >= words.size()) return false;
            const std::string& word = words[w++];
            if (slot == "{N}") {
                if (!in(kAnimates, word)) return false;
            } else if (slot == "{O}") {
                obstacle = nullptr;
                for (const Obstacle& o : kObstacles)
                    if (o.noun == word) obstacle = &o;
                if (!obstacle) return false;
            } else if (slot == "{V}") {
                has_verb = true;
                verb = word;
            } else if (slot == "{A}") {
                adjective = word;
            } else if (slot != word) {
                return false;
            }
        }
        if (w != words.size() || !obstacle) return false;
        return (!has_verb || in(obstacle->verbs, verb)) && (in(kAnimateAdjectives, adjective) || in(obstacle->adjectives, adjective));
    }

    std::vector<Tuple> tuples_[2][2];  ///< [train, heldout][animate meant, obstacle meant]
    std::vector<int> animate_ids_, obstacle_ids_, animate_adjective_ids_, obstacle_adjective_ids_;
};

/// Tokens of the longest sentence the templates make (a two-word negation
/// such as "did not" in place of {X}).
int longest_coreference_sentence() {
    int longest = 0;
    for (const std::string& t : kTemplates) {
        std::string text = replace_all(t, "{X}", "did not");
        for (const char* slot : {"{N}", "{O}", "{A}", "{V}"}) text = replace_all(text, slot, "x");
        longest = std::max(longest, static_cast<int>(tokenize(text).size()));
    }
    return longest;
}

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
    std::string description() const override { return "Predict the next word of the text, one word at a time."; }
    std::string pattern() const override {
        return "There is no single answer; heads often look at the previous word or at earlier copies of the current one.";
    }
    bool causal() const override { return true; }

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

std::unique_ptr<Task> make_text_task(const TaskOptions& options) {
    const int T = length_option("text", options, 32, 4, 256);
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

}  // namespace

std::unique_ptr<Task> make_task(TaskKind kind, const TaskOptions& options) {
    switch (kind) {
        case TaskKind::copy: return std::make_unique<CopyTask>(length_option("copy", options, 8, 2, 64));
        case TaskKind::reverse: return std::make_unique<ReverseTask>(length_option("reverse", options, 8, 2, 64));
        case TaskKind::sort: return std::make_unique<SortTask>(length_option("sort", options, 8, 2, 64));
        case TaskKind::previous_token:
            return std::make_unique<PreviousTokenTask>(length_option("previous-token", options, 16, 2, 256));
        case TaskKind::induction: return std::make_unique<InductionTask>(length_option("induction", options, 32, 8, 256));
        case TaskKind::recall: return std::make_unique<RecallTask>(length_option("recall", options, 4, 1, 8));
        case TaskKind::brackets: {
            const int T = length_option("brackets", options, 16, 4, 128);
            if (T % 2 != 0) throw Error("brackets: option length = " + std::to_string(T) + " must be even (4..128)");
            return std::make_unique<BracketsTask>(T);
        }
        case TaskKind::coreference: {
            static const int longest = longest_coreference_sentence();
            return std::make_unique<CoreferenceTask>(
                length_option("coreference", options, std::max(16, longest), longest, 128));
        }
        case TaskKind::text: return make_text_task(options);
    }
    throw Error("make_task: unknown task kind " + std::to_string(static_cast<int>(kind)));
}

}  // namespace attn
