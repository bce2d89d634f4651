// The head pattern scores the pages name heads by (tasks.hpp: pattern_scores,
// head_patterns; web/app/kit/patterns.js only names heads from these numbers): the
// score and the rows it rests on, on hand-made weights and sequences.

#include "train/tasks.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {

/// T×T weights where row i puts all its weight on key target(i).
attn::Matrix one_hot(int T, const std::function<int(int)>& target) {
    attn::Matrix w = attn::Matrix::Zero(T, T);
    for (int i = 0; i < T; ++i) w(i, target(i)) = 1;
    return w;
}

std::map<std::string, attn::PatternScore> by_name(const std::vector<attn::PatternScore>& scores) {
    std::map<std::string, attn::PatternScore> out;
    for (const auto& s : scores) out[s.name] = s;
    return out;
}

}  // namespace

TEST_CASE("head patterns: a head that always looks one back, on 5 6 5", "[tasks]") {
    // rows: 0 → 0, 1 → 0, 2 → 1 (by hand: previous-token 1, first-token 2/3,
    // induction 1 (token 2 = token 0, followed by position 1), same-token 0)
    attn::Matrix w(3, 3);
    w << 1, 0, 0, 1, 0, 0, 0, 1, 0;
    const auto p = by_name(attn::head_patterns({&w}, {5, 6, 5}, 3, true)[0]);
    CHECK(p.at("previous-token").score == 1.0);
    CHECK(p.at("previous-token").rows == 2);
    CHECK(p.at("first-token").score == Approx(2.0 / 3));
    CHECK(p.at("first-token").rows == 3);
    CHECK(p.at("induction").score == 1.0);
    CHECK(p.at("induction").rows == 1);
    CHECK(p.at("same-token").score == 0.0);  // row 2 puts nothing on position 0
    CHECK(p.at("same-token").rows == 1);
    // no repeat: induction scores no row (the page shows no score, not 0)
    const auto none = by_name(attn::head_patterns({&w}, {1, 2, 3}, 3, true)[0]);
    CHECK(none.at("induction").rows == 0);
    CHECK(none.at("same-token").rows == 0);
}

TEST_CASE("head patterns: one repeat is one scored row, two repeats two", "[tasks]") {
    // "the cat chased the dog": ids 1 2 3 1 4; row 3 looks at position 1, the rest at 0
    const attn::Matrix w = one_hot(5, [](int i) { return i == 3 ? 1 : 0; });
    const auto p = by_name(attn::head_patterns({&w}, {1, 2, 3, 1, 4}, 5, true)[0]);
    CHECK(p.at("induction").rows == 1);
    CHECK(p.at("induction").score == 1.0);
    CHECK(p.at("first-token").score == Approx(0.8));
    CHECK(p.at("first-token").rows == 5);
    CHECK(p.at("previous-token").score == Approx(0.25));
    CHECK(p.at("previous-token").rows == 4);
    CHECK(p.at("same-token").score == 0.0);
    CHECK(p.at("same-token").rows == 1);
    // the head that is only induction on that row: row i → i, row 3 → 1
    const attn::Matrix thin = one_hot(5, [](int i) { return i == 3 ? 1 : i; });
    const auto t = by_name(attn::head_patterns({&thin}, {1, 2, 3, 1, 4}, 5, true)[0]);
    CHECK(t.at("induction").score == 1.0);
    CHECK(t.at("induction").rows == 1);
    CHECK(t.at("previous-token").score == 0.0);
    CHECK(t.at("first-token").score == Approx(0.2));
    // "a b c a b": rows 3 and 4 repeat; row 3 → 1, row 4 → 2
    const attn::Matrix w2 = one_hot(5, [](int i) { return i >= 3 ? i - 2 : 0; });
    const auto p2 = by_name(attn::head_patterns({&w2}, {1, 2, 3, 1, 2}, 5, true)[0]);
    CHECK(p2.at("induction").rows == 2);
    CHECK(p2.at("induction").score == 1.0);
    CHECK(p2.at("previous-token").score == Approx(0.25));
    CHECK(p2.at("first-token").score == Approx(0.6));
    CHECK(p2.at("same-token").score == 0.0);
    CHECK(p2.at("same-token").rows == 2);
}

TEST_CASE("head patterns: a task's own key joins the standard ones, which keep their names", "[tasks]") {
    const attn::Matrix w = one_hot(4, [](int) { return 0; });
    attn::AnswerKey antecedent{"antecedent", attn::Matrix::Zero(4, 4)};
    antecedent.key(3, 1) = 1;
    attn::AnswerKey again{"previous-token", attn::Matrix::Ones(4, 4)};  // a task key with a standard name: not added twice
    const auto scores = attn::head_patterns({&w, &w}, {1, 2, 3, 4}, 4, false, {antecedent, again});
    REQUIRE(scores.size() == 2);
    REQUIRE(scores[0].size() == 5);
    const auto p = by_name(scores[1]);
    CHECK(p.at("antecedent").rows == 1);
    CHECK(p.at("antecedent").score == 0.0);
    CHECK(p.at("previous-token").rows == 3);  // the standard key, rows 1 … 3
    CHECK(p.at("first-token").score == 1.0);
}

TEST_CASE("head patterns: the scores are answer_key_score of each key, over random weights", "[tasks]") {
    std::srand(7);
    for (int trial = 0; trial < 50; ++trial) {
        const int T = 2 + trial % 9;
        attn::Matrix w = attn::Matrix::Random(T, T).cwiseAbs();
        for (int i = 0; i < T; ++i) w.row(i) /= w.row(i).sum();
        std::vector<std::int32_t> ids;
        for (int i = 0; i < T; ++i) ids.push_back(1 + std::rand() % 3);
        const auto keys = attn::standard_keys(ids, T, trial % 2 == 0);
        const auto scores = attn::head_patterns({&w}, ids, T, trial % 2 == 0)[0];
        REQUIRE(scores.size() == keys.size());
        for (std::size_t k = 0; k < keys.size(); ++k) {
            CHECK(scores[k].name == keys[k].name);
            CHECK(scores[k].score == attn::answer_key_score(w, keys[k].key));
            int rows = 0;
            for (int i = 0; i < T; ++i) rows += keys[k].key.row(i).sum() > 0 ? 1 : 0;
            CHECK(scores[k].rows == rows);
        }
    }
}
