#include "model/model_json.hpp"

#include "attention/json_writer.hpp"
#include "model/model_schema.hpp"
#include "model/model_trace_fields.hpp"

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
    std::string o;
    JsonWriter w(o);
    w.open([&] {
        w.raw("config", model_config_json(config));
        w.list("tokens", tokens, [&](const Token& t) { trace_fields::token(w, t); });
        trace_fields::model_trace(w, tr, nullptr);  // the weights are js_only: no parameters
    });
    o += '\n';
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
    json_put_double(o, loss);
    o += ',';
    put_key(o, "grads");
    put_tensors(o, grads);
    o += "}\n";
    return o;
}

}  // namespace attn
