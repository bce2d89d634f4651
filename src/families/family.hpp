#pragma once
// A model family (GPT-2, BERT, …): everything that differs between the kinds of
// pretrained checkpoint this engine runs, one file per family (gpt2.cpp, bert.cpp),
// and the registry of them (families.cpp). ModelConfig::family holds a family's name
// (the checkpoint key); code outside src/families/ never compares it: it asks the
// registry (family_of(config), family_named(name), …) and reads the Family's fields or
// calls its functions. tests/js/architecture.test.mjs fails on a family's name or
// architecture written anywhere else in src/ or web/.
//
// A new family is one file, src/families/<name>.cpp, defining `const Family& <name>_family()`,
// and its line in families.cpp's list. The file gives (set as `f.name = "…";`,
// `f.architectures = {…};` …: tests/js/architecture.test.mjs reads its words there):
//   1. name ("gpt2": ModelConfig::family, `attn tokenize --family`, JS) and title ("GPT-2":
//      messages and the page);
//   2. architectures and model_types: the config.json values it accepts (registry lookups,
//      and the supported list every refusal names);
//   3. read_config: config.json's fields → ModelConfig (sizes, norm order, activation,
//      causal, …), refusing by name what the engine cannot run (HubConfigFields' readers
//      write the messages);
//   4. read_file: what model.safetensors decides: the prefix of the body's tensor names,
//      and the parts config.json does not say (an untied output layer, an output head);
//   5. plan: every tensor of parameter_layout(config) from the file's tensors, by
//      HubTensors::need (the Hub's names, shapes, transposes, splits);
//   6. tokenizer (the kind its files make: text/pretrained_tokenizer.hpp) and
//      tokenizer_needs (what those files are, in words: the CLI's and the page's messages);
//   7. generates (a causal model: "Next token", KV cache, top_next) and its words:
//      predictions ("likeliest next tokens"), learn_target ("the next token").
// Then: the layer kinds it needs (model/layers.hpp) with their references and tests, its
// test fixtures (tests/pretrained/make_checkpoints.py, one folder named after the family),
// and tests/core/test_families.cpp checks its lookups and plan without being edited.

#include "base/json_value.hpp"
#include "model/model.hpp"
#include "text/pretrained_tokenizer.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attn {

/// config.json's fields, each read with the messages every family shares (code
/// bad_checkpoint, "config.json: " before each): a family's read_config reads through it.
class HubConfigFields {
public:
    explicit HubConfigFields(const JsonValue& root) : root_(root) {}
    /// Throws bad_checkpoint: "config.json: <message>".
    [[noreturn]] static void fail(const std::string& message);
    /// Whether the field is there and not null.
    bool has(const std::string& key) const;
    /// The whole number `key` in [lo, hi]; `fallback` when absent (or null) unless it is < lo (required).
    int integer(const std::string& key, long long lo, long long hi, long long fallback = -1) const;
    /// A number in (0, 1]; `fallback` when absent.
    float epsilon(const std::string& key, double fallback) const;
    std::string text(const std::string& key, const std::string& fallback) const;
    bool flag(const std::string& key, bool fallback) const;
    /// transformers' activation names: "gelu" (erf); "gelu_new", "gelu_pytorch_tanh", "gelu_fast" (tanh).
    Activation activation(const std::string& key, const std::string& fallback) const;
    const JsonValue& root() const { return root_; }

private:
    const JsonValue& root_;
};

/// How a Hub tensor, seen as [R, K] (a vector as [1, K]), lies against our row-major
/// [in, out] tensors (checkpoints/hub_loader.cpp's one mapping rule).
enum class HubLayout {
    same,        ///< Conv1D [in, out]: as it is
    transposed,  ///< nn.Linear [out, in]
    split3,      ///< [C, 3C] (or [3C]) cut into three [C, C] (or [C]) tensors: q | k | v
};

/// The file's side of a family's read_file and plan: checkpoints/hub_loader.cpp implements it
/// on the safetensors header (the tests, on a list of names).
class HubTensors {
public:
    virtual ~HubTensors() = default;
    /// Whether the file has a tensor of exactly this name (prefix and all).
    virtual bool has(const std::string& name) const = 0;
    /// The config's sizes in the family's words, for the shape messages
    /// ("vocab_size 50257, n_positions 1024, n_embd 768, inner width 3072").
    virtual void sizes(const std::string& note) = 0;
    /// Needs the file's tensor `name` (under read_file's prefix; `top_level`: as written, for
    /// a head outside the body) of shape `shape`, into our tensors `ours` (one; three for
    /// split3) by `layout`. `why`: what needs it, for the message when it is missing.
    void need(const std::string& name, const std::vector<std::int64_t>& shape, const std::vector<std::string>& ours,
              HubLayout layout, const std::string& why, bool top_level = false) {
        add(name, shape, ours, layout, why, top_level);
    }

protected:
    virtual void add(const std::string& name, const std::vector<std::int64_t>& shape, const std::vector<std::string>& ours,
                     HubLayout layout, const std::string& why, bool top_level) = 0;
};

/// One model family: what differs, as data and functions (the opening comment's list).
struct Family {
    std::string name;                        ///< "gpt2": ModelConfig::family, --family, JS
    std::string title;                       ///< "GPT-2": messages and the page
    std::vector<std::string> architectures;  ///< config.json "architectures" it accepts
    std::vector<std::string> model_types;    ///< config.json "model_type" values it accepts
    /// config.json → the family's sizes and options (read_hub_config has set the defaults
    /// every family starts from: layernorm, learned positions, scaled scores, attention biases).
    void (*read_config)(const HubConfigFields& json, ModelConfig& config) = nullptr;
    /// What the safetensors file decides: the parts of `config` the file says, and the prefix
    /// of the body's tensor names ("transformer.", "bert.", "").
    std::string (*read_file)(const HubTensors& file, ModelConfig& config) = nullptr;
    /// Every tensor of parameter_layout(config), each exactly once, by file.need().
    void (*plan)(const ModelConfig& config, HubTensors& file) = nullptr;
    TokenizerKind tokenizer = TokenizerKind::any;
    /// The files its tokenizer is made from, in words ("tokenizer.json, or vocab.json and merges.txt").
    std::string tokenizer_needs;
    /// Causal: writes a text one token at a time (generation, the page's "Next token").
    bool generates = false;
    std::string predictions;   ///< what its top tokens are: "likeliest next tokens"
    std::string learn_target;  ///< whose answer the Learn part's default target is: "the next token"
};

// ---- the registry (families.cpp) ----------------------------------------------------------

/// Every family, in the order messages list them.
const std::vector<const Family*>& families();
/// The family of this name; nullptr for "" (our own models) and unknown names.
const Family* family_named(const std::string& name);
/// The family of a config (ModelConfig::family); nullptr for our own models.
inline const Family* family_of(const ModelConfig& config) { return family_named(config.family); }
/// The family that accepts this config.json "architectures" entry / "model_type"; nullptr when none.
const Family* family_by_architecture(const std::string& architecture);
const Family* family_by_model_type(const std::string& model_type);
/// The first family whose tokenizer is of this kind (a tokenizer read without a family); nullptr when none.
const Family* family_by_tokenizer(TokenizerKind kind);

/// "GPT-2 and BERT": every family's title, for messages.
std::string family_titles();
/// "gpt2 or bert": every family's name, for messages.
std::string family_choices();
/// "this page runs GPT-2 and BERT models (GPT2LMHeadModel, …)": what every refusal of a config names.
std::string supported_families();

/// The family a config.json is of, from "model_type", else from the first of "architectures";
/// refuses an unknown architecture or model type, or a disagreement, by name (bad_checkpoint).
const Family& hub_family(const HubConfigFields& json);

/// The config with every part the weights file may add (read_file on a file holding every
/// tensor: an untied output layer, BERT's masked-LM head), for an estimate made before the
/// weights are read. Our own models' config as it is.
ModelConfig largest_file_config(const ModelConfig& config);
/// The config with none of those parts (read_file on a file holding no optional tensor):
/// the smallest model config.json allows. Our own models' config as it is.
ModelConfig smallest_file_config(const ModelConfig& config);

/// read_tokenizer for a family by name ("" = whichever the files make): its tokenizer kind,
/// and its name and title in the messages. An unknown name is refused (bad_checkpoint).
std::unique_ptr<PretrainedTokenizer> read_family_tokenizer(const std::string& family, const std::string& tokenizer_json,
                                                           const std::string& vocab_json, const std::string& merges_txt,
                                                           const std::string& vocab_txt,
                                                           const std::string& tokenizer_config_json);

}  // namespace attn
