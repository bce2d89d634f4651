// attn_half_bench: an F16/BF16 checkpoint kept 16-bit in memory against the same file
// loaded as float32 (HubLoader's keep_16bit), natively. Run by hand, not a test:
//   python3 tests/pretrained/make_checkpoints.py DIR --only smollm2-shape
//   attn_half_bench DIR/smollm2-shape 16|32 [--lengths 16,128] [--repeat 5]
// One process per storage (so that its peak RSS is its own): prints one JSON line with
// the load (seconds, peak RSS, the parameters' bytes), then the traced forward (every
// layer's vectors and heads, the logits: trace_model, as the page's full trace) at each
// T, the best and the median of --repeat after two warm-up calls. bench/half.mjs measures the same in
// Node's wasm.

#include "cli/hub_cli.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

long peak_rss_bytes() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss * 1024L;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: attn_half_bench DIR 16|32 [--lengths 16,128] [--repeat 5]\n");
        return 2;
    }
    const std::string dir = argv[1];
    const bool keep_16bit = std::strcmp(argv[2], "16") == 0;
    std::vector<int> lengths = {16, 128};
    int repeat = 5;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--repeat") == 0) repeat = std::atoi(argv[i + 1]);
        if (std::strcmp(argv[i], "--lengths") == 0) {
            lengths.clear();
            for (const char* p = argv[i + 1]; *p;) {
                lengths.push_back(std::atoi(p));
                while (*p && *p != ',') ++p;
                if (*p) ++p;
            }
        }
    }
    const attn::ModelConfig config = attn::cli::read_hub_folder_config(dir);
    const double t0 = now();
    const std::unique_ptr<attn::Model> model = attn::cli::load_hub_folder(dir, config, 1 << 20, keep_16bit);
    const double load = now() - t0;
    std::printf("{\"storage\":\"%s\",\"load_s\":%.3f,\"peak_rss_after_load\":%ld,\"parameter_bytes\":%zu",
                attn::weight_format_name(model->params().half_format()), load, peak_rss_bytes(), model->params().bytes());
    for (const int T : lengths) {
        std::vector<std::int32_t> ids(static_cast<std::size_t>(T));
        for (int t = 0; t < T; ++t) ids[static_cast<std::size_t>(t)] = (t * 7919 + 13) % model->config().vocab;
        std::vector<double> times;
        for (int r = 0; r < repeat + 2; ++r) {
            const double a = now();
            const attn::ModelTrace trace = attn::trace_model(model->config(), model->params(), ids);
            const double d = now() - a;
            if (r >= 2) times.push_back(d);
            if (trace.logits.rows() != T) return 1;
        }
        std::sort(times.begin(), times.end());  // the best and the median: this machine is shared
        std::printf(",\"trace_T%d_ms\":{\"best\":%.1f,\"median\":%.1f}", T, 1000 * times.front(), 1000 * times[times.size() / 2]);
    }
    std::printf(",\"peak_rss\":%ld}\n", peak_rss_bytes());
    return 0;
}
