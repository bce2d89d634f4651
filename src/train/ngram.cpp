#include "train/ngram.hpp"

#include "text/tokenizer.hpp"
#include "base/types.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace attn {

TextSplit split_text(const std::string& corpus, int max_vocab, int length) {
    TaskOptions options;
    options.corpus = corpus;
    options.max_vocab = max_vocab;
    options.length = length;
    // the task validates the options and builds the vocabulary: one definition of both
    const std::unique_ptr<Task> task = make_task(TaskKind::text, options);
    TextSplit out;
    out.vocabulary = task->vocabulary().tokens();
    out.words = task->vocabulary().encode(corpus);
    out.train_end = static_cast<std::size_t>(static_cast<std::int64_t>(out.words.size()) * 9 / 10);
    return out;
}

TextSplit split_text_with_vocabulary(const std::string& corpus, const std::vector<std::string>& vocabulary) {
    if (vocabulary.size() < 2 || vocabulary[0] != kPadText || vocabulary[1] != "[UNK]")
        throw Error("ngram: a vocabulary must start with [PAD] and [UNK]");
    TextSplit out;
    out.vocabulary = vocabulary;
    out.words = Vocabulary(vocabulary).encode(corpus);
    if (out.words.size() < 4) throw Error("ngram: the corpus has " + std::to_string(out.words.size()) + " words, fewer than 4");
    out.train_end = static_cast<std::size_t>(static_cast<std::int64_t>(out.words.size()) * 9 / 10);
    return out;
}

namespace {

/// Key of the bigram (v, w) for V ≤ 2^31.
std::uint64_t pair_key(std::int32_t v, std::int32_t w) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(v)) << 32) | static_cast<std::uint32_t>(w);
}

}  // namespace

BaselineResult ngram_baselines(const TextSplit& split) {
    const int size = static_cast<int>(split.vocabulary.size());
    const std::size_t E = split.train_end, N = split.words.size();
    if (E < 2 || N < E + 2) throw Error("ngram baselines: the split needs at least 2 training and 2 held-out words");
    BaselineResult r;
    r.vocabulary = size - 1;  // every id but [PAD]
    r.train_words = static_cast<std::int64_t>(E);
    const double V = r.vocabulary;

    // pass 1: counts over the training split
    std::vector<std::int64_t> unigram(static_cast<std::size_t>(size), 0);  // c(w)
    std::vector<std::int64_t> history(static_cast<std::size_t>(size), 0);  // c(v ·)
    std::vector<std::int64_t> followers(static_cast<std::size_t>(size), 0);  // n(v ·)
    std::vector<std::int64_t> preceders(static_cast<std::size_t>(size), 0);  // n(· w)
    std::unordered_map<std::uint64_t, std::int64_t> bigram;                 // c(v w)
    bigram.reserve(E);
    for (std::size_t i = 0; i < E; ++i) {
        const std::int32_t w = split.words[i];
        if (w < 0 || w >= size) throw Error("ngram baselines: word id " + std::to_string(w) + " is outside the vocabulary");
        ++unigram[static_cast<std::size_t>(w)];
        if (i == 0) continue;
        const std::int32_t v = split.words[i - 1];
        ++history[static_cast<std::size_t>(v)];
        if (bigram[pair_key(v, w)]++ == 0) {
            ++followers[static_cast<std::size_t>(v)];
            ++preceders[static_cast<std::size_t>(w)];
        }
    }
    const double distinct = static_cast<double>(bigram.size());  // n(· ·)
    const double d = 0.75;

    // pass 2: −ln p of every held-out target
    double uni = 0, bi = 0, kn = 0;
    std::int64_t unknown = 0;
    for (std::size_t i = E + 1; i < N; ++i) {
        const std::int32_t v = split.words[i - 1], w = split.words[i];
        if (w < 0 || w >= size || v < 0 || v >= size)
            throw Error("ngram baselines: word id outside the vocabulary in the held-out split");
        if (w == kUnknownId) ++unknown;
        const auto found = bigram.find(pair_key(v, w));
        const double cvw = found == bigram.end() ? 0.0 : static_cast<double>(found->second);
        const double cv = static_cast<double>(history[static_cast<std::size_t>(v)]);
        uni -= std::log((static_cast<double>(unigram[static_cast<std::size_t>(w)]) + 1.0) / (static_cast<double>(E) + V));
        bi -= std::log((cvw + 1.0) / (cv + V));
        const double q = (static_cast<double>(preceders[static_cast<std::size_t>(w)]) + 1.0) / (distinct + V);
        const double p = cv > 0 ? std::max(cvw - d, 0.0) / cv +
                                      d * static_cast<double>(followers[static_cast<std::size_t>(v)]) / cv * q
                                : q;
        kn -= std::log(p);
    }
    r.targets = static_cast<std::int64_t>(N - E - 1);
    const double n = static_cast<double>(r.targets);
    r.unknown_share = static_cast<double>(unknown) / n;
    r.unigram = std::exp(uni / n);
    r.bigram = std::exp(bi / n);
    r.bigram_kn = std::exp(kn / n);
    return r;
}

ModelPerplexity model_perplexity(const ModelConfig& config, const Parameters& params, const TextSplit& split,
                                 int length) {
    if (config.vocab != static_cast<int>(split.vocabulary.size()))
        throw Error("model perplexity: the model has a vocabulary of " + std::to_string(config.vocab) +
                    " tokens, the text's is " + std::to_string(split.vocabulary.size()) +
                    " (a different corpus or max_vocab)");
    if (!config.causal) throw Error("model perplexity: the model is not causal, so it sees the words it predicts");
    const int T = length > 0 ? length : config.context;
    if (T > config.context)
        throw Error("model perplexity: windows of " + std::to_string(T) + " words exceed the model's context of " +
                    std::to_string(config.context));
    const std::size_t E = split.train_end, N = split.words.size();
    if (N < E + 2) throw Error("model perplexity: the held-out split has fewer than 2 words");
    Model model(config);
    model.params() = params;

    ModelPerplexity out;
    double loss_sum = 0;
    std::int64_t correct = 0;
    const auto run = [&](const std::vector<std::size_t>& starts, int t) {
        Batch b;
        b.batch = static_cast<int>(starts.size());
        b.length = t;
        for (std::size_t s : starts)
            for (int k = 0; k < t; ++k) {
                b.ids.push_back(split.words[s + static_cast<std::size_t>(k)]);
                b.targets.push_back(split.words[s + static_cast<std::size_t>(k) + 1]);
            }
        const LossResult r = model.forward(b);
        loss_sum += r.loss * r.targets;
        out.targets += r.targets;
        correct += r.correct;
    };
    // full windows in batches of 32, then the shorter last one
    std::vector<std::size_t> starts;
    std::size_t s = E;
    for (; s + static_cast<std::size_t>(T) < N; s += static_cast<std::size_t>(T)) {
        starts.push_back(s);
        if (starts.size() == 32) {
            run(starts, T);
            starts.clear();
        }
    }
    if (!starts.empty()) run(starts, T);
    if (s + 1 < N) run({s}, static_cast<int>(N - 1 - s));
    out.loss = loss_sum / static_cast<double>(out.targets);
    out.perplexity = std::exp(out.loss);
    out.accuracy = static_cast<double>(correct) / static_cast<double>(out.targets);
    return out;
}

}  // namespace attn
