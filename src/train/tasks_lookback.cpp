// The look-back tasks: previous-token, induction and recall.

#include "train/task_base.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <utility>

namespace attn::task_detail {
namespace {

// ---- previous-token: output the token before ---------------------------------------------
// Vocabulary [PAD] "a".."p".

class PreviousTokenTask final : public TaskBase {
public:
    explicit PreviousTokenTask(int T) : TaskBase(Vocabulary(with_pad(letters(16))), T) {}
    TaskKind kind() const override { return TaskKind::previous_token; }

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

}  // namespace

std::unique_ptr<Task> make_previous_token_task(int n, const TaskOptions&) { return std::make_unique<PreviousTokenTask>(n); }
std::unique_ptr<Task> make_induction_task(int n, const TaskOptions&) { return std::make_unique<InductionTask>(n); }
std::unique_ptr<Task> make_recall_task(int n, const TaskOptions&) { return std::make_unique<RecallTask>(n); }

}  // namespace attn::task_detail
