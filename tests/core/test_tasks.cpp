// Tests of src/train/tasks.hpp: valid, deterministic batches for every task;
// targets checked against each task's definition by a computation written
// here; answer keys consistent with the targets; the coreference held-out
// split; the text vocabulary; answer_key_score and standard_keys on
// hand-worked examples; and a clear error for every bad option.

#include "train/tasks.hpp"
#include "train/trainer.hpp"
#include "text/tokenizer.hpp"
#include "base/types.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

using Catch::Matchers::Contains;

namespace {

std::vector<std::int32_t> row_ids(const attn::Batch& b, int row) {
    return {b.ids.begin() + static_cast<std::ptrdiff_t>(row) * b.length,
            b.ids.begin() + static_cast<std::ptrdiff_t>(row + 1) * b.length};
}

std::vector<std::int32_t> row_targets(const attn::Batch& b, int row) {
    return {b.targets.begin() + static_cast<std::ptrdiff_t>(row) * b.length,
            b.targets.begin() + static_cast<std::ptrdiff_t>(row + 1) * b.length};
}

std::string text_corpus() {
    std::string corpus;
    const char* lines[] = {"The quick brown fox jumps over the lazy dog.", "A dog barks; the fox runs away!",
                           "Every morning the old man walks to the river and back.",
                           "She said: the river is cold, but the water is clear."};
    for (int i = 0; i < 20; ++i) corpus += std::string(lines[i % 4]) + " ";
    return corpus;
}

std::unique_ptr<attn::Task> make(attn::TaskKind kind) {
    attn::TaskOptions options;
    if (kind == attn::TaskKind::text) options.corpus = text_corpus();
    if (kind == attn::TaskKind::text) options.length = 8;
    return attn::make_task(kind, options);
}

/// The shape and validity rules every batch must follow.
void check_valid(const attn::Task& task, const attn::Batch& b, int batch) {
    const int T = task.context();
    const int V = task.vocabulary().size();
    REQUIRE(b.batch == batch);
    REQUIRE(b.length == T);
    REQUIRE(b.ids.size() == static_cast<std::size_t>(batch) * T);
    REQUIRE(b.targets.size() == b.ids.size());
    REQUIRE((b.lengths.empty() || b.lengths.size() == static_cast<std::size_t>(batch)));
    if (task.kind() != attn::TaskKind::coreference) CHECK(b.lengths.empty());
    for (int r = 0; r < batch; ++r) {
        const int length = b.real_length(r);
        REQUIRE(length >= 1);
        REQUIRE(length <= T);
        for (int t = 0; t < T; ++t) {
            const int id = b.id(r, t), target = b.target(r, t);
            REQUIRE(id >= 0);
            REQUIRE(id < V);
            REQUIRE((target == attn::kNoTarget || (target >= 0 && target < V)));
            if (t >= length) {
                REQUIRE(id == attn::kPadId);
                REQUIRE(target == attn::kNoTarget);
            } else {
                REQUIRE(id != attn::kPadId);
                REQUIRE(target != attn::kPadId);
            }
        }
    }
}

bool scored(const attn::Matrix& key, int row) { return (key.row(row).array() != 0).any(); }

std::string error_of(attn::TaskKind kind, const attn::TaskOptions& options) {
    try {
        attn::make_task(kind, options);
    } catch (const attn::Error& e) {
        return e.what();
    }
    return "<no error>";
}

attn::TaskOptions with_length(int n) {
    attn::TaskOptions o;
    o.length = n;
    return o;
}

// The coreference word lists, restated here so the test's antecedent does not
// come from the code under test.
const std::set<std::string> kAnimates = {"animal", "dog", "cat", "horse", "child", "man",
                                         "woman",  "boy", "girl", "cow",  "fox",   "bird"};
const std::set<std::string> kObstacles = {"street", "road", "river", "bridge", "field", "wall", "hill", "fence"};
const std::set<std::string> kAnimateAdjectives = {"tired", "scared", "lazy", "slow", "sleepy", "weak", "afraid"};
const std::set<std::string> kObstacleAdjectives = {"wide", "busy", "crowded", "icy", "long",
                                                   "deep", "high", "muddy",   "steep", "sharp"};
const std::set<std::string> kSurface = {"didn't", "did", "not", "couldn't", "could", "wouldn't", "would",
                                        "cross", "climb", "jump"};

std::vector<std::string> words(const attn::Task& task, const attn::Batch& b, int r) {
    std::vector<std::string> out;
    for (int t = 0; t < b.real_length(r); ++t) out.push_back(task.vocabulary().text(b.id(r, t)));
    return out;
}

/// The sentence without its negation and verb: what fixes (template, noun, obstacle, adjective).
std::string tuple_of(const std::vector<std::string>& sentence) {
    std::string out;
    for (const auto& w : sentence)
        if (!kSurface.count(w)) out += w + " ";
    return out;
}

}  // namespace

TEST_CASE("tasks: names parse back and every task is listed once", "[tasks]") {
    const auto& kinds = attn::all_tasks();
    REQUIRE(kinds.size() == 9);
    const std::vector<std::string> names = {"copy",      "reverse",  "sort",        "previous-token", "induction",
                                            "recall",    "brackets", "coreference", "text"};
    for (std::size_t i = 0; i < kinds.size(); ++i) {
        CHECK(attn::task_name(kinds[i]) == names[i]);
        CHECK(attn::parse_task(names[i]) == kinds[i]);
    }
    try {
        attn::parse_task("translate");
        FAIL("no error");
    } catch (const attn::Error& e) {
        CHECK_THAT(e.what(), Contains("translate") && Contains("previous-token") && Contains("coreference"));
    }
}

TEST_CASE("tasks: every batch has the task's shape and only valid ids and targets", "[tasks]") {
    for (attn::TaskKind kind : attn::all_tasks()) {
        const auto task = make(kind);
        INFO("task " << attn::task_name(kind));
        CHECK(task->kind() == kind);
        CHECK(task->vocabulary().text(0) == "[PAD]");
        CHECK(task->vocabulary().find("[PAD]") == 0);
        for (std::uint64_t index = 0; index < 20; ++index)
            for (attn::Split split : {attn::Split::train, attn::Split::heldout}) {
                const int B = 1 + static_cast<int>(index % 7) * 5;
                check_valid(*task, task->sample(B, 11, index, split), B);
            }
        // Every batch has at least one target to learn from.
        const attn::Batch b = task->sample(16, 3, 0, attn::Split::train);
        for (int r = 0; r < 16; ++r) {
            const auto t = row_targets(b, r);
            CHECK(std::count(t.begin(), t.end(), attn::kNoTarget) < b.length);
        }
    }
}

TEST_CASE("tasks: a batch is a pure function of (batch, seed, index, split)", "[tasks]") {
    for (attn::TaskKind kind : attn::all_tasks()) {
        const auto task = make(kind);
        const auto again = make(kind);
        INFO("task " << attn::task_name(kind));
        const attn::Batch a = task->sample(8, 42, 5, attn::Split::train);
        const attn::Batch b = again->sample(8, 42, 5, attn::Split::train);
        CHECK(a.ids == b.ids);
        CHECK(a.targets == b.targets);
        CHECK(a.lengths == b.lengths);
        CHECK(task->sample(8, 42, 6, attn::Split::train).ids != a.ids);
        CHECK(task->sample(8, 43, 5, attn::Split::train).ids != a.ids);
        CHECK(task->sample(8, 42, 5, attn::Split::heldout).ids != a.ids);
        // Sequences within a batch differ too.
        std::set<std::vector<std::int32_t>> rows;
        for (int r = 0; r < 8; ++r) rows.insert(row_ids(a, r));
        CHECK(rows.size() > 4);
    }
}

TEST_CASE("tasks: descriptions and patterns are one short sentence each", "[tasks]") {
    for (attn::TaskKind kind : attn::all_tasks()) {
        const auto task = make(kind);
        INFO("task " << attn::task_name(kind));
        for (const std::string& s : {task->description(), task->pattern()}) {
            CHECK(s.size() > 20);
            CHECK(s.size() < 140);
            CHECK(s.back() == '.');
            CHECK(s.find(". ") == std::string::npos);
        }
    }
    CHECK_FALSE(make(attn::TaskKind::reverse)->causal());
    CHECK_FALSE(make(attn::TaskKind::sort)->causal());
    CHECK_FALSE(make(attn::TaskKind::coreference)->causal());
    for (auto kind : {attn::TaskKind::copy, attn::TaskKind::previous_token, attn::TaskKind::induction,
                      attn::TaskKind::recall, attn::TaskKind::brackets, attn::TaskKind::text})
        CHECK(make(kind)->causal());
}

TEST_CASE("tasks: the primary key scores exactly the rows with a target, and its columns determine the target",
          "[tasks]") {
    for (attn::TaskKind kind : attn::all_tasks()) {
        if (kind == attn::TaskKind::text) continue;  // text keys are generic, not an answer
        const auto task = make(kind);
        const attn::Vocabulary& vocab = task->vocabulary();
        INFO("task " << attn::task_name(kind));
        for (std::uint64_t index = 0; index < 8; ++index) {
            const attn::Batch b = task->sample(32, 9, index, index % 2 ? attn::Split::heldout : attn::Split::train);
            for (int r = 0; r < b.batch; ++r) {
                const auto ids = row_ids(b, r);
                const int length = b.real_length(r);
                const auto keys = task->answer_keys(ids, length);
                REQUIRE(!keys.empty());
                const attn::Matrix& key = keys[0].key;
                REQUIRE(key.rows() == b.length);
                REQUIRE(key.cols() == b.length);
                for (int i = 0; i < b.length; ++i) {
                    const int target = b.target(r, i);
                    REQUIRE(scored(key, i) == (target != attn::kNoTarget));
                    for (int j = 0; j < b.length; ++j) {
                        if (key(i, j) == 0) continue;
                        REQUIRE(key(i, j) == 1);
                        REQUIRE(j < length);
                        if (task->causal()) REQUIRE(j <= i);
                        if (kind == attn::TaskKind::brackets) {
                            const std::string open = vocab.text(ids[static_cast<std::size_t>(j)]);
                            const std::string close = vocab.text(target);
                            REQUIRE(((open == "(" && close == ")") || (open == "[" && close == "]") ||
                                     (open == "{" && close == "}")));
                        } else if (kind == attn::TaskKind::previous_token) {
                            REQUIRE(j == i - 1);
                            REQUIRE(ids[static_cast<std::size_t>(j)] == target);
                        } else {
                            REQUIRE(ids[static_cast<std::size_t>(j)] == target);
                        }
                    }
                }
            }
        }
    }
}

TEST_CASE("tasks: reverse targets are the input reversed, on the anti-diagonal", "[tasks]") {
    const auto task = attn::make_task(attn::TaskKind::reverse, with_length(6));
    CHECK(task->context() == 6);
    CHECK(task->vocabulary().size() == 11);
    const attn::Batch b = task->sample(50, 1, 0, attn::Split::train);
    for (int r = 0; r < b.batch; ++r)
        for (int i = 0; i < 6; ++i) REQUIRE(b.target(r, i) == b.id(r, 5 - i));
    const auto keys = task->answer_keys(row_ids(b, 0), 6);
    CHECK(keys[0].name == "anti-diagonal");
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) CHECK(keys[0].key(i, j) == (j == 5 - i ? 1.0f : 0.0f));
}

TEST_CASE("tasks: sort targets are the input in ascending order", "[tasks]") {
    const auto task = attn::make_task(attn::TaskKind::sort);
    CHECK(task->context() == 8);
    const attn::Batch b = task->sample(50, 1, 0, attn::Split::train);
    for (int r = 0; r < b.batch; ++r) {
        auto sorted = row_ids(b, r);
        std::sort(sorted.begin(), sorted.end());
        REQUIRE(row_targets(b, r) == sorted);
    }
    CHECK(task->answer_keys(row_ids(b, 0), 8)[0].name == "sorted-source");
    // A hand-worked key: "3 1 3" → sorted "1 3 3": row 0 → column 1, rows 1 and 2 → columns 0 and 2.
    const auto v = task->vocabulary().encode("3 1 3");
    const attn::Matrix key = task->answer_keys(v, 3)[0].key;
    attn::Matrix expected(3, 3);
    expected << 0, 1, 0, 1, 0, 1, 1, 0, 1;
    CHECK(key == expected);
}

TEST_CASE("tasks: copy repeats the digits after the bar and predicts each next one", "[tasks]") {
    const auto task = attn::make_task(attn::TaskKind::copy, with_length(5));
    const int n = 5;
    CHECK(task->context() == 2 * n + 1);
    const int bar = task->vocabulary().find("|");
    REQUIRE(bar > 0);
    const attn::Batch b = task->sample(50, 1, 0, attn::Split::train);
    for (int r = 0; r < b.batch; ++r) {
        REQUIRE(b.id(r, n) == bar);
        for (int k = 0; k < n; ++k) REQUIRE(b.id(r, n + 1 + k) == b.id(r, k));
        for (int p = 0; p <= 2 * n; ++p) {
            if (p >= n && p <= 2 * n - 1) REQUIRE(b.target(r, p) == b.id(r, p - n));
            else REQUIRE(b.target(r, p) == attn::kNoTarget);
        }
    }
    CHECK(task->answer_keys(row_ids(b, 0), 2 * n + 1)[0].name == "copy-source");
}

TEST_CASE("tasks: previous-token targets are the token before", "[tasks]") {
    const auto task = attn::make_task(attn::TaskKind::previous_token);
    CHECK(task->context() == 16);
    CHECK(task->vocabulary().size() == 17);
    CHECK(task->vocabulary().text(16) == "p");
    const attn::Batch b = task->sample(50, 1, 0, attn::Split::train);
    for (int r = 0; r < b.batch; ++r) {
        REQUIRE(b.target(r, 0) == attn::kNoTarget);
        for (int i = 1; i < 16; ++i) REQUIRE(b.target(r, i) == b.id(r, i - 1));
    }
}

TEST_CASE("tasks: induction repeats a segment of random length at random offsets", "[tasks]") {
    const auto task = attn::make_task(attn::TaskKind::induction);
    const int T = 32;
    CHECK(task->context() == T);
    CHECK(task->vocabulary().size() == 27);
    std::set<int> starts, repeats, lengths;
    for (std::uint64_t index = 0; index < 10; ++index) {
        const attn::Batch b = task->sample(32, 5, index, attn::Split::train);
        for (int r = 0; r < b.batch; ++r) {
            std::vector<int> with_target;
            for (int p = 0; p < T; ++p)
                if (b.target(r, p) != attn::kNoTarget) with_target.push_back(p);
            REQUIRE(!with_target.empty());
            const int c = with_target.front();
            const int L = static_cast<int>(with_target.size()) + 1;
            REQUIRE(with_target.back() == c + L - 2);  // contiguous
            REQUIRE(L >= 3);
            REQUIRE(L <= std::min(10, T / 3));
            REQUIRE(c + L <= T);
            int source = -1;
            for (int s = 0; s + L <= c && source < 0; ++s) {
                bool same = true;
                for (int k = 0; k < L; ++k) same = same && b.id(r, s + k) == b.id(r, c + k);
                if (same) source = s;
            }
            REQUIRE(source >= 0);
            for (int p : with_target) REQUIRE(b.target(r, p) == b.id(r, p + 1));
            starts.insert(source);
            repeats.insert(c);
            lengths.insert(L);
        }
    }
    // The trap: a fixed offset or length lets layer 0 solve it by position.
    CHECK(starts.size() >= 10);
    CHECK(repeats.size() >= 10);
    CHECK(lengths.size() >= 6);

    const attn::Batch b = task->sample(1, 5, 0, attn::Split::train);
    const auto keys = task->answer_keys(row_ids(b, 0), T);
    REQUIRE(keys.size() == 2);
    CHECK(keys[0].name == "induction");
    CHECK(keys[1].name == "previous-token");
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) CHECK(keys[1].key(i, j) == (i >= 1 && j == i - 1 ? 1.0f : 0.0f));
}

TEST_CASE("tasks: induction keys on a hand-made sequence", "[tasks]") {
    const auto task = attn::make_task(attn::TaskKind::induction, with_length(12));
    // x a b c d y a b c d z w: the segment "a b c d" at 1 repeats at 6.
    const auto ids = task->vocabulary().encode("x a b c d y a b c d z w");
    REQUIRE(ids.size() == 12);
    const attn::Matrix key = task->answer_keys(ids, 12)[0].key;
    for (int i = 0; i < 12; ++i)
        for (int j = 0; j < 12; ++j) {
            const bool expected = i >= 6 && i <= 8 && j == i - 5 + 1;  // 6→2, 7→3, 8→4
            CHECK(key(i, j) == (expected ? 1.0f : 0.0f));
        }
}

TEST_CASE("tasks: recall asks for the value of one of the distinct keys", "[tasks]") {
    const auto task = attn::make_task(attn::TaskKind::recall, with_length(5));
    const attn::Vocabulary& v = task->vocabulary();
    const int n = 5;
    CHECK(task->context() == 2 * n + 2);
    const attn::Batch b = task->sample(100, 1, 0, attn::Split::train);
    std::set<int> queried;
    for (int r = 0; r < b.batch; ++r) {
        std::map<std::string, int> value_of;
        for (int k = 0; k < n; ++k) {
            const std::string key = v.text(b.id(r, 2 * k));
            const std::string value = v.text(b.id(r, 2 * k + 1));
            REQUIRE(key.size() == 1);
            REQUIRE(key[0] >= 'a');
            REQUIRE(key[0] <= 'h');
            REQUIRE(value.size() == 1);
            REQUIRE(std::isdigit(static_cast<unsigned char>(value[0])));
            REQUIRE(value_of.emplace(key, b.id(r, 2 * k + 1)).second);  // keys distinct
        }
        REQUIRE(v.text(b.id(r, 2 * n)) == "?");
        const std::string query = v.text(b.id(r, 2 * n + 1));
        REQUIRE(value_of.count(query) == 1);
        for (int p = 0; p < 2 * n + 1; ++p) REQUIRE(b.target(r, p) == attn::kNoTarget);
        REQUIRE(b.target(r, 2 * n + 1) == value_of[query]);
        for (int k = 0; k < n; ++k)
            if (v.text(b.id(r, 2 * k)) == query) queried.insert(k);
    }
    CHECK(queried.size() == static_cast<std::size_t>(n));  // every slot gets asked
}

TEST_CASE("tasks: brackets are well nested, depth at most 4, and blanks target the right close", "[tasks]") {
    const auto task = attn::make_task(attn::TaskKind::brackets, with_length(20));
    const attn::Vocabulary& v = task->vocabulary();
    CHECK(v.tokens() == std::vector<std::string>{"[PAD]", "(", "[", "{", ")", "]", "}", "_"});
    const std::map<std::string, std::string> closer = {{"(", ")"}, {"[", "]"}, {"{", "}"}};
    int deepest = 0;
    const attn::Batch b = task->sample(100, 1, 0, attn::Split::train);
    for (int r = 0; r < b.batch; ++r) {
        std::vector<std::string> open;
        for (int t = 0; t < 20; ++t) {
            const std::string tok = v.text(b.id(r, t));
            if (closer.count(tok)) {
                open.push_back(tok);
                deepest = std::max(deepest, static_cast<int>(open.size()));
                REQUIRE(open.size() <= 4);
                REQUIRE(b.target(r, t) == attn::kNoTarget);
            } else {
                REQUIRE(tok == "_");
                REQUIRE(!open.empty());
                REQUIRE(v.text(b.target(r, t)) == closer.at(open.back()));
                open.pop_back();
            }
        }
        REQUIRE(open.empty());
    }
    CHECK(deepest == 4);
    // Hand-worked key: ( [ _ _ → row 2 → column 1, row 3 → column 0.
    const auto ids = v.encode("( [ _ _");
    attn::Matrix expected = attn::Matrix::Zero(4, 4);
    expected(2, 1) = 1;
    expected(3, 0) = 1;
    CHECK(task->answer_keys(ids, 4)[0].key == expected);
}

TEST_CASE("tasks: coreference targets the noun its adjective fits, in either word order", "[tasks]") {
    const auto task = attn::make_task(attn::TaskKind::coreference);
    const attn::Vocabulary& v = task->vocabulary();
    CHECK(task->context() == 16);
    CHECK(v.text(1) == "[UNK]");
    int animate_meant = 0, obstacle_meant = 0, obstacle_first = 0, animate_first = 0;
    std::set<std::string> templates;
    for (std::uint64_t index = 0; index < 10; ++index) {
        const attn::Batch b = task->sample(32, 1, index, attn::Split::train);
        REQUIRE(b.lengths.size() == 32);
        for (int r = 0; r < b.batch; ++r) {
            const auto w = words(*task, b, r);
            REQUIRE(std::count(w.begin(), w.end(), "[UNK]") == 0);  // the grammar needs no UNK
            REQUIRE(std::count(w.begin(), w.end(), "it") == 1);
            REQUIRE(w.back() == ".");
            std::string animate, obstacle, adjective;
            int animate_at = -1, obstacle_at = -1;
            for (std::size_t i = 0; i < w.size(); ++i) {
                if (kAnimates.count(w[i])) animate = w[i], animate_at = static_cast<int>(i);
                if (kObstacles.count(w[i])) obstacle = w[i], obstacle_at = static_cast<int>(i);
                if (i > 0 && w[i - 1] == "too") adjective = w[i];
            }
            REQUIRE(!animate.empty());
            REQUIRE(!obstacle.empty());
            REQUIRE((kAnimateAdjectives.count(adjective) + kObstacleAdjectives.count(adjective)) == 1);
            const std::string meant = kAnimateAdjectives.count(adjective) ? animate : obstacle;
            (meant == animate ? animate_meant : obstacle_meant)++;
            (animate_at < obstacle_at ? animate_first : obstacle_first)++;
            for (int t = 0; t < b.length; ++t) {
                if (t < b.real_length(r) && w[static_cast<std::size_t>(t)] == "it") REQUIRE(v.text(b.target(r, t)) == meant);
                else REQUIRE(b.target(r, t) == attn::kNoTarget);
            }
            std::string shape;
            for (const auto& x : w)
                if (!kAnimates.count(x) && !kObstacles.count(x) && !kAnimateAdjectives.count(x) &&
                    !kObstacleAdjectives.count(x) && !kSurface.count(x))
                    shape += x + " ";
            templates.insert(shape);
        }
    }
    CHECK(templates.size() >= 3);
    // Neither position nor a majority guess gives the answer.
    CHECK(animate_meant > 100);
    CHECK(obstacle_meant > 100);
    CHECK(animate_first > 60);
    CHECK(obstacle_first > 60);
}

TEST_CASE("tasks: coreference held-out sentences never occur in training", "[tasks]") {
    const auto task = attn::make_task(attn::TaskKind::coreference);
    std::set<std::string> train, heldout;
    for (std::uint64_t index = 0; index < 250; ++index) {
        const attn::Batch b = task->sample(32, 3, index, attn::Split::train);
        for (int r = 0; r < b.batch; ++r) train.insert(tuple_of(words(*task, b, r)));
    }
    for (std::uint64_t index = 0; index < 60; ++index) {
        const attn::Batch b = task->sample(32, 3, index, attn::Split::heldout);
        for (int r = 0; r < b.batch; ++r) heldout.insert(tuple_of(words(*task, b, r)));
    }
    std::vector<std::string> shared;
    std::set_intersection(train.begin(), train.end(), heldout.begin(), heldout.end(), std::back_inserter(shared));
    CHECK(shared.empty());
    // The split is about 20% of the tuples (3,936 in all), and sampling covers most of each part.
    CHECK(train.size() > 2500);
    CHECK(heldout.size() > 500);
    CHECK(heldout.size() < 1000);
}

TEST_CASE("tasks: the playground's sentences encode without UNK, others with it", "[tasks]") {
    const auto task = attn::make_task(attn::TaskKind::coreference);
    const attn::Vocabulary& v = task->vocabulary();
    for (const char* s : {"The animal didn't cross the street because it was too tired.",
                          "The animal didn't cross the street because it was too wide."}) {
        const auto ids = v.encode(s);
        CHECK(ids.size() == 12);
        CHECK(std::find(ids.begin(), ids.end(), 1) == ids.end());
    }
    const auto ids = v.encode("The zebra didn't cross the street");
    CHECK(ids[1] == 1);
    CHECK(v.text(ids[1]) == "[UNK]");

    // The probe is the default sentence: "it" (position 7) targets "animal" (position 1).
    const attn::Example probe = task->probe();
    CHECK(probe.length == 12);
    CHECK(probe.ids.size() == 16);
    CHECK(v.text(probe.ids[7]) == "it");
    CHECK(v.text(probe.targets[7]) == "animal");
    const auto keys = task->answer_keys(probe.ids, probe.length);
    CHECK(keys[0].name == "antecedent");
    CHECK(keys[0].key(7, 1) == 1);
    CHECK(keys[0].key.sum() == 1);
    // The same sentence ending in "wide" means the street (position 5).
    const auto wide = v.encode("The animal didn't cross the street because it was too wide.");
    const auto wide_key = task->answer_keys(wide, 12)[0].key;
    CHECK(wide_key(7, 5) == 1);
    CHECK(wide_key.sum() == 1);
}

TEST_CASE("tasks: text vocabulary is PAD, UNK, then words by count with ties in first-seen order", "[tasks]") {
    // counts: the 3, sat 2, . 2, cat 1, on 1, mat 1, dog 1 (repeated 5 times, so the ranks stay).
    std::string corpus;
    for (int i = 0; i < 5; ++i) corpus += "The cat sat on the mat. The dog sat. ";
    attn::TaskOptions o;
    o.corpus = corpus;
    o.length = 4;
    o.max_vocab = 4;
    const auto task = attn::make_task(attn::TaskKind::text, o);
    const attn::Vocabulary& v = task->vocabulary();
    CHECK(v.tokens() == std::vector<std::string>{"[PAD]", "[UNK]", "the", "sat", ".", "cat"});
    CHECK(v.encode("the mat") == std::vector<std::int32_t>{2, 1});
    CHECK(task->context() == 4);

    // Windows come from their split: train from the first 90% of the words, held out from the rest.
    const std::vector<std::int32_t> all = v.encode(corpus);
    REQUIRE(all.size() == 55);
    const int train_end = 55 * 9 / 10;  // 49
    auto find_window = [&](const std::vector<std::int32_t>& ids, const std::vector<std::int32_t>& targets, int begin,
                           int end) {
        for (int s = begin; s + 5 <= end; ++s) {
            if (std::equal(ids.begin(), ids.end(), all.begin() + s) &&
                std::equal(targets.begin(), targets.end(), all.begin() + s + 1))
                return true;
        }
        return false;
    };
    for (std::uint64_t index = 0; index < 20; ++index) {
        const attn::Batch tr = task->sample(4, 1, index, attn::Split::train);
        const attn::Batch he = task->sample(4, 1, index, attn::Split::heldout);
        for (int r = 0; r < 4; ++r) {
            REQUIRE(find_window(row_ids(tr, r), row_targets(tr, r), 0, train_end));
            REQUIRE(find_window(row_ids(he, r), row_targets(he, r), train_end, 55));
        }
    }
    const attn::Example probe = task->probe();
    CHECK(probe.length == 4);
    CHECK(find_window(probe.ids, probe.targets, train_end, 55));
    const auto keys = task->answer_keys(probe.ids, 4);
    REQUIRE(keys.size() == 4);
    CHECK(keys[0].name == "previous-token");
}

TEST_CASE("tasks: probes are fixed, valid and show the pattern", "[tasks]") {
    for (attn::TaskKind kind : attn::all_tasks()) {
        const auto task = make(kind);
        INFO("task " << attn::task_name(kind));
        const attn::Example a = task->probe();
        const attn::Example b = make(kind)->probe();
        CHECK(a.ids == b.ids);
        CHECK(a.targets == b.targets);
        REQUIRE(a.ids.size() == static_cast<std::size_t>(task->context()));
        REQUIRE(a.targets.size() == a.ids.size());
        REQUIRE(a.length >= 1);
        REQUIRE(a.length <= task->context());
        for (std::size_t t = 0; t < a.ids.size(); ++t) {
            REQUIRE(a.ids[t] >= 0);
            REQUIRE(a.ids[t] < task->vocabulary().size());
            REQUIRE(a.targets[t] >= attn::kNoTarget);
            REQUIRE(a.targets[t] < task->vocabulary().size());
        }
        const auto keys = task->answer_keys(a.ids, a.length);
        CHECK(keys[0].key.sum() > 0);
    }
    // The induction probe has the longest segment, 10 letters at T = 32.
    const attn::Example p = make(attn::TaskKind::induction)->probe();
    CHECK(std::count_if(p.targets.begin(), p.targets.end(), [](int t) { return t != attn::kNoTarget; }) == 9);
}

TEST_CASE("tasks: answer_key_score on hand-worked weights", "[tasks]") {
    attn::Matrix w(3, 3);
    w << 1.0f, 0.0f, 0.0f,  //
        0.25f, 0.75f, 0.0f,  //
        0.2f, 0.3f, 0.5f;
    attn::Matrix key = attn::Matrix::Zero(3, 3);
    key(1, 0) = 1;  // row 1 puts 0.25 there
    key(2, 0) = 1;  // row 2 puts 0.2 + 0.5 = 0.7 there
    key(2, 2) = 1;
    CHECK(attn::answer_key_score(w, key) == Approx((0.25 + 0.7) / 2));
    CHECK(attn::answer_key_score(w, attn::Matrix::Zero(3, 3)) == 0.0);
    CHECK(attn::answer_key_score(w, attn::Matrix::Identity(3, 3)) == Approx((1.0 + 0.75 + 0.5) / 3));
    try {
        attn::answer_key_score(w, attn::Matrix::Zero(4, 4));
        FAIL("no error");
    } catch (const attn::Error& e) {
        CHECK_THAT(e.what(), Contains("3x3") && Contains("4x4"));
    }
}

TEST_CASE("tasks: standard_keys on a hand-worked sequence", "[tasks]") {
    // ids 5 7 5 7 9 and one padding position; length 5.
    const std::vector<std::int32_t> ids = {5, 7, 5, 7, 9, 0};
    auto expect = [](std::vector<std::pair<int, int>> ones) {
        attn::Matrix m = attn::Matrix::Zero(6, 6);
        for (auto [i, j] : ones) m(i, j) = 1;
        return m;
    };
    const auto causal = attn::standard_keys(ids, 5, true);
    REQUIRE(causal.size() == 4);
    CHECK(causal[0].name == "previous-token");
    CHECK(causal[0].key == expect({{1, 0}, {2, 1}, {3, 2}, {4, 3}}));
    CHECK(causal[1].name == "first-token");
    CHECK(causal[1].key == expect({{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}}));
    CHECK(causal[2].name == "same-token");
    CHECK(causal[2].key == expect({{2, 0}, {3, 1}}));
    CHECK(causal[3].name == "induction");
    CHECK(causal[3].key == expect({{2, 1}, {3, 2}}));
    const auto both = attn::standard_keys(ids, 5, false);
    CHECK(both[2].key == expect({{0, 2}, {1, 3}, {2, 0}, {3, 1}}));
    CHECK(both[3].key == expect({{2, 1}, {3, 2}}));
    CHECK_THROWS_AS(attn::standard_keys(ids, 7, true), attn::Error);
    CHECK_THROWS_AS(attn::standard_keys(ids, -1, true), attn::Error);
}

TEST_CASE("tasks: the vocabulary checks its tokens and ids", "[tasks]") {
    CHECK_THROWS_AS(attn::Vocabulary({"a", "b"}), attn::Error);
    CHECK_THROWS_AS(attn::Vocabulary(std::vector<std::string>{}), attn::Error);
    try {
        attn::Vocabulary({"[PAD]", "a", "a"});
        FAIL("no error");
    } catch (const attn::Error& e) {
        CHECK_THAT(e.what(), Contains("duplicate") && Contains("'a'"));
    }
    const attn::Vocabulary v({"[PAD]", "a", "b"});
    CHECK(v.find("b") == 2);
    CHECK(v.find("c") == -1);
    CHECK(v.encode("A b") == std::vector<std::int32_t>{1, 2});
    CHECK_THROWS_AS(v.text(3), attn::Error);
    CHECK_THROWS_AS(v.text(-1), attn::Error);
    try {
        v.encode("a zebra");
        FAIL("no error");
    } catch (const attn::Error& e) {
        CHECK_THAT(e.what(), Contains("'zebra'"));
    }
}

TEST_CASE("tasks: bad options give an error naming the option and its range", "[tasks]") {
    struct Case {
        attn::TaskKind kind;
        int length;
        std::vector<std::string> words;
    };
    const std::vector<Case> cases = {
        {attn::TaskKind::reverse, 1, {"reverse", "length", "2..64"}},
        {attn::TaskKind::reverse, 65, {"reverse", "length", "2..64"}},
        {attn::TaskKind::sort, -3, {"sort", "length", "2..64"}},
        {attn::TaskKind::copy, 65, {"copy", "length", "2..64"}},
        {attn::TaskKind::previous_token, 1, {"previous-token", "length", "2..256"}},
        {attn::TaskKind::previous_token, 257, {"previous-token", "length", "2..256"}},
        {attn::TaskKind::induction, 7, {"induction", "length", "8..256"}},
        {attn::TaskKind::induction, 300, {"induction", "length", "8..256"}},
        {attn::TaskKind::recall, 9, {"recall", "length", "1..8"}},
        {attn::TaskKind::recall, -1, {"recall", "length", "1..8"}},
        {attn::TaskKind::brackets, 2, {"brackets", "length", "4..128"}},
        {attn::TaskKind::brackets, 130, {"brackets", "length", "4..128"}},
        {attn::TaskKind::brackets, 9, {"brackets", "length", "even"}},
        {attn::TaskKind::coreference, 15, {"coreference", "length", "16..128"}},
        {attn::TaskKind::coreference, 129, {"coreference", "length", "16..128"}},
    };
    for (const Case& c : cases) {
        INFO(attn::task_name(c.kind) << " length " << c.length);
        const std::string message = error_of(c.kind, with_length(c.length));
        for (const auto& w : c.words) CHECK_THAT(message, Contains(w));
    }
    // The edges of the ranges are allowed.
    for (int n : {2, 64}) CHECK(attn::make_task(attn::TaskKind::reverse, with_length(n))->context() == n);
    CHECK(attn::make_task(attn::TaskKind::induction, with_length(8))->sample(4, 1, 0, attn::Split::train).length == 8);
    CHECK(attn::make_task(attn::TaskKind::induction, with_length(256))->context() == 256);
    const auto padded = attn::make_task(attn::TaskKind::coreference, with_length(40));
    CHECK(padded->context() == 40);
    check_valid(*padded, padded->sample(8, 1, 0, attn::Split::train), 8);

    attn::TaskOptions text;
    CHECK_THAT(error_of(attn::TaskKind::text, text), Contains("text") && Contains("corpus") && Contains("empty"));
    text.corpus = "too short a corpus";
    CHECK_THAT(error_of(attn::TaskKind::text, text), Contains("corpus") && Contains("4 words") && Contains("needs at least"));
    text.corpus = "bad \xFF bytes";
    CHECK_THAT(error_of(attn::TaskKind::text, text), Contains("corpus") && Contains("UTF-8"));
    text.corpus = text_corpus();
    text.max_vocab = 1;
    CHECK_THAT(error_of(attn::TaskKind::text, text), Contains("max_vocab") && Contains("2..49998"));  // 50000 less [PAD], [UNK]
    text.max_vocab = 50001;
    CHECK_THAT(error_of(attn::TaskKind::text, text), Contains("max_vocab"));
    text.max_vocab = 2000;
    text.length = 3;
    CHECK_THAT(error_of(attn::TaskKind::text, text), Contains("length") && Contains("4..256"));

    const auto task = make(attn::TaskKind::reverse);
    try {
        task->sample(0, 1, 0, attn::Split::train);
        FAIL("no error");
    } catch (const attn::Error& e) {
        CHECK_THAT(e.what(), Contains("batch") && Contains("1..65536"));
    }
    CHECK_THROWS_AS(task->answer_keys({1, 2, 3}, 4), attn::Error);
}

TEST_CASE("tasks: long induction sequences keep the planted repeat the only one", "[tasks]") {
    // At T = 256 random filler would repeat three-letter runs by chance; the
    // generator must avoid that so the key (found from the ids) matches the targets.
    const auto task = attn::make_task(attn::TaskKind::induction, with_length(256));
    const attn::Batch b = task->sample(8, 2, 0, attn::Split::train);
    for (int r = 0; r < b.batch; ++r) {
        const auto ids = row_ids(b, r);
        const attn::Matrix key = task->answer_keys(ids, 256)[0].key;
        for (int i = 0; i < 256; ++i) REQUIRE(scored(key, i) == (b.target(r, i) != attn::kNoTarget));
    }
}

TEST_CASE("text: a corpus above the sentence byte limit is read whole, in pieces", "[tasks]") {
    std::string corpus;
    while (corpus.size() < 3 * attn::kMaxSentenceBytes) corpus += "the cat sat on the mat . a dog ran . ";
    attn::TaskOptions o;
    o.corpus = corpus;
    o.length = 8;
    const auto task = attn::make_task(attn::TaskKind::text, o);
    const auto& v = task->vocabulary().tokens();
    CHECK(v.size() == 2 + 9);  // [PAD] [UNK] the cat sat on mat . a dog ran
    CHECK(task->vocabulary().find("ran") >= 2);
    const attn::Batch b = task->sample(4, 1, 0, attn::Split::heldout);
    for (std::int32_t id : b.ids) CHECK(id >= 2);  // no [UNK]: no word was cut in two
}

TEST_CASE("tasks: coreference grammar accepts the generator's sentences and rejects others", "[tasks]") {
    const auto task = attn::make_task(attn::TaskKind::coreference);
    const attn::Vocabulary& v = task->vocabulary();
    auto grammar = [&](const char* s) {
        const auto ids = v.encode(s);
        return task->grammar(ids, static_cast<int>(ids.size()));
    };
    // every template, a one-word and a two-word negation, either noun meant
    CHECK(grammar("The animal didn't cross the street because it was too tired.") == 1);
    CHECK(grammar("The dog did not climb the wall because it was too high.") == 1);
    CHECK(grammar("The river stopped the horse because it was too deep.") == 1);
    CHECK(grammar("The cat looked at the fence but it was too sharp to jump.") == 1);
    CHECK(grammar("The hill was in front of the boy and it was too steep to climb.") == 1);
    // the sentences: unknown words, and known words in an order the grammar never makes
    CHECK(grammar("The trophy didn't fit in the suitcase because it was too big.") == 0);
    CHECK(grammar("The cat chased the dog because it was hungry.") == 0);
    CHECK(grammar("The dog didn't cross the cat because it was too tired.") == 0);    // an animal as the obstacle
    CHECK(grammar("The dog didn't climb the river because it was too deep.") == 0);   // not this obstacle's verb
    CHECK(grammar("The dog didn't cross the road because it was too deep.") == 0);    // not this obstacle's adjective
    CHECK(grammar("The dog didn't cross the road because it was too tired") == 0);    // no full stop
    CHECK(grammar("The dog didn't cross the road because it was too tired. .") == 0); // a word too many
    // a length shorter than the ids reads only that prefix
    const auto ids = v.encode("The animal didn't cross the street because it was too tired. the");
    CHECK(task->grammar(ids, 12) == 1);
    CHECK(task->grammar(ids, 13) == 0);
    // tasks without a grammar say so
    CHECK(attn::make_task(attn::TaskKind::copy)->grammar({2, 3}, 2) == -1);
}

TEST_CASE("tasks: every sentence the coreference generator makes is in its grammar", "[tasks]") {
    const auto task = attn::make_task(attn::TaskKind::coreference);
    for (const attn::Split split : {attn::Split::train, attn::Split::heldout}) {
        const attn::Batch b = task->sample(64, 7, 3, split);
        for (int i = 0; i < b.batch; ++i) {
            const std::size_t T = static_cast<std::size_t>(b.length);
            const std::vector<std::int32_t> ids(b.ids.begin() + static_cast<std::ptrdiff_t>(i * T),
                                                b.ids.begin() + static_cast<std::ptrdiff_t>((i + 1) * T));
            CHECK(task->grammar(ids, b.lengths[static_cast<std::size_t>(i)]) == 1);
        }
    }
}

TEST_CASE("text: max_vocab takes exactly the values whose vocabulary fits a model", "[tasks]") {
    // 50,000 distinct words (four letters each), each once: every max_vocab keeps that many
    std::string corpus;
    for (int w = 0; w < 50000; ++w) {
        for (int i = 0, v = w; i < 4; ++i, v /= 26) corpus += static_cast<char>('a' + v % 26);
        corpus += ' ';
    }
    attn::TaskOptions o;
    o.corpus = corpus;
    o.length = 4;
    o.max_vocab = attn::kMaxTextVocab;  // the largest accepted: [PAD], [UNK] and 49,998 words
    REQUIRE(attn::kMaxTextVocab == attn::kMaxModelVocab - 2);
    const auto task = attn::make_task(attn::TaskKind::text, o);
    CHECK(task->vocabulary().size() == attn::kMaxModelVocab);
    attn::TrainConfig cfg;
    cfg.task = attn::TaskKind::text;
    cfg.task_options = o;
    cfg.model.d_model = 4;
    cfg.model.heads = 1;
    cfg.batch = 2;
    attn::Trainer trainer(cfg);  // the model of that vocabulary is valid and trains
    CHECK(trainer.model().config().vocab == attn::kMaxModelVocab);
    CHECK(std::isfinite(trainer.step().loss));
    for (int above : {attn::kMaxTextVocab + 1, attn::kMaxTextVocab + 2}) {  // 49,999 and 50,000 were accepted, then failed
        o.max_vocab = above;
        CHECK_THAT(error_of(attn::TaskKind::text, o),
                   Contains("max_vocab = " + std::to_string(above)) && Contains("[PAD] and [UNK]") && Contains("lower max_vocab"));
    }
}
