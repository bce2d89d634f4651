#pragma once
// The trainer handle registry (train_bindings.cpp): module-wide state beside
// the gemm workspace. A Trainer lives in it from createTrainer / loadTrainer
// until its JS object's dispose() (or its FinalizationRegistry) frees it;
// trainers outlive the Engine that made them. engine.stats() reports it.

#include <cstddef>

namespace attn::js {

struct TrainerRegistryStats {
    std::size_t trainers = 0;         ///< live handles
    std::size_t parameter_bytes = 0;  ///< their weights (4 bytes a parameter)
};
TrainerRegistryStats trainer_registry_stats();

}  // namespace attn::js
