// Tests of src/base/json_value.hpp that the subword tokenizers rely on: an
// object of tens of thousands of members (a vocabulary) keeps every member in
// file order and still refuses a duplicate key wherever it is; the memory a
// document takes is bounded by its size (a hostile tokenizer.json is a 64 MiB list).

#include "base/json_value.hpp"
#include "base/types.hpp"
#include "matchers.hpp"
#include "peak_memory.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
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

TEST_CASE("json_value: a UTF-8 byte order mark before the value is skipped, anywhere else it is an error") {
    const std::string bom = "\xEF\xBB\xBF";
    const attn::JsonValue v = attn::parse_json(bom + "{\"a\": 1}");
    REQUIRE(v.is(attn::JsonValue::Type::object));
    CHECK(v.get("a")->integer == 1);
    CHECK(attn::parse_json(bom + " [1, 2]").array.size() == 2);
    CHECK_THROWS_WITH(attn::parse_json(" " + bom + "{}"), Catch::Matchers::Contains("at byte 1"));
    CHECK_THROWS_WITH(attn::parse_json("{}" + bom), Catch::Matchers::Contains("unexpected text after the JSON value"));
    CHECK_THROWS_WITH(attn::parse_json(bom + bom + "{}"), Catch::Matchers::Contains("at byte 3"));
    CHECK_THROWS_WITH(attn::parse_json(bom), Catch::Matchers::Contains("found the end"));
}

namespace {

/// "[0,0,…,0]" of about `bytes` bytes, each value written in `width` bytes ("0," and spaces).
std::string list_of_zeros(std::size_t bytes, std::size_t width) {
    const std::string item = "0," + std::string(width - 2, ' ');
    std::string s = "[";
    s.reserve(bytes + width);
    while (s.size() + item.size() + 2 < bytes) s += item;
    return s + "0]";
}

}  // namespace

TEST_CASE("json_value: a 64 MiB list of zeros is refused before its values are built, in little memory") {
    // 33.5 M values of 2 bytes each: built, they took 3.7 GB natively (56 times the text) and 44 s
    const std::string text = list_of_zeros(std::size_t{64} << 20, 2);
    std::string message;
    const std::int64_t used = test_memory::peak_memory_of([&] {
        try {
            attn::parse_json(text);
        } catch (const attn::Error& e) {
            message = e.what();
            CHECK(e.code() == attn::Error::Code::bad_input);
        }
    });
    const auto zeros = std::count(text.begin(), text.end(), '0');  // the elements; the list itself is one more value
    CHECK_THAT(message, Catch::Matchers::Contains("holds " + std::to_string(zeros + 1) + " values") &&
                            Catch::Matchers::Contains("more than " + std::to_string(attn::kJsonMemoryPerByte) + " times its size"));
    CHECK(used < (std::int64_t{8} << 20));
    INFO("peak " << used << " bytes");
}

TEST_CASE("json_value: a document just under the memory limit is built within it") {
    // one value per 4 bytes: 104 bytes each natively (64 in wasm), 26 times the text
    const std::string text = list_of_zeros(std::size_t{8} << 20, 4);
    std::size_t n = 0;
    const std::int64_t used = test_memory::peak_memory_of([&] { n = attn::parse_json(text).array.size(); });
    CHECK(n == static_cast<std::size_t>(std::count(text.begin(), text.end(), '0')));
    INFO("peak " << used << " bytes for a text of " << text.size());
    CHECK(used <= static_cast<std::int64_t>(attn::kJsonMemoryPerByte * text.size()));
    // the same values one per 2 bytes: refused, whatever the code the caller gives
    attn::JsonOptions o;
    o.prefix = "tokenizer.json: ";
    o.code = attn::Error::Code::bad_checkpoint;
    try {
        attn::parse_json(list_of_zeros(std::size_t{8} << 20, 2), o);
        FAIL("a list of 2-byte values was accepted");
    } catch (const attn::Error& e) {
        CHECK(e.code() == attn::Error::Code::bad_checkpoint);
        CHECK_THAT(e.what(), Catch::Matchers::StartsWith("tokenizer.json: this JSON text of "));
    }
    // a short document is never refused, however dense (its values take less than kJsonMemoryFloor)
    const std::string short_text = list_of_zeros(std::size_t{128} << 10, 2);
    CHECK(attn::parse_json(short_text).array.size() == static_cast<std::size_t>(std::count(short_text.begin(), short_text.end(), '0')));
}
