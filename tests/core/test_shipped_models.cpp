// The trained models shipped with the playground (models/*.safetensors, docs/training.md
// "The shipped models"): they load, and they do what docs/training.md says they do.
//   coreference: on 200 fresh held-out sentences of the grammar (fixed seed),
//     one head's strongest key from "it" is the antecedent >= 90% of the time
//     and the model's answer is right >= 95%; the playground's featured head
//     (layer 2, head 1) is that head; the default sentence ending "tired"
//     looks at "animal", ending "wide" at "street".
//   language: held-out perplexity below the unigram and bigram baselines on the
//     same words of its training text (WordNet's examples, each twice; ngram.hpp);
//     a previous-token, an induction and a first-token head on a phrase said twice.
// Each takes well under a second.

#include "train/ngram.hpp"
#include "train/tasks.hpp"
#include "train/trainer.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#ifndef ATTN_SOURCE_DIR
#error "ATTN_SOURCE_DIR must name the repository root (CMakeLists.txt sets it)"
#endif

namespace {

std::string read_file(const std::string& relative) {
    const std::string path = std::string(ATTN_SOURCE_DIR) + "/" + relative;
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    return std::string(std::istreambuf_iterator<char>(f), {});
}

/// The language model's training text: models/make_corpus.py --twice, from the
/// committed examples (each line "S" becomes "S S").
std::string wordnet_twice() {
    std::istringstream in(read_file("models/wordnet-examples.txt"));
    std::string out;
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) out += line + " " + line + "\n";
    return out;
}

/// The seed of the 200 acceptance sentences (docs/training.md): held-out batch 0 of this seed.
constexpr std::uint64_t kAcceptanceSeed = 20261201;
constexpr int kAcceptanceSentences = 200;
/// The head the playground opens the coreference model on (web/app/playground/models.js).
constexpr int kFeaturedLayer = 1, kFeaturedHead = 0;

struct Acceptance {
    int pronouns = 0;
    std::vector<double> top_is_antecedent;  ///< per head (l·H + h): share of pronouns whose strongest key is the antecedent
    double answer_right = 0;                ///< share of pronouns where argmax(logits) is the antecedent
};

Acceptance coreference_acceptance(attn::Trainer& trainer) {
    const attn::Task& task = trainer.task();
    const int it = task.vocabulary().find("it");
    const attn::Batch batch = task.sample(kAcceptanceSentences, kAcceptanceSeed, 0, attn::Split::heldout);
    attn::Model& model = trainer.model();
    model.forward(batch);
    const int L = model.config().layers, H = model.config().heads, V = model.config().vocab;
    Acceptance a;
    a.top_is_antecedent.assign(static_cast<std::size_t>(L * H), 0.0);
    int right = 0;
    for (int b = 0; b < batch.batch; ++b)
        for (int p = 0; p < batch.real_length(b); ++p) {
            if (batch.id(b, p) != it) continue;
            const int target = batch.target(b, p);
            int antecedent = -1;
            for (int j = 0; j < batch.real_length(b); ++j)
                if (batch.id(b, j) == target) antecedent = j;
            REQUIRE(antecedent >= 0);
            ++a.pronouns;
            for (int l = 0; l < L; ++l)
                for (int h = 0; h < H; ++h) {
                    const auto w = model.attention(b, l, h);
                    Eigen::Index best = 0;
                    w.row(p).maxCoeff(&best);
                    if (best == antecedent) a.top_is_antecedent[static_cast<std::size_t>(l * H + h)] += 1;
                }
            Eigen::Index answer = 0;
            model.logits().row(static_cast<Eigen::Index>(b) * batch.length + p).head(V).maxCoeff(&answer);
            if (answer == target) ++right;
        }
    for (double& x : a.top_is_antecedent) x /= a.pronouns;
    a.answer_right = static_cast<double>(right) / a.pronouns;
    return a;
}

/// Position of the strongest key from token `query` in layer l, head h, and the model's answer there.
std::pair<std::string, std::string> look_and_answer(const attn::Trainer& trainer, const std::string& sentence, int layer,
                                                    int head, int query) {
    const std::vector<attn::Token> tokens = attn::tokenize_for_model(trainer.vocabulary(), sentence);
    std::vector<std::int32_t> ids;
    for (const auto& t : tokens) ids.push_back(t.id);
    const attn::ModelTrace tr = attn::trace_model(trainer.model().config(), trainer.model().params(), ids);
    Eigen::Index key = 0, answer = 0;
    tr.layers[static_cast<std::size_t>(layer)].attention.heads[static_cast<std::size_t>(head)].weights.row(query).maxCoeff(&key);
    tr.probabilities.row(query).maxCoeff(&answer);
    return {tokens[static_cast<std::size_t>(key)].text, trainer.vocabulary()[static_cast<std::size_t>(answer)]};
}

}  // namespace

TEST_CASE("shipped models: coreference meets the acceptance numbers on 200 fresh sentences", "[models]") {
    const auto trainer = attn::Trainer::from_checkpoint(read_file("models/coreference.safetensors"));
    REQUIRE(trainer->has_task());
    CHECK(attn::task_name(trainer->config().task) == std::string("coreference"));
    const Acceptance a = coreference_acceptance(*trainer);
    const int H = trainer->model().config().heads;
    CHECK(a.pronouns == kAcceptanceSentences);
    double best = 0;
    int best_head = -1;
    for (std::size_t k = 0; k < a.top_is_antecedent.size(); ++k)
        if (a.top_is_antecedent[k] > best) best = a.top_is_antecedent[k], best_head = static_cast<int>(k);
    std::printf("coreference acceptance (%d held-out sentences, seed %llu): best head layer %d head %d, strongest key = "
                "antecedent %.1f%%; featured head %.1f%%; answer right %.1f%%\n",
                a.pronouns, static_cast<unsigned long long>(kAcceptanceSeed), best_head / H, best_head % H, 100 * best,
                100 * a.top_is_antecedent[static_cast<std::size_t>(kFeaturedLayer * H + kFeaturedHead)],
                100 * a.answer_right);
    std::printf("  strongest key = antecedent, per head (layer.head from 1):");
    for (std::size_t k = 0; k < a.top_is_antecedent.size(); ++k)
        std::printf(" %d.%d %.1f%%", static_cast<int>(k) / H + 1, static_cast<int>(k) % H + 1, 100 * a.top_is_antecedent[k]);
    std::printf("\n");
    CHECK(best >= 0.90);
    CHECK(a.answer_right >= 0.95);
    // the playground opens on the head that does it
    CHECK(a.top_is_antecedent[static_cast<std::size_t>(kFeaturedLayer * H + kFeaturedHead)] >= 0.90);
}

TEST_CASE("shipped models: in the default sentence it looks at the animal when tired and at the street when wide", "[models]") {
    const auto trainer = attn::Trainer::from_checkpoint(read_file("models/coreference.safetensors"));
    const int it = 7;  // "the animal didn't cross the street because it ..."
    const auto tired = look_and_answer(*trainer, "The animal didn't cross the street because it was too tired.", kFeaturedLayer, kFeaturedHead, it);
    CHECK(tired.first == "animal");
    CHECK(tired.second == "animal");
    const auto wide = look_and_answer(*trainer, "The animal didn't cross the street because it was too wide.", kFeaturedLayer, kFeaturedHead, it);
    CHECK(wide.first == "street");
    CHECK(wide.second == "street");
}

TEST_CASE("shipped models: the language model beats the unigram and bigram baselines on the held-out words", "[models]") {
    const std::string bytes = read_file("models/language.safetensors");
    const attn::Checkpoint cp = attn::load_checkpoint(bytes);
    CHECK(cp.config.causal);
    const auto task = cp.metadata.at("task");
    const int max_vocab = std::stoi(task.substr(task.find("\"max_vocab\":") + 12));
    const attn::TextSplit split = attn::split_text(wordnet_twice(), max_vocab, cp.config.context);
    REQUIRE(split.vocabulary == cp.vocabulary);  // the same corpus, the same vocabulary
    const attn::BaselineResult b = attn::ngram_baselines(split);
    const attn::ModelPerplexity m = attn::model_perplexity(cp.config, cp.params, split);
    CHECK(m.targets == b.targets);
    std::printf("language model: held-out perplexity %.2f (unigram %.2f, bigram add-one %.2f, bigram Kneser-Ney %.2f) "
                "over %lld words; next-word accuracy %.3f\n",
                m.perplexity, b.unigram, b.bigram, b.bigram_kn, static_cast<long long>(m.targets), m.accuracy);
    CHECK(m.perplexity < b.bigram_kn);
    CHECK(m.perplexity < b.unigram);
}

TEST_CASE("shipped models: the language model has previous-token, induction and first-token heads", "[models]") {
    const auto trainer = attn::Trainer::from_checkpoint(read_file("models/language.safetensors"));
    // the playground's example (web/app/playground/models.js): a phrase said twice, the second
    // copy should look at what followed the first
    const std::string text = "she was able to buy a car . she was able to buy a car";
    const std::vector<attn::Token> tokens = attn::tokenize_for_model(trainer->vocabulary(), text);
    std::vector<std::int32_t> ids;
    for (const auto& t : tokens) ids.push_back(t.id);
    const int T = static_cast<int>(ids.size());
    const attn::ModelTrace tr = attn::trace_model(trainer->model().config(), trainer->model().params(), ids);
    const std::vector<attn::AnswerKey> keys = attn::standard_keys(ids, T, true);
    std::map<std::string, double> best;
    for (const auto& layer : tr.layers)
        for (const auto& head : layer.attention.heads)
            for (const auto& k : keys) best[k.name] = std::max(best[k.name], attn::answer_key_score(head.weights, k.key));
    std::printf("language model heads on a repeated phrase: previous-token %.2f, induction %.2f, first-token %.2f, same-token %.2f\n",
                best["previous-token"], best["induction"], best["first-token"], best["same-token"]);
    CHECK(best["previous-token"] >= 0.9);
    CHECK(best["induction"] >= 0.8);
    CHECK(best["first-token"] >= 0.5);
}
