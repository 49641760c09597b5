// Backward reference of one normalization group, and of layer_norm / rms_norm: a plain
// loop template on the number type T (double for quick checks, MPFR for the verdict).
//
// Forward (row_norm.hpp, l2_normalize.hpp), over a group of m values with [center] the
// mean subtracted, m' = dof (m, m - 1 for unbiased; 1 for l2_normalize, whose v is the plain
// sum of squares), D = D(v) per eps_placement and k = 2 D dD/dv (denominator_sensitivity):
//   mu = [center] (1/m) sum x,  d_j = x_j - mu,  v = (1/m') sum d_j^2,  n_j = d_j / D,
//   y_j = g_j n_j + b_j   (g the effective gain: gamma, 1 + w, 1 + scale, g; 1 without affine).
// Backward, given dy (Ba et al. 2016 and Ioffe & Szegedy 2015 for the chain rule through the
// statistics): with a_j = g_j dy_j (dL/dn_j), dv/dx_j = (2/m') d_j (sum_j d_j = 0 when
// centered) and dD/dv = k/(2D),
//   dn_i/dx_j = (delta_ij - [center]/m) / D - (k/m') n_i n_j / D,
//   dx_j = (1/D) (a_j - [center] mean(a) - (k/m') n_j S),   S = sum_i a_i n_i,
//   dgamma_j = sum over the groups' elements of that gain: dy n (one_plus_w: dL/dw = the same),
//   dbeta_j = sum dy.
// For layer_norm with k = 1, m' = m this is rstd (g dy - mean(g dy) - n mean(g dy n)).
//
// Condition magnitude of dx_i: a bound of the first-order change of dx_i under relative
// perturbations |eps_j| <= e of every x_j, dy_j and parameter p_j (gamma_j; w_j for
// one_plus_w; scale for ada), divided by e. With the forward quantities
//   Q = (1/m') sum |d_j x_j|, rho = k Q / D^2          (|dD/D| <= rho e: dv = (2/m') sum d_j dx_j)
//   nu_j = (e_j + [center] mean|x|)/D + |n_j| rho      (|dn_j| <= nu_j e; forward's c_j with g = 1, minus |g n_j|;
//                                                      e_j = (1 - 2/m)|x_j| centring, |x_j| else: row_norm.hpp)
//   kappa = |dk/dv| 2Q  (outside_sqrt: k = 1 + eps/sqrt(v), kappa = eps Q / v^1.5; 0 otherwise)
// the x terms, differentiating each factor of the formula and bounding by the triangle inequality:
//   X_i = (1/D) [ rho (|a_i| + |mean a| + k |n_i S| / m')                            (through 1/D)
//               + (kappa |n_i S| + k nu_i |S| + k |n_i| sum_j |a_j| nu_j) / m' ]     (through k, n_i, S)
// and the dy and parameter terms (dx is linear in a_j = g_j dy_j; a relative perturbation of
// dy_j moves a_j by |a_j| e, one of p_j by |(dg_j/dp_j) p_j dy_j| e = |p_j dy_j| e):
//   alpha_j = |a_j| + |p_j dy_j|,
//   Y_i = (1/D) ([center] (1 - 2/m) alpha_i + mean(alpha), else alpha_i; + (k/m') |n_i| sum_j alpha_j |n_j|),
//   c(dx_i) = X_i + Y_i,
// O(m) per group (DESIGN.md "The reference"). Parameter gradients (dgamma_j = sum dy n over R
// values): c = sum (|dy n| + |dy| nu) (dy terms, then x terms); dbeta: c = sum |dy|.
//
// Exactness: in T with P bits every operation has relative error <= 2^-P, each sum of m
// terms absolute error <= m 2^-P times the sum of its terms' magnitudes, and every term of
// the formula is bounded by c_i: |dx_i computed - dx_i| <= (m + 12) 2^-P c_i, so dx_i is
// correctly rounded unless it lies within that distance of a rounding boundary of the output
// format (P >= 160 + log2 m: only under cancellation of ~140 bits, |dx_i| << c_i).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/region_errors.hpp"
#include "ops/common/family_common.hpp"
#include "ops/common/row_norm.hpp"
#include "spec/op_def.hpp"
#include "spec/layout.hpp"

namespace normcheck::reference {

/// The backward of one group of m values (formulas above). Inputs: x[m], dy[m]; gain[m]
/// the effective gain g_j (nullptr: 1); param[m] the parameter whose perturbation counts
/// (gamma, w or scale; nullptr: none). Outputs: dx[m] and cdx[m] (its condition magnitude,
/// absolute units), n[m] (the normalized values) and nu[m] (n's condition magnitude under
/// x, for the parameter gradients' bounds). A group holding NaN or inf gives NaN everywhere.
template <class T>
void normalize_group_backward(const T* x, const T* dy, std::int64_t m, bool center, std::int64_t dof,
                              const Convention& c, const T* gain, const T* param, T* dx, double* cdx, T* n, T* nu) {
  using std::abs; using std::isfinite; using std::sqrt;
  bool finite = true;
  for (std::int64_t j = 0; j < m; ++j) finite = finite && isfinite(x[j]) && isfinite(dy[j]);
  if (!finite) {
    for (std::int64_t j = 0; j < m; ++j) { dx[j] = n[j] = nu[j] = T(NAN); cdx[j] = NAN; }
    return;
  }
  const T mm(m), mp(dof);
  T mu(0), mean_abs(0);
  if (center) {
    for (std::int64_t j = 0; j < m; ++j) { mu += x[j]; mean_abs += abs(x[j]); }
    mu /= mm;
    mean_abs /= mm;
  }
  T ss(0), Q(0);
  for (std::int64_t j = 0; j < m; ++j) {
    const T d = x[j] - mu;
    ss += d * d;
    Q += abs(d * x[j]);
  }
  Q /= mp;
  const T v = ss / mp;
  const T D = denominator(v, c);
  const T k = denominator_sensitivity(v, D, c);
  const T rho = k * Q / (D * D);
  T kappa(0);
  if (c.eps_placement == EpsPlacement::outside_sqrt && v > 0) kappa = T(c.eps) * Q / (v * sqrt(v));
  T abar(0), alphabar(0), S(0), s_alpha(0), s_anu(0);
  std::vector<T> a(static_cast<std::size_t>(m)), alpha(a.size());
  for (std::int64_t j = 0; j < m; ++j) {
    n[j] = (x[j] - mu) / D;
    // (1 - 2/m) |x_j| + mean|x| = sum_l |delta_jl - 1/m| |x_l| when centring (row_norm.hpp).
    nu[j] = ((center ? (T(1) - T(2) / mm) * abs(x[j]) : abs(x[j])) + mean_abs) / D + abs(n[j]) * rho;
    a[j] = gain ? gain[j] * dy[j] : dy[j];
    alpha[j] = abs(a[j]) + (param ? abs(param[j] * dy[j]) : T(0));
    if (center) { abar += a[j]; alphabar += alpha[j]; }
    S += a[j] * n[j];
    s_alpha += alpha[j] * abs(n[j]);
    s_anu += abs(a[j]) * nu[j];
  }
  abar /= mm;
  alphabar /= mm;
  const T kS = k / mp;
  for (std::int64_t j = 0; j < m; ++j) {
    dx[j] = (a[j] - abar - kS * n[j] * S) / D;
    const T nS = abs(n[j] * S);
    const T X = (rho * (abs(a[j]) + abs(abar) + kS * nS) + (kappa * nS + k * nu[j] * abs(S) + k * abs(n[j]) * s_anu) / mp) / D;
    const T Y = ((center ? (T(1) - T(2) / mm) * alpha[j] : alpha[j]) + alphabar + kS * abs(n[j]) * s_alpha) / D;
    cdx[j] = static_cast<double>(X + Y);
  }
}

/// Accumulates the parameter gradients of one element: dgamma += dy n (condition
/// |dy n| + |dy| nu), dbeta += dy (condition |dy|). Sums in T, summed over every element that
/// shares the parameter.
template <class T>
struct ParamGrad {
  std::vector<T> dgamma, cgamma, dbeta, cbeta;
  explicit ParamGrad(std::int64_t size = 0)
      : dgamma(static_cast<std::size_t>(size)), cgamma(dgamma.size()), dbeta(dgamma.size()), cbeta(dgamma.size()) {
    for (std::size_t i = 0; i < dgamma.size(); ++i) dgamma[i] = cgamma[i] = dbeta[i] = cbeta[i] = T(0);
  }
  void add(std::int64_t j, const T& dy, const T& n, const T& nu) {
    using std::abs;
    dgamma[j] += dy * n;
    cgamma[j] += abs(dy * n) + abs(dy) * nu;
    dbeta[j] += dy;
    cbeta[j] += abs(dy);
  }
  /// Writes dgamma / dbeta (names `gname`, `bname`) of shape s into o, each when `want_*`.
  void emit(ExactOutputs& o, DType dt, const Shape& s, bool want_gamma, bool want_beta, const char* gname = "dgamma",
            const char* bname = "dbeta") const {
    if (want_gamma) {
      ExactOutput g = detail::make_output(dt, s);
      for (std::size_t j = 0; j < dgamma.size(); ++j) detail::put(g, static_cast<std::int64_t>(j), dgamma[j], static_cast<double>(cgamma[j]));
      o.emplace(gname, std::move(g));
    }
    if (want_beta) {
      ExactOutput b = detail::make_output(dt, s);
      for (std::size_t j = 0; j < dbeta.size(); ++j) detail::put(b, static_cast<std::int64_t>(j), dbeta[j], static_cast<double>(cbeta[j]));
      o.emplace(bname, std::move(b));
    }
  }
};

/// The effective gain g_j and the perturbed parameter p_j of an affine convention, per
/// element of a parameter tensor (empty vectors for affine = none).
template <class T>
void affine_gain_and_param(const Convention& c, const std::vector<T>& gamma, std::vector<T>& gain, std::vector<T>& param) {
  gain.clear();
  param.clear();
  if (c.affine == Affine::none) return;
  param = gamma;
  gain = gamma;
  if (c.affine == Affine::one_plus_w)
    for (auto& g : gain) g = T(1) + g;
}

/// layer_norm / rms_norm backward: outputs dx (shape of x), dgamma and dbeta
/// (normalized_shape) per affine. x viewed as [rows, m] (row_layout).
template <class T>
ExactOutputs row_norm_backward(const Problem& p) {
  const RowLayout l = row_layout(p);
  const Tensor& x = p.x();
  const Tensor& dyt = p.inputs.at("dy");
  std::vector<T> gain, param;
  affine_gain_and_param(p.conv, detail::load_all<T>(p.input("gamma")), gain, param);
  const bool center = p.op.def().centers;
  const std::int64_t dof = p.conv.variance == Variance::unbiased ? l.m - 1 : l.m;
  ExactOutput dx = detail::make_output(p.out_dtype, x.shape());
  std::vector<T> nall(static_cast<std::size_t>(x.size())), nuall(nall.size());
  RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel for schedule(dynamic, 1) if (x.size() > detail::kParallelMin)
  for (std::int64_t r = 0; r < l.rows; ++r) errors.run([&] {
    const std::int64_t off = r * l.m;
    std::vector<T> xr(static_cast<std::size_t>(l.m)), dr(xr.size()), gx(xr.size());
    std::vector<double> cr(xr.size());  // the row's condition magnitudes, kept by put()
    for (std::int64_t j = 0; j < l.m; ++j) { xr[j] = T(x.get(off + j)); dr[j] = T(dyt.get(off + j)); }
    normalize_group_backward(xr.data(), dr.data(), l.m, center, dof, p.conv, gain.empty() ? nullptr : gain.data(),
                             param.empty() ? nullptr : param.data(), gx.data(), cr.data(), nall.data() + off,
                             nuall.data() + off);
    for (std::int64_t j = 0; j < l.m; ++j) detail::put(dx, off + j, gx[j], cr[j]);
  });
  errors.rethrow();
  ExactOutputs o;
  o.emplace("dx", std::move(dx));
  if (p.conv.affine != Affine::none) {
    ParamGrad<T> pg(l.m);
    for (std::int64_t i = 0; i < x.size(); ++i) pg.add(i % l.m, T(dyt.get(i)), nall[i], nuall[i]);
    pg.emit(o, p.out_dtype, p.inputs.at("gamma").shape(), true, p.conv.affine == Affine::gamma_beta);
  }
  return o;
}

}  // namespace normcheck::reference
