#include "text/pre_tokenizer.hpp"

#include "text/pretrained_tokenizer.hpp"
#include "text/unicode.hpp"

namespace attn {

namespace {

using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;

const char* const kByteLevelPattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const char* const kThreeDigitsPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kOneDigitPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kPreTokenizersRun = "it runs ByteLevel, Split with GPT-2's, Llama 3's or Qwen2's pattern, Digits, and a Sequence of them";

enum class Class { letter, number, space, other };

Class class_of(char32_t c) {
    if (unicode::is_letter(c)) return Class::letter;
    if (unicode::is_number(c)) return Class::number;
    if (unicode::is_space(c)) return Class::space;
    return Class::other;
}

std::vector<Class> classes(const std::u32string& s) {
    std::vector<Class> out(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) out[i] = class_of(s[i]);
    return out;
}

// The length of a contraction ('s 't 're 've 'm 'll 'd) at i, or 0. `fold`: also in
// upper case, as Llama 3's (?i:…) matches (Unicode case folding: ſ is an s too).
std::size_t contraction_at(const std::u32string& s, std::size_t i, bool fold) {
    if (s[i] != U'\'' || i + 1 >= s.size()) return 0;
    const auto lower = [&](char32_t c) -> char32_t {
        if (!fold) return c;
        if (c >= U'A' && c <= U'Z') return c + 32;
        return c == 0x17F ? U's' : c;
    };
    const char32_t a = lower(s[i + 1]);
    if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
    if (i + 2 >= s.size()) return 0;
    const char32_t b = lower(s[i + 2]);
    if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) return 3;
    return 0;
}

Ranges split_byte_level(const std::u32string& s) {
    const std::vector<Class> cls = classes(s);
    const std::size_t n = s.size();
    Ranges pieces;
    const auto run_end = [&](std::size_t from, Class c) {
        while (from < n && cls[from] == c) ++from;
        return from;
    };
    for (std::size_t i = 0; i < n;) {
        std::size_t end;
        if (const std::size_t k = contraction_at(s, i, false)) {
            end = i + k;  // 's|'t|'re|'ve|'m|'ll|'d
        } else if (cls[i] != Class::space) {
            end = run_end(i, cls[i]);  // \p{L}+ | \p{N}+ | [^\s\p{L}\p{N}]+
        } else if (s[i] == U' ' && i + 1 < n && cls[i + 1] != Class::space) {
            end = run_end(i + 1, cls[i + 1]);  // the same with the optional space before it
        } else {
            const std::size_t e = run_end(i, Class::space);
            // \s+(?!\S): the whole run at the end of the text, else all but its last
            // character (which goes with what follows); a lone one: \s+
            end = (e == n || e - i == 1) ? e : e - 1;
        }
        pieces.emplace_back(i, end);
        i = end;
    }
    return pieces;
}

// Llama 3's pattern (max_digits 3) and Qwen2's (max_digits 1), alternative by alternative.
Ranges split_numbers_in_runs(const std::u32string& s, std::size_t max_digits) {
    const std::vector<Class> cls = classes(s);
    const std::size_t n = s.size();
    const auto newline = [&](std::size_t i) { return s[i] == U'\r' || s[i] == U'\n'; };
    const auto run_end = [&](std::size_t from, Class c) {
        while (from < n && cls[from] == c) ++from;
        return from;
    };
    Ranges pieces;
    for (std::size_t i = 0; i < n;) {
        std::size_t end;
        if (const std::size_t k = contraction_at(s, i, true)) {
            end = i + k;  // (?i:'s|'t|'re|'ve|'m|'ll|'d)
        } else if (cls[i] == Class::letter) {
            end = run_end(i, Class::letter);  // \p{L}+
        } else if (cls[i] != Class::number && !newline(i) && i + 1 < n && cls[i + 1] == Class::letter) {
            end = run_end(i + 1, Class::letter);  // [^\r\n\p{L}\p{N}]\p{L}+
        } else if (cls[i] == Class::number) {
            end = i;  // \p{N}{1,3} (\p{N} for Qwen2)
            while (end < n && end - i < max_digits && cls[end] == Class::number) ++end;
        } else if (cls[i] == Class::other || (s[i] == U' ' && i + 1 < n && cls[i + 1] == Class::other)) {
            end = run_end(s[i] == U' ' ? i + 1 : i, Class::other);  // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
            while (end < n && newline(end)) ++end;
        } else {
            // whitespace: \s*[\r\n]+ up to the run's last newline; else \s+(?!\S): the run at
            // the end of the text, all but its last character before anything else; else \s+
            const std::size_t e = run_end(i, Class::space);
            std::size_t last_newline = e;
            for (std::size_t j = e; j-- > i;)
                if (newline(j)) {
                    last_newline = j;
                    break;
                }
            if (last_newline < e) end = last_newline + 1;
            else end = (e == n || e - i == 1) ? e : e - 1;
        }
        pieces.emplace_back(i, end);
        i = end;
    }
    return pieces;
}

// Digits: each number character a piece of its own (individual), or runs of them; the rest
// in runs between them.
Ranges split_digits(const std::u32string& s, bool individual) {
    Ranges pieces;
    for (std::size_t i = 0; i < s.size();) {
        const bool digit = unicode::is_number(s[i]);
        std::size_t end = i + 1;
        if (!digit || !individual)
            while (end < s.size() && unicode::is_number(s[end]) == digit) ++end;
        pieces.emplace_back(i, end);
        i = end;
    }
    return pieces;
}

std::vector<NormText> cut(const NormText& text, const Ranges& ranges) {
    std::vector<NormText> out;
    out.reserve(ranges.size());
    for (const auto& [b, e] : ranges)
        out.emplace_back(text.begin() + static_cast<std::ptrdiff_t>(b), text.begin() + static_cast<std::ptrdiff_t>(e));
    return out;
}

std::u32string values(const NormText& text) {
    std::u32string out(text.size(), 0);
    for (std::size_t i = 0; i < text.size(); ++i) out[i] = text[i].value;
    return out;
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> split_by_pattern(SplitPattern pattern, const std::u32string& text) {
    switch (pattern) {
        case SplitPattern::byte_level: return split_byte_level(text);
        case SplitPattern::numbers_in_threes: return split_numbers_in_runs(text, 3);
        case SplitPattern::single_numbers: return split_numbers_in_runs(text, 1);
    }
    return {};
}

std::vector<std::pair<std::size_t, std::size_t>> pre_tokenize(const std::string& text) {
    const std::vector<unicode::CodePoint> cps = unicode::code_points(text);
    std::u32string s(cps.size(), 0);
    for (std::size_t i = 0; i < cps.size(); ++i) s[i] = cps[i].value;
    Ranges pieces;
    for (const auto& [b, e] : split_byte_level(s)) pieces.emplace_back(cps[b].begin, cps[e - 1].end);
    return pieces;
}

PreTokenizer PreTokenizer::byte_level_default() {
    PreTokenizer p;
    p.steps_.push_back({Kind::byte_level});
    return p;
}

PreTokenizer PreTokenizer::read(const JsonValue* json, const std::string& file) {
    PreTokenizer p;
    if (json && !json->is(JsonValue::Type::null)) read_into(*json, file, p.steps_, 0);
    for (std::size_t i = 0; i + 1 < p.steps_.size(); ++i)
        if (p.steps_[i].kind == Kind::byte_level)
            bad_tokenizer_file(file, "the pre_tokenizer has a step after ByteLevel (this engine runs ByteLevel last)");
    return p;
}

void PreTokenizer::read_into(const JsonValue& json, const std::string& file, std::vector<Step>& steps, int depth) {
    const JsonValue* type = json.get("type");
    if (!json.is(JsonValue::Type::object) || !type || !type->is(JsonValue::Type::string))
        bad_tokenizer_file(file, "the pre_tokenizer has no \"type\"");
    const std::string& t = type->string;
    const std::string what = "the pre_tokenizer " + t;
    if (t == "Sequence") {
        const JsonValue* list = json.get("pretokenizers");
        if (!list || !list->is(JsonValue::Type::array)) bad_tokenizer_file(file, what + " has no list \"pretokenizers\"");
        if (depth >= kMaxTokenizerSequenceDepth)
            bad_tokenizer_file(file, "the pre_tokenizer nests Sequences more than " + std::to_string(kMaxTokenizerSequenceDepth) + " deep");
        for (const JsonValue& item : list->array) read_into(item, file, steps, depth + 1);
    } else if (t == "ByteLevel") {
        // trim_offsets only moves the library's offsets (ours span each token's bytes)
        Step s{Kind::byte_level};
        s.prefix_space = json_flag(json, "add_prefix_space", false, what, file);
        s.use_regex = json_flag(json, "use_regex", true, what, file);
        steps.push_back(s);
    } else if (t == "Digits") {
        Step s{Kind::digits};
        s.individual = json_flag(json, "individual_digits", false, what, file);
        steps.push_back(s);
    } else if (t == "Split") {
        const JsonValue* pattern = json.get("pattern");
        const JsonValue* regex = pattern ? pattern->get("Regex") : nullptr;
        if (!regex || !regex->is(JsonValue::Type::string))
            bad_tokenizer_file(file, what + " has no {\"Regex\": …} pattern (" + kPreTokenizersRun + ")");
        Step s{Kind::split};
        if (regex->string == kByteLevelPattern) s.pattern = SplitPattern::byte_level;
        else if (regex->string == kThreeDigitsPattern) s.pattern = SplitPattern::numbers_in_threes;
        else if (regex->string == kOneDigitPattern) s.pattern = SplitPattern::single_numbers;
        else
            bad_tokenizer_file(file, "the Split pattern \"" + regex->string +
                                         "\" is not one this engine knows: it runs GPT-2's, Llama 3's and Qwen2's");
        const JsonValue* behavior = json.get("behavior");
        if (!behavior || !behavior->is(JsonValue::Type::string) || behavior->string != "Isolated")
            bad_tokenizer_file(file, what + ": behavior " +
                                         (behavior && behavior->is(JsonValue::Type::string) ? "\"" + behavior->string + "\"" : "(none)") +
                                         " is not Isolated, the one this engine runs");
        if (json_flag(json, "invert", false, what, file)) bad_tokenizer_file(file, what + ": invert is true, which this engine does not run");
        steps.push_back(s);
    } else {
        bad_tokenizer_file(file, "the pre_tokenizer \"" + t + "\" is not one this engine runs (" + kPreTokenizersRun + ")");
    }
}

bool PreTokenizer::splits() const {
    for (const Step& s : steps_)
        if (s.kind == Kind::split) return true;
    return false;
}

std::vector<NormText> PreTokenizer::apply(NormText text) const {
    std::vector<NormText> pieces;
    pieces.push_back(std::move(text));
    for (const Step& step : steps_) {
        std::vector<NormText> next;
        for (NormText& piece : pieces) {
            if (piece.empty()) continue;
            if (step.kind == Kind::byte_level && step.prefix_space && piece.front().value != U' ')
                piece.insert(piece.begin(), NormChar{U' ', piece.front().begin, piece.front().end});
            if (step.kind == Kind::byte_level && !step.use_regex) {
                next.push_back(std::move(piece));
                continue;
            }
            const std::u32string s = values(piece);
            const Ranges ranges = step.kind == Kind::digits ? split_digits(s, step.individual)
                                                            : split_by_pattern(step.pattern, s);
            for (NormText& p : cut(piece, ranges)) next.push_back(std::move(p));
        }
        pieces.swap(next);
    }
    return pieces;
}

}  // namespace attn
