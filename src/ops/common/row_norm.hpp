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
#include <type_traits>
#include <vector>

#include "core/dtype.hpp"
#include "ops/common/family_common.hpp"
#include "spec/op.hpp"

namespace normcheck::reference {

/// m values of T for one group's evaluation, each written before it is read. For a trivially
/// destructible T (DDBall, double: the certified and the quick paths) a per-thread buffer,
/// one per Slot, reused call after call (no allocation and no zero fill of m values per row:
/// ~4% of the certified path); for MPFR numbers a fresh vector. Two live Scratch objects on
/// one thread need different Slots.
template <class T, int Slot>
class Scratch {
 public:
  explicit Scratch(std::int64_t m) {
    if constexpr (std::is_trivially_destructible_v<T>) {
      thread_local std::vector<T> buf;
      buf.resize(static_cast<std::size_t>(m));
      p_ = buf.data();
    } else {
      own_.resize(static_cast<std::size_t>(m));
      p_ = own_.data();
    }
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  T* data() { return p_; }
  T& operator[](std::int64_t i) { return p_[i]; }

 private:
  std::vector<T> own_;
  T* p_ = nullptr;
};


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

/// The number type condition magnitudes are computed in for the number type T: T itself
/// (MPFR, double), or T::cond_type where T declares one (DDBall: binary64, since a
/// first-order bound needs no correct rounding; evaluated from the balls' midpoints, each
/// magnitude is then within (m + 16) 2^-53 relative of the MPFR one). cond_of(v) is v in
/// that type (an overload for such a T).
template <class T, class = void>
struct cond_type_of { using type = T; };
template <class T>
struct cond_type_of<T, std::void_t<typename T::cond_type>> { using type = typename T::cond_type; };
template <class T>
using cond_t = typename cond_type_of<T>::type;
template <class T>
const T& cond_of(const T& v) { return v; }

/// The statistics of a normalized group, as a forward pass saves them for its backward
/// (PyTorch's native_layer_norm "mean" and "rstd"): mean mu (0 without centering) and
/// rstd = 1 / D(v), with their condition magnitudes (absolute units):
///   c_mean = (1/m) sum_j a_j,   c_rstd = rstd (k (1/m') sum_j |n_j| a_j / D + 1)
/// (a_j the perturbation magnitudes below). c_rstd: drstd = -(k / (2 D^3)) dv and
/// |dv| <= (2/m') sum_j |x_j - mu| a_j u under relative perturbations u of the inputs (the
/// mean's own perturbation drops out: sum_j (x_j - mu) = 0); the "+ 1" covers relative
/// perturbations of the denominator itself (eps rounded to binary32, the sqrt and the
/// reciprocal). NaN for a group holding NaN or inf.
template <class T>
struct GroupStatistics {
  T mean, rstd;
  double c_mean = 0, c_rstd = 0;
};

/// The moments of a group for normalize_group: mu = (1/m) sum x (0 unless `center`),
/// v = (1/dof) sum (x - mu)^2 and d[j] = x_j - mu, in T. The generic version returns false,
/// and normalize_group evaluates them with its plain loops; a number type may overload it
/// with a faster evaluation of the same exact values (DDBall: ball.hpp), returning true.
template <class T>
bool row_moments(const T*, std::int64_t, bool, std::int64_t, T&, T&, T*) {
  return false;
}

/// Normalizes one group of m values x[0..m) (layer_norm when `center`, else rms_norm)
/// into y[0..m) and writes the first-order condition magnitude of each output into cond:
///   c_i = |g_i|/D (e_i + k |n_i| (1/m') sum_j |n_j| a_j) + |g_i n_i| + [gamma_beta] |beta_i|,
///   e_i = (1 - 2/m) a_i + (1/m) sum_j a_j = sum_j |delta_ij - 1/m| a_j  (center), a_i (else),
/// which bounds sum_j |dy_i/dx_j| a_j by the triangle inequality (O(m) per group, see
/// DESIGN.md "The reference") plus the affine terms |dy/dg g| and |dy/dbeta beta|.
/// a_j is the magnitude of the perturbation of x_j per unit roundoff: |x_j| (mag null: the
/// inputs' relative perturbations), or mag[j] for an x_j that is itself computed (a fused
/// residual sum x + r + b: |x| + |r| + |b|, which does not cancel as the sum may).
/// With g the affine gain (affine_gain), n the normalized value, D the denominator,
/// k = denominator_sensitivity. Units: the same as y (absolute). `stats`, when given,
/// receives the group's saved statistics (GroupStatistics).
template <class T>
void normalize_group(const T* x, std::int64_t m, bool center, const Convention& c, const T* gamma,
                     const T* beta, T* y, double* cond, const T* mag = nullptr, GroupStatistics<T>* stats = nullptr) {
  using std::abs; using std::isfinite;
  using C = cond_t<T>;  // the condition magnitudes' number type (a bound: see cond_t)
  bool finite = true;
  for (std::int64_t j = 0; j < m; ++j) finite = finite && isfinite(x[j]);
  if (!finite) {
    for (std::int64_t j = 0; j < m; ++j) { y[j] = T(NAN); cond[j] = NAN; }
    if (stats) *stats = {T(NAN), T(NAN), NAN, NAN};
    return;
  }
  const std::int64_t dof = c.variance == Variance::unbiased ? m - 1 : m;
  // mu, v and d_j = x_j - mu (kept in n, divided by D below, so it is formed once).
  T mu(0), v(0);
  Scratch<T, 0> n(m);
  if (!row_moments(x, m, center, dof, mu, v, n.data())) {
    if (center) {
      for (std::int64_t j = 0; j < m; ++j) mu += x[j];
      mu /= T(m);
    }
    T ss(0);
    for (std::int64_t j = 0; j < m; ++j) {
      n[j] = x[j] - mu;
      ss += n[j] * n[j];
    }
    v = ss / T(dof);
  }
  const auto a = [&](std::int64_t j) { return mag ? cond_of(mag[j]) : C(abs(cond_of(x[j]))); };
  C mean_abs(0);
  for (std::int64_t j = 0; j < m; ++j) mean_abs += a(j);
  mean_abs /= C(m);
  const T D = denominator(v, c);
  const C k = cond_of(denominator_sensitivity(v, D, c)), Dc = cond_of(D);
  // n_j = (x_j - mu) / D, once per element (y and the condition magnitudes both read it).
  C mean_nx(0);  // (1/m') sum |n_j| a_j
  for (std::int64_t j = 0; j < m; ++j) {
    n[j] = n[j] / D;
    mean_nx += C(abs(cond_of(n[j]))) * a(j);
  }
  mean_nx /= C(dof);
  for (std::int64_t j = 0; j < m; ++j) {
    T nj = n[j];
    if (c.normalized_dtype) {  // the framework's intermediate rounding (MPFR: tested, family_common.hpp)
      detail::test_rounding(*c.normalized_dtype, nj);
      nj = T(round_to(*c.normalized_dtype, nj));
    }
    y[j] = apply_affine(nj, c, gamma, beta, j);
    C g(1);  // |affine_gain|, in C
    switch (c.affine) {
      case Affine::none: break;
      case Affine::gamma: case Affine::gamma_beta: g = C(abs(cond_of(gamma[j]))); break;
      case Affine::one_plus_w: g = C(abs(C(1) + cond_of(gamma[j]))); break;
    }
    // The centring term sum_l |delta_jl - 1/m| a_l = (1 - 2/m) a_j + mean a, exactly (not the
    // triangle inequality's a_j + mean a, which is 2 a_j at m = 1 where x_j - mu is 0 for any
    // x: a LayerNorm of one value is beta, and a_j + mean a let y = 0 pass for beta = 0.5 at
    // |x| = 1e4; found by a false-pass hunt). It bounds |x_j - mu| too, so it still covers the
    // rounding of the kernel's x_j - mu.
    const C centred = center ? (C(1) - C(2) / C(m)) * a(j) + mean_abs : a(j);
    C ci = g / Dc * (centred + k * C(abs(cond_of(nj))) * mean_nx) + C(abs(g * cond_of(nj)));
    if (c.affine == Affine::gamma_beta) ci += C(abs(cond_of(beta[j])));
    if (c.normalized_dtype && *c.normalized_dtype != DType::f64 && isfinite(n[j])) {
      // The rounding of n to normalized_dtype is a step: where n lies within a kernel's own
      // error on n of the midpoint between its two neighbours in that dtype, a correct kernel
      // may round it to either (a fifth audit's draw of the key failed the cpu kernels 5 times
      // in the quick tier, one step of f16/bf16 n times |g| each). There the magnitude grants
      // that step, g s / u (the gate's (G - 1) u c >= g s for any G >= 2); elsewhere nothing,
      // so a kernel that skips the rounding (0.5 s off at most elements) still fails. The
      // kernel's error on n is taken as Lambda u e_n, e_n = (centred + k |n| mean_nx) / D + |n|
      // (n's own magnitude, per unit roundoff of acc_dtype), Lambda = 2 (9 + sqrt m) (twice the
      // default gate), rounded up to a power of two. The decision reads only the rounded n
      // (the same bits on both paths) and comparisons of the exact n in T, which the certified
      // path decides or leaves to MPFR (Uncertain): both paths take the same one (the
      // equivalence run at scale found a side chosen from n's binary64 value differ, seed 19).
      // (n is compared with round(n) first: an n that is exactly a value of the dtype, n = 1
      // at m = 1, is then decided without asking on which side of it n lies, which a ball
      // around it cannot tell and MPFR would have been asked for.)
      const DType nd = *c.normalized_dtype;
      const double ar = std::fabs(static_cast<double>(cond_of(nj)));  // |round(n)|, exact in binary64
      const double s_lo = ulp(nd, std::nextafter(ar, 0.0)), s_hi = ulp(nd, ar);  // the spacings below and above it
      const C en = (centred + k * C(abs(cond_of(n[j]))) * mean_nx) / Dc + C(abs(cond_of(n[j])));
      const double u = unit_roundoff(c.acc_dtype);
      const double lambda = 2 * (9 + std::sqrt(static_cast<double>(m)));
      const double w = lambda * u * static_cast<double>(en);
      if (std::isfinite(s_lo) && s_lo > 0 && w > 0 && std::isfinite(w)) {
        const double thr = std::exp2(std::ceil(std::log2(w)));
        if (thr >= std::min(s_lo, s_hi) / 2) {
          ci += g * C(std::max(s_lo, s_hi) / u);  // the kernel's own error spans half a step
        } else {
          const T dev = abs(abs(n[j]) - T(ar));
          if (!(dev <= T(std::min(s_lo, s_hi) / 2 - thr))) {  // not well inside: n's side is certain
            const double step = abs(n[j]) > T(ar) ? s_hi : s_lo;
            if (dev >= T(step / 2 - thr)) ci += g * C(step / u);
          }
        }
      }
    }
    cond[j] = static_cast<double>(ci);
  }
  if (stats) {
    const T rstd = T(1) / D;
    *stats = {mu, rstd, static_cast<double>(mean_abs), static_cast<double>(cond_of(rstd) * (k * mean_nx / Dc + C(1)))};
  }
}

}  // namespace normcheck::reference
