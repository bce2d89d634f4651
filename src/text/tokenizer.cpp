#include "text/tokenizer.hpp"

#include "base/utf8.hpp"

#include "base/hash.hpp"
#include "base/types.hpp"
#include "text/unicode.hpp"

#include <string>

namespace attn {
namespace {

// ---- character classes -------------------------------------------------------

bool is_space(char32_t c) {
    return c == U' ' || (c >= 0x09 && c <= 0x0D) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000 || c == 0xFEFF;
}

bool is_control(char32_t c) { return c < 0x20 || (c >= 0x7F && c <= 0x9F); }

// Code points that attach to the character before them: combining marks,
// variation selectors, emoji skin tones, tag characters, the keycap mark.
bool is_extender(char32_t c) {
    return (c >= 0x0300 && c <= 0x036F) || (c >= 0x0483 && c <= 0x0489) ||
           (c >= 0x0591 && c <= 0x05BD) || (c >= 0x0610 && c <= 0x061A) ||
           (c >= 0x064B && c <= 0x065F) || (c >= 0x1AB0 && c <= 0x1AFF) ||
           (c >= 0x1DC0 && c <= 0x1DFF) || (c >= 0x20D0 && c <= 0x20FF) ||
           (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xFE20 && c <= 0xFE2F) ||
           (c >= 0x1F3FB && c <= 0x1F3FF) || (c >= 0xE0020 && c <= 0xE007F) ||
           (c >= 0xE0100 && c <= 0xE01EF) || c == 0x200C;
}

constexpr char32_t kZeroWidthJoiner = 0x200D;

bool is_regional_indicator(char32_t c) { return c >= 0x1F1E6 && c <= 0x1F1FF; }

// Punctuation and symbols: each one is a token of its own. Everything that is
// not space, control, extender or listed here counts as a letter or digit, so
// words of any script stay whole.
bool is_punct_or_symbol(char32_t c) {
    if (c < 0x80) {
        return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
               (c >= 0x7B && c <= 0x7E);
    }
    if (c >= 0xA1 && c <= 0xBF) {
        // ª µ º are letters; ² ³ ¹ ¼ ½ ¾ are numbers.
        return !(c == 0xAA || c == 0xB5 || c == 0xBA || c == 0xB2 || c == 0xB3 || c == 0xB9 ||
                 (c >= 0xBC && c <= 0xBE));
    }
    if (c == 0xD7 || c == 0xF7) return true;                         // × ÷
    if (c == 0x037E || c == 0x0387) return true;                     // Greek ; and ·
    if (c == 0x055D || c == 0x0589) return true;                     // Armenian comma, full stop
    if (c == 0x05BE || c == 0x05C0 || c == 0x05C3 || c == 0x05C6 || c == 0x05F3 || c == 0x05F4)
        return true;                                                 // Hebrew
    if (c == 0x060C || c == 0x061B || c == 0x061F || c == 0x066A || c == 0x066B ||
        c == 0x066C || c == 0x066D || c == 0x06D4)
        return true;                                                 // Arabic
    if (c == 0x0964 || c == 0x0965 || c == 0x0E2F || c == 0x0E5A || c == 0x0E5B) return true;
    if (c >= 0x2010 && c <= 0x2027) return true;                     // dashes, quotes, bullets
    if (c >= 0x2030 && c <= 0x205E) return true;                     // per mille … 
    if (c >= 0x20A0 && c <= 0x20CF) return true;                     // currency
    if (c >= 0x2100 && c <= 0x214F) return true;                     // letterlike symbols
    if (c >= 0x2190 && c <= 0x2BFF) return true;                     // arrows … dingbats … misc
    if (c >= 0x2E00 && c <= 0x2E7F) return true;                     // supplemental punctuation
    if (c >= 0x3001 && c <= 0x3004) return true;                     // CJK 、。〃〄
    if (c >= 0x3008 && c <= 0x3020) return true;                     // CJK brackets
    if (c == 0x3030 || c == 0x303D || c == 0x30FB) return true;
    if (c >= 0xFE10 && c <= 0xFE19) return true;                     // vertical forms
    if (c >= 0xFE30 && c <= 0xFE6F) return true;                     // compatibility, small forms
    if ((c >= 0xFF01 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) ||
        (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65))
        return true;                                                 // fullwidth punctuation
    if (c >= 0x3200 && c <= 0x33FF) return true;                     // enclosed CJK, CJK compatibility
    if (c >= 0x1D000 && c <= 0x1D24F) return true;                   // musical symbols
    if (c >= 0x1F000 && c <= 0x1FAFF) return true;                   // emoji and pictographs
    return false;
}

bool is_ascii_digit(char32_t c) { return c >= U'0' && c <= U'9'; }

bool is_joiner_inside_word(char32_t c) {
    return c == U'\'' || c == 0x2019 || c == U'-' || c == 0x2010 || c == 0x2011;
}

enum class Class { space, control, punct, word };

// Word characters of the CJK scripts, which write no spaces between words.
// Following BERT's basic tokenizer, every CJK ideograph is a token of its own;
// a run of hiragana or of katakana stays one word, and a word ends where the
// script changes to or from kana ("猫はマットの上" → 猫 は マット の 上).
enum class Script { other, ideograph, hiragana, katakana };

Script script_of(char32_t c) {
    if ((c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
        (c >= 0x2A700 && c <= 0x2CEAF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F) ||
        (c >= 0x30000 && c <= 0x3134F))
        return Script::ideograph;
    if (c >= 0x3041 && c <= 0x309F) return Script::hiragana;
    if ((c >= 0x30A0 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) || (c >= 0xFF66 && c <= 0xFF9F))
        return Script::katakana;
    return Script::other;
}

// True when two adjacent word characters belong to different words.
bool script_break(Script a, Script b) {
    if (a == Script::ideograph || b == Script::ideograph) return true;
    const bool kana_a = a == Script::hiragana || a == Script::katakana;
    const bool kana_b = b == Script::hiragana || b == Script::katakana;
    return (kana_a || kana_b) && a != b;
}

Class classify(char32_t c) {
    if (is_space(c)) return Class::space;
    if (is_control(c)) return Class::control;
    if (is_punct_or_symbol(c) || is_regional_indicator(c)) return Class::punct;
    return Class::word;  // letters and digits of any script (and extenders with no base)
}

// A letter: a word character that is not an ASCII digit.
bool is_letter(char32_t c) { return classify(c) == Class::word && !is_ascii_digit(c) && !is_extender(c); }

// ---- lower-casing (the common alphabets; documented in docs/playground.md) ---------------

char32_t to_lower(char32_t c) {
    if (c >= U'A' && c <= U'Z') return c + 32;
    if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;                  // Latin-1
    if (c >= 0x100 && c <= 0x17F) {                                           // Latin Extended-A
        const bool even_upper = (c <= 0x137) || (c >= 0x14A && c <= 0x177);
        if (c == 0x130) return U'i';                                         // İ
        if (c == 0x178) return 0xFF;                                         // Ÿ
        if (even_upper) return (c % 2 == 0) ? c + 1 : c;
        if (c == 0x138 || c == 0x149 || c == 0x17F) return c;
        return (c % 2 == 1) ? c + 1 : c;                                     // odd upper
    }
    if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 32;               // Greek
    if (c >= 0x400 && c <= 0x40F) return c + 80;                              // Cyrillic Ѐ…Џ
    if (c >= 0x410 && c <= 0x42F) return c + 32;                              // Cyrillic А…Я
    return c;
}

}  // namespace

std::int32_t token_id(std::string_view text) {
    return static_cast<std::int32_t>(fnv1a32(text) % static_cast<std::uint32_t>(kVocabSize - 2)) + 2;
}

Token pad_token(std::size_t at) { return Token{kPadText, kPadId, at, at}; }

std::vector<Token> tokenize(std::string_view sentence, const TokenizeOptions& options) {
    if (sentence.size() > kMaxSentenceBytes)
        throw Error(Error::Code::too_many_tokens, "the sentence is " + std::to_string(sentence.size()) + " bytes of UTF-8, above the limit of " +
                    std::to_string(kMaxSentenceBytes) + " bytes");
    const std::vector<CodePoint> cps = decode_with_offsets(sentence);
    const std::size_t n = cps.size();

    // pass 1: group code points into clusters (a base plus what attaches to it)
    struct Cluster {
        std::size_t first, last;  // code point indices [first, last)
        Class cls;
    };
    std::vector<Cluster> clusters;
    for (std::size_t i = 0; i < n;) {
        std::size_t j = i + 1;
        const char32_t base = cps[i].value;
        if (is_regional_indicator(base) && j < n && is_regional_indicator(cps[j].value)) ++j;
        // whitespace and control characters take nothing with them, so a stray
        // joiner or combining mark after a space starts a word of its own
        const bool can_extend = !is_space(base) && !is_control(base);
        while (can_extend && j < n) {
            if (is_extender(cps[j].value)) {
                ++j;
            } else if (cps[j].value == kZeroWidthJoiner) {
                ++j;
                if (j < n && !is_space(cps[j].value) && !is_control(cps[j].value)) ++j;
            } else {
                break;
            }
        }
        Class cls = classify(base);
        if (base == kZeroWidthJoiner) cls = Class::word;
        clusters.push_back({i, j, cls});
        i = j;
    }

    // pass 2: runs of word clusters form words; an apostrophe or hyphen between
    // letters joins them; every other punctuation cluster stands alone.
    std::vector<Token> tokens;
    std::size_t count = 0;  // tokens found; only the first max_tokens are built
    const auto emit = [&](std::size_t first_cluster, std::size_t last_cluster, std::int32_t forced_id) {
        if (options.max_tokens && ++count > options.max_tokens) return;
        const std::size_t cp_first = clusters[first_cluster].first;
        const std::size_t cp_last = clusters[last_cluster - 1].last;
        Token t;
        t.start = cps[cp_first].start;
        t.end = cps[cp_last - 1].end;
        if (options.lowercase) {
            for (std::size_t k = cp_first; k < cp_last; ++k) unicode::append_utf8(t.text, to_lower(cps[k].value));
        } else {
            t.text = std::string(sentence.substr(t.start, t.end - t.start));
        }
        t.id = forced_id >= 0 ? forced_id : token_id(t.text);
        tokens.push_back(std::move(t));
    };
    const std::size_t m = clusters.size();
    for (std::size_t c = 0; c < m;) {
        const Class cls = clusters[c].cls;
        if (cls == Class::space) {
            ++c;
        } else if (cls == Class::control) {
            emit(c, c + 1, kUnknownId);
            ++c;
        } else if (cls == Class::punct) {
            emit(c, c + 1, -1);
            ++c;
        } else {
            std::size_t e = c + 1;
            while (e < m) {
                if (clusters[e].cls == Class::word) {
                    if (script_break(script_of(cps[clusters[e - 1].first].value), script_of(cps[clusters[e].first].value)))
                        break;
                    ++e;
                } else if (clusters[e].cls == Class::punct && e + 1 < m &&
                           clusters[e].last - clusters[e].first == 1 &&
                           is_joiner_inside_word(cps[clusters[e].first].value) &&
                           is_letter(cps[clusters[e - 1].first].value) &&
                           is_letter(cps[clusters[e + 1].first].value)) {
                    e += 2;
                } else {
                    break;
                }
            }
            emit(c, e, -1);
            c = e;
        }
    }
    if (options.max_tokens && count > options.max_tokens)
        throw Error(Error::Code::too_many_tokens, "the sentence has " + std::to_string(count) + " tokens, above the limit of " +
                    std::to_string(options.max_tokens));
    return tokens;
}

}  // namespace attn
