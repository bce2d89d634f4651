// attn run --model DIR: a Hugging Face folder through the core's HubLoader.
// The JSON is `attn run --model FILE`'s (model_trace_json) plus, for a family that
// generates (GPT-2), "top_next" (the five likeliest next tokens at each position) and,
// for the others (BERT), "top_fill" (the five likeliest fills at each [MASK]). A padding id
// (a vocabulary larger than the tokenizer's) is shown as "<pad ID>", with "padding": true.

#include "hub_cli.hpp"

#include "args.hpp"

#include "train/backward.hpp"
#include "attention/json.hpp"
#include "families/family.hpp"
#include "model/model_json.hpp"
#include "text/pretrained_tokenizer.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>

namespace attn::cli {
namespace {

constexpr std::uint64_t kMaxConfigBytes = 1 << 20;

[[noreturn]] void fail(const std::string& message) { throw Error(Error::Code::bad_checkpoint, message); }

bool exists(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string folder_note(const std::string& dir) {
    return " (a Hugging Face model folder holds config.json, model.safetensors and the tokenizer's files; \"" + dir + "\" has not)";
}

/// The text of DIR/name, or "" when absent.
std::string optional_file(const std::string& dir, const std::string& name) {
    const std::string path = dir + "/" + name;
    return exists(path) ? read_input_file("--model", path, kMaxTokenizerFileBytes) : std::string();
}

/// The folder's tokenizer (read_tokenizer); when its files are not there, refused by
/// name if `required`, else nullptr (--ids: the pieces are then shown as ids).
std::unique_ptr<PretrainedTokenizer> read_folder_tokenizer(const std::string& dir, const ModelConfig& config, bool required) {
    const std::string tokenizer_json = optional_file(dir, "tokenizer.json"), vocab_json = optional_file(dir, "vocab.json"),
                      merges_txt = optional_file(dir, "merges.txt"), vocab_txt = optional_file(dir, "vocab.txt");
    const std::map<std::string, const std::string*> texts = {{"tokenizer.json", &tokenizer_json}, {"vocab.json", &vocab_json},
                                                             {"merges.txt", &merges_txt}, {"vocab.txt", &vocab_txt}};
    const Family& family = *family_of(config);  // (read_hub_config has found it)
    bool complete = false;  // one of the family's choices of files is all there
    for (const std::vector<std::string>& choice : tokenizer_file_choices(family.tokenizer))
        complete = complete || std::all_of(choice.begin(), choice.end(), [&](const std::string& f) { return !texts.at(f)->empty(); });
    if (!complete) {
        if (!required) return nullptr;
        fail("no tokenizer in \"" + dir + "\": " + family.title + " needs " + family.tokenizer_needs +
             " (give --ids to run without one)");
    }
    std::unique_ptr<PretrainedTokenizer> t =
        read_family_tokenizer(config.family, tokenizer_json, vocab_json, merges_txt, vocab_txt, optional_file(dir, "tokenizer_config.json"));
    if (t->vocab_size() > config.vocab)
        fail("the tokenizer has " + std::to_string(t->vocab_size()) + " tokens but the model's vocabulary (vocab_size) is " +
             std::to_string(config.vocab) + ": the vocabulary and model sizes disagree");
    return t;
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

/// Row `row`'s top 5 of the trace (kept by trace_model: top_k 5).
std::vector<Choice> top5(const ModelTrace& tr, Eigen::Index row) {
    std::vector<Choice> out;
    for (int j = 0; j < tr.top_k; ++j) {
        const std::size_t at = static_cast<std::size_t>(row) * static_cast<std::size_t>(tr.top_k) + static_cast<std::size_t>(j);
        out.push_back({tr.top_ids[at], tr.top_p[at]});
    }
    return out;
}

std::string choices_json(const std::vector<Choice>& choices, const PretrainedTokenizer* tokenizer) {
    std::string o = "[";
    for (std::size_t i = 0; i < choices.size(); ++i) {
        if (i) o += ',';
        o += "{\"id\":" + std::to_string(choices[i].id);
        if (tokenizer) {
            o += ",\"token\":" + json_quote(token_piece(*tokenizer, choices[i].id));
            if (is_padding_id(*tokenizer, choices[i].id)) o += ",\"padding\":true";  // a logit with no text
        }
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
    const std::string text = read_input_file("--model", dir + "/config.json", kMaxConfigBytes);
    const ModelConfig config = read_hub_config(text);
    // a model too large is refused from config.json alone (a 16-bit one counted 16-bit, as the
    // loader holds it), before the weights are opened
    const HubSizeCheck size = check_hub_size(config, declared_weight_format(text));
    if (!size.fits) throw Error(Error::Code::too_large, "config.json: " + size.refusal);
    return config;
}

std::unique_ptr<Model> load_hub_folder(const std::string& dir, const ModelConfig& config, std::size_t chunk, bool keep_16bit) {
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
    if (fseeko(file.f, 0, SEEK_END) != 0) fail("cannot read \"" + path + "\": " + std::strerror(errno));
    const off_t file_size = ftello(file.f);
    if (file_size < 0) fail("cannot read \"" + path + "\": " + std::strerror(errno));
    HubLoader loader(config, header, static_cast<std::uint64_t>(file_size), keep_16bit);
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
    std::vector<Token> tokens;  // the JSON's tokens: text, id, byte offsets ([start, end) = [0, 0) for added tokens)
    if (o.have_sentence) {
        tokenizer = read_folder_tokenizer(o.dir, header_config, true);
        for (const PretrainedToken& t : tokenizer->encode(o.sentence)) {
            ids.push_back(t.id);
            const std::size_t begin = t.begin < 0 ? 0 : static_cast<std::size_t>(t.begin);
            tokens.push_back(Token{t.display, t.id, begin, t.end < 0 ? begin : static_cast<std::size_t>(t.end)});
        }
    } else {
        tokenizer = read_folder_tokenizer(o.dir, header_config, false);
        for (std::int32_t id : ids)
            tokens.push_back(Token{tokenizer && id >= 0 ? token_piece(*tokenizer, id) : std::to_string(id), id, 0, 0});
    }
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
    // the table shows the heads and the top 5: it keeps no T×V logits and one layer's vectors (a
    // long input fits); the JSON has every layer's vectors and the logits and probabilities
    TraceKeep keep;
    keep.layer = o.layer;
    keep.top_k = 5;
    if (o.format == "table") {
        keep.vectors = std::max(o.layer, 0);
        keep.logits = false;
    }
    ModelTrace tr;
    try {
        tr = trace_model(config, model->params(), ids, -1, {}, keep);
    } catch (const Error& e) {
        if (e.code() != Error::Code::too_large || o.format == "table") throw;
        throw Error(Error::Code::too_large, std::string(e.what()) + " (--format table prints the top 5 next tokens, without the full logits)");
    }

    if (o.format == "table") {
        std::printf("model: %s, %d layer(s), %d head(s), d_model %d, mlp %d, vocabulary %d, %s\n", config.family.c_str(),
                    config.layers, config.heads, config.d_model, config.mlp, config.vocab,
                    config.causal ? "causal" : "bidirectional");
        for (std::size_t l = 0; l < tr.layers.size(); ++l)
            for (std::size_t h = 0; h < tr.layers[l].attention.heads.size(); ++h) {
                const Matrix& w = tr.layers[l].attention.heads[h].weights;
                std::printf("\nlayer %zu head %zu: weights (row = query, column = key)\n", l, h);
                for (Eigen::Index i = 0; i < w.rows(); ++i) {
                    std::printf("%s", pad_left(cut_chars(tokens[static_cast<std::size_t>(i)].text, 10), 10).c_str());
                    for (Eigen::Index j = 0; j < w.cols(); ++j) std::printf(" %7.4f", static_cast<double>(w(i, j)));
                    std::printf("\n");
                }
            }
        std::printf("\n%s:\n", family_of(config)->predictions.c_str());
        for (Eigen::Index i = 0; i < static_cast<Eigen::Index>(ids.size()); ++i) {
            std::printf("  %s ->", pad_right(tokens[static_cast<std::size_t>(i)].text, 12).c_str());
            for (const Choice& c : top5(tr, i))
                std::printf("  %s %.4f", tokenizer ? token_piece(*tokenizer, c.id).c_str() : std::to_string(c.id).c_str(),
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
    if (family_of(config)->generates) {
        json += ",\"top_next\":[";
        for (Eigen::Index i = 0; i < static_cast<Eigen::Index>(ids.size()); ++i)
            json += (i ? "," : "") + choices_json(top5(tr, i), tokenizer.get());
        json += "]";
    } else {
        const std::int32_t mask = tokenizer ? tokenizer->mask_id() : -1;
        json += ",\"top_fill\":[";
        bool first = true;
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (ids[i] != mask) continue;
            json += std::string(first ? "" : ",") + "{\"position\":" + std::to_string(i) +
                    ",\"choices\":" + choices_json(top5(tr, static_cast<Eigen::Index>(i)), tokenizer.get()) + "}";
            first = false;
        }
        json += "]";
    }
    json += "}\n";
    std::fwrite(json.data(), 1, json.size(), stdout);
    return 0;
}

int grad_hub(const HubGradOptions& o) {
    const ModelConfig header_config = read_hub_folder_config(o.dir);
    const std::unique_ptr<PretrainedTokenizer> tokenizer = read_folder_tokenizer(o.dir, header_config, true);
    std::vector<std::int32_t> ids;
    for (const PretrainedToken& t : tokenizer->encode(o.sentence)) ids.push_back(t.id);
    if (ids.empty()) throw Error(Error::Code::empty_text, "the sentence has no tokens");
    if (static_cast<int>(ids.size()) > header_config.context)
        throw Error(Error::Code::too_long_for_model, "the sentence has " + std::to_string(ids.size()) +
                                                         " tokens; this model reads at most " + std::to_string(header_config.context));
    if (o.layer >= header_config.layers)
        throw UsageError{"--layer " + std::to_string(o.layer) + " is past the model's " + std::to_string(header_config.layers) +
                         " layers (0 to " + std::to_string(header_config.layers - 1) + ")"};
    // the estimate before the weights are read (it does not depend on them; what the loader
    // finds in the file, BERT's MLM head, is counted as if present)
    const ModelConfig bound = largest_file_config(header_config);
    const std::int64_t need = learn_memory(bound, static_cast<int>(ids.size()));
    if (need > kMaxLearnBytes)
        throw Error(Error::Code::too_large, "the backward of " + std::to_string(ids.size()) + " tokens through this model needs " +
                                                format_bytes(need) + " beyond its weights; the limit is " +
                                                format_bytes(kMaxLearnBytes) + " — use a shorter sentence");
    // the target first (a bad one is refused before the weights are read)
    int pos = -1;
    std::int32_t id = -1;
    if (!o.target.empty()) {
        const std::size_t colon = o.target.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == o.target.size())
            throw UsageError{"--target expects POS:TOKEN (a token position from 0 and a token of the model), got \"" + o.target + "\""};
        const std::string at = o.target.substr(0, colon);
        if (at.size() > 9 || at.find_first_not_of("0123456789") != std::string::npos || std::stoi(at) >= static_cast<int>(ids.size()))
            throw UsageError{"--target's position must be a token position 0 to " + std::to_string(ids.size() - 1) + ", got \"" + at + "\""};
        pos = std::stoi(at);
        const std::string word = o.target.substr(colon + 1);
        for (std::int32_t k = 0; k < tokenizer->vocab_size() && id < 0; ++k)
            if (tokenizer->piece(k) == word) id = k;
        if (id < 0) {
            std::vector<PretrainedToken> one;
            try {
                one = tokenizer->encode(word);
            } catch (const Error&) {
            }
            if (one.size() == 1) id = one[0].id;
            else {  // BERT's encode adds [CLS] … [SEP]: the one piece between
                std::vector<PretrainedToken> inner;
                for (const PretrainedToken& t : one)
                    if (t.begin >= 0) inner.push_back(t);
                if (inner.size() == 1) id = inner[0].id;
            }
        }
        if (id >= 0 && tokenizer->piece(id) == "[UNK]" && word != "[UNK]") id = -1;  // BERT's unknown word is no answer
        if (id < 0)
            throw Error(Error::Code::unknown_word, "--target: \"" + word + "\" is not one token of this model (a piece such as \"" +
                                                       tokenizer->piece(ids.back()) + "\")");
    }
    const std::unique_ptr<Model> model = load_hub_folder(o.dir, header_config);
    std::vector<std::int32_t> defaults;
    try {
        defaults = pretrained_default_targets(*model, ids, tokenizer->mask_id());
    } catch (const Error& e) {
        if (pos < 0 || e.code() != Error::Code::bad_input) throw;
        defaults.assign(ids.size(), kNoTarget);  // none here: the one target given
    }
    std::vector<std::int32_t> targets = defaults;
    if (pos >= 0) targets[static_cast<std::size_t>(pos)] = id;
    const PretrainedBackward b = pretrained_backward(*model, ids, targets, o.layer, o.scale);
    std::string json = pretrained_backward_json(model->params(), b);
    while (!json.empty() && (json.back() == '\n' || json.back() == '}')) {
        const bool brace = json.back() == '}';
        json.pop_back();
        if (brace) break;
    }
    json += ",\"learn_memory_bytes\":" + std::to_string(learn_memory(model->config(), static_cast<int>(ids.size()))) + ",\"defaults\":[";
    for (std::size_t i = 0; i < defaults.size(); ++i) json += (i ? "," : "") + std::to_string(defaults[i]);
    json += "]}\n";
    std::fwrite(json.data(), 1, json.size(), stdout);
    return 0;
}

}  // namespace attn::cli
