// attn_kinds_bench: the block's speed, for comparing two builds of the engine in one
// interleaved run (bench/kinds_bench.sh builds this file against the branch point and
// against the working tree, then alternates them).
//
//   attn_kinds_bench train SECONDS   one training step: Model::forward + backward of a
//                                    batch of 16 × 64 tokens, C 128, 4 heads, 2 layers,
//                                    MLP 256, learned positions, causal (the training
//                                    benchmark's model)
//   attn_kinds_bench trace SECONDS   one traced forward of 128 tokens through a
//                                    GPT-2-small-shaped model (C 768, 12 heads, 12 layers,
//                                    MLP 3072, V 50257, weights as panels), keeping one
//                                    layer's heads, every layer's vectors and the top 5
//   attn_kinds_bench rope SECONDS    (new engine only) the attention layer kind at T = 512,
//                                    C 768, 12 heads, causal: forward + backward with
//                                    learned (no rotation) and with rope positions, and the
//                                    rotation alone
//
// Prints one JSON line per measurement: {"what", "ms"} (the median of the timed calls).

#include "model/model.hpp"
#ifdef ATTN_KINDS_NEW
#include "model/block.hpp"
#include "model/layers.hpp"
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/// The median time of f in milliseconds over `seconds` (after one warm-up call).
double median_ms(double seconds, const std::function<void()>& f) {
    f();
    std::vector<double> times;
    const auto start = Clock::now();
    while (times.size() < 3 || std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
        const auto t0 = Clock::now();
        f();
        times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
    return times[times.size() / 2];
}

void report(const char* what, double ms) { std::printf("{\"what\": \"%s\", \"ms\": %.4f}\n", what, ms); }

attn::Batch random_batch(std::mt19937& rng, int batch, int length, int vocab) {
    attn::Batch b;
    b.batch = batch;
    b.length = length;
    for (int i = 0; i < batch * length; ++i) {
        b.ids.push_back(std::uniform_int_distribution<int>(0, vocab - 1)(rng));
        b.targets.push_back(std::uniform_int_distribution<int>(0, vocab - 1)(rng));
    }
    return b;
}

void train(double seconds) {
    attn::ModelConfig c;
    c.vocab = 64;
    c.context = 64;
    c.layers = 2;
    c.d_model = 128;
    c.heads = 4;
    c.mlp = 256;
    c.causal = true;
    attn::Model model(c);
    attn::init_parameters(c, 1, model.params());
    std::mt19937 rng(3);
    const attn::Batch b = random_batch(rng, 16, 64, c.vocab);
    attn::Parameters grads;
    report("train step (B 16, T 64, C 128, H 4, L 2, F 256)", median_ms(seconds, [&] {
               model.forward(b);
               model.backward(grads);
           }));
}

void trace(double seconds) {
    attn::ModelConfig c;
    c.vocab = 50257;
    c.context = 1024;
    c.layers = 12;
    c.d_model = 768;
    c.heads = 12;
    c.mlp = 3072;
    c.causal = true;
    c.tied = true;
    c.attn_bias = true;
    c.activation = attn::Activation::gelu_tanh;
    attn::Parameters params;
    attn::init_parameters(c, 1, params);
    params.use_panels();
    std::mt19937 rng(5);
    std::vector<std::int32_t> ids;
    for (int i = 0; i < 128; ++i) ids.push_back(std::uniform_int_distribution<int>(0, c.vocab - 1)(rng));
    attn::TraceKeep keep;
    keep.layer = 5;
    keep.logits = false;
    keep.top_k = 5;
    report("GPT-2-small-shaped traced forward (T 128)",
           median_ms(seconds, [&] { attn::trace_model(c, params, ids, -1, {}, keep); }));
}

#ifdef ATTN_KINDS_NEW
void rope(double seconds) {
    for (const attn::Positional p : {attn::Positional::learned, attn::Positional::rope}) {
        attn::ModelConfig c;
        c.vocab = 16;
        c.context = 512;
        c.d_model = 768;
        c.heads = 12;
        c.causal = true;
        c.positional = p;
        attn::Parameters params;
        attn::init_parameters(c, 1, params);
        attn::Parameters grads(c);
        const attn::ParamSlots slots = attn::resolve_slots(c);
        const attn::ParamPtrs w = attn::bind(slots, static_cast<const float*>(params.flat().data()));
        const attn::GradPtrs g = attn::bind(slots, grads.flat().data());
        const int T = 512;
        attn::Matrix a(T, c.d_model), dout(T, c.d_model), out, da;
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(-1, 1);
        for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = u(rng), dout.data()[i] = u(rng);
        const std::vector<int> lengths = {T};
        const attn::ForwardOptions options;
        attn::RelativePositions positions;  // rope's table of positions 0 … T−1
        attn::relative_positions(c, 0, T, positions);
        const attn::AttentionRun run = attn::attention_run(c, 1, T, lengths, options, 0, &positions);
        attn::RopeTable& table = positions.rope;
        attn::AttentionCache cache;
        const std::string kind = attn::positional_name(p);
        report(("attention forward, T 512, C 768, H 12, " + kind).c_str(), median_ms(seconds, [&] {
                   attn::attention_forward(c, w.layers[0], a, run, cache, out, nullptr, attn::Tap{});
               }));
        double sq = 0;
        report(("attention forward + backward, T 512, C 768, H 12, " + kind).c_str(), median_ms(seconds, [&] {
                   attn::attention_forward(c, w.layers[0], a, run, cache, out, nullptr, attn::Tap{});
                   attn::attention_backward(c, w.layers[0], g.layers[0], a, run, cache, dout, da, sq, attn::Tap{});
               }));
        if (p == attn::Positional::rope) {
            attn::Matrix q = a;
            report("RoPE: rotating q and k of T 512, C 768 (build the table once)", median_ms(seconds, [&] {
                       for (int t = 0; t < T; ++t)
                           for (int rep = 0; rep < 2; ++rep)
                               attn::rope_rotate_row(q.data() + static_cast<std::ptrdiff_t>(t) * c.d_model, c.heads,
                                                     c.d_model / c.heads, table.cos_row(t), table.sin_row(t), false);
                   }));
            report("RoPE: the cos/sin table of T 512, D 64", median_ms(seconds, [&] {
                       attn::rope_table(c.d_model / c.heads, attn::rope_settings(c), 0, T, table);
                   }));
        }
    }
}
#endif

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: attn_kinds_bench train|trace|rope SECONDS\n");
        return 2;
    }
    const std::string what = argv[1];
    const double seconds = std::atof(argv[2]);
    if (what == "train") train(seconds);
    else if (what == "trace") trace(seconds);
#ifdef ATTN_KINDS_NEW
    else if (what == "rope") rope(seconds);
#endif
    else {
        std::fprintf(stderr, "attn_kinds_bench: unknown measurement %s\n", what.c_str());
        return 2;
    }
    return 0;
}
