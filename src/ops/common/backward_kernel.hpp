// Backward of one normalization group in the accumulation type A, shared by the backward
// kernels (layer_norm_backward.cpp, rms_norm_backward.cpp, group_norm_backward.cpp,
// batch_norm_backward.cpp, l2_normalize_backward.cpp, ada_norm_backward.cpp).
//
// Per group of m values (x and dy gathered into contiguous A buffers):
//   1. n: the forward's algorithm (group_kernel.hpp normalize_in_place: scan, 2^-e row
//      scaling, two-pass mean and centered sum of squares, binary64 denominator), so the
//      backward sees the same n as the forward kernel; 1/D = s / D_s and k = 2 D dD/dv from
//      the scaled variance in binary64;
//   2. dy scaled by t = 2^-e of its max |dy| (exact), a_j = g_j (dy_j t)  (one rounding);
//   3. [center] mean(a) = blocked_sum(a) / m;  S = blocked_dot(a, n)  (lane-blocked sums);
//   4. dx_j = ((a_j - mean(a)) - (k/m') n_j S) (1/(D t))  ((k/m') and 1/(D t) formed in
//      binary64, rounded once to A): the stable form rstd (g dy - mean(g dy) - n mean(g dy n))
//      of LayerNorm's gradient, with no E[x^2] - E[x]^2 and no x - mu formed from a rounded mu
//      at the backward stage (n is reused).
// A group whose x or dy holds NaN/inf gives NaN for dx and n.
// Error bound (u of A): n as the forward, |n^ - n| <= (8 + sqrt(m)) u nu_j in practice; the
// backward path adds 7 roundings and the two sums' (m/8 + 4) u worst case, ~ sqrt(m/8) u in
// practice, each relative to a term of c(dx_i) (ops/common/row_norm_backward.hpp): within the
// default backward gate 1 + 16 + sqrt(m) + sqrt(R) (checks/budget.cpp).
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "ops/common/group_kernel.hpp"

namespace normcheck::kernels::cpu::detail {

/// The scaled denominator D_s = D(v) s of a group scaled by s with scaled statistic vs = v s^2.
inline double scaled_denominator(double vs, double s, const Convention& c) noexcept {
  const double eps = c.eps;
  switch (c.eps_placement) {
    case EpsPlacement::inside_sqrt: return std::sqrt(vs + eps * s * s);
    case EpsPlacement::outside_sqrt: return std::sqrt(vs) + eps * s;
    case EpsPlacement::clamp_var: return std::sqrt(std::fmax(vs, eps * s * s));
    case EpsPlacement::clamp_norm: return std::fmax(std::sqrt(vs), eps * s);
  }
  return std::sqrt(vs + eps * s * s);
}

/// k = 2 D dD/dv from the scaled statistic (ops/common/row_norm.hpp denominator_sensitivity).
inline double scaled_sensitivity(double vs, double s, const Convention& c) noexcept {
  const double eps = c.eps;
  switch (c.eps_placement) {
    case EpsPlacement::inside_sqrt: return 1.0;
    case EpsPlacement::outside_sqrt: return vs > 0 ? 1.0 + eps * s / std::sqrt(vs) : 0.0;
    case EpsPlacement::clamp_var: return vs < eps * s * s ? 0.0 : 1.0;
    case EpsPlacement::clamp_norm: return std::sqrt(vs) < eps * s ? 0.0 : 1.0;
  }
  return 1.0;
}

/// Steps 1-4 above. On entry xn[0..m) holds x and gd[0..m) holds dy, in A; gain[0..m) the
/// effective gain per element (nullptr: 1). On exit xn holds n and gd holds dx.
template <class A>
void group_backward_in_place(A* xn, A* gd, std::int64_t m, bool center, std::int64_t dof, const Convention& c, const A* gain) {
  A dmax;
  bool dy_bad;
  scan_row(gd, m, dmax, dy_bad);
  const GroupStats<A> st = normalize_in_place(xn, m, center, dof, c);
  if (st.nonfinite || dy_bad) {
    nan_row(xn, m);
    nan_row(gd, m);
    return;
  }
  const double vs = static_cast<double>(st.ss) / static_cast<double>(dof);
  // 1/D (inf when D = 0: NaN outputs, as the reference). A group whose centred values are all
  // 0 (ss == 0) with eps > 0 takes 1/D(0) unscaled, as the forward's saved rstd: scaled, eps s^2
  // underflows binary64 once s < ~2^-520 (binary64 groups of |x| beyond ~2^520), D_s was 0 and
  // 1/D inf, where the exact dx of a constant group of 2^1013 with dy ~ 2^1013 is finite
  // (matrix:full's constant_huge backward points: -inf and NaN for layer_norm, group_norm,
  // instance_norm, ada_layer_norm).
  const double rstd = st.ss == 0 && c.eps > 0 ? 1.0 / inv_denominator_zero(c) : st.s / scaled_denominator(vs, st.s, c);
  const double k = scaled_sensitivity(vs, st.s, c);
  const double t = row_scale(static_cast<double>(dmax), sizeof(A) == 4 ? 100 : 1000);
  const A ta = static_cast<A>(t);
  if (gain) for (std::int64_t j = 0; j < m; ++j) gd[j] = gain[j] * (gd[j] * ta);
  else for (std::int64_t j = 0; j < m; ++j) gd[j] *= ta;  // exact
  const A abar = center ? blocked_sum(gd, m, [](A v) { return v; }) / static_cast<A>(m) : A(0);
  const A S = blocked_dot(gd, xn, m);
  const A kS = static_cast<A>(k / static_cast<double>(dof)) * S;
  // 1/(D t) = fm 2^e: t = 2^-e of max |dy| makes it exceed A's range when |dy| nears A's
  // largest value (binary32 dy = 0x1p127: t = 2^-128, 1/(D t) = inf, and dx = inf where the
  // exact dx was 3.5e37: found by the PyTorch backward investigation). Within the range, the
  // product with f = 1/(D t) rounds once; outside it, the product with the mantissa fm
  // rounds the same way and the power of two is applied exactly in long double (whose range
  // holds every such scale), then rounded once to A (exact unless dx itself over- or
  // underflows A). Bit-identical to one product in the normal range.
  const long double fl = static_cast<long double>(rstd) / static_cast<long double>(t);
  int e = 0;
  const long double fm = std::isfinite(fl) && fl != 0 ? std::frexp(fl, &e) : fl;
  constexpr int kSafe = sizeof(A) == 4 ? 100 : 1000;
  if (e > -kSafe && e < kSafe) {
    const A f = static_cast<A>(fl);
    for (std::int64_t j = 0; j < m; ++j) gd[j] = ((gd[j] - abar) - kS * xn[j]) * f;
    return;
  }
  const A f = static_cast<A>(fm);
  const long double p2 = std::ldexp(1.0L, e);
  for (std::int64_t j = 0; j < m; ++j) gd[j] = static_cast<A>(static_cast<long double>(((gd[j] - abar) - kS * xn[j]) * f) * p2);
}

/// sum_{k < R} f(k) in the lane-blocked order of blocked_sum (kLanes partial sums over k,
/// then pairwise, then the tail): the parameter gradients' sums over R values.
template <class A, class F>
A blocked_sum_n(std::int64_t R, F f) {
  A acc[kLanes] = {};
  std::int64_t k = 0;
  for (; k + kLanes <= R; k += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += f(k + l);
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  A s = acc[0];
  for (; k < R; ++k) s += f(k);
  return s;
}

/// Effective gain per parameter element (gamma, or 1 + w formed once in A), empty for none.
template <class A>
std::vector<A> affine_gain(const Problem& p) {
  if (p.conv.affine == Affine::none) return {};
  return load_param<A>(p.input("gamma"), p.conv.affine == Affine::one_plus_w);
}

/// sum_j a_j b_j (b null: sum_j a_j) in binary64 without a spurious overflow: for binary32
/// data every product is exact in binary64 and no partial sum can overflow; for binary64
/// data each factor is scaled by a power of two to |.| <= 1 first and the sum scaled back
/// (exact scalings: the result overflows to +-inf only when the sum itself does). Summing in
/// A overflowed: BN eval with x = [1.2e33, 3.8e21], dy = [-1.3e20, 7.7e18] made dy n
/// = [-inf, +inf] in binary32 and dgamma NaN where the exact sum rounds to -inf (found by
/// normcheck fuzz). Pairwise over chunks (blocked_sum's order).
template <class A>
double wide_dot(const A* a, const A* b, std::int64_t m) {
  std::vector<double> pa(a, a + m), pb;
  if (b) pb.assign(b, b + m);
  int ea = 0, eb = 0;
  if constexpr (sizeof(A) > sizeof(float)) {
    double ma = 0, mb = 0;
    for (std::int64_t j = 0; j < m; ++j) {
      ma = std::fmax(ma, std::fabs(pa[j]));
      if (b) mb = std::fmax(mb, std::fabs(pb[j]));
    }
    if (std::isfinite(ma) && ma > 0) std::frexp(ma, &ea);
    if (b && std::isfinite(mb) && mb > 0) std::frexp(mb, &eb);
    for (auto& v : pa) v = std::ldexp(v, -ea);
    for (auto& v : pb) v = std::ldexp(v, -eb);
  }
  const double s = b ? blocked_dot(pa.data(), pb.data(), m) : blocked_sum(pa.data(), m, [](double v) { return v; });
  return std::ldexp(s, ea + eb);
}

/// Writes the parameter gradients dgamma (iff affine != none) and dbeta (iff gamma_beta),
/// of the shape of gamma, from per-parameter sums held in A (or binary64: wide_dot).
template <class A>
void store_param_grads(const Problem& p, Outputs& out, const std::vector<A>& dgamma, const std::vector<A>& dbeta) {
  if (p.conv.affine == Affine::none) return;
  const Shape& s = p.inputs.at("gamma").shape();
  Tensor g(p.out_dtype, s);
  store_row(g, 0, g.size(), dgamma.data());
  out["dgamma"] = std::move(g);
  if (p.conv.affine == Affine::gamma_beta) {
    Tensor b(p.out_dtype, s);
    store_row(b, 0, b.size(), dbeta.data());
    out["dbeta"] = std::move(b);
  }
}

}  // namespace normcheck::kernels::cpu::detail
