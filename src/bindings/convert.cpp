#include "convert.hpp"

#include <emscripten/bind.h>

#include <optional>
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
        throw Error(what + ".data has " + std::to_string(length) + " values, expected " + std::to_string(expected));
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

val head_trace_to_js(const HeadTrace& h) {
    val hv = val::object();
    hv.set("query", matrix_to_js(h.query));
    hv.set("key", matrix_to_js(h.key));
    hv.set("value", matrix_to_js(h.value));
    hv.set("scores", matrix_to_js(h.scores));
    hv.set("scaled", matrix_to_js(h.scaled));
    hv.set("weights", matrix_to_js(h.weights));
    hv.set("output", matrix_to_js(h.output));
    return hv;
}

val token_to_js(const Token& t) {
    val tok = val::object();
    tok.set("text", t.text);
    tok.set("id", t.id);
    tok.set("start", static_cast<double>(t.start));
    tok.set("end", static_cast<double>(t.end));
    return tok;
}

val trace_to_js(const Trace& tr) {
    val o = val::object();
    val config = val::object();
    config.set("dModel", tr.config.d_model);
    config.set("heads", tr.config.heads);
    config.set("dHead", tr.d_head);
    config.set("seed", tr.config.seed);
    config.set("positional", std::string(positional_name(tr.config.positional)));
    config.set("mask", std::string(mask_name(tr.config.mask)));
    config.set("scale", tr.config.scale);
    config.set("padTo", tr.config.pad_to);
    config.set("lowercase", tr.config.lowercase);
    config.set("shareHeads", tr.config.share_heads);
    o.set("config", config);
    val tokens = val::array();
    for (const Token& t : tr.tokens) tokens.call<void>("push", token_to_js(t));
    o.set("tokens", tokens);
    o.set("realTokens", tr.real_tokens);
    o.set("embeddings", matrix_to_js(tr.embeddings));
    o.set("positional", matrix_to_js(tr.positional));
    o.set("input", matrix_to_js(tr.input));
    o.set("wQuery", matrix_to_js(tr.weights.w_query));
    o.set("wKey", matrix_to_js(tr.weights.w_key));
    o.set("wValue", matrix_to_js(tr.weights.w_value));
    o.set("wOutput", matrix_to_js(tr.weights.w_output));
    o.set("mask", mask_to_js(tr.mask));
    val heads = val::array();
    for (const HeadTrace& h : tr.heads) heads.call<void>("push", head_trace_to_js(h));
    o.set("heads", heads);
    o.set("concat", matrix_to_js(tr.concat));
    o.set("output", matrix_to_js(tr.output));
    return o;
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
    if (!w.isNull() && !w.isUndefined()) {
        c.weights = weights_from_js(w);
    } else {
        // The page reruns with the same seed and sizes on every keystroke;
        // generating 4·C² seeded numbers is most of a small run, so the last
        // set is kept. The values are the ones glorot_weights() returns.
        validate_config(c);
        struct Cached {
            std::uint32_t seed;
            int d_model, heads;
            bool share;
            Weights weights;
        };
        static std::optional<Cached> cache;
        if (!cache || cache->seed != c.seed || cache->d_model != c.d_model || cache->heads != c.heads ||
            cache->share != c.share_heads)
            cache = Cached{c.seed, c.d_model, c.heads, c.share_heads,
                           glorot_weights(c.d_model, c.heads, c.seed, c.share_heads)};
        c.weights = cache->weights;
    }
    return c;
}

}  // namespace attn::js
