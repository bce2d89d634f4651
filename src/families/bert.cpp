// BERT (transformers' BertConfig, BertForMaskedLM): post-LN, bidirectional, learned
// positions plus token types, a LayerNorm after the embeddings, nn.Linear weights
// ([out, in], transposed to ours), the masked-LM head (transform + bias) when the file has
// it, and its decoder: the word embeddings, or with tie_word_embeddings false its own
// cls.predictions.decoder.weight (as transformers unties it; a tied model's saved copy of
// the embeddings is not read).

#include "families/family.hpp"

namespace attn {
namespace bert {  // (named: the unity build compiles the families into one file)
namespace {

void read_config(const HubConfigFields& json, ModelConfig& c) {
    c.layers = json.integer("num_hidden_layers", 1, kMaxInferenceLayers);
    c.heads = json.integer("num_attention_heads", 1, kMaxInferenceDModel);
    c.d_model = json.integer("hidden_size", 1, kMaxInferenceDModel);
    c.mlp = json.integer("intermediate_size", 1, kMaxInferenceMlp);
    c.context = json.integer("max_position_embeddings", 1, kMaxInferenceContext);
    c.vocab = json.integer("vocab_size", 2, kMaxInferenceVocab);
    c.token_types = json.integer("type_vocab_size", 1, 1024, 2);
    c.ln_eps = json.epsilon("layer_norm_eps", 1e-12);
    c.activation = json.activation("hidden_act", "gelu");
    const std::string positions = json.text("position_embedding_type", "absolute");
    if (positions != "absolute")
        json.fail("\"position_embedding_type\" is \"" + positions + "\"; this engine runs \"absolute\" positions only");
    if (json.flag("is_decoder", false)) json.fail("\"is_decoder\": true is not supported");
    c.norm = Norm::post;
    c.causal = false;
    c.embed_layernorm = true;
    c.tied = json.flag("tie_word_embeddings", true);
    // the MLM head (output_transform, output_bias) is read_file's to find in the file
}

std::string read_file(const HubTensors& file, ModelConfig& c) {
    const bool head = file.has("cls.predictions.transform.dense.weight");
    c.output_transform = head;
    c.output_bias = head;
    // the decoder is the head's: without one (BertModel) the word embeddings stand in, whatever
    // config.json says; with one, untied when config.json said so (read_config), and then plan
    // needs cls.predictions.decoder.weight
    if (!head) c.tied = true;
    return file.has("bert.embeddings.word_embeddings.weight") ? "bert." : "";
}

void plan(const ModelConfig& config, HubTensors& file) {
    const std::int64_t V = config.vocab, C = config.d_model, F = config.mlp, T = config.context;
    const std::string layers = "num_hidden_layers " + std::to_string(config.layers);
    file.sizes("vocab_size " + std::to_string(V) + ", max_position_embeddings " + std::to_string(T) + ", hidden_size " +
               std::to_string(C) + ", intermediate_size " + std::to_string(F) + ", type_vocab_size " +
               std::to_string(config.token_types));
    const HubLayout same = HubLayout::same;
    const std::string e = "embeddings.";
    file.need(e + "word_embeddings.weight", {V, C}, {"embed"}, same, "the token embedding");
    file.need(e + "position_embeddings.weight", {T, C}, {"pos"}, same, "the position embedding");
    file.need(e + "token_type_embeddings.weight", {config.token_types, C}, {"token_type"}, same, "the token type embedding");
    file.need(e + "LayerNorm.weight", {C}, {"embed_ln.gain"}, same, "the embedding LayerNorm");
    file.need(e + "LayerNorm.bias", {C}, {"embed_ln.bias"}, same, "the embedding LayerNorm");
    for (int l = 0; l < config.layers; ++l) {
        const std::string b = "encoder.layer." + std::to_string(l) + ".", ours = "layers." + std::to_string(l) + ".";
        const std::string why = "layer " + std::to_string(l) + " (" + layers + ")";
        const auto linear = [&](const std::string& name, std::int64_t in, std::int64_t out, const std::string& w,
                                const std::string& bias) {
            file.need(b + name + ".weight", {out, in}, {ours + w}, HubLayout::transposed, why);  // nn.Linear [out, in]
            file.need(b + name + ".bias", {out}, {ours + bias}, same, why);
        };
        linear("attention.self.query", C, C, "w_query", "b_query");
        linear("attention.self.key", C, C, "w_key", "b_key");
        linear("attention.self.value", C, C, "w_value", "b_value");
        linear("attention.output.dense", C, C, "w_output", "b_output");
        file.need(b + "attention.output.LayerNorm.weight", {C}, {ours + "ln1.gain"}, same, why);
        file.need(b + "attention.output.LayerNorm.bias", {C}, {ours + "ln1.bias"}, same, why);
        linear("intermediate.dense", C, F, "mlp.w_in", "mlp.b_in");
        linear("output.dense", F, C, "mlp.w_out", "mlp.b_out");
        file.need(b + "output.LayerNorm.weight", {C}, {ours + "ln2.gain"}, same, why);
        file.need(b + "output.LayerNorm.bias", {C}, {ours + "ln2.bias"}, same, why);
    }
    if (config.output_transform) {
        const std::string t = "cls.predictions.transform.", why = "the masked-LM head";
        file.need(t + "dense.weight", {C, C}, {"head.w_transform"}, HubLayout::transposed, why, true);
        file.need(t + "dense.bias", {C}, {"head.b_transform"}, same, why, true);
        file.need(t + "LayerNorm.weight", {C}, {"head.ln.gain"}, same, why, true);
        file.need(t + "LayerNorm.bias", {C}, {"head.ln.bias"}, same, why, true);
        file.need("cls.predictions.bias", {V}, {"unembed_bias"}, same, why, true);
        if (!config.tied)  // nn.Linear(C, V): [V, C]
            file.need("cls.predictions.decoder.weight", {V, C}, {"unembed"}, HubLayout::transposed,
                      "the output layer (tie_word_embeddings false)", true);
    }
}

}  // namespace
}  // namespace bert

const Family& bert_family() {
    static const Family family = [] {
        Family f;
        f.name = "bert";
        f.title = "BERT";
        f.architectures = {"BertForMaskedLM", "BertForPreTraining", "BertModel"};
        f.model_types = {"bert"};
        f.read_config = bert::read_config;
        f.read_file = bert::read_file;
        f.plan = bert::plan;
        f.tokenizer = TokenizerKind::wordpiece;
        f.tokenizer_needs = "vocab.txt or tokenizer.json";
        f.generates = false;
        f.predictions = "likeliest tokens";
        f.learn_target = "the model\u2019s fill";
        return f;
    }();
    return family;
}

}  // namespace attn
