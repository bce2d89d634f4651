// The brackets task: which closing bracket each blank needs.

#include "train/task_base.hpp"

#include <algorithm>

namespace attn::task_detail {
namespace {

// ---- brackets: which bracket closes here -------------------------------------------------
// Vocabulary [PAD] ( [ { ) ] } _ (ids 1-3 opens, 4-6 closes, 7 "_"). A random
// well-nested string, depth <= 4, with every close written "_"; its target is
// the close that matches its open.

class BracketsTask final : public TaskBase {
public:
    explicit BracketsTask(int T) : TaskBase(Vocabulary({kPadText, "(", "[", "{", ")", "]", "}", "_"}), T) {}
    TaskKind kind() const override { return TaskKind::brackets; }

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

}  // namespace

std::unique_ptr<Task> make_brackets_task(int T, const TaskOptions&) {
    if (T % 2 != 0) throw Error("brackets: option length = " + std::to_string(T) + " must be even (4..128)");
    return std::make_unique<BracketsTask>(T);
}

}  // namespace attn::task_detail
