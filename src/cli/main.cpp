// attn: prints the whole multi-head attention trace for a sentence.
//   attn --sentence "TEXT" | --sentence-file PATH|-  [--d-model 16] [--heads 4] [--seed 42]
//        [--positional none|sinusoidal|learned] [--mask none|causal|padding|causal+padding]
//        [--pad-to N] [--no-scale] [--lowercase] [--share-heads] [--format json|table]
//   attn train | grad | run …   the training engine (train_cli.cpp)
//   attn tokenize …            a Hugging Face tokenizer (tokenize_cli.cpp)
// Bad arguments: a message on stderr and exit code 2 (the rules: cli/args.hpp).

#include "args.hpp"
#include "attention/json.hpp"
#include "attention/trace.hpp"
#include "base/heap.hpp"
#include "tokenize_cli.hpp"
#include "train_cli.hpp"

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

using attn::cli::kUsage;
using attn::cli::UsageError;

using attn::cli::pad_right;

/// The first max_chars characters, and "~" when that cut something off.
std::string shorten(const std::string& s, std::size_t max_chars) {
    const std::string cut = attn::cli::cut_chars(s, max_chars);
    return cut.size() < s.size() ? cut + "~" : cut;
}

void print_table(const attn::Trace& tr) {
    const attn::Config& c = tr.config;
    std::printf("d_model %d, heads %d, d_head %d, seed %u, positional %s, mask %s, scale %s\n\n", c.d_model,
                c.heads, tr.d_head, c.seed, attn::positional_name(c.positional), attn::mask_name(c.mask),
                c.scale ? "1/sqrt(d_head)" : "off");
    std::printf("tokens:\n");
    for (std::size_t i = 0; i < tr.tokens.size(); ++i) {
        const attn::Token& t = tr.tokens[i];
        std::printf("  %3zu  %-12s id %5d  bytes [%zu, %zu)\n", i, pad_right(t.text, 12).c_str(), t.id, t.start,
                    t.end);
    }
    const std::size_t w = 9;
    for (std::size_t h = 0; h < tr.heads.size(); ++h) {
        std::printf("\nhead %zu attention weights (row = query, column = key, each row sums to 1):\n", h);
        std::printf("%s", pad_right("", w).c_str());
        for (const attn::Token& t : tr.tokens) std::printf(" %s", pad_right(shorten(t.text, 6), 7).c_str());
        std::printf("\n");
        for (Eigen::Index i = 0; i < tr.heads[h].weights.rows(); ++i) {
            std::printf("%s", pad_right(shorten(tr.tokens[static_cast<std::size_t>(i)].text, 8), w).c_str());
            for (Eigen::Index j = 0; j < tr.heads[h].weights.cols(); ++j)
                std::printf(" %7.4f", static_cast<double>(tr.heads[h].weights(i, j)));
            std::printf("\n");
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    attn::keep_freed_heap();
    if (argc > 1 && attn::cli::is_training_command(argv[1])) return attn::cli::training_main(argc, argv);
    if (argc > 1 && std::string(argv[1]) == "tokenize") return attn::cli::tokenize_main(argc, argv);
    try {
        const attn::cli::Options options = attn::cli::parse_args(std::vector<std::string>(argv + 1, argv + argc));
        if (options.help) {
            std::fputs(kUsage, stdout);
            return 0;
        }
        const std::string sentence =
            options.sentence_file ? attn::cli::read_sentence_file(*options.sentence_file) : *options.sentence;
        const attn::Trace trace = attn::run(sentence, options.config);
        if (options.format == "json") {
            const std::string json = attn::trace_to_json(trace);
            std::fwrite(json.data(), 1, json.size(), stdout);
        } else {
            print_table(trace);
        }
        return 0;
    } catch (const UsageError& e) {
        std::fprintf(stderr, "attn: %s\n%s", e.message.c_str(), kUsage);
        return 2;
    } catch (const attn::Error& e) {
        std::fprintf(stderr, "attn: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "attn: internal error: %s\n", e.what());
        return 1;
    }
}
