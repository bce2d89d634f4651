#include "attention/attention.hpp"

#include <cmath>

namespace attn {

void attention_scores(const Eigen::Ref<const Matrix>& q, const Eigen::Ref<const Matrix>& k,
                      Matrix& scores) {
    scores.resize(q.rows(), k.rows());        // (T, T)
    scores.noalias() = q * k.transpose();     // (T, D)·(D, T)
}

float score_scale(int d_head, bool scale) {
    return scale ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(d_head))) : 1.0f;
}

void masked_softmax(const Eigen::Ref<const Matrix>& scaled, const MaskMatrix& mask, Matrix& weights,
                    Vector* row_max, Vector* row_sum) {
    const Eigen::Index t_rows = scaled.rows(), t_cols = scaled.cols();
    weights.resize(t_rows, t_cols);
    if (row_max) row_max->resize(t_rows);
    if (row_sum) row_sum->resize(t_rows);
    for (Eigen::Index i = 0; i < t_rows; ++i) {
        // pass 1: the maximum over allowed keys (subtracting it keeps exp() <= 1)
        float max = 0.0f;
        bool any = false;
        for (Eigen::Index j = 0; j < t_cols; ++j) {
            if (!mask(i, j)) continue;
            if (!any || scaled(i, j) > max) max = scaled(i, j);
            any = true;
        }
        // pass 2: exponentials of allowed keys only; forbidden keys get an exact
        // 0 without exp(-inf), which would give denormals on some paths. The
        // denominator is summed in double: a float running sum of T terms
        // drifts by up to T·2^-24 of the total (7e-6 at T = 2048), a double one
        // by 2^-29 of that, so the normalised row sums to 1 within 2 float
        // roundings (1.2e-7) at every T.
        double sum = 0.0;
        for (Eigen::Index j = 0; j < t_cols; ++j) {
            const float e = mask(i, j) ? std::exp(scaled(i, j) - max) : 0.0f;
            weights(i, j) = e;
            sum += e;
        }
        // pass 3: normalise; a fully masked row stays all zeros, never 0/0
        if (any) {
            const float inv = static_cast<float>(1.0 / sum);  // sum >= 1: the maximum contributes exp(0)
            weights.row(i) *= inv;
        }
        if (row_max) (*row_max)(i) = max;                                       // 0 when fully masked
        if (row_sum) (*row_sum)(i) = any ? static_cast<float>(sum) : 0.0f;
    }
}

void attention_output(const Eigen::Ref<const Matrix>& weights, const Eigen::Ref<const Matrix>& v,
                      Matrix& output) {
    output.resize(weights.rows(), v.cols());  // (T, D)
    output.noalias() = weights * v;           // (T, T)·(T, D)
}

}  // namespace attn
