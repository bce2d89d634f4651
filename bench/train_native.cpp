// Native training steps per second, for bench/train.mjs (which spawns it between
// its in-process measurements, so every row of the table comes from one
// interleaved run). The model, its initial weights and the one fixed batch come
// from an `attn grad --steps 0 --format json` dump; every step is
// attn::Model::forward + backward + attn::AdamW::update on that batch.
//
//   attn_train_bench DUMP.json [--lr 3e-3] [--steps 20] [--budget 2] [--serve]
//
// Prints one JSON line {"impl", "losses": [the loss of each of the first --steps
// steps]}, then, without --serve, one line {"steps", "seconds", "steps_per_s",
// "cpu_seconds"} for --budget seconds of timed steps (after 3 warm-up steps).
// With --serve it reads commands from stdin instead: "time SECONDS" prints such a
// line, "quit" or the end of input exits.
// Optimizer: AdamW, betas (0.9, 0.999), eps 1e-8, weight decay 0, no clipping,
// no warm-up (the same as every other implementation in the benchmark).

#include "base/json_value.hpp"
#include "model/model.hpp"
#include "train/trainer.hpp"
#include "base/types.hpp"

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string& why) {
    std::cerr << "attn_train_bench: " << why << "\n"
              << "usage: attn_train_bench DUMP.json [--lr 3e-3] [--steps 20] [--budget 2] [--serve]\n";
    std::exit(2);
}

double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

const attn::JsonValue& member(const attn::JsonValue& v, const std::string& key) {
    const attn::JsonValue* m = v.get(key);
    if (!m) fail("the dump has no \"" + key + "\"");
    return *m;
}

int as_int(const attn::JsonValue& v, const std::string& what) {
    if (!v.is(attn::JsonValue::Type::number) || v.number != static_cast<int>(v.number))
        fail(what + " must be a whole number");
    return static_cast<int>(v.number);
}

bool as_bool(const attn::JsonValue& v, const std::string& what) {
    if (!v.is(attn::JsonValue::Type::boolean)) fail(what + " must be true or false");
    return v.boolean;
}

attn::ModelConfig config_of(const attn::JsonValue& c) {
    attn::ModelConfig m;
    m.vocab = as_int(member(c, "vocab"), "config.vocab");
    m.context = as_int(member(c, "context"), "config.context");
    m.layers = as_int(member(c, "layers"), "config.layers");
    m.d_model = as_int(member(c, "d_model"), "config.d_model");
    m.heads = as_int(member(c, "heads"), "config.heads");
    m.mlp = as_int(member(c, "mlp"), "config.mlp");
    m.layernorm = as_bool(member(c, "layernorm"), "config.layernorm");
    m.positional = attn::parse_positional(member(c, "positional").string);
    m.causal = as_bool(member(c, "causal"), "config.causal");
    m.scale = as_bool(member(c, "scale"), "config.scale");
    m.tied = as_bool(member(c, "tied"), "config.tied");
    attn::validate_model_config(m);
    return m;
}

/// A B×T array of integers, row-major; sets batch and length on first use.
std::vector<std::int32_t> int_rows(const attn::JsonValue& v, const std::string& what, int& rows, int& cols) {
    if (!v.is(attn::JsonValue::Type::array) || v.array.empty()) fail(what + " must be a non-empty array of rows");
    std::vector<std::int32_t> out;
    const int r = static_cast<int>(v.array.size());
    const int c = v.array[0].is(attn::JsonValue::Type::array) ? static_cast<int>(v.array[0].array.size()) : 0;
    if ((rows && rows != r) || (cols && cols != c) || c == 0) fail(what + " has the wrong shape");
    rows = r;
    cols = c;
    for (const attn::JsonValue& row : v.array) {
        if (!row.is(attn::JsonValue::Type::array) || static_cast<int>(row.array.size()) != c) fail(what + " is ragged");
        for (const attn::JsonValue& x : row.array) out.push_back(as_int(x, what));
    }
    return out;
}

attn::Batch batch_of(const attn::JsonValue& b) {
    attn::Batch batch;
    batch.ids = int_rows(member(b, "ids"), "batch.ids", batch.batch, batch.length);
    batch.targets = int_rows(member(b, "targets"), "batch.targets", batch.batch, batch.length);
    if (const attn::JsonValue* lengths = b.get("lengths")) {
        if (!lengths->is(attn::JsonValue::Type::array) || static_cast<int>(lengths->array.size()) != batch.batch)
            fail("batch.lengths must have one entry per sequence");
        for (const attn::JsonValue& x : lengths->array) batch.lengths.push_back(as_int(x, "batch.lengths"));
    }
    return batch;
}

/// Copies the dump's params (matrices as arrays of rows, vectors as arrays) into
/// the model's named views; every name of the layout must be present, nothing else.
void load_params(const attn::JsonValue& p, attn::Parameters& params) {
    if (!p.is(attn::JsonValue::Type::object)) fail("params must be an object");
    for (const auto& [name, value] : p.object)
        if (!params.has(name)) fail("the dump has a parameter the model does not: " + name);
    for (const attn::ParamInfo& info : params.layout()) {
        const attn::JsonValue* v = p.get(info.name);
        if (!v) fail("the dump lacks parameter " + info.name);
        Eigen::Map<attn::Matrix> view = params.view(info.name);
        const auto bad = [&] { fail("parameter " + info.name + " must be " + std::to_string(info.rows) + "x" +
                                    std::to_string(info.cols)); };
        if (!v->is(attn::JsonValue::Type::array)) bad();
        if (info.vector) {
            if (static_cast<int>(v->array.size()) != info.cols) bad();
            for (int j = 0; j < info.cols; ++j) view(0, j) = static_cast<float>(v->array[j].number);
        } else {
            if (static_cast<int>(v->array.size()) != info.rows) bad();
            for (int i = 0; i < info.rows; ++i) {
                const attn::JsonValue& row = v->array[i];
                if (!row.is(attn::JsonValue::Type::array) || static_cast<int>(row.array.size()) != info.cols) bad();
                for (int j = 0; j < info.cols; ++j) view(i, j) = static_cast<float>(row.array[j].number);
            }
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string path;
    double lr = 3e-3, budget = 2.0;
    int steps = 20;
    bool serve = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto next = [&]() -> std::string {
            if (i + 1 >= argc) fail(a + " needs a value");
            return argv[++i];
        };
        if (a == "--lr") lr = std::atof(next().c_str());
        else if (a == "--steps") steps = std::atoi(next().c_str());
        else if (a == "--budget") budget = std::atof(next().c_str());
        else if (a == "--serve") serve = true;
        else if (!a.empty() && a[0] != '-' && path.empty()) path = a;
        else fail("unknown argument \"" + a + "\"");
    }
    if (path.empty()) fail("no dump file");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("cannot read " + path);
    std::stringstream text;
    text << in.rdbuf();

    try {
        const attn::JsonValue dump = attn::parse_json(text.str());
        const attn::ModelConfig config = config_of(member(dump, "config"));
        const attn::Batch batch = batch_of(member(dump, "batch"));
        attn::Model model(config);
        load_params(member(dump, "params"), model.params());
        attn::Parameters grads(config);
        attn::OptimizerConfig oc;
        oc.lr = static_cast<float>(lr);
        oc.beta1 = 0.9f;
        oc.beta2 = 0.999f;
        oc.eps = 1e-8f;
        oc.weight_decay = 0.0f;
        oc.clip = 0.0f;
        oc.warmup = 0;
        attn::AdamW optimizer(oc, model.params().size());
        int done = 0;
        const auto step = [&] {
            const attn::LossResult r = model.forward(batch);
            model.backward(grads);
            optimizer.update(model.params(), grads, ++done);
            return r.loss;
        };

        std::printf("{\"impl\": \"native\", \"parameters\": %zu, \"losses\": [", model.params().size());
        for (int s = 0; s < steps; ++s) std::printf("%s%.9g", s ? ", " : "", step());
        std::printf("]}\n");
        std::fflush(stdout);

        const auto timed = [&](double seconds) {
            for (int w = 0; w < 3; ++w) step();
            const double c0 = cpu_seconds();
            const auto t0 = std::chrono::steady_clock::now();
            long n = 0;
            double elapsed = 0;
            do {
                step();
                ++n;
                elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            } while (elapsed < seconds);
            std::printf("{\"steps\": %ld, \"seconds\": %.6f, \"steps_per_s\": %.6g, \"cpu_seconds\": %.6f}\n", n,
                        elapsed, static_cast<double>(n) / elapsed, cpu_seconds() - c0);
            std::fflush(stdout);
        };
        if (!serve) {
            timed(budget);
            return 0;
        }
        std::string line;
        while (std::getline(std::cin, line)) {
            std::istringstream words(line);
            std::string cmd;
            words >> cmd;
            if (cmd.empty()) continue;
            if (cmd == "quit") break;
            double seconds = 0;
            if (cmd == "time" && (words >> seconds)) timed(seconds);
            else std::printf("{\"error\": \"unknown command\"}\n"), std::fflush(stdout);
        }
    } catch (const std::exception& e) {
        std::cerr << "attn_train_bench: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
