#pragma once
// The generated Unicode tables (tables.cpp, written by gen_tables.py); read
// only through unicode.hpp.

#include <cstddef>

namespace attn::unicode::tables {

struct CodeRange {
    char32_t first, last;  ///< inclusive
};
struct CodeMap {
    char32_t from, to;
};
struct Decomposition {
    char32_t code;
    char32_t parts[4];  ///< the canonical decomposition, 0-padded
};

extern const char* const unicode_version;
extern const CodeRange letter[], number[], punctuation[], mark[], control[], space[];
extern const std::size_t letter_size, number_size, punctuation_size, mark_size, control_size, space_size;
extern const CodeMap lower[];
extern const std::size_t lower_size;
extern const Decomposition decomposition[];
extern const std::size_t decomposition_size;

}  // namespace attn::unicode::tables
