// Shared machinery of the CPU row kernels (layer_norm.cpp, rms_norm.cpp): element
// access for every storage dtype, lane-blocked reductions, and the scaled denominator.
//
// Accumulation order: every reduction over a row of m values runs kLanes = 8
// independent partial sums over j = 8k + l (the inner fixed-length loop vectorizes to
// two SSE or one AVX register), then adds the lanes pairwise, then the scalar tail.
// Forward error of such a sum s of m terms a_j: |s^ - s| <= gamma(m/8 + 4) sum |a_j|
// worst case (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 4.2),
// about sqrt(m/8) u sum |a_j| in practice.
//
// Range: each row is scaled by s = 2^-e, with e the exponent of max |x|, before any
// sum or square (exact: a power of two), so squares of values near 1e19..1e38 do not
// overflow f32 and squares of subnormals do not underflow; the statistics are formed
// on the scaled row and the denominator (a per-row scalar) in binary64.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/dtype.hpp"
#include "core/tensor.hpp"
#include "spec/op.hpp"
#include "spec/layout.hpp"

namespace normcheck::kernels::cpu::detail {

constexpr int kLanes = 8;

/// Reads element i of a tensor of any dtype as the accumulation type A.
template <class A>
struct Reader {
  const void* data;
  DType t;
  A operator()(std::int64_t i) const noexcept {
    switch (t) {
      case DType::f64: return static_cast<A>(static_cast<const double*>(data)[i]);
      case DType::f32: return static_cast<A>(static_cast<const float*>(data)[i]);
      case DType::f16: return static_cast<A>(normcheck::detail::half_bits_to_float(static_cast<const std::uint16_t*>(data)[i]));
      case DType::bf16: return static_cast<A>(normcheck::detail::bf16_bits_to_float(static_cast<const std::uint16_t*>(data)[i]));
      case DType::fp8_e4m3fn:
      case DType::fp8_e5m2: return static_cast<A>(normcheck::detail::fp8_bits_to_double(t, static_cast<const std::uint8_t*>(data)[i]));
      case DType::int8: return static_cast<A>(static_cast<const std::int8_t*>(data)[i]);
    }
    return A(0);
  }
};

/// Copies row [off, off+m) of x into buf as A (one conversion pass; the later passes
/// then run on a contiguous A array and vectorize).
template <class A>
void load_row(const Tensor& x, std::int64_t off, std::int64_t m, A* buf) {
  if (x.dtype() == DType::f32 && sizeof(A) == 4) {
    const float* src = x.as<float>() + off;
    for (std::int64_t j = 0; j < m; ++j) buf[j] = src[j];
    return;
  }
  const Reader<A> rd{x.data(), x.dtype()};
  for (std::int64_t j = 0; j < m; ++j) buf[j] = rd(off + j);
}

/// Stores a row of A values into y (one rounding, RNE, into the output dtype).
template <class A>
void store_row(Tensor& y, std::int64_t off, std::int64_t m, const A* buf) {
  switch (y.dtype()) {
    case DType::f64: { double* d = y.as<double>() + off; for (std::int64_t j = 0; j < m; ++j) d[j] = static_cast<double>(buf[j]); break; }
    case DType::f32: { float* d = y.as<float>() + off; for (std::int64_t j = 0; j < m; ++j) d[j] = static_cast<float>(buf[j]); break; }
    case DType::f16: { auto* d = y.as<std::uint16_t>() + off;
      for (std::int64_t j = 0; j < m; ++j) d[j] = sizeof(A) == 4 ? normcheck::detail::float_to_half_bits(static_cast<float>(buf[j])) : normcheck::detail::double_to_half_bits(static_cast<double>(buf[j]));
      break; }
    case DType::bf16: { auto* d = y.as<std::uint16_t>() + off;
      for (std::int64_t j = 0; j < m; ++j) d[j] = sizeof(A) == 4 ? normcheck::detail::float_to_bf16_bits(static_cast<float>(buf[j])) : normcheck::detail::double_to_bf16_bits(static_cast<double>(buf[j]));
      break; }
    case DType::fp8_e4m3fn:
    case DType::fp8_e5m2:
    case DType::int8:  // RNE, per the format (spec validation keeps quantized outputs to the quant ops)
      for (std::int64_t j = 0; j < m; ++j) y.set(off + j, static_cast<double>(buf[j]));
      break;
  }
}

/// Lane-blocked sum of f(a[j]) for j < m (see the accumulation order above).
template <class A, class F>
A blocked_sum(const A* a, std::int64_t m, F f) noexcept {
  A acc[kLanes] = {};
  std::int64_t j = 0;
  for (; j + kLanes <= m; j += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += f(a[j + l]);
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  A s = acc[0];
  for (; j < m; ++j) s += f(a[j]);
  return s;
}

/// Row scan: max |a_j| and whether any a_j is NaN or infinite.
template <class A>
void scan_row(const A* a, std::int64_t m, A& amax, bool& nonfinite) noexcept {
  A mx[kLanes] = {};
  int bad[kLanes] = {};
  std::int64_t j = 0;
  const A big = std::numeric_limits<A>::max();
  for (; j + kLanes <= m; j += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const A v = std::fabs(a[j + l]);
      bad[l] |= !(v <= big);
      mx[l] = v > mx[l] ? v : mx[l];
    }
  for (; j < m; ++j) {
    const A v = std::fabs(a[j]);
    bad[0] |= !(v <= big);
    mx[0] = v > mx[0] ? v : mx[0];
  }
  amax = 0;
  int b = 0;
  for (int l = 0; l < kLanes; ++l) { amax = mx[l] > amax ? mx[l] : amax; b |= bad[l]; }
  nonfinite = b != 0;
}

/// Power-of-two scale s = 2^-e with max|x| = f 2^e, f in [0.5,1); 1 for a zero row;
/// at most 2^max_up (so that s itself is finite in the accumulation type: a row of
/// subnormals then lands near 2^-22 instead of 0.5, still far from underflow).
inline double row_scale(double amax, int max_up) noexcept {
  if (amax == 0) return 1.0;
  int e = 0;
  std::frexp(amax, &e);
  return std::ldexp(1.0, -e > max_up ? max_up : -e);
}

/// Reciprocal of the scaled denominator D(v) s for a row scaled by s, whose scaled
/// statistic (variance or mean square) is vs = v s^2, formed in binary64 (per row).
/// Returns 0 when the row is constant (ss == 0) and eps > 0 (then every centered value
/// is exactly 0 and the output is 0), and +inf when D = 0 (0/0: NaN outputs, as the
/// reference gives).
inline double inv_scaled_denominator(double vs, double s, bool all_zero, const Convention& c) noexcept {
  const double eps = c.eps;
  double D = 0;
  switch (c.eps_placement) {
    case EpsPlacement::inside_sqrt: D = std::sqrt(vs + eps * s * s); break;
    case EpsPlacement::outside_sqrt: D = std::sqrt(vs) + eps * s; break;
    case EpsPlacement::clamp_var: D = std::sqrt(std::fmax(vs, eps * s * s)); break;
    case EpsPlacement::clamp_norm: D = std::fmax(std::sqrt(vs), eps * s); break;
  }
  if (all_zero) return eps > 0 ? 0.0 : HUGE_VAL;
  return 1.0 / D;
}

/// D(0) for eps > 0 (a constant row): sqrt(eps), eps or sqrt(eps) per placement.
inline double inv_denominator_zero(const Convention& c) noexcept {
  return c.eps_placement == EpsPlacement::outside_sqrt || c.eps_placement == EpsPlacement::clamp_norm ? c.eps : std::sqrt(c.eps);
}

/// Affine parameters of a row kernel, converted once to A.
template <class A>
struct AffineParams {
  std::vector<A> gamma, beta;
  Affine affine = Affine::none;
  AffineParams(const Problem& p) : affine(p.conv.affine) {
    auto load = [](const Tensor* t, std::vector<A>& v) {
      if (!t) return;
      v.resize(static_cast<std::size_t>(t->size()));
      const Reader<A> rd{t->data(), t->dtype()};
      for (std::int64_t i = 0; i < t->size(); ++i) v[i] = rd(i);
    };
    load(p.input("gamma"), gamma);
    load(p.input("beta"), beta);
    if (affine == Affine::one_plus_w)
      for (auto& g : gamma) g = A(1) + g;  // (1 + w), formed once in A: one rounding
  }
  /// y_j = g_j n_j (+ beta_j), in place.
  void apply(A* n, std::int64_t m) const noexcept {
    if (affine == Affine::none) return;
    const A* g = gamma.data();
    if (affine == Affine::gamma_beta) {
      const A* b = beta.data();
      for (std::int64_t j = 0; j < m; ++j) n[j] = g[j] * n[j] + b[j];
    } else {
      for (std::int64_t j = 0; j < m; ++j) n[j] = g[j] * n[j];
    }
  }
};

/// Fills a row with quiet NaN (a group holding NaN or +-inf, as the reference defines).
template <class A>
void nan_row(A* buf, std::int64_t m) noexcept {
  for (std::int64_t j = 0; j < m; ++j) buf[j] = std::numeric_limits<A>::quiet_NaN();
}

/// The two-pass row kernel of layer_norm (center = true) and rms_norm (center = false),
/// numerics in layer_norm.cpp / rms_norm.cpp: load, scan, scale by 2^-e, [subtract the
/// blocked mean], blocked sum of squares, reciprocal denominator in binary64, affine, store.
/// x viewed as [rows, m] (row_layout); y has x's shape and p.out_dtype. mean and rstd, when
/// given ([rows] each), receive the saved statistics mu = mu_s / s and 1/D = r s (exact
/// rescalings of the scaled row's statistics, rounded once to their dtype).
template <class A>
void normalize_rows(const Problem& p, Tensor& y, bool center, Tensor* mean = nullptr, Tensor* rstd = nullptr) {
  const RowLayout l = row_layout(p);
  const Tensor& x = p.x();
  const AffineParams<A> aff(p);
  const std::int64_t dof = p.conv.variance == Variance::unbiased ? l.m - 1 : l.m;
#pragma omp parallel if (l.rows * l.m > 32768)
  {
    std::vector<A> buf(static_cast<std::size_t>(l.m));
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < l.rows; ++r) {
      A* a = buf.data();
      load_row(x, r * l.m, l.m, a);
      A amax;
      bool nonfinite;
      scan_row(a, l.m, amax, nonfinite);
      if (nonfinite) {
        nan_row(a, l.m);
        if (mean) mean->set(r, NAN);
        if (rstd) rstd->set(r, NAN);
      } else {
        const double s = row_scale(static_cast<double>(amax), sizeof(A) == 4 ? 100 : 1000);
        const A sa = static_cast<A>(s);
        for (std::int64_t j = 0; j < l.m; ++j) a[j] *= sa;  // exact
        A mu = 0;
        if (center) {
          mu = blocked_sum(a, l.m, [](A v) { return v; }) / static_cast<A>(l.m);
          for (std::int64_t j = 0; j < l.m; ++j) a[j] -= mu;
        }
        const A ss = blocked_sum(a, l.m, [](A v) { return v * v; });
        const double inv = inv_scaled_denominator(static_cast<double>(ss) / static_cast<double>(dof), s, ss == 0, p.conv);
        const A r_inv = static_cast<A>(inv);
        for (std::int64_t j = 0; j < l.m; ++j) a[j] *= r_inv;
        aff.apply(a, l.m);
        if (mean) mean->set(r, static_cast<double>(mu) / s);
        // A constant row with eps > 0 has r_inv = 0 by convention (every centered value is
        // 0); its rstd is 1/D(0) = 1/sqrt(eps) (placement-dependent), formed here.
        if (rstd) rstd->set(r, ss == 0 && p.conv.eps > 0 ? 1.0 / inv_denominator_zero(p.conv) : static_cast<double>(r_inv) * s);
      }
      store_row(y, r * l.m, l.m, a);
    }
  }
}

}  // namespace normcheck::kernels::cpu::detail
