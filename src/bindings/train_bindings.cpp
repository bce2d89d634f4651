// Embind glue for the training engine (core/trainer.hpp), guarded like
// bindings.cpp. A Trainer lives in this file's handle table (handles.hpp: the
// bindings' one handle scheme) under the integer handle web/trainer.js's Trainer
// object holds; `trainerDispose` frees it (trainer.js also registers a
// FinalizationRegistry backstop). Everything returned is a copy.

#include "convert.hpp"
#include "guarded.hpp"
#include "handles.hpp"
#include "model/model_schema.hpp"
#include "train/task_registry.hpp"
#include "train/backward.hpp"
#include "train/trainer.hpp"

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <chrono>
#include <initializer_list>
#include <utility>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using emscripten::val;
using namespace attn;
using js::LayerBackwardWeights;
using js::set_matrices;
using attn::js::guarded;

/// The live trainers (handles.hpp).
js::Handles<Trainer>& trainers() {
    static js::Handles<Trainer> table("trainer", ": create a new one");
    return table;
}

Trainer& trainer_of(int handle) { return trainers().at(handle); }

}  // namespace

void attn::js::count_trainers(HandleCounts& counts) {
    counts.trainers = trainers().size();
    trainers().each([&](const Trainer& t) { counts.trainer_parameter_bytes += t.model().params().size() * sizeof(float); });
}

namespace {

// ---- reading the settings engine.js normalised (every field present, primitives) ----

double number_field(const val& o, const char* key) {
    const val v = o[key];
    if (!v.isNumber()) throw Error(std::string("settings.") + key + " must be a number", Error::Kind::type);
    const double d = v.as<double>();
    if (!std::isfinite(d)) throw Error(std::string("settings.") + key + " must be finite");
    return d;
}

/// A number in the range of its setting (settings.hpp's rows, the one definition).
double setting_field(const val& o, const SettingRange& r) {
    return check_setting(r, number_field(o, r.js), "settings.");
}

bool bool_field(const val& o, const char* key) {
    const val v = o[key];
    if (!v.isTrue() && !v.isFalse()) throw Error(std::string("settings.") + key + " must be true or false", Error::Kind::type);
    return v.isTrue();
}

std::string string_field(const val& o, const char* key) {
    const val v = o[key];
    if (!v.isString()) throw Error(std::string("settings.") + key + " must be a string", Error::Kind::type);
    return v.as<std::string>();
}

/// Every model setting JS sets (model_schema.hpp's rows with a JS key and a flag), read by its row.
void model_settings_from_js(const val& s, ModelConfig& m) {
    for (const ModelSetting& row : model_settings()) {
        if (!row.settable) continue;
        const char* key = row.range.js;
        switch (row.type) {
            case SettingType::whole:
            case SettingType::real: row.set(m, setting_field(s, training_range(row))); break;
            case SettingType::boolean: row.set(m, bool_field(s, key) ? 1 : 0); break;
            case SettingType::choice: row.set(m, model_setting_choice(row, string_field(s, key), "settings.")); break;
        }
    }
}

TrainConfig train_config_from_js(const val& s) {
    TrainConfig c;
    c.task = parse_task(string_field(s, "task"));
    c.task_options.length = static_cast<int>(setting_field(s, settings::length));
    c.task_options.corpus = string_field(s, "corpus");
    c.task_options.max_vocab = static_cast<int>(setting_field(s, settings::max_vocab));
    model_settings_from_js(s, c.model);
    OptimizerConfig& o = c.optimizer;
    o.lr = static_cast<float>(number_field(s, "lr"));  // the real-valued ones: Trainer's validate_train_config
    o.beta1 = static_cast<float>(number_field(s, "beta1"));
    o.beta2 = static_cast<float>(number_field(s, "beta2"));
    o.weight_decay = static_cast<float>(number_field(s, "weightDecay"));
    o.clip = static_cast<float>(number_field(s, "clip"));
    o.warmup = static_cast<int>(setting_field(s, settings::warmup));
    c.batch = static_cast<int>(setting_field(s, settings::batch));
    c.seed = static_cast<std::uint32_t>(setting_field(s, settings::seed));
    return c;
}

val settings_to_js(const TrainConfig& c) {
    val s = val::object();
    s.set("task", std::string(task_name(c.task)));
    s.set("length", c.task_options.length);
    s.set("maxVocab", c.task_options.max_vocab);
    for (const ModelSetting& row : model_settings())
        if (row.settable) js::set_model_setting(s, row, c.model);
    s.set("lr", c.optimizer.lr);
    s.set("beta1", c.optimizer.beta1);
    s.set("beta2", c.optimizer.beta2);
    s.set("weightDecay", c.optimizer.weight_decay);
    s.set("clip", c.optimizer.clip);
    s.set("warmup", c.optimizer.warmup);
    s.set("batch", c.batch);
    s.set("seed", static_cast<double>(c.seed));
    return s;
}

val strings_to_js(const std::vector<std::string>& v) {
    val a = val::array();
    for (const std::string& s : v) a.call<void>("push", s);
    return a;
}

val int32_copy(const std::vector<std::int32_t>& v) {
    return val::global("Int32Array").new_(emscripten::typed_memory_view(v.size(), v.data()));
}

/// [[layer, head], …] → ForwardOptions.head_enabled (validated against L×H).
ForwardOptions forward_options_from_js(const val& options, const ModelConfig& m) {
    ForwardOptions f;
    if (options.isUndefined() || options.isNull()) return f;
    const val ablate = options["ablate"];
    if (!ablate.isUndefined() && !ablate.isNull()) {
        f.head_enabled.assign(static_cast<std::size_t>(m.layers), std::vector<bool>(static_cast<std::size_t>(m.heads), true));
        const int n = ablate["length"].as<int>();
        for (int i = 0; i < n; ++i) {
            const val pair = ablate[i];
            const int layer = pair[0].as<int>(), head = pair[1].as<int>();
            if (layer < 0 || layer >= m.layers || head < 0 || head >= m.heads)
                throw Error("ablate: layer " + std::to_string(layer) + " head " + std::to_string(head) +
                            " is not in this model's " + std::to_string(m.layers) + " layers × " +
                            std::to_string(m.heads) + " heads");
            f.head_enabled[static_cast<std::size_t>(layer)][static_cast<std::size_t>(head)] = false;
        }
    }
    if (options["uniformAttention"].isTrue()) f.uniform_attention = true;
    const val causal = options["causal"];
    if (causal.isTrue()) f.causal_override = 1;
    if (causal.isFalse()) f.causal_override = 0;
    return f;
}

val describe_trainer(int handle, const Trainer& t) {
    val o = val::object();
    o.set("handle", handle);
    o.set("settings", settings_to_js(t.config()));
    o.set("config", js::model_config_to_js(t.model().config()));
    o.set("vocabulary", strings_to_js(t.vocabulary()));
    o.set("parameterCount", static_cast<double>(t.model().params().size()));
    o.set("stepCount", t.steps_done());
    o.set("hasTask", t.has_task());
    return o;
}

int register_trainer(std::unique_ptr<Trainer> t) { return trainers().add(std::move(t)); }

std::string bytes_from_js(const val& bytes) {
    if (!bytes.instanceof(val::global("Uint8Array")))
        throw Error("a checkpoint must be given as a Uint8Array of the .safetensors file's bytes", Error::Kind::type);
    const std::size_t n = bytes["length"].as<std::size_t>();
    if (n > (256u << 20)) throw Error(Error::Code::bad_checkpoint, "the file is " + std::to_string(n) + " bytes; checkpoints above 256 MB are refused");
    std::string out(n, '\0');
    // one copy into the heap: a typed view of the string's bytes, set from the JS array
    val(emscripten::typed_memory_view(n, reinterpret_cast<unsigned char*>(out.data()))).call<void>("set", bytes);
    return out;
}

// ---- exported functions -------------------------------------------------------------------

/// engine.tasks(): every row of the task registry with its recipe (as
/// createTrainer's settings), and, for the tasks that need nothing more than
/// their size, the vocabulary and the probe made by the task itself. The text
/// task needs a corpus: its vocabulary and example are empty.
val train_tasks_js() {
    return guarded([&] {
        val out = val::array();
        for (const TaskInfo& info : task_registry()) {
            const Recipe r = default_recipe(info.kind);
            val o = val::object();
            o.set("name", std::string(info.name));
            o.set("title", std::string(info.title));
            o.set("defaults", settings_to_js(r.config));
            o.set("steps", r.steps);
            o.set("description", std::string(info.description));
            o.set("pattern", std::string(info.pattern));
            o.set("causal", info.causal);
            val tokens = val::array(), targets = val::array(), vocabulary = val::array();
            int context = info.length_default;
            if (info.kind != TaskKind::text) {
                const std::unique_ptr<Task> task = make_task(info.kind);
                context = task->context();
                vocabulary = strings_to_js(task->vocabulary().tokens());
                const Example e = task->probe();
                for (std::size_t i = 0; i < e.ids.size() && static_cast<int>(i) < e.length; ++i) {
                    tokens.call<void>("push", task->vocabulary().text(e.ids[i]));
                    if (e.targets[i] >= 0)
                        targets.call<void>("push", task->vocabulary().text(e.targets[i]));
                    else
                        targets.call<void>("push", val::null());
                }
            }
            o.set("context", context);
            o.set("vocabulary", vocabulary);
            val ex = val::object();
            ex.set("tokens", tokens);
            ex.set("targets", targets);
            o.set("example", ex);
            out.call<void>("push", o);
        }
        return out;
    });
}

val trainer_create_js(const val& settings) {
    return guarded([&] {
        auto t = std::make_unique<Trainer>(train_config_from_js(settings));
        const Trainer& ref = *t;
        const int handle = register_trainer(std::move(t));
        return describe_trainer(handle, ref);
    });
}

/// {bytes, limitBytes, fits, parts: {parameters, gradients, optimizer, activations, attention, scratch},
/// message}: what createTrainer(settings) and its steps need (core training_memory); message is the
/// too_large error createTrainer would throw, or null when the settings fit.
val training_memory_js(const val& settings) {
    return guarded([&] {
        const TrainConfig config = train_config_from_js(settings);
        const TrainingMemory m = training_memory(config);
        val parts = val::object();
        parts.set("parameters", static_cast<double>(m.parameters));
        parts.set("gradients", static_cast<double>(m.gradients));
        parts.set("optimizer", static_cast<double>(m.optimizer));
        parts.set("activations", static_cast<double>(m.activations));
        parts.set("attention", static_cast<double>(m.attention));
        parts.set("scratch", static_cast<double>(m.scratch));
        val o = val::object();
        o.set("bytes", static_cast<double>(m.total()));
        o.set("limitBytes", static_cast<double>(kMaxTrainingBytes));
        o.set("parts", parts);
        o.set("fits", m.fits());
        o.set("message", m.fits() ? val::null() : val(m.refusal));
        return o;
    });
}

val trainer_load_js(const val& bytes, const std::string& corpus) {
    return guarded([&] {
        std::unique_ptr<Trainer> t = Trainer::from_checkpoint(bytes_from_js(bytes), corpus);
        const Trainer& ref = *t;
        const int handle = register_trainer(std::move(t));
        return describe_trainer(handle, ref);
    });
}

void trainer_dispose_js(int handle) { trainers().erase(handle); }

val step_report(const StepResult& r, double ms) {
    val o = val::object();
    o.set("step", r.step);
    o.set("loss", r.loss);
    o.set("accuracy", r.accuracy);
    o.set("gradNorm", r.grad_norm);
    o.set("scoreGradNorm", r.stats.score_grad_norm);
    o.set("scoreVariance", r.stats.score_variance);
    o.set("rowEntropy", r.stats.row_entropy);
    o.set("ms", ms);
    return o;
}

val trainer_step_js(int handle, int n) {
    return guarded([&] {
        Trainer& t = trainer_of(handle);
        if (n < 1 || n > 1000000) throw Error("step(n): n must be from 1 to 1000000, got " + std::to_string(n));
        const auto start = std::chrono::steady_clock::now();
        StepResult r;
        for (int i = 0; i < n; ++i) r = t.step();
        return step_report(r, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    });
}

/// batch: {batch, length, ids: Int32Array (B·T), targets: Int32Array, lengths: Int32Array | null}, normalised by engine.js.
val trainer_step_batch_js(int handle, const val& batch, int n) {
    return guarded([&] {
        Trainer& t = trainer_of(handle);
        if (n < 1 || n > 1000000) throw Error("stepBatch(batch, n): n must be from 1 to 1000000, got " + std::to_string(n));
        Batch b;
        b.batch = batch["batch"].as<int>();
        b.length = batch["length"].as<int>();
        b.ids = emscripten::convertJSArrayToNumberVector<std::int32_t>(batch["ids"]);
        b.targets = emscripten::convertJSArrayToNumberVector<std::int32_t>(batch["targets"]);
        if (!batch["lengths"].isNull()) b.lengths = emscripten::convertJSArrayToNumberVector<int>(batch["lengths"]);
        const auto start = std::chrono::steady_clock::now();
        StepResult r;
        for (int i = 0; i < n; ++i) r = t.step_on(b);
        return step_report(r, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    });
}

val trainer_evaluate_js(int handle, int samples, const val& options) {
    return guarded([&] {
        Trainer& t = trainer_of(handle);
        const EvalResult e = t.evaluate(samples, forward_options_from_js(options, t.model().config()));
        val o = val::object();
        o.set("loss", e.loss);
        o.set("accuracy", e.accuracy);
        o.set("targets", e.targets);
        return o;
    });
}

val scores_to_js(const std::vector<std::pair<std::string, double>>& scores) {
    val o = val::object();
    for (const auto& [name, score] : scores) o.set(name, score);
    return o;
}

val trainer_head_scores_js(int handle, int samples, const val& options) {
    return guarded([&] {
        Trainer& t = trainer_of(handle);
        val out = val::array();
        for (const HeadScore& h : t.head_scores(samples, forward_options_from_js(options, t.model().config()))) {
            val o = val::object();
            o.set("layer", h.layer);
            o.set("head", h.head);
            o.set("scores", scores_to_js(h.scores));
            out.call<void>("push", o);
        }
        return out;
    });
}

/// The sequence a probe or trace reads: options.ids (numbers), options.text, or the task's probe.
struct Sequence {
    std::vector<std::int32_t> ids, targets;
    int length = 0;
    std::vector<Token> tokens;  // with text offsets when given as text
};

Sequence sequence_from_js(const Trainer& t, const val& options) {
    Sequence s;
    const ModelConfig& m = t.model().config();
    const bool have = !options.isUndefined() && !options.isNull();
    if (have && !options["ids"].isUndefined() && !options["ids"].isNull()) {
        s.ids = emscripten::convertJSArrayToNumberVector<std::int32_t>(options["ids"]);
        s.length = static_cast<int>(s.ids.size());
        s.targets.assign(s.ids.size(), kNoTarget);
    } else if (have && options["text"].isString()) {
        s.tokens = tokenize_for_model(t.vocabulary(), options["text"].as<std::string>());
        for (const Token& tok : s.tokens) s.ids.push_back(tok.id);
        s.length = static_cast<int>(s.ids.size());
        s.targets.assign(s.ids.size(), kNoTarget);
    } else {
        const Example e = t.task().probe();
        s.ids = e.ids;
        s.targets = e.targets;
        s.length = e.length;
    }
    if (s.ids.empty()) throw Error(Error::Code::empty_text, "the sequence has no tokens");
    if (static_cast<int>(s.ids.size()) > m.context)
        throw Error(Error::Code::too_long_for_model, "the sequence has " + std::to_string(s.ids.size()) + " tokens; this model reads at most " +
                    std::to_string(m.context));
    if (s.tokens.empty())
        for (std::size_t i = 0; i < s.ids.size(); ++i) {
            const std::int32_t id = s.ids[i];
            if (id < 0 || id >= m.vocab)
                throw Error("token id " + std::to_string(id) + " at position " + std::to_string(i) +
                            " is outside the vocabulary 0 … " + std::to_string(m.vocab - 1));
            s.tokens.push_back(Token{t.vocabulary()[static_cast<std::size_t>(id)], id, 0, 0});
        }
    return s;
}

val trainer_probe_js(int handle, const val& options) {
    return guarded([&] {
        Trainer& t = trainer_of(handle);
        const ModelConfig& m = t.model().config();
        const Sequence s = sequence_from_js(t, options);
        const ModelTrace tr = trace_model(m, t.model().params(), s.ids, s.length, forward_options_from_js(options, m));
        const std::vector<AnswerKey> keys =
            t.has_task() ? t.task().answer_keys(s.ids, s.length) : standard_keys(s.ids, s.length, m.causal);
        std::vector<std::int32_t> predictions;
        val correct = val::array();
        for (int i = 0; i < static_cast<int>(s.ids.size()); ++i) {
            Eigen::Index best = 0;
            tr.logits.row(i).maxCoeff(&best);
            predictions.push_back(static_cast<std::int32_t>(best));
            if (s.targets[static_cast<std::size_t>(i)] >= 0)
                correct.call<void>("push", val(best == s.targets[static_cast<std::size_t>(i)]));
            else
                correct.call<void>("push", val::null());
        }
        val tokens = val::array();
        for (const Token& tok : s.tokens) tokens.call<void>("push", tok.text);
        val layers = val::array();
        for (const LayerTrace& lt : tr.layers) {
            val heads = val::array();
            for (const HeadTrace& ht : lt.attention.heads) {
                val h = val::object();
                h.set("weights", js::matrix_to_js(ht.weights));
                std::vector<std::pair<std::string, double>> scores;
                for (const AnswerKey& k : keys) scores.emplace_back(k.name, answer_key_score(ht.weights, k.key));
                h.set("scores", scores_to_js(scores));
                heads.call<void>("push", h);
            }
            val l = val::object();
            l.set("heads", heads);
            layers.call<void>("push", l);
        }
        val key_list = val::array();
        for (const AnswerKey& k : keys) {
            val o = val::object();
            o.set("name", k.name);
            o.set("key", js::matrix_to_js(k.key));
            key_list.call<void>("push", o);
        }
        val o = val::object();
        o.set("tokens", tokens);
        o.set("ids", int32_copy(s.ids));
        o.set("targets", int32_copy(s.targets));
        o.set("length", s.length);
        o.set("predictions", int32_copy(predictions));
        o.set("correct", correct);
        o.set("layers", layers);
        o.set("keys", key_list);
        o.set("probabilities", js::matrix_to_js(tr.probabilities));
        return o;
    });
}

val trainer_trace_js(int handle, const val& options) {
    return guarded([&] {
        Trainer& t = trainer_of(handle);
        const ModelConfig& m = t.model().config();
        const Sequence s = sequence_from_js(t, options);
        const ModelTrace tr = trace_model(m, t.model().params(), s.ids, s.length, forward_options_from_js(options, m));
        // the heads' pattern scores include the task's own keys (antecedent)
        const std::vector<AnswerKey> task_keys = t.has_task() ? t.task().answer_keys(s.ids, s.length) : std::vector<AnswerKey>{};
        val o = js::model_trace_to_js(m, tr, t.model().params(), task_keys);
        val tokens = val::array();
        for (const Token& tok : s.tokens) tokens.call<void>("push", js::token_to_js(tok));
        o.set("tokens", tokens);
        // 1: a sequence the task's generator makes, 0: not, -1: no task or no grammar to check
        o.set("grammar", t.has_task() ? t.task().grammar(s.ids, s.length) : -1);
        return o;
    });
}

val trainer_save_js(int handle) {
    return guarded([&] {
        const std::string bytes = trainer_of(handle).save();
        return val::global("Uint8Array")
            .new_(emscripten::typed_memory_view(bytes.size(), reinterpret_cast<const unsigned char*>(bytes.data())));
    });
}

val trainer_info_js(int handle) {
    return guarded([&] { return describe_trainer(handle, trainer_of(handle)); });
}

}  // namespace

/// The targets of a backward from JS: options.targets (one per token, -1 none),
/// else the task the model was trained on (backward.hpp's default_targets).
std::vector<std::int32_t> targets_from_js(const Trainer& t, const Sequence& s, const val& options) {
    std::vector<std::int32_t> targets;
    if (!options["targets"].isUndefined() && !options["targets"].isNull()) {
        targets = emscripten::convertJSArrayToNumberVector<std::int32_t>(options["targets"]);
    } else {
        // the task the model was trained on (a text model loaded without its corpus keeps it too)
        const std::map<std::string, std::string> metadata = {
            {"task", std::string("{\"name\":\"") + task_name(t.config().task) + "\"}"}};
        targets = default_targets(metadata, s.ids);
    }
    for (std::int32_t y : targets)
        if (y != kNoTarget && (y < 0 || y >= t.model().config().vocab))
            throw Error("target " + std::to_string(y) + " is outside the vocabulary 0 … " +
                        std::to_string(t.model().config().vocab - 1));
    return targets;
}

/// One sentence's backward (backward.hpp): {ids, targets, loss, scale, dLogits,
/// layers: [{normed, dStreamIn, dStreamOut (∂loss/∂ the residual stream into and out
/// of the layer), dAttention (∂loss/∂ the attention's output Y), wOutput, dWQuery, dWKey, dWValue, dWOutput, heads: [{query, key, value,
/// weights (this forward's: the scale switch changes them), dOutput, dWeights,
/// dScaled, dScores, dQuery, dKey, dValue}]}], gradNorms: {name: ‖∂loss/∂param‖}}.
/// options: the sequence ({ids} or {text}), targets (one per token, -1 none;
/// default: the task's, backward.hpp), scale (bool).
val trainer_backward_js(int handle, const val& options) {
    return guarded([&] {
        Trainer& t = trainer_of(handle);
        const Sequence s = sequence_from_js(t, options);
        const std::vector<std::int32_t> targets = targets_from_js(t, s, options);
        const int scale = options["scale"].isUndefined() || options["scale"].isNull() ? -1 : options["scale"].as<bool>();
        const BackwardTrace b = backward_trace(t.model().config(), t.model().params(), s.ids, targets, scale);
        val o = val::object();
        o.set("loss", b.loss);
        o.set("scale", b.config.scale);
        o.set("targets", val::array(targets.begin(), targets.end()));
        set_matrices(o, {{"dLogits", b.recorder.gradients.d_logits}, {"probabilities", b.recorder.trace.probabilities}});
        val layers = val::array();
        for (std::size_t l = 0; l < b.recorder.gradients.layers.size(); ++l) {
            const LayerGradTrace& lg = b.recorder.gradients.layers[l];
            const LayerTrace& lt = b.recorder.trace.layers[l];
            const std::string prefix = "layers." + std::to_string(l) + ".";
            const LayerBackwardWeights w{t.model().params().view(prefix + "w_output"), b.grads.view(prefix + "w_query"),
                                         b.grads.view(prefix + "w_key"), b.grads.view(prefix + "w_value"),
                                         b.grads.view(prefix + "w_output")};
            const val lo = js::layer_backward_to_js(lt, lg, w);
            layers.call<void>("push", lo);
        }
        o.set("layers", layers);
        val norms = val::object();
        for (const ParamInfo& info : b.grads.layout()) norms.set(info.name, b.grads.view(info.name).cast<double>().norm());  // in double: 256k float32 squares lose 1e-4
        o.set("gradNorms", norms);
        return o;
    });
}

/// One plain SGD step by hand (backward.hpp sgd_step) on the sentence's loss,
/// with the model's own scale: {loss (before the step), size: ‖Δθ‖}. options:
/// the sequence, targets (as trainerBackward), lr, layer and head (layer -1:
/// every parameter). The AdamW state and the step count are not touched.
val trainer_sgd_js(int handle, const val& options) {
    return guarded([&] {
        Trainer& t = trainer_of(handle);
        const Sequence s = sequence_from_js(t, options);
        const std::vector<std::int32_t> targets = targets_from_js(t, s, options);
        const BackwardTrace b = backward_trace(t.model().config(), t.model().params(), s.ids, targets);
        const double size = sgd_step(t.model().config(), t.model().params(), b.grads, options["lr"].as<double>(),
                                     options["layer"].as<int>(), options["head"].as<int>());
        val o = val::object();
        o.set("loss", b.loss);
        o.set("size", size);
        return o;
    });
}

/// Every parameter, flat in the layout's order (a copy: the playground's undo).
val trainer_parameters_js(int handle) {
    return guarded([&] {
        const std::vector<float>& w = trainer_of(handle).model().params().flat();
        return val::global("Float32Array").new_(emscripten::typed_memory_view(w.size(), w.data()));
    });
}

/// Puts back parameters from trainerParameters (bit for bit); the optimizer state is not touched.
val trainer_set_parameters_js(int handle, const val& values) {
    return guarded([&] {
        Trainer& t = trainer_of(handle);
        std::vector<float> w = emscripten::convertJSArrayToNumberVector<float>(values);
        std::vector<float>& params = t.model().params().flat();
        if (w.size() != params.size())
            throw Error(Error::Code::bad_shape, "the parameters have " + std::to_string(w.size()) + " numbers; this model has " +
                                                    std::to_string(params.size()));
        for (std::size_t i = 0; i < w.size(); ++i)
            if (!std::isfinite(w[i])) throw Error(Error::Code::not_finite, "parameter " + std::to_string(i) + " is not a finite number");
        params = std::move(w);
        return val::undefined();
    });
}

EMSCRIPTEN_BINDINGS(attention_training) {
    emscripten::function("trainTasks", &train_tasks_js);
    emscripten::function("trainerCreate", &trainer_create_js);
    emscripten::function("trainingMemory", &training_memory_js);
    emscripten::function("trainerLoad", &trainer_load_js);
    emscripten::function("trainerDispose", &trainer_dispose_js);
    emscripten::function("trainerInfo", &trainer_info_js);
    emscripten::function("trainerStep", &trainer_step_js);
    emscripten::function("trainerStepBatch", &trainer_step_batch_js);
    emscripten::function("trainerEvaluate", &trainer_evaluate_js);
    emscripten::function("trainerHeadScores", &trainer_head_scores_js);
    emscripten::function("trainerProbe", &trainer_probe_js);
    emscripten::function("trainerTrace", &trainer_trace_js);
    emscripten::function("trainerSave", &trainer_save_js);
    emscripten::function("trainerBackward", &trainer_backward_js);
    emscripten::function("trainerSgd", &trainer_sgd_js);
    emscripten::function("trainerParameters", &trainer_parameters_js);
    emscripten::function("trainerSetParameters", &trainer_set_parameters_js);
}
