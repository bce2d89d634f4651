#include "attention/embedding.hpp"

#include "base/random.hpp"

namespace attn {

void embed_token(std::int32_t id, std::uint32_t seed, Eigen::Ref<Vector> out) {
    if (id == kPadId) {
        out.setZero();
        return;
    }
    counter_uniform_row(seed, Stream::embedding, static_cast<std::uint64_t>(id), kUnitVarianceLimit,
                        [&](int j, float v) { out[j] = v; }, static_cast<int>(out.size()));
}

Matrix embed_tokens(const std::vector<Token>& tokens, int d_model, std::uint32_t seed) {
    Matrix x(static_cast<Eigen::Index>(tokens.size()), d_model);  // (T, C)
    Vector row(d_model);
    for (std::size_t t = 0; t < tokens.size(); ++t) {
        embed_token(tokens[t].id, seed, row);
        x.row(static_cast<Eigen::Index>(t)) = row.transpose();
    }
    return x;
}

}  // namespace attn
