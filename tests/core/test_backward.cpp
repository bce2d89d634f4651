// Tests of backward.hpp (`attn grad --model` and the playground's Learn steps):
// the default targets of a checkpoint's task, and the JSON document's gradient
// intermediates of the shipped trained models against the double reference
// (model_reference.cpp: plain loops, no code shared with the fast path).

#include "train/backward.hpp"
#include "base/json_value.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef ATTN_SOURCE_DIR
#error "ATTN_SOURCE_DIR must name the repository root (CMakeLists.txt sets it)"
#endif

namespace {

attn::Checkpoint shipped(const std::string& name) {
    std::ifstream f(std::string(ATTN_SOURCE_DIR) + "/models/" + name, std::ios::binary);
    REQUIRE(f);
    std::ostringstream s;
    s << f.rdbuf();
    return attn::load_checkpoint(s.str());
}

std::vector<std::int32_t> ids_of(const attn::Checkpoint& cp, const std::string& text) {
    std::vector<std::int32_t> ids;
    for (const attn::Token& t : attn::tokenize_for_model(cp.vocabulary, text)) ids.push_back(t.id);
    return ids;
}

std::int32_t word(const attn::Checkpoint& cp, const std::string& w) {
    const auto at = std::find(cp.vocabulary.begin(), cp.vocabulary.end(), w);
    REQUIRE(at != cp.vocabulary.end());
    return static_cast<std::int32_t>(at - cp.vocabulary.begin());
}

/// A JSON matrix (array of rows) as row-major doubles.
std::vector<double> flat(const attn::JsonValue& m) {
    std::vector<double> out;
    for (const attn::JsonValue& row : m.array)
        for (const attn::JsonValue& x : row.array) out.push_back(x.number);
    return out;
}

/// max |a − b| over the layer's heads / max(max |b| over them, 1e-8): a saturated
/// head's near-zero dS′ is measured on the layer's scale (as W_Q holds every head).
double layer_error(const std::vector<std::vector<double>>& ours, const std::vector<std::vector<double>>& ref) {
    double diff = 0, scale = 0;
    for (std::size_t h = 0; h < ref.size(); ++h) {
        REQUIRE(ours[h].size() == ref[h].size());
        for (std::size_t i = 0; i < ref[h].size(); ++i) {
            diff = std::max(diff, std::abs(ours[h][i] - ref[h][i]));
            scale = std::max(scale, std::abs(ref[h][i]));
        }
    }
    return diff / std::max(scale, 1e-8);
}

}  // namespace

namespace {

const char* const kDefaultSentence = "The animal didn't cross the street because it was too tired.";

/// The coreference task's targets on `ids` with the wrong answer "street" at "it" (position 7).
std::vector<std::int32_t> street_targets(const attn::Checkpoint& cp, const std::vector<std::int32_t>& ids) {
    auto targets = attn::default_targets(cp.metadata, ids);
    targets[7] = word(cp, "street");
    return targets;
}

}  // namespace

TEST_CASE("backward: the coreference model's default target is the antecedent at \"it\"", "[backward]") {
    const attn::Checkpoint cp = shipped("coreference.safetensors");
    const auto ids = ids_of(cp, "The animal didn't cross the street because it was too tired.");
    const auto targets = attn::default_targets(cp.metadata, ids);
    REQUIRE(targets.size() == ids.size());
    for (std::size_t p = 0; p < ids.size(); ++p)
        CHECK(targets[p] == (ids[p] == word(cp, "it") ? word(cp, "animal") : attn::kNoTarget));
    // the obstacle's adjective: the obstacle
    const auto ids2 = ids_of(cp, "The animal didn't cross the street because it was too wide.");
    const auto t2 = attn::default_targets(cp.metadata, ids2);
    CHECK(t2[7] == word(cp, "street"));
}

TEST_CASE("backward: a sentence the task sets no target on is refused with a message", "[backward]") {
    const attn::Checkpoint cp = shipped("coreference.safetensors");
    try {
        attn::default_targets(cp.metadata, ids_of(cp, "the dog was tired ."));
        FAIL("no error");
    } catch (const attn::Error& e) {
        CHECK(e.code() == attn::Error::Code::bad_input);
        CHECK_THAT(e.what(), Catch::Matchers::Contains("--target"));
    }
}

TEST_CASE("backward: the language model's default targets are the next word at every position", "[backward]") {
    const attn::Checkpoint cp = shipped("language.safetensors");
    const auto ids = ids_of(cp, "the cat sat on the mat");
    const auto targets = attn::default_targets(cp.metadata, ids);
    for (std::size_t p = 0; p + 1 < ids.size(); ++p) CHECK(targets[p] == ids[p + 1]);
    CHECK(targets.back() == attn::kNoTarget);
}

TEST_CASE("backward: another answer raises the loss of the trained coreference model", "[backward]") {
    const attn::Checkpoint cp = shipped("coreference.safetensors");
    const auto ids = ids_of(cp, "The animal didn't cross the street because it was too tired.");
    auto targets = attn::default_targets(cp.metadata, ids);
    const double right = attn::backward_trace(cp.config, cp.params, ids, targets).loss;
    targets[7] = word(cp, "street");
    const double wrong = attn::backward_trace(cp.config, cp.params, ids, targets).loss;
    CHECK(right < 0.1);
    CHECK(wrong > 2.0);
}

TEST_CASE("backward: the JSON's intermediates equal the double reference's on both shipped models", "[backward]") {
    struct Case {
        const char* model;
        const char* sentence;
        int scale, pad_to;
    };
    const Case cases[] = {
        {"coreference.safetensors", "The animal didn't cross the street because it was too tired.", -1, 0},
        {"coreference.safetensors", "the fence stopped the cat because it was too high .", 0, 16},
        {"language.safetensors", "the cat sat on the mat", -1, 9},
        {"language.safetensors", "the cat sat on the mat", 0, 0},
    };
    for (const Case& k : cases) {
        const attn::Checkpoint cp = shipped(k.model);
        const auto ids = ids_of(cp, k.sentence);
        const attn::BackwardTrace b =
            attn::backward_trace(cp.config, cp.params, ids, attn::default_targets(cp.metadata, ids), k.scale, k.pad_to);
        const attn::JsonValue doc = attn::parse_json(attn::backward_trace_json(cp.params, b));
        INFO(k.model << " scale " << k.scale << " pad_to " << k.pad_to);
        CHECK(doc.get("config")->get("scale")->boolean == (k.scale < 0 ? cp.config.scale : k.scale == 1));
        std::vector<double> ref_grads;
        std::vector<std::vector<attn::ReferenceHeadGrads>> ref;
        const double loss = attn::reference_loss_and_grads(
            b.config, std::vector<double>(cp.params.flat().begin(), cp.params.flat().end()), b.batch, &ref_grads, &ref);
        CHECK(std::abs(doc.get("loss")->number - loss) <= 1e-4 * std::abs(loss));
        const attn::JsonValue& layers = *doc.get("layers");
        REQUIRE(layers.array.size() == static_cast<std::size_t>(cp.config.layers));
        const std::pair<const char*, std::vector<double> attn::ReferenceHeadGrads::*> fields[] = {
            {"d_output", &attn::ReferenceHeadGrads::d_output}, {"d_weights", &attn::ReferenceHeadGrads::d_weights},
            {"d_scaled", &attn::ReferenceHeadGrads::d_scaled}, {"d_scores", &attn::ReferenceHeadGrads::d_scores},
            {"d_query", &attn::ReferenceHeadGrads::d_query},   {"d_key", &attn::ReferenceHeadGrads::d_key},
            {"d_value", &attn::ReferenceHeadGrads::d_value}};
        for (std::size_t l = 0; l < layers.array.size(); ++l) {
            const attn::JsonValue& heads = *layers.array[l].get("heads");
            REQUIRE(heads.array.size() == static_cast<std::size_t>(cp.config.heads));
            for (const auto& [name, member] : fields) {
                std::vector<std::vector<double>> ours, theirs;
                for (std::size_t h = 0; h < heads.array.size(); ++h) {
                    ours.push_back(flat(*heads.array[h].get(name)));
                    theirs.push_back(ref[l][h].*member);
                }
                INFO("layer " << l << " " << name);
                CHECK(layer_error(ours, theirs) < 1e-4);
            }
        }
    }
}

TEST_CASE("sgd_step: one step on every parameter is θ − lr·g and lowers the loss of the shipped models", "[backward][sgd]") {
    struct Case { const char* model; const char* sentence; const char* wrong; };  // wrong: a word to make the target at "it"
    for (const Case c : {Case{"coreference.safetensors", "The animal didn't cross the street because it was too tired.", "street"},
                         Case{"coreference.safetensors", "The animal didn't cross the street because it was too tired.", nullptr},
                         Case{"language.safetensors", "the cat sat on the mat", nullptr}}) {
        const attn::Checkpoint cp = shipped(c.model);
        const auto ids = ids_of(cp, c.sentence);
        auto targets = attn::default_targets(cp.metadata, ids);
        if (c.wrong) targets[7] = word(cp, c.wrong);
        const attn::BackwardTrace b = attn::backward_trace(cp.config, cp.params, ids, targets);
        attn::Parameters p = cp.params;
        const double lr = 0.01;
        const double size = attn::sgd_step(cp.config, p, b.grads, lr);
        double expected2 = 0;
        for (std::size_t i = 0; i < p.size(); ++i) {
            const float want = cp.params.flat()[i] - static_cast<float>(lr * b.grads.flat()[i]);
            REQUIRE(p.flat()[i] == want);
            const double d = static_cast<double>(want) - cp.params.flat()[i];
            expected2 += d * d;
        }
        CHECK(size == Approx(std::sqrt(expected2)).epsilon(1e-12));
        CHECK(size > 0);
        const double after = attn::backward_trace(cp.config, p, ids, targets).loss;
        INFO(c.model << (c.wrong ? " wrong target" : " default targets") << ": loss " << b.loss << " → " << after);
        CHECK(after < b.loss);
    }
}

TEST_CASE("sgd_step: a head's step moves only that head's columns of W_Q, W_K, W_V and rows of W_O", "[backward][sgd]") {
    const attn::Checkpoint cp = shipped("coreference.safetensors");
    const auto ids = ids_of(cp, kDefaultSentence);
    const auto targets = street_targets(cp, ids);
    const attn::BackwardTrace b = attn::backward_trace(cp.config, cp.params, ids, targets);
    const int L = cp.config.layers, H = cp.config.heads, D = cp.config.d_model / H;
    for (int layer = 0; layer < L; ++layer)
        for (int head = 0; head < H; ++head) {
            attn::Parameters p = cp.params;
            attn::sgd_step(cp.config, p, b.grads, 0.5, layer, head);
            std::size_t moved = 0;
            for (const attn::ParamInfo& info : p.layout())
                for (int r = 0; r < info.rows; ++r)
                    for (int col = 0; col < info.cols; ++col) {
                        const std::size_t i = info.offset + static_cast<std::size_t>(r) * info.cols + col;
                        const std::string prefix = "layers." + std::to_string(layer) + ".";
                        const bool in_cols = info.name == prefix + "w_query" || info.name == prefix + "w_key" ||
                                             info.name == prefix + "w_value" || info.name == prefix + "b_query" ||
                                             info.name == prefix + "b_key" || info.name == prefix + "b_value";
                        const bool mine = (in_cols && col / D == head) || (info.name == prefix + "w_output" && r / D == head);
                        const float want = mine ? cp.params.flat()[i] - static_cast<float>(0.5 * b.grads.flat()[i]) : cp.params.flat()[i];
                        INFO(info.name << "[" << r << ", " << col << "] layer " << layer << " head " << head);
                        REQUIRE(p.flat()[i] == want);
                        moved += mine;
                    }
            CHECK(moved == static_cast<std::size_t>(4 * cp.config.d_model * D));
        }
}

TEST_CASE("sgd_step: a bad learning rate, layer or head is refused with a code, and a non-finite step keeps the weights", "[backward][sgd]") {
    const attn::Checkpoint cp = shipped("coreference.safetensors");
    const auto ids = ids_of(cp, "The animal didn't cross the street because it was too tired.");
    const attn::BackwardTrace b = attn::backward_trace(cp.config, cp.params, ids, attn::default_targets(cp.metadata, ids));
    attn::Parameters p = cp.params;
    const auto code_of = [&](double lr, int layer, int head) {
        try {
            attn::sgd_step(cp.config, p, b.grads, lr, layer, head);
        } catch (const attn::Error& e) {
            return e.code();
        }
        FAIL("no error");
        return attn::Error::Code::internal;
    };
    CHECK(code_of(std::nan(""), -1, -1) == attn::Error::Code::not_finite);
    CHECK(code_of(0, -1, -1) == attn::Error::Code::bad_input);
    CHECK(code_of(-0.1, -1, -1) == attn::Error::Code::bad_input);
    CHECK(code_of(attn::kMaxSgdRate * 2, -1, -1) == attn::Error::Code::bad_input);
    CHECK(code_of(0.1, cp.config.layers, 0) == attn::Error::Code::bad_input);
    CHECK(code_of(0.1, 0, cp.config.heads) == attn::Error::Code::bad_input);
    CHECK(code_of(0.1, 0, -1) == attn::Error::Code::bad_input);
    attn::Parameters huge = b.grads;
    huge.flat()[huge.size() / 2] = 3e38f;
    try {
        attn::sgd_step(cp.config, p, huge, attn::kMaxSgdRate);
        FAIL("no error");
    } catch (const attn::Error& e) {
        CHECK(e.code() == attn::Error::Code::not_finite);
    }
    CHECK(p.flat() == cp.params.flat());
}

namespace {

/// Every kept head's dO against dY·W_O: dO_h[i, d] = Σ_c dY[i, c]·W_O[h·D + d, c], summed in double.
void check_head_outputs_from_attention_gradient(const attn::ModelConfig& config, const attn::Parameters& params,
                                                const attn::BackwardTrace& b) {
    const int C = config.d_model, H = config.heads, D = C / H;
    for (int l = 0; l < config.layers; ++l) {
        const attn::LayerGradTrace& lg = b.recorder.gradients.layers[static_cast<std::size_t>(l)];
        const auto w = params.view("layers." + std::to_string(l) + ".w_output");
        REQUIRE(lg.d_attention.cols() == C);
        REQUIRE(lg.heads.size() == static_cast<std::size_t>(H));
        for (int h = 0; h < H; ++h) {
            double diff = 0, largest = 0;  // relative to the head's largest |dO| (float32 products)
            for (int i = 0; i < lg.d_attention.rows(); ++i)
                for (int d = 0; d < D; ++d) {
                    double sum = 0;
                    for (int c = 0; c < C; ++c) sum += double(lg.d_attention(i, c)) * double(w(h * D + d, c));
                    diff = std::max(diff, std::abs(lg.heads[static_cast<std::size_t>(h)].d_output(i, d) - sum));
                    largest = std::max(largest, std::abs(sum));
                }
            INFO("layer " << l << " head " << h << ": max |dO - dY·W_O| " << diff << " of max |dO| " << largest);
            CHECK(largest > 0);  // the gradient reached the head: the check compared numbers, not zeros
            CHECK(diff <= 1e-5 * largest);
        }
    }
}

}  // namespace

TEST_CASE("backward: the recorded dY (the attention output's gradient) gives every head's dO through W_O, pre-LN and post-LN", "[backward]") {
    const attn::Checkpoint cp = shipped("coreference.safetensors");
    const auto ids = ids_of(cp, kDefaultSentence);
    const auto targets = street_targets(cp, ids);
    const attn::BackwardTrace b = attn::backward_trace(cp.config, cp.params, ids, targets);
    REQUIRE(b.recorder.gradients.layers[0].d_attention.rows() == static_cast<int>(ids.size()));
    check_head_outputs_from_attention_gradient(cp.config, cp.params, b);

    // post-LN (BERT's order): dY is the gradient below the first LayerNorm
    attn::ModelConfig post = cp.config;
    post.norm = attn::Norm::post;
    attn::Parameters params(post);
    attn::init_parameters(post, 5, params);
    std::vector<std::int32_t> every(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) every[i] = ids[(i + 1) % ids.size()];
    check_head_outputs_from_attention_gradient(post, params, attn::backward_trace(post, params, ids, every));
}
