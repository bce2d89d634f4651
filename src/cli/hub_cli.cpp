// attn run --model DIR: a Hugging Face folder through the core's HubLoader.
// The JSON is `attn run --model FILE`'s (model_trace_json) plus, for GPT-2,
// "top_next" (the five likeliest next tokens at each position) and, for BERT,
// "top_fill" (the five likeliest fills at each [MASK]).

#include "hub_cli.hpp"

#include "args.hpp"

#include "core/json.hpp"
#include "core/model_json.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <numeric>

namespace attn::cli {
namespace {

constexpr std::uint64_t kMaxConfigBytes = 1 << 20;
constexpr std::uint64_t kMaxTokenizerBytes = std::uint64_t{64} << 20;  // tokenizer.json of a large vocabulary: a few MB

[[noreturn]] void fail(const std::string& message) { throw Error(Error::Code::bad_checkpoint, message); }

bool exists(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string folder_note(const std::string& dir) {
    return " (a Hugging Face model folder holds config.json, model.safetensors and the tokenizer's files; \"" + dir + "\" has not)";
}

/// The text of DIR/name, or "" when absent.
std::string optional_file(const std::string& dir, const std::string& name, std::uint64_t limit = kMaxTokenizerBytes) {
    const std::string path = dir + "/" + name;
    return exists(path) ? read_input_file("--model", path, limit) : std::string();
}

/// A file that closes itself.
struct File {
    std::FILE* f = nullptr;
    ~File() {
        if (f) std::fclose(f);
    }
};

/// Reads exactly `size` bytes at `offset` (fewer at the end of the file); returns how many.
std::size_t read_at(std::FILE* f, std::uint64_t offset, std::uint8_t* out, std::size_t size, const std::string& path) {
    if (fseeko(f, static_cast<off_t>(offset), SEEK_SET) != 0) fail("cannot read \"" + path + "\": " + std::strerror(errno));
    const std::size_t n = std::fread(out, 1, size, f);
    if (n < size && std::ferror(f)) fail("cannot read \"" + path + "\": " + std::strerror(errno));
    return n;
}

struct Choice {
    std::int32_t id;
    float probability;
};

std::vector<Choice> top5(const Matrix& probabilities, Eigen::Index row) {
    std::vector<std::int32_t> ids(static_cast<std::size_t>(probabilities.cols()));
    std::iota(ids.begin(), ids.end(), 0);
    const std::size_t k = std::min<std::size_t>(5, ids.size());
    std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(), [&](std::int32_t a, std::int32_t b) {
        const float pa = probabilities(row, a), pb = probabilities(row, b);
        return pa != pb ? pa > pb : a < b;
    });
    std::vector<Choice> out;
    for (std::size_t i = 0; i < k; ++i) out.push_back({ids[i], probabilities(row, ids[i])});
    return out;
}

std::string choices_json(const std::vector<Choice>& choices, const PretrainedTokenizer* tokenizer) {
    std::string o = "[";
    for (std::size_t i = 0; i < choices.size(); ++i) {
        if (i) o += ',';
        o += "{\"id\":" + std::to_string(choices[i].id);
        if (tokenizer) o += ",\"token\":" + json_quote(tokenizer->piece(choices[i].id));
        o += ",\"probability\":";
        json_put_float(o, choices[i].probability);
        o += '}';
    }
    return o + "]";
}

}  // namespace

bool is_directory(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

ModelConfig read_hub_folder_config(const std::string& dir) {
    if (!exists(dir + "/config.json")) fail("no config.json in \"" + dir + "\"" + folder_note(dir));
    return read_hub_config(read_input_file("--model", dir + "/config.json", kMaxConfigBytes));
}

std::unique_ptr<Model> load_hub_folder(const std::string& dir, const ModelConfig& config, std::size_t chunk) {
    const std::string path = dir + "/model.safetensors";
    if (!exists(path)) fail("no model.safetensors in \"" + dir + "\"" + folder_note(dir));
    File file;
    file.f = std::fopen(path.c_str(), "rb");
    if (!file.f) fail("cannot read \"" + path + "\": " + std::strerror(errno));
    std::string first(8, '\0');
    first.resize(read_at(file.f, 0, reinterpret_cast<std::uint8_t*>(&first[0]), 8, path));
    const std::uint64_t header_size = HubLoader::header_size(first);
    std::string header(static_cast<std::size_t>(header_size), '\0');
    header.resize(read_at(file.f, 0, reinterpret_cast<std::uint8_t*>(&header[0]), header.size(), path));
    HubLoader loader(config, header);
    std::vector<std::uint8_t> buffer(chunk);
    for (const ByteRange& r : loader.needed())
        for (std::uint64_t at = r.begin; at < r.end;) {
            const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, r.end - at));
            const std::size_t got = read_at(file.f, at, buffer.data(), want, path);
            loader.feed(at, buffer.data(), got);
            if (got < want) break;  // the end of the file: finish() names what is missing
            at += got;
        }
    return loader.finish();
}

int run_hub(const HubRunOptions& o) {
    const ModelConfig header_config = read_hub_folder_config(o.dir);
    std::unique_ptr<PretrainedTokenizer> tokenizer;
    std::vector<std::int32_t> ids = o.ids;
    std::vector<Token> tokens;  // the JSON's tokens: text, id, byte offsets
    if (o.have_sentence) {
        throw UsageError{"--sentence with a Hub folder needs the tokenizer (not in this build yet); give --ids"};
    }
    for (std::size_t i = 0; i < ids.size(); ++i) tokens.push_back(Token{std::to_string(ids[i]), ids[i], 0, 0});
    if (ids.empty()) throw Error(Error::Code::empty_text, "the input has no tokens");
    if (static_cast<int>(ids.size()) > header_config.context)
        throw Error(Error::Code::too_long_for_model, "the input has " + std::to_string(ids.size()) +
                                                         " tokens; this model reads at most " + std::to_string(header_config.context));
    for (std::int32_t id : ids)
        if (id < 0 || id >= header_config.vocab)
            throw Error("token id " + std::to_string(id) + " is outside the vocabulary of " + std::to_string(header_config.vocab));
    if (o.layer >= header_config.layers)
        throw UsageError{"--layer " + std::to_string(o.layer) + " is past the model's " + std::to_string(header_config.layers) +
                         " layers (0 to " + std::to_string(header_config.layers - 1) + ")"};
    const std::unique_ptr<Model> model = load_hub_folder(o.dir, header_config);
    const ModelConfig& config = model->config();
    const ModelTrace tr = trace_model(config, model->params(), ids, -1, {}, o.layer);

    if (o.format == "table") {
        std::printf("model: %s, %d layer(s), %d head(s), d_model %d, mlp %d, vocabulary %d, %s\n", config.family.c_str(),
                    config.layers, config.heads, config.d_model, config.mlp, config.vocab,
                    config.causal ? "causal" : "bidirectional");
        for (std::size_t l = 0; l < tr.layers.size(); ++l)
            for (std::size_t h = 0; h < tr.layers[l].attention.heads.size(); ++h) {
                const Matrix& w = tr.layers[l].attention.heads[h].weights;
                std::printf("\nlayer %zu head %zu: weights (row = query, column = key)\n", l, h);
                for (Eigen::Index i = 0; i < w.rows(); ++i) {
                    std::printf("%10.10s", tokens[static_cast<std::size_t>(i)].text.c_str());
                    for (Eigen::Index j = 0; j < w.cols(); ++j) std::printf(" %7.4f", static_cast<double>(w(i, j)));
                    std::printf("\n");
                }
            }
        std::printf("\n%s:\n", config.family == "gpt2" ? "likeliest next tokens" : "likeliest tokens");
        for (Eigen::Index i = 0; i < tr.probabilities.rows(); ++i) {
            std::printf("  %-12s ->", tokens[static_cast<std::size_t>(i)].text.c_str());
            for (const Choice& c : top5(tr.probabilities, i))
                std::printf("  %s %.4f", tokenizer ? tokenizer->piece(c.id).c_str() : std::to_string(c.id).c_str(),
                            static_cast<double>(c.probability));
            std::printf("\n");
        }
        return 0;
    }
    std::string json = model_trace_json(config, tokens, tr);
    // the extras, before the closing brace of the document
    while (!json.empty() && (json.back() == '\n' || json.back() == '}')) {
        const bool brace = json.back() == '}';
        json.pop_back();
        if (brace) break;
    }
    if (config.family == "gpt2") {
        json += ",\"top_next\":[";
        for (Eigen::Index i = 0; i < tr.probabilities.rows(); ++i)
            json += (i ? "," : "") + choices_json(top5(tr.probabilities, i), tokenizer.get());
        json += "]";
    } else {
        const std::int32_t mask = tokenizer ? tokenizer->mask_id() : -1;
        json += ",\"top_fill\":[";
        bool first = true;
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (ids[i] != mask) continue;
            json += std::string(first ? "" : ",") + "{\"position\":" + std::to_string(i) +
                    ",\"choices\":" + choices_json(top5(tr.probabilities, static_cast<Eigen::Index>(i)), tokenizer.get()) + "}";
            first = false;
        }
        json += "]";
    }
    json += "}\n";
    std::fwrite(json.data(), 1, json.size(), stdout);
    return 0;
}

}  // namespace attn::cli
