#pragma once
// A text whose end a model wrote ("Next token"): the prompt as the tokenizer
// splits it, then the generated ids as they were chosen (tokenizing the whole
// text again could split it otherwise). The generated ids are decoded
// together: byte-level tokens may each hold part of one character (GPT-2
// writes 🐈 as three tokens), which alone decode to U+FFFD; together they are
// the character, and each of them spans it, as encode() gives a token inside a
// character the whole character.

#include "text/pretrained_tokenizer.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct Continuation {
    std::vector<PretrainedToken> tokens;  ///< the prompt's, then the generated ids' (byte offsets in the text)
    std::string prompt;                   ///< the text before decode(generated)
    int used = 0;                         ///< how many generated ids the text ends with: 0 or all of them
    /// The text without its last generated token (prompt + decode(generated[0 … used−1))): what
    /// an undo of that token leaves; the text itself when used is 0.
    std::string before_last;
};

/// The tokens of `text` whose end `generated` wrote. When the text does not end with
/// decode(generated) (it was edited), all of it is the prompt and `used` is 0. Each generated
/// token's [begin, end) covers the characters its bytes are part of in the text. Throws what
/// encode() throws for the prompt.
Continuation continue_text(const PretrainedTokenizer& tokenizer, const std::string& text,
                           const std::vector<std::int32_t>& generated);

}  // namespace attn
