#pragma once
// The training subcommands of the attn CLI (train_cli.cpp).

namespace attn::cli {

/// True for "train", "grad", "run" and "baseline".
bool is_training_command(const char* arg);
/// argv[1] is the subcommand. Returns the process exit code (2 for bad input).
int training_main(int argc, char** argv);

}  // namespace attn::cli
