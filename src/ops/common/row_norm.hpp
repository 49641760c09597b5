// Reference for the row-wise normalizations (layer_norm, rms_norm), a plain loop
// template on the number type T (double for quick checks, MPFR for the verdict).
//
// Formulas (shared/spec/worked-examples.md "Formulas"; Ba et al. 2016 for LayerNorm,
// Zhang & Sennrich 2019 for RMSNorm):
//   layer_norm: mu = (1/m) sum x, v = (1/m') sum (x - mu)^2, n = (x - mu) / D(v)
//   rms_norm:   v = (1/m') sum x^2,                          n = x / D(v)
//   m' = m (biased) or m - 1 (unbiased); D per eps_placement (spec/op.hpp);
//   y = n | gamma n | gamma n + beta | (1 + gamma) n  per affine.
// A group that holds a NaN or an infinity yields NaN for all of its outputs.
//
// Exactness: when T carries P >= (range of the input dtype in bits) + log2(m) + 2 bits,
// sum x and m x_i - sum x are exact, the sum of squares has relative error <= (m+1) 2^-P
// (no cancellation), and each further operation adds 2^-P: y has relative error
// <= (m + 8) 2^-P before its single final rounding (reference.hpp picks P).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "spec/op.hpp"

namespace normcheck::reference {

/// Denominator D(v) of the normalization for variance (or mean square) v >= 0.
template <class T>
T denominator(const T& v, const Convention& c) {
  using std::sqrt;
  const T eps(c.eps);
  switch (c.eps_placement) {
    case EpsPlacement::inside_sqrt: return sqrt(v + eps);
    case EpsPlacement::outside_sqrt: return sqrt(v) + eps;
    case EpsPlacement::clamp_var: return sqrt(v < eps ? eps : v);
    case EpsPlacement::clamp_norm: { T s = sqrt(v); return s < eps ? eps : s; }
  }
  return sqrt(v + eps);
}

/// Applies the affine convention to a normalized value n at column j.
template <class T>
T apply_affine(const T& n, const Convention& c, const T* gamma, const T* beta, std::int64_t j) {
  switch (c.affine) {
    case Affine::none: return n;
    case Affine::gamma: return gamma[j] * n;
    case Affine::gamma_beta: return gamma[j] * n + beta[j];
    case Affine::one_plus_w: return (T(1) + gamma[j]) * n;
  }
  return n;
}

/// Effective multiplier of the affine convention at column j (gamma, or 1 + w, or 1).
template <class T>
T affine_gain(const Convention& c, const T* gamma, std::int64_t j) {
  switch (c.affine) {
    case Affine::none: return T(1);
    case Affine::gamma: case Affine::gamma_beta: return gamma[j];
    case Affine::one_plus_w: return T(1) + gamma[j];
  }
  return T(1);
}

/// Sensitivity factor k = 2 D dD/dv of the denominator (1 for inside_sqrt, where
/// dD/dv = 1/(2D); D/sqrt(v) for outside_sqrt; 0 or 1 for the clamps).
template <class T>
T denominator_sensitivity(const T& v, const T& D, const Convention& c) {
  using std::sqrt;
  const T eps(c.eps);
  switch (c.eps_placement) {
    case EpsPlacement::inside_sqrt: return T(1);
    case EpsPlacement::outside_sqrt: return v > 0 ? T(D / sqrt(v)) : T(0);
    case EpsPlacement::clamp_var: return v < eps ? T(0) : T(1);
    case EpsPlacement::clamp_norm: return sqrt(v) < eps ? T(0) : T(1);
  }
  return T(1);
}

/// Normalizes one group of m values x[0..m) (layer_norm when `center`, else rms_norm)
/// into y[0..m) and writes the first-order condition magnitude of each output into cond:
///   c_i = |g_i|/D (|x_i| + [center] (1/m) sum_j |x_j| + k |n_i| (1/m') sum_j |n_j x_j|)
///         + |g_i n_i| + [gamma_beta] |beta_i|
/// which bounds sum_j |dy_i/dx_j x_j| by the triangle inequality (O(m) per group, see
/// DESIGN.md "The reference") plus the affine terms |dy/dg g| and |dy/dbeta beta|.
/// With g the affine gain (affine_gain), n the normalized value, D the denominator,
/// k = denominator_sensitivity. Units: the same as y (absolute).
template <class T>
void normalize_group(const T* x, std::int64_t m, bool center, const Convention& c, const T* gamma,
                     const T* beta, T* y, double* cond) {
  using std::abs; using std::isfinite;
  bool finite = true;
  for (std::int64_t j = 0; j < m; ++j) finite = finite && isfinite(x[j]);
  if (!finite) {
    for (std::int64_t j = 0; j < m; ++j) { y[j] = T(NAN); cond[j] = NAN; }
    return;
  }
  T mu(0);
  if (center) {
    for (std::int64_t j = 0; j < m; ++j) mu += x[j];
    mu /= T(m);
  }
  T ss(0), mean_abs(0);
  for (std::int64_t j = 0; j < m; ++j) {
    const T d = x[j] - mu;
    ss += d * d;
    mean_abs += abs(x[j]);
  }
  mean_abs /= T(m);
  const std::int64_t dof = c.variance == Variance::unbiased ? m - 1 : m;
  const T v = ss / T(dof);
  const T D = denominator(v, c);
  const T k = denominator_sensitivity(v, D, c);
  T mean_nx(0);  // (1/m') sum |n_j x_j|
  for (std::int64_t j = 0; j < m; ++j) mean_nx += abs((x[j] - mu) / D * x[j]);
  mean_nx /= T(dof);
  for (std::int64_t j = 0; j < m; ++j) {
    const T n = (x[j] - mu) / D;
    y[j] = apply_affine(n, c, gamma, beta, j);
    const T g = abs(affine_gain(c, gamma, j));
    T ci = g / D * (abs(x[j]) + (center ? mean_abs : T(0)) + k * abs(n) * mean_nx) + abs(g * n);
    if (c.affine == Affine::gamma_beta) ci += abs(beta[j]);
    cond[j] = static_cast<double>(ci);
  }
}

}  // namespace normcheck::reference
