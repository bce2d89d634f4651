// libFuzzer harness of the checkpoint loader (src/train/trainer.hpp:
// Trainer::from_checkpoint, load_checkpoint; src/checkpoints/safetensors.hpp) and of
// what a loaded trainer does next: trace, step, evaluate, save.
// Input: the bytes of a .safetensors file. A text model is loaded with the
// fixed corpus kCorpus below (the seeds include one trained on it).
// Invariants: from_checkpoint returns or throws attn::Error, nothing else; a
// loaded trainer has a vocabulary of exactly config.vocab tokens, a step count
// and settings inside their ranges; trace, step and evaluate return or throw
// attn::Error; a successful step counts exactly one; save() → load → save()
// gives the same bytes (what the loader accepts, the writer reproduces).
//
// Per-run work stays small: a model is at most as large as the input
// (-max_len), and step() runs only when a batch has at most kMaxStepTokens tokens.
//
// The seeds (tests/fuzz/corpus/checkpoint) are tiny checkpoints written by
// the CLI (build/attn), made by:
//   attn train --task reverse --length 2 --d-model 4 --heads 1 --steps 3 --batch 4 --out seed-reverse
//   attn train --task recall --length 1 --d-model 4 --heads 2 --mlp 4 --no-layernorm --positional sinusoidal --steps 2 --batch 2 --out seed-recall
//   attn train --task copy --length 2 --d-model 2 --heads 1 --mask none --tied --positional none --steps 1 --batch 1 --out seed-copy
//   printf 'the cat sat on the mat . the dog sat on the log . %.0s' $(seq 8) > corpus.txt
//   attn train --task text --corpus corpus.txt --length 4 --max-vocab 8 --layers 1 --d-model 4 --heads 1 --mlp 0 --steps 2 --batch 2 --out seed-text

#include "check.hpp"
#include "train/trainer.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

std::string corpus() {
    std::string text;
    for (int i = 0; i < 8; ++i) text += "the cat sat on the mat . the dog sat on the log . ";
    return text;
}
const std::string kCorpus = corpus();
constexpr long long kMaxStepTokens = 4096;

bool in_range(const attn::SettingRange& r, double v) {
    try {
        attn::check_setting(r, v);
        return true;
    } catch (const attn::Error&) {
        return false;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    std::unique_ptr<attn::Trainer> t;
    try {
        t = attn::Trainer::from_checkpoint(bytes, kCorpus);
    } catch (const attn::Error&) {
        return 0;  // a documented refusal (any other exception reaches libFuzzer as a crash)
    }
    const attn::ModelConfig& m = t->model().config();
    const attn::TrainConfig& c = t->config();
    FUZZ_CHECK(static_cast<int>(t->vocabulary().size()) == m.vocab, "vocabulary %zu for vocab %d", t->vocabulary().size(), m.vocab);
    FUZZ_CHECK(t->steps_done() >= 0 && t->steps_done() <= attn::kMaxTrainingSteps, "step %d", t->steps_done());
    FUZZ_CHECK(in_range(attn::settings::batch, c.batch) && in_range(attn::settings::lr, c.optimizer.lr) &&
                   in_range(attn::settings::warmup, c.optimizer.warmup) && in_range(attn::settings::eps, c.optimizer.eps),
               "a setting out of range: batch %d lr %g warmup %d eps %g", c.batch, c.optimizer.lr, c.optimizer.warmup, c.optimizer.eps);
    if (t->has_task()) {
        FUZZ_CHECK(t->task().vocabulary().size() == m.vocab, "task vocabulary %d, model %d",
                   t->task().vocabulary().size(), m.vocab);
        FUZZ_CHECK(t->task().context() <= m.context, "task context %d, model %d", t->task().context(), m.context);
    }

    // a trace of the probe (or of the first ids), every token named
    std::vector<std::int32_t> ids;
    int length = -1;
    if (t->has_task()) {
        const attn::Example e = t->task().probe();
        ids = e.ids;
        length = e.length;
    } else {
        for (int i = 0; i < std::min(m.context, 4); ++i) ids.push_back(i % m.vocab);
    }
    for (const std::int32_t id : ids) FUZZ_CHECK(id >= 0 && id < m.vocab, "probe id %d, vocab %d", id, m.vocab);
    try {
        const attn::ModelTrace tr = attn::trace_model(m, t->model().params(), ids, length);
        FUZZ_CHECK(tr.logits.rows() == static_cast<Eigen::Index>(ids.size()) && tr.logits.cols() == m.vocab, "logits %dx%d",
                   static_cast<int>(tr.logits.rows()), static_cast<int>(tr.logits.cols()));
    } catch (const attn::Error&) {
    }

    // save → load → save: the same bytes
    const std::string saved = t->save();
    std::unique_ptr<attn::Trainer> back;
    try {
        back = attn::Trainer::from_checkpoint(saved, kCorpus);
    } catch (const attn::Error& e) {
        FUZZ_CHECK(false, "the loader refuses what save() wrote: %s", e.what());
    }
    FUZZ_CHECK(back->save() == saved, "save() of the reloaded trainer differs");
    FUZZ_CHECK(back->model().params().flat() == t->model().params().flat(), "reloaded weights differ");
    FUZZ_CHECK(back->has_task() == t->has_task() && back->steps_done() == t->steps_done(), "task or step lost in the round trip");

    if (!t->has_task()) return 0;
    if (static_cast<long long>(c.batch) * t->task().context() <= kMaxStepTokens) {
        const int before = t->steps_done();
        try {
            const attn::StepResult r = t->step();
            FUZZ_CHECK(r.step == before + 1 && t->steps_done() == before + 1, "step %d after %d", r.step, before);
        } catch (const attn::Error&) {
            FUZZ_CHECK(t->steps_done() == before, "a refused step counted: %d after %d", t->steps_done(), before);
        }
    }
    try {
        const attn::EvalResult e = t->evaluate(2);
        FUZZ_CHECK(e.targets >= 0 && e.accuracy >= 0 && e.accuracy <= 1, "evaluate: accuracy %g over %d", e.accuracy, e.targets);
    } catch (const attn::Error&) {
    }
    return 0;
}
