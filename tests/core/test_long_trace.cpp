// Tests of a long trace (model.hpp TraceKeep / Recorder: one layer's heads and vectors,
// the top-k next tokens and no T×V logits): a GPT-2-small-shaped model (the real
// vocabulary, V = 50257, and context, T = 1024; a narrow C so that it runs in seconds)
// is traced at its full context; the top-k is checked against logits computed
// independently in double precision, on a short input against the reference
// (model_reference.cpp), and the memory estimate against the measured peak.

#include "model/model.hpp"
#include "model_test_util.hpp"
#include "peak_memory.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using Catch::Matchers::Contains;
using attn::ModelConfig;
using attn::TraceKeep;

namespace {

constexpr int kV = 50257, kT = 1024, kK = 5;

/// GPT-2 small's shape but C = 48 (12 heads of 4) and 2 layers: what makes a long trace
/// large is V (the T×V logits) and H·T² (one layer's maps), both GPT-2 small's here.
ModelConfig gpt2_shaped() {
    return model_test::gpt2_options(model_test::sized_config(kV, kT, 48, 12, 2, 192));
}

std::vector<std::int32_t> random_ids(std::mt19937& rng, int n) {
    std::uniform_int_distribution<int> u(0, kV - 1);
    std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
    for (auto& id : ids) id = u(rng);
    return ids;
}

/// The page's request: layer `layer`'s heads and vectors, the top 5, no logits.
TraceKeep page_keep(int layer) {
    TraceKeep k;
    k.layer = layer;
    k.vectors = layer;
    k.logits = false;
    k.top_k = kK;
    return k;
}

const TraceKeep& page_keep_ref() {
    static const TraceKeep k = page_keep(1);
    return k;
}

/// Softmax of one row of double logits.
std::vector<double> softmax(const double* logits, int V) {
    const double mx = *std::max_element(logits, logits + V);
    std::vector<double> p(static_cast<std::size_t>(V));
    double z = 0;
    for (int j = 0; j < V; ++j) z += p[static_cast<std::size_t>(j)] = std::exp(logits[j] - mx);
    for (double& v : p) v /= z;
    return p;
}

/// Row `row` of the trace's top-k against the double probabilities `ref` of that row: the
/// j-th id's reference probability is the reference's j-th largest (two tokens whose
/// probabilities differ by less than the float rounding may swap), and its p matches.
void check_top_row(const attn::ModelTrace& tr, int row, const std::vector<double>& ref) {
    std::vector<int> order(ref.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + kK, order.end(),
                      [&](int a, int b) { return ref[static_cast<std::size_t>(a)] > ref[static_cast<std::size_t>(b)]; });
    for (int j = 0; j < kK; ++j) {
        const std::size_t at = static_cast<std::size_t>(row) * kK + static_cast<std::size_t>(j);
        const int id = tr.top_ids[at];
        INFO("row " << row << ", rank " << j << ": id " << id << ", the reference's " << order[static_cast<std::size_t>(j)]);
        REQUIRE(id >= 0);
        REQUIRE(id < kV);
        const double want = ref[static_cast<std::size_t>(order[static_cast<std::size_t>(j)])];
        CHECK(std::fabs(ref[static_cast<std::size_t>(id)] - want) <= 1e-4 * want + 1e-7);
        CHECK(std::fabs(tr.top_p[at] - ref[static_cast<std::size_t>(id)]) <= 1e-4 * want + 1e-7);
        if (j > 0) CHECK(tr.top_p[at] <= tr.top_p[at - 1]);
    }
}

}  // namespace

TEST_CASE("long trace: a GPT-2-small-shaped model traces one layer at T = 1024, and its top 5 are the double logits' top 5",
          "[model][recorder][long]") {
    const ModelConfig c = gpt2_shaped();
    std::mt19937 rng(20261202);
    attn::Parameters params;
    attn::init_parameters(c, 7, params);
    const std::vector<std::int32_t> ids = random_ids(rng, kT);
    // everything kept (every layer's maps and vectors, the logits) is more than the limit, refused before
    // anything is allocated, and the refusal says what to ask for instead
    try {
        attn::trace_model(c, params, ids);
        FAIL("a full trace of every layer at T = 1024 with V = 50257 fit the limit");
    } catch (const attn::Error& e) {
        CHECK(e.code() == attn::Error::Code::too_large);
        CHECK_THAT(e.what(), Contains("tracing 1024 tokens needs") && Contains("the full logits and probabilities") &&
                                 Contains("every layer's heads") &&
                                 Contains("ask for the top-k next tokens instead of the full logits") &&
                                 Contains("trace one layer") && Contains("or use fewer tokens"));
    }
    // the T×V logits and probabilities are what a top-k-only trace leaves out
    TraceKeep one_layer_full;
    one_layer_full.layer = 1;
    CHECK(attn::run_memory(c, 1, kT, &one_layer_full) - attn::run_memory(c, 1, kT, &page_keep_ref()) >=
          std::int64_t{2} * kT * kV * 4);
    const attn::ModelTrace tr = attn::trace_model(c, params, ids, -1, {}, page_keep(1));
    REQUIRE(tr.top_k == kK);
    REQUIRE(tr.top_ids.size() == static_cast<std::size_t>(kT) * kK);
    REQUIRE(tr.top_p.size() == tr.top_ids.size());
    CHECK(tr.logits.size() == 0);
    CHECK(tr.probabilities.size() == 0);
    // layer 1 in full, layer 0 nothing
    const attn::LayerTrace& kept = tr.layers[1];
    CHECK(kept.input.rows() == kT);
    CHECK(kept.mlp_hidden.cols() == 192);
    CHECK(kept.output.rows() == kT);
    REQUIRE(kept.attention.heads.size() == 12);
    CHECK(kept.attention.heads[11].weights.rows() == kT);
    CHECK(tr.layers[0].input.size() == 0);
    CHECK(tr.layers[0].output.size() == 0);
    CHECK(tr.layers[0].attention.heads.empty());
    REQUIRE(tr.final_normed.rows() == kT);
    // the logits of a row, in double, from the final vectors and the tied embedding: the
    // rows at either side of every block edge of the unembedding, and a spread of others
    const auto E = params.view("embed");
    std::vector<int> rows;
    for (int r = 0; r < kT; r += 37) rows.push_back(r);
    for (int edge = attn::kTraceLogitRows; edge < kT; edge += attn::kTraceLogitRows) {
        rows.push_back(edge - 1);
        rows.push_back(edge);
    }
    rows.push_back(kT - 1);
    std::vector<double> logits(kV);
    for (const int r : rows) {
        for (int v = 0; v < kV; ++v) {
            double s = 0;
            for (int j = 0; j < c.d_model; ++j) s += static_cast<double>(tr.final_normed(r, j)) * E(v, j);
            logits[static_cast<std::size_t>(v)] = s;
        }
        check_top_row(tr, r, softmax(logits.data(), kV));
    }
}

TEST_CASE("long trace: the top 5 of a top-k-only trace are the reference's (double) and the full trace's", "[model][recorder][long]") {
    const ModelConfig c = gpt2_shaped();
    std::mt19937 rng(77);
    const attn::Parameters params = model_test::random_params(rng, c, 0.05f);
    SECTION("a short input against model_reference.cpp's logits") {
        const int T = 6;
        const std::vector<std::int32_t> ids = random_ids(rng, T);
        const attn::ModelTrace tr = attn::trace_model(c, params, ids, -1, {}, page_keep(0));
        attn::Batch b;
        b.batch = 1;
        b.length = T;
        b.ids = ids;
        b.targets.assign(ids.size(), attn::kNoTarget);
        std::vector<double> ref;
        attn::reference_loss_and_grads(c, model_test::to_double(params), b, nullptr, nullptr, &ref);
        REQUIRE(ref.size() == static_cast<std::size_t>(T) * kV);
        for (int r = 0; r < T; ++r) check_top_row(tr, r, softmax(ref.data() + static_cast<std::size_t>(r) * kV, kV));
    }
    SECTION("across the unembedding's blocks: the same numbers as the whole product's probabilities") {
        const int T = 2 * attn::kTraceLogitRows + 9;
        const std::vector<std::int32_t> ids = random_ids(rng, T);
        TraceKeep full = page_keep(0);
        full.logits = true;
        const attn::ModelTrace whole = attn::trace_model(c, params, ids, -1, {}, full);
        const attn::ModelTrace blocks = attn::trace_model(c, params, ids, -1, {}, page_keep(0));
        REQUIRE(whole.probabilities.rows() == T);
        CHECK(blocks.top_ids == whole.top_ids);
        CHECK(blocks.top_p == whole.top_p);
        // and the full trace's top 5 are its probabilities' five largest
        for (int r = 0; r < T; ++r) {
            std::vector<double> p(whole.probabilities.row(r).data(), whole.probabilities.row(r).data() + kV);
            check_top_row(whole, r, p);
        }
    }
}

TEST_CASE("long trace: the estimate of a trace is at least what it allocates, top-k only at T = 1024 and full at T = 256",
          "[model][recorder][long][memory]") {
    const ModelConfig c = gpt2_shaped();
    attn::Parameters params;
    attn::init_parameters(c, 3, params);
    std::mt19937 rng(5);
    struct Case {
        int T;
        TraceKeep keep;
    };
    TraceKeep full;  // every layer's heads and vectors, the logits, the top 5
    full.top_k = kK;
    for (const Case& k : {Case{kT, page_keep(0)}, Case{256, full}}) {
        const std::vector<std::int32_t> ids = random_ids(rng, k.T);
        const std::int64_t estimate = attn::run_memory(c, 1, k.T, &k.keep);
        const std::int64_t used = test_memory::peak_memory_of([&] {
            const attn::ModelTrace tr = attn::trace_model(c, params, ids, -1, {}, k.keep);
            CHECK(tr.top_k == kK);
        });
        INFO("T = " << k.T << (k.keep.logits ? ", full" : ", top-k only") << ": " << used << " bytes used, " << estimate
                    << " estimated");
        CHECK(estimate <= attn::kMaxTrainingBytes);
        CHECK(estimate >= used);
        // the measure sees the trace's big buffers: one layer's maps (H·T²·4 floats, the heads'
        // scaled scores, scores and weights, and the forward's weights), or the T×V logits
        const std::int64_t big = k.keep.logits ? std::int64_t{k.T} * kV * 4 * 2 : std::int64_t{12} * k.T * k.T * 4 * 4;
        CHECK(used > big / 2);
    }
}
