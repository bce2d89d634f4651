// attn_pretrained_bench: a GPT-2-small-shaped random checkpoint in the Hub's
// layout, loaded natively through HubLoader (the CLI's streaming read) and run.
//   attn_pretrained_bench --write DIR [--layers 12] [--d-model 768] [--heads 12] [--vocab 50257] [--context 1024]
//       config.json + model.safetensors (F32, with the attn.bias buffers: GPT-2 small is 548 MB)
//   attn_pretrained_bench --run DIR [--lengths 16,128,512] [--repeat 3]
//       one JSON line each: the load (seconds, peak RSS, parameter bytes), then the
//       forward (Model::run, no trace), the page's one-layer trace (Model::trace of
//       layer 0: every intermediate of that layer, the top 5 per position, no T×V logits)
//       and the full one (every layer's vectors and the logits, as attn run's JSON; or
//       the reason it is refused) at each T, the best of --repeat by wall time, with the
//       CPU time of the same call and the peak resident memory above the level before
//       (VmHWM, reset per measurement) and run_memory()'s estimate of the page's trace;
//       and the Learn steps' backward (pretrained_backward of layer 0, next-token targets)
//       with learn_memory()'s estimate, or the reason it is refused.
// Not a test (bench/pretrained.sh runs it beside PyTorch).

#include "cli/hub_cli.hpp"
#include "train/backward.hpp"

#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
double cpu_now() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

struct Timing {
    double wall = 1e30, cpu = 0;
};

/// The best of `repeat` calls of f by wall time, with that call's CPU time.
template <typename F>
Timing best_of(int repeat, F f) {
    Timing out;
    for (int r = 0; r < repeat; ++r) {
        const double w = now(), c = cpu_now();
        f();
        const double dw = now() - w, dc = cpu_now() - c;
        if (dw < out.wall) out = {dw, dc};
    }
    return out;
}

long peak_rss_bytes() {
    rusage u {};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss * 1024L;
}

/// A field of /proc/self/status in bytes (VmRSS, VmHWM), 0 when absent.
long status_bytes(const char* field) {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    long kb = 0;
    const std::size_t n = std::strlen(field);
    while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, field, n) == 0 && line[n] == ':') kb = std::atol(line + n + 1);
    std::fclose(f);
    return kb * 1024;
}

/// The peak resident set while f runs, above the resident set before it (VmHWM reset through
/// /proc/self/clear_refs after malloc_trim returned freed memory: the measure of
/// tests/core/test_trainer.cpp), in bytes; -1 when the reset is not possible.
template <typename F>
long peak_of(F f) {
    malloc_trim(0);
    std::FILE* c = std::fopen("/proc/self/clear_refs", "w");
    const bool reset = c && std::fputs("5", c) >= 0;
    if (c) std::fclose(c);
    const long before = status_bytes("VmRSS");
    f();
    return reset ? status_bytes("VmHWM") - before : -1;
}

struct Spec {
    int layers = 12, d_model = 768, heads = 12, vocab = 50257, context = 1024;
};

struct Entry {
    std::string name;
    std::vector<long> shape;
    bool mask = false;  // the causal attn.bias buffer
    long count() const {
        long n = 1;
        for (long d : shape) n *= d;
        return n;
    }
};

/// Uniform in ±a from a counter (splitmix64): the same file every time, fast.
float value(std::uint64_t i, float a) {
    std::uint64_t z = i + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return a * (static_cast<float>(z >> 40) / static_cast<float>(1 << 24) * 2.0f - 1.0f);
}

int write(const std::string& dir, const Spec& s) {
    const long C = s.d_model, F = 4 * C;
    std::vector<Entry> t = {{"wte.weight", {s.vocab, C}}, {"wpe.weight", {s.context, C}}};
    for (int l = 0; l < s.layers; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        t.push_back({h + "ln_1.weight", {C}});
        t.push_back({h + "ln_1.bias", {C}});
        t.push_back({h + "attn.bias", {1, 1, s.context, s.context}, true});
        t.push_back({h + "attn.c_attn.weight", {C, 3 * C}});
        t.push_back({h + "attn.c_attn.bias", {3 * C}});
        t.push_back({h + "attn.c_proj.weight", {C, C}});
        t.push_back({h + "attn.c_proj.bias", {C}});
        t.push_back({h + "ln_2.weight", {C}});
        t.push_back({h + "ln_2.bias", {C}});
        t.push_back({h + "mlp.c_fc.weight", {C, F}});
        t.push_back({h + "mlp.c_fc.bias", {F}});
        t.push_back({h + "mlp.c_proj.weight", {F, C}});
        t.push_back({h + "mlp.c_proj.bias", {C}});
    }
    t.push_back({"ln_f.weight", {C}});
    t.push_back({"ln_f.bias", {C}});
    std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
    long offset = 0;
    for (const Entry& e : t) {
        header += ",\"" + e.name + "\":{\"dtype\":\"F32\",\"shape\":[";
        for (std::size_t i = 0; i < e.shape.size(); ++i) header += (i ? "," : "") + std::to_string(e.shape[i]);
        header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + 4 * e.count()) + "]}";
        offset += 4 * e.count();
    }
    header += "}";
    while ((8 + header.size()) % 8) header += ' ';
    std::FILE* f = std::fopen((dir + "/model.safetensors").c_str(), "wb");
    if (!f) {
        std::perror(dir.c_str());
        return 1;
    }
    const std::uint64_t n = header.size();
    unsigned char size[8];
    for (int i = 0; i < 8; ++i) size[i] = static_cast<unsigned char>((n >> (8 * i)) & 0xFF);
    std::fwrite(size, 1, 8, f);
    std::fwrite(header.data(), 1, header.size(), f);
    std::uint64_t counter = 0;
    std::vector<float> row;
    for (const Entry& e : t) {
        const bool gain = e.name.find("ln_") != std::string::npos && e.name.find(".weight") != std::string::npos;
        const long cols = e.shape.back(), rows = e.count() / cols;
        const float a = e.name.find("wte") == 0 || e.name.find("wpe") == 0 ? 0.1f : 1.7f / std::sqrt(static_cast<float>(e.shape[0]));
        row.resize(static_cast<std::size_t>(cols));
        for (long r = 0; r < rows; ++r) {
            for (long c = 0; c < cols; ++c) {
                float v;
                if (e.mask) v = c <= r % s.context ? 1.0f : 0.0f;
                else if (gain) v = 1.0f + 0.1f * value(counter++, 1.0f);
                else if (e.shape.size() == 1) v = value(counter++, 0.02f);
                else v = value(counter++, a);
                row[static_cast<std::size_t>(c)] = v;
            }
            std::fwrite(row.data(), 4, row.size(), f);  // little-endian hosts (x86-64, wasm)
        }
    }
    std::fclose(f);
    std::FILE* c = std::fopen((dir + "/config.json").c_str(), "w");
    std::fprintf(c,
                 "{\"architectures\":[\"GPT2LMHeadModel\"],\"model_type\":\"gpt2\",\"n_layer\":%d,\"n_head\":%d,\"n_embd\":%d,"
                 "\"n_positions\":%d,\"n_ctx\":%d,\"vocab_size\":%d,\"n_inner\":null,\"activation_function\":\"gelu_new\","
                 "\"layer_norm_epsilon\":1e-05}\n",
                 s.layers, s.heads, s.d_model, s.context, s.context, s.vocab);
    std::fclose(c);
    std::printf("{\"wrote\":\"%s\",\"bytes\":%ld}\n", dir.c_str(), 8 + static_cast<long>(header.size()) + offset);
    return 0;
}

int run(const std::string& dir, const std::vector<int>& lengths, int repeat) {
    const long rss_before = peak_rss_bytes();
    const double t0 = now(), c0 = cpu_now();
    const attn::ModelConfig config = attn::cli::read_hub_folder_config(dir);
    std::unique_ptr<attn::Model> model = attn::cli::load_hub_folder(dir, config);
    const double load = now() - t0, load_cpu = cpu_now() - c0;
    const long param_bytes = static_cast<long>(model->params().size() * 4);
    std::printf("{\"load_s\":%.3f,\"load_cpu_s\":%.3f,\"parameter_bytes\":%ld,\"peak_rss_bytes\":%ld,\"rss_before_bytes\":%ld,\"peak_over_weights\":%.3f}\n",
                load, load_cpu, param_bytes, peak_rss_bytes(), rss_before, static_cast<double>(peak_rss_bytes()) / param_bytes);
    std::fflush(stdout);
    for (int T : lengths) {
        attn::Batch b;
        b.batch = 1;
        b.length = T;
        for (int i = 0; i < T; ++i) b.ids.push_back(static_cast<std::int32_t>((i * 7919) % config.vocab));
        b.targets.assign(static_cast<std::size_t>(T), attn::kNoTarget);
        Timing forward, trace, full;
        const long forward_peak = peak_of([&] { forward = best_of(repeat, [&] { model->run(b); }); });
        // the page's trace: layer 0's heads and vectors, the top 5 per position, no T×V logits
        attn::TraceKeep page;
        page.layer = 0;
        page.vectors = 0;
        page.logits = false;
        page.top_k = 5;
        const long trace_peak = peak_of([&] { trace = best_of(repeat, [&] { model->trace(b.ids, -1, {}, page); }); });
        // the full one-layer trace (attn run --model DIR --layer 0's JSON): every layer's vectors, the logits
        std::string refused;
        long full_peak = 0;
        try {
            full_peak = peak_of([&] { full = best_of(repeat, [&] { model->trace(b.ids, -1, {}, 0); }); });
        } catch (const attn::Error& e) {
            refused = e.what();
        }
        std::printf("{\"T\":%d,\"forward_s\":%.4f,\"forward_cpu_s\":%.4f,\"forward_peak_bytes\":%ld,\"trace_s\":%.4f,"
                    "\"trace_cpu_s\":%.4f,\"trace_peak_bytes\":%ld,\"trace_estimate_bytes\":%lld,",
                    T, forward.wall, forward.cpu, forward_peak, trace.wall, trace.cpu, trace_peak,
                    static_cast<long long>(attn::run_memory(config, 1, T, &page)));
        if (refused.empty())
            std::printf("\"full_trace_s\":%.4f,\"full_trace_cpu_s\":%.4f,\"full_trace_peak_bytes\":%ld,", full.wall, full.cpu, full_peak);
        else
            std::printf("\"full_trace_refused\":\"%s\",", refused.substr(0, refused.find(" (")).c_str());
        // the Learn steps' backward (pretrained_backward: layer 0's gradients, the next token as target)
        std::vector<std::int32_t> next(b.ids.begin() + 1, b.ids.end());
        next.push_back(attn::kNoTarget);
        Timing backward;
        std::string backward_refused;
        long backward_peak = 0;
        try {
            backward_peak = peak_of([&] { backward = best_of(repeat, [&] { attn::pretrained_backward(*model, b.ids, next, 0); }); });
        } catch (const attn::Error& e) {
            backward_refused = e.what();
        }
        if (backward_refused.empty())
            std::printf("\"backward_s\":%.4f,\"backward_cpu_s\":%.4f,\"backward_peak_bytes\":%ld,\"backward_estimate_bytes\":%lld,",
                        backward.wall, backward.cpu, backward_peak, static_cast<long long>(attn::learn_memory(config, T)));
        else
            std::printf("\"backward_refused\":\"%s\",", backward_refused.c_str());
        std::printf("\"peak_rss_bytes\":%ld}\n", peak_rss_bytes());
        std::fflush(stdout);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Spec s;
    std::string mode, dir;
    std::vector<int> lengths = {16, 128, 512};
    int repeat = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--write" || a == "--run") mode = a, dir = v;
        else if (a == "--layers") s.layers = std::atoi(v.c_str());
        else if (a == "--d-model") s.d_model = std::atoi(v.c_str());
        else if (a == "--heads") s.heads = std::atoi(v.c_str());
        else if (a == "--vocab") s.vocab = std::atoi(v.c_str());
        else if (a == "--context") s.context = std::atoi(v.c_str());
        else if (a == "--repeat") repeat = std::atoi(v.c_str());
        else if (a == "--lengths") {
            lengths.clear();
            for (const char* p = v.c_str(); *p;) {
                lengths.push_back(std::atoi(p));
                while (*p && *p != ',') ++p;
                if (*p) ++p;
            }
        } else {
            std::fprintf(stderr, "unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    try {
        if (mode == "--write") return write(dir, s);
        if (mode == "--run") return run(dir, lengths, repeat);
    } catch (const attn::Error& e) {
        std::fprintf(stderr, "attn_pretrained_bench: %s\n", e.what());
        return 2;
    }
    std::fprintf(stderr, "usage: attn_pretrained_bench --write DIR | --run DIR [--lengths 16,128,512]\n");
    return 2;
}
