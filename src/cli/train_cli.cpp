// attn train | grad | run: the training engine on the command line.
//   attn train --task induction [model and optimizer flags] [--steps N] --out model.safetensors
//   attn grad  [same flags] [--steps N] --format json
//   attn grad  --model FILE (--sentence "TEXT" | --sentence-file PATH|-) [--target POS:WORD] [--[no-]scale]
//              [--pad-to T] --format json: one sentence's backward, every gradient intermediate (backward.hpp)
//   attn grad  --model DIR --sentence S [--layer K] [--target POS:TOKEN] [--[no-]scale]: a Hugging Face
//              folder's backward with layer K's parameter gradients only (hub_cli.cpp grad_hub)
//   attn run   --model FILE (--sentence "TEXT" | --sentence-file PATH|-) [--format json|table]
//   attn run   --model DIR (--sentence "TEXT" | --sentence-file PATH|- | --ids 1,2,3) [--layer K] [--format json|table]
//              DIR: a Hugging Face GPT-2 or BERT folder (hub_cli.hpp)
//   attn baseline --corpus FILE [--max-vocab N] [--length T] [--model FILE [--model-vocabulary]]   (ngram.hpp)
// Bad flags, an unknown task or a bad checkpoint: a message on stderr, exit 2.

#include "train_cli.hpp"

#include "args.hpp"
#include "hub_cli.hpp"

#include "train/backward.hpp"
#include "model/model_json.hpp"
#include "base/json_value.hpp"
#include "train/ngram.hpp"
#include "model/model_schema.hpp"
#include "train/task_registry.hpp"
#include "train/trainer.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace attn::cli {
namespace {

/// The usage text: the model's flags and the task list from their tables
/// (model_schema.hpp, the task registry).
std::string train_usage() {
    std::string model = "                 ";
    for (const ModelSetting& row : model_settings()) {
        if (!row.settable || !*row.range.flag) continue;
        std::string f = std::string(" [") + row.range.flag;
        if (row.type == SettingType::boolean && row.values.empty()) f = std::string(" [--[no-]") + (row.range.flag + 2);
        else if (!row.values.empty()) {
            f += " ";
            for (std::size_t i = 0; i < row.values.size(); ++i) f += (i ? "|" : "") + row.values[i];
        } else f += " N";
        f += "]";
        if (model.size() - model.rfind('\n') + f.size() > 100) model += "\n                 ";
        model += f;
    }
    std::string tasks;
    for (const TaskInfo& t : task_registry()) tasks += (tasks.empty() ? "" : ", ") + std::string(t.name);
    return "usage: attn train --task TASK [--length N] [--corpus FILE] [--max-vocab N]\n" + model +
           "\n                  [--batch B] [--lr LR] [--warmup N] [--clip X]\n"
           "                  [--weight-decay X] [--steps N] [--seed S] [--eval-samples N] [--eval-every N]\n"
           "                  [--out FILE]\n"
           "       attn grad  [the same flags] [--steps N] --format json\n"
           "       attn grad  --model FILE (--sentence \"TEXT\" | --sentence-file PATH|-) [--target POS:WORD]\n"
           "                  [--[no-]scale] [--pad-to T] --format json\n"
           "       attn grad  --model DIR --sentence \"TEXT\" [--layer K] [--target POS:TOKEN] [--[no-]scale] --format json\n"
           "                  DIR: a Hugging Face GPT-2 or BERT folder; layer K's gradients only\n"
           "       attn run   --model FILE (--sentence \"TEXT\" | --sentence-file PATH|-) [--format json|table]\n"
           "       attn run   --model DIR (--sentence \"TEXT\" | --sentence-file PATH|- | --ids 1,2,3) [--layer K]\n"
           "                  [--format json|table]   DIR: a Hugging Face GPT-2 or BERT folder (config.json,\n"
           "                  model.safetensors, tokenizer files)\n"
           "       attn baseline --corpus FILE [--max-vocab N] [--length T] [--model FILE [--model-vocabulary]]\n"
           "TASK: " + tasks + " (text needs --corpus).\n"
           "Defaults are the task's recipe (attn train --task T --steps 0 prints them).\n";
}

struct Usage {
    std::string message;
};

/// A whole decimal number, nothing else: no spaces, no '+', no trailing text.
long long whole(const std::string& flag, const std::string& v, long long lo, long long hi) {
    bool ok = !v.empty() && v.size() <= 12;
    for (std::size_t i = 0; ok && i < v.size(); ++i) ok = (v[i] >= '0' && v[i] <= '9') || (i == 0 && v[i] == '-' && v.size() > 1);
    const long long n = ok ? std::strtoll(v.c_str(), nullptr, 10) : 0;
    if (!ok || n < lo || n > hi)
        throw Usage{flag + " expects a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                    ", got \"" + v + "\""};
    return n;
}

/// A decimal or scientific number, nothing else, finite, in [lo, hi].
double real(const std::string& flag, const std::string& v, double lo, double hi) {
    bool ok = !v.empty() && v.size() <= 32 && (v[0] == '-' || v[0] == '.' || (v[0] >= '0' && v[0] <= '9'));
    char* end = nullptr;
    const double x = ok ? std::strtod(v.c_str(), &end) : 0.0;
    if (!ok || *end != '\0' || !std::isfinite(x) || x < lo || x > hi) {
        std::ostringstream o;
        o << flag << " expects a number from " << lo << " to " << hi << ", got \"" << v << "\"";
        throw Usage{o.str()};
    }
    return x;
}

/// The range of a setting, from the one table (trainer.hpp), as whole() and real() take it.
long long whole(const std::string& flag, const std::string& v, const SettingRange& r) {
    return whole(flag, v, static_cast<long long>(r.lo), static_cast<long long>(r.hi));
}
double real(const std::string& flag, const std::string& v, const SettingRange& r) { return real(flag, v, r.lo, r.hi); }

std::string read_corpus(const std::string& path) { return read_input_file("--corpus", path, kMaxCorpusBytes); }
std::string read_model(const std::string& path) { return read_input_file("--model", path, max_checkpoint_bytes()); }

/// The model's flag `a` (model_schema.hpp's rows): its value read by its row
/// into `m`. A boolean row's flag --X sets it, --no-X clears it; one given
/// with values (--mask none|causal) takes one of them. False when `a` is no
/// model flag.
template <typename Value>
bool model_flag(const std::string& a, const Value& value, const std::set<std::string>& seen, ModelConfig& m) {
    for (const ModelSetting& row : model_settings()) {
        if (!row.settable || !*row.range.flag) continue;
        const std::string flag = row.range.flag, no = "--no-" + flag.substr(2);
        if (row.type == SettingType::boolean && row.values.empty()) {
            if (a != flag && a != no) continue;
            if (seen.count(a == flag ? no : flag)) throw Usage{flag + " and " + no + " contradict"};
            row.set(m, a == flag ? 1 : 0);
            return true;
        }
        if (a != flag) continue;
        const std::string v = value();
        if (row.values.empty()) {
            row.set(m, row.type == SettingType::real ? real(a, v, training_range(row))
                                                     : static_cast<double>(whole(a, v, training_range(row))));
            return true;
        }
        std::string names;
        for (std::size_t i = 0; i < row.values.size(); ++i) {
            if (row.values[i] == v) {
                row.set(m, static_cast<double>(i));
                return true;
            }
            names += (i ? (i + 1 == row.values.size() ? " or " : ", ") : "") + row.values[i];
        }
        throw Usage{a + " expects " + names + ", got \"" + v + "\""};
    }
    return false;
}

struct CommandOptions {
    TrainConfig train;
    int steps = 0;
    bool steps_given = false;
    int eval_samples = 512;
    int eval_every = 0;
    std::string out;
    std::string format = "json";
    std::string model_path, sentence;
    bool have_sentence = false;
    std::vector<std::int32_t> ids;  ///< run --ids (a Hub folder)
    int layer = -1;                 ///< run --layer K
    std::string target;  ///< attn grad --model: "POS:WORD", empty = the task's default
    int scale = -1;      ///< attn grad --model: --scale 1, --no-scale 0, -1 = the model's
    int pad_to = 0;      ///< attn grad --model: [PAD] up to this length (hidden keys)
};

/// "1,2,3": token ids, each a whole number.
std::vector<std::int32_t> parse_ids(const std::string& v) {
    std::vector<std::int32_t> ids;
    std::size_t at = 0;
    while (at <= v.size()) {
        const std::size_t comma = std::min(v.find(',', at), v.size());
        ids.push_back(static_cast<std::int32_t>(whole("--ids", v.substr(at, comma - at), 0, kMaxInferenceVocab - 1)));
        if (ids.size() > static_cast<std::size_t>(kMaxInferenceContext))
            throw Usage{"--ids has more than " + std::to_string(kMaxInferenceContext) + " ids"};
        at = comma + 1;
    }
    return ids;
}

/// Parses the flags of `command`; every flag at most once.
CommandOptions parse(const std::string& command, const std::vector<std::string>& args) {
    CommandOptions o;
    std::set<std::string> seen;
    // the task comes first: its recipe gives every default
    TaskKind task = TaskKind::reverse;
    bool have_task = false;
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
        if (args[i] == "--task") {
            task = parse_task(args[i + 1]);
            have_task = true;
        }
    const Recipe recipe = default_recipe(task);
    o.train = recipe.config;
    o.steps = recipe.steps;
    // attn grad --model: one sentence through a checkpoint, the run command's flags
    const bool model_grad = command == "grad" && std::find(args.begin(), args.end(), "--model") != args.end();
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--help" || a == "-h") throw Usage{""};
        if (a.rfind("--", 0) != 0) throw Usage{"unexpected argument \"" + a + "\""};
        if (!seen.insert(a).second) throw Usage{a + " is given twice"};
        const auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) throw Usage{a + " needs a value"};
            return args[++i];
        };
        ModelConfig& m = o.train.model;
        OptimizerConfig& opt = o.train.optimizer;
        if (command == "run" || model_grad) {
            if (model_grad && a == "--target") { o.target = value(); continue; }
            if (model_grad && a == "--pad-to") { o.pad_to = static_cast<int>(whole(a, value(), 1, kMaxModelContext)); continue; }
            if (model_grad && (a == "--scale" || a == "--no-scale")) {
                if (seen.count(a == "--scale" ? "--no-scale" : "--scale")) throw Usage{"--scale and --no-scale contradict"};
                o.scale = a == "--scale";
                continue;
            }
            if (a == "--model") o.model_path = value();
            else if (a == "--sentence") { o.sentence = value(); o.have_sentence = true; }
            else if (a == "--sentence-file") { o.sentence = read_sentence_file(value()); o.have_sentence = true; }
            else if (a == "--format") o.format = value();
            else if (a == "--ids") o.ids = parse_ids(value());
            else if (a == "--layer") o.layer = static_cast<int>(whole(a, value(), 0, kMaxInferenceLayers - 1));
            else throw Usage{"unknown argument \"" + a + "\" for attn " + command + (model_grad ? " --model" : "")};
            continue;
        }
        if (a == "--task") value();
        else if (a == settings::length.flag) o.train.task_options.length = static_cast<int>(whole(a, value(), settings::length));
        else if (a == "--corpus") o.train.task_options.corpus = read_corpus(value());
        else if (a == settings::max_vocab.flag) o.train.task_options.max_vocab = static_cast<int>(whole(a, value(), settings::max_vocab));
        else if (model_flag(a, value, seen, m)) continue;
        else if (a == settings::batch.flag) o.train.batch = static_cast<int>(whole(a, value(), settings::batch));
        else if (a == settings::lr.flag) opt.lr = static_cast<float>(real(a, value(), settings::lr));
        else if (a == settings::warmup.flag) opt.warmup = static_cast<int>(whole(a, value(), settings::warmup));
        else if (a == settings::clip.flag) opt.clip = static_cast<float>(real(a, value(), settings::clip));
        else if (a == settings::weight_decay.flag) opt.weight_decay = static_cast<float>(real(a, value(), settings::weight_decay));
        else if (a == "--steps") { o.steps = static_cast<int>(whole(a, value(), 0, 10000000)); o.steps_given = true; }
        else if (a == settings::seed.flag) o.train.seed = static_cast<std::uint32_t>(whole(a, value(), settings::seed));
        else if (a == "--eval-samples") o.eval_samples = static_cast<int>(whole(a, value(), 1, 100000));
        else if (a == "--eval-every" && command == "train") o.eval_every = static_cast<int>(whole(a, value(), 0, 10000000));
        else if (a == "--out" && command == "train") o.out = value();
        else if (a == "--format" && command == "grad") o.format = value();
        else throw Usage{"unknown argument \"" + a + "\" for attn " + command};
    }
    if (command != "run" && !model_grad && !have_task) throw Usage{std::string("--task is required") + (command == "grad" ? " (or --model FILE --sentence S)" : "")};
    if (model_grad && have_task) throw Usage{"--task and --model contradict"};
    if (command == "grad" && !o.steps_given) o.steps = 0;
    if (o.format != "json" && !(command == "run" && o.format == "table"))
        throw Usage{"--format expects json" + std::string(command == "run" ? " or table" : "") + ", got \"" + o.format +
                    "\""};
    return o;
}

std::string describe(const TrainConfig& t) {
    const ModelConfig& m = t.model;
    std::ostringstream o;
    o << "task " << task_name(t.task) << ": " << m.layers << " layer(s), " << m.heads << " head(s), d_model "
      << m.d_model << ", mlp " << m.mlp << ", " << (m.layernorm ? "layernorm" : "no layernorm") << ", positional "
      << positional_name(m.positional) << ", mask " << (m.causal ? "causal" : "none") << ", scale "
      << (m.scale ? "1/sqrt(D)" : "off") << (m.tied ? ", tied" : "") << "; AdamW lr " << t.optimizer.lr << ", batch "
      << t.batch << ", seed " << t.seed;
    return o.str();
}

/// --out, opened before training: a path that cannot be written is refused
/// before the steps are spent. Opened for appending, so an existing file is
/// kept as it is until the checkpoint replaces it; a file this run created is
/// removed again when training stops with an error (a run killed by a signal
/// can leave it behind, empty: then it names the run that did not finish).
class OutputFile {
public:
    explicit OutputFile(const std::string& path) : path_(path) {
        if (path.empty()) return;
        struct stat st {};
        created_ = stat(path.c_str(), &st) != 0;
        f_ = std::fopen(path.c_str(), "ab");
        if (!f_) throw UsageError{"cannot write --out \"" + path + "\": " + std::strerror(errno)};
    }
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;
    ~OutputFile() {
        if (!f_) return;
        std::fclose(f_);
        if (created_ && !written_) std::remove(path_.c_str());
    }
    void write(const std::string& bytes) {
        if (std::fflush(f_) != 0 || ftruncate(fileno(f_), 0) != 0 ||
            std::fwrite(bytes.data(), 1, bytes.size(), f_) != bytes.size() || std::fflush(f_) != 0)
            throw UsageError{"cannot write --out \"" + path_ + "\": " + std::strerror(errno)};
        written_ = true;
    }

private:
    std::string path_;
    std::FILE* f_ = nullptr;
    bool created_ = false, written_ = false;
};

int train(const CommandOptions& o) {
    Trainer trainer(o.train);
    OutputFile out(o.out);
    const bool tty = isatty(fileno(stderr));
    std::fprintf(stderr, "%s; %zu parameters, %d steps\n", describe(trainer.config()).c_str(),
                 trainer.model().params().size(), o.steps);
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    auto last = start;
    StepResult r;
    for (int s = 0; s < o.steps; ++s) {
        r = trainer.step();
        if (o.eval_every > 0 && (s + 1) % o.eval_every == 0) {
            const EvalResult e = trainer.evaluate(256);
            std::fprintf(stderr, "%sstep %d: held-out loss %.4f, accuracy %.4f\n", tty ? "\r" : "", s + 1, e.loss,
                         e.accuracy);
        }
        const auto now = clock::now();
        const double since = std::chrono::duration<double>(now - last).count();
        if (since >= (tty ? 0.1 : 1.0) || s + 1 == o.steps) {
            last = now;
            const double elapsed = std::chrono::duration<double>(now - start).count();
            const double rate = (s + 1) / std::max(elapsed, 1e-9);
            if (tty) {
                const int width = 24, filled = static_cast<int>(width * (s + 1.0) / o.steps);
                std::fprintf(stderr, "\r[%s%s] step %d/%d  loss %.4f  acc %.3f  %.0f steps/s ",
                             std::string(static_cast<std::size_t>(filled), '#').c_str(),
                             std::string(static_cast<std::size_t>(width - filled), '.').c_str(), s + 1, o.steps,
                             r.loss, r.accuracy, rate);
            } else {
                std::fprintf(stderr, "step %d/%d  loss %.4f  acc %.3f  %.0f steps/s\n", s + 1, o.steps, r.loss,
                             r.accuracy, rate);
            }
        }
    }
    if (tty && o.steps > 0) std::fputc('\n', stderr);
    const double seconds = std::chrono::duration<double>(clock::now() - start).count();
    const EvalResult e = trainer.evaluate(o.eval_samples);
    std::printf("trained %d steps in %.2f s (%.0f steps/s)\n", o.steps, seconds, o.steps / std::max(seconds, 1e-9));
    std::printf("held-out: loss %.4f, accuracy %.4f over %d targets (%d sequences)\n", e.loss, e.accuracy, e.targets,
                o.eval_samples);
    std::printf("answer-key scores (mean weight on the key's positions, held-out):\n");
    for (const HeadScore& h : trainer.head_scores(std::min(o.eval_samples, 256))) {
        std::printf("  layer %d head %d:", h.layer, h.head);
        for (const auto& [name, score] : h.scores) std::printf("  %s %.3f", name.c_str(), score);
        std::printf("\n");
    }
    if (!o.out.empty()) {
        const std::string bytes = trainer.save();
        out.write(bytes);
        std::printf("wrote %s (%zu bytes)\n", o.out.c_str(), bytes.size());
    }
    return 0;
}

int grad(const CommandOptions& o) {
    Trainer trainer(o.train);
    for (int s = 0; s < o.steps; ++s) trainer.step();
    // one fresh batch: the next training batch
    const Batch batch = trainer.task().sample(o.train.batch, o.train.seed, static_cast<std::uint64_t>(o.steps), Split::train);
    Model& model = trainer.model();
    const LossResult r = model.forward(batch);
    Parameters grads;
    model.backward(grads);
    const std::string json = gradient_dump_json(model.config(), model.params(), batch, r.loss, grads);
    std::fwrite(json.data(), 1, json.size(), stdout);
    return 0;
}

void print_run_table(const ModelConfig& c, const std::vector<std::string>& vocab, const std::vector<Token>& tokens,
                     const ModelTrace& tr) {
    std::printf("model: %d layer(s), %d head(s), d_model %d, mlp %d, vocabulary %zu, %s\n", c.layers, c.heads,
                c.d_model, c.mlp, vocab.size(), c.causal ? "causal" : "bidirectional");
    std::printf("tokens:");
    for (const Token& t : tokens) std::printf(" %s(%d)", t.text.c_str(), t.id);
    std::printf("\n");
    for (std::size_t l = 0; l < tr.layers.size(); ++l)
        for (std::size_t h = 0; h < tr.layers[l].attention.heads.size(); ++h) {
            const Matrix& w = tr.layers[l].attention.heads[h].weights;
            std::printf("\nlayer %zu head %zu: weights (row = query, column = key)\n%10s", l, h, "");
            for (const Token& t : tokens) std::printf(" %s", pad_left(cut_chars(t.text, 7), 7).c_str());
            std::printf("\n");
            for (Eigen::Index i = 0; i < w.rows(); ++i) {
                std::printf("%s", pad_left(cut_chars(tokens[static_cast<std::size_t>(i)].text, 10), 10).c_str());
                for (Eigen::Index j = 0; j < w.cols(); ++j) std::printf(" %7.4f", static_cast<double>(w(i, j)));
                std::printf("\n");
            }
        }
    std::printf("\nmost likely token at each position:\n");
    for (Eigen::Index i = 0; i < tr.probabilities.rows(); ++i) {
        Eigen::Index best = 0;
        tr.probabilities.row(i).maxCoeff(&best);
        std::printf("  %s -> %s p = %.4f\n", pad_right(tokens[static_cast<std::size_t>(i)].text, 12).c_str(),
                    pad_right(vocab[static_cast<std::size_t>(best)], 12).c_str(), static_cast<double>(tr.probabilities(i, best)));
    }
}

/// The checkpoint and sentence of `attn run` and `attn grad --model`.
struct ModelSentence {
    Checkpoint cp;
    std::vector<Token> tokens;
    std::vector<std::int32_t> ids;
};
ModelSentence load_model_sentence(const CommandOptions& o) {
    if (o.model_path.empty()) throw Usage{"--model is required"};
    if (!o.have_sentence) throw Usage{"--sentence or --sentence-file is required"};
    ModelSentence m;
    m.cp = load_checkpoint(read_model(o.model_path));
    m.tokens = tokenize_for_model(m.cp.vocabulary, o.sentence);
    if (m.tokens.empty()) throw Error("the sentence has no tokens");
    if (static_cast<int>(m.tokens.size()) > m.cp.config.context)
        throw Error(Error::Code::too_long_for_model, "the sentence has " + std::to_string(m.tokens.size()) + " tokens; this model reads at most " +
                    std::to_string(m.cp.config.context));
    for (const Token& t : m.tokens) m.ids.push_back(t.id);
    return m;
}

/// attn grad --model: the task's targets (or none), then --target POS:WORD.
std::vector<std::int32_t> sentence_targets(const CommandOptions& o, const ModelSentence& m) {
    if (o.target.empty()) return default_targets(m.cp.metadata, m.ids);
    const std::size_t colon = o.target.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == o.target.size())
        throw Usage{"--target expects POS:WORD (a token position from 0 and a word of the model), got \"" + o.target + "\""};
    const int T = static_cast<int>(m.ids.size());
    const int pos = static_cast<int>(whole("--target's position", o.target.substr(0, colon), 0, T - 1));
    const std::string word = o.target.substr(colon + 1);
    const auto at = std::find(m.cp.vocabulary.begin(), m.cp.vocabulary.end(), word);
    if (at == m.cp.vocabulary.end())
        throw Error(Error::Code::unknown_word, "--target: \"" + word + "\" is not a word of this model (" +
                                                   std::to_string(m.cp.vocabulary.size()) + " words)");
    std::vector<std::int32_t> targets;
    try {
        targets = default_targets(m.cp.metadata, m.ids);
    } catch (const Error&) {  // the task sets none here: the one target given
        targets.assign(m.ids.size(), kNoTarget);
    }
    targets[static_cast<std::size_t>(pos)] = static_cast<std::int32_t>(at - m.cp.vocabulary.begin());
    return targets;
}

int model_grad(const CommandOptions& o) {
    if (is_directory(o.model_path)) {
        if (!o.have_sentence) throw Usage{"--sentence or --sentence-file is required"};
        if (o.pad_to > 0) throw Usage{"--pad-to is for our own checkpoints, not a Hugging Face folder"};
        HubGradOptions h;
        h.dir = o.model_path;
        h.sentence = o.sentence;
        h.target = o.target;
        h.scale = o.scale;
        h.layer = std::max(o.layer, 0);
        return grad_hub(h);
    }
    if (o.layer >= 0) throw Usage{"--layer is for a Hugging Face model folder; our checkpoints' backward has every layer"};
    const ModelSentence m = load_model_sentence(o);
    if (o.pad_to > m.cp.config.context)
        throw Error(Error::Code::too_long_for_model, "--pad-to " + std::to_string(o.pad_to) + ": this model reads at most " +
                                                         std::to_string(m.cp.config.context) + " tokens");
    const BackwardTrace b = backward_trace(m.cp.config, m.cp.params, m.ids, sentence_targets(o, m), o.scale, o.pad_to);
    const std::string json = backward_trace_json(m.cp.params, b);
    std::fwrite(json.data(), 1, json.size(), stdout);
    return 0;
}

int run(const CommandOptions& o) {
    if (o.model_path.empty()) throw Usage{"--model is required"};
    if (o.have_sentence && !o.ids.empty()) throw Usage{"--ids and --sentence contradict: give one"};
    if (is_directory(o.model_path)) {
        if (!o.have_sentence && o.ids.empty()) throw Usage{"--sentence, --sentence-file or --ids is required"};
        HubRunOptions h;
        h.dir = o.model_path;
        h.sentence = o.sentence;
        h.have_sentence = o.have_sentence;
        h.ids = o.ids;
        h.format = o.format;
        h.layer = o.layer;
        return run_hub(h);
    }
    if (!o.ids.empty()) throw Usage{"--ids needs a Hugging Face model folder as --model"};
    const ModelSentence m = load_model_sentence(o);
    const Checkpoint& cp = m.cp;
    const std::vector<Token>& tokens = m.tokens;
    if (o.layer >= cp.config.layers)
        throw Usage{"--layer " + std::to_string(o.layer) + " is past the model's " + std::to_string(cp.config.layers) + " layers"};
    const ModelTrace tr = trace_model(cp.config, cp.params, m.ids, -1, {}, o.layer);
    if (o.format == "table") {
        print_run_table(cp.config, cp.vocabulary, tokens, tr);
    } else {
        const std::string json = model_trace_json(cp.config, tokens, tr);
        std::fwrite(json.data(), 1, json.size(), stdout);
    }
    return 0;
}

/// attn baseline: held-out perplexity of the unigram and bigram baselines of
/// the text task's split (and of a model, with --model), on the same targets.
int baseline(const std::vector<std::string>& args) {
    std::string corpus, model_path;
    bool have_corpus = false, model_vocabulary = false;
    int max_vocab = 2000, length = 0;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--help" || a == "-h") throw Usage{""};
        if (!seen.insert(a).second) throw Usage{a + " is given twice"};
        if (a == "--model-vocabulary") {
            model_vocabulary = true;
            continue;
        }
        if (i + 1 >= args.size()) throw Usage{a.rfind("--", 0) == 0 ? a + " needs a value" : "unexpected argument \"" + a + "\""};
        const std::string v = args[++i];
        if (a == "--corpus") { corpus = read_corpus(v); have_corpus = true; }
        else if (a == settings::max_vocab.flag) max_vocab = static_cast<int>(whole(a, v, settings::max_vocab));
        else if (a == settings::length.flag) length = static_cast<int>(whole(a, v, settings::length));
        else if (a == "--model") model_path = v;
        else throw Usage{"unknown argument \"" + a + "\" for attn baseline"};
    }
    if (!have_corpus) throw Usage{"--corpus is required"};
    if (model_vocabulary && model_path.empty()) throw Usage{"--model-vocabulary needs --model"};
    Checkpoint cp;
    if (!model_path.empty()) {
        cp = load_checkpoint(read_model(model_path));
        const auto task = cp.metadata.find("task");
        // the model's own max_vocab unless given
        if (task != cp.metadata.end() && !seen.count("--max-vocab")) {
            const JsonValue t = parse_json(task->second);
            const JsonValue* mv = t.get("max_vocab");
            if (mv && mv->is(JsonValue::Type::number)) max_vocab = static_cast<int>(mv->number);
        }
    }
    // --model-vocabulary: read this text with the model's words (the model may come from another text)
    const TextSplit split = model_vocabulary ? split_text_with_vocabulary(corpus, cp.vocabulary) : split_text(corpus, max_vocab, length);
    if (!model_path.empty() && !cp.vocabulary.empty() && cp.vocabulary != split.vocabulary)
        throw Error("the model's vocabulary differs from this corpus's (max-vocab " + std::to_string(max_vocab) +
                    "): it was trained on another text");
    const BaselineResult b = ngram_baselines(split);
    std::printf("text: %zu words, vocabulary %d + [PAD] (%s), training split %lld words, held-out targets %lld "
                "([UNK] %.1f%%)\n",
                split.words.size(), b.vocabulary,
                model_vocabulary ? "the model's" : ("max-vocab " + std::to_string(max_vocab)).c_str(),
                static_cast<long long>(b.train_words),
                static_cast<long long>(b.targets), 100.0 * b.unknown_share);
    std::printf("held-out perplexity:\n");
    std::printf("  unigram (add-one)              %10.2f\n", b.unigram);
    std::printf("  bigram (add-one)               %10.2f\n", b.bigram);
    std::printf("  bigram (Kneser-Ney, d = 0.75)  %10.2f\n", b.bigram_kn);
    if (!model_path.empty()) {
        const ModelPerplexity m = model_perplexity(cp.config, cp.params, split, length);
        std::printf("  model %-24s %10.2f  (loss %.4f nats, next-word accuracy %.4f, windows of %d)\n",
                    model_path.substr(model_path.find_last_of('/') + 1).c_str(), m.perplexity, m.loss, m.accuracy,
                    length > 0 ? length : cp.config.context);
    }
    return 0;
}

}  // namespace

bool is_training_command(const char* arg) {
    const std::string a = arg ? arg : "";
    return a == "train" || a == "grad" || a == "run" || a == "baseline";
}

int training_main(int argc, char** argv) {
    const std::string command = argv[1];
    try {
        if (command == "baseline") return baseline(std::vector<std::string>(argv + 2, argv + argc));
        const CommandOptions o = parse(command, std::vector<std::string>(argv + 2, argv + argc));
        if (command == "train") return train(o);
        if (command == "grad") return o.model_path.empty() ? grad(o) : model_grad(o);
        return run(o);
    } catch (const Usage& e) {
        if (e.message.empty()) {
            std::fputs(train_usage().c_str(), stdout);
            return 0;
        }
        std::fprintf(stderr, "attn %s: %s\n%s", command.c_str(), e.message.c_str(), train_usage().c_str());
        return 2;
    } catch (const UsageError& e) {  // a file the flags name (args.hpp: read_input_file)
        std::fprintf(stderr, "attn %s: %s\n", command.c_str(), e.message.c_str());
        return 2;
    } catch (const Error& e) {
        std::fprintf(stderr, "attn %s: %s\n", command.c_str(), e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "attn %s: internal error: %s\n", command.c_str(), e.what());
        return 1;
    }
}

}  // namespace attn::cli
