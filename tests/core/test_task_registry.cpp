// The task registry (task_registry.hpp): the one list of the training tasks
// that the CLI, the JS API, the training lab and the races read. These tests
// hold each row to the task it makes: name, size range, mask, sentences and
// recipe.

#include "train/task_registry.hpp"
#include "train/trainer.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using Catch::Matchers::Contains;
using attn::TaskInfo;
using attn::TaskKind;

namespace {

attn::TaskOptions options_for(const TaskInfo& t, int length) {
    attn::TaskOptions o;
    o.length = length;
    if (t.kind == TaskKind::text) {
        for (int i = 0; i < 400; ++i) o.corpus += "the cat sat on the mat and the dog ran ";
    }
    return o;
}

}  // namespace

TEST_CASE("task registry: every TaskKind once, in enum order, with a unique name and title", "[tasks]") {
    std::set<std::string> names, titles;
    int k = 0;
    for (const TaskInfo& t : attn::task_registry()) {
        CHECK(static_cast<int>(t.kind) == k++);
        CHECK(names.insert(t.name).second);
        CHECK(titles.insert(t.title).second);
        CHECK(attn::parse_task(t.name) == t.kind);
        CHECK(std::string(attn::task_name(t.kind)) == t.name);
        CHECK(&attn::task_info(t.kind) == &t);
    }
    CHECK(attn::all_tasks().size() == attn::task_registry().size());
    CHECK(attn::task_info(TaskKind::previous_token).title == std::string("Previous token"));
}

TEST_CASE("task registry: each size range is the one make_task takes, edges included", "[tasks]") {
    for (const TaskInfo& t : attn::task_registry()) {
        INFO(t.name);
        const std::string range = std::to_string(t.length_lo) + ".." + std::to_string(t.length_hi);
        for (const int n : {t.length_lo, t.length_hi}) {
            const int even = std::string(t.length_rule) == "even" && n % 2 ? n - 1 : n;
            CHECK_NOTHROW(attn::make_task(t.kind, options_for(t, even)));
        }
        for (const int n : {t.length_lo - 1, t.length_hi + 1}) {
            if (n == 0) continue;  // 0 = the default
            CHECK_THROWS_WITH(attn::make_task(t.kind, options_for(t, n)), Contains(t.name) && Contains(range));
        }
        CHECK(t.length_lo <= t.length_default);
        CHECK(t.length_default <= t.length_hi);
    }
    CHECK_THROWS_WITH(attn::make_task(TaskKind::brackets, options_for(attn::task_info(TaskKind::brackets), 9)),
                      Contains("even"));
}

TEST_CASE("task registry: a task's sentences and mask are its row's, the text task's included", "[tasks]") {
    for (const TaskInfo& t : attn::task_registry()) {
        INFO(t.name);
        const auto task = attn::make_task(t.kind, options_for(t, 0));
        CHECK(task->kind() == t.kind);
        CHECK(task->description() == t.description);
        CHECK(task->pattern() == t.pattern);
        CHECK(task->causal() == t.causal);
    }
    // the text task needs a corpus, but its sentences do not: the registry has them
    CHECK_THAT(attn::task_info(TaskKind::text).description, Contains("next word"));
}

TEST_CASE("task registry: default_recipe is the row's recipe on the documented base", "[tasks]") {
    for (const TaskInfo& t : attn::task_registry()) {
        INFO(t.name);
        const attn::Recipe r = attn::default_recipe(t.kind);
        CHECK(r.config.task == t.kind);
        CHECK(r.config.model.layers == t.recipe.layers);
        CHECK(r.config.model.d_model == t.recipe.d_model);
        CHECK(r.config.model.heads == t.recipe.heads);
        CHECK(r.config.model.mlp == t.recipe.mlp);
        CHECK(r.config.model.layernorm == t.recipe.layernorm);
        CHECK(r.config.model.causal == t.causal);
        CHECK(r.config.model.context == 0);
        CHECK(r.config.optimizer.lr == t.recipe.lr);
        CHECK(r.config.optimizer.clip == 1.0f);
        CHECK(r.config.batch == t.recipe.batch);
        CHECK(r.config.seed == 1u);
        CHECK(r.steps == t.recipe.steps);
    }
    // docs/training.md "The shipped models": the coreference and text recipes, by hand
    const attn::Recipe coref = attn::default_recipe(TaskKind::coreference);
    CHECK(coref.config.model.layers == 2);
    CHECK(coref.config.model.d_model == 32);
    CHECK(coref.config.model.mlp == 64);
    CHECK_FALSE(coref.config.model.causal);
    CHECK(coref.config.batch == 64);
    const attn::Recipe text = attn::default_recipe(TaskKind::text);
    CHECK(text.config.model.layers == 2);
    CHECK(text.config.model.heads == 4);
    CHECK(text.config.model.d_model == 64);
    CHECK(text.config.model.mlp == 128);
    CHECK(text.config.model.causal);
    CHECK(text.config.batch == 32);
}
