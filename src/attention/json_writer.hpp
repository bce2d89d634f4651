#pragma once
// The CLI's JSON writer of the field tables (trace_fields.hpp: the single-layer
// trace; model/model_trace_fields.hpp: a model's): names as the tables write them
// (snake_case), matrices as arrays of rows, floats with 9 significant digits (NaN
// and infinity refused: JSON has neither), and no js_only field (the JSON's keys are a
// documented, tested contract).
//
//   std::string out;
//   JsonWriter w(out);
//   w.open([&] { trace_fields::trace(w, tr); });   // {"config":…,"tokens":[…],…}

#include "attention/json.hpp"
#include "attention/trace_fields.hpp"
#include "kernels/bounds.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

class JsonWriter {
public:
    using Where = trace_fields::Where;
    explicit JsonWriter(std::string& out) : o_(out) {}
    void field(const char* name, int v, Where where) { put(name, where, std::to_string(v)); }
    void field(const char* name, std::uint32_t v, Where where) { put(name, where, std::to_string(v)); }
    void field(const char* name, std::int64_t v, Where where) { put(name, where, std::to_string(v)); }
    void field(const char* name, bool v, Where where) { put(name, where, v ? "true" : "false"); }
    void field(const char* name, const std::string& v, Where where) { put(name, where, json_quote(v)); }
    void field(const char* name, const Matrix& m, Where where) {
        if (!key(name, where)) return;
        if (!all_finite(m)) refuse(name);
        json_put_matrix(o_, m);
    }
    void field(const char* name, const MaskMatrix& m, Where where) {
        if (key(name, where)) json_put_mask(o_, m);
    }
    void field(const char* name, const Vector& v, Where where) {
        if (!key(name, where)) return;
        if (!all_finite(v.data(), static_cast<std::size_t>(v.size()))) refuse(name);
        o_ += '[';
        for (Eigen::Index i = 0; i < v.size(); ++i) {
            if (i) o_ += ',';
            json_put_float(o_, v(i));
        }
        o_ += ']';
    }
    /// A flat array of ids (an Int32Array in JS).
    void field(const char* name, const std::vector<std::int32_t>& v, Where where) {
        if (!key(name, where)) return;
        o_ += '[';
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (i) o_ += ',';
            o_ += std::to_string(v[i]);
        }
        o_ += ']';
    }
    /// A flat array of floats (a Float32Array in JS).
    void field(const char* name, const std::vector<float>& v, Where where) {
        if (!key(name, where)) return;
        if (!all_finite(v.data(), v.size())) refuse(name);
        o_ += '[';
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (i) o_ += ',';
            json_put_float(o_, v[i]);
        }
        o_ += ']';
    }
    /// A value already written as JSON (a document's framing: the model config's own writer).
    void raw(const char* name, const std::string& json) { put(name, Where::everywhere, json); }
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
    /// JSON has no NaN or infinity: the field is refused by name (the model's forward names where
    /// a NaN first appears; this is the last guard, for any other writer's values).
    [[noreturn]] static void refuse(const char* name) {
        throw Error(Error::Code::not_finite, std::string("the field \"") + name +
                                                 "\" holds NaN or infinity, which JSON cannot hold");
    }
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

}  // namespace attn
