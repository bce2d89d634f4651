// Tests of loading checkpoints (trainer.hpp: load_checkpoint,
// Trainer::from_checkpoint; safetensors.hpp: read_safetensors_index) against
// hostile files, and of the one range check every training setting goes
// through (settings::…, check_setting, validate_train_config).
//
// This file replaces the global operator new of core_tests with one that can
// record the largest single allocation (LargestAllocation below; under
// AddressSanitizer, whose allocator owns operator new, its malloc hook does
// the same): a test can then assert that a loader refused a file before
// allocating the model it claims. Off, it costs one relaxed atomic load per
// allocation.

#include "checkpoints/safetensors.hpp"
#include "train/trainer.hpp"
#include "matchers.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <new>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define ATTN_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTN_TEST_ASAN 1
#endif
#endif
#ifdef ATTN_TEST_ASAN
#include <sanitizer/allocator_interface.h>
#endif

namespace {

std::atomic<bool> g_track{false};
std::atomic<std::size_t> g_largest{0};

void record_allocation(std::size_t n) {
    if (!g_track.load(std::memory_order_relaxed)) return;
    std::size_t seen = g_largest.load(std::memory_order_relaxed);
    while (n > seen && !g_largest.compare_exchange_weak(seen, n, std::memory_order_relaxed)) {
    }
}

/// While alive, records the largest block allocated.
struct LargestAllocation {
    LargestAllocation() {
        g_largest = 0;
        g_track = true;
    }
    ~LargestAllocation() { g_track = false; }
    std::size_t bytes() const { return g_largest.load(); }
};

}  // namespace

#ifdef ATTN_TEST_ASAN
// Under AddressSanitizer its allocator owns operator new: watch it through its hooks.
namespace {
void on_malloc(const volatile void*, std::size_t n) { record_allocation(n); }
void on_free(const volatile void*) {}
const int hooks_installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
}  // namespace
#else
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // malloc'd by the operator new below
#endif
void* operator new(std::size_t n) {
    record_allocation(n);
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

using Catch::Matchers::Contains;
using attn::Error;
using testing::code_of;
using testing::message_of;

namespace {

/// A small reverse trainer's checkpoint, as a SafeTensors to edit.
attn::SafeTensors reverse_checkpoint(int steps = 0) {
    attn::TrainConfig cfg = attn::default_recipe(attn::TaskKind::reverse).config;
    cfg.model.d_model = 8;
    cfg.batch = 4;
    attn::Trainer t(cfg);
    for (int i = 0; i < steps; ++i) t.step();
    return attn::read_safetensors(t.save());
}

std::string with_metadata(attn::SafeTensors file, const std::string& key, const std::string& value) {
    file.metadata[key] = value;
    return attn::write_safetensors(file);
}

std::string without_metadata(attn::SafeTensors file, const std::string& key) {
    file.metadata.erase(key);
    return attn::write_safetensors(file);
}

/// A checkpoint of `config` with seeded weights, the vocabulary t0 … t(V−1), and `metadata` on top.
attn::SafeTensors model_checkpoint(const attn::ModelConfig& config, const std::map<std::string, std::string>& metadata = {}) {
    attn::Parameters p;
    attn::init_parameters(config, 1, p);
    attn::SafeTensors file;
    for (const attn::ParamInfo& info : p.layout()) {
        attn::Tensor t;
        t.name = info.name;
        t.shape = info.vector ? std::vector<std::int64_t>{info.cols} : std::vector<std::int64_t>{info.rows, info.cols};
        t.data.assign(p.flat().begin() + static_cast<std::ptrdiff_t>(info.offset),
                      p.flat().begin() + static_cast<std::ptrdiff_t>(info.offset + info.size()));
        file.tensors.push_back(std::move(t));
    }
    file.metadata["config"] = attn::model_config_json(config);
    std::string vocab = "[";
    for (int i = 0; i < config.vocab; ++i) vocab += std::string(i ? "," : "") + "\"t" + std::to_string(i) + "\"";
    file.metadata["vocabulary"] = vocab + "]";
    for (const auto& [k, v] : metadata) file.metadata[k] = v;
    return file;
}

}  // namespace

TEST_CASE("safetensors index: the entries of the header, read without copying the data", "[checkpoint]") {
    attn::SafeTensors file;
    file.tensors.push_back(attn::Tensor{"a", {2}, {1.5f, -2.0f}});
    file.tensors.push_back(attn::Tensor{"b", {1, 3}, {3.0f, 4.0f, 5.25f}});
    file.metadata["k"] = "v";
    const std::string bytes = attn::write_safetensors(file);
    const attn::SafeTensorsIndex index = attn::read_safetensors_index(bytes);
    REQUIRE(index.tensors.size() == 2);
    CHECK(index.metadata.at("k") == "v");
    const attn::TensorEntry* b = index.find("b");
    REQUIRE(b != nullptr);
    CHECK(b->shape == std::vector<std::int64_t>{1, 3});
    CHECK(b->end - b->begin == 12);
    CHECK(attn::tensor_float(bytes, index, *b, 2) == 5.25f);
    CHECK(attn::tensor_float(bytes, index, *index.find("a"), 1) == -2.0f);
    CHECK(index.find("c") == nullptr);
    CHECK_THROWS_WITH(attn::read_safetensors_index(bytes.substr(0, bytes.size() - 1)), Contains("safetensors"));
}

TEST_CASE("checkpoint: a vocabulary missing or of another size than config.vocab is refused at load", "[checkpoint]") {
    const attn::SafeTensors good = reverse_checkpoint();
    const std::string missing = without_metadata(good, "vocabulary");
    CHECK(code_of([&] { attn::load_checkpoint(missing); }) == Error::Code::bad_checkpoint);
    CHECK_THROWS_WITH(attn::Trainer::from_checkpoint(missing), Contains("vocabulary") && Contains("11"));
    CHECK_THROWS_WITH(attn::load_checkpoint(with_metadata(good, "vocabulary", "[\"[PAD]\",\"a\"]")),
                      Contains("vocabulary has 2 tokens but the config says vocab 11"));

    // a model of another vocabulary size than its task's, without a vocabulary
    // of its own: ids 11 … 39 had no token (probe and trace read past the list)
    attn::ModelConfig wide;
    wide.vocab = 40;
    wide.d_model = 8;
    wide.context = 16;
    attn::SafeTensors file = model_checkpoint(wide, {{"task", "{\"name\":\"reverse\",\"length\":0}"}});
    file.metadata.erase("vocabulary");
    const std::string bytes = attn::write_safetensors(file);
    CHECK(code_of([&] { attn::Trainer::from_checkpoint(bytes); }) == Error::Code::bad_checkpoint);
    // with a vocabulary of the config's size, it is the task's that does not fit
    CHECK_THROWS_WITH(attn::Trainer::from_checkpoint(attn::write_safetensors(model_checkpoint(wide, {{"task", "{\"name\":\"reverse\"}"}}))),
                      Contains("differs from the reverse task's"));
    // a model without a task loads with its own vocabulary, every id named
    const auto bare = attn::Trainer::from_checkpoint(attn::write_safetensors(model_checkpoint(wide)));
    CHECK(bare->vocabulary().size() == 40);
    CHECK(bare->vocabulary()[39] == "t39");
}

TEST_CASE("checkpoint: a model without a task saves without one, and loads again (found by fuzz_checkpoint)", "[checkpoint]") {
    attn::ModelConfig config;
    config.vocab = 10;
    config.d_model = 4;
    config.heads = 1;
    const auto bare = attn::Trainer::from_checkpoint(attn::write_safetensors(model_checkpoint(config)));
    REQUIRE_FALSE(bare->has_task());
    const std::string saved = bare->save();
    CHECK(attn::read_safetensors(saved).metadata.count("task") == 0);
    const auto again = attn::Trainer::from_checkpoint(saved);  // it used to come back as a reverse model, refused
    CHECK_FALSE(again->has_task());
    CHECK(again->save() == saved);
    CHECK(again->model().params().flat() == bare->model().params().flat());
}

TEST_CASE("checkpoint: a task whose sequences are longer than the config's context is refused", "[checkpoint]") {
    attn::SafeTensors file = reverse_checkpoint();
    attn::ModelConfig config = attn::load_checkpoint(attn::write_safetensors(file)).config;
    config.context = 4;  // reverse's sequences have 18 tokens
    attn::SafeTensors small = model_checkpoint(config, {{"task", file.metadata.at("task")}});
    small.metadata["vocabulary"] = file.metadata.at("vocabulary");
    const std::string bytes = attn::write_safetensors(small);
    CHECK(code_of([&] { attn::Trainer::from_checkpoint(bytes); }) == Error::Code::bad_checkpoint);
    CHECK_THROWS_WITH(attn::Trainer::from_checkpoint(bytes), Contains("more than the config's context 4"));
}

TEST_CASE("checkpoint: the step is a count from 0 to kMaxTrainingSteps, and the counter cannot overflow", "[checkpoint]") {
    const attn::SafeTensors good = reverse_checkpoint(2);
    CHECK(attn::Trainer::from_checkpoint(attn::write_safetensors(good))->steps_done() == 2);
    CHECK(attn::Trainer::from_checkpoint(without_metadata(good, "step"))->steps_done() == 0);
    for (const char* bad : {"2147483647", "1000000001", "99999999999", "-3", "12abc", "", " 5", "+5", "1e3"}) {
        const std::string bytes = with_metadata(good, "step", bad);
        CAPTURE(bad);
        CHECK(code_of([&] { attn::Trainer::from_checkpoint(bytes); }) == Error::Code::bad_checkpoint);
        CHECK_THROWS_WITH(attn::Trainer::from_checkpoint(bytes), Contains("checkpoint metadata step") && Contains("1000000000"));
    }
    const auto at_limit = attn::Trainer::from_checkpoint(with_metadata(good, "step", std::to_string(attn::kMaxTrainingSteps)));
    CHECK(at_limit->steps_done() == attn::kMaxTrainingSteps);
    const std::vector<float> before = at_limit->model().params().flat();
    CHECK(code_of([&] { at_limit->step(); }) == Error::Code::bad_state);
    CHECK_THROWS_WITH(at_limit->step(), Contains("1000000000 steps"));
    CHECK(at_limit->steps_done() == attn::kMaxTrainingSteps);
    CHECK(at_limit->model().params().flat() == before);
    const auto below = attn::Trainer::from_checkpoint(with_metadata(good, "step", std::to_string(attn::kMaxTrainingSteps - 1)));
    CHECK(below->step().step == attn::kMaxTrainingSteps);
}

TEST_CASE("checkpoint: train and task metadata outside the settings' ranges are refused naming the field", "[checkpoint]") {
    const attn::SafeTensors good = reverse_checkpoint();
    const std::string train = good.metadata.at("train");
    const auto edit = [&](const std::string& key, const std::string& value) {
        const std::size_t at = train.find("\"" + key + "\":");
        REQUIRE(at != std::string::npos);
        const std::size_t begin = at + key.size() + 3, end = train.find_first_of(",}", begin);
        return with_metadata(good, "train", train.substr(0, begin) + value + train.substr(end));
    };
    const std::vector<std::pair<std::string, std::string>> cases = {
        {edit("batch", "65536"), "checkpoint metadata train.batch 65536 is outside 1…4096"},
        {edit("batch", "0"), "checkpoint metadata train.batch 0 is outside 1…4096"},
        {edit("seed", "1e20"), "checkpoint metadata train.seed 1e+20 is outside 0…4294967295"},
        {edit("seed", "-1"), "checkpoint metadata train.seed -1 is outside 0…4294967295"},
        {edit("seed", "2.75"), "checkpoint metadata train.seed 2.75 is not a whole number"},
        {edit("lr", "1e-30"), "checkpoint metadata train.lr 1e-30 is outside 1e-08…10 (the learning rate)"},
        {edit("lr", "\"fast\""), "checkpoint metadata train.lr must be a number"},
        {edit("beta2", "1"), "checkpoint metadata train.beta2 1 is outside 0…0.999999"},
        {edit("eps", "0"), "checkpoint metadata train.eps 0 is outside"},
        {edit("weight_decay", "2"), "checkpoint metadata train.weight_decay 2 is outside 0…1"},
        {edit("clip", "-1"), "checkpoint metadata train.clip -1 is outside 0…1000000"},
        {edit("warmup", "1.5"), "checkpoint metadata train.warmup 1.5 is not a whole number"},
        {with_metadata(good, "train", "[1, 2]"), "checkpoint metadata train must be a JSON object"},
        {with_metadata(good, "task", "{\"name\":\"reverse\",\"length\":5000}"), "checkpoint metadata task.length 5000 is outside 0…4096"},
        {with_metadata(good, "task", "{\"name\":\"reverse\",\"length\":100}"), "checkpoint metadata task: reverse: option length = 100 is out of range 2..64"},
        {with_metadata(good, "task", "{\"name\":\"juggle\"}"), "checkpoint metadata task.name: "},
        {with_metadata(good, "task", "{\"name\":7}"), "checkpoint metadata task.name must be a string"},
        {with_metadata(good, "task", "{\"name\":\"text\",\"max_vocab\":1}"), "checkpoint metadata task.max_vocab 1 is outside 2…"},
    };
    for (const auto& c : cases) {
        const std::string& bytes = c.first;  // (a structured binding cannot be captured in C++17)
        const std::string& message = c.second;
        CAPTURE(message);
        CHECK(code_of([&] { attn::Trainer::from_checkpoint(bytes); }) == Error::Code::bad_checkpoint);
        CHECK_THROWS_WITH(attn::Trainer::from_checkpoint(bytes), Contains(message));
    }
    // the bounds themselves load, as floats (1e-8 is not a float: 1e-8f is below it)
    const auto low = attn::Trainer::from_checkpoint(edit("lr", "1e-8"));
    CHECK(low->config().optimizer.lr == 1e-8f);
    CHECK(attn::Trainer::from_checkpoint(edit("seed", "4294967295"))->config().seed == 4294967295u);
    CHECK(attn::Trainer::from_checkpoint(edit("batch", "4096"))->config().batch == 4096);
}

TEST_CASE("settings: a Trainer's settings and a checkpoint's go through the same range check", "[checkpoint]") {
    // For every setting of the table, a value on each side of its range: the
    // Trainer refuses it as bad_input, a checkpoint holding it as
    // bad_checkpoint, with the same words after the checkpoint's field name.
    struct Case {
        const attn::SettingRange* range;
        std::function<void(attn::TrainConfig&, double)> set;
        const char* group;
    };
    const std::vector<Case> cases = {
        {&attn::settings::lr, [](attn::TrainConfig& c, double v) { c.optimizer.lr = static_cast<float>(v); }, "train"},
        {&attn::settings::beta1, [](attn::TrainConfig& c, double v) { c.optimizer.beta1 = static_cast<float>(v); }, "train"},
        {&attn::settings::beta2, [](attn::TrainConfig& c, double v) { c.optimizer.beta2 = static_cast<float>(v); }, "train"},
        {&attn::settings::eps, [](attn::TrainConfig& c, double v) { c.optimizer.eps = static_cast<float>(v); }, "train"},
        {&attn::settings::weight_decay, [](attn::TrainConfig& c, double v) { c.optimizer.weight_decay = static_cast<float>(v); }, "train"},
        {&attn::settings::clip, [](attn::TrainConfig& c, double v) { c.optimizer.clip = static_cast<float>(v); }, "train"},
        {&attn::settings::warmup, [](attn::TrainConfig& c, double v) { c.optimizer.warmup = static_cast<int>(v); }, "train"},
        {&attn::settings::batch, [](attn::TrainConfig& c, double v) { c.batch = static_cast<int>(v); }, "train"},
        {&attn::settings::length, [](attn::TrainConfig& c, double v) { c.task_options.length = static_cast<int>(v); }, "task"},
        {&attn::settings::max_vocab, [](attn::TrainConfig& c, double v) { c.task_options.max_vocab = static_cast<int>(v); }, "task"},
    };
    const attn::SafeTensors good = reverse_checkpoint();
    for (const Case& c : cases) {
        const attn::SettingRange& r = *c.range;
        const double below = r.whole ? r.lo - 1 : r.lo > 0 ? r.lo / 10 : -1, above = r.hi * 2;
        for (const double v : {below, above}) {
            CAPTURE(r.name, v);
            attn::TrainConfig cfg = attn::default_recipe(attn::TaskKind::reverse).config;
            c.set(cfg, v);
            CHECK(code_of([&] { attn::Trainer t(cfg); }) == Error::Code::bad_input);
            const std::string direct = message_of([&] { attn::Trainer t(cfg); });
            CHECK_THAT(direct, Contains(std::string(r.name) + " ") && Contains(" is outside "));

            char number[32];
            std::snprintf(number, sizeof number, "%.10g", v);
            attn::SafeTensors file = good;
            if (std::string(c.group) == "train") {  // replace the saved value (a duplicate key is refused)
                std::string& train = file.metadata["train"];
                const std::string key = std::string("\"") + r.name + "\":";
                const std::size_t at = train.find(key);
                REQUIRE(at != std::string::npos);
                const std::size_t end = train.find_first_of(",}", at + key.size());
                train = train.substr(0, at + key.size()) + number + train.substr(end);
            } else {
                file.metadata["task"] = std::string("{\"name\":\"reverse\",\"") + r.name + "\":" + number + "}";
            }
            const std::string bytes = attn::write_safetensors(file);
            CHECK(code_of([&] { attn::Trainer::from_checkpoint(bytes); }) == Error::Code::bad_checkpoint);
            const std::string loaded = message_of([&] { attn::Trainer::from_checkpoint(bytes); });
            CHECK_THAT(loaded, Contains(std::string("checkpoint metadata ") + c.group + "." + direct));
        }
    }
}

TEST_CASE("checkpoint: a small file whose config claims a large model is refused before the model is allocated", "[checkpoint]") {
    // 12 layers of d_model 512 with an MLP of 2048: 37.7 M parameters (151 MB)
    // claimed by a file of a few hundred bytes with no tensors at all
    attn::ModelConfig big;
    big.vocab = 2;
    big.context = 512;
    big.layers = 12;
    big.d_model = 512;
    big.heads = 8;
    big.mlp = 2048;
    attn::SafeTensors file;
    file.metadata["config"] = attn::model_config_json(big);
    file.metadata["vocabulary"] = "[\"a\",\"b\"]";
    const std::string bytes = attn::write_safetensors(file);
    REQUIRE(bytes.size() < 400);
    {
        const LargestAllocation largest;
        CHECK_THROWS_WITH(attn::load_checkpoint(bytes), Contains("missing tensor \"embed\""));
        CHECK(largest.bytes() < (1u << 20));
    }
    {
        const LargestAllocation largest;
        CHECK(code_of([&] { attn::Trainer::from_checkpoint(bytes); }) == Error::Code::bad_checkpoint);
        CHECK(largest.bytes() < (1u << 20));
    }
}

TEST_CASE("checkpoint: max_checkpoint_bytes is the file of the largest model the limits allow", "[checkpoint]") {
    // by hand: V 50000, T 512, L 12, C 512, F 2048, layernorm, learned positions, untied
    const std::uint64_t C = 512, V = 50000, T = 512, F = 2048, L = 12;
    const std::uint64_t per_layer = 2 * C + 4 * C * C + 2 * C + C * F + F + F * C + C;
    const std::uint64_t floats = V * C + T * C + L * per_layer + 2 * C + C * V;
    CHECK(attn::max_checkpoint_bytes() == 8 + attn::kMaxSafetensorsHeader + 4 * floats);
}

TEST_CASE("text task: a corpus above kMaxCorpusBytes is refused before it is read (too_many_tokens)", "[checkpoint]") {
    attn::TaskOptions o;
    o.corpus.assign(attn::kMaxCorpusBytes + 1, 'a');
    CHECK(code_of([&] { attn::make_task(attn::TaskKind::text, o); }) == Error::Code::too_many_tokens);
    CHECK_THROWS_WITH(attn::make_task(attn::TaskKind::text, o), Contains("24000001 bytes, above the limit of 24000000 bytes"));
}
