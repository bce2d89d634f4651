// The Model (model.hpp): its checks, the forward/backward entry points over
// the driver (forward.hpp), the layer's backward of a loaded model, and the
// traces of one sequence.

#include "model/forward.hpp"
#include "model/model.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace attn {

using detail::ForwardState;

namespace {

TraceKeep keep_of(const Recorder& r) {
    TraceKeep k;
    k.layer = r.layer;
    k.vectors = r.vectors;
    k.logits = r.logits;
    k.top_k = r.top_k;
    return k;
}

}  // namespace

Model::Model(const ModelConfig& config) : config_(config) {
    validate_inference_config(config_);
    params_ = Parameters(config_);
    state_ = new ForwardState();
    state_->slots = resolve_slots(config_);
}

Model::Model(const ModelConfig& config, Parameters params) : config_(config) {
    validate_inference_config(config_);
    std::size_t expected = 0;  // counted, not allocated: params may be the only copy a model can afford
    for (const ParamInfo& p : parameter_layout(config_)) expected += p.size();
    if (params.size() != expected)
        throw Error("the parameters have " + std::to_string(params.size()) + " values; the config's layout has " +
                    std::to_string(expected));
    params_ = std::move(params);
    state_ = new ForwardState();
    state_->slots = resolve_slots(config_);
}

Model::~Model() { delete state_; }

const Matrix& Model::logits() const { return state_->logits; }

Eigen::Map<const Matrix> Model::attention(int b, int layer, int head) const {
    const ForwardState& s = *state_;
    const bool kept = trained_forward_ || layer == config_.layers - 1;
    if (b < 0 || b >= s.B || layer < 0 || layer >= config_.layers || head < 0 || head >= config_.heads || !kept)
        throw Error("attention(" + std::to_string(b) + ", " + std::to_string(layer) + ", " + std::to_string(head) +
                    ") is outside the last forward's " + std::to_string(s.B) + " sequences, " +
                    std::to_string(trained_forward_ ? config_.layers : 1) + " kept layers, " +
                    std::to_string(config_.heads) + " heads");
    const std::int64_t tt = std::int64_t{s.T} * s.T;
    const std::int64_t block = std::int64_t{b} * config_.heads + head;
    const LayerState& c = s.layers[trained_forward_ ? static_cast<std::size_t>(layer) : 0];
    return Eigen::Map<const Matrix>(c.attention.weights.data() + static_cast<std::size_t>(block * tt), s.T, s.T);
}

LossResult Model::forward(const Batch& batch, const ForwardOptions& options, Recorder* recorder) {
    if (!trainable_checked_) {
        validate_model_config(config_);  // a model that is trained: the training limits
        trainable_checked_ = true;
    }
    validate_batch(config_, batch);
    // before anything is allocated, once per batch shape; from here on every buffer holds fewer than
    // 2²⁸ floats (kMaxTrainingBytes / 4), so each index within one (N·C, N·V, B·H·T²) fits an int
    if (batch.batch != checked_batch_ || batch.length != checked_length_) {
        check_training_memory(config_, batch.batch, batch.length);
        checked_batch_ = batch.batch;
        checked_length_ = batch.length;
    }
    trained_forward_ = false;
    const LossResult r = forward_pass(config_, params_, *state_, batch, options, recorder, true, false);
    trained_forward_ = true;
    return r;
}

LossResult Model::run(const Batch& batch, const ForwardOptions& options, Recorder* recorder) {
    validate_batch(config_, batch);
    const TraceKeep keep = recorder ? keep_of(*recorder) : TraceKeep{};
    check_run_memory(config_, batch.batch, batch.length, recorder ? &keep : nullptr,
                     "running batch " + std::to_string(batch.batch) + " × " + std::to_string(batch.length) + " tokens" +
                         (recorder ? " with a trace" : ""));
    trained_forward_ = false;
    return forward_pass(config_, params_, *state_, batch, options, recorder, false, true);
}

void Model::backward(Parameters& grads, AttentionStats* stats, Recorder* recorder) {
    ForwardState& s = *state_;
    if (!trained_forward_) throw Error(Error::Code::bad_state, "backward() needs a forward() first");
    if (recorder && s.B != 1) throw Error("a recorder keeps the gradients of one sequence; the batch has " + std::to_string(s.B));
    if (grads.size() != params_.size()) grads = Parameters(config_);
    grads.set_zero();
    const ParamPtrs p = bind(s.slots, params_);
    const GradPtrs g = bind(s.slots, grads.flat().data());
    Matrix dx;
    const double score_grad_sq = backward_to_layer(config_, s, p, g, 0, recorder, dx);
    embedding_backward(config_, p, g, s.ids, s.B, s.T, s.embedding, dx);
    if (stats) stats->score_grad_norm = std::sqrt(score_grad_sq);
}

Eigen::Map<const Matrix> LayerGradients::view(const std::string& name) const {
    for (const ParamInfo& i : layout)
        if (i.name == name) return {flat.data() + i.offset, i.rows, i.cols};
    throw Error("layer " + std::to_string(layer) + " has no gradient named \"" + name + "\"");
}

bool LayerGradients::has(const std::string& name) const {
    for (const ParamInfo& i : layout)
        if (i.name == name) return true;
    return false;
}

LossResult Model::learn_forward(const Batch& batch, const ForwardOptions& options, Recorder* recorder) {
    validate_batch(config_, batch);
    if (batch.batch != 1)
        throw Error("the backward of a loaded model reads one sentence; the batch has " + std::to_string(batch.batch));
    const std::int64_t need = learn_memory(config_, batch.length);
    if (need > kMaxLearnBytes)
        throw Error(Error::Code::too_large,
                    "the backward of " + std::to_string(batch.length) + " tokens through this model needs " +
                        format_bytes(need) + " beyond its weights; the limit is " + format_bytes(kMaxLearnBytes) +
                        " — use a shorter sentence");
    trained_forward_ = false;
    const LossResult r = forward_pass(config_, params_, *state_, batch, options, recorder, true, true);
    trained_forward_ = true;
    return r;
}

void Model::backward_layer(int layer, LayerGradients& grads, Recorder* recorder) {
    ForwardState& s = *state_;
    if (!trained_forward_) throw Error(Error::Code::bad_state, "backward_layer() needs a learn_forward() first");
    if (layer < 0 || layer >= config_.layers)
        throw Error("layer " + std::to_string(layer) + " is not in this model (" + std::to_string(config_.layers) +
                    " layers, from 0)");
    if (recorder && s.B != 1) throw Error("a recorder keeps the gradients of one sequence; the batch has " + std::to_string(s.B));
    // the layer's tensors, contiguous in the layout: their own small buffer
    const std::string prefix = "layers." + std::to_string(layer) + ".";
    grads.layer = layer;
    grads.layout.clear();
    std::size_t base = 0, n = 0;
    for (const ParamInfo& info : params_.layout()) {
        if (info.name.compare(0, prefix.size(), prefix) != 0) continue;
        if (grads.layout.empty()) base = info.offset;
        if (info.offset != base + n) throw Error(Error::Code::bad_state, "layer " + std::to_string(layer) + "'s tensors are not contiguous");
        ParamInfo i = info;
        i.offset = n;
        i.panels = false;  // gradients are row-major float32
        i.format = WeightFormat::f32;
        i.stored = i.offset;
        n += info.size();
        grads.layout.push_back(i);
    }
    grads.flat.assign(n, 0.0f);
    const ParamPtrs p = bind(s.slots, params_);
    GradPtrs g;  // null everywhere (not asked for) but the layer's tensors
    g.layers.resize(static_cast<std::size_t>(config_.layers));
    zip_layer_fields(g.layers[static_cast<std::size_t>(layer)], s.slots.layers[static_cast<std::size_t>(layer)],
                     [&](float*& ptr, const Slot& slot) {
                         ptr = slot.offset < 0 ? nullptr : grads.flat.data() + (static_cast<std::size_t>(slot.offset) - base);
                     });
    Matrix dx;  // the layers below do not change the asked layer's gradients: not visited
    backward_to_layer(config_, s, p, g, layer, recorder, dx);
}

namespace {

/// The batch of one that a trace runs: ids of T tokens, the first `length` real.
Batch trace_batch(const ModelConfig& config, const std::vector<std::int32_t>& ids, int length) {
    const int T = static_cast<int>(ids.size());
    if (T < 1 || T > config.context)
        throw Error(Error::Code::too_long_for_model, "a sequence of " + std::to_string(T) +
                                                         " tokens is outside 1 … the model's context " +
                                                         std::to_string(config.context));
    if (length < 0) length = T;
    if (length < 1 || length > T) throw Error("length " + std::to_string(length) + " is outside 1 … " + std::to_string(T));
    for (std::size_t t = 0; t < ids.size(); ++t)
        if (ids[t] < 0 || ids[t] >= config.vocab)
            throw Error("token id " + std::to_string(ids[t]) + " at position " + std::to_string(t) +
                        " is outside the vocabulary 0 … " + std::to_string(config.vocab - 1));
    Batch b;
    b.batch = 1;
    b.length = T;
    b.ids = ids;
    b.targets.assign(ids.size(), kNoTarget);
    if (length < T) b.lengths = {length};
    return b;
}

}  // namespace

ModelTrace Model::trace(const std::vector<std::int32_t>& ids, int length, const ForwardOptions& options, int layer) {
    return trace_model(config_, params_, ids, length, options, layer);
}

ModelTrace Model::trace(const std::vector<std::int32_t>& ids, int length, const ForwardOptions& options,
                        const TraceKeep& keep) {
    return trace_model(config_, params_, ids, length, options, keep);
}

ModelTrace trace_model(const ModelConfig& config, const Parameters& params, const std::vector<std::int32_t>& ids,
                       int length, const ForwardOptions& options, int layer) {
    TraceKeep keep;
    keep.layer = layer;
    return trace_model(config, params, ids, length, options, keep);
}

ModelTrace trace_model(const ModelConfig& config, const Parameters& params, const std::vector<std::int32_t>& ids,
                       int length, const ForwardOptions& options, const TraceKeep& keep) {
    const int layer = keep.layer;
    validate_inference_config(config);
    std::size_t expected = 0;
    for (const ParamInfo& p : parameter_layout(config)) expected += p.size();
    if (params.size() != expected)
        throw Error("the parameters have " + std::to_string(params.size()) + " values; the config's layout has " +
                    std::to_string(expected));
    if (layer < -1 || layer >= config.layers)
        throw Error("trace layer " + std::to_string(layer) + " is outside -1 (all) … " + std::to_string(config.layers - 1));
    if (keep.vectors < -1 || keep.vectors >= config.layers)
        throw Error("trace vectors " + std::to_string(keep.vectors) + " is outside -1 (all) … " + std::to_string(config.layers - 1));
    if (keep.top_k < 0) throw Error("trace top_k " + std::to_string(keep.top_k) + " is negative");
    const Batch b = trace_batch(config, ids, length);
    validate_batch(config, b);
    check_run_memory(config, 1, b.length, &keep, "tracing " + std::to_string(b.length) + " tokens");
    ForwardState s;
    Recorder recorder;
    recorder.layer = layer;
    recorder.vectors = keep.vectors;
    recorder.logits = keep.logits;
    recorder.top_k = keep.top_k;
    forward_pass(config, params, s, b, options, &recorder, false, true);
    return std::move(recorder.trace);
}

}  // namespace attn
