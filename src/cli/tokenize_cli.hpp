#pragma once
// attn tokenize: a Hugging Face tokenizer (GPT-2's BPE, BERT's WordPiece) on a text (tokenize_cli.cpp).

namespace attn::cli {

/// argv[1] is "tokenize". Returns the process exit code (2 for bad input).
int tokenize_main(int argc, char** argv);

}  // namespace attn::cli
