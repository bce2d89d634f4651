#include "model_json.hpp"

#include "json.hpp"
#include "trainer.hpp"

#include <cstdio>

namespace attn {
namespace {

void put_key(std::string& out, const char* key) {
    out += '"';
    out += key;
    out += "\":";
}

void put_tensors(std::string& out, const Parameters& p) {
    out += '{';
    bool first = true;
    for (const ParamInfo& info : p.layout()) {
        if (!first) out += ',';
        first = false;
        out += json_quote(info.name) + ':';
        const auto v = p.view(info.name);
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
    o += ',';
    put_key(o, "positional");
    json_put_matrix(o, tr.positional);
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
        o += ',';
        put_key(o, "normed");
        json_put_matrix(o, lt.normed);
        o += ',';
        put_key(o, "heads");
        o += '[';
        for (std::size_t h = 0; h < lt.attention.heads.size(); ++h) {
            const HeadTrace& ht = lt.attention.heads[h];
            if (h) o += ',';
            o += '{';
            const std::pair<const char*, const Matrix*> parts[] = {
                {"query", &ht.query},   {"key", &ht.key},         {"value", &ht.value}, {"scores", &ht.scores},
                {"scaled", &ht.scaled}, {"weights", &ht.weights}, {"output", &ht.output}};
            for (std::size_t k = 0; k < 7; ++k) {
                if (k) o += ',';
                put_key(o, parts[k].first);
                json_put_matrix(o, *parts[k].second);
            }
            o += '}';
        }
        o += "],";
        put_key(o, "concat");
        json_put_matrix(o, lt.attention.concat);
        o += ',';
        put_key(o, "attention_output");
        json_put_matrix(o, lt.attention.output);
        o += ',';
        put_key(o, "residual");
        json_put_matrix(o, lt.residual);
        if (config.mlp > 0) {
            o += ',';
            put_key(o, "mlp_normed");
            json_put_matrix(o, lt.mlp_normed);
            o += ',';
            put_key(o, "mlp_hidden");
            json_put_matrix(o, lt.mlp_hidden);
            o += ',';
            put_key(o, "mlp_output");
            json_put_matrix(o, lt.mlp_output);
        }
        o += ',';
        put_key(o, "output");
        json_put_matrix(o, lt.output);
        o += '}';
    }
    o += "],";
    put_key(o, "final_normed");
    json_put_matrix(o, tr.final_normed);
    o += ',';
    put_key(o, "logits");
    json_put_matrix(o, tr.logits);
    o += ',';
    put_key(o, "probabilities");
    json_put_matrix(o, tr.probabilities);
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
