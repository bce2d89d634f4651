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
struct CombiningClass {
    char32_t first, last;  ///< inclusive
    unsigned char value;   ///< the canonical combining class (never 0 in the table)
};
struct Composition {
    char32_t first, second, composed;
};

extern const char* const unicode_version;
extern const CodeRange letter[], number[], punctuation[], mark[], control[], space[];
extern const std::size_t letter_size, number_size, punctuation_size, mark_size, control_size, space_size;
extern const CodeMap lower[];
extern const std::size_t lower_size;
extern const Decomposition decomposition[];
extern const std::size_t decomposition_size;
extern const CombiningClass combining[];
extern const std::size_t combining_size;
extern const Composition composition[];
extern const std::size_t composition_size;

}  // namespace attn::unicode::tables
