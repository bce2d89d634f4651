#include "attention/json.hpp"

#include "attention/trace_fields.hpp"

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

namespace {

/// trace_fields' writer for the CLI's JSON: names as the table writes them.
class JsonWriter {
public:
    explicit JsonWriter(std::string& out) : o_(out) {}
    using Where = trace_fields::Where;
    void field(const char* name, int v, Where where) { put(name, where, std::to_string(v)); }
    void field(const char* name, std::uint32_t v, Where where) { put(name, where, std::to_string(v)); }
    void field(const char* name, std::int64_t v, Where where) { put(name, where, std::to_string(v)); }
    void field(const char* name, bool v, Where where) { put(name, where, v ? "true" : "false"); }
    void field(const char* name, const std::string& v, Where where) { put(name, where, json_quote(v)); }
    void field(const char* name, const Matrix& m, Where where) {
        if (key(name, where)) put_matrix(o_, m);
    }
    void field(const char* name, const MaskMatrix& m, Where where) {
        if (key(name, where)) put_mask(o_, m);
    }
    void field(const char* name, const Vector& v, Where where) {
        if (!key(name, where)) return;
        o_ += '[';
        for (Eigen::Index i = 0; i < v.size(); ++i) {
            if (i) o_ += ',';
            put_float(o_, v(i));
        }
        o_ += ']';
    }
    template <typename Body>
    void object(const char* name, Where where, Body body) {
        if (!key(name, where)) return;
        open(body);
    }
    template <typename T, typename Each>
    void list(const char* name, const std::vector<T>& items, Each each) {
        key(name, Where::everywhere);
        o_ += '[';
        for (std::size_t i = 0; i < items.size(); ++i) {
            if (i) o_ += ',';
            open([&] { each(items[i]); });
        }
        o_ += ']';
    }
    /// {…} with the fields body() writes.
    template <typename Body>
    void open(Body body) {
        o_ += '{';
        const bool outer = first_;
        first_ = true;
        body();
        first_ = outer;
        o_ += '}';
    }

private:
    bool key(const char* name, Where where) {
        if (where == Where::js_only) return false;
        if (!first_) o_ += ',';
        first_ = false;
        o_ += '"';
        o_ += name;
        o_ += "\":";
        return true;
    }
    void put(const char* name, Where where, const std::string& text) {
        if (key(name, where)) o_ += text;
    }
    std::string& o_;
    bool first_ = true;
};

}  // namespace

void json_put_head(std::string& out, const HeadTrace& head) {
    JsonWriter w(out);
    w.open([&] { trace_fields::head(w, head); });
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
