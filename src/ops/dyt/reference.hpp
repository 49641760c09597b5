// Dynamic Tanh (DyT; Zhu, Chen, He, LeCun & Liu, "Transformers without Normalization",
// CVPR 2025): y = gamma * tanh(alpha * x) + beta, elementwise, with one learned scalar alpha
// (input [1]) and gamma, beta per element of normalized_shape (the trailing dims of x).
//
// Reference, a plain loop in T (MPFR at the working precision: tanh is mpfr_tanh, correctly
// rounded there; double for quick checks), rounded once per output. The forward is first
// evaluated in double-double balls (ball.hpp exp/expm1; dyt_terms(DDBall) below), bit-identical
// to MPFR's or recomputed there. With z = alpha x,
// t = tanh z, s = sech^2 z = 1 / cosh^2 z (never 1 - t^2, which cancels for large |z|):
//
//   forward:  y = g t + b
//     c_y = 2 |g| s |z|  (relative perturbations of x and of alpha, each |dy/dv v|)
//         + |g t| + |b|  (of gamma, beta; |g t| with g = 1 without gamma: tanh's own rounding).
//   backward, given dy (dL/dy): dx = dy g alpha s,  dalpha = sum_i dy_i g_i x_i s_i,
//     dgamma_j = sum over rows of dy t,  dbeta_j = sum over rows of dy; with s' = -2 s t:
//     c_dx     = 3 |dx| + 4 |dy g alpha| s |t| |z|  (dy, g, alpha as a factor; x and alpha in s)
//     c_dalpha = sum_i (3 |dy g x s| + 4 |dy g x| s |t| |z|)
//     c_dgamma = sum (|dy t| + 2 |dy| s |z|),   c_dbeta = sum |dy|.
// An infinite z gives t = +-1, s = 0 and the products s |z| are 0 (their limit).
#pragma once

#include <cmath>
#include <type_traits>

#include "ops/common/ball.hpp"
#include "ops/common/certified_rows.hpp"
#include "ops/common/family_common.hpp"
#include "ops/common/row_norm.hpp"
#include "spec/layout.hpp"

namespace normcheck::reference {

namespace detail {

/// t = tanh z, s = sech^2 z = 1 / cosh^2 z and s |z| of one z (their limits for an infinite
/// z). s and s |z| enter only the condition magnitudes: in cond_t<U> (U itself for MPFR and
/// double; binary64 for DDBall).
template <class U>
struct DytTerms {
  U t;
  cond_t<U> s, sz;
};
template <class U>
DytTerms<U> dyt_terms(const U& z) {
  using std::abs; using std::cosh; using std::isinf; using std::tanh;
  const U t = tanh(z);
  if (isinf(z)) return {t, U(0), U(0)};
  const U ch = cosh(z);
  const U s = U(1) / (ch * ch);
  return {t, s, s * abs(z)};
}

/// The terms from em = expm1(-2 |z|) (dyt_terms' last steps; a = |z|).
inline DytTerms<DDBall> dyt_terms_from(const DDBall& z, const DDBall& a, const DDBall& em) {
  const DDBall d = DDBall(2.0) + em;
  const DDBall t = -em / d;
  const double s = 4.0 * ((1.0 + em.hi()) + em.lo()) / (d.hi() * d.hi());
  return {z.hi() < 0 ? -t : t, s, s * a.hi()};
}

/// The same terms for the certified path from one expm1 of a double-double ball (ball.hpp):
/// with a = |z| and em = e^(-2a) - 1 (no cancellation for small a), t = sign(z) (-em) / (2 + em)
/// = tanh z as a ball, and s = 4 (1 + em) / (2 + em)^2 = sech^2 z (exact identities; no
/// overflow for any a, where cosh^2 z leaves the range at a ~ 311) in binary64 from the
/// midpoints: 1 + em as (1 + em_h) + em_l (exact first step where it cancels, Sterbenz), so
/// s and s a are within a few units of binary64's last place of MPFR's, as cond_t asks.
/// Zero, infinite and NaN z as the template.
inline DytTerms<DDBall> dyt_terms(const DDBall& z) {
  if (isnan(z)) return {z, z.hi(), z.hi()};
  if (isinf(z)) return {DDBall(z.hi() > 0 ? 1.0 : -1.0), 0.0, 0.0};
  if (z.exact_zero()) return {z, 1.0, 0.0};  // tanh(+-0) = +-0, sech^2 0 = 1
  const DDBall a = abs(z);
  if (a.hi() - a.radius() > 300) {
    // Saturated: 0 < 1 - tanh a = 2 e^(-2a) / (1 + e^(-2a)) < 2 e^(-600) < 2^-864, so the ball
    // (1, 2^-864) holds tanh a (e^(-2a) itself leaves the range of the bounds); every format
    // rounds it to 1 unless g t + b sits at a rounding boundary (then MPFR decides). s = 4 e^(-2a)
    // (1 + e^(-2a))^-2 ~ 4 e^(-2a), here from exp of a rounded argument (relative error up to
    // ~2^-43; 0 in binary64 beyond a ~ 373): it enters c_y only as 2 |g| s a <= 2^-854 |g|,
    // beside |g t| ~ |g|, so c_y stays within cond_t's tolerance.
    const DDBall t = DDBall::around(1.0, 0x1p-864);
    const double s = 4.0 * std::exp(-2.0 * a.hi());
    return {z.hi() < 0 ? -t : t, s, s * a.hi()};
  }
  return dyt_terms_from(z, a, expm1(-ldexp(a, 1)));
}

/// dyt_terms of two elements, bit for bit the same as two calls: where both take expm1's exp
/// branch (finite, nonzero, 2|z| >= 1/64, not saturated) their exps run side by side (exp_n<2>:
/// one element's double-double latency overlaps the other's; dyt 4.7 -> 5.x M elements per
/// CPU-s, issue 15); otherwise one after the other. An Uncertain from either sends the chunk
/// to MPFR, as the two calls would.
inline void dyt_terms_pair(const DDBall& z0, const DDBall& z1, DytTerms<DDBall>& t0, DytTerms<DDBall>& t1) {
  const auto exp_branch = [](const DDBall& z) {
    if (isnan(z) || isinf(z) || z.exact_zero()) return false;
    const double ah = std::fabs(z.hi());
    return !(ah - z.radius() > 300) && 2 * ah >= 0.015625;  // dyt_terms' and expm1's tests on |z|
  };
  if (!exp_branch(z0) || !exp_branch(z1)) {
    t0 = dyt_terms(z0);
    t1 = dyt_terms(z1);
    return;
  }
  const DDBall a[2] = {abs(z0), abs(z1)}, w[2] = {-ldexp(a[0], 1), -ldexp(a[1], 1)};
  DDBall e[2];
  exp_n<2>(w, e);
  t0 = dyt_terms_from(z0, a[0], e[0] - DDBall(1.0));
  t1 = dyt_terms_from(z1, a[1], e[1] - DDBall(1.0));
}

}  // namespace detail

/// dyt in T; with `fast`, the forward's elements first in double-double with certified radii
/// (ball.hpp's exp, expm1, tanh, cosh), in chunks of 256, and in T for a chunk where any
/// value cannot be decided (ops/common/certified_rows.hpp: bit-identical to T's result).
/// The backward (sums over rows) stays in T.
template <class T>
ExactOutputs dyt(const Problem& p, bool fast = false) {
  using std::abs;
  const Tensor& x = p.x();
  const std::int64_t n = x.size(), m = numel(p.conv.normalized_shape);
  ExactOutputs out;
  if (p.conv.direction == Direction::forward) {
    ExactOutput y = detail::make_output(p.out_dtype, x.shape());
    // gamma, beta and alpha as their exact binary64 values (every input dtype's values are).
    const std::vector<double> gd = detail::load_all<double>(p.input("gamma")), bd = detail::load_all<double>(p.input("beta"));
    const double ad = p.inputs.at("alpha").get(0);
    constexpr std::int64_t kChunk = 256;
    auto chunk = [&](std::int64_t c, auto tag) {
      using U = typename decltype(tag)::type;
      using C = cond_t<U>;
      const U au(ad);
      const auto element = [&](std::int64_t i, const detail::DytTerms<U>& e) {
        const std::int64_t j = i % m;
        const U gj = gd.empty() ? U(1) : U(gd[static_cast<std::size_t>(j)]), bj = bd.empty() ? U(0) : U(bd[static_cast<std::size_t>(j)]);
        // |g t| also without gamma (g = 1): it bounds the kernel's rounding of tanh itself
        // (u |t|), as normalize_group's |g n| does; without it a tanh correct to 1 ULP failed
        // near saturation, where s |z| -> 0 (found by a false-pass hunt's side check).
        const U gt = gj * e.t;
        const C cy = C(2) * C(abs(cond_of(gj))) * e.sz + C(abs(cond_of(gt))) + C(abs(cond_of(bj)));
        detail::put(y, i, gt + bj, static_cast<double>(cy));
      };
      const std::int64_t end = std::min(n, (c + 1) * kChunk);
      std::int64_t i = c * kChunk;
      if constexpr (std::is_same_v<U, DDBall>)  // in pairs (dyt_terms_pair), the same values
        for (; i + 1 < end; i += 2) {
          detail::DytTerms<U> e0, e1;
          detail::dyt_terms_pair(au * U(x.get(i)), au * U(x.get(i + 1)), e0, e1);
          element(i, e0);
          element(i + 1, e1);
        }
      for (; i < end; ++i) element(i, detail::dyt_terms(au * U(x.get(i))));
    };
    detail::certified_rows<T>((n + kChunk - 1) / kChunk, fast, n > detail::kParallelMin, chunk);
    out.emplace("y", std::move(y));
    return out;
  }
  // The backward, in T (MPFR or double: DytTerms' s is binary64 for a DDBall, fit for a bound
  // but not for the value dx = dy g alpha s).
  static_assert(!std::is_same_v<T, DDBall>, "dyt's backward has no certified path");
  const T a(p.inputs.at("alpha").get(0));
  const auto g = detail::load_all<T>(p.input("gamma"));
  const auto b = detail::load_all<T>(p.input("beta"));
  const auto gain = [&](std::int64_t j) { return g.empty() ? T(1) : g[static_cast<std::size_t>(j)]; };
  const auto at = [&](std::int64_t i) { return detail::dyt_terms(a * T(x.get(i))); };
  const Tensor& dy = p.inputs.at("dy");
  ExactOutput dx = detail::make_output(p.out_dtype, x.shape());
  T da(0), cda(0);
  std::vector<T> dg(static_cast<std::size_t>(m), T(0)), cdg(dg), db(dg), cdb(dg);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t j = i % m;
    const detail::DytTerms<T> e = at(i);
    const T d(dy.get(i)), gj = gain(j), xi(x.get(i));
    const T v = d * gj * a * e.s;
    detail::put(dx, i, v, static_cast<double>(3 * abs(v) + 4 * abs(d * gj) * abs(a) * e.sz * abs(e.t)));
    const T term = d * gj * xi * e.s;
    da += term;
    cda += 3 * abs(term) + 4 * abs(d * gj * xi) * e.sz * abs(e.t);
    dg[static_cast<std::size_t>(j)] += d * e.t;
    cdg[static_cast<std::size_t>(j)] += abs(d * e.t) + 2 * abs(d) * e.sz;
    db[static_cast<std::size_t>(j)] += d;
    cdb[static_cast<std::size_t>(j)] += abs(d);
  }
  out.emplace("dx", std::move(dx));
  ExactOutput dalpha = detail::make_output(p.out_dtype, p.inputs.at("alpha").shape());
  detail::put(dalpha, 0, da, static_cast<double>(cda));
  out.emplace("dalpha", std::move(dalpha));
  if (!g.empty()) {
    ExactOutput o = detail::make_output(p.out_dtype, p.inputs.at("gamma").shape());
    for (std::int64_t j = 0; j < m; ++j) detail::put(o, j, dg[static_cast<std::size_t>(j)], static_cast<double>(cdg[static_cast<std::size_t>(j)]));
    out.emplace("dgamma", std::move(o));
  }
  if (!b.empty()) {
    ExactOutput o = detail::make_output(p.out_dtype, p.inputs.at("beta").shape());
    for (std::int64_t j = 0; j < m; ++j) detail::put(o, j, db[static_cast<std::size_t>(j)], static_cast<double>(cdb[static_cast<std::size_t>(j)]));
    out.emplace("dbeta", std::move(o));
  }
  return out;
}

}  // namespace normcheck::reference
