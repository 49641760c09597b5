// Normalization of one group held in a contiguous buffer of the accumulation type A,
// shared by the family kernels (group_norm.cpp, batch_norm.cpp, l2_normalize.cpp,
// ada_norm.cpp, qk_norm.cpp). It is layer_norm.cpp's per-row algorithm, factored so that
// kernels whose groups are strided in memory gather them first:
//   0. scan max|a| and finiteness; a group holding NaN/inf becomes NaN everywhere;
//   1. scale by s = 2^-e (exact), [center] mu_s = blocked_sum(a s) / m, a s - mu_s;
//   2. ss = blocked_sum((a s - mu_s)^2)   (two-pass: no E[x^2] - E[x]^2 cancellation);
//   3. r = 1 / D_s(ss / dof) in binary64, rounded once to A; n = (a s - mu_s) r.
// dof = m (biased), m - 1 (unbiased), 1 (l2: D is a norm, v the plain sum of squares).
// Error bound as layer_norm.cpp: the mean carries <= (m/8 + 4) u (1/m) sum|x|, the sum of
// squares <= (m/8 + 6) u relative, the denominator and the product about 4u, so
// |n^ - n| <= (m/8 + 10) u c_i worst case, about sqrt(m/8) u c_i in practice (c_i of
// ops/common/row_norm.hpp), within the default gate 1 + 8 + sqrt(m) (checks/budget.cpp).
#pragma once

#include <vector>

#include "ops/common/row_kernel.hpp"

namespace normcheck::kernels::cpu::detail {

/// The scaled statistics of a normalized group: the caller recovers mu = mu_s / s and
/// sum (x - mu)^2 = ss / s^2 (batch_norm's running stats).
template <class A>
struct GroupStats {
  bool nonfinite = false;
  double s = 1;
  A mu_s = 0;
  A ss = 0;
  double r = 0;  ///< 1 / D_s, the reciprocal the centered scaled values are multiplied by (binary64)
};

/// Normalizes a[0..m) in place (steps above). The affine part is the caller's. With
/// apply = false, a is left at the centered scaled values x s - mu_s and the caller applies
/// GroupStats::r itself (the quantizing norms form y in binary64: y = (x s - mu_s) r can be
/// far below binary32's normal range while y / scale is not).
template <class A>
GroupStats<A> normalize_in_place(A* a, std::int64_t m, bool center, std::int64_t dof, const Convention& c, bool apply = true) {
  GroupStats<A> g;
  A amax;
  scan_row(a, m, amax, g.nonfinite);
  if (g.nonfinite) {
    nan_row(a, m);
    g.r = NAN;
    return g;
  }
  g.s = row_scale(static_cast<double>(amax), max_scale_up(sizeof(A) == 4 ? 100 : 1000, c.eps));
  const A sa = static_cast<A>(g.s);
  for (std::int64_t j = 0; j < m; ++j) a[j] *= sa;  // exact
  if (center) {
    g.mu_s = row_mean(a, m);
    for (std::int64_t j = 0; j < m; ++j) a[j] -= g.mu_s;
  }
  g.ss = blocked_sum(a, m, [](A v) { return v * v; });
  g.r = inv_scaled_denominator(static_cast<double>(g.ss) / static_cast<double>(dof), g.s, g.ss == 0, c);
  if (!apply) return g;
  const A r = acc_inverse<A>(g.r, g.ss == 0);
  for (std::int64_t j = 0; j < m; ++j) a[j] *= r;
  return g;
}

/// The saved statistics of a group normalize_in_place normalized: mean = mu_s / s and
/// rstd = 1 / D(v) = (the reciprocal it applied) s, both exact rescalings formed in binary64
/// (a constant row with eps > 0: 1 / D(0)); NaN for a group holding NaN or inf.
template <class A>
void saved_statistics(const GroupStats<A>& g, std::int64_t dof, const Convention& c, double& mean, double& rstd) {
  if (g.nonfinite) {
    mean = rstd = NAN;
    return;
  }
  mean = static_cast<double>(g.mu_s) / g.s;
  const A r = acc_inverse<A>(inv_scaled_denominator(static_cast<double>(g.ss) / static_cast<double>(dof), g.s, g.ss == 0, c), g.ss == 0);
  rstd = g.ss == 0 && c.eps > 0 ? 1.0 / inv_denominator_zero(c) : static_cast<double>(r) * g.s;
}

/// Dot product sum a_j b_j in blocked_sum's accumulation order (pairwise over chunks of
/// kChunk, lane-blocked within a chunk).
template <class A>
A blocked_dot(const A* a, const A* b, std::int64_t m) noexcept {
  if (m > kChunk) {
    const std::int64_t chunks = (m + kChunk - 1) / kChunk, half = (chunks + 1) / 2 * kChunk;
    return blocked_dot(a, b, half) + blocked_dot(a + half, b + half, m - half);
  }
  A acc[kLanes] = {};
  std::int64_t j = 0;
  for (; j + kLanes <= m; j += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += a[j + l] * b[j + l];
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  A s = acc[0];
  for (; j < m; ++j) s += a[j] * b[j];
  return s;
}

/// All values of a parameter tensor as A (empty if absent); with `one_plus`, 1 + w formed
/// once in A (one rounding), as AffineParams does.
template <class A>
std::vector<A> load_param(const Tensor* t, bool one_plus = false) {
  std::vector<A> v;
  if (!t) return v;
  v.resize(static_cast<std::size_t>(t->size()));
  const Reader<A> rd{t->data(), t->dtype()};
  for (std::int64_t i = 0; i < t->size(); ++i) v[i] = one_plus ? A(1) + rd(i) : rd(i);
  return v;
}

/// Variance degrees of freedom for a group of m values.
inline std::int64_t dof_of(const Convention& c, std::int64_t m) noexcept {
  return c.variance == Variance::unbiased ? m - 1 : m;
}

/// Whether a problem runs in binary64 (f64 input or f64 accumulation requested).
inline bool use_f64(const Problem& p) noexcept {
  return p.x().dtype() == DType::f64 || p.conv.acc_dtype == DType::f64;
}

}  // namespace normcheck::kernels::cpu::detail
