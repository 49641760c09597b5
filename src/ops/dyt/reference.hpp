// Dynamic Tanh (DyT; Zhu, Chen, He, LeCun & Liu, "Transformers without Normalization",
// CVPR 2025): y = gamma * tanh(alpha * x) + beta, elementwise, with one learned scalar alpha
// (input [1]) and gamma, beta per element of normalized_shape (the trailing dims of x).
//
// Reference, a plain loop in T (MPFR at the working precision: tanh is mpfr_tanh, correctly
// rounded there; double for quick checks), rounded once per output. With z = alpha x,
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

#include "ops/common/family_common.hpp"
#include "spec/layout.hpp"

namespace normcheck::reference {

template <class T>
ExactOutputs dyt(const Problem& p) {
  using std::abs;
  using std::cosh;
  using std::tanh;
  const Tensor& x = p.x();
  const std::int64_t n = x.size(), m = numel(p.conv.normalized_shape);
  const T a(p.inputs.at("alpha").get(0));
  const auto g = detail::load_all<T>(p.input("gamma"));
  const auto b = detail::load_all<T>(p.input("beta"));
  const auto gain = [&](std::int64_t j) { return g.empty() ? T(1) : g[static_cast<std::size_t>(j)]; };
  // t, s and s |z| of element i (the limits for an infinite z).
  struct Tz {
    T t, s, sz;
  };
  const auto at = [&](std::int64_t i) {
    const T z = a * T(x.get(i));
    const T t = tanh(z);
    if (!std::isfinite(static_cast<double>(z)) && !std::isnan(static_cast<double>(z))) return Tz{t, T(0), T(0)};
    const T ch = cosh(z);
    const T s = T(1) / (ch * ch);
    return Tz{t, s, s * abs(z)};
  };
  ExactOutputs out;
  if (p.conv.direction == Direction::forward) {
    ExactOutput y = detail::make_output(p.out_dtype, x.shape());
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t j = i % m;
      const Tz e = at(i);
      const T gj = gain(j), bj = b.empty() ? T(0) : b[static_cast<std::size_t>(j)];
      // |g t| also without gamma (g = 1): it bounds the kernel's rounding of tanh itself
      // (u |t|), as normalize_group's |g n| does; without it a tanh correct to 1 ULP failed
      // near saturation, where s |z| -> 0 (found by a false-pass hunt's side check).
      const T c = 2 * abs(gj) * e.sz + abs(gj * e.t) + abs(bj);
      detail::put(y, i, gj * e.t + bj, static_cast<double>(c));
    }
    out.emplace("y", std::move(y));
    return out;
  }
  const Tensor& dy = p.inputs.at("dy");
  ExactOutput dx = detail::make_output(p.out_dtype, x.shape());
  T da(0), cda(0);
  std::vector<T> dg(static_cast<std::size_t>(m), T(0)), cdg(dg), db(dg), cdb(dg);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t j = i % m;
    const Tz e = at(i);
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
