// libFuzzer harness of the checkpoint loaders: our own checkpoints (src/train/trainer.hpp:
// Trainer::from_checkpoint, load_checkpoint; src/checkpoints/safetensors.hpp) and what a
// loaded trainer does next (trace, step, evaluate, save); and the Hub loader
// (src/checkpoints/pretrained.hpp: read_hub_config, check_hub_size, HubLoader fed in
// chunks) and what a loaded pretrained model does next (trace, generation).
// Input: the bytes of a .safetensors file (a trainer's checkpoint); or, when it starts with
// "hub\n", a Hub folder: one byte choosing the chunk size the file is fed in (1, 3, 7, 64,
// 4096 bytes or whole), config.json's text, a zero byte, then model.safetensors' bytes.
// A text model is loaded with the fixed corpus kCorpus below (the seeds include one trained on it).
// Invariants: from_checkpoint returns or throws attn::Error, nothing else; a
// loaded trainer has a vocabulary of exactly config.vocab tokens, a step count
// and settings inside their ranges; trace, step and evaluate return or throw
// attn::Error; a successful step counts exactly one; save() → load → save()
// gives the same bytes (what the loader accepts, the writer reproduces).
//
// Per-run work stays small: a model is at most as large as the input
// (-max_len), and step() runs only when a batch has at most kMaxStepTokens tokens.
//
// Hub invariants: only attn::Error escapes; a loaded model's size lies between what
// config.json alone said (check_hub_size) and its largest, within kMaxParameterBytes, and
// never above twice the file (the header is checked against the file's size before
// anything is allocated); its parameters are finite; fed in chunks or whole, the same
// parameters; a trace and generation return finite numbers or refuse (not_finite).
//
// The seeds (tests/fuzz/corpus/checkpoint) are tiny checkpoints written by
// the CLI (build/attn), made by:
//   attn train --task reverse --length 2 --d-model 4 --heads 1 --steps 3 --batch 4 --out seed-reverse
//   attn train --task recall --length 1 --d-model 4 --heads 2 --mlp 4 --no-layernorm --positional sinusoidal --steps 2 --batch 2 --out seed-recall
//   attn train --task copy --length 2 --d-model 2 --heads 1 --mask none --tied --positional none --steps 1 --batch 1 --out seed-copy
//   printf 'the cat sat on the mat . the dog sat on the log . %.0s' $(seq 8) > corpus.txt
//   attn train --task text --corpus corpus.txt --length 4 --max-vocab 8 --layers 1 --d-model 4 --heads 1 --mlp 0 --steps 2 --batch 2 --out seed-text
// and the Hub seeds (seed-hub-gpt2, seed-hub-bert: tests/pretrained/make_checkpoints.py's tiny
// on-demand folders gpt2-tiny and bert-tiny) by:
//   python3 tests/pretrained/make_checkpoints.py /tmp/hub --only gpt2-tiny bert-tiny
//   for n in gpt2 bert; do { printf 'hub\n\003'; cat /tmp/hub/$n-tiny/config.json; printf '\0';
//     cat /tmp/hub/$n-tiny/model.safetensors; } > tests/fuzz/corpus/checkpoint/seed-hub-$n; done

#include "check.hpp"
#include "checkpoints/pretrained.hpp"
#include "model/generation.hpp"
#include "train/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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

// ---- the Hub loader ---------------------------------------------------------------------

/// The file streamed as the CLI and the page stream it: the header, then the needed ranges
/// in chunks of `chunk` bytes (0: each range whole), as far as the file goes.
std::unique_ptr<attn::Model> load_hub(const attn::ModelConfig& config, const std::string& file, std::size_t chunk) {
    const std::uint64_t n = attn::HubLoader::header_size(file.substr(0, 8));
    attn::HubLoader loader(config, file.substr(0, static_cast<std::size_t>(std::min<std::uint64_t>(n, file.size()))), file.size());
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(file.data());
    for (const attn::ByteRange& r : loader.needed()) {
        FUZZ_CHECK(r.end <= file.size(), "a needed range [%llu, %llu) past the file's %zu bytes",
                   static_cast<unsigned long long>(r.begin), static_cast<unsigned long long>(r.end), file.size());
        for (std::uint64_t at = r.begin; at < r.end;) {
            const std::uint64_t step = chunk == 0 ? r.end - at : std::min<std::uint64_t>(chunk, r.end - at);
            loader.feed(at, bytes + at, static_cast<std::size_t>(step));
            at += step;
        }
    }
    return loader.finish();
}

void hub(const std::uint8_t* data, std::size_t size) {
    static constexpr std::size_t kChunks[] = {1, 3, 7, 64, 4096, 0};
    if (size < 5) return;
    const std::size_t chunk = kChunks[data[4] % 6];
    const char* rest = reinterpret_cast<const char*>(data) + 5;
    const std::size_t n = size - 5;
    const char* zero = static_cast<const char*>(std::memchr(rest, 0, n));
    if (!zero) return;
    const std::string config_json(rest, static_cast<std::size_t>(zero - rest));
    const std::string file(zero + 1, n - static_cast<std::size_t>(zero - rest) - 1);
    attn::ModelConfig config;
    attn::HubSizeCheck size_check;
    try {
        config = attn::read_hub_config(config_json);
        size_check = attn::check_hub_size(config);
    } catch (const attn::Error&) {
        return;
    }
    FUZZ_CHECK(size_check.parameter_bytes <= size_check.largest_bytes && size_check.fits == size_check.refusal.empty(),
               "check_hub_size: %llu … %llu bytes, fits %d", static_cast<unsigned long long>(size_check.parameter_bytes),
               static_cast<unsigned long long>(size_check.largest_bytes), size_check.fits);
    std::unique_ptr<attn::Model> model;
    try {
        model = load_hub(config, file, chunk);
    } catch (const attn::Error&) {
        return;  // a documented refusal
    }
    const attn::ModelConfig& m = model->config();
    const std::uint64_t bytes = attn::parameter_bytes(m);
    FUZZ_CHECK(size_check.fits && bytes >= size_check.parameter_bytes && bytes <= size_check.largest_bytes &&
                   bytes <= attn::kMaxParameterBytes && bytes <= 2 * file.size(),
               "a model of %llu bytes from a file of %zu (config.json: %llu … %llu)", static_cast<unsigned long long>(bytes),
               file.size(), static_cast<unsigned long long>(size_check.parameter_bytes),
               static_cast<unsigned long long>(size_check.largest_bytes));
    const std::vector<float>& flat = model->params().flat();
    FUZZ_CHECK(std::all_of(flat.begin(), flat.end(), [](float v) { return std::isfinite(v); }), "a loaded weight is not finite");
    if (chunk != 0) FUZZ_CHECK(load_hub(config, file, 0)->params().flat() == flat, "fed in chunks of %zu, other weights", chunk);

    std::vector<std::int32_t> ids;
    for (int t = 0; t < std::min(m.context, 4); ++t) ids.push_back((t * 7 + 1) % m.vocab);
    const auto refused = [](const attn::Error& e) {
        FUZZ_CHECK(e.code() == attn::Error::Code::not_finite || e.code() == attn::Error::Code::too_large, "refused: %s", e.what());
    };
    try {
        attn::TraceKeep keep;
        keep.top_k = 5;
        const attn::ModelTrace tr = model->trace(ids, -1, {}, keep);
        FUZZ_CHECK(tr.top_k == std::min(5, m.vocab) && tr.top_ids.size() == ids.size() * static_cast<std::size_t>(tr.top_k),
                   "top %d of %zu ids", tr.top_k, tr.top_ids.size());
        for (const float p : tr.top_p) FUZZ_CHECK(p >= 0 && p <= 1, "a top probability %g", static_cast<double>(p));
    } catch (const attn::Error& e) {
        refused(e);
    }
    if (!m.causal) return;
    try {
        attn::KvCache cache(*model);
        for (const std::int32_t id : ids) {
            cache.append(id);
            FUZZ_CHECK(cache.logits().allFinite(), "generation's logits are not finite");
        }
    } catch (const attn::Error& e) {
        refused(e);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size >= 4 && std::memcmp(data, "hub\n", 4) == 0) {
        hub(data, size);
        return 0;
    }
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
