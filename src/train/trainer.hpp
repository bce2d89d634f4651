#pragma once
// Training: a Model, its AdamW state, a Task and the step counter, with
// deterministic batches (the batch of step k is the task's sample for
// (seed, k)), evaluation on held-out samples, and checkpoints.

#include "model/model.hpp"
#include "model/model_schema.hpp"
#include "base/settings.hpp"
#include "train/tasks.hpp"
#include "text/tokenizer.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn {

struct OptimizerConfig {
    float lr = 3e-3f;
    float beta1 = 0.9f;
    float beta2 = 0.999f;
    float eps = 1e-8f;
    float weight_decay = 0.0f;   ///< decoupled, matrices only (ParamInfo::decay)
    float clip = 0.0f;           ///< max global gradient norm, 0 = no clipping
    int warmup = 0;              ///< steps of linear learning-rate warm-up
};

/// AdamW over a flat parameter buffer.
class AdamW {
public:
    AdamW(const OptimizerConfig& config, std::size_t size);
    /// One update with the gradients of `step` (1-based). Returns the global
    /// gradient norm before clipping.
    double update(Parameters& params, const Parameters& grads, int step);
    const OptimizerConfig& config() const { return config_; }
    std::vector<float>& m() { return m_; }
    std::vector<float>& v() { return v_; }

private:
    OptimizerConfig config_;
    std::vector<float> m_, v_;
};

/// The ranges of the training settings: the one definition (rows of
/// settings.hpp's SettingRange, as the model's in model_schema.hpp). Trainer
/// (validate_train_config), the CLI's flags, the JS settings (train_bindings.cpp,
/// web/trainer.js through buildInfo) and a checkpoint's metadata all check these.
namespace settings {
//                             checkpoint key  label                                   lo     hi            whole  JS key  attn train flag
inline constexpr SettingRange length{"length", "the task's sequence size, 0 = its default", 0, 4096, true, "length", "--length"};
inline constexpr SettingRange max_vocab{"max_vocab", "the words a text model keeps", 2, kMaxTextVocab, true, "maxVocab", "--max-vocab"};
inline constexpr SettingRange lr{"lr", "the learning rate", 1e-8, 10, false, "lr", "--lr"};
inline constexpr SettingRange beta1{"beta1", "AdamW's first-moment decay", 0, 0.999999, false, "beta1", ""};
inline constexpr SettingRange beta2{"beta2", "AdamW's second-moment decay", 0, 0.999999, false, "beta2", ""};
inline constexpr SettingRange eps{"eps", "AdamW's epsilon", 1e-12, 1, false, "", ""};
inline constexpr SettingRange weight_decay{"weight_decay", "the decoupled weight decay", 0, 1, false, "weightDecay", "--weight-decay"};
inline constexpr SettingRange clip{"clip", "the gradient-norm clip, 0 = off", 0, 1e6, false, "clip", "--clip"};
inline constexpr SettingRange warmup{"warmup", "the learning-rate warm-up in steps", 0, 1000000, true, "warmup", "--warmup"};
inline constexpr SettingRange batch{"batch", "the sequences per step", 1, 4096, true, "batch", "--batch"};
inline constexpr SettingRange seed{"seed", "the seed", 0, 4294967295.0, true, "seed", "--seed"};
/// Every row above, in this order (buildInfo's trainSettings after the model's).
inline constexpr const SettingRange* kTrainSettings[] = {&length, &max_vocab, &lr, &beta1, &beta2, &eps,
                                                         &weight_decay, &clip, &warmup, &batch, &seed};
}  // namespace settings

/// The most steps a trainer counts (a checkpoint's "step" included); one more
/// step is refused (bad_state) rather than letting the counter overflow.
inline constexpr int kMaxTrainingSteps = 1000000000;

struct TrainConfig {
    TaskKind task = TaskKind::reverse;
    TaskOptions task_options;
    ModelConfig model;           ///< vocab and (if 0) context are taken from the task
    OptimizerConfig optimizer;
    int batch = 32;
    std::uint32_t seed = 1;
};

/// Throws attn::Error naming the setting and its range (settings::…) for
/// every optimizer, batch, seed and task setting outside its range; the model
/// config is validate_model_config's, the task's own ranges make_task's.
void validate_train_config(const TrainConfig& config, const std::string& where = "",
                           Error::Code code = Error::Code::bad_input);

/// What one step reports.
struct StepResult {
    int step = 0;                ///< steps done after this one
    double loss = 0;
    double accuracy = 0;         ///< on this training batch
    double grad_norm = 0;        ///< before clipping
    AttentionStats stats;
};

struct EvalResult {
    double loss = 0;
    double accuracy = 0;
    int targets = 0;
};

/// Scores of one head on a sequence against each answer key.
struct HeadScore {
    int layer = 0, head = 0;
    std::vector<std::pair<std::string, double>> scores;  ///< key name → score
};

/// What Trainer(config) and its steps need in memory (training_memory() of
/// the model fitted to the task, the batch and the task's sequence length).
/// Validates the batch size, the task options and the model config as the
/// constructor does (attn::Error); the constructor refuses settings whose
/// total is above kMaxTrainingBytes (too_large).
TrainingMemory training_memory(const TrainConfig& config);

class Trainer {
public:
    /// Validates everything (config, task options, the memory a step needs:
    /// check_training_memory, too_large) and initialises the model from the seed.
    explicit Trainer(const TrainConfig& config);
    /// From a checkpoint: the model, task and training settings come from its
    /// metadata; the optimizer state starts fresh. A text model needs its
    /// corpus to train on; without one it can still be traced and probed on
    /// given ids (step() and evaluate() then throw).
    static std::unique_ptr<Trainer> from_checkpoint(const std::string& bytes, const std::string& corpus = "");

    const TrainConfig& config() const { return config_; }
    bool has_task() const { return task_ != nullptr; }
    /// The task; throws attn::Error when there is none (see from_checkpoint).
    const Task& task() const;
    const std::vector<std::string>& vocabulary() const { return vocabulary_; }
    Model& model() { return *model_; }
    const Model& model() const { return *model_; }
    int steps_done() const { return step_; }
    /// Whether the gradients and AdamW moments are allocated: from the
    /// constructor on, but for a checkpoint only from its first step on.
    bool has_training_state() const { return optimizer_ != nullptr; }

    /// One optimizer step on the task's batch for (seed, steps_done).
    /// A non-finite loss or gradient, or an update that would take a weight
    /// outside ±kMaxAbsValue (bounds.hpp, what probe and trace accept), throws
    /// attn::Error (not_finite) naming the step and the learning rate, and
    /// leaves the weights of the step before.
    StepResult step();
    /// One step on a given batch (benchmarks, own data).
    StepResult step_on(const Batch& batch);
    /// Held-out loss and accuracy over `samples` sequences (in batches of the training batch size).
    /// The same held-out set every time (samples for indices 0, 1, …).
    EvalResult evaluate(int samples, const ForwardOptions& options = {});
    /// Each head's answer-key scores, averaged over `samples` held-out sequences.
    std::vector<HeadScore> head_scores(int samples, const ForwardOptions& options = {});

    /// The checkpoint: every parameter as an F32 tensor (shapes as in the
    /// layout) and __metadata__ {format, config (JSON), task (JSON), vocabulary (JSON list), step}.
    std::string save() const;

private:
    Trainer() = default;
    StepResult checked_update(const LossResult& forward_result);

    TrainConfig config_;
    std::unique_ptr<Task> task_;
    std::vector<std::string> vocabulary_;
    std::unique_ptr<Model> model_;
    Parameters grads_;
    std::unique_ptr<AdamW> optimizer_;
    int step_ = 0;
};

/// A recipe known to learn the task visibly within seconds: the defaults of
/// the CLI and of the training lab. `steps` is the CLI's default step count.
struct Recipe {
    TrainConfig config;
    int steps = 500;
};
Recipe default_recipe(TaskKind task);

/// Tokenizes text with the project tokenizer (lower-cased) and maps each
/// token to the model vocabulary's id ([UNK] for unknown words when the
/// vocabulary has it; otherwise an attn::Error naming the word and the
/// vocabulary's size). Offsets are those of the original text.
std::vector<Token> tokenize_for_model(const std::vector<std::string>& vocabulary, const std::string& text);

/// The model and metadata of a checkpoint, validated: a vocabulary of exactly
/// config.vocab tokens, every tensor present with its shape, nothing extra
/// (all checked on the header, before the parameters are allocated), every
/// value finite. Throws attn::Error (bad_checkpoint).
struct Checkpoint {
    ModelConfig config;
    Parameters params;
    std::map<std::string, std::string> metadata;
    std::vector<std::string> vocabulary;
};
Checkpoint load_checkpoint(const std::string& bytes);

/// The largest checkpoint file a model within the limits (model.hpp) can have:
/// 8 bytes, the largest header, 4 bytes per parameter of the largest config.
/// Readers of files (the CLI) refuse longer ones before reading them whole.
std::uint64_t max_checkpoint_bytes();

/// model_config_json, model_config_from_json: model_schema.hpp.

}  // namespace attn
