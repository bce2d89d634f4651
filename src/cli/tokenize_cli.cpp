// attn tokenize --tokenizer DIR|FILE [--tokenizer FILE …] (--text "TEXT" | --text-file PATH|- | --texts-json PATH)
//               [--family NAME] [--format json|table]   (NAME: a family of families/, gpt2|bert)
// --texts-json: a JSON list of texts, each encoded on its own; the output is the list of their results.
// The files are known by their names: tokenizer.json, tokenizer_config.json,
// vocab.json (or encoder.json), merges.txt (or vocab.bpe), vocab.txt; a
// directory gives those of them it holds. JSON output:
//   {"family": "gpt2", "vocab_size": 50257, "mask_id": -1, "ids": [15496, 995],
//    "tokens": [{"id": 15496, "text": "Hello", "display": "Hello", "begin": 0, "end": 5}, …]}
// Bad flags, files or text: a message on stderr, exit 2.

#include "tokenize_cli.hpp"

#include "args.hpp"

#include "attention/json.hpp"
#include "base/json_value.hpp"
#include "families/family.hpp"
#include "text/pretrained_tokenizer.hpp"
#include "text/tokenizer.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attn::cli {
namespace {

/// "gpt2|bert": the registry's names, as the usage and the --family check write them.
std::string family_flag_choices() {
    std::string out;
    for (const Family* f : families()) out += (out.empty() ? "" : "|") + f->name;
    return out;
}

std::string tokenize_usage() {
    return "usage: attn tokenize --tokenizer DIR|FILE [--tokenizer FILE …]\n"
           "                     (--text \"TEXT\" | --text-file PATH|- | --texts-json PATH) [--family " +
           family_flag_choices() +
           "] [--format json|table]\n"
           "--texts-json: a JSON list of texts, each encoded on its own (JSON output: the list of results).\n"
           "Files by name: tokenizer.json, tokenizer_config.json, vocab.json (or encoder.json),\n"
           "merges.txt (or vocab.bpe), vocab.txt; a directory gives those it holds.\n";
}

// Which read_tokenizer argument a file's name stands for.
const std::map<std::string, std::string> kFileRoles = {
    {"tokenizer.json", "tokenizer.json"}, {"tokenizer_config.json", "tokenizer_config.json"},
    {"vocab.json", "vocab.json"},         {"encoder.json", "vocab.json"},
    {"merges.txt", "merges.txt"},         {"vocab.bpe", "merges.txt"},
    {"vocab.txt", "vocab.txt"},
};

std::string base_name(const std::string& path) {
    const std::size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_directory(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0;
}

struct TokenizeOptions {
    std::vector<std::string> tokenizer;
    std::optional<std::string> text, text_file, texts_json;
    std::string family, format = "json";
};

TokenizeOptions parse(int argc, char** argv) {
    TokenizeOptions o;
    std::map<std::string, int> seen;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") throw UsageError{""};
        if (a != "--tokenizer" && a != "--text" && a != "--text-file" && a != "--texts-json" && a != "--family" && a != "--format")
            throw UsageError{"unknown option " + a};
        if (a != "--tokenizer" && seen[a]++) throw UsageError{a + " given twice"};
        if (i + 1 >= argc) throw UsageError{a + " needs a value"};
        const std::string v = argv[++i];
        if (a == "--tokenizer") o.tokenizer.push_back(v);
        else if (a == "--text") o.text = v;
        else if (a == "--text-file") o.text_file = v;
        else if (a == "--texts-json") o.texts_json = v;
        else if (a == "--family") o.family = v;
        else o.format = v;
    }
    if (o.tokenizer.empty()) throw UsageError{"--tokenizer is required"};
    if (o.text.has_value() + o.text_file.has_value() + o.texts_json.has_value() != 1)
        throw UsageError{"give exactly one of --text, --text-file and --texts-json"};
    if (o.family != "" && !family_named(o.family))
        throw UsageError{"--family expects " + family_choices() + ", got \"" + o.family + "\""};
    if (o.format != "json" && o.format != "table")
        throw UsageError{"--format expects json or table, got \"" + o.format + "\""};
    return o;
}

// The texts of the tokenizer files, by role ("" = absent).
std::map<std::string, std::string> read_files(const std::vector<std::string>& paths) {
    std::map<std::string, std::string> files;
    const auto read = [&](const std::string& role, const std::string& path) {
        if (files.count(role)) throw UsageError{"--tokenizer: two files for " + role + " (" + path + ")"};
        files[role] = read_input_file("--tokenizer", path, kMaxTokenizerFileBytes);
    };
    for (const std::string& path : paths) {
        if (is_directory(path)) {
            bool any = false;
            for (const auto& [name, role] : kFileRoles)
                if (exists(path + "/" + name)) {
                    read(role, path + "/" + name);
                    any = true;
                }
            if (!any) throw UsageError{"--tokenizer \"" + path + "\": the directory holds no tokenizer file"};
            continue;
        }
        const auto role = kFileRoles.find(base_name(path));
        if (role == kFileRoles.end())
            throw UsageError{"--tokenizer \"" + path +
                             "\": not a tokenizer file name (tokenizer.json, tokenizer_config.json, vocab.json, "
                             "encoder.json, merges.txt, vocab.bpe, vocab.txt) nor a directory"};
        read(role->second, path);
    }
    return files;
}

std::string result_json(const std::string& asked, const PretrainedTokenizer& tok, const std::vector<PretrainedToken>& tokens) {
    // the family: the one asked for, else the first whose tokenizer is of this kind
    const Family* family = asked.empty() ? family_by_tokenizer(tok.kind()) : family_named(asked);
    std::string out = "{\"family\": ";
    out += json_quote(family ? family->name : "");
    out += ", \"vocab_size\": " + std::to_string(tok.vocab_size()) + ", \"mask_id\": " + std::to_string(tok.mask_id());
    out += ", \"ids\": [";
    for (std::size_t i = 0; i < tokens.size(); ++i) out += (i ? ", " : "") + std::to_string(tokens[i].id);
    out += "], \"tokens\": [";
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const PretrainedToken& t = tokens[i];
        out += i ? ",\n  " : "\n  ";
        out += "{\"id\": " + std::to_string(t.id) + ", \"text\": " + json_quote(t.text) +
               ", \"display\": " + json_quote(t.display) + ", \"begin\": " + std::to_string(t.begin) +
               ", \"end\": " + std::to_string(t.end) + "}";
    }
    out += "]}";
    return out;
}

// The texts of a --texts-json file: a JSON list of strings.
std::vector<std::string> read_texts(const std::string& path) {
    const std::string json = read_input_file("--texts-json", path, kMaxTokenizerFileBytes);
    JsonOptions options;
    options.prefix = "--texts-json \"" + path + "\": ";
    const JsonValue list = parse_json(json, options);
    if (!list.is(JsonValue::Type::array)) throw UsageError{"--texts-json \"" + path + "\" is not a JSON list of texts"};
    std::vector<std::string> texts;
    for (const JsonValue& t : list.array) {
        if (!t.is(JsonValue::Type::string)) throw UsageError{"--texts-json \"" + path + "\" holds a value that is not a text"};
        texts.push_back(t.string);
    }
    return texts;
}

void print_table(const std::vector<PretrainedToken>& tokens) {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const PretrainedToken& t = tokens[i];
        std::printf("%4zu  %6d  %-20s  [%d, %d)\n", i, t.id, t.display.c_str(), t.begin, t.end);
    }
}

}  // namespace

int tokenize_main(int argc, char** argv) {
    try {
        const TokenizeOptions o = parse(argc, argv);
        std::map<std::string, std::string> files = read_files(o.tokenizer);
        const std::unique_ptr<PretrainedTokenizer> tok =
            read_family_tokenizer(o.family, files["tokenizer.json"], files["vocab.json"], files["merges.txt"],
                           files["vocab.txt"], files["tokenizer_config.json"]);
        std::vector<std::string> texts;
        if (o.texts_json) texts = read_texts(*o.texts_json);
        else texts.push_back(o.text ? *o.text : read_input_file("--text-file", *o.text_file, kMaxSentenceBytes));
        std::string out = o.texts_json ? "[" : "";
        for (std::size_t i = 0; i < texts.size(); ++i) {
            const std::vector<PretrainedToken> tokens = tok->encode(texts[i]);
            if (o.format == "table") print_table(tokens);
            else out += (i ? ",\n" : "") + result_json(o.family, *tok, tokens);
        }
        if (o.texts_json) out += "]";
        if (o.format == "json") {
            out += "\n";
            std::fwrite(out.data(), 1, out.size(), stdout);
        }
        return 0;
    } catch (const UsageError& e) {
        if (!e.message.empty()) std::fprintf(stderr, "attn tokenize: %s\n", e.message.c_str());
        std::fputs(tokenize_usage().c_str(), e.message.empty() ? stdout : stderr);
        return e.message.empty() ? 0 : 2;
    } catch (const Error& e) {
        std::fprintf(stderr, "attn tokenize: %s (%s)\n", e.what(), error_code_name(e.code()));
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "attn tokenize: internal error: %s\n", e.what());
        return 1;
    }
}

}  // namespace attn::cli
