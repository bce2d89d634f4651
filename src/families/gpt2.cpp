// GPT-2 (transformers' GPT2Config, GPT2LMHeadModel): pre-LN, causal, learned positions,
// gelu_new, Conv1D weights ([in, out], our layout) with the attention's q | k | v in one
// c_attn matrix, an output layer tied to the token embedding unless the file has lm_head.

#include "families/family.hpp"

namespace attn {
namespace gpt2 {  // (named: the unity build compiles the families into one file)
namespace {

void read_config(const HubConfigFields& json, ModelConfig& c) {
    c.layers = json.integer("n_layer", 1, kMaxInferenceLayers);
    c.heads = json.integer("n_head", 1, kMaxInferenceDModel);
    c.d_model = json.integer("n_embd", 1, kMaxInferenceDModel);
    const bool old = !json.has("n_positions") && json.root().get("n_ctx");  // configs before n_positions
    c.context = json.integer(old ? "n_ctx" : "n_positions", 1, kMaxInferenceContext);
    c.vocab = json.integer("vocab_size", 2, kMaxInferenceVocab);
    c.ln_eps = json.epsilon("layer_norm_epsilon", 1e-5);
    c.activation = json.activation("activation_function", "gelu_new");
    c.mlp = json.integer("n_inner", 1, kMaxInferenceMlp, 4LL * c.d_model);
    if (c.mlp > kMaxInferenceMlp)
        json.fail("4 × n_embd = " + std::to_string(c.mlp) + " (n_inner null) is above the limit of " +
                  std::to_string(kMaxInferenceMlp));
    if (!json.flag("scale_attn_weights", true)) json.fail("\"scale_attn_weights\": false is not supported");
    if (json.flag("scale_attn_by_inverse_layer_idx", false))
        json.fail("\"scale_attn_by_inverse_layer_idx\": true is not supported");
    if (json.flag("add_cross_attention", false)) json.fail("\"add_cross_attention\": true is not supported");
    c.norm = Norm::pre;
    c.causal = true;
    c.tied = true;  // read_file unties it when the file has lm_head.weight
}

std::string read_file(const HubTensors& file, ModelConfig& c) {
    c.tied = !file.has("lm_head.weight");
    return file.has("transformer.wte.weight") ? "transformer." : "";
}

void plan(const ModelConfig& config, HubTensors& file) {
    const std::int64_t V = config.vocab, C = config.d_model, F = config.mlp, T = config.context;
    const std::string layers = "n_layer " + std::to_string(config.layers);
    file.sizes("vocab_size " + std::to_string(V) + ", n_positions " + std::to_string(T) + ", n_embd " + std::to_string(C) +
               ", inner width " + std::to_string(F));
    const HubLayout same = HubLayout::same;
    file.need("wte.weight", {V, C}, {"embed"}, same, "the token embedding");
    file.need("wpe.weight", {T, C}, {"pos"}, same, "the position embedding");
    for (int l = 0; l < config.layers; ++l) {
        const std::string h = "h." + std::to_string(l) + ".", ours = "layers." + std::to_string(l) + ".";
        const std::string why = "layer " + std::to_string(l) + " (" + layers + ")";
        file.need(h + "ln_1.weight", {C}, {ours + "ln1.gain"}, same, why);
        file.need(h + "ln_1.bias", {C}, {ours + "ln1.bias"}, same, why);
        file.need(h + "attn.c_attn.weight", {C, 3 * C}, {ours + "w_query", ours + "w_key", ours + "w_value"},
                  HubLayout::split3, why);
        file.need(h + "attn.c_attn.bias", {3 * C}, {ours + "b_query", ours + "b_key", ours + "b_value"},
                  HubLayout::split3, why);
        file.need(h + "attn.c_proj.weight", {C, C}, {ours + "w_output"}, same, why);
        file.need(h + "attn.c_proj.bias", {C}, {ours + "b_output"}, same, why);
        file.need(h + "ln_2.weight", {C}, {ours + "ln2.gain"}, same, why);
        file.need(h + "ln_2.bias", {C}, {ours + "ln2.bias"}, same, why);
        file.need(h + "mlp.c_fc.weight", {C, F}, {ours + "mlp.w_in"}, same, why);
        file.need(h + "mlp.c_fc.bias", {F}, {ours + "mlp.b_in"}, same, why);
        file.need(h + "mlp.c_proj.weight", {F, C}, {ours + "mlp.w_out"}, same, why);
        file.need(h + "mlp.c_proj.bias", {C}, {ours + "mlp.b_out"}, same, why);
    }
    file.need("ln_f.weight", {C}, {"final_ln.gain"}, same, "the final LayerNorm");
    file.need("ln_f.bias", {C}, {"final_ln.bias"}, same, "the final LayerNorm");
    if (!config.tied) file.need("lm_head.weight", {V, C}, {"unembed"}, HubLayout::transposed, "the output layer", true);
}

}  // namespace
}  // namespace gpt2

const Family& gpt2_family() {
    static const Family family = [] {
        Family f;
        f.name = "gpt2";
        f.title = "GPT-2";
        f.architectures = {"GPT2LMHeadModel", "GPT2Model"};
        f.model_types = {"gpt2"};
        f.read_config = gpt2::read_config;
        f.read_file = gpt2::read_file;
        f.plan = gpt2::plan;
        f.tokenizer = TokenizerKind::byte_level_bpe;
        f.tokenizer_needs = "tokenizer.json, or vocab.json and merges.txt";
        f.generates = true;
        f.predictions = "likeliest next tokens";
        f.learn_target = "the next token";
        return f;
    }();
    return family;
}

}  // namespace attn
