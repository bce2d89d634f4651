#pragma once
// The training tasks, one row each: the one list that the CLI (attn train
// --task), the JS API (engine.tasks(), buildInfo().taskTable), the training
// lab and the concept lab's races read. A row names the task, titles it for
// the page, says what it is and what a head that solves it does, gives its
// size range (options.length; 0 = the default), its factory and its recipe
// (default_recipe in trainer.cpp builds the TrainConfig from it).
//
// A new task: a class in its family's file (tasks_*.cpp) with its factory in
// task_base.hpp, a TaskKind, and one row here.

#include "train/tasks.hpp"

#include <memory>
#include <vector>

namespace attn {

/// What the recipe changes from the base (1 layer, C = 32, 2 heads, no MLP,
/// pre-LN, learned positions, the task's mask, AdamW lr 3e-3, clip 1, batch 64, seed 1).
struct TaskRecipe {
    int layers = 1;
    int d_model = 32;
    int heads = 2;
    int mlp = 0;
    bool layernorm = true;
    float lr = 3e-3f;
    int batch = 64;
    int steps = 300;  ///< the CLI's default step count
};

struct TaskInfo {
    TaskKind kind;
    const char* name;         ///< "previous-token": the CLI's and JS's name
    const char* title;        ///< "Previous token": the page's
    const char* description;  ///< one sentence: what the task is
    const char* pattern;      ///< one sentence: the attention a head that solves it has
    bool causal;              ///< next-token prediction: the recipe's mask is causal
    int length_default, length_lo, length_hi;  ///< the size (options.length), inclusive
    const char* length_rule;  ///< what else the size must be ("" or "even")
    std::unique_ptr<Task> (*make)(int length, const TaskOptions& options);
    TaskRecipe recipe;
};

/// Every task, in TaskKind order.
const std::vector<TaskInfo>& task_registry();
/// The row of a task.
const TaskInfo& task_info(TaskKind kind);

}  // namespace attn
