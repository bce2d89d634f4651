#pragma once
// Catch2 v2 helpers for attn::Error: a matcher for REQUIRE_THROWS_MATCHES (the
// message contains a substring; Catch's own Contains matches strings, not
// exceptions) and code_of / message_of, the code and message a call throws.

#include "base/types.hpp"

#include <catch2/catch.hpp>

#include <functional>
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

/// The code of the attn::Error `f` throws (a test failure when it throws none).
inline attn::Error::Code code_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const attn::Error& e) {
        return e.code();
    }
    FAIL("nothing was thrown");
    return attn::Error::Code::internal;
}

/// The message of the attn::Error `f` throws (a test failure when it throws none).
inline std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const attn::Error& e) {
        return e.what();
    }
    FAIL("nothing was thrown");
    return "";
}

}  // namespace testing
