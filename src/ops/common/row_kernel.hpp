// Shared machinery of the CPU row kernels (layer_norm.cpp, rms_norm.cpp): element
// access for every storage dtype, lane-blocked reductions, and the scaled denominator.
//
// Accumulation order: every reduction over a row of m values is cut into chunks of
// kChunk = 64 values, summed pairwise (a chunk boundary halves the range each level); a
// chunk runs kLanes = 8 independent partial sums over j = 8k + l (the inner fixed-length
// loop vectorizes to two SSE or one AVX register), adds the lanes pairwise, then the scalar
// tail. Forward error of such a sum s of m terms a_j: |s^ - s| <= gamma(8 + 3 +
// ceil(log2(m / 64))) sum |a_j| worst case (Higham, Accuracy and Stability of Numerical
// Algorithms, 2nd ed., 4.2 and 4.6: 8 additions per lane, 3 to combine the lanes, one per
// pairwise level), about sqrt of that in practice. The worst case is reachable: one value
// 2^24 times the rest, in one lane, with the rest each near half an ulp of it, made a plain
// 8-lane sum of m = 4097 squares round every one of its 512 additions the same way
// (relative error 2.8e-5, rstd 93 units of the gate 73: found by normcheck fuzz).
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
#include "core/region_errors.hpp"
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
  if (x.dtype() == DType::bf16) {  // a shift into the upper half of a binary32: vectorizes
    const std::uint16_t* src = x.as<std::uint16_t>() + off;
    for (std::int64_t j = 0; j < m; ++j) buf[j] = static_cast<A>(normcheck::detail::bf16_bits_to_float(src[j]));
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

constexpr std::int64_t kChunk = 64;

/// Lane-blocked sum of f(a[j]) for j < m <= kChunk (one chunk of blocked_sum).
template <class A, class F>
A lane_sum(const A* a, std::int64_t m, F f) noexcept {
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

/// Sum of f(a[j]) for j < m in the accumulation order above: pairwise over chunks of
/// kChunk values, lane-blocked within a chunk.
template <class A, class F>
A blocked_sum(const A* a, std::int64_t m, F f) noexcept {
  if (m <= kChunk) return lane_sum(a, m, f);
  const std::int64_t chunks = (m + kChunk - 1) / kChunk, half = (chunks + 1) / 2 * kChunk;
  return blocked_sum(a, half, f) + blocked_sum(a + half, m - half, f);
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

/// The largest exponent a row may be scaled up by for this eps: eps s^2, the scaled
/// denominator's eps term (formed in binary64 by inv_scaled_denominator), stays below 2^1020
/// (eps s below 2^1020 too). Unbounded, a binary64 row of |x| ~ 1e-193 (s ~ 2^639) with
/// eps = 1e-5 made eps s^2 overflow, D = inf and y = 0 where the exact y is +-1.26e-190
/// (found by normcheck fuzz). Where the cap binds, eps s^2 >= 2^1019 while the scaled
/// statistic is at most m (|x s| <= 1), so D = sqrt(eps) s to within binary64 rounding and
/// the scaled squares cannot underflow unless eps s^2 dominates them by 2^1000 anyway.
inline int max_scale_up(int max_up, double eps) noexcept {
  if (!(eps > 0)) return max_up;
  int e = 0;
  std::frexp(eps, &e);  // eps < 2^e
  const int cap = (1020 - e) / 2;
  return cap < max_up ? cap : max_up;
}

/// Power-of-two scale s = 2^-e with max|x| = f 2^e, f in [0.5,1); 1 for a zero row;
/// at most 2^max_up (so that s itself is finite in the accumulation type: a row of
/// subnormals then lands near 2^-22 instead of 0.5, still far from underflow; callers pass
/// max_scale_up(.., eps) so that the eps term stays finite too).
inline double row_scale(double amax, int max_up) noexcept {
  if (amax == 0) return 1.0;
  int e = 0;
  std::frexp(amax, &e);
  return std::ldexp(1.0, -e > max_up ? max_up : -e);
}

/// row_scale(amax, max_up) for a finite binary32 amax >= 0, from its exponent bits (no libm
/// frexp/ldexp per row: at d = 64 they were a tenth of the fast kernel's time); the same value
/// for every such amax (test: every binary32 exponent, subnormals included, several max_up).
inline double row_scale_f32(float amax, int max_up) noexcept {
  std::uint32_t b;
  __builtin_memcpy(&b, &amax, 4);
  const int be = static_cast<int>(b >> 23);
  if (be == 0) return row_scale(static_cast<double>(amax), max_up);  // 0 or subnormal
  const int e = be - 126;                                           // amax = f 2^e, f in [0.5, 1)
  const int k = -e > max_up ? max_up : -e;
  const std::uint64_t d = static_cast<std::uint64_t>(1023 + k) << 52;
  double s;
  __builtin_memcpy(&s, &d, 8);
  return s;
}

/// Reciprocal of the scaled denominator D(v) s for a row scaled by s, whose scaled
/// statistic (variance or mean square) is vs = v s^2, formed in binary64 (per row).
/// `all_zero` (ss == 0) with eps = 0 gives +inf (D = 0: 0/0, NaN outputs, as the
/// reference gives). With eps > 0, ss == 0 is not special: D = D(eps) s is finite (the
/// scale is capped by max_scale_up), so a row whose centered values are all 0 gives 0, and
/// a row of nonzero values whose scaled squares underflowed (binary64 subnormals under the
/// cap) gives x / D(eps), as it must. (An earlier shortcut returned 0 for ss == 0 and eps
/// > 0: RMSNorm of [-4e-323] gave -0, exact -1.25e-320; found by normcheck fuzz.)
inline double inv_scaled_denominator(double vs, double s, bool all_zero, const Convention& c) noexcept {
  const double eps = c.eps;
  double D = 0;
  switch (c.eps_placement) {
    case EpsPlacement::inside_sqrt: D = std::sqrt(vs + eps * s * s); break;
    case EpsPlacement::outside_sqrt: D = std::sqrt(vs) + eps * s; break;
    case EpsPlacement::clamp_var: D = std::sqrt(std::fmax(vs, eps * s * s)); break;
    case EpsPlacement::clamp_norm: D = std::fmax(std::sqrt(vs), eps * s); break;
  }
  if (all_zero && !(eps > 0)) return HUGE_VAL;
  const double r = 1.0 / D;  // beyond binary64's range for all_zero: see acc_inverse
  return all_zero && r > std::numeric_limits<double>::max() ? std::numeric_limits<double>::max() : r;
}

/// 1/D in the accumulation type A: inv_scaled_denominator's value `inv` rounded to A; for a
/// group whose centred values are all 0 (`all_zero`: ss == 0, the caller's own statistic) at
/// most A's largest finite value (HUGE_VAL, eps = 0 over such a group, stays inf: 0/0). Only
/// there: batch_norm's eval 1/D comes from running_var, whose D = 0 (running_var 0, eps 0)
/// makes the exact y +-inf, or NaN where x = running_mean (a review found the cap there).
/// 1/D exceeds A's range only where ss == 0 and D = D(eps) s is below 1/max(A): a constant row of |x| near the top of
/// A's range (s = 2^-e tiny) under outside_sqrt or clamp_norm (D = eps s), or an eps below
/// ~1/max(A)^2. Every centred value of such a row is 0 (a row that is not constant, scaled to
/// max |x s| in [0.5, 1), has one of at least 2^-26 for binary32: ss > 0), so the products stay
/// 0, the exact y (+ beta), where an inf 1/D made 0 * inf = NaN. Found by a false-pass audit:
/// layer_norm f32 of a constant row of -8.5e34 with eps = 1e-5 outside the square root gave NaN
/// (also group_norm, instance_norm, batch_norm; every placement but inside_sqrt and clamp_var,
/// whose sqrt(eps) s stays in range there).
template <class A>
inline A acc_inverse(double inv, bool all_zero) noexcept {
  constexpr double top = static_cast<double>(std::numeric_limits<A>::max());
  return static_cast<A>(all_zero && inv > top && inv != HUGE_VAL ? top : inv);
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

/// The mean of a[0..m) for centering: blocked_sum / m, except for a constant row, whose
/// mean is its value exactly (the blocked sum and the division round: a row of ten copies of
/// 0.1f centered to +-2^-27 instead of 0 and, with eps = 0, normalized to +-1 where the exact
/// result is 0/0 = NaN; found by normcheck fuzz). The check stops at the first difference.
template <class A>
A row_mean(const A* a, std::int64_t m) noexcept {
  bool constant = true;
  for (std::int64_t j = 1; j < m && constant; ++j) constant = a[j] == a[0];
  if (constant) return m > 0 ? a[0] : A(0);
  return blocked_sum(a, m, [](A v) { return v; }) / static_cast<A>(m);
}

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
  RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel if (l.rows * l.m > 32768)
  {
    std::vector<A> buf;
    errors.run([&] { buf.resize(static_cast<std::size_t>(l.m)); });
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < l.rows; ++r) errors.run([&] {
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
        const double s = row_scale(static_cast<double>(amax), max_scale_up(sizeof(A) == 4 ? 100 : 1000, p.conv.eps));
        const A sa = static_cast<A>(s);
        for (std::int64_t j = 0; j < l.m; ++j) a[j] *= sa;  // exact
        A mu = 0;
        if (center) {
          mu = row_mean(a, l.m);
          for (std::int64_t j = 0; j < l.m; ++j) a[j] -= mu;
        }
        const A ss = blocked_sum(a, l.m, [](A v) { return v * v; });
        const double inv = inv_scaled_denominator(static_cast<double>(ss) / static_cast<double>(dof), s, ss == 0, p.conv);
        const A r_inv = acc_inverse<A>(inv, ss == 0);
        for (std::int64_t j = 0; j < l.m; ++j) a[j] *= r_inv;
        if (const auto nd = p.conv.normalized_dtype)  // rounded before the affine (Convention::normalized_dtype)
          for (std::int64_t j = 0; j < l.m; ++j) a[j] = static_cast<A>(round_to(*nd, static_cast<double>(a[j])));
        aff.apply(a, l.m);
        if (mean) mean->set(r, static_cast<double>(mu) / s);
        // A constant row with eps > 0 has r_inv = 0 by convention (every centered value is
        // 0); its rstd is 1/D(0) = 1/sqrt(eps) (placement-dependent), formed here.
        if (rstd) rstd->set(r, ss == 0 && p.conv.eps > 0 ? 1.0 / inv_denominator_zero(p.conv) : static_cast<double>(r_inv) * s);
      }
      store_row(y, r * l.m, l.m, a);
    });
  }
  errors.rethrow();
}

}  // namespace normcheck::kernels::cpu::detail
