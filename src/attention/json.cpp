#include "attention/json.hpp"

#include "attention/json_writer.hpp"
#include "kernels/bounds.hpp"

#include <cmath>
#include <cstdio>

namespace attn {
namespace {

/// JSON has no NaN or infinity (printf writes "nan" and "inf", which no reader accepts).
[[noreturn]] void refuse_not_finite(double v) {
    throw Error(Error::Code::not_finite, std::string("a value to write is ") + (std::isnan(v) ? "NaN" : "infinite") +
                                             ", which JSON cannot hold");
}

void put_float(std::string& out, float v) {
    if (!std::isfinite(v)) refuse_not_finite(v);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
    out += buf;
}

void put_matrix(std::string& out, const Eigen::Ref<const Matrix>& m) {
    if (!all_finite(m))
        throw Error(Error::Code::not_finite, "a " + std::to_string(m.rows()) + "×" + std::to_string(m.cols()) +
                                                 " matrix to write holds NaN or infinity, which JSON cannot hold");
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
void json_put_double(std::string& out, double v) {
    if (!std::isfinite(v)) refuse_not_finite(v);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    out += buf;
}
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
    std::string o;
    o.reserve(64 * 1024);
    JsonWriter w(o);
    w.open([&] { trace_fields::trace(w, tr); });
    o += '\n';
    return o;
}

}  // namespace attn
