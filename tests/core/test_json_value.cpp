// Tests of src/base/json_value.hpp that the subword tokenizers rely on: an
// object of tens of thousands of members (a vocabulary) keeps every member in
// file order and still refuses a duplicate key wherever it is.

#include "base/json_value.hpp"
#include "base/types.hpp"
#include "matchers.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace {

std::string object_of(int members, const std::string& extra = "") {
    std::string s = "{";
    for (int i = 0; i < members; ++i) s += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": " + std::to_string(i);
    return s + extra + "}";
}

}  // namespace

TEST_CASE("json_value: a 50 000-member object keeps its members in order") {
    const attn::JsonValue v = attn::parse_json(object_of(50000));
    REQUIRE(v.object.size() == 50000);
    for (int i : {0, 15, 16, 17, 49999}) {
        CHECK(v.object[static_cast<std::size_t>(i)].first == "k" + std::to_string(i));
        CHECK(v.object[static_cast<std::size_t>(i)].second.integer == i);
    }
}

TEST_CASE("json_value: a duplicate key is refused before, at and after the members the parser scans") {
    for (int members : {1, 15, 16, 17, 1000, 50000}) {
        INFO(members);
        const std::string text = object_of(members, ", \"k0\": 1");
        CHECK(testing::code_of([&] { attn::parse_json(text); }) == attn::Error::Code::bad_input);
        CHECK_THAT(testing::message_of([&] { attn::parse_json(text); }), Catch::Matchers::Contains("duplicate key \"k0\""));
        const std::string last = object_of(members, ", \"k" + std::to_string(members - 1) + "\": 1");
        CHECK_THAT(testing::message_of([&] { attn::parse_json(last); }), Catch::Matchers::Contains("duplicate key"));
    }
}
