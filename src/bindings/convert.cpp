#include "convert.hpp"

#include "attention/trace_fields.hpp"
#include "model/model_trace_fields.hpp"

#include <emscripten/bind.h>

#include <vector>

namespace attn::js {

using emscripten::val;

namespace {

val float32_copy(const float* data, std::size_t n) {
    // new Float32Array(view) copies the view's contents out of the heap
    return val::global("Float32Array").new_(emscripten::typed_memory_view(n, data));
}

std::vector<float> numbers_from_js(const val& data, const std::string& what, std::size_t expected) {
    if (data.isUndefined() || data.isNull() || !data["length"].isNumber())
        throw Error(what + ".data must be an array of numbers", Error::Kind::type);
    const std::size_t length = data["length"].as<std::size_t>();
    if (length != expected)
        throw Error(Error::Code::bad_shape, what + ".data has " + std::to_string(length) + " values, expected " + std::to_string(expected));
    return emscripten::convertJSArrayToNumberVector<float>(data);
}

void shape_from_js(const val& v, const std::string& what, int& rows, int& cols) {
    if (v.isUndefined() || v.isNull() || v.typeOf().as<std::string>() != "object")
        throw Error(what + " must be an object {rows, cols, data}", Error::Kind::type);
    if (!v["rows"].isNumber() || !v["cols"].isNumber())
        throw Error(what + " needs numeric rows and cols", Error::Kind::type);
    const double r = v["rows"].as<double>(), c = v["cols"].as<double>();
    if (!(r >= 0 && r <= 1 << 16 && c >= 0 && c <= 1 << 16))
        throw Error(what + " has an impossible shape " + std::to_string(r) + "x" + std::to_string(c));
    rows = static_cast<int>(r);
    cols = static_cast<int>(c);
}

}  // namespace

val matrix_to_js(const Eigen::Ref<const Matrix>& m) {
    val o = val::object();
    o.set("rows", static_cast<int>(m.rows()));
    o.set("cols", static_cast<int>(m.cols()));
    if (m.outerStride() == m.cols()) {
        o.set("data", float32_copy(m.data(), static_cast<std::size_t>(m.size())));
    } else {
        const Matrix dense = m;
        o.set("data", float32_copy(dense.data(), static_cast<std::size_t>(dense.size())));
    }
    return o;
}

val mask_to_js(const MaskMatrix& m) {
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(m.size()));
    for (Eigen::Index i = 0; i < m.size(); ++i) bytes[static_cast<std::size_t>(i)] = m.data()[i] ? 1 : 0;
    val o = val::object();
    o.set("rows", static_cast<int>(m.rows()));
    o.set("cols", static_cast<int>(m.cols()));
    o.set("data", val::global("Uint8Array").new_(emscripten::typed_memory_view(bytes.size(), bytes.data())));
    return o;
}

val vector_to_js(const Vector& v) { return float32_copy(v.data(), static_cast<std::size_t>(v.size())); }

Matrix matrix_from_js(const val& v, const std::string& what) {
    int rows = 0, cols = 0;
    shape_from_js(v, what, rows, cols);
    const std::vector<float> data =
        numbers_from_js(v["data"], what, static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
    return Eigen::Map<const Matrix>(data.data(), rows, cols);
}

MaskMatrix mask_from_js(const val& v, const std::string& what) {
    int rows = 0, cols = 0;
    shape_from_js(v, what, rows, cols);
    const std::vector<float> data =
        numbers_from_js(v["data"], what, static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
    MaskMatrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = data[static_cast<std::size_t>(i)] != 0.0f;
    return m;
}

namespace {

/// trace_fields' writer for JS objects: every name camelCased.
class JsWriter {
public:
    using Where = trace_fields::Where;
    explicit JsWriter(val& target) : o_(&target) {}
    void field(const char* name, int v, Where) { o_->set(trace_fields::camel_case(name), v); }
    void field(const char* name, std::uint32_t v, Where) { o_->set(trace_fields::camel_case(name), v); }
    void field(const char* name, std::int64_t v, Where) {
        o_->set(trace_fields::camel_case(name), static_cast<double>(v));
    }
    void field(const char* name, bool v, Where) { o_->set(trace_fields::camel_case(name), v); }
    void field(const char* name, const std::string& v, Where) { o_->set(trace_fields::camel_case(name), v); }
    void field(const char* name, const Matrix& m, Where) { o_->set(trace_fields::camel_case(name), matrix_to_js(m)); }
    void field(const char* name, const MaskMatrix& m, Where) { o_->set(trace_fields::camel_case(name), mask_to_js(m)); }
    void field(const char* name, const Vector& v, Where) { o_->set(trace_fields::camel_case(name), vector_to_js(v)); }
    void field(const char* name, const std::vector<std::int32_t>& v, Where) {
        o_->set(trace_fields::camel_case(name),
                val::global("Int32Array").new_(emscripten::typed_memory_view(v.size(), v.data())));
    }
    void field(const char* name, const std::vector<float>& v, Where) {
        o_->set(trace_fields::camel_case(name), float32_copy(v.data(), v.size()));
    }
    template <typename Body>
    void object(const char* name, Where, Body body) {
        o_->set(trace_fields::camel_case(name), fill(body));
    }
    template <typename T, typename Each>
    void list(const char* name, const std::vector<T>& items, Each each) {
        val out = val::array();
        for (const T& item : items) out.call<void>("push", fill([&] { each(item); }));
        o_->set(trace_fields::camel_case(name), out);
    }
    /// A new object with the fields body() writes.
    template <typename Body>
    val fill(Body body) {
        val child = val::object();
        val* outer = o_;
        o_ = &child;
        body();
        o_ = outer;
        return child;
    }

private:
    val* o_;
};

}  // namespace

val head_trace_to_js(const HeadTrace& h) {
    val unused = val::undefined();
    JsWriter w(unused);
    return w.fill([&] { trace_fields::head(w, h); });
}

val token_to_js(const Token& t) {
    val unused = val::undefined();
    JsWriter w(unused);
    return w.fill([&] { trace_fields::token(w, t); });
}

void set_model_setting(val& o, const ModelSetting& row, const ModelConfig& m) {
    const double v = row.get(m);
    switch (row.type) {
        case SettingType::boolean: o.set(row.range.js, v != 0); break;
        case SettingType::choice: o.set(row.range.js, model_setting_text(row, v)); break;
        default: o.set(row.range.js, v); break;
    }
}

val model_config_to_js(const ModelConfig& m) {
    val o = val::object();
    for (const ModelSetting& row : model_settings()) set_model_setting(o, row, m);
    return o;
}

val pretrained_tokens_to_js(const std::vector<PretrainedToken>& tokens) {
    val a = val::array();
    for (const PretrainedToken& t : tokens) {
        val o = val::object();
        o.set("id", t.id);
        o.set("piece", t.text);
        o.set("text", t.display);
        o.set("start", t.begin);
        o.set("end", t.end);
        a.call<void>("push", o);
    }
    return a;
}

val trace_to_js(const Trace& tr) {
    val unused = val::undefined();
    JsWriter w(unused);
    return w.fill([&] { trace_fields::trace(w, tr); });
}

val model_trace_to_js(const ModelConfig& m, const ModelTrace& tr, const Parameters& params,
                      const std::vector<AnswerKey>& task_keys) {
    val o = val::object();
    o.set("config", model_config_to_js(m));
    JsWriter w(o);
    trace_fields::model_trace(w, tr, &params);
    // each layer's pattern scores beside its heads (the page names heads by them), for the
    // layers whose heads the trace kept (none for a layer it skipped)
    val layers = o["layers"];
    for (std::size_t l = 0; l < tr.layers.size(); ++l) {
        std::vector<const Matrix*> weights;
        for (const HeadTrace& h : tr.layers[l].attention.heads) weights.push_back(&h.weights);
        val layer = layers[l];
        set_head_patterns(layer, head_patterns(weights, tr.ids, tr.length, m.causal, task_keys));
    }
    return o;
}

val pattern_scores_to_js(const std::vector<PatternScore>& scores) {
    val o = val::object();
    for (const PatternScore& p : scores) {
        val x = val::object();
        x.set("score", p.rows > 0 ? val(p.score) : val::null());
        x.set("rows", p.rows);
        o.set(p.name, x);
    }
    return o;
}

void set_head_patterns(val& o, const std::vector<std::vector<PatternScore>>& patterns) {
    val out = val::array();
    for (const std::vector<PatternScore>& head : patterns) out.call<void>("push", pattern_scores_to_js(head));
    o.set("patterns", out);
}

Weights weights_from_js(const val& w) {
    return Weights{matrix_from_js(w["wQuery"], "weights.wQuery"), matrix_from_js(w["wKey"], "weights.wKey"),
                   matrix_from_js(w["wValue"], "weights.wValue"), matrix_from_js(w["wOutput"], "weights.wOutput")};
}

Config config_from_js(const val& s) {
    Config c;
    c.d_model = s["dModel"].as<int>();
    c.heads = s["heads"].as<int>();
    c.seed = static_cast<std::uint32_t>(s["seed"].as<double>());
    c.positional = parse_positional(s["positional"].as<std::string>());
    c.mask = parse_mask(s["mask"].as<std::string>());
    c.pad_to = s["padTo"].as<int>();
    c.scale = s["scale"].as<bool>();
    c.lowercase = s["lowercase"].as<bool>();
    c.share_heads = s["shareHeads"].as<bool>();
    if (!s["customMask"].isNull() && !s["customMask"].isUndefined())
        c.custom_mask = mask_from_js(s["customMask"], "customMask");
    const val w = s["weights"];
    if (!w.isNull() && !w.isUndefined()) c.weights = weights_from_js(w);
    return c;
}

void set_matrices(val& o, std::initializer_list<MatrixField> fields) {
    for (const MatrixField& f : fields) o.set(f.first, matrix_to_js(f.second));
}

val layer_backward_to_js(const LayerTrace& lt, const LayerGradTrace& lg, const LayerBackwardWeights& w) {
    val heads = val::array();
    for (std::size_t k = 0; k < lg.heads.size(); ++k) {
        const HeadGradTrace& g = lg.heads[k];
        const HeadTrace& f = lt.attention.heads[k];
        val h = val::object();
        set_matrices(h, {{"query", f.query}, {"key", f.key}, {"value", f.value}, {"weights", f.weights},
                         {"dOutput", g.d_output}, {"dWeights", g.d_weights}, {"dScaled", g.d_scaled},
                         {"dScores", g.d_scores}, {"dQuery", g.d_query}, {"dKey", g.d_key}, {"dValue", g.d_value}});
        if (g.d_query_before_rope.size() > 0)  // rope: the rotation's inputs and their gradients
            set_matrices(h, {{"queryBeforeRope", f.query_before_rope}, {"keyBeforeRope", f.key_before_rope},
                             {"dQueryBeforeRope", g.d_query_before_rope}, {"dKeyBeforeRope", g.d_key_before_rope}});
        heads.call<void>("push", h);
    }
    val lo = val::object();
    set_matrices(lo, {{"normed", lt.normed},
                      {"dStreamIn", lg.d_input},
                      {"dStreamOut", lg.d_output},
                      {"dAttention", lg.d_attention},
                      {"wOutput", w.w_output},
                      {"dWQuery", w.d_query},
                      {"dWKey", w.d_key},
                      {"dWValue", w.d_value},
                      {"dWOutput", w.d_output}});
    lo.set("heads", heads);
    return lo;
}

}  // namespace attn::js
