#include "json.hpp"

#include <cstdio>

namespace attn {
namespace {

void put_float(std::string& out, float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
    out += buf;
}

void put_matrix(std::string& out, const Eigen::Ref<const Matrix>& m) {
    out += '[';
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        if (i) out += ',';
        out += '[';
        for (Eigen::Index j = 0; j < m.cols(); ++j) {
            if (j) out += ',';
            put_float(out, m(i, j));
        }
        out += ']';
    }
    out += ']';
}

void put_mask(std::string& out, const MaskMatrix& m) {
    out += '[';
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        if (i) out += ',';
        out += '[';
        for (Eigen::Index j = 0; j < m.cols(); ++j) {
            if (j) out += ',';
            out += m(i, j) ? "true" : "false";
        }
        out += ']';
    }
    out += ']';
}

}  // namespace

void json_put_float(std::string& out, float v) { put_float(out, v); }
void json_put_matrix(std::string& out, const Eigen::Ref<const Matrix>& m) { put_matrix(out, m); }
void json_put_mask(std::string& out, const MaskMatrix& m) { put_mask(out, m); }

std::string json_quote(const std::string& text) {
    std::string out = "\"";
    for (unsigned char ch : text) {
        switch (ch) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (ch < 0x20 || ch == 0x7F) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", ch);
                    out += buf;
                } else {
                    out += static_cast<char>(ch);
                }
        }
    }
    return out + "\"";
}

std::string trace_to_json(const Trace& tr) {
    const Config& c = tr.config;
    std::string o;
    o.reserve(64 * 1024);
    o += "{\"config\":{\"d_model\":" + std::to_string(c.d_model) + ",\"heads\":" + std::to_string(c.heads) +
         ",\"d_head\":" + std::to_string(tr.d_head) + ",\"seed\":" + std::to_string(c.seed) +
         ",\"positional\":\"" + positional_name(c.positional) + "\",\"mask\":\"" + mask_name(c.mask) +
         "\",\"scale\":" + (c.scale ? "true" : "false") + "},\"tokens\":[";
    for (std::size_t i = 0; i < tr.tokens.size(); ++i) {
        const Token& t = tr.tokens[i];
        if (i) o += ',';
        o += "{\"text\":" + json_quote(t.text) + ",\"id\":" + std::to_string(t.id) +
             ",\"start\":" + std::to_string(t.start) + ",\"end\":" + std::to_string(t.end) + "}";
    }
    o += "],\"embeddings\":";
    put_matrix(o, tr.embeddings);
    o += ",\"positional\":";
    put_matrix(o, tr.positional);
    o += ",\"input\":";
    put_matrix(o, tr.input);
    o += ",\"w_query\":";
    put_matrix(o, tr.weights.w_query);
    o += ",\"w_key\":";
    put_matrix(o, tr.weights.w_key);
    o += ",\"w_value\":";
    put_matrix(o, tr.weights.w_value);
    o += ",\"w_output\":";
    put_matrix(o, tr.weights.w_output);
    o += ",\"mask\":";
    put_mask(o, tr.mask);
    o += ",\"heads\":[";
    for (std::size_t h = 0; h < tr.heads.size(); ++h) {
        const HeadTrace& ht = tr.heads[h];
        if (h) o += ',';
        o += "{\"query\":";
        put_matrix(o, ht.query);
        o += ",\"key\":";
        put_matrix(o, ht.key);
        o += ",\"value\":";
        put_matrix(o, ht.value);
        o += ",\"scores\":";
        put_matrix(o, ht.scores);
        o += ",\"scaled\":";
        put_matrix(o, ht.scaled);
        o += ",\"weights\":";
        put_matrix(o, ht.weights);
        o += ",\"output\":";
        put_matrix(o, ht.output);
        o += '}';
    }
    o += "],\"concat\":";
    put_matrix(o, tr.concat);
    o += ",\"output\":";
    put_matrix(o, tr.output);
    o += "}\n";
    return o;
}

}  // namespace attn
