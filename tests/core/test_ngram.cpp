// Tests of src/train/ngram.hpp: the split is the text task's; the baselines on
// a hand-worked corpus; against a separately written reference on a seeded
// corpus; a model's perplexity counts every held-out target once.

#include "train/ngram.hpp"
#include "train/tasks.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

namespace {

std::string repeat(const std::string& text, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += text;
    return out;
}

/// A seeded corpus of lowercase words with some structure (a word often
/// repeats the one two back), so bigram counts are far from uniform.
std::string seeded_corpus(int words, int kinds, std::uint64_t seed) {
    std::vector<int> w;
    std::uint64_t s = seed;
    const auto next = [&]() {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<int>((s >> 33) % 1000);
    };
    std::ostringstream o;
    for (int i = 0; i < words; ++i) {
        int x = next() % kinds;
        if (i >= 2 && next() < 300) x = w[static_cast<std::size_t>(i - 2)];
        if (i >= 1 && next() < 200) x = (w[static_cast<std::size_t>(i - 1)] * 7 + 3) % kinds;
        w.push_back(x);
        o << "w" << char('a' + x % 26) << char('a' + x / 26) << (i % 13 == 12 ? "\n" : " ");
    }
    return o.str();
}

struct Reference {
    double unigram, bigram, kn, unknown;
    long long targets;
};

/// The same definitions as ngram.hpp, written over word strings with std::map,
/// the vocabulary rebuilt here (most frequent first, ties by first occurrence).
Reference reference(const std::string& corpus, int max_vocab) {
    std::vector<std::string> tokens;
    std::istringstream in(corpus);
    for (std::string t; in >> t;) tokens.push_back(t);
    std::map<std::string, long long> count, first;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (!first.count(tokens[i])) first[tokens[i]] = static_cast<long long>(i);
        ++count[tokens[i]];
    }
    std::vector<std::string> order;
    for (const auto& [t, c] : count) order.push_back(t);
    std::sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
        return count[a] != count[b] ? count[a] > count[b] : first[a] < first[b];
    });
    std::set<std::string> kept(order.begin(), order.begin() + std::min<std::size_t>(order.size(), static_cast<std::size_t>(max_vocab)));
    for (auto& t : tokens)
        if (!kept.count(t)) t = "[UNK]";
    const double V = static_cast<double>(kept.size()) + 1;  // + [UNK]
    const std::size_t E = tokens.size() * 9 / 10;
    std::map<std::string, double> c1;
    std::map<std::pair<std::string, std::string>, double> c2;
    std::map<std::string, double> hist, after, before;
    for (std::size_t i = 0; i < E; ++i) {
        c1[tokens[i]] += 1;
        if (i > 0) {
            hist[tokens[i - 1]] += 1;
            c2[{tokens[i - 1], tokens[i]}] += 1;
        }
    }
    for (const auto& [pair, c] : c2) {
        after[pair.first] += 1;
        before[pair.second] += 1;
    }
    Reference r{0, 0, 0, 0, 0};
    for (std::size_t i = E + 1; i < tokens.size(); ++i) {
        const std::string &v = tokens[i - 1], &w = tokens[i];
        const double cvw = c2.count({v, w}) ? c2[{v, w}] : 0.0;
        const double cv = hist.count(v) ? hist[v] : 0.0;
        r.unigram += -std::log(((c1.count(w) ? c1[w] : 0.0) + 1) / (static_cast<double>(E) + V));
        r.bigram += -std::log((cvw + 1) / (cv + V));
        const double q = ((before.count(w) ? before[w] : 0.0) + 1) / (static_cast<double>(c2.size()) + V);
        r.kn += -std::log(cv > 0 ? std::max(cvw - 0.75, 0.0) / cv + 0.75 * after[v] / cv * q : q);
        r.unknown += w == "[UNK]";
        ++r.targets;
    }
    const double n = static_cast<double>(r.targets);
    return {std::exp(r.unigram / n), std::exp(r.bigram / n), std::exp(r.kn / n), r.unknown / n, r.targets};
}

}  // namespace

TEST_CASE("ngram: the split is the text task's vocabulary, ids and 90/10 point", "[ngram]") {
    const std::string corpus = seeded_corpus(2000, 60, 7);
    attn::TaskOptions o;
    o.corpus = corpus;
    o.max_vocab = 40;
    const auto task = attn::make_task(attn::TaskKind::text, o);
    const attn::TextSplit split = attn::split_text(corpus, 40);
    CHECK(split.vocabulary == task->vocabulary().tokens());
    CHECK(split.words.size() == 2000);
    CHECK(split.train_end == 1800);
    // the task's probe is the first window of its held-out text
    const attn::Example probe = task->probe();
    for (int t = 0; t < probe.length; ++t) {
        CHECK(probe.ids[static_cast<std::size_t>(t)] == split.words[split.train_end + static_cast<std::size_t>(t)]);
        CHECK(probe.targets[static_cast<std::size_t>(t)] == split.words[split.train_end + static_cast<std::size_t>(t) + 1]);
    }
}

TEST_CASE("ngram: baselines on a hand-worked corpus", "[ngram]") {
    // "a b" 25 times: 50 words, E = 45; the training split holds 23 a, 22 b,
    // 22 bigrams (a b) and 22 (b a); the held-out targets are a b a b after b a b a.
    const attn::TextSplit split = attn::split_text(repeat("a b ", 25), 2000, 4);
    REQUIRE(split.vocabulary == std::vector<std::string>{"[PAD]", "[UNK]", "a", "b"});
    const attn::BaselineResult r = attn::ngram_baselines(split);
    CHECK(r.vocabulary == 3);
    CHECK(r.train_words == 45);
    CHECK(r.targets == 4);
    CHECK(r.unknown_share == 0);
    // p(a) = 24/48, p(b) = 23/48
    CHECK_THAT(r.unigram, WithinRel(1.0 / std::sqrt(0.5 * 23.0 / 48.0), 1e-12));
    // p(a | b) = p(b | a) = (22 + 1) / (22 + 3)
    CHECK_THAT(r.bigram, WithinRel(25.0 / 23.0, 1e-12));
    // (22 − 0.75)/22 + 0.75 · 1/22 · q, q = (1 + 1)/(2 + 3)
    CHECK_THAT(r.bigram_kn, WithinRel(22.0 / 21.55, 1e-12));
}

TEST_CASE("ngram: baselines match a separately written reference, with unknown words", "[ngram]") {
    for (const int max_vocab : {2000, 150, 20}) {
        INFO("max_vocab " << max_vocab);
        const std::string corpus = seeded_corpus(6000, 300, 11);
        const attn::BaselineResult r = attn::ngram_baselines(attn::split_text(corpus, max_vocab));
        const Reference ref = reference(corpus, max_vocab);
        CHECK(r.targets == ref.targets);
        CHECK_THAT(r.unknown_share, WithinRel(ref.unknown, 1e-12));
        CHECK_THAT(r.unigram, WithinRel(ref.unigram, 1e-9));
        CHECK_THAT(r.bigram, WithinRel(ref.bigram, 1e-9));
        CHECK_THAT(r.bigram_kn, WithinRel(ref.kn, 1e-9));
        if (max_vocab == 20) CHECK(r.unknown_share > 0.5);
        // Kneser-Ney uses the structure; add-one over a large vocabulary does not
        CHECK(r.bigram_kn < r.unigram);
    }
}

TEST_CASE("ngram: a model's perplexity covers every held-out target once", "[ngram]") {
    const attn::TextSplit split = attn::split_text(repeat("a b ", 25), 2000, 4);
    attn::ModelConfig c;
    c.vocab = 4;
    c.context = 4;
    c.d_model = 8;
    c.heads = 2;
    c.causal = true;
    // all-zero weights: uniform logits over the 4 ids, perplexity exactly 4
    const attn::Parameters zeros(c);
    for (const int T : {4, 3, 2, 1}) {
        INFO("windows of " << T);
        const attn::ModelPerplexity m = attn::model_perplexity(c, zeros, split, T);
        CHECK(m.targets == 4);
        CHECK_THAT(m.perplexity, WithinRel(4.0, 1e-6));
    }
    attn::ModelConfig bidirectional = c;
    bidirectional.causal = false;
    CHECK_THROWS_WITH(attn::model_perplexity(bidirectional, attn::Parameters(bidirectional), split),
                      Contains("not causal"));
    attn::ModelConfig other = c;
    other.vocab = 5;
    CHECK_THROWS_WITH(attn::model_perplexity(other, attn::Parameters(other), split), Contains("vocabulary of 5"));
    CHECK_THROWS_WITH(attn::model_perplexity(c, zeros, split, 5), Contains("context of 4"));
}

TEST_CASE("ngram: bad corpora fail with the text task's messages", "[ngram]") {
    CHECK_THROWS_WITH(attn::split_text(""), Contains("corpus is empty"));
    CHECK_THROWS_WITH(attn::split_text("a b c"), Contains("needs at least"));
    CHECK_THROWS_WITH(attn::split_text_with_vocabulary("a b c d", {"a", "b"}), Contains("[PAD] and [UNK]"));
    CHECK_THROWS_WITH(attn::split_text_with_vocabulary("a b", {"[PAD]", "[UNK]", "a"}), Contains("fewer than 4"));
}

TEST_CASE("ngram: another text read with a model's vocabulary keeps its ids, other words are unknown", "[ngram]") {
    const std::vector<std::string> vocab = {"[PAD]", "[UNK]", "b", "a"};
    const attn::TextSplit s = attn::split_text_with_vocabulary("a b c a b c a b c A", vocab);
    CHECK(s.vocabulary == vocab);
    CHECK(s.words == std::vector<std::int32_t>{3, 2, 1, 3, 2, 1, 3, 2, 1, 3});  // lower-cased like the task
    CHECK(s.train_end == 9);
    // on a text whose own vocabulary is the same, it is split_text
    const std::string corpus = seeded_corpus(3000, 50, 5);
    const attn::TextSplit own = attn::split_text(corpus, 30);
    const attn::TextSplit same = attn::split_text_with_vocabulary(corpus, own.vocabulary);
    CHECK(same.words == own.words);
    CHECK(same.train_end == own.train_end);
}
