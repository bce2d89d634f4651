// The digit tasks: reverse, sort and copy a row of digits.

#include "train/task_base.hpp"

#include <algorithm>

namespace attn::task_detail {
namespace {

// ---- reverse: x → x reversed -------------------------------------------------------------
// Vocabulary [PAD] "0".."9": digit d has id d + 1.

class ReverseTask final : public TaskBase {
public:
    explicit ReverseTask(int n) : TaskBase(Vocabulary(with_pad(digits())), n) {}
    TaskKind kind() const override { return TaskKind::reverse; }

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

}  // namespace

std::unique_ptr<Task> make_reverse_task(int n, const TaskOptions&) { return std::make_unique<ReverseTask>(n); }
std::unique_ptr<Task> make_sort_task(int n, const TaskOptions&) { return std::make_unique<SortTask>(n); }
std::unique_ptr<Task> make_copy_task(int n, const TaskOptions&) { return std::make_unique<CopyTask>(n); }

}  // namespace attn::task_detail
