#include "train/backward.hpp"

#include "attention/json.hpp"
#include "base/json_value.hpp"
#include "model/model_json.hpp"
#include "train/tasks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <memory>

namespace attn {

std::vector<std::int32_t> default_targets(const std::map<std::string, std::string>& metadata,
                                          const std::vector<std::int32_t>& ids) {
    const int T = static_cast<int>(ids.size());
    std::vector<std::int32_t> targets(ids.size(), kNoTarget);
    const auto task = metadata.find("task");
    std::string name;
    if (task != metadata.end()) {
        const JsonValue t = parse_json(task->second);
        const JsonValue* n = t.get("name");
        if (n && n->is(JsonValue::Type::string)) name = n->string;
    }
    if (name == "text") {
        for (int t = 0; t + 1 < T; ++t) targets[static_cast<std::size_t>(t)] = ids[static_cast<std::size_t>(t + 1)];
        if (T < 2) throw Error("a one-word sentence has no next word to predict: give a target (--target 0:WORD)");
        return targets;
    }
    if (name == "coreference") {
        const std::unique_ptr<Task> k = make_task(TaskKind::coreference);
        if (T > k->context()) return targets;  // too long for the task; the model's own check names it
        const AnswerKey key = k->answer_keys(ids, T).front();
        bool any = false;
        for (int p = 0; p < T; ++p)
            for (int j = 0; j < T; ++j)
                if (key.key(p, j) > 0 && targets[static_cast<std::size_t>(p)] == kNoTarget) {
                    targets[static_cast<std::size_t>(p)] = ids[static_cast<std::size_t>(j)];
                    any = true;
                }
        if (!any)
            throw Error("the coreference task sets no target on this sentence (no \"it\" ... \"too\" ADJECTIVE it can "
                        "resolve): give one (--target POS:WORD)");
        return targets;
    }
    throw Error("the model's task " + (name.empty() ? std::string("(none)") : "\"" + name + "\"") +
                " has no default target for a sentence: give one (--target POS:WORD)");
}

BackwardTrace backward_trace(const ModelConfig& config, const Parameters& params, const std::vector<std::int32_t>& ids,
                             const std::vector<std::int32_t>& targets, int scale, int pad_to) {
    if (targets.size() != ids.size())
        throw Error(Error::Code::bad_shape, "targets has " + std::to_string(targets.size()) + " entries, ids " +
                                                std::to_string(ids.size()));
    ModelConfig c = config;
    if (scale >= 0) c.scale = scale != 0;
    BackwardTrace b;
    b.config = c;
    b.batch.batch = 1;
    b.batch.length = std::max(static_cast<int>(ids.size()), pad_to);
    b.batch.ids = ids;
    b.batch.targets = targets;
    if (b.batch.length > static_cast<int>(ids.size())) {
        b.batch.ids.resize(static_cast<std::size_t>(b.batch.length), 0);  // [PAD]
        b.batch.targets.resize(static_cast<std::size_t>(b.batch.length), kNoTarget);
        b.batch.lengths = {static_cast<int>(ids.size())};
    }
    Model model(c, Parameters(params));
    const LossResult r = model.forward(b.batch, {}, &b.recorder);
    if (r.targets == 0) throw Error("no position has a target: the loss is empty");
    b.loss = r.loss;
    model.backward(b.grads, nullptr, &b.recorder);
    return b;
}

namespace {

/// A [begin, end) range of params.flat() inside one tensor (float32: ParamInfo::stored).
struct Range {
    std::size_t begin, end;
    const ParamInfo* tensor;
};

/// The storage ranges of rows [r0, r1) × columns [c0, c1) of a tensor: a row-major
/// one's row pieces, or, stored as panels (Parameters::use_panels), each panel's piece
/// (whole panels: one range of their rows).
void add_block(std::vector<Range>& out, const ParamInfo& p, int r0, int r1, int c0, int c1) {
    if (p.format != WeightFormat::f32)
        throw Error(Error::Code::internal, "a step writes " + p.name + ", stored as 16-bit values: promote it first");
    if (!p.panels) {
        if (c0 == 0 && c1 == p.cols) {
            out.push_back({p.stored + static_cast<std::size_t>(r0) * p.cols, p.stored + static_cast<std::size_t>(r1) * p.cols, &p});
            return;
        }
        for (int r = r0; r < r1; ++r) {
            const std::size_t row = p.stored + static_cast<std::size_t>(r) * static_cast<std::size_t>(p.cols);
            out.push_back({row + static_cast<std::size_t>(c0), row + static_cast<std::size_t>(c1), &p});
        }
        return;
    }
    for (int q = c0 / 8; q * 8 < c1; ++q) {
        const int lo = std::max(c0, q * 8) - q * 8, hi = std::min(c1, q * 8 + 8) - q * 8;
        const std::size_t panel = p.stored + static_cast<std::size_t>(q) * static_cast<std::size_t>(p.rows) * 8;
        if (lo == 0 && hi == 8) {
            out.push_back({panel + static_cast<std::size_t>(r0) * 8, panel + static_cast<std::size_t>(r1) * 8, &p});
            continue;
        }
        for (int r = r0; r < r1; ++r)
            out.push_back({panel + static_cast<std::size_t>(r) * 8 + lo, panel + static_cast<std::size_t>(r) * 8 + hi, &p});
    }
}

/// The row-major index (from the tensor's start) of the element at storage index i.
std::size_t row_major_index(const ParamInfo& p, std::size_t i) {
    if (!p.panels) return i - p.stored;
    const std::size_t j = i - p.stored, panel = static_cast<std::size_t>(p.rows) * 8;
    const std::size_t q = j / panel, r = (j % panel) / 8, c = q * 8 + j % 8;
    return r * static_cast<std::size_t>(p.cols) + c;
}

/// The storage ranges of layer `layer`'s attention: head ≥ 0 its columns h·D … of
/// W_Q and b_Q, its K/V head's columns g·D … of W_K, W_V and their biases (g = h / (H /
/// H_kv): shared with the other query heads of its group) and its rows of W_O; head < 0
/// all of W_Q, W_K, W_V, W_O, their biases and the q/k norms' gains.
std::vector<Range> attention_ranges(const ModelConfig& config, const Parameters& params, int layer, int head) {
    std::vector<Range> ranges;
    const auto name = [&](const char* leaf) { return "layers." + std::to_string(layer) + "." + leaf; };
    if (head < 0) {
        for (const char* leaf : {"w_query", "b_query", "w_key", "b_key", "w_value", "b_value", "w_output", "b_output",
                                 "q_norm.gain", "k_norm.gain"}) {
            if (!params.has(name(leaf))) continue;
            const ParamInfo& p = params.info(name(leaf));
            add_block(ranges, p, 0, p.rows, 0, p.cols);
        }
        return ranges;
    }
    const int D = head_dim_of(config), kv = head / (config.heads / kv_heads_of(config));
    for (const char* leaf : {"w_query", "w_key", "w_value", "b_query", "b_key", "b_value"}) {
        if (!params.has(name(leaf))) continue;
        const ParamInfo& p = params.info(name(leaf));
        const int column = leaf[2] == 'q' ? head : kv;  // w_query, b_query: the head's own
        add_block(ranges, p, 0, p.rows, column * D, (column + 1) * D);
    }
    const ParamInfo& o = params.info(name("w_output"));
    add_block(ranges, o, head * D, (head + 1) * D, 0, o.cols);
    return ranges;
}

void check_rate(double lr) {
    if (!std::isfinite(lr)) throw Error(Error::Code::not_finite, "the learning rate is not a finite number");
    if (!(lr > 0) || lr > kMaxSgdRate)
        throw Error("the learning rate must be above 0 and at most " + std::to_string(static_cast<int>(kMaxSgdRate)) +
                    ", got " + std::to_string(lr));
}

}  // namespace

double sgd_step(const ModelConfig& config, Parameters& params, const Parameters& grads, double lr, int layer, int head) {
    check_rate(lr);
    if (grads.size() != params.size())
        throw Error(Error::Code::bad_shape, "the gradients have " + std::to_string(grads.size()) +
                                                " numbers, the parameters " + std::to_string(params.size()));
    if (layer >= config.layers || (layer >= 0 && (head < 0 || head >= config.heads)))
        throw Error("layer " + std::to_string(layer) + " head " + std::to_string(head) + " is not in this model (" +
                    std::to_string(config.layers) + " layers of " + std::to_string(config.heads) + " heads)");
    if (params.panels() || grads.panels() || params.half_format() != WeightFormat::f32)
        throw Error(Error::Code::bad_state, "sgd_step reads row-major parameters; these are stored as panels (sgd_step_layer takes them)");
    // the flat ranges to move: [begin, end) pairs into params.flat()
    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    if (layer < 0)
        ranges.emplace_back(0, params.size());
    else
        for (const Range& r : attention_ranges(config, params, layer, head)) ranges.emplace_back(r.begin, r.end);
    std::vector<float>& w = params.flat();
    const std::vector<float>& g = grads.flat();
    double size2 = 0;
    for (const auto& [b, e] : ranges)
        for (std::size_t i = b; i < e; ++i) {
            const float x = w[i] - static_cast<float>(lr * static_cast<double>(g[i]));
            if (!std::isfinite(x))
                throw Error(Error::Code::not_finite, "the step makes a weight non-finite (learning rate " + std::to_string(lr) + "): the weights are kept");
            const double d = static_cast<double>(x) - static_cast<double>(w[i]);
            size2 += d * d;
        }
    for (const auto& [b, e] : ranges)
        for (std::size_t i = b; i < e; ++i) w[i] -= static_cast<float>(lr * static_cast<double>(g[i]));
    return std::sqrt(size2);
}

namespace {

/// Drops a document's closing brace (and newline) so that fields can follow.
void open_document(std::string& o) {
    while (!o.empty() && (o.back() == '\n' || o.back() == '}')) {
        const bool brace = o.back() == '}';
        o.pop_back();
        if (brace) break;
    }
}

/// ,"probabilities", "d_logits" and "layers": [{"heads": [...]}] of a recorder, then the closing brace.
void close_with_gradients(std::string& o, const Recorder& recorder) {
    o += ",\"probabilities\":";
    json_put_matrix(o, recorder.trace.probabilities);
    o += ",\"d_logits\":";
    json_put_matrix(o, recorder.gradients.d_logits);
    o += ",\"layers\":[";
    const auto& layers = recorder.gradients.layers;
    for (std::size_t l = 0; l < layers.size(); ++l) {
        if (l) o += ',';
        o += "{\"heads\":[";
        for (std::size_t h = 0; h < layers[l].heads.size(); ++h) {
            const HeadGradTrace& g = layers[l].heads[h];
            if (h) o += ',';
            const std::pair<const char*, const Matrix*> fields[] = {
                {"d_output", &g.d_output}, {"d_weights", &g.d_weights}, {"d_scaled", &g.d_scaled},
                {"d_scores", &g.d_scores}, {"d_query", &g.d_query},     {"d_key", &g.d_key},
                {"d_value", &g.d_value}};
            o += '{';
            for (std::size_t f = 0; f < std::size(fields); ++f) {
                if (f) o += ',';
                o += '"';
                o += fields[f].first;
                o += "\":";
                json_put_matrix(o, *fields[f].second);
            }
            o += '}';
        }
        o += "]}";
    }
    o += "]}\n";
}

/// {"name": tensor, ...} of the given tensors (a vector as a flat list, a matrix as rows).
void put_layer_tensors(std::string& o, const std::vector<ParamInfo>& layout, const float* data) {
    o += '{';
    for (std::size_t k = 0; k < layout.size(); ++k) {
        const ParamInfo& info = layout[k];
        if (k) o += ',';
        o += json_quote(info.name) + ':';
        const Eigen::Map<const Matrix> v(data + info.offset, info.rows, info.cols);
        if (info.vector) {
            o += '[';
            for (int j = 0; j < info.cols; ++j) {
                if (j) o += ',';
                json_put_float(o, v(0, j));
            }
            o += ']';
        } else {
            json_put_matrix(o, v);
        }
    }
    o += '}';
}

}  // namespace

std::string backward_trace_json(const Parameters& params, const BackwardTrace& b) {
    std::string o = gradient_dump_json(b.config, params, b.batch, b.loss, b.grads);
    open_document(o);
    close_with_gradients(o, b.recorder);
    return o;
}

std::vector<std::int32_t> pretrained_default_targets(Model& model, const std::vector<std::int32_t>& ids,
                                                     std::int32_t mask_id) {
    const ModelConfig& c = model.config();
    const std::size_t T = ids.size();
    std::vector<std::int32_t> targets(T, kNoTarget);
    if (T == 0) throw Error("the sentence has no tokens");
    if (c.causal) {
        if (T < 2) throw Error("a one-token sentence has no next token to predict: write two or more words, or give a target (--target 0:TOKEN)");
        for (std::size_t t = 0; t + 1 < T; ++t) targets[t] = ids[t + 1];
        return targets;
    }
    bool any = false;
    for (std::size_t t = 0; t < T; ++t) any = any || (mask_id >= 0 && ids[t] == mask_id);
    if (!any)
        throw Error("the sentence has no [MASK]: BERT's loss is its guess at a masked word, so write [MASK] in place of a "
                    "word (e.g. \"the cat [MASK] on the mat\"), or give a target (--target POS:TOKEN)");
    TraceKeep keep;
    keep.layer = c.layers - 1;
    keep.vectors = c.layers - 1;
    keep.logits = false;
    keep.top_k = 1;
    const ModelTrace tr = trace_model(c, model.params(), ids, -1, {}, keep);
    for (std::size_t t = 0; t < T; ++t)
        if (ids[t] == mask_id) targets[t] = tr.top_ids[t];
    return targets;
}

PretrainedBackward pretrained_backward(Model& model, const std::vector<std::int32_t>& ids,
                                       const std::vector<std::int32_t>& targets, int layer, int scale) {
    if (targets.size() != ids.size())
        throw Error(Error::Code::bad_shape, "targets has " + std::to_string(targets.size()) + " entries, ids " +
                                                std::to_string(ids.size()));
    if (layer < 0 || layer >= model.config().layers)
        throw Error("layer " + std::to_string(layer) + " is not in this model (" + std::to_string(model.config().layers) +
                    " layers, 0 to " + std::to_string(model.config().layers - 1) + ")");
    PretrainedBackward b;
    b.config = model.config();
    if (scale >= 0) b.config.scale = scale != 0;
    b.layer = layer;
    b.batch.batch = 1;
    b.batch.length = static_cast<int>(ids.size());
    b.batch.ids = ids;
    b.batch.targets = targets;
    ForwardOptions options;
    options.scale_override = scale;
    b.recorder.layer = layer;
    b.recorder.vectors = layer;
    const LossResult r = model.learn_forward(b.batch, options, &b.recorder);
    if (r.targets == 0) throw Error("no position has a target: the loss is empty");
    b.loss = r.loss;
    model.backward_layer(layer, b.grads, &b.recorder);
    return b;
}

double sgd_step_layer(const ModelConfig& config, Parameters& params, const LayerGradients& grads, double lr, int head,
                      SgdUndo* undo) {
    check_rate(lr);
    if (grads.layer < 0 || grads.layer >= config.layers || grads.layout.empty())
        throw Error(Error::Code::bad_shape, "the gradients name no layer of this model");
    if (head >= config.heads)
        throw Error("head " + std::to_string(head) + " is not in this model (" + std::to_string(config.heads) + " heads)");
    const ParamInfo& first = params.info(grads.layout.front().name);
    const std::size_t base = first.offset;
    std::size_t n = 0;
    for (const ParamInfo& i : grads.layout) n += i.size();
    // a layer stored as 16-bit values is stored as float32 from its first step on (the same
    // values: its forward's numbers do not change), so that the step and its undo are exact
    params.promote("layers." + std::to_string(grads.layer) + ".");
    const std::vector<Range> ranges = attention_ranges(config, params, grads.layer, head);
    for (const Range& r : ranges)
        if (r.tensor->offset < base || r.tensor->offset + r.tensor->size() > base + n || n != grads.flat.size())
            throw Error(Error::Code::bad_shape, "the gradients are not layer " + std::to_string(grads.layer) + "'s of this model");
    // the gradient of storage index i: row-major, as the gradients are, at the tensor's place
    const auto grad_of = [&](const Range& r, std::size_t i) {
        return grads.flat[r.tensor->offset - base + row_major_index(*r.tensor, i)];
    };
    std::vector<float>& w = params.flat();
    double size2 = 0;
    for (const Range& r : ranges)
        for (std::size_t i = r.begin; i < r.end; ++i) {
            const float x = w[i] - static_cast<float>(lr * static_cast<double>(grad_of(r, i)));
            if (!std::isfinite(x))
                throw Error(Error::Code::not_finite, "the step makes a weight non-finite (learning rate " + std::to_string(lr) + "): the weights are kept");
            const double d = static_cast<double>(x) - static_cast<double>(w[i]);
            size2 += d * d;
        }
    if (undo) {
        undo->ranges.clear();
        undo->old.clear();
        for (const Range& r : ranges) {
            undo->ranges.emplace_back(r.begin, r.end);
            undo->old.insert(undo->old.end(), w.begin() + static_cast<std::ptrdiff_t>(r.begin), w.begin() + static_cast<std::ptrdiff_t>(r.end));
        }
    }
    for (const Range& r : ranges)
        for (std::size_t i = r.begin; i < r.end; ++i) w[i] -= static_cast<float>(lr * static_cast<double>(grad_of(r, i)));
    return std::sqrt(size2);
}

void undo_sgd(Parameters& params, const SgdUndo& undo) {
    std::size_t n = 0;
    for (const auto& [b, e] : undo.ranges) {
        if (e < b || e > params.flat().size()) throw Error(Error::Code::bad_shape, "the undo does not fit these parameters");
        n += e - b;
    }
    if (n != undo.old.size()) throw Error(Error::Code::bad_shape, "the undo does not fit these parameters");
    std::vector<float>& w = params.flat();
    std::size_t k = 0;
    for (const auto& [b, e] : undo.ranges)
        for (std::size_t i = b; i < e; ++i) w[i] = undo.old[k++];
}

std::string pretrained_backward_json(const Parameters& params, const PretrainedBackward& b) {
    std::string o = "{\"config\":" + model_config_json(b.config) + ",\"layer\":" + std::to_string(b.layer) + ",\"params\":";
    std::vector<float> own;  // the layer's tensors, row-major, in the gradients' layout
    own.reserve(b.grads.flat.size());
    for (const ParamInfo& g : b.grads.layout) {
        const Matrix m = params.matrix(g.name);
        own.insert(own.end(), m.data(), m.data() + m.size());
    }
    put_layer_tensors(o, b.grads.layout, own.data());
    o += ",\"batch\":{\"ids\":[[";
    for (std::size_t i = 0; i < b.batch.ids.size(); ++i) o += (i ? "," : "") + std::to_string(b.batch.ids[i]);
    o += "]],\"targets\":[[";
    for (std::size_t i = 0; i < b.batch.targets.size(); ++i) o += (i ? "," : "") + std::to_string(b.batch.targets[i]);
    o += "]]},\"loss\":";
    json_put_double(o, b.loss);
    o += ",\"grads\":";
    put_layer_tensors(o, b.grads.layout, b.grads.flat.data());
    close_with_gradients(o, b.recorder);
    return o;
}

}  // namespace attn
