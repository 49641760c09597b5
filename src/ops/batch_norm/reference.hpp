// Reference for batch_norm, a plain loop template on the number type T.
//
// Formulas (shared/spec/worked-examples.md "BatchNorm"; Ioffe & Szegedy 2015, PyTorch
// torch.nn.BatchNorm{1,2,3}d): x is [N, C, *spatial] (or [S, N, C, *spatial], S calls,
// with `sequence`). Per channel ch over its m = N * spatial values:
//   batch statistics (training, or track_running_stats = false): mu, v as layer_norm
//     (row_norm.hpp; the forward uses `variance`, biased by default), y = g (x - mu)/D(v) + b;
//   training with track_running_stats: after the forward, with a = momentum, or
//     a = 1/num_batches_tracked (counter incremented first) when momentum is none,
//       running_mean <- (1 - a) running_mean + a mu,
//       running_var  <- (1 - a) running_var  + a v_u,  v_u = sum (x - mu)^2 / (m - 1) (running_variance
//         unbiased, PyTorch's; biased: / m, Keras's and Flax's, keras/src/layers/normalization/batch_normalization.py);
//   eval with track_running_stats: y = g (x - running_mean) / D(running_var) + b, the
//     running stats pass through unchanged.
// A channel holding NaN or an infinity in a batch-statistics step gives NaN for its
// outputs and for its running stats (eval: a non-finite input reaches its own output only).
//
// Condition magnitudes (first order, triangle inequality, O(m) per channel):
//   y with batch statistics: normalize_group's (row_norm.hpp) bound;
//   y in eval: |g|/D (|x_i| + |rm|) + (1 + k) |g n_i| + [beta] |b|  (x, rm, rv, gamma, beta terms);
//   running_mean: c' = |1 - a| c + a (1/m) sum_j |x_j| + a |rm|          (c_0 = |rm_0|; the last
//     term is |d rm'/da a|, momentum being a rounded parameter too);
//   running_var:  c' = |1 - a| c + a (2/q) sum_j |(x_j - mu) x_j| + a |rv| + a v_u
//     (d v_u/dx_j = 2 (x_j - mu)/q, q = m - 1 or m as above); chained through the S steps, so c bounds the
//     first-order propagation of every step's perturbations to the final state.
#pragma once

#include <optional>
#include <type_traits>
#include <vector>

#include "ops/common/ball.hpp"
#include "ops/common/certified_rows.hpp"
#include "ops/common/family_common.hpp"
#include "ops/common/row_norm.hpp"
#include "spec/layout.hpp"

namespace normcheck::reference {

/// The parameters and initial running statistics of a batch_norm problem in U ([C] each;
/// empty where the problem has none), loaded once per number type.
template <class U>
struct BatchNormParams {
  std::vector<U> gamma, beta, rm, rv;
  explicit BatchNormParams(const Problem& p)
      : gamma(detail::load_all<U>(p.input("gamma"))), beta(detail::load_all<U>(p.input("beta"))),
        rm(detail::load_all<U>(p.input("running_mean"))), rv(detail::load_all<U>(p.input("running_var"))) {}
};

/// batch_norm forward: each channel (its values in every step, and its running statistics,
/// which chain through the steps) is one unit of the certified path (certified_rows): in
/// double-double with certified radii first when `fast`, and in T (MPFR at working bits, or
/// double) where a ball cannot decide; bit-identical to T's result either way (channels do
/// not depend on each other). The whole problem had been one unit, so one undecidable value
/// (a channel of two values whose mean is an exact tie of its dtype) sent every channel to
/// MPFR: 65537 channels of 2 values took 5 CPU-seconds. Counted as channels. Condition
/// magnitudes in cond_t<U> (a bound: binary64 midpoints for DDBall, as normalize_group's; U
/// itself for MPFR and double).
template <class T>
ExactOutputs batch_norm(const Problem& p, bool fast = false) {
  const Convention& c = p.conv;
  const ChannelLayout l = channel_layout(p);
  const std::int64_t m = l.n * l.spatial;
  const Tensor& x = p.x();
  ExactOutput y = detail::make_output(p.out_dtype, x.shape());
  const bool batch_stats = c.training || !c.track_running_stats;
  const bool update = c.training && c.track_running_stats;
  // The saved batch statistics (optional outputs) of a single call.
  const bool saved = batch_stats && l.steps == 1;
  ExactOutput smean = detail::make_output(saved_stat_dtype(p), Shape{saved ? l.c : 0});
  ExactOutput srstd = detail::make_output(saved_stat_dtype(p), Shape{saved ? l.c : 0});
  ExactOutput orm = detail::make_output(p.out_dtype, Shape{c.track_running_stats ? l.c : 0});
  ExactOutput orv = detail::make_output(p.out_dtype, Shape{c.track_running_stats ? l.c : 0});
  const BatchNormParams<T> params_t(p);
  std::optional<BatchNormParams<DDBall>> params_ball;
  if (fast) params_ball.emplace(p);
  auto at = [&](std::int64_t s, std::int64_t i, std::int64_t ch, std::int64_t j) {
    return ((s * l.n + i) * l.c + ch) * l.spatial + j;
  };
  // Channel ch in U: every output element of the channel is written (certified_rows' rule).
  auto channel = [&](std::int64_t ch, auto tag) {
    using U = typename decltype(tag)::type;
    using std::abs; using std::isfinite;
    using C = cond_t<U>;
    const BatchNormParams<U>* P;
    if constexpr (std::is_same_v<U, T>) P = &params_t;
    else P = &*params_ball;
    const std::vector<U>& gamma = P->gamma;
    const std::vector<U>& beta = P->beta;
    U rm = P->rm.empty() ? U(0) : P->rm[ch], rv = P->rv.empty() ? U(0) : P->rv[ch];
    double crm = static_cast<double>(abs(rm)), crv = static_cast<double>(abs(rv));
    std::int64_t tracked = c.num_batches_tracked;
    for (std::int64_t s = 0; s < l.steps; ++s) {
      U a(0);
      if (update) {
        ++tracked;
        a = c.momentum ? U(*c.momentum) : U(1) / U(tracked);
      }
      if (!batch_stats) {
        const U D = denominator(rv, c), k = denominator_sensitivity(rv, D, c);
        const U g = abs(affine_gain(c, gamma.data(), ch));
        for (std::int64_t i = 0; i < l.n; ++i)
          for (std::int64_t j = 0; j < l.spatial; ++j) {
            const std::int64_t e = at(s, i, ch, j);
            const U xv(x.get(e));
            const U n = (xv - rm) / D;
            C ce = C(cond_of(g)) / C(cond_of(D)) * (C(abs(cond_of(xv))) + C(abs(cond_of(rm)))) + (C(1) + C(cond_of(k))) * C(cond_of(g)) * C(abs(cond_of(n)));
            if (c.affine == Affine::gamma_beta) ce += C(abs(cond_of(beta[ch])));
            detail::put(y, e, apply_affine(n, c, gamma.data(), beta.data(), ch), static_cast<double>(ce));
          }
        continue;  // (the next step)
      }
      std::vector<U> xg(static_cast<std::size_t>(m)), yg(xg.size()), gg, bg;
      std::vector<double> cg(xg.size());
      if (!gamma.empty()) gg.assign(xg.size(), gamma[ch]);
      if (!beta.empty()) bg.assign(xg.size(), beta[ch]);
      for (std::int64_t i = 0; i < l.n; ++i)
        for (std::int64_t j = 0; j < l.spatial; ++j) xg[i * l.spatial + j] = U(x.get(at(s, i, ch, j)));
      GroupStatistics<U> st;
      normalize_group(xg.data(), m, true, c, gg.data(), bg.data(), yg.data(), cg.data(), static_cast<const U*>(nullptr), &st);
      if (saved) {
        detail::put(smean, ch, st.mean, st.c_mean);
        detail::put(srstd, ch, st.rstd, st.c_rstd);
      }
      for (std::int64_t i = 0; i < l.n; ++i)
        for (std::int64_t j = 0; j < l.spatial; ++j) detail::put(y, at(s, i, ch, j), yg[i * l.spatial + j], cg[i * l.spatial + j]);
      if (!update) continue;  // (the next step)
      bool finite = true;
      for (auto& v : xg) finite = finite && isfinite(v);
      if (!finite) {
        rm = rv = U(NAN);
        crm = crv = NAN;
        continue;  // (the next step)
      }
      // The condition sums in C (U itself for MPFR and double: the same values as summing
      // abs((x - mu) x) in U, since |a| |b| rounds as |a b|; binary64 midpoints for DDBall).
      U mu(0), ss(0);
      C sxm(0), sabs(0);
      for (auto& v : xg) { mu += v; sabs += C(abs(cond_of(v))); }
      mu /= U(m);
      for (auto& v : xg) {
        const U d = v - mu;
        ss += d * d;
        sxm += C(abs(cond_of(d))) * C(abs(cond_of(v)));
      }
      const U q = U(c.running_variance == Variance::unbiased ? m - 1 : m);
      const U vu = ss / q;
      {
        const C ca = C(cond_of(a)), c1a = C(abs(cond_of(U(1) - a)));
        crm = static_cast<double>(c1a * C(crm) + ca * sabs / C(m) + ca * C(abs(cond_of(rm))));
        crv = static_cast<double>(c1a * C(crv) + ca * C(2) * sxm / C(cond_of(q)) + ca * C(abs(cond_of(rv))) + ca * C(cond_of(vu)));
      }
      rm = (U(1) - a) * rm + a * mu;
      rv = (U(1) - a) * rv + a * vu;
    }
    if (c.track_running_stats) {
      detail::put(orm, ch, rm, crm);
      detail::put(orv, ch, rv, crv);
    }
  };
  detail::certified_rows<T>(l.c, fast, m * l.c > detail::kParallelMin, channel);
  ExactOutputs o;
  o.emplace("y", std::move(y));
  if (c.track_running_stats) {
    o.emplace("running_mean", std::move(orm));
    o.emplace("running_var", std::move(orv));
  }
  if (saved) {
    o.emplace("mean", std::move(smean));
    o.emplace("rstd", std::move(srstd));
  }
  return o;
}

}  // namespace normcheck::reference
