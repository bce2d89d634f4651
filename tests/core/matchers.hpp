#pragma once
// Catch2 v2 matcher for REQUIRE_THROWS_MATCHES on attn::Error: the message
// contains a substring (Catch's own Contains matches strings, not exceptions).

#include "core/types.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <utility>

namespace testing {

class MessageContains : public Catch::MatcherBase<attn::Error> {
public:
    explicit MessageContains(std::string needle) : needle_(std::move(needle)) {}
    bool match(const attn::Error& e) const override {
        return std::string(e.what()).find(needle_) != std::string::npos;
    }
    std::string describe() const override { return "has a message containing \"" + needle_ + "\""; }

private:
    std::string needle_;
};

}  // namespace testing
