#pragma once
// The size limits of a model, by kind: one that is trained and one that is
// only run (a loaded checkpoint). The model schema (model_schema.hpp) checks a
// config against one of these sets; the tokenizers bound a vocabulary by the
// inference set.

namespace attn {

/// The largest model of one kind: the bounds of the model schema's size rows
/// (model/model_schema.hpp), which check_model_config checks a config against.
struct ModelLimits {
    int vocab, context, layers, d_model, mlp;
};
/// A model that is trained (Trainer, Model::forward with backward; documented in docs/training.md).
inline constexpr ModelLimits kTrainingLimits{50000, 512, 12, 512, 2048};
/// A model that is only run, never trained (a loaded checkpoint: trace, Model::run):
/// gpt2-xl is L=48, C=1600, V=50257, T=1024.
inline constexpr ModelLimits kInferenceLimits{262144, 2048, 48, 2048, 8192};

inline constexpr int kMaxModelLayers = kTrainingLimits.layers;
inline constexpr int kMaxModelDModel = kTrainingLimits.d_model;
inline constexpr int kMaxModelMlp = kTrainingLimits.mlp;
inline constexpr int kMaxModelVocab = kTrainingLimits.vocab;
inline constexpr int kMaxModelContext = kTrainingLimits.context;

/// Limits of a model that is only run, never trained (a loaded checkpoint): the
/// named set kInferenceLimits, which the model schema checks against.
inline constexpr int kMaxInferenceLayers = kInferenceLimits.layers;
inline constexpr int kMaxInferenceDModel = kInferenceLimits.d_model;
inline constexpr int kMaxInferenceMlp = kInferenceLimits.mlp;
inline constexpr int kMaxInferenceVocab = kInferenceLimits.vocab;
inline constexpr int kMaxInferenceContext = kInferenceLimits.context;

}  // namespace attn
