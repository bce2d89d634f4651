#include "train/trainer.hpp"

#include "kernels/bounds.hpp"

#include "attention/json.hpp"
#include "base/json_value.hpp"
#include "kernels/kernels.hpp"
#include "checkpoints/safetensors.hpp"
#include "train/task_registry.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

namespace attn {

// ---- settings: the one range check -----------------------------------------------------

namespace {

void validate_optimizer(const OptimizerConfig& o, const std::string& where = "", Error::Code code = Error::Code::bad_input) {
    check_setting(settings::lr, o.lr, where, code);
    check_setting(settings::beta1, o.beta1, where, code);
    check_setting(settings::beta2, o.beta2, where, code);
    check_setting(settings::eps, o.eps, where, code);
    check_setting(settings::weight_decay, o.weight_decay, where, code);
    check_setting(settings::clip, o.clip, where, code);
    check_setting(settings::warmup, o.warmup, where, code);
}

}  // namespace

void validate_train_config(const TrainConfig& c, const std::string& where, Error::Code code) {
    validate_optimizer(c.optimizer, where, code);
    check_setting(settings::batch, c.batch, where, code);
    check_setting(settings::seed, c.seed, where, code);
    check_setting(settings::length, c.task_options.length, where, code);
    check_setting(settings::max_vocab, c.task_options.max_vocab, where, code);
}

// ---- AdamW ---------------------------------------------------------------------------

AdamW::AdamW(const OptimizerConfig& config, std::size_t size) : config_(config), m_(size, 0.0f), v_(size, 0.0f) {
    validate_optimizer(config);
}

double AdamW::update(Parameters& params, const Parameters& grads, int step) {
    const std::vector<float>& g = grads.flat();
    std::vector<float>& p = params.flat();
    double sq = 0;
    for (float x : g) sq += static_cast<double>(x) * x;
    const double norm = std::sqrt(sq);
    // clip by the global norm (as torch.nn.utils.clip_grad_norm_: factor clip / (norm + 1e-6))
    const float clip = config_.clip > 0 && norm > config_.clip ? static_cast<float>(config_.clip / (norm + 1e-6)) : 1.0f;
    const double warm = config_.warmup > 0 ? std::min(1.0, static_cast<double>(step) / config_.warmup) : 1.0;
    const float lr = static_cast<float>(config_.lr * warm);
    const float b1 = config_.beta1, b2 = config_.beta2;
    const float c1 = static_cast<float>(1.0 - std::pow(static_cast<double>(b1), step));
    const float c2 = static_cast<float>(1.0 - std::pow(static_cast<double>(b2), step));
    for (const ParamInfo& info : params.layout()) {
        // decoupled decay first, as torch.optim.AdamW: p ← p − lr·wd·p
        const float decay = info.decay ? lr * config_.weight_decay : 0.0f;
        for (std::size_t i = info.offset; i < info.offset + info.size(); ++i) {
            const float gi = g[i] * clip;
            m_[i] = b1 * m_[i] + (1.0f - b1) * gi;
            v_[i] = b2 * v_[i] + (1.0f - b2) * gi * gi;
            const float mhat = m_[i] / c1, vhat = v_[i] / c2;
            p[i] -= decay * p[i];
            p[i] -= lr * mhat / (std::sqrt(vhat) + config_.eps);
        }
    }
    return norm;
}

// ---- checkpoint metadata ----------------------------------------------------------------

namespace {

const char* kFormat = "attention-playground-model/1";

/// How a checkpoint's JSON metadata is read: its errors are bad_checkpoint.
JsonOptions checkpoint_json() {
    JsonOptions o;
    o.code = Error::Code::bad_checkpoint;
    return o;
}

/// No NaN or infinity (bounds.hpp).
bool all_finite(const std::vector<float>& v) { return attn::all_finite(v.data(), v.size()); }

std::string step_failure(int step, const char* what, float lr) {
    std::ostringstream o;
    o << "step " << step << ": " << what << " is not finite (NaN or infinity); the learning rate " << lr
      << " is probably too high (or the gradients exploded: try gradient clipping). Training stopped; the weights "
         "after step "
      << step - 1 << " are kept.";
    return o.str();
}

std::string step_out_of_range(int step, float lr) {
    std::ostringstream o;
    o << "step " << step << ": an updated weight is outside the range -" << kMaxAbsValue << " to " << kMaxAbsValue
      << " that the engine accepts (" << kBoundReason << "); the learning rate " << lr
      << " is probably too high (or the gradients exploded: try gradient clipping). Training stopped; the weights "
         "after step "
      << step - 1 << " are kept.";
    return o.str();
}

}  // namespace

// ---- recipes -------------------------------------------------------------------------------

Recipe default_recipe(TaskKind task) {
    const TaskInfo& info = task_info(task);
    const TaskRecipe& t = info.recipe;
    Recipe r;
    TrainConfig& c = r.config;
    c.task = task;
    c.model.layers = t.layers;
    c.model.d_model = t.d_model;
    c.model.heads = t.heads;
    c.model.mlp = t.mlp;
    c.model.layernorm = t.layernorm;
    c.model.positional = Positional::learned;
    c.model.context = 0;  // the task's
    c.model.causal = info.causal;  // the task's natural mask (a text corpus is next-word prediction: causal)
    c.optimizer.lr = t.lr;
    c.optimizer.clip = 1.0f;  // global-norm clipping: keeps lr 1e-2 stable after a phase change (measured)
    c.batch = t.batch;
    c.seed = 1;
    r.steps = t.steps;
    return r;
}

std::vector<Token> tokenize_for_model(const std::vector<std::string>& vocabulary, const std::string& text) {
    std::vector<Token> tokens = tokenize(text, TokenizeOptions{true});
    int unknown = -1;
    std::unordered_map<std::string, int> index;
    for (std::size_t i = 0; i < vocabulary.size(); ++i) {
        index.emplace(vocabulary[i], static_cast<int>(i));
        if (vocabulary[i] == "[UNK]") unknown = static_cast<int>(i);
    }
    for (Token& t : tokens) {
        const auto it = index.find(t.text);
        if (it != index.end()) {
            t.id = it->second;
        } else if (unknown >= 0) {
            t.id = unknown;
        } else {
            throw Error(Error::Code::unknown_word, "\"" + t.text + "\" is not in the model's vocabulary of " + std::to_string(vocabulary.size()) +
                        " tokens (and it has no [UNK])");
        }
    }
    return tokens;
}

// ---- checkpoints --------------------------------------------------------------------------

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
    return out + "]";
}

/// The checkpoint's "vocabulary": a JSON list of exactly `vocab` strings (the
/// model's ids 0 … vocab − 1 name these tokens; a shorter list would leave ids
/// without a name, a longer one names ids the model cannot produce).
std::vector<std::string> checkpoint_vocabulary(const std::map<std::string, std::string>& metadata, int vocab) {
    const auto it = metadata.find("vocabulary");
    if (it == metadata.end())
        throw Error(Error::Code::bad_checkpoint, "checkpoint metadata has no \"vocabulary\" (a JSON list of the config's " +
                    std::to_string(vocab) + " token strings, id order)");
    const JsonValue list = parse_json(it->second, checkpoint_json());
    if (!list.is(JsonValue::Type::array)) throw Error(Error::Code::bad_checkpoint, "checkpoint vocabulary must be a JSON list of strings");
    std::vector<std::string> out;
    for (const JsonValue& t : list.array) {
        if (!t.is(JsonValue::Type::string)) throw Error(Error::Code::bad_checkpoint, "checkpoint vocabulary must be a JSON list of strings");
        out.push_back(t.string);
    }
    if (static_cast<std::int64_t>(out.size()) != vocab)
        throw Error(Error::Code::bad_checkpoint, "checkpoint vocabulary has " + std::to_string(out.size()) +
                    " tokens but the config says vocab " + std::to_string(vocab));
    return out;
}

}  // namespace

Checkpoint load_checkpoint(const std::string& bytes) {
    const SafeTensorsIndex file = read_safetensors_index(bytes);
    Checkpoint out;
    out.metadata = file.metadata;
    const auto config = file.metadata.find("config");
    if (config == file.metadata.end())
        throw Error(Error::Code::bad_checkpoint, "not a model checkpoint: __metadata__ has no \"config\" (a JSON model config)");
    try {
        out.config = model_config_from_json(config->second);
    } catch (const Error& e) {
        throw Error(Error::Code::bad_checkpoint, e.what(), e.kind());  // a checkpoint's config is the checkpoint's fault
    }
    out.vocabulary = checkpoint_vocabulary(file.metadata, out.config.vocab);
    // The header against the config first: a small file whose config claims a
    // large model is refused before the model's buffer exists.
    const std::vector<ParamInfo> layout = parameter_layout(out.config);
    for (const ParamInfo& p : layout) {
        const TensorEntry* t = file.find(p.name);
        if (!t) throw Error(Error::Code::bad_checkpoint, "checkpoint is missing tensor \"" + p.name + "\"");
        const std::vector<std::int64_t> want = p.vector ? std::vector<std::int64_t>{p.cols}
                                                        : std::vector<std::int64_t>{p.rows, p.cols};
        if (t->shape != want)
            throw Error(Error::Code::bad_checkpoint, "checkpoint tensor \"" + p.name + "\" has shape " + shape_text(t->shape) +
                        ", the config needs " + shape_text(want));
    }
    std::set<std::string> names;
    for (const ParamInfo& p : layout) names.insert(p.name);
    for (const TensorEntry& t : file.tensors) {
        if (!names.count(t.name))
            throw Error(Error::Code::bad_checkpoint, "checkpoint has tensor \"" + t.name + "\", which this model config does not use");
    }
    out.params = Parameters(out.config);
    for (const ParamInfo& p : layout) {
        const TensorEntry& t = *file.find(p.name);
        float* to = out.params.flat().data() + p.offset;
        for (std::size_t i = 0; i < p.size(); ++i) {
            to[i] = tensor_float(bytes, file, t, i);
            if (!std::isfinite(to[i]))
                throw Error(Error::Code::bad_checkpoint, "checkpoint tensor \"" + p.name + "\" holds NaN or infinity (entry " + std::to_string(i) +
                            ")");
        }
    }
    return out;
}

std::uint64_t max_checkpoint_bytes() {
    ModelConfig largest;  // every size at its limit, every optional tensor present
    largest.vocab = kMaxModelVocab;
    largest.context = kMaxModelContext;
    largest.layers = kMaxModelLayers;
    largest.d_model = kMaxModelDModel;
    largest.heads = 1;
    largest.mlp = kMaxModelMlp;
    largest.layernorm = true;
    largest.positional = Positional::learned;
    largest.tied = false;
    std::uint64_t floats = 0;
    for (const ParamInfo& p : parameter_layout(largest)) floats += p.size();
    return 8 + kMaxSafetensorsHeader + 4 * floats;
}

// ---- the trainer ------------------------------------------------------------------------------

namespace {

void fit_model_to_task(ModelConfig& model, const Task& task) {
    model.vocab = task.vocabulary().size();
    if (model.context == 0) model.context = task.context();
    if (model.context < task.context())
        throw Error("context " + std::to_string(model.context) + " is shorter than the task's sequences (" +
                    std::to_string(task.context()) + " tokens)");
}

}  // namespace

TrainingMemory training_memory(const TrainConfig& config) {
    validate_train_config(config);
    const std::unique_ptr<Task> task = make_task(config.task, config.task_options);
    ModelConfig model = config.model;
    fit_model_to_task(model, *task);
    return training_memory(model, config.batch, task->context());
}

Trainer::Trainer(const TrainConfig& config) : config_(config) {
    validate_train_config(config_);
    task_ = make_task(config_.task, config_.task_options);
    fit_model_to_task(config_.model, *task_);
    check_training_memory(config_.model, config_.batch, task_->context());  // before the model is allocated
    vocabulary_ = task_->vocabulary().tokens();
    model_ = std::make_unique<Model>(config_.model);
    init_parameters(config_.model, config_.seed, model_->params());
    grads_ = Parameters(config_.model);
    optimizer_ = std::make_unique<AdamW>(config_.optimizer, model_->params().size());
}

const Task& Trainer::task() const {
    if (!task_)
        throw Error("this model was trained on a text that is not loaded: give the corpus to train or evaluate it");
    return *task_;
}

namespace {

/// A checkpoint's JSON metadata object `group` ("train", "task"), or an empty object when absent.
JsonValue checkpoint_group(const std::map<std::string, std::string>& metadata, const char* group) {
    const auto it = metadata.find(group);
    if (it == metadata.end()) return JsonValue{};
    JsonValue v = parse_json(it->second, checkpoint_json());
    if (!v.is(JsonValue::Type::object))
        throw Error(Error::Code::bad_checkpoint, std::string("checkpoint metadata ") + group + " must be a JSON object");
    return v;
}

/// The setting `range.name` of a metadata group, checked against its range
/// (the same check as every other path), or `fallback` when absent.
double checkpoint_setting(const JsonValue& group, const char* group_name, const SettingRange& range, double fallback) {
    const std::string where = std::string("checkpoint metadata ") + group_name + ".";
    const JsonValue* v = group.get(range.name);
    if (!v) return fallback;
    if (!v->is(JsonValue::Type::number)) throw Error(Error::Code::bad_checkpoint, where + range.name + " must be a number");
    return check_setting(range, v->number, where, Error::Code::bad_checkpoint);
}

/// The checkpoint's "step": decimal digits, 0 … kMaxTrainingSteps (0 when absent).
int checkpoint_step(const std::map<std::string, std::string>& metadata) {
    const auto it = metadata.find("step");
    if (it == metadata.end()) return 0;
    const std::string& s = it->second;
    bool digits = !s.empty() && s.size() <= 10;
    for (const char ch : s) digits = digits && ch >= '0' && ch <= '9';
    const long long n = digits ? std::stoll(s) : -1;
    if (n < 0 || n > kMaxTrainingSteps)
        throw Error(Error::Code::bad_checkpoint, "checkpoint metadata step \"" + s.substr(0, 32) + "\" is not a step count from 0 to " +
                    std::to_string(kMaxTrainingSteps));
    return static_cast<int>(n);
}

}  // namespace

std::unique_ptr<Trainer> Trainer::from_checkpoint(const std::string& bytes, const std::string& corpus) {
    Checkpoint cp = load_checkpoint(bytes);
    std::unique_ptr<Trainer> t(new Trainer());
    TrainConfig& tc = t->config_;
    tc.model = cp.config;
    const bool have_task = cp.metadata.count("task") > 0;
    const JsonValue task = checkpoint_group(cp.metadata, "task");
    if (const JsonValue* name = task.get("name")) {
        if (!name->is(JsonValue::Type::string))
            throw Error(Error::Code::bad_checkpoint, "checkpoint metadata task.name must be a string");
        try {
            tc.task = parse_task(name->string);
        } catch (const Error& e) {
            throw Error(Error::Code::bad_checkpoint, std::string("checkpoint metadata task.name: ") + e.what());
        }
    }
    TaskOptions& to = tc.task_options;
    to.length = static_cast<int>(checkpoint_setting(task, "task", settings::length, 0));
    to.max_vocab = static_cast<int>(checkpoint_setting(task, "task", settings::max_vocab, to.max_vocab));
    const JsonValue train = checkpoint_group(cp.metadata, "train");
    OptimizerConfig& o = tc.optimizer;
    tc.batch = static_cast<int>(checkpoint_setting(train, "train", settings::batch, tc.batch));
    tc.seed = static_cast<std::uint32_t>(checkpoint_setting(train, "train", settings::seed, tc.seed));
    o.lr = static_cast<float>(checkpoint_setting(train, "train", settings::lr, o.lr));
    o.beta1 = static_cast<float>(checkpoint_setting(train, "train", settings::beta1, o.beta1));
    o.beta2 = static_cast<float>(checkpoint_setting(train, "train", settings::beta2, o.beta2));
    o.eps = static_cast<float>(checkpoint_setting(train, "train", settings::eps, o.eps));
    o.weight_decay = static_cast<float>(checkpoint_setting(train, "train", settings::weight_decay, o.weight_decay));
    o.clip = static_cast<float>(checkpoint_setting(train, "train", settings::clip, o.clip));
    o.warmup = static_cast<int>(checkpoint_setting(train, "train", settings::warmup, o.warmup));
    validate_train_config(tc, "checkpoint metadata: ", Error::Code::bad_checkpoint);
    if (have_task && (tc.task != TaskKind::text || !corpus.empty())) {
        if (tc.task == TaskKind::text) {
            to.corpus = corpus;
            t->task_ = make_task(tc.task, to);  // errors here are the corpus's (the options were checked above)
        } else {
            try {
                t->task_ = make_task(tc.task, to);
            } catch (const Error& e) {
                throw Error(Error::Code::bad_checkpoint, std::string("checkpoint metadata task: ") + e.what());
            }
        }
        if (t->task_->vocabulary().tokens() != cp.vocabulary)
            throw Error(Error::Code::bad_checkpoint, std::string("the checkpoint's vocabulary differs from the ") + task_name(tc.task) +
                        " task's (a different corpus or task version)");
        if (t->task_->context() > cp.config.context)
            throw Error(Error::Code::bad_checkpoint, std::string("checkpoint metadata task: the ") + task_name(tc.task) + " task's sequences have " +
                        std::to_string(t->task_->context()) + " tokens, more than the config's context " +
                        std::to_string(cp.config.context));
        to.corpus.clear();
    }
    t->vocabulary_ = cp.vocabulary;
    t->model_ = std::make_unique<Model>(cp.config);
    t->model_->params() = std::move(cp.params);
    // no gradients or AdamW moments yet: a checkpoint loaded to be run (traced,
    // probed) never needs them; the first step allocates them
    t->step_ = checkpoint_step(cp.metadata);
    return t;
}

StepResult Trainer::step() {
    const Batch batch = task().sample(config_.batch, config_.seed, static_cast<std::uint64_t>(step_), Split::train);
    return step_on(batch);
}

StepResult Trainer::step_on(const Batch& batch) {
    if (step_ >= kMaxTrainingSteps)
        throw Error(Error::Code::bad_state, "this trainer has done " + std::to_string(step_) +
                    " steps, the most a trainer counts: its step counter (and the batch it picks) cannot go further");
    return checked_update(model_->forward(batch));
}

StepResult Trainer::checked_update(const LossResult& r) {
    const int next = step_ + 1;
    if (!std::isfinite(r.loss)) throw Error(Error::Code::not_finite, step_failure(next, "the loss", config_.optimizer.lr));
    StepResult out;
    out.stats = r.stats;
    if (!optimizer_) optimizer_ = std::make_unique<AdamW>(config_.optimizer, model_->params().size());
    model_->backward(grads_, &out.stats);  // allocates grads_ on the first step
    if (!all_finite(grads_.flat()))
        throw Error(Error::Code::not_finite, step_failure(next, "a gradient", config_.optimizer.lr));
    // keep the last finite state so a step that overflows leaves nothing poisoned
    const std::vector<float> p = model_->params().flat(), m = optimizer_->m(), v = optimizer_->v();
    out.grad_norm = optimizer_->update(model_->params(), grads_, next);
    // every weight within ±kMaxAbsValue, the bound the rest of the engine (trace_model, probe, checkpoints'
    // readers) accepts (bounds.hpp): a model training produced can always be shown
    const std::vector<float>& updated = model_->params().flat();
    if (!all_within_bound(updated.data(), updated.size())) {
        const bool finite = all_finite(updated.data(), updated.size());
        model_->params().flat() = p;
        optimizer_->m() = m;
        optimizer_->v() = v;
        throw Error(Error::Code::not_finite, finite ? step_out_of_range(next, config_.optimizer.lr)
                                                    : step_failure(next, "an updated weight", config_.optimizer.lr));
    }
    step_ = next;
    out.step = step_;
    out.loss = r.loss;
    out.accuracy = r.targets > 0 ? static_cast<double>(r.correct) / r.targets : 0.0;
    return out;
}

EvalResult Trainer::evaluate(int samples, const ForwardOptions& options) {
    if (samples < 1 || samples > 100000)
        throw Error("evaluation samples must be from 1 to 100000, got " + std::to_string(samples));
    const Task& t = task();
    EvalResult out;
    double loss_sum = 0;
    int correct = 0;
    for (int done = 0, index = 0; done < samples; ++index) {
        const int b = std::min(config_.batch, samples - done);
        const LossResult r =
            model_->run(t.sample(b, config_.seed, static_cast<std::uint64_t>(index), Split::heldout), options);
        loss_sum += r.loss * r.targets;
        out.targets += r.targets;
        correct += r.correct;
        done += b;
    }
    out.loss = out.targets > 0 ? loss_sum / out.targets : 0.0;
    out.accuracy = out.targets > 0 ? static_cast<double>(correct) / out.targets : 0.0;
    return out;
}

std::vector<HeadScore> Trainer::head_scores(int samples, const ForwardOptions& options) {
    if (samples < 1 || samples > 10000)
        throw Error("head-score samples must be from 1 to 10000, got " + std::to_string(samples));
    const Task& t = task();
    const int L = config_.model.layers, H = config_.model.heads;
    std::vector<HeadScore> out(static_cast<std::size_t>(L * H));
    std::vector<std::vector<double>> sums(static_cast<std::size_t>(L * H));
    std::vector<std::string> names;
    int seen = 0;
    for (int done = 0, index = 0; done < samples; ++index) {
        const int nb = std::min(config_.batch, samples - done);
        const Batch batch = t.sample(nb, config_.seed, static_cast<std::uint64_t>(index), Split::heldout);
        model_->forward(batch, options);
        for (int b = 0; b < nb; ++b) {
            const std::vector<std::int32_t> ids(batch.ids.begin() + static_cast<std::ptrdiff_t>(b) * batch.length,
                                                batch.ids.begin() + static_cast<std::ptrdiff_t>(b + 1) * batch.length);
            const std::vector<AnswerKey> keys = t.answer_keys(ids, batch.real_length(b));
            if (names.empty())
                for (const AnswerKey& k : keys) names.push_back(k.name);
            for (int l = 0; l < L; ++l)
                for (int h = 0; h < H; ++h) {
                    std::vector<double>& s = sums[static_cast<std::size_t>(l * H + h)];
                    s.resize(keys.size(), 0.0);
                    for (std::size_t k = 0; k < keys.size() && k < s.size(); ++k)
                        s[k] += answer_key_score(model_->attention(b, l, h), keys[k].key);
                }
            ++seen;
        }
        done += nb;
    }
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h) {
            HeadScore& hs = out[static_cast<std::size_t>(l * H + h)];
            hs.layer = l;
            hs.head = h;
            const std::vector<double>& s = sums[static_cast<std::size_t>(l * H + h)];
            for (std::size_t k = 0; k < names.size() && k < s.size(); ++k)
                hs.scores.emplace_back(names[k], seen > 0 ? s[k] / seen : 0.0);
        }
    return out;
}

std::string Trainer::save() const {
    SafeTensors file;
    const Parameters& params = model_->params();
    for (const ParamInfo& p : params.layout()) {
        Tensor t;
        t.name = p.name;
        t.shape = p.vector ? std::vector<std::int64_t>{p.cols} : std::vector<std::int64_t>{p.rows, p.cols};
        t.data.assign(params.flat().begin() + static_cast<std::ptrdiff_t>(p.offset),
                      params.flat().begin() + static_cast<std::ptrdiff_t>(p.offset + p.size()));
        file.tensors.push_back(std::move(t));
    }
    file.metadata["format"] = kFormat;
    file.metadata["config"] = model_config_json(config_.model);
    // a model loaded from a checkpoint without a task has none to write (a
    // text model loaded without its corpus still names its task)
    if (task_ || config_.task == TaskKind::text) {
        std::ostringstream task;
        task << "{\"name\":\"" << task_name(config_.task) << "\",\"length\":" << config_.task_options.length;
        if (config_.task == TaskKind::text) task << ",\"max_vocab\":" << config_.task_options.max_vocab;
        task << "}";
        file.metadata["task"] = task.str();
    }
    std::string vocab = "[";
    for (std::size_t i = 0; i < vocabulary_.size(); ++i) vocab += (i ? "," : "") + json_quote(vocabulary_[i]);
    file.metadata["vocabulary"] = vocab + "]";
    std::ostringstream train;
    train.precision(9);
    const OptimizerConfig& o = config_.optimizer;
    train << "{\"lr\":" << o.lr << ",\"beta1\":" << o.beta1 << ",\"beta2\":" << o.beta2 << ",\"eps\":" << o.eps
          << ",\"weight_decay\":" << o.weight_decay << ",\"clip\":" << o.clip << ",\"warmup\":" << o.warmup
          << ",\"batch\":" << config_.batch << ",\"seed\":" << config_.seed << "}";
    file.metadata["train"] = train.str();
    file.metadata["step"] = std::to_string(step_);
    return write_safetensors(file);
}

}  // namespace attn
