// attn_grad_dump: the gradient dump of `attn grad --format json` (model_json.hpp)
// for a model config given as JSON, so that bench/grad_check.sh can check the
// architecture options the CLI has no flags for (biases, GELU tanh, LayerNorm
// eps, post-LN, token types, the embedding LayerNorm, the MLM head, the output
// bias) against bench/torch_model.py.
//
//   attn_grad_dump CONFIG_JSON SEED BATCH LENGTH [PADDED] > dump.json
//
// The weights are init_parameters(seed) with every value then moved by a seeded
// uniform ±0.3 (so that gains are not 1 and biases not 0); the batch is random
// ids and targets (-1 for a fifth), with random real lengths when PADDED is 1.

#include "model/model.hpp"
#include "model/model_json.hpp"
#include "train/trainer.hpp"

#include <cstdio>
#include <iostream>
#include <random>
#include <string>

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: attn_grad_dump CONFIG_JSON SEED BATCH LENGTH [PADDED]\n");
        return 2;
    }
    try {
        const attn::ModelConfig config = attn::model_config_from_json(argv[1]);
        const auto seed = static_cast<std::uint32_t>(std::stoul(argv[2]));
        const int batch = std::stoi(argv[3]), length = std::stoi(argv[4]);
        const bool padded = argc > 5 && std::string(argv[5]) == "1";
        std::mt19937 rng(seed);
        attn::Model model(config);
        attn::init_parameters(config, seed, model.params());
        std::uniform_real_distribution<float> spread(-0.3f, 0.3f);
        for (float& v : model.params().flat()) v += spread(rng);
        attn::Batch b;
        b.batch = batch;
        b.length = length;
        for (int s = 0; s < batch; ++s) {
            const int len = padded ? std::uniform_int_distribution<int>(1, length)(rng) : length;
            if (padded) b.lengths.push_back(len);
            for (int t = 0; t < length; ++t) {
                b.ids.push_back(t < len ? std::uniform_int_distribution<int>(0, config.vocab - 1)(rng) : 0);
                const bool target = t < len && std::bernoulli_distribution(0.8)(rng);
                b.targets.push_back(target ? std::uniform_int_distribution<int>(0, config.vocab - 1)(rng)
                                           : attn::kNoTarget);
            }
        }
        b.targets[0] = 0;
        const attn::LossResult r = model.forward(b);
        attn::Parameters grads;
        model.backward(grads);
        std::cout << attn::gradient_dump_json(config, model.params(), b, r.loss, grads);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "attn_grad_dump: %s\n", e.what());
        return 1;
    }
}
