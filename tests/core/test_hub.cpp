// Tests of read_hub_config and HubLoader (pretrained.hpp, src/core/hub_*.cpp)
// on the checkpoints of tests/pretrained/make_checkpoints.py (the build writes
// them to ATTN_PRETRAINED_DIR): every naming variant and dtype of the Hub's
// layout, the golden values of the independent float64 PyTorch forward
// (tests/pretrained/reference.py → golden.json), streaming in any chunk size,
// and every bad file refused by name.

#include "model/generation.hpp"
#include "base/json_value.hpp"
#include "checkpoints/pretrained.hpp"
#include "families/family.hpp"
#include "checkpoints/safetensors.hpp"
#include "train/tasks.hpp"
#include "peak_memory.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

using Catch::Matchers::Contains;

namespace {

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

std::string folder(const std::string& name) { return std::string(ATTN_PRETRAINED_DIR) + "/" + name; }
std::string config_of(const std::string& name) { return read_file(folder(name) + "/config.json"); }
std::string file_of(const std::string& name) { return read_file(folder(name) + "/model.safetensors"); }

/// The whole file fed in chunks of `chunk` bytes (0 = at once), from offset 0.
std::unique_ptr<attn::Model> load(const std::string& config_json, const std::string& bytes, std::size_t chunk = 0) {
    const attn::ModelConfig config = attn::read_hub_config(config_json);
    const std::uint64_t n = attn::HubLoader::header_size(bytes.substr(0, 8));
    attn::HubLoader loader(config, bytes.substr(0, static_cast<std::size_t>(n)), bytes.size());
    const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
    if (chunk == 0) chunk = bytes.size();
    for (std::size_t at = 0; at < bytes.size(); at += chunk)
        loader.feed(at, data + at, std::min(chunk, bytes.size() - at));
    CHECK(loader.fed_bytes() == bytes.size());
    return loader.finish();
}

std::unique_ptr<attn::Model> load(const std::string& name, std::size_t chunk = 0) {
    return load(config_of(name), file_of(name), chunk);
}

/// The message and code of what `f` throws.
std::string error_of(const std::function<void()>& f, attn::Error::Code want = attn::Error::Code::bad_checkpoint) {
    try {
        f();
    } catch (const attn::Error& e) {
        CHECK(attn::error_code_name(e.code()) == std::string(attn::error_code_name(want)));
        return e.what();
    }
    return "<no error>";
}

const attn::JsonValue& golden() {
    static const attn::JsonValue g = attn::parse_json(read_file(std::string(ATTN_SOURCE_DIR) + "/tests/pretrained/golden.json"));
    return g;
}

/// A file rebuilt with one tensor's header entry changed by `edit` (dtype, shape) and
/// its bytes replaced by `fill` (or zeros) of the new size; every other tensor as it was.
std::string rebuild(const std::string& bytes, const std::string& target,
                    const std::function<void(std::string& dtype, std::vector<std::int64_t>& shape)>& edit,
                    const std::string& fill = "") {
    const attn::SafeTensorsIndex index = attn::read_safetensors_header(bytes);
    std::string header = "{", data;
    bool found = false;
    for (const attn::TensorEntry& t : index.tensors) {
        std::string dtype = t.dtype;
        std::vector<std::int64_t> shape = t.shape;
        std::string blob = bytes.substr(index.data_start + t.begin, t.end - t.begin);
        if (t.name == target) {
            found = true;
            edit(dtype, shape);
            std::int64_t n = 1;
            for (std::int64_t d : shape) n *= d;
            const std::size_t size = static_cast<std::size_t>(n) * (dtype == "I64" || dtype == "F64" ? 8 : dtype == "F32" ? 4 : 2);
            blob = fill.empty() ? std::string(size, '\0') : fill;
            REQUIRE(blob.size() == size);
        }
        if (header.size() > 1) header += ',';
        header += "\"" + t.name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":[";
        for (std::size_t i = 0; i < shape.size(); ++i) header += (i ? "," : "") + std::to_string(shape[i]);
        header += "],\"data_offsets\":[" + std::to_string(data.size()) + "," + std::to_string(data.size() + blob.size()) + "]}";
        data += blob;
    }
    REQUIRE(found);
    header += "}";
    std::string out;
    for (int i = 0; i < 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
    return out + header + data;
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
    const std::size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
}

/// A GPT-2 config.json of these sizes (n_inner 4·C).
std::string gpt2_config(int V, int T, int C, int L, int H) {
    return "{\"model_type\": \"gpt2\", \"vocab_size\": " + std::to_string(V) + ", \"n_positions\": " + std::to_string(T) +
           ", \"n_embd\": " + std::to_string(C) + ", \"n_layer\": " + std::to_string(L) + ", \"n_head\": " + std::to_string(H) + "}";
}

/// The safetensors header (8 + N bytes) of a GPT-2 of these sizes in F32: every tensor the
/// loader needs, laid end to end, and no data after it.
std::string gpt2_header(int V, int T, int C, int L) {
    std::vector<std::pair<std::string, std::vector<std::int64_t>>> tensors = {{"wte.weight", {V, C}}, {"wpe.weight", {T, C}}};
    for (int l = 0; l < L; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        for (const auto& [name, shape] : std::vector<std::pair<std::string, std::vector<std::int64_t>>>{
                 {"ln_1.weight", {C}}, {"ln_1.bias", {C}}, {"attn.c_attn.weight", {C, 3 * C}}, {"attn.c_attn.bias", {3 * C}},
                 {"attn.c_proj.weight", {C, C}}, {"attn.c_proj.bias", {C}}, {"ln_2.weight", {C}}, {"ln_2.bias", {C}},
                 {"mlp.c_fc.weight", {C, 4 * C}}, {"mlp.c_fc.bias", {4 * C}}, {"mlp.c_proj.weight", {4 * C, C}},
                 {"mlp.c_proj.bias", {C}}})
            tensors.push_back({h + name, shape});
    }
    tensors.push_back({"ln_f.weight", {C}});
    tensors.push_back({"ln_f.bias", {C}});
    std::string json = "{";
    std::uint64_t at = 0;
    for (const auto& [name, shape] : tensors) {
        std::uint64_t n = 4;
        std::string dims;
        for (const std::int64_t d : shape) {
            n *= static_cast<std::uint64_t>(d);
            dims += (dims.empty() ? "" : ",") + std::to_string(d);
        }
        json += (json.size() > 1 ? ",\"" : "\"") + name + "\":{\"dtype\":\"F32\",\"shape\":[" + dims + "],\"data_offsets\":[" +
                std::to_string(at) + "," + std::to_string(at + n) + "]}";
        at += n;
    }
    json += "}";
    std::string out;
    for (int i = 0; i < 8; ++i) out += static_cast<char>((json.size() >> (8 * i)) & 0xFF);
    return out + json;
}

/// Row r, column c of an F32 tensor of the file, read by the F32 reader (independently of the loader).
float raw(const attn::SafeTensors& f, const std::string& name, std::int64_t r, std::int64_t c) {
    const attn::Tensor* t = f.find(name);
    REQUIRE(t != nullptr);
    const std::int64_t cols = t->shape.back();
    return t->data[static_cast<std::size_t>(r * cols + c)];
}

/// Only the F32 tensors of a file (the F32 reader refuses buffers of other dtypes).
attn::SafeTensors f32_tensors(const std::string& bytes) {
    const attn::SafeTensorsIndex index = attn::read_safetensors_header(bytes);
    attn::SafeTensors out;
    for (const attn::TensorEntry& e : index.tensors) {
        if (e.dtype != "F32") continue;
        attn::Tensor t;
        t.name = e.name;
        t.shape = e.shape;
        for (std::uint64_t i = 0; i < (e.end - e.begin) / 4; ++i) {
            float f;
            std::memcpy(&f, bytes.data() + index.data_start + e.begin + 4 * i, 4);
            t.data.push_back(f);
        }
        out.tensors.push_back(std::move(t));
    }
    return out;
}

}  // namespace

TEST_CASE("hub: every test checkpoint's attention weights and logits match the float64 PyTorch reference within 1e-4",
          "[hub]") {
    const attn::JsonValue* all = golden().get("checkpoints");
    REQUIRE(all != nullptr);
    REQUIRE(all->object.size() == 23);  // (bert-untied, gpt2-padded and bert-padded: issue #36, 5 and 7; 8 rotary decoders)
    double worst = 0;
    for (const auto& [name, entry] : all->object) {
        INFO("checkpoint " << name);
        const attn::JsonValue* g = &entry;
        if (const attn::JsonValue* same = entry.get("same_as"); same && same->is(attn::JsonValue::Type::string))
            g = all->get(same->string);
        const std::unique_ptr<attn::Model> model = load(name);
        const attn::ModelConfig& config = model->config();
        CHECK(config.family == g->get("family")->string);
        for (const attn::JsonValue& seq : g->get("sequences")->array) {
            std::vector<std::int32_t> ids;
            for (const attn::JsonValue& v : seq.get("ids")->array) ids.push_back(static_cast<std::int32_t>(v.integer));
            INFO("sequence of " << ids.size() << " ids");
            const attn::ModelTrace tr = attn::trace_model(config, model->params(), ids);
            for (const attn::JsonValue& a : seq.get("attention")->array) {
                const int layer = static_cast<int>(a.get("layer")->integer), head = static_cast<int>(a.get("head")->integer);
                const attn::Matrix& w = tr.layers[static_cast<std::size_t>(layer)].attention.heads[static_cast<std::size_t>(head)].weights;
                const auto& rows = a.get("rows")->array;
                for (std::size_t i = 0; i < rows.size(); ++i) {
                    const auto& want = a.get("weights")->array[i].array;
                    REQUIRE(static_cast<Eigen::Index>(want.size()) == w.cols());
                    for (std::size_t j = 0; j < want.size(); ++j) {
                        const double d = std::abs(w(rows[i].integer, static_cast<Eigen::Index>(j)) - want[j].number);
                        worst = std::max(worst, d);
                        REQUIRE(d < 1e-4);
                    }
                }
            }
            // RoPE: θᵢ after any scaling, and the picked heads' q and k after their rotation
            if (const attn::JsonValue* theta = seq.get("rope_frequencies")) {
                REQUIRE(static_cast<std::size_t>(tr.rope_frequencies.size()) == theta->array.size());
                for (std::size_t i = 0; i < theta->array.size(); ++i)
                    CHECK(std::abs(tr.rope_frequencies(static_cast<Eigen::Index>(i)) - theta->array[i].number) <=
                          1e-6 * theta->array[i].number);
                for (const attn::JsonValue& r : seq.get("rope")->array) {
                    const auto& head = tr.layers[static_cast<std::size_t>(r.get("layer")->integer)]
                                           .attention.heads[static_cast<std::size_t>(r.get("head")->integer)];
                    const auto& rows = r.get("rows")->array;
                    for (const char* part : {"query", "key"}) {
                        const attn::Matrix& m = std::string(part) == "query" ? head.query : head.key;
                        for (std::size_t i = 0; i < rows.size(); ++i) {
                            const auto& want = r.get(part)->array[i].array;
                            REQUIRE(static_cast<Eigen::Index>(want.size()) == m.cols());
                            for (std::size_t j = 0; j < want.size(); ++j) {
                                const double d = std::abs(m(rows[i].integer, static_cast<Eigen::Index>(j)) - want[j].number);
                                worst = std::max(worst, d);
                                REQUIRE(d < 1e-4);
                            }
                        }
                    }
                }
            }
            const auto& logit_ids = seq.get("logit_ids")->array;
            for (Eigen::Index t = 0; t < tr.logits.rows(); ++t) {
                const auto& want = seq.get("logits")->array[static_cast<std::size_t>(t)].array;
                for (std::size_t k = 0; k < logit_ids.size(); ++k) {
                    const double d = std::abs(tr.logits(t, logit_ids[k].integer) - want[k].number);
                    worst = std::max(worst, d);
                    REQUIRE(d < 1e-4);
                }
                // logsumexp over the whole vocabulary: every logit takes part
                const double m = tr.logits.row(t).maxCoeff();
                double s = 0;
                for (Eigen::Index v = 0; v < tr.logits.cols(); ++v) s += std::exp(tr.logits(t, v) - m);
                const double d = std::abs(m + std::log(s) - seq.get("logsumexp")->array[static_cast<std::size_t>(t)].number);
                worst = std::max(worst, d);
                REQUIRE(d < 1e-4);
            }
        }
    }
    WARN("largest difference from the float64 reference: " << worst);
}

TEST_CASE("hub: generating token by token with the KV cache, and the whole sequence as one prompt, give the float64 reference's logits",
          "[hub][generation]") {
    const attn::JsonValue* all = golden().get("checkpoints");
    int checked = 0;
    for (const auto& [name, entry] : all->object) {
        const attn::JsonValue* g = &entry;
        if (const attn::JsonValue* same = entry.get("same_as"); same && same->is(attn::JsonValue::Type::string))
            g = all->get(same->string);
        if (!attn::family_named(g->get("family")->string)->generates) continue;  // GPT-2, Llama, Qwen2, Qwen3
        INFO("checkpoint " << name);
        const std::unique_ptr<attn::Model> model = load(name);
        for (const attn::JsonValue& seq : g->get("sequences")->array) {
            attn::KvCache cache(*model);
            const auto& logit_ids = seq.get("logit_ids")->array;
            for (std::size_t t = 0; t < seq.get("ids")->array.size(); ++t) {
                cache.append(static_cast<std::int32_t>(seq.get("ids")->array[t].integer));
                const auto& want = seq.get("logits")->array[t].array;
                for (std::size_t k = 0; k < logit_ids.size(); ++k)
                    REQUIRE(std::abs(cache.logits()(0, logit_ids[k].integer) - want[k].number) < 1e-4);
            }
            // the whole sequence as one prompt (the page's first generate): the last position's logits
            attn::KvCache prompt(*model);
            std::vector<std::int32_t> ids;
            for (const attn::JsonValue& id : seq.get("ids")->array) ids.push_back(static_cast<std::int32_t>(id.integer));
            prompt.append(ids);
            const auto& want = seq.get("logits")->array[ids.size() - 1].array;
            for (std::size_t k = 0; k < logit_ids.size(); ++k)
                REQUIRE(std::abs(prompt.logits()(0, logit_ids[k].integer) - want[k].number) < 1e-4);
        }
        ++checked;
    }
    CHECK(checked == 16);  // 8 GPT-2 folders (gpt2-padded: issue #36, 5), 4 Llama, 2 Qwen2, 2 Qwen3
}

TEST_CASE("hub: the hand-built gpt2-patterns checkpoint's heads are named previous-token and first-token", "[hub]") {
    const std::unique_ptr<attn::Model> model = load("gpt2-patterns");
    // any text: the two heads read positions only (the sentence of golden.json and a repeated one)
    for (const std::vector<std::int32_t>& ids : {std::vector<std::int32_t>{464, 5044, 1422, 470, 3272, 262, 4675, 780, 340, 373, 1165, 10032, 13},
                                                 std::vector<std::int32_t>{40, 1101, 257, 40, 1101, 257, 40, 1101}}) {
        const attn::ModelTrace tr = model->trace(ids);
        std::vector<const attn::Matrix*> heads;
        for (const attn::HeadTrace& h : tr.layers[0].attention.heads) heads.push_back(&h.weights);
        const auto patterns = attn::head_patterns(heads, ids, static_cast<int>(ids.size()), true);
        const auto best = [](const std::vector<attn::PatternScore>& scores) {
            return *std::max_element(scores.begin(), scores.end(), [](const attn::PatternScore& a, const attn::PatternScore& b) {
                return a.score < b.score;
            });
        };
        INFO(ids.size() << " tokens");
        CHECK(best(patterns[0]).name == "previous-token");
        CHECK(best(patterns[0]).score > 0.99);
        CHECK(best(patterns[1]).name == "first-token");
        CHECK(best(patterns[1]).score > 0.99);
    }
}

TEST_CASE("hub: the same file fed in 1-, 7-, 4096-byte and whole chunks gives identical parameters", "[hub]") {
    for (const char* name : {"gpt2", "gpt2-f16", "bert-bf16", "bert"}) {
        INFO(name);
        const std::vector<float> whole = load(name)->params().flat();
        for (std::size_t chunk : {1, 7, 4096}) CHECK(load(name, chunk)->params().flat() == whole);
    }
}

TEST_CASE("hub: feeding exactly the needed ranges is enough, buffers, the pooler and position_ids are skipped", "[hub]") {
    for (const char* name : {"gpt2", "bert", "bert-model"}) {
        INFO(name);
        const std::string bytes = file_of(name);
        const attn::ModelConfig config = attn::read_hub_config(config_of(name));
        attn::HubLoader loader(config, bytes.substr(0, static_cast<std::size_t>(attn::HubLoader::header_size(bytes))), bytes.size());
        CHECK(loader.needed_bytes() < bytes.size() - attn::HubLoader::header_size(bytes));  // something is skipped
        std::uint64_t sum = 0, last = 0;
        for (const attn::ByteRange& r : loader.needed()) {
            CHECK(r.begin >= last);
            CHECK(r.end > r.begin);
            sum += r.end - r.begin;
            last = r.end;
            // in two pieces, to cross a chunk boundary inside a range
            const std::uint64_t mid = r.begin + (r.end - r.begin) / 2 + 1;
            const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
            loader.feed(r.begin, data + r.begin, static_cast<std::size_t>(std::min(mid, r.end) - r.begin));
            if (mid < r.end) loader.feed(mid, data + mid, static_cast<std::size_t>(r.end - mid));
        }
        CHECK(sum == loader.needed_bytes());
        CHECK(loader.fed_bytes() == loader.needed_bytes());
        CHECK(loader.finish()->params().flat() == load(name)->params().flat());
    }
}

TEST_CASE("hub: GPT-2's Conv1D tensors land unchanged, c_attn split into q | k | v by columns, lm_head unties", "[hub]") {
    const attn::SafeTensors f = f32_tensors(file_of("gpt2-untied"));
    const std::unique_ptr<attn::Model> model = load("gpt2-untied");
    const attn::ModelConfig& c = model->config();
    CHECK_FALSE(c.tied);
    CHECK(c.causal);
    CHECK(c.norm == attn::Norm::pre);
    CHECK(c.activation == attn::Activation::gelu_tanh);
    const attn::Parameters& p = model->params();
    const int C = c.d_model;
    const std::string pre = "transformer.h.1.";
    for (int r = 0; r < C; ++r)
        for (int k = 0; k < C; ++k) {
            REQUIRE(p.matrix("layers.1.w_query")(r, k) == raw(f, pre + "attn.c_attn.weight", r, k));
            REQUIRE(p.matrix("layers.1.w_key")(r, k) == raw(f, pre + "attn.c_attn.weight", r, C + k));
            REQUIRE(p.matrix("layers.1.w_value")(r, k) == raw(f, pre + "attn.c_attn.weight", r, 2 * C + k));
            REQUIRE(p.matrix("layers.1.w_output")(r, k) == raw(f, pre + "attn.c_proj.weight", r, k));
        }
    for (int k = 0; k < C; ++k) {
        CHECK(p.matrix("layers.1.b_value")(0, k) == raw(f, pre + "attn.c_attn.bias", 0, 2 * C + k));
        CHECK(p.matrix("layers.1.ln2.gain")(0, k) == raw(f, pre + "ln_2.weight", 0, k));
    }
    for (int v = 0; v < c.vocab; ++v)
        for (int k = 0; k < C; ++k) REQUIRE(p.matrix("unembed")(k, v) == raw(f, "lm_head.weight", v, k));  // [V, C] → [C, V]
    CHECK(load("gpt2")->config().tied);
}

TEST_CASE("hub: BERT's nn.Linear tensors are transposed to in x out, the MLM head is found in the file", "[hub]") {
    const attn::SafeTensors f = f32_tensors(file_of("bert-mlm"));
    const std::unique_ptr<attn::Model> model = load("bert-mlm");
    const attn::ModelConfig& c = model->config();
    CHECK(c.norm == attn::Norm::post);
    CHECK(c.embed_layernorm);
    CHECK(c.token_types == 2);
    CHECK(c.output_transform);
    CHECK(c.output_bias);
    CHECK(c.activation == attn::Activation::gelu_erf);
    CHECK(c.ln_eps == 1e-12f);
    const attn::Parameters& p = model->params();
    const std::string l0 = "bert.encoder.layer.0.";
    for (int i = 0; i < c.d_model; ++i)
        for (int o = 0; o < c.mlp; ++o) {
            REQUIRE(p.matrix("layers.0.mlp.w_in")(i, o) == raw(f, l0 + "intermediate.dense.weight", o, i));
            REQUIRE(p.matrix("layers.0.mlp.w_out")(o, i) == raw(f, l0 + "output.dense.weight", i, o));
        }
    for (int i = 0; i < c.d_model; ++i)
        for (int o = 0; o < c.d_model; ++o)
            REQUIRE(p.matrix("head.w_transform")(i, o) == raw(f, "cls.predictions.transform.dense.weight", o, i));
    for (int v = 0; v < c.vocab; ++v) CHECK(p.matrix("unembed_bias")(0, v) == raw(f, "cls.predictions.bias", 0, v));
    // legacy names (LayerNorm.gamma/beta, the pooler and seq_relationship present) give the same model
    CHECK(load("bert")->params().flat() == p.flat());
    // without the head: no transform, no output bias, the encoder's weights the same
    const std::unique_ptr<attn::Model> bare = load("bert-model");
    CHECK_FALSE(bare->config().output_transform);
    CHECK_FALSE(bare->config().output_bias);
    CHECK(bare->params().matrix("layers.1.w_value") == p.matrix("layers.1.w_value"));
}

TEST_CASE("hub: a BERT with tie_word_embeddings false takes its own output layer, cls.predictions.decoder.weight", "[hub]") {
    // bert-untied is bert-mlm with a decoder of its own (make_checkpoints.py): its unembedding is
    // that decoder, transposed ([V, C] nn.Linear → [C, V]); every other tensor is bert-mlm's
    const attn::SafeTensors f = f32_tensors(file_of("bert-untied"));
    const std::unique_ptr<attn::Model> untied = load("bert-untied");
    const std::unique_ptr<attn::Model> tied = load("bert-mlm");
    CHECK_FALSE(untied->config().tied);
    CHECK(tied->config().tied);  // its file saves the embeddings as the decoder too: not read
    const attn::Matrix unembed = untied->params().matrix("unembed");
    REQUIRE(unembed.rows() == 32);
    REQUIRE(unembed.cols() == 96);
    for (const auto& [c, v] : std::vector<std::pair<int, int>>{{0, 0}, {5, 17}, {31, 95}})
        CHECK(unembed(c, v) == raw(f, "cls.predictions.decoder.weight", v, c));
    CHECK(untied->params().matrix("embed") == tied->params().matrix("embed"));
    CHECK(unembed != tied->params().matrix("embed").transpose());
    // config.json alone says the output layer is the file's: the largest model counts it
    const attn::HubSizeCheck size = attn::check_hub_size(attn::read_hub_config(config_of("bert-untied")));
    CHECK(size.largest_bytes == 4 * untied->params().flat().size());
    // without the decoder in the file, the untied model is refused, naming it
    const std::string bytes = file_of("bert-untied");
    const std::size_t n = static_cast<std::size_t>(attn::HubLoader::header_size(bytes));
    const std::string header = replace(bytes.substr(0, n), "\"cls.predictions.decoder.weight\"", "\"cls.predictions.decoder.wejght\"");
    CHECK_THAT(error_of([&] { attn::HubLoader(attn::read_hub_config(config_of("bert-untied")), header, bytes.size()); }),
               Contains("has no tensor 'cls.predictions.decoder.weight', which the output layer (tie_word_embeddings false) needs"));
    // a BertModel (no head) keeps the word embeddings as its stand-in output, whatever config.json says
    const std::string model_config = replace(config_of("bert-model"), "\"model_type\"", "\"tie_word_embeddings\": false, \"model_type\"");
    CHECK(load(model_config, file_of("bert-model"))->config().tied);
}

TEST_CASE("hub: the transformer. prefix, attn.bias buffers and a saved copy of the tied lm_head load the same weights",
          "[hub]") {
    const std::unique_ptr<attn::Model> plain = load("gpt2"), prefixed = load("gpt2-transformer");
    CHECK(plain->config().tied);
    CHECK_FALSE(prefixed->config().tied);  // lm_head.weight is in the file: it is used as it is
    for (const attn::ParamInfo& info : plain->params().layout())
        CHECK(plain->params().matrix(info.name) == prefixed->params().matrix(info.name));
    CHECK(prefixed->params().matrix("unembed") == plain->params().matrix("embed").transpose());
}

// ---- config.json ---------------------------------------------------------------------------------

TEST_CASE("hub config: GPT-2 and BERT fields become the model's options, with transformers' defaults", "[hub]") {
    const attn::ModelConfig g = attn::read_hub_config(
        R"({"architectures":["GPT2LMHeadModel"],"model_type":"gpt2","n_layer":12,"n_head":12,"n_embd":768,)"
        R"("n_positions":1024,"vocab_size":50257,"n_inner":null,"activation_function":"gelu_new","layer_norm_epsilon":1e-05})");
    CHECK(g.family == "gpt2");
    CHECK(g.layers == 12);
    CHECK(g.heads == 12);
    CHECK(g.d_model == 768);
    CHECK(g.mlp == 3072);
    CHECK(g.context == 1024);
    CHECK(g.vocab == 50257);
    CHECK(g.causal);
    CHECK(g.attn_bias);
    CHECK(g.norm == attn::Norm::pre);
    CHECK(g.activation == attn::Activation::gelu_tanh);
    CHECK(g.positional == attn::Positional::learned);
    CHECK(g.ln_eps == 1e-5f);
    // n_ctx instead of n_positions (old configs), and no activation_function: gelu_new
    const attn::ModelConfig old = attn::read_hub_config(R"({"model_type":"gpt2","n_layer":1,"n_head":2,"n_embd":8,"n_ctx":16,"vocab_size":10,"n_inner":20})");
    CHECK(old.context == 16);
    CHECK(old.mlp == 20);
    CHECK(old.activation == attn::Activation::gelu_tanh);
    const attn::ModelConfig b = attn::read_hub_config(
        R"({"architectures":["BertForMaskedLM"],"model_type":"bert","num_hidden_layers":12,"num_attention_heads":12,)"
        R"("hidden_size":768,"intermediate_size":3072,"max_position_embeddings":512,"vocab_size":30522,"type_vocab_size":2,)"
        R"("layer_norm_eps":1e-12,"hidden_act":"gelu","position_embedding_type":"absolute"})");
    CHECK(b.family == "bert");
    CHECK(b.mlp == 3072);
    CHECK(b.context == 512);
    CHECK(b.token_types == 2);
    CHECK_FALSE(b.causal);
    CHECK(b.norm == attn::Norm::post);
    CHECK(b.embed_layernorm);
    CHECK(b.activation == attn::Activation::gelu_erf);
    CHECK(b.ln_eps == 1e-12f);
}

TEST_CASE("hub config: a config.json that starts with a UTF-8 byte order mark is read", "[hub]") {
    const attn::ModelConfig plain = attn::read_hub_config(config_of("gpt2"));
    const attn::ModelConfig bom = attn::read_hub_config("\xEF\xBB\xBF" + config_of("gpt2"));
    CHECK(bom.family == plain.family);
    CHECK(bom.d_model == plain.d_model);
    CHECK(bom.vocab == plain.vocab);
}

TEST_CASE("hub config: an unsupported architecture is refused by name", "[hub]") {
    CHECK_THAT(error_of([] { attn::read_hub_config(R"({"architectures":["MistralForCausalLM"],"model_type":"mistral"})"); }),
               Contains("MistralForCausalLM is not supported: this page runs GPT-2, BERT, Llama, Qwen2 and Qwen3 models"));
    CHECK_THAT(error_of([] { attn::read_hub_config(R"({"model_type":"distilbert"})"); }),
               Contains("model_type \"distilbert\" is not supported"));
    CHECK_THAT(error_of([] { attn::read_hub_config(R"({"n_layer":2})"); }), Contains("neither \"model_type\" nor \"architectures\""));
    CHECK_THAT(error_of([] { attn::read_hub_config("[1, 2]"); }), Contains("is not a JSON object"));
    CHECK_THAT(error_of([] { attn::read_hub_config("{\"model_type\": "); }), Contains("config.json: "));
}

TEST_CASE("hub config: a missing, mistyped or out-of-range field is named", "[hub]") {
    const std::string gpt2 = config_of("gpt2");
    CHECK_THAT(error_of([&] { attn::read_hub_config(replace(gpt2, "\"n_embd\": 24,", "")); }),
               Contains("the field \"n_embd\" is missing"));
    CHECK_THAT(error_of([&] { attn::read_hub_config(replace(gpt2, "\"n_layer\": 2", "\"n_layer\": 49")); }),
               Contains("\"n_layer\" is 49; this engine runs 1 to 48"));
    CHECK_THAT(error_of([&] { attn::read_hub_config(replace(gpt2, "\"n_head\": 3", "\"n_head\": 5")); }),
               Contains("not divisible by 5 heads"));
    CHECK_THAT(error_of([&] { attn::read_hub_config(replace(gpt2, "\"n_positions\": 32", "\"n_positions\": 4096")); }),
               Contains("\"n_positions\" is 4096"));
    CHECK_THAT(error_of([&] { attn::read_hub_config(replace(gpt2, "\"n_embd\": 24", "\"n_embd\": 24.5")); }),
               Contains("\"n_embd\" must be a whole number"));
    CHECK_THAT(error_of([&] { attn::read_hub_config(replace(gpt2, "\"gelu_new\"", "\"relu\"")); }),
               Contains("\"activation_function\" is \"relu\""));
    const std::string bert = config_of("bert");
    CHECK_THAT(error_of([&] { attn::read_hub_config(replace(bert, "\"absolute\"", "\"relative_key\"")); }),
               Contains("\"position_embedding_type\" is \"relative_key\""));
    CHECK_THAT(error_of([&] { attn::read_hub_config(replace(bert, "\"vocab_size\": 96", "\"vocab_size\": 300000")); }),
               Contains("\"vocab_size\" is 300000; this engine runs 2 to 262144"));
    CHECK_THAT(error_of([&] { attn::read_hub_config(replace(bert, "\"intermediate_size\": 64,", "")); }),
               Contains("the field \"intermediate_size\" is missing"));
}

// ---- bad files -------------------------------------------------------------------------------------

TEST_CASE("hub: a truncated header is refused", "[hub]") {
    const std::string bytes = file_of("gpt2");
    const attn::ModelConfig config = attn::read_hub_config(config_of("gpt2"));
    CHECK_THAT(error_of([&] { attn::HubLoader::header_size(bytes.substr(0, 5)); }), Contains("fewer than the 8"));
    const std::size_t n = static_cast<std::size_t>(attn::HubLoader::header_size(bytes));
    CHECK_THAT(error_of([&] { attn::HubLoader(config, bytes.substr(0, n - 10), bytes.size()); }), Contains("the header needs"));
    std::string huge = bytes.substr(0, n);
    huge[5] = 1;  // a header size above 1 MiB
    CHECK_THAT(error_of([&] { attn::HubLoader::header_size(huge); }), Contains("above the limit"));
}

TEST_CASE("hub: truncated data is refused by finish(), naming the tensor it cuts", "[hub]") {
    const std::string bytes = file_of("gpt2");
    const attn::ModelConfig config = attn::read_hub_config(config_of("gpt2"));
    const std::size_t n = static_cast<std::size_t>(attn::HubLoader::header_size(bytes));
    attn::HubLoader loader(config, bytes.substr(0, n), bytes.size());  // (the size the file claims; its bytes stop early)
    const std::size_t cut = bytes.size() - 100;  // inside ln_f or wte (the last tensors by name)
    loader.feed(0, reinterpret_cast<const std::uint8_t*>(bytes.data()), cut);
    CHECK_THAT(error_of([&] { loader.finish(); }), Contains("the file ends at byte " + std::to_string(cut) + " but tensor '"));
}

TEST_CASE("hub: skipping bytes a tensor needs is refused at once", "[hub]") {
    const std::string bytes = file_of("bert");
    attn::HubLoader loader(attn::read_hub_config(config_of("bert")), bytes, bytes.size());
    const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
    const attn::ByteRange first = loader.needed().front();
    CHECK_THAT(error_of([&] { loader.feed(first.begin + 4, data + first.begin + 4, 16); }), Contains("were skipped"));
    attn::HubLoader again(attn::read_hub_config(config_of("bert")), bytes, bytes.size());
    again.feed(first.begin, data + first.begin, 8);
    CHECK_THAT(error_of([&] { again.feed(0, data, 8); }, attn::Error::Code::bad_input), Contains("increasing order"));
}

TEST_CASE("hub: a tensor whose shape does not match the config is named with both shapes and the config's sizes", "[hub]") {
    const std::string bytes = rebuild(file_of("gpt2"), "h.1.mlp.c_fc.weight", [](std::string&, std::vector<std::int64_t>& s) { s = {24, 95}; });
    CHECK_THAT(error_of([&] { load(config_of("gpt2"), bytes); }),
               Contains("tensor 'h.1.mlp.c_fc.weight' has shape [24, 95] but the config (vocab_size 96, n_positions 32, n_embd 24, inner width 96) needs [24, 96]"));
    const std::string bert = rebuild(file_of("bert-mlm"), "bert.encoder.layer.0.attention.self.key.weight",
                                     [](std::string&, std::vector<std::int64_t>& s) { s = {32, 16}; });
    CHECK_THAT(error_of([&] { load(config_of("bert-mlm"), bert); }),
               Contains("tensor 'bert.encoder.layer.0.attention.self.key.weight' has shape [32, 16]"));
}

TEST_CASE("hub: a missing tensor is named with what needs it", "[hub]") {
    // renamed away: the file no longer has h.1.ln_2.weight
    const std::string bytes = file_of("gpt2");
    const std::size_t n = static_cast<std::size_t>(attn::HubLoader::header_size(bytes));
    const std::string header = replace(bytes.substr(0, n), "\"h.1.ln_2.weight\"", "\"h.1.ln_9.weight\"");
    CHECK_THAT(error_of([&] { attn::HubLoader(attn::read_hub_config(config_of("gpt2")), header, bytes.size()); }),
               Contains("has no tensor 'h.1.ln_2.weight', which layer 1 (n_layer 2) needs"));
    // a BERT head without its output bias
    const std::string bert = file_of("bert-mlm");
    const std::size_t nb = static_cast<std::size_t>(attn::HubLoader::header_size(bert));
    const std::string bh = replace(bert.substr(0, nb), "\"cls.predictions.bias\"", "\"cls.predictions.bjas\"");
    CHECK_THAT(error_of([&] { attn::HubLoader(attn::read_hub_config(config_of("bert-mlm")), bh, bert.size()); }),
               Contains("has no tensor 'cls.predictions.bias', which the masked-LM head needs"));
}

TEST_CASE("hub: weights of an unsupported dtype (I64, F64) are refused by name, unneeded buffers of any dtype are not",
          "[hub]") {
    const std::string i64 = rebuild(file_of("gpt2"), "h.0.attn.c_proj.bias", [](std::string& d, std::vector<std::int64_t>&) { d = "I64"; });
    CHECK_THAT(error_of([&] { load(config_of("gpt2"), i64); }),
               Contains("tensor 'h.0.attn.c_proj.bias' has dtype I64; this engine reads F32, F16 and BF16 weights"));
    const std::string f64 = rebuild(file_of("bert"), "bert.embeddings.LayerNorm.gamma", [](std::string& d, std::vector<std::int64_t>&) { d = "F64"; });
    CHECK_THAT(error_of([&] { load(config_of("bert"), f64); }), Contains("'bert.embeddings.LayerNorm.gamma' has dtype F64"));
    // bert has an I64 position_ids buffer, gpt2-f16 BOOL attn.bias buffers: both load
    CHECK_NOTHROW(load("bert"));
    CHECK_NOTHROW(load("gpt2-f16"));
}

TEST_CASE("hub: vocabulary and model sizes that disagree are refused, naming both", "[hub]") {
    const std::string config = replace(config_of("gpt2"), "\"vocab_size\": 96", "\"vocab_size\": 100");
    CHECK_THAT(error_of([&] { load(config, file_of("gpt2")); }),
               Contains("tensor 'wte.weight' has 96 rows (its vocabulary) but config.json's vocab_size is 100: the vocabulary and model sizes disagree"));
    const std::string bert = replace(config_of("bert"), "\"vocab_size\": 96", "\"vocab_size\": 90");
    CHECK_THAT(error_of([&] { load(bert, file_of("bert")); }),
               Contains("'bert.embeddings.word_embeddings.weight' has 96 rows (its vocabulary) but config.json's vocab_size is 90"));
}

TEST_CASE("hub: a non-finite weight (inf or NaN, in F32, F16 or BF16) is refused, naming the tensor", "[hub]") {
    const auto f16 = [](std::uint16_t bits, std::size_t count, std::size_t at) {
        std::string s(2 * count, '\0');
        s[2 * at] = static_cast<char>(bits & 0xFF);
        s[2 * at + 1] = static_cast<char>(bits >> 8);
        return s;
    };
    // F16 +inf at element 5 of a [24] vector
    const std::string inf = rebuild(file_of("gpt2-f16"), "h.0.ln_1.bias", [](std::string&, std::vector<std::int64_t>&) {}, f16(0x7C00, 24, 5));
    CHECK_THAT(error_of([&] { load(config_of("gpt2-f16"), inf, 7); }),
               Contains("tensor 'h.0.ln_1.bias' has a non-finite value (infinity) at row 0, column 5"));
    // BF16 NaN
    const std::string nan = rebuild(file_of("bert-bf16"), "bert.embeddings.LayerNorm.beta", [](std::string&, std::vector<std::int64_t>&) {}, f16(0x7FC1, 32, 31));
    CHECK_THAT(error_of([&] { load(config_of("bert-bf16"), nan); }), Contains("'bert.embeddings.LayerNorm.beta' has a non-finite value (NaN)"));
    // F32 -inf in a matrix
    std::string f32(4 * 24 * 24, '\0');
    const std::uint32_t minus_inf = 0xFF800000u;
    std::memcpy(&f32[4 * (3 * 24 + 2)], &minus_inf, 4);
    const std::string m = rebuild(file_of("gpt2"), "h.1.attn.c_proj.weight", [](std::string&, std::vector<std::int64_t>&) {}, f32);
    CHECK_THAT(error_of([&] { load(config_of("gpt2"), m); }), Contains("'h.1.attn.c_proj.weight' has a non-finite value (infinity) at row 3, column 2"));
}

TEST_CASE("hub: a non-finite value in a matrix kept 16-bit is refused at its row and column, in any chunk sizes, and the "
          "largest finite ones load",
          "[hub]") {
    // a [R, K] tensor of zeros with `bits` at (r, c), in 2-byte values
    const auto one = [](std::uint16_t bits, std::size_t R, std::size_t K, std::size_t r, std::size_t c) {
        std::string s(2 * R * K, '\0');
        s[2 * (r * K + c)] = static_cast<char>(bits & 0xFF);
        s[2 * (r * K + c) + 1] = static_cast<char>(bits >> 8);
        return s;
    };
    const auto keep = [](std::string&, std::vector<std::int64_t>&) {};
    struct Case {
        const char *model, *tensor;
        std::size_t R, K, r, c;
        std::uint16_t bits;
        const char* what;
    };
    // Conv1D [in, out] as is; c_attn split into q | k | v (column 50: v's column 2); nn.Linear [out, in] transposed
    const Case cases[] = {{"gpt2-f16", "h.0.mlp.c_fc.weight", 24, 96, 2, 7, 0x7C00, "infinity"},
                          {"gpt2-f16", "h.1.attn.c_attn.weight", 24, 72, 1, 50, 0x7E01, "NaN"},
                          {"gpt2-f16", "h.1.attn.c_attn.weight", 24, 72, 23, 71, 0xFC00, "infinity"},
                          {"llama3-bf16", "model.layers.0.mlp.up_proj.weight", 48, 32, 5, 9, 0xFF80, "infinity"},
                          {"llama3-bf16", "model.layers.1.self_attn.q_proj.weight", 32, 32, 31, 0, 0x7FC1, "NaN"}};
    for (const Case& k : cases)
        for (const std::size_t chunk : {std::size_t{0}, std::size_t{7}}) {  // whole, and elements split between chunks
            INFO(k.tensor << " chunk " << chunk);
            const std::string bytes = rebuild(file_of(k.model), k.tensor, keep, one(k.bits, k.R, k.K, k.r, k.c));
            CHECK(error_of([&] { load(config_of(k.model), bytes, chunk); }) ==
                  "model.safetensors: tensor '" + std::string(k.tensor) + "' has a non-finite value (" + k.what + ") at row " +
                      std::to_string(k.r) + ", column " + std::to_string(k.c));
        }
    // two: the first in the file's order is named (a transposed tensor is written a tile of columns at a time)
    std::string two = one(0x7FC1, 32, 48, 2, 40);
    two[2 * (5 * 48 + 3)] = static_cast<char>(0x80);
    two[2 * (5 * 48 + 3) + 1] = static_cast<char>(0x7F);
    for (const std::size_t chunk : {std::size_t{0}, std::size_t{7}}) {
        const std::string bytes = rebuild(file_of("llama3-bf16"), "model.layers.0.mlp.down_proj.weight", keep, two);
        CHECK(error_of([&] { load(config_of("llama3-bf16"), bytes, chunk); }) ==
              "model.safetensors: tensor 'model.layers.0.mlp.down_proj.weight' has a non-finite value (NaN) at row 2, column 40");
    }
    // the largest finite values (F16 ±65504, BF16 ±3.39e38) are kept, bit for bit
    const std::string f16 = rebuild(file_of("gpt2-f16"), "h.0.mlp.c_fc.weight", keep, one(0xFBFF, 24, 96, 2, 7));
    CHECK(load(config_of("gpt2-f16"), f16, 7)->params().matrix("layers.0.mlp.w_in")(2, 7) == -65504.0f);
    const std::string bf16 = rebuild(file_of("llama3-bf16"), "model.layers.0.mlp.up_proj.weight", keep, one(0x7F7F, 48, 32, 5, 9));
    CHECK(load(config_of("llama3-bf16"), bf16)->params().matrix("layers.0.mlp.w_in")(9, 5) == attn::bf16_to_float(0x7F7F));
}

TEST_CASE("hub: random corruptions of a checkpoint's bytes load or throw attn::Error, never crash", "[hub]") {
    const std::string good = file_of("gpt2-bf16");
    const std::string config = config_of("gpt2-bf16");
    std::uint32_t state = 12345;
    const auto next = [&] { return state = state * 1664525u + 1013904223u; };
    int loaded = 0;
    for (int trial = 0; trial < 300; ++trial) {
        std::string bytes = good;
        for (int f = 0; f < 3; ++f) bytes[next() % std::min<std::size_t>(bytes.size(), 4000)] = static_cast<char>(next());
        if (trial % 3 == 0) bytes.resize(next() % bytes.size());
        try {
            load(config, bytes, 1 + next() % 5000);
            ++loaded;
        } catch (const attn::Error&) {
        }
    }
    CHECK(loaded >= 0);
}

TEST_CASE("hub: a header that describes more tensor data than the file holds is refused before anything is allocated", "[hub]") {
    // 2.5 KB of file whose header describes a GPT-2 of 2.4 GB (V 50257, C 1280, 30 layers): its
    // parameters were allocated and zeroed before finish() found the data missing (2.3 GB, 12.7 s)
    const std::string header = gpt2_header(50257, 1024, 1280, 30);
    const attn::ModelConfig config = attn::read_hub_config(gpt2_config(50257, 1024, 1280, 30, 20));
    std::string message;
    const std::int64_t used = test_memory::peak_memory_of([&] {
        message = error_of([&] {
            attn::HubLoader loader(config, header, header.size());
            loader.feed(0, reinterpret_cast<const std::uint8_t*>(header.data()), header.size());
            loader.finish();
        });
    });
    INFO(message);
    CHECK(used < (std::int64_t{64} << 20));
    CHECK_THAT(message, Contains("the file ends at byte " + std::to_string(header.size()) + " but tensor 'wte.weight' needs bytes"));
}

TEST_CASE("hub size: config.json alone says whether the model fits, counted in 64 bits", "[hub]") {
    // the test checkpoint: far below the limit; its smallest and largest configs are one (no optional part)
    const attn::HubSizeCheck small = attn::check_hub_size(attn::read_hub_config(config_of("gpt2")));
    CHECK(small.fits);
    CHECK(small.refusal.empty());
    CHECK(small.limit_bytes == attn::parameter_limit(attn::WeightFormat::f32));  // a float32 model's values: one allocation
    CHECK(small.parameter_bytes == 4 * load("gpt2")->params().flat().size());
    CHECK(small.largest_bytes == small.parameter_bytes + 4 * 96 * 24);  // + an lm_head of its own
    // gpt2-xl: 1.56 G parameters, 6.2 GB
    const std::uint64_t xl = 4 * (50257ull * 1600 + 1024ull * 1600 + 48 * (12ull * 1600 * 1600 + 13 * 1600) + 2 * 1600);
    const attn::HubSizeCheck big = attn::check_hub_size(attn::read_hub_config(gpt2_config(50257, 1024, 1600, 48, 25)));
    CHECK(big.parameter_bytes == xl);
    CHECK_FALSE(big.fits);
    CHECK_THAT(big.refusal, Contains("the model has " + std::to_string(xl / 4) + " parameters") && Contains("this engine holds"));
    // the largest config the inference limits allow: 3.9 G floats, past 2³² bytes (wasm's size_t)
    const std::string most = "{\"model_type\": \"gpt2\", \"vocab_size\": 262144, \"n_positions\": 2048, \"n_embd\": 2048, "
                             "\"n_layer\": 48, \"n_head\": 16, \"n_inner\": 8192}";
    const std::uint64_t C = 2048, F = 8192;
    const std::uint64_t floats = 262144 * C + 2048 * C + 48 * (4 * C * C + 2 * C * F + 9 * C + F) + 2 * C;
    const attn::HubSizeCheck huge = attn::check_hub_size(attn::read_hub_config(most));
    CHECK(huge.parameter_bytes == 4 * floats);
    CHECK(huge.parameter_bytes > (std::uint64_t{1} << 32));
    CHECK_FALSE(huge.fits);
}

TEST_CASE("hub size: a header whose parameters are above the limit is refused (too_large) before they are allocated", "[hub]") {
    // gpt2-xl's header with a file as large as it says: the loader refuses from the header alone
    const std::string header = gpt2_header(50257, 1024, 1600, 48);
    const attn::ModelConfig config = attn::read_hub_config(gpt2_config(50257, 1024, 1600, 48, 25));
    const attn::SafeTensorsIndex index = attn::read_safetensors_header(header);
    std::string message;
    const std::int64_t used = test_memory::peak_memory_of([&] {
        message = error_of([&] { attn::HubLoader(config, header, index.data_start + index.data_size); }, attn::Error::Code::too_large);
    });
    CHECK(used < (std::int64_t{64} << 20));
    CHECK_THAT(message, Contains("above the") && Contains("this engine holds"));
}

namespace {

/// The gpt2 checkpoint with head 2 of layer 1's query and key columns of c_attn times `factor`:
/// finite weights whose scores overflow float32 (0.2·1e20 a weight: scores near 1e40).
std::string overflowing_gpt2(float factor) {
    std::string bytes = file_of("gpt2");
    const attn::SafeTensorsIndex index = attn::read_safetensors_header(bytes);
    const attn::TensorEntry* t = index.find("h.1.attn.c_attn.weight");
    REQUIRE(t != nullptr);
    const std::int64_t C = 24, D = 8;
    for (std::int64_t r = 0; r < C; ++r)
        for (const std::int64_t c0 : {2 * D, C + 2 * D})  // q and k of head 2
            for (std::int64_t c = c0; c < c0 + D; ++c) {
                char* at = &bytes[index.data_start + t->begin + static_cast<std::size_t>(4 * (r * 3 * C + c))];
                float f;
                std::memcpy(&f, at, 4);
                f *= factor;
                std::memcpy(at, &f, 4);
            }
    return bytes;
}

}  // namespace

TEST_CASE("hub: a Llama checkpoint whose MLP gate overflows is refused naming the gate", "[hub]") {
    // layer 1's gate_proj (48×32, float32) at 3e38 a weight: finite, but each gate value sums 32
    // products of about 3e38 and overflows. The model has grouped-query attention (4 query heads,
    // 2 K/V heads): finding the place walks every head's q, k and v first (it once read k and v
    // as if there were 4 K/V heads, past their end: AddressSanitizer caught it here)
    std::string bytes = file_of("llama");
    const attn::SafeTensorsIndex index = attn::read_safetensors_header(bytes);
    const attn::TensorEntry* t = index.find("model.layers.1.mlp.gate_proj.weight");
    REQUIRE(t != nullptr);
    for (std::size_t i = 0; i < 48 * 32; ++i) {
        const float f = 3e38f;
        std::memcpy(&bytes[index.data_start + t->begin + 4 * i], &f, 4);
    }
    const std::unique_ptr<attn::Model> model = load(config_of("llama"), bytes);
    const std::vector<std::int32_t> ids = {5, 17, 42, 3};
    CHECK_THAT(error_of([&] { model->trace(ids, -1, {}, -1); }, attn::Error::Code::not_finite),
               Contains("layer 1, the MLP's gate values are not finite"));
}

TEST_CASE("hub: finite weights whose activations overflow are refused where they first appear (not_finite)", "[hub]") {
    const std::unique_ptr<attn::Model> model = load(config_of("gpt2"), overflowing_gpt2(1e20f));
    const std::vector<std::int32_t> ids = {5, 17, 42, 3};
    const std::string where = "layer 1, the attention scores of head 2 are not finite";
    // a trace (every layer kept), a trace of layer 0 only, a run, generation: each names the same place
    for (int layer : {-1, 0}) {
        INFO("trace layer " << layer);
        CHECK_THAT(error_of([&] { model->trace(ids, -1, {}, layer); }, attn::Error::Code::not_finite), Contains(where));
    }
    attn::Batch b;
    b.batch = 1;
    b.length = 4;
    b.ids = ids;
    b.targets.assign(4, attn::kNoTarget);
    CHECK_THAT(error_of([&] { model->run(b); }, attn::Error::Code::not_finite), Contains(where));
    attn::KvCache cache(*model);
    CHECK_THAT(error_of([&] { cache.append(ids[0]); }, attn::Error::Code::not_finite), Contains(where));
    CHECK(cache.length() == 0);  // the token was not taken, and no logits are left to choose from
    CHECK(cache.logits().size() == 0);
    // the same weights times 1e10: the scores (about 1e20) fit float32 and everything is finite
    const std::unique_ptr<attn::Model> large = load(config_of("gpt2"), overflowing_gpt2(1e10f));
    CHECK(large->trace(ids, -1, {}, -1).logits.allFinite());
}
