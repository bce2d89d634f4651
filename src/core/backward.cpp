#include "backward.hpp"

#include "json.hpp"
#include "json_value.hpp"
#include "model_json.hpp"
#include "tasks.hpp"

#include <algorithm>
#include <cmath>
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

double sgd_step(const ModelConfig& config, Parameters& params, const Parameters& grads, double lr, int layer, int head) {
    if (!std::isfinite(lr)) throw Error(Error::Code::not_finite, "the learning rate is not a finite number");
    if (!(lr > 0) || lr > kMaxSgdRate)
        throw Error("the learning rate must be above 0 and at most " + std::to_string(static_cast<int>(kMaxSgdRate)) +
                    ", got " + std::to_string(lr));
    if (grads.size() != params.size())
        throw Error(Error::Code::bad_shape, "the gradients have " + std::to_string(grads.size()) +
                                                " numbers, the parameters " + std::to_string(params.size()));
    if (layer >= config.layers || (layer >= 0 && (head < 0 || head >= config.heads)))
        throw Error("layer " + std::to_string(layer) + " head " + std::to_string(head) + " is not in this model (" +
                    std::to_string(config.layers) + " layers of " + std::to_string(config.heads) + " heads)");
    // the flat ranges to move: [begin, end) pairs into params.flat()
    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    if (layer < 0) {
        ranges.emplace_back(0, params.size());
    } else {
        const int D = config.d_model / config.heads;
        const auto name = [&](const char* leaf) { return "layers." + std::to_string(layer) + "." + leaf; };
        for (const char* leaf : {"w_query", "w_key", "w_value", "b_query", "b_key", "b_value"}) {
            if (!params.has(name(leaf))) continue;
            const ParamInfo& p = params.info(name(leaf));
            for (int r = 0; r < p.rows; ++r) {
                const std::size_t row = p.offset + static_cast<std::size_t>(r) * static_cast<std::size_t>(p.cols);
                ranges.emplace_back(row + static_cast<std::size_t>(head * D), row + static_cast<std::size_t>((head + 1) * D));
            }
        }
        const ParamInfo& o = params.info(name("w_output"));
        ranges.emplace_back(o.offset + static_cast<std::size_t>(head * D) * static_cast<std::size_t>(o.cols),
                            o.offset + static_cast<std::size_t>((head + 1) * D) * static_cast<std::size_t>(o.cols));
    }
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

std::string backward_trace_json(const Parameters& params, const BackwardTrace& b) {
    std::string o = gradient_dump_json(b.config, params, b.batch, b.loss, b.grads);
    while (!o.empty() && (o.back() == '\n' || o.back() == '}')) {
        const bool brace = o.back() == '}';
        o.pop_back();
        if (brace) break;
    }
    o += ",\"probabilities\":";
    json_put_matrix(o, b.recorder.trace.probabilities);
    o += ",\"d_logits\":";
    json_put_matrix(o, b.recorder.gradients.d_logits);
    o += ",\"layers\":[";
    const auto& layers = b.recorder.gradients.layers;
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
    return o;
}

}  // namespace attn
