// Native timing of one attention size, for bench/run.mjs (which spawns it
// between its wasm measurements, so native and wasm rows come from one
// interleaved run). Prints one JSON line:
//   {"impl", "backend", "flags", "tokens", "d_model", "heads", "mask",
//    "times_ms": [...], "cpu_ms": [...], "peak_rss_bytes", "workspace_bytes"}
//
//   attn_bench --tokens T --d-model C --heads H [--mask none|causal] [--no-scale]
//              [--impl fast|eigen] [--warmup N] [--reps N]
//              [--input file] [--output file]
// --input: raw float32, x (T×C) then W_Q, W_K, W_V, W_O (C×C each), row-major;
// without it the inputs are random (seeded). --output writes y (T×C) as raw float32.

#include "attention/fast_attention.hpp"
#include "attention/mask.hpp"
#include "attention/multi_head.hpp"

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace {

[[noreturn]] void usage(const std::string& why) {
    std::cerr << "attn_bench: " << why << "\n"
              << "usage: attn_bench --tokens T --d-model C --heads H [--mask none|causal] [--no-scale]\n"
                 "                  [--impl fast|eigen] [--warmup N] [--reps N] [--input file] [--output file]\n";
    std::exit(2);
}

/// Peak resident set of this process in bytes (VmHWM; unlike getrusage's
/// ru_maxrss it does not carry over the parent's peak across fork + exec).
long peak_rss_bytes() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6) * 1024L;
    return 0;
}

double cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void read_matrix(std::ifstream& in, attn::Matrix& m, const char* what) {
    in.read(reinterpret_cast<char*>(m.data()), static_cast<std::streamsize>(m.size() * sizeof(float)));
    if (!in) usage(std::string("input file too short for ") + what);
}

}  // namespace

int main(int argc, char** argv) {
    int t = 0, c = 0, heads = 0, warmup = 3, reps = 10;
    std::string mask_name = "none", impl = "fast", input, output;
    bool scale = true;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) usage(a + " needs a value");
            return argv[++i];
        };
        if (a == "--tokens") t = std::atoi(next().c_str());
        else if (a == "--d-model") c = std::atoi(next().c_str());
        else if (a == "--heads") heads = std::atoi(next().c_str());
        else if (a == "--mask") mask_name = next();
        else if (a == "--no-scale") scale = false;
        else if (a == "--impl") impl = next();
        else if (a == "--warmup") warmup = std::atoi(next().c_str());
        else if (a == "--reps") reps = std::atoi(next().c_str());
        else if (a == "--input") input = next();
        else if (a == "--output") output = next();
        else usage("unknown argument " + a);
    }
    if (t < 1 || c < 1 || heads < 1) usage("--tokens, --d-model and --heads are required and positive");
    if (impl != "fast" && impl != "eigen") usage("--impl is fast or eigen");
    if (mask_name != "none" && mask_name != "causal") usage("--mask is none or causal");

    attn::Matrix x(t, c);
    attn::Weights w{attn::Matrix(c, c), attn::Matrix(c, c), attn::Matrix(c, c), attn::Matrix(c, c)};
    if (!input.empty()) {
        std::ifstream in(input, std::ios::binary);
        if (!in) usage("cannot open " + input);
        read_matrix(in, x, "x");
        read_matrix(in, w.w_query, "w_query");
        read_matrix(in, w.w_key, "w_key");
        read_matrix(in, w.w_value, "w_value");
        read_matrix(in, w.w_output, "w_output");
    } else {
        std::mt19937 rng(42);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (attn::Matrix* m : {&x, &w.w_query, &w.w_key, &w.w_value, &w.w_output})
            for (Eigen::Index i = 0; i < m->size(); ++i) m->data()[i] = u(rng) * (m == &x ? 1.0f : 0.1f);
    }

    const bool causal = mask_name == "causal";
    const attn::MaskMatrix mask = attn::build_mask(causal ? attn::MaskKind::causal : attn::MaskKind::none, t, t);
    const attn::MaskSpec spec = causal ? attn::MaskSpec::causal() : attn::MaskSpec::none();
    attn::FastAttention fast;
    attn::Matrix y;
    auto run = [&] {
        if (impl == "fast") fast.forward(x, w, heads, spec, scale, y);
        else y = attn::multi_head_output(x, w, heads, mask, scale);
    };

    try {
        for (int i = 0; i < warmup; ++i) run();
        std::vector<double> times, cpu;
        for (int i = 0; i < reps; ++i) {
            const double cpu_start = cpu_ms();
            const auto start = std::chrono::steady_clock::now();
            run();
            times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
            cpu.push_back(cpu_ms() - cpu_start);
        }
        if (!output.empty()) {
            std::ofstream out(output, std::ios::binary);
            out.write(reinterpret_cast<const char*>(y.data()), static_cast<std::streamsize>(y.size() * sizeof(float)));
        }
#if defined(__SSE4_2__)
        const char* flags = "g++ -O3 -msse4.2";
#else
        const char* flags = "g++ -O3 (x86-64 baseline, SSE2)";
#endif
        std::printf("{\"impl\":\"%s\",\"backend\":\"%s\",\"flags\":\"%s\",\"tokens\":%d,\"d_model\":%d,\"heads\":%d,"
                    "\"mask\":\"%s\",\"times_ms\":[",
                    impl.c_str(), impl == "fast" ? attn::FastAttention::backend() : "eigen", flags, t, c, heads,
                    mask_name.c_str());
        for (std::size_t i = 0; i < times.size(); ++i) std::printf("%s%.6f", i ? "," : "", times[i]);
        std::printf("],\"cpu_ms\":[");
        for (std::size_t i = 0; i < cpu.size(); ++i) std::printf("%s%.6f", i ? "," : "", cpu[i]);
        std::printf("],\"peak_rss_bytes\":%ld,\"workspace_bytes\":%zu}\n", peak_rss_bytes(), fast.workspace_bytes());
    } catch (const std::exception& e) {
        std::cerr << "attn_bench: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
