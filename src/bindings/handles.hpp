#pragma once
// The bindings' one handle scheme. Everything JS keeps alive in wasm memory (an
// Engine's state, a pretrained tokenizer, a Trainer, a Hub loader, a loaded
// model) lives in one table per kind, under a positive integer handle that the JS
// object holds; the JS object's dispose() frees it (a FinalizationRegistry frees
// a forgotten one). Nothing else crosses to JS but copies, so there are no
// Embind objects to delete and no pointer escapes.
//
// The tables are the module's only state beside the gemm workspace (gemm.hpp):
// engine.stats() reports their sizes (handle_counts()).

#include "base/types.hpp"

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace attn::js {

/// Live objects of one kind, by handle.
template <typename T>
class Handles {
public:
    /// `what` names the kind in the refusal of a stale handle ("this trainer has been
    /// disposed (or never existed)"), `advice` follows it (": create a new one").
    Handles(const char* what, const char* advice = "") : what_(what), advice_(advice) {}

    /// Keeps `object`; its handle (never 0, never reused while the module lives).
    int add(std::unique_ptr<T> object) {
        const int handle = next_++;
        items_.emplace(handle, std::move(object));
        return handle;
    }
    /// The object of `handle`; attn::Error (bad_state, a TypeError in JS) when it was freed or never made.
    T& at(int handle) const {
        const auto it = items_.find(handle);
        if (it == items_.end())
            throw Error(Error::Code::bad_state, std::string("this ") + what_ + " has been disposed (or never existed)" + advice_,
                        Error::Kind::type);
        return *it->second;
    }
    /// Frees `handle`'s object; false when there was none (a second dispose is harmless).
    bool erase(int handle) { return items_.erase(handle) > 0; }
    std::size_t size() const { return items_.size(); }
    /// f(const T&) for every live object, in handle order.
    template <typename F>
    void each(F f) const {
        for (const auto& entry : items_) f(*entry.second);
    }

private:
    const char* what_;
    const char* advice_;
    std::map<int, std::unique_ptr<T>> items_;
    int next_ = 1;
};

/// How many objects of each kind are live (engine.stats(): liveEngines, liveTokenizers,
/// liveTrainers, liveLoaders, liveModels), and the trainers' weights.
struct HandleCounts {
    std::size_t engines = 0, tokenizers = 0, trainers = 0, loaders = 0, models = 0;
    std::size_t trainer_parameter_bytes = 0;  ///< 4 bytes a parameter
};
/// Each kind's file fills its part (bindings.cpp, tokenizer_bindings.cpp, train_bindings.cpp,
/// pretrained_bindings.cpp).
void count_engines(HandleCounts& counts);
void count_tokenizers(HandleCounts& counts);
void count_trainers(HandleCounts& counts);
void count_pretrained(HandleCounts& counts);
inline HandleCounts handle_counts() {
    HandleCounts c;
    count_engines(c);
    count_tokenizers(c);
    count_trainers(c);
    count_pretrained(c);
    return c;
}

}  // namespace attn::js
