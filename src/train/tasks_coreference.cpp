// The coreference task: what "it" refers to, in sentences of a small grammar.

#include "train/task_base.hpp"

#include "base/hash.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace attn::task_detail {
namespace {

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

}  // namespace

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

std::unique_ptr<Task> make_coreference_task(int T, const TaskOptions&) { return std::make_unique<CoreferenceTask>(T); }

}  // namespace attn::task_detail
