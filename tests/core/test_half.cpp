// Tests of 16-bit weights kept 16-bit in memory (kernels/half.hpp, the 16-bit products of
// gemm.hpp, Parameters(config, format), HubLoader's keep_16bit): every F16 and BF16 value
// converts exactly, every product over 16-bit operands equals the product over their float32
// values bit for bit, and every F16/BF16 test checkpoint loaded 16-bit computes exactly what
// the same file loaded as float32 computes: whole traces, long traces, generation with the KV
// cache, one layer's backward, a step by hand (its layer then float32) and its undo.

#include "checkpoints/pretrained.hpp"
#include "checkpoints/safetensors.hpp"
#include "kernels/gemm.hpp"
#include "model/generation.hpp"
#include "model/model_json.hpp"
#include "train/backward.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using attn::WeightFormat;
using Catch::Matchers::Contains;

std::uint32_t bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

bool same_bits(const attn::Matrix& a, const attn::Matrix& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
    return std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<std::size_t>(a.size())) == 0;
}

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

std::string folder(const std::string& name) { return std::string(ATTN_PRETRAINED_DIR) + "/" + name; }

/// The file size a header alone describes (its data's end): the header of a file not written out.
std::uint64_t described(const std::string& header) {
    const attn::SafeTensorsIndex index = attn::read_safetensors_header(header);
    return index.data_start + index.data_size;
}

std::unique_ptr<attn::Model> load(const std::string& name, bool keep_16bit, WeightFormat* storage = nullptr,
                                  std::size_t chunk_bytes = attn::kHalfChunkBytes) {
    const attn::ModelConfig config = attn::read_hub_config(read_file(folder(name) + "/config.json"));
    const std::string bytes = read_file(folder(name) + "/model.safetensors");
    attn::HubLoader loader(config, bytes.substr(0, static_cast<std::size_t>(attn::HubLoader::header_size(bytes.substr(0, 8)))),
                           bytes.size(), keep_16bit, chunk_bytes);
    loader.feed(0, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    if (storage) *storage = loader.storage();
    return loader.finish();
}

/// Random finite 16-bit values of a format: BF16 the upper halves of floats in ±2 and of tiny
/// ones; F16 any finite bit pattern (subnormals and ±65504 included).
std::vector<std::uint16_t> random_halves(std::mt19937& rng, std::size_t n, WeightFormat f) {
    std::vector<std::uint16_t> v(n);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    for (auto& h : v) {
        if (f == WeightFormat::bf16) {
            const float x = rng() % 8 == 0 ? u(rng) * 1e-30f : u(rng);
            h = static_cast<std::uint16_t>(bits(x) >> 16);
            continue;
        }
        do h = static_cast<std::uint16_t>(rng() & 0xFFFFu);
        while ((h & 0x7C00u) == 0x7C00u);  // not infinity or NaN
    }
    return v;
}

std::vector<float> widened(const std::vector<std::uint16_t>& h, WeightFormat f) {
    std::vector<float> out(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) out[i] = attn::half::to_float(h[i], f);
    return out;
}

attn::Matrix random_matrix(std::mt19937& rng, int rows, int cols) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    attn::Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = u(rng);
    return m;
}

std::vector<attn::Token> tokens_of(const std::vector<std::int32_t>& ids) {
    std::vector<attn::Token> t;
    for (std::size_t i = 0; i < ids.size(); ++i) t.push_back({"t" + std::to_string(ids[i]), ids[i], i, i + 1});
    return t;
}

std::vector<std::int32_t> random_ids(std::mt19937& rng, const attn::ModelConfig& c, int n) {
    std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
    for (auto& id : ids) id = static_cast<std::int32_t>(rng() % static_cast<std::uint32_t>(c.vocab));
    return ids;
}

struct Checkpoint {
    const char* name;
    WeightFormat format;
};
const Checkpoint kCheckpoints[] = {{"gpt2-f16", WeightFormat::f16},   {"gpt2-bf16", WeightFormat::bf16},
                                   {"bert-f16", WeightFormat::f16},   {"bert-bf16", WeightFormat::bf16},
                                   {"llama3-bf16", WeightFormat::bf16}, {"qwen2", WeightFormat::f16},
                                   {"qwen3", WeightFormat::bf16}};

}  // namespace

TEST_CASE("half: every F16 and BF16 value converts to float32 exactly, eight at a time as one at a time", "[half]") {
    std::vector<std::uint16_t> all(65536);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
    std::vector<float> f16(all.size()), bf16(all.size());
    attn::half::widen(all.data(), all.size(), WeightFormat::f16, f16.data());
    attn::half::widen(all.data(), all.size(), WeightFormat::bf16, bf16.data());
    int wrong = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
        // safetensors.cpp's converters, written separately, are the reference
        wrong += bits(f16[i]) != bits(attn::f16_to_float(all[i]));
        wrong += bits(bf16[i]) != bits(attn::bf16_to_float(all[i]));
        wrong += bits(attn::half::f16_to_float(all[i])) != bits(attn::f16_to_float(all[i]));
    }
    CHECK(wrong == 0);
    CHECK(attn::half::f16_to_float(0x0001) == std::ldexp(1.0f, -24));  // the smallest subnormal
    CHECK(bits(attn::half::f16_to_float(0x8000)) == 0x80000000u);       // −0
}

TEST_CASE("half: products over 16-bit operands equal the products over their float32 values, bit for bit", "[half]") {
    std::mt19937 rng(3701);
    for (const WeightFormat f : {WeightFormat::bf16, WeightFormat::f16})
        for (const int m : {1, 3, 16, 33, 129, 200})
            for (const auto& [k, n] : std::vector<std::pair<int, int>>{{8, 8}, {24, 72}, {64, 136}, {37, 200}}) {
                INFO(attn::weight_format_name(f) << " m " << m << " k " << k << " n " << n);
                const attn::Matrix a = random_matrix(rng, m, k);
                // B (k×n) row-major, and as panels
                const std::vector<std::uint16_t> b = random_halves(rng, static_cast<std::size_t>(k) * n, f);
                const std::vector<float> bf = widened(b, f);
                const auto bmap = Eigen::Map<const attn::Matrix>(bf.data(), k, n);
                attn::Matrix want, got;
                attn::gemm(a, bmap, want);
                attn::gemm_half(a, b.data(), f, k, n, got);
                CHECK(same_bits(want, got));
                std::vector<std::uint16_t> panels(b.size());
                std::vector<float> float_panels(b.size());
                attn::pack_matrix_panels(b.data(), k, n, panels.data());
                attn::pack_matrix_panels(bf.data(), k, n, float_panels.data());
                attn::Matrix from_float_panels;
                attn::gemm_panels(a, float_panels.data(), k, n, from_float_panels);
                attn::gemm_panels(a, panels.data(), f, k, n, got);
                CHECK(same_bits(want, from_float_panels));
                CHECK(same_bits(want, got));
                std::vector<float> unpacked(b.size());
                attn::unpack_matrix_panels(panels.data(), f, k, n, unpacked.data());
                CHECK(unpacked == bf);
                // c = a·Bᵀ with B (n'×k) row-major: the tied unembedding's product (n' any width)
                const int rows = n + 3;
                const std::vector<std::uint16_t> e = random_halves(rng, static_cast<std::size_t>(rows) * k, f);
                const std::vector<float> ef = widened(e, f);
                attn::gemm_bt(a, Eigen::Map<const attn::Matrix>(ef.data(), rows, k), want);
                attn::gemm_bt_half(a, e.data(), f, rows, k, got);
                CHECK(same_bits(want, got));
                // and a·B with B (k×n') of any width: the untied unembedding's
                const std::vector<std::uint16_t> u = random_halves(rng, static_cast<std::size_t>(k) * rows, f);
                const std::vector<float> uf = widened(u, f);
                attn::gemm(a, Eigen::Map<const attn::Matrix>(uf.data(), k, rows), want);
                attn::gemm_half(a, u.data(), f, k, rows, got);
                CHECK(same_bits(want, got));
            }
}

TEST_CASE("half: every F16/BF16 checkpoint loaded 16-bit traces every number of the same file loaded as float32, bit for bit",
          "[half][hub]") {
    std::mt19937 rng(3702);
    for (const Checkpoint& cp : kCheckpoints) {
        INFO(cp.name);
        WeightFormat sa = WeightFormat::f32, sb = WeightFormat::f32;
        const auto a = load(cp.name, false, &sa);
        const auto b = load(cp.name, true, &sb);
        CHECK(sa == WeightFormat::f32);
        CHECK(sb == cp.format);
        CHECK(b->params().half_format() == cp.format);
        CHECK(a->params().half_chunk_bytes().empty());
        // the large tensors are 16-bit: the parameters take at most 0.6 of the float32 bytes
        CHECK(b->params().bytes() < 0.6 * static_cast<double>(a->params().bytes()));
        CHECK(b->params().bytes() == attn::parameter_bytes(b->config(), cp.format));
        for (const attn::ParamInfo& p : a->params().layout()) {
            INFO(p.name);
            CHECK(same_bits(a->params().matrix(p.name), b->params().matrix(p.name)));
        }
        const attn::ModelConfig& c = a->config();
        // a short sentence, one of the full context (every row tile count the products branch on), and one padded
        for (const int T : {5, c.context}) {
            const std::vector<std::int32_t> ids = random_ids(rng, c, T);
            const attn::ModelTrace ta = attn::trace_model(c, a->params(), ids), tb = attn::trace_model(c, b->params(), ids);
            INFO("T " << T);
            CHECK(attn::model_trace_json(c, tokens_of(ids), ta) == attn::model_trace_json(c, tokens_of(ids), tb));
            CHECK(same_bits(ta.logits, tb.logits));
        }
        const std::vector<std::int32_t> ids = random_ids(rng, c, 9);
        attn::ForwardOptions options;
        const attn::ModelTrace pa = attn::trace_model(c, a->params(), ids, 6, options),
                               pb = attn::trace_model(c, b->params(), ids, 6, options);
        CHECK(attn::model_trace_json(c, tokens_of(ids), pa) == attn::model_trace_json(c, tokens_of(ids), pb));
    }
}

TEST_CASE("half: a long trace (one layer's heads, top 5) at the full context is the float32 model's, bit for bit",
          "[half][hub][long]") {
    std::mt19937 rng(3703);
    for (const Checkpoint& cp : kCheckpoints) {
        INFO(cp.name);
        const auto a = load(cp.name, false), b = load(cp.name, true);
        const attn::ModelConfig& c = a->config();
        const std::vector<std::int32_t> ids = random_ids(rng, c, c.context);
        attn::TraceKeep keep;
        keep.layer = c.layers - 1;
        keep.vectors = c.layers - 1;
        keep.top_k = 5;
        const attn::ModelTrace ta = attn::trace_model(c, a->params(), ids, -1, {}, keep),
                               tb = attn::trace_model(c, b->params(), ids, -1, {}, keep);
        CHECK(attn::model_trace_json(c, tokens_of(ids), ta) == attn::model_trace_json(c, tokens_of(ids), tb));
        CHECK(ta.top_ids == tb.top_ids);
        CHECK(ta.top_p == tb.top_p);
    }
}

TEST_CASE("half: generating with the KV cache on 16-bit weights gives the float32 model's logits, bit for bit", "[half][hub]") {
    std::mt19937 rng(3704);
    for (const Checkpoint& cp : kCheckpoints) {
        const auto a = load(cp.name, false), b = load(cp.name, true);
        const attn::ModelConfig& c = a->config();
        if (!c.causal) continue;  // BERT does not generate
        INFO(cp.name);
        attn::KvCache ka(*a), kb(*b);
        const std::vector<std::int32_t> ids = random_ids(rng, c, std::min(c.context, 40));
        for (std::size_t t = 0; t < ids.size(); ++t) {
            ka.append(ids[t]);
            kb.append(ids[t]);
            INFO("position " << t);
            CHECK(same_bits(ka.logits(), kb.logits()));
        }
    }
}

TEST_CASE("half: Learn on 16-bit weights: the backward is the float32 model's, a step makes its layer float32 and moves the same "
          "weights, the undo restores them exactly",
          "[half][hub]") {
    std::mt19937 rng(3705);
    for (const Checkpoint& cp : kCheckpoints)
        for (const int head : {-1, 1}) {
            INFO(cp.name << " head " << head);
            const auto a = load(cp.name, false), b = load(cp.name, true);
            const attn::ModelConfig& c = a->config();
            const std::vector<std::int32_t> ids = random_ids(rng, c, 12);
            std::vector<std::int32_t> targets(ids.size(), attn::kNoTarget);
            for (std::size_t i = 0; i + 1 < ids.size(); ++i) targets[i] = ids[i + 1];
            const int layer = 0;  // the backward goes through every layer above it, 16-bit
            const attn::PretrainedBackward ga = attn::pretrained_backward(*a, ids, targets, layer);
            const attn::PretrainedBackward gb = attn::pretrained_backward(*b, ids, targets, layer);
            CHECK(ga.loss == gb.loss);
            CHECK(ga.grads.flat == gb.grads.flat);
            CHECK(attn::pretrained_backward_json(a->params(), ga) == attn::pretrained_backward_json(b->params(), gb));
            const std::string before = attn::model_trace_json(c, tokens_of(ids), attn::trace_model(c, b->params(), ids));
            const std::size_t bytes_before = b->params().bytes();
            attn::SgdUndo ua, ub;
            const double sa = attn::sgd_step_layer(c, a->params(), ga.grads, 0.05, head, &ua);
            const double sb = attn::sgd_step_layer(c, b->params(), gb.grads, 0.05, head, &ub);
            CHECK(sa == sb);
            // the stepped layer is float32 now; the others stay 16-bit
            for (const attn::ParamInfo& p : b->params().layout()) {
                INFO(p.name);
                if (p.name.rfind("layers.0.", 0) == 0) CHECK(p.format == WeightFormat::f32);
                if (p.name.rfind("layers.1.w_query", 0) == 0) CHECK(p.format == cp.format);
                CHECK(same_bits(a->params().matrix(p.name), b->params().matrix(p.name)));
            }
            CHECK(b->params().bytes() > bytes_before);
            const std::vector<std::int32_t> more = random_ids(rng, c, 7);
            CHECK(attn::model_trace_json(c, tokens_of(more), attn::trace_model(c, a->params(), more)) ==
                  attn::model_trace_json(c, tokens_of(more), attn::trace_model(c, b->params(), more)));
            attn::undo_sgd(b->params(), ub);
            CHECK(attn::model_trace_json(c, tokens_of(ids), attn::trace_model(c, b->params(), ids)) == before);
        }
}

namespace {

/// The 16-bit tensors of each chunk, by name, from the layout alone (ParamInfo::chunk).
std::vector<std::vector<const attn::ParamInfo*>> tensors_by_chunk(const attn::Parameters& params) {
    std::vector<std::vector<const attn::ParamInfo*>> out(params.half_chunk_bytes().size());
    for (const attn::ParamInfo& p : params.layout())
        if (p.format != WeightFormat::f32) out.at(p.chunk).push_back(&p);
    return out;
}

/// The float32 bytes plus every chunk's: what bytes() must say.
std::size_t summed_bytes(const attn::Parameters& params) {
    std::size_t b = params.flat().capacity() * sizeof(float);
    for (const std::size_t c : params.half_chunk_bytes()) b += c;
    return b;
}

}  // namespace

TEST_CASE("half: a 16-bit checkpoint spread over many small chunks computes the one-chunk and the float32 loads' numbers, bit "
          "for bit",
          "[half][hub]") {
    // 4 KiB chunks: the test models' small matrices share chunks, their 6 KB embeddings get one each
    constexpr std::size_t kSmall = 4096;
    std::mt19937 rng(3706);
    for (const Checkpoint& cp : kCheckpoints) {
        INFO(cp.name);
        const auto a = load(cp.name, false), one = load(cp.name, true), many = load(cp.name, true, nullptr, kSmall);
        const attn::ModelConfig& c = a->config();
        // the layout: one chunk at the default size, many at 4 KiB, every tensor whole and 16-byte aligned in its chunk
        CHECK(one->params().half_chunk_bytes().size() == 1);
        const std::vector<std::size_t> sizes = many->params().half_chunk_bytes();
        CHECK(sizes.size() >= static_cast<std::size_t>(2 * c.layers));
        const auto groups = tensors_by_chunk(many->params());
        bool shared = false, alone = false;
        for (std::size_t i = 0; i < groups.size(); ++i) {
            INFO("chunk " << i);
            REQUIRE_FALSE(groups[i].empty());
            std::size_t end = 0;
            for (const attn::ParamInfo* p : groups[i]) {
                CHECK(p->stored % 8 == 0);
                CHECK(p->stored >= end);  // no overlap: layout order, each after the last
                end = p->stored + p->size();
                CHECK(end * 2 <= sizes[i]);
            }
            if (groups[i].size() > 1) {
                shared = true;
                CHECK(sizes[i] <= kSmall);
            } else if (sizes[i] > kSmall) {
                alone = true;  // a tensor larger than a chunk: a chunk of its own
            }
        }
        CHECK(shared);
        CHECK(alone);
        // bytes() adds up, and is the count made without allocating, whatever the chunk size
        CHECK(many->params().bytes() == summed_bytes(many->params()));
        CHECK(many->params().bytes() == attn::parameter_bytes(c, cp.format));
        CHECK(one->params().bytes() == attn::parameter_bytes(c, cp.format));
        for (const attn::ParamInfo& p : a->params().layout()) {
            INFO(p.name);
            CHECK(same_bits(a->params().matrix(p.name), many->params().matrix(p.name)));
        }
        for (const int T : {5, std::min(c.context, 40)}) {  // (where a tensor lies does not depend on T)
            INFO("T " << T);
            const std::vector<std::int32_t> ids = random_ids(rng, c, T);
            const attn::ModelTrace ta = attn::trace_model(c, a->params(), ids), t1 = attn::trace_model(c, one->params(), ids),
                                   tm = attn::trace_model(c, many->params(), ids);
            const std::string json = attn::model_trace_json(c, tokens_of(ids), ta);
            CHECK(attn::model_trace_json(c, tokens_of(ids), t1) == json);
            CHECK(attn::model_trace_json(c, tokens_of(ids), tm) == json);
            CHECK(same_bits(tm.logits, ta.logits));
            CHECK(same_bits(tm.logits, t1.logits));
        }
        if (!c.causal) continue;  // BERT does not generate
        attn::KvCache ka(*a), km(*many);
        for (const std::int32_t id : random_ids(rng, c, std::min(c.context, 20))) {
            ka.append(id);
            km.append(id);
            CHECK(same_bits(ka.logits(), km.logits()));
        }
    }
}

TEST_CASE("half: promote() across chunks: a layer's tensors become float32 wherever they lie, an emptied chunk is freed, "
          "the numbers stay",
          "[half][hub]") {
    std::mt19937 rng(3707);
    for (const Checkpoint& cp : kCheckpoints) {
        INFO(cp.name);
        const auto a = load(cp.name, false), b = load(cp.name, true, nullptr, 4096);
        const attn::ModelConfig& c = a->config();
        attn::Parameters& params = b->params();
        const auto before = tensors_by_chunk(params);
        const std::size_t bytes_before = params.bytes();
        // the chunks that hold only layer 0's tensors are freed by its promotion; the others stay whole
        const auto only_layer0 = [](const std::vector<const attn::ParamInfo*>& g) {
            for (const attn::ParamInfo* p : g)
                if (p->name.rfind("layers.0.", 0) != 0) return false;
            return true;
        };
        const std::vector<std::size_t> sizes_before = params.half_chunk_bytes();
        std::size_t layer0_16bit = 0, freed = 0;
        for (std::size_t i = 0; i < before.size(); ++i) {
            for (const attn::ParamInfo* p : before[i])
                if (p->name.rfind("layers.0.", 0) == 0) layer0_16bit += p->size();
            if (only_layer0(before[i])) freed += sizes_before[i];
        }
        REQUIRE(layer0_16bit > 0);
        CHECK(freed > 0);
        params.promote("layers.0.");
        const std::vector<std::size_t> sizes = params.half_chunk_bytes();
        REQUIRE(sizes.size() == sizes_before.size());  // the chunks keep their numbers
        for (std::size_t i = 0; i < sizes.size(); ++i) CHECK(sizes[i] == (only_layer0(before[i]) ? 0 : sizes_before[i]));
        CHECK(params.bytes() == summed_bytes(params));
        CHECK(params.bytes() == bytes_before + 4 * layer0_16bit - freed);  // reserved exactly: no spare capacity
        CHECK(params.half_format() == cp.format);
        for (const attn::ParamInfo& p : params.layout()) {
            INFO(p.name);
            if (p.name.rfind("layers.0.", 0) == 0) CHECK(p.format == WeightFormat::f32);
            CHECK(same_bits(a->params().matrix(p.name), params.matrix(p.name)));
        }
        const std::vector<std::int32_t> ids = random_ids(rng, c, 9);
        const std::string want = attn::model_trace_json(c, tokens_of(ids), attn::trace_model(c, a->params(), ids));
        CHECK(attn::model_trace_json(c, tokens_of(ids), attn::trace_model(c, params, ids)) == want);
        // everything promoted: no chunk is left, the model is float32, the same numbers
        params.promote("");
        CHECK(params.half_chunk_bytes().empty());
        CHECK(params.half_format() == WeightFormat::f32);
        CHECK(params.bytes() == 4 * params.size());
        CHECK(attn::model_trace_json(c, tokens_of(ids), attn::trace_model(c, params, ids)) == want);
    }
}

TEST_CASE("half: a tensor above one allocation is refused by name, with its shape and bytes, before anything is allocated",
          "[half]") {
    const attn::ModelConfig c = attn::read_hub_config(read_file(folder("llama3-bf16") + "/config.json"));
    // llama3-bf16: embed 96 × 32 (6,144 bytes as BF16), the largest tensor; the float32 gains 4 × 32 … floats
    CHECK(attn::allocation_refusal(c, WeightFormat::bf16).empty());
    CHECK(attn::allocation_refusal(c, WeightFormat::bf16, 6144).empty());
    CHECK(attn::allocation_refusal(c, WeightFormat::bf16, 6143) ==
          "the model's tensor embed (96 × 32, BF16) takes 6,144 bytes, above the 6,143 bytes (6 kB) one allocation holds in this "
          "engine: a tensor is never split between allocations");
    // float32: every value in one allocation
    const std::uint64_t f32 = attn::parameter_bytes(c, WeightFormat::f32);
    CHECK(attn::allocation_refusal(c, WeightFormat::f32, f32).empty());
    CHECK_THAT(attn::allocation_refusal(c, WeightFormat::f32, f32 - 1),
               Contains("the model's float32 values, one allocation, take " + std::to_string(f32 / 1000) + ","));
    // a chunk size below one aligned group is refused by name
    CHECK_THROWS_WITH(attn::Parameters(c, WeightFormat::bf16, 8), Contains("chunk size must be 16 bytes at least, got 8"));
}

TEST_CASE("half: a 16-bit model refuses what reads its weights as float32 by name", "[half]") {
    const auto b = load("llama3-bf16", true);
    try {
        (void)b->params().view("layers.0.w_query");
        FAIL("no error");
    } catch (const attn::Error& e) {
        CHECK(std::string(e.what()).find("stored as panels") != std::string::npos);
    }
    try {
        (void)b->params().view("embed");
        FAIL("no error");
    } catch (const attn::Error& e) {
        CHECK(std::string(e.what()).find("16-bit") != std::string::npos);
    }
    CHECK(b->params().view("layers.0.ln1.gain").cols() == b->config().d_model);  // float32 tensors keep their view
}

namespace {

/// A safetensors header (no data) of a Llama checkpoint of `dtype`: every tensor the config needs.
std::string llama_header(int V, int C, int L, int H, int Hkv, int D, int F, const std::string& dtype) {
    std::string h = "{";
    std::uint64_t at = 0;
    const auto add = [&](const std::string& name, std::vector<std::int64_t> shape) {
        std::uint64_t n = 2;
        std::string s;
        for (const std::int64_t d : shape) {
            n *= static_cast<std::uint64_t>(d);
            s += (s.empty() ? "" : ",") + std::to_string(d);
        }
        h += (h.size() > 1 ? "," : "") + std::string("\"") + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":[" + s +
             "],\"data_offsets\":[" + std::to_string(at) + "," + std::to_string(at + n) + "]}";
        at += n;
    };
    add("model.embed_tokens.weight", {V, C});
    for (int l = 0; l < L; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        add(p + "input_layernorm.weight", {C});
        add(p + "self_attn.q_proj.weight", {H * D, C});
        add(p + "self_attn.k_proj.weight", {Hkv * D, C});
        add(p + "self_attn.v_proj.weight", {Hkv * D, C});
        add(p + "self_attn.o_proj.weight", {C, H * D});
        add(p + "post_attention_layernorm.weight", {C});
        add(p + "mlp.gate_proj.weight", {F, C});
        add(p + "mlp.up_proj.weight", {F, C});
        add(p + "mlp.down_proj.weight", {C, F});
    }
    add("model.norm.weight", {C});
    h += "}";
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((h.size() >> (8 * i)) & 0xFF);
    return out + h;
}

}  // namespace

TEST_CASE("half: the size check before any weight arrives counts a 16-bit file's 16-bit bytes (Llama-3.2-1B's shape)", "[half][hub]") {
    // Llama-3.2-1B: 16 layers, 32 / 8 heads of 64, hidden 2048, intermediate 8192, vocabulary 128256, tied
    const std::string config_json = R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 128256,
        "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32,
        "num_key_value_heads": 8, "hidden_act": "silu", "max_position_embeddings": 131072, "rms_norm_eps": 1e-5,
        "tie_word_embeddings": true, "rope_theta": 500000.0, "torch_dtype": "bfloat16",
        "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192}})";
    const attn::ModelConfig c = attn::read_hub_config(config_json);
    const std::uint64_t f32 = attn::parameter_bytes(c, WeightFormat::f32), bf16 = attn::parameter_bytes(c, WeightFormat::bf16);
    CHECK(f32 > (std::uint64_t{4} << 30));   // 1.24 G parameters: 4.9 GB as float32, above the 4 GiB of wasm32
    CHECK(bf16 < (std::uint64_t{5} << 29));  // 2.5 GB kept BF16: under the engine's 3 GiB (the page's and the CLI's)
    CHECK(bf16 < f32 / 2 + (std::uint64_t{1} << 20));
    // as float32 the loader refuses it from the header alone, naming the float32 size
    const std::string header = llama_header(128256, 2048, 16, 32, 8, 64, 8192, "BF16");
    try {
        attn::HubLoader loader(c, header, described(header), false);
        FAIL("no error");
    } catch (const attn::Error& e) {
        CHECK(e.code() == attn::Error::Code::too_large);
        CHECK(std::string(e.what()).find("as float32") != std::string::npos);
    }
    // a model too large even in 16 bits (6.9 GB as BF16) is refused by its 16-bit size, before allocating
    const std::string config_big = R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 262144,
        "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 48, "num_attention_heads": 32,
        "num_key_value_heads": 8, "hidden_act": "silu", "max_position_embeddings": 2048, "rms_norm_eps": 1e-5,
        "tie_word_embeddings": true, "rope_theta": 500000.0, "torch_dtype": "bfloat16"})";
    const attn::ModelConfig big = attn::read_hub_config(config_big);
    try {
        const std::string big_header = llama_header(262144, 2048, 48, 32, 8, 64, 8192, "BF16");
        attn::HubLoader loader(big, big_header, described(big_header), true);
        FAIL("no error");
    } catch (const attn::Error& e) {
        CHECK(e.code() == attn::Error::Code::too_large);
        CHECK(std::string(e.what()).find("BF16 and float32") != std::string::npos);
    }
}

namespace {

/// Llama-3.2-1B's config.json with its weights' type in `dtype_field` ("torch_dtype", or
/// transformers 5's "dtype") set to `dtype`.
std::string llama32_config(const std::string& dtype_field, const std::string& dtype) {
    return R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 128256,
        "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32,
        "num_key_value_heads": 8, "hidden_act": "silu", "max_position_embeddings": 131072, "rms_norm_eps": 1e-5,
        "tie_word_embeddings": true, "rope_theta": 500000.0, ")" + dtype_field + R"(": ")" + dtype + R"("})";
}

}  // namespace

TEST_CASE("half: config.json's dtype or torch_dtype decides the size check: Llama-3.2-1B fits as BF16 or F16, not as F32",
          "[half][hub]") {
    // the limits, by hand: 3 GiB in all for a 16-bit model; a float32 model's values are one
    // allocation (in wasm at most 2 GiB - 64 MiB; natively no lower than the 3 GiB)
    CHECK(attn::kMaxParameterBytes == std::uint64_t{3} << 30);
    CHECK(attn::parameter_limit(WeightFormat::bf16) == attn::kMaxParameterBytes);
    CHECK(attn::parameter_limit(WeightFormat::f32) == std::min(attn::kMaxParameterBytes, attn::kMaxAllocationBytes));
    // counted by hand: the matrices (embedding, q k v o, gate up down) at 2 bytes, the RMSNorm gains at 4
    const std::uint64_t V = 128256, C = 2048, L = 16, KV = 8 * 64, F = 8192;
    const std::uint64_t matrices = V * C + L * (2 * C * C + 2 * C * KV + 3 * C * F), gains = L * 2 * C + C;
    for (const char* field : {"torch_dtype", "dtype"}) {
        INFO(field);
        for (const auto& [dtype, format] : {std::pair<const char*, WeightFormat>{"bfloat16", WeightFormat::bf16},
                                           {"float16", WeightFormat::f16}, {"float32", WeightFormat::f32}}) {
            INFO(dtype);
            const std::string text = llama32_config(field, dtype);
            CHECK(attn::declared_weight_format(text) == format);
            const attn::HubSizeCheck c = attn::check_hub_size(attn::read_hub_config(text), attn::declared_weight_format(text));
            CHECK(c.format == format);
            if (format == WeightFormat::f32) {  // 4.9 GB: refused with its numbers, before any download
                CHECK(c.parameter_bytes == 4 * (matrices + gains));
                CHECK(c.limit_bytes == attn::parameter_limit(WeightFormat::f32));
                CHECK_FALSE(c.fits);
                CHECK(c.refusal == "the model has " + std::to_string(matrices + gains) + " parameters (4.9 GB as float32), above the " +
                                       attn::format_bytes(static_cast<std::int64_t>(c.limit_bytes)) + " this engine holds");
            } else {  // 2.5 GB in chunks: under the 3 GiB of the page and the CLI
                CHECK(c.parameter_bytes == 2 * matrices + 4 * gains);
                CHECK(c.parameter_bytes == 2471763968);
                CHECK(c.limit_bytes == attn::kMaxParameterBytes);
                CHECK(c.fits);
                CHECK(c.refusal.empty());
            }
        }
    }
    // no dtype, or one the loader does not keep (float64, "auto"): the float32 count, the larger one
    CHECK(attn::declared_weight_format(llama32_config("torch_dtype", "auto")) == WeightFormat::f32);
    CHECK(attn::declared_weight_format(R"({"model_type": "llama"})") == WeightFormat::f32);
    // both spellings in one file: transformers 5's dtype wins
    CHECK(attn::declared_weight_format(R"({"torch_dtype": "float32", "dtype": "bfloat16"})") == WeightFormat::bf16);
    // a model too large even kept 16-bit is refused with its 16-bit numbers
    const std::string big = R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 262144,
        "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 48, "num_attention_heads": 32,
        "num_key_value_heads": 8, "hidden_act": "silu", "max_position_embeddings": 2048, "rms_norm_eps": 1e-5,
        "tie_word_embeddings": true, "rope_theta": 500000.0, "dtype": "bfloat16"})";
    const attn::HubSizeCheck c = attn::check_hub_size(attn::read_hub_config(big), attn::declared_weight_format(big));
    const std::uint64_t big_matrices = 262144 * C + 48 * (2 * C * C + 2 * C * KV + 3 * C * F), big_gains = 48 * 2 * C + C;
    CHECK(c.parameter_bytes == 2 * big_matrices + 4 * big_gains);
    CHECK_FALSE(c.fits);
    CHECK(c.refusal == "the model has " + std::to_string(big_matrices + big_gains) +
                           " parameters (6.9 GB as BF16 and float32), above the 3.2 GB this engine holds");
}
