#pragma once
// `attn run --model DIR`: a Hugging Face model folder (config.json,
// model.safetensors, the tokenizer's files) loaded through the core's
// HubLoader (pretrained.hpp), streamed from disk in 1 MiB reads of the ranges
// it needs, then traced like our own checkpoints.

#include "checkpoints/pretrained.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attn::cli {

/// True when `path` names a directory.
bool is_directory(const std::string& path);

/// DIR/config.json → the config; throws attn::Error (bad_checkpoint) when the folder lacks it,
/// too_large when the model it describes is above kMaxParameterBytes (check_hub_size).
ModelConfig read_hub_folder_config(const std::string& dir);

/// DIR/model.safetensors streamed into a model through HubLoader, in reads of
/// at most `chunk` bytes of the needed ranges. Throws attn::Error (bad_checkpoint)
/// for a missing, truncated or unreadable file, and whatever HubLoader refuses.
/// keep_16bit: an F16/BF16 file stays 16-bit in memory (HubLoader).
std::unique_ptr<Model> load_hub_folder(const std::string& dir, const ModelConfig& config, std::size_t chunk = 1 << 20,
                                       bool keep_16bit = true);

struct HubRunOptions {
    std::string dir;
    std::string sentence;
    bool have_sentence = false;
    std::vector<std::int32_t> ids;  ///< --ids: token ids instead of a sentence
    std::string format = "json";
    int layer = -1;                 ///< --layer K: trace only layer K
};

/// Prints the trace of the sentence (or ids) as JSON or a table; returns the exit code.
int run_hub(const HubRunOptions& options);

struct HubGradOptions {
    std::string dir;
    std::string sentence;
    std::string target;  ///< "POS:TOKEN" (a piece of the vocabulary, or a word that is one token), empty: the default
    int scale = -1;      ///< --scale 1, --no-scale 0, -1 the model's
    int layer = 0;       ///< the layer whose parameter gradients are computed
};

/// `attn grad --model DIR --sentence S`: the backward of a loaded model (backward.hpp
/// pretrained_backward_json) plus "learn_memory_bytes" (the estimate checked before
/// allocating) and "defaults" (the targets before --target).
int grad_hub(const HubGradOptions& options);

}  // namespace attn::cli
