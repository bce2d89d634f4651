#include "text/normalizer.hpp"

#include "text/pretrained_tokenizer.hpp"
#include "text/unicode.hpp"

#include <algorithm>

namespace attn {

namespace {

const char* const kNormalizersRun = "it runs Lowercase, NFC, NFD, Strip, Prepend, Replace of a string, and a Sequence of them";

std::u32string utf32(const std::string& s) {
    std::u32string out;
    for (const unicode::CodePoint& cp : unicode::code_points(s)) out += cp.value;
    return out;
}

const JsonValue& string_field(const JsonValue& json, const char* key, const std::string& what, const std::string& file) {
    const JsonValue* v = json.get(key);
    if (!v || !v->is(JsonValue::Type::string)) bad_tokenizer_file(file, what + " has no string \"" + key + "\"");
    return *v;
}

// Σ is ς at the end of a word (the Final_Sigma rule of Unicode's lower-casing, which the
// tokenizers library's Rust to_lowercase applies): after a letter, and not before one,
// combining marks in between skipped. (Unicode says "cased" and "case-ignorable"; letters and
// non-spacing marks are the cases that occur in Greek text.)
bool final_sigma(const NormText& text, std::size_t i) {
    std::size_t b = i;
    while (b > 0 && unicode::is_mark(text[b - 1].value)) --b;
    if (b == 0 || !unicode::is_letter(text[b - 1].value)) return false;
    std::size_t a = i + 1;
    while (a < text.size() && unicode::is_mark(text[a].value)) ++a;
    return a == text.size() || !unicode::is_letter(text[a].value);
}

void lowercase(NormText& text) {
    NormText out;
    out.reserve(text.size());
    std::u32string lower;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const NormChar& c = text[i];
        if (c.value == 0x3A3 && final_sigma(text, i)) {
            out.push_back({0x3C2, c.begin, c.end});
            continue;
        }
        lower.clear();
        unicode::append_lower(lower, c.value);
        for (char32_t l : lower) out.push_back({l, c.begin, c.end});
    }
    text.swap(out);
}

// NFD: every character's full canonical decomposition, then each run of non-starters in
// the order of their combining classes (a stable sort keeps equal classes in order).
void nfd(NormText& text) {
    NormText out;
    out.reserve(text.size());
    std::u32string parts;
    for (const NormChar& c : text) {
        parts.clear();
        unicode::append_nfd(parts, c.value);
        for (char32_t p : parts) out.push_back({p, c.begin, c.end});
    }
    for (std::size_t i = 0; i < out.size();) {
        if (unicode::combining_class(out[i].value) == 0) {
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j < out.size() && unicode::combining_class(out[j].value) != 0) ++j;
        if (j - i > 1)
            std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(i), out.begin() + static_cast<std::ptrdiff_t>(j),
                             [](const NormChar& a, const NormChar& b) {
                                 return unicode::combining_class(a.value) < unicode::combining_class(b.value);
                             });
        i = j;
    }
    text.swap(out);
}

// NFC: NFD, then each character joined to the last starter before it when the pair has a
// primary composite and nothing between them blocks it (a character of class 0, or of a
// class not below its own). A composed character spans both characters' bytes.
void nfc(NormText& text) {
    nfd(text);
    NormText out;
    out.reserve(text.size());
    std::ptrdiff_t starter = -1;
    int last_class = 0;  // the class of the last character kept after the starter
    for (const NormChar& c : text) {
        const int cls = unicode::combining_class(c.value);
        if (starter >= 0) {
            const bool adjacent = static_cast<std::ptrdiff_t>(out.size()) == starter + 1;
            if (adjacent || (last_class != 0 && last_class < cls)) {
                NormChar& s = out[static_cast<std::size_t>(starter)];
                if (const char32_t composed = unicode::compose(s.value, c.value)) {
                    s.value = composed;
                    s.begin = std::min(s.begin, c.begin);
                    s.end = std::max(s.end, c.end);
                    continue;
                }
            }
        }
        if (cls == 0) {
            starter = static_cast<std::ptrdiff_t>(out.size());
            last_class = 0;
        } else {
            last_class = cls;
        }
        out.push_back(c);
    }
    text.swap(out);
}

void strip(NormText& text, bool left, bool right) {
    std::size_t b = 0, e = text.size();
    if (left)
        while (b < e && unicode::is_space(text[b].value)) ++b;
    if (right)
        while (e > b && unicode::is_space(text[e - 1].value)) --e;
    text = NormText(text.begin() + static_cast<std::ptrdiff_t>(b), text.begin() + static_cast<std::ptrdiff_t>(e));
}

// Every occurrence of `from`, left to right without overlap, becomes `to`, spanning the
// bytes of what it replaced. Knuth–Morris–Pratt: linear in the text whatever the pattern.
void replace(NormText& text, const std::u32string& from, const std::u32string& to) {
    const std::size_t m = from.size();
    std::vector<std::size_t> border(m + 1, 0);  // border[k]: the longest proper border of from[0, k)
    for (std::size_t k = 2, b = 0; k <= m; ++k) {
        while (b > 0 && from[k - 1] != from[b]) b = border[b];
        if (from[k - 1] == from[b]) ++b;
        border[k] = b;
    }
    NormText out;
    out.reserve(text.size());
    std::size_t matched = 0;  // characters of `from` matched so far, the last `matched` of text read
    std::size_t kept = 0;     // text[0, kept) is in out or replaced
    for (std::size_t i = 0; i < text.size(); ++i) {
        while (matched > 0 && text[i].value != from[matched]) matched = border[matched];
        if (text[i].value == from[matched]) ++matched;
        if (matched < m) continue;
        const std::size_t start = i + 1 - m;
        for (; kept < start; ++kept) out.push_back(text[kept]);
        std::uint32_t begin = text[start].begin, end = text[start].end;
        for (std::size_t k = start; k <= i; ++k) begin = std::min(begin, text[k].begin), end = std::max(end, text[k].end);
        for (char32_t c : to) out.push_back({c, begin, end});
        kept = i + 1;
        matched = 0;  // occurrences do not overlap
    }
    for (; kept < text.size(); ++kept) out.push_back(text[kept]);
    text.swap(out);
}

}  // namespace

NormText norm_text(const std::string& text, std::size_t begin, std::size_t end) {
    NormText out;
    const std::string_view part = std::string_view(text).substr(begin, end - begin);
    for (const unicode::CodePoint& cp : unicode::code_points(part))
        out.push_back({cp.value, static_cast<std::uint32_t>(begin + cp.begin), static_cast<std::uint32_t>(begin + cp.end)});
    return out;
}

std::string norm_utf8(const NormText& chars, std::size_t from, std::size_t to) {
    std::string out;
    for (std::size_t i = from; i < to; ++i) unicode::append_utf8(out, chars[i].value);
    return out;
}

Normalizer Normalizer::read(const JsonValue* json, const std::string& file) {
    Normalizer n;
    if (json && !json->is(JsonValue::Type::null)) read_into(*json, file, n.steps_, 0);
    return n;
}

void Normalizer::read_into(const JsonValue& json, const std::string& file, std::vector<Step>& steps, int depth) {
    const JsonValue* type = json.get("type");
    if (!json.is(JsonValue::Type::object) || !type || !type->is(JsonValue::Type::string))
        bad_tokenizer_file(file, "the normalizer has no \"type\"");
    const std::string& t = type->string;
    const std::string what = "the normalizer " + t;
    if (t == "Sequence") {
        const JsonValue* list = json.get("normalizers");
        if (!list || !list->is(JsonValue::Type::array)) bad_tokenizer_file(file, what + " has no list \"normalizers\"");
        if (depth >= kMaxTokenizerSequenceDepth)
            bad_tokenizer_file(file, "the normalizer nests Sequences more than " + std::to_string(kMaxTokenizerSequenceDepth) + " deep");
        for (const JsonValue& item : list->array) read_into(item, file, steps, depth + 1);
    } else if (t == "Lowercase") {
        steps.push_back({Kind::lowercase, {}, {}});
    } else if (t == "NFC") {
        steps.push_back({Kind::nfc, {}, {}});
    } else if (t == "NFD") {
        steps.push_back({Kind::nfd, {}, {}});
    } else if (t == "Strip") {
        Step s{Kind::strip, {}, {}};
        s.left = json_flag(json, "strip_left", true, what, file);
        s.right = json_flag(json, "strip_right", true, what, file);
        steps.push_back(s);
    } else if (t == "Prepend") {
        steps.push_back({Kind::prepend, {}, utf32(string_field(json, "prepend", what, file).string)});
    } else if (t == "Replace") {
        const JsonValue* pattern = json.get("pattern");
        const JsonValue* literal = pattern ? pattern->get("String") : nullptr;
        if (pattern && pattern->get("Regex"))
            bad_tokenizer_file(file, what + " has a Regex pattern, which this engine does not run (" + kNormalizersRun + ")");
        if (!literal || !literal->is(JsonValue::Type::string) || literal->string.empty())
            bad_tokenizer_file(file, what + " has no non-empty {\"String\": …} pattern");
        steps.push_back({Kind::replace, utf32(literal->string), utf32(string_field(json, "content", what, file).string)});
    } else {
        bad_tokenizer_file(file, "the normalizer \"" + t + "\" is not one this engine runs (" + kNormalizersRun + ")");
    }
}

void Normalizer::apply(NormText& text) const {
    for (const Step& s : steps_) {
        switch (s.kind) {
            case Kind::lowercase: lowercase(text); break;
            case Kind::nfc: nfc(text); break;
            case Kind::nfd: nfd(text); break;
            case Kind::strip: strip(text, s.left, s.right); break;
            case Kind::prepend:
                // the tokenizers library prepends to a non-empty text only, aligned with its first character
                if (!text.empty()) {
                    NormText added;
                    for (char32_t c : s.to) added.push_back({c, text.front().begin, text.front().end});
                    text.insert(text.begin(), added.begin(), added.end());
                }
                break;
            case Kind::replace: replace(text, s.from, s.to); break;
        }
    }
}

bool Normalizer::writes(const std::string& s) const {
    const std::u32string u = utf32(s);
    return std::any_of(steps_.begin(), steps_.end(), [&](const Step& step) {
        return (step.kind == Kind::prepend || step.kind == Kind::replace) && step.to.find(u) != std::u32string::npos;
    });
}

bool Normalizer::prepends(const std::string& s) const {
    return !steps_.empty() && steps_.front().kind == Kind::prepend && steps_.front().to == utf32(s);
}

}  // namespace attn
