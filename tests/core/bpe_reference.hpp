#pragma once
// The BPE merge loop as a reference for the tokenizer tests (test_bpe.cpp, test_sentencepiece.cpp),
// written as openai's encoder.py does it: find the pair of lowest rank, merge every occurrence
// of it left to right, repeat (pieces as strings; slow and obvious).

#include <string>
#include <utility>
#include <vector>

namespace testing {

inline std::vector<std::string> reference_bpe(std::vector<std::string> word,
                                              const std::vector<std::pair<std::string, std::string>>& merges) {
    for (;;) {
        std::size_t best = merges.size();
        for (std::size_t i = 0; i + 1 < word.size(); ++i)
            for (std::size_t r = 0; r < best; ++r)
                if (merges[r].first == word[i] && merges[r].second == word[i + 1]) best = r;
        if (best == merges.size()) return word;
        std::vector<std::string> next;
        for (std::size_t i = 0; i < word.size(); ++i) {
            if (i + 1 < word.size() && word[i] == merges[best].first && word[i + 1] == merges[best].second) {
                next.push_back(word[i] + word[i + 1]);
                ++i;
            } else {
                next.push_back(word[i]);
            }
        }
        word = next;
    }
}

}  // namespace testing
