#include "model/model_json.hpp"

#include "attention/json.hpp"
#include "model/model_schema.hpp"

#include <cstdio>

namespace attn {
namespace {

void put_key(std::string& out, const char* key) {
    out += '"';
    out += key;
    out += "\":";
}

/// `,"key":matrix` (without the comma for the first member of an object).
void put_matrix_field(std::string& out, const char* key, const Eigen::Ref<const Matrix>& m, bool first = false) {
    if (!first) out += ',';
    put_key(out, key);
    json_put_matrix(out, m);
}

void put_tensors(std::string& out, const Parameters& p) {
    out += '{';
    bool first = true;
    for (const ParamInfo& info : p.layout()) {
        if (!first) out += ',';
        first = false;
        out += json_quote(info.name) + ':';
        const Matrix v = p.matrix(info.name);  // row-major, however it is stored
        if (info.vector) {
            out += '[';
            for (int j = 0; j < info.cols; ++j) {
                if (j) out += ',';
                json_put_float(out, v(0, j));
            }
            out += ']';
        } else {
            json_put_matrix(out, v);
        }
    }
    out += '}';
}

void put_int_rows(std::string& out, const std::vector<std::int32_t>& v, int rows, int cols) {
    out += '[';
    for (int i = 0; i < rows; ++i) {
        if (i) out += ',';
        out += '[';
        for (int j = 0; j < cols; ++j) {
            if (j) out += ',';
            out += std::to_string(v[static_cast<std::size_t>(i) * cols + j]);
        }
        out += ']';
    }
    out += ']';
}

}  // namespace

std::string model_trace_json(const ModelConfig& config, const std::vector<Token>& tokens, const ModelTrace& tr) {
    std::string o = "{";
    put_key(o, "config");
    o += model_config_json(config);
    o += ',';
    put_key(o, "tokens");
    o += '[';
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (i) o += ',';
        o += "{\"text\":" + json_quote(tokens[i].text) + ",\"id\":" + std::to_string(tokens[i].id) +
             ",\"start\":" + std::to_string(tokens[i].start) + ",\"end\":" + std::to_string(tokens[i].end) + "}";
    }
    o += "],";
    put_key(o, "embeddings");
    json_put_matrix(o, tr.embeddings);
    put_matrix_field(o, "positional", tr.positional);
    if (config.token_types > 0) put_matrix_field(o, "token_type", tr.token_type);
    if (config.embed_layernorm) put_matrix_field(o, "embed_normed", tr.embed_normed);
    o += ',';
    put_key(o, "mask");
    json_put_mask(o, tr.mask);
    o += ',';
    put_key(o, "layers");
    o += '[';
    for (std::size_t l = 0; l < tr.layers.size(); ++l) {
        const LayerTrace& lt = tr.layers[l];
        if (l) o += ',';
        o += '{';
        put_key(o, "input");
        json_put_matrix(o, lt.input);
        put_matrix_field(o, "normed", lt.normed);
        o += ',';
        put_key(o, "heads");
        o += '[';
        for (std::size_t h = 0; h < lt.attention.heads.size(); ++h) {
            if (h) o += ',';
            json_put_head(o, lt.attention.heads[h]);  // the fields of trace_fields::head
        }
        o += "],";
        put_key(o, "concat");
        json_put_matrix(o, lt.attention.concat);
        put_matrix_field(o, "attention_output", lt.attention.output);
        put_matrix_field(o, "residual", lt.residual);
        if (config.mlp > 0 || config.norm == Norm::post) put_matrix_field(o, "mlp_normed", lt.mlp_normed);
        if (config.mlp > 0) {
            put_matrix_field(o, "mlp_hidden", lt.mlp_hidden);
            put_matrix_field(o, "mlp_output", lt.mlp_output);
        }
        put_matrix_field(o, "output", lt.output);
        o += '}';
    }
    o += "],";
    put_key(o, "final_normed");
    json_put_matrix(o, tr.final_normed);
    if (config.output_transform) put_matrix_field(o, "transformed", tr.transformed);
    put_matrix_field(o, "logits", tr.logits);
    put_matrix_field(o, "probabilities", tr.probabilities);
    o += "}\n";
    return o;
}

std::string gradient_dump_json(const ModelConfig& config, const Parameters& params, const Batch& batch, double loss,
                               const Parameters& grads) {
    std::string o = "{";
    put_key(o, "config");
    o += model_config_json(config);
    o += ',';
    put_key(o, "params");
    put_tensors(o, params);
    o += ',';
    put_key(o, "batch");
    o += '{';
    put_key(o, "ids");
    put_int_rows(o, batch.ids, batch.batch, batch.length);
    o += ',';
    put_key(o, "targets");
    put_int_rows(o, batch.targets, batch.batch, batch.length);
    if (!batch.lengths.empty()) {
        o += ',';
        put_key(o, "lengths");
        o += '[';
        for (std::size_t i = 0; i < batch.lengths.size(); ++i) o += (i ? "," : "") + std::to_string(batch.lengths[i]);
        o += ']';
    }
    o += "},";
    put_key(o, "loss");
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", loss);
    o += buf;
    o += ',';
    put_key(o, "grads");
    put_tensors(o, grads);
    o += "}\n";
    return o;
}

}  // namespace attn
