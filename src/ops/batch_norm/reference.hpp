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

#include "core/region_errors.hpp"
#include "ops/common/ball.hpp"
#include "ops/common/certified_rows.hpp"
#include "ops/common/family_common.hpp"
#include "ops/common/row_norm.hpp"
#include "spec/layout.hpp"

namespace normcheck::reference {

/// batch_norm forward in T. An exception inside the parallel channel loop (an Uncertain: a
/// DDBall that cannot decide) is caught there (it may not leave an OpenMP region), the
/// remaining channels skipped, and rethrown once the loop is done. Condition magnitudes in
/// cond_t<T> (a bound: binary64 midpoints for DDBall, as normalize_group's; T itself for MPFR
/// and double).
template <class T>
ExactOutputs batch_norm_in(const Problem& p) {
  using std::abs; using std::isfinite;
  using C = cond_t<T>;
  RegionErrors errors;
  const Convention& c = p.conv;
  const ChannelLayout l = channel_layout(p);
  const std::int64_t m = l.n * l.spatial;
  const std::vector<T> gamma = detail::load_all<T>(p.input("gamma")), beta = detail::load_all<T>(p.input("beta"));
  std::vector<T> rm = detail::load_all<T>(p.input("running_mean")), rv = detail::load_all<T>(p.input("running_var"));
  std::vector<double> crm(rm.size()), crv(rv.size());
  for (std::size_t ch = 0; ch < rm.size(); ++ch) {
    crm[ch] = static_cast<double>(abs(rm[ch]));
    crv[ch] = static_cast<double>(abs(rv[ch]));
  }
  const Tensor& x = p.x();
  ExactOutput y = detail::make_output(p.out_dtype, x.shape());
  const bool batch_stats = c.training || !c.track_running_stats;
  const bool update = c.training && c.track_running_stats;
  std::int64_t tracked = c.num_batches_tracked;
  // The saved batch statistics (optional outputs) of a single call.
  const bool saved = batch_stats && l.steps == 1;
  ExactOutput smean = detail::make_output(saved_stat_dtype(p), Shape{saved ? l.c : 0});
  ExactOutput srstd = detail::make_output(saved_stat_dtype(p), Shape{saved ? l.c : 0});
  auto at = [&](std::int64_t s, std::int64_t i, std::int64_t ch, std::int64_t j) {
    return ((s * l.n + i) * l.c + ch) * l.spatial + j;
  };
  for (std::int64_t s = 0; s < l.steps; ++s) {
    T a(0);
    if (update) {
      ++tracked;
      a = c.momentum ? T(*c.momentum) : T(1) / T(tracked);
    }
#pragma omp parallel for schedule(dynamic, 1) if (m * l.c > detail::kParallelMin)
    for (std::int64_t ch = 0; ch < l.c; ++ch) errors.run([&] {
      if (!batch_stats) {
        const T D = denominator(rv[ch], c), k = denominator_sensitivity(rv[ch], D, c);
        const T g = abs(affine_gain(c, gamma.data(), ch));
        for (std::int64_t i = 0; i < l.n; ++i)
          for (std::int64_t j = 0; j < l.spatial; ++j) {
            const std::int64_t e = at(s, i, ch, j);
            const T xv(x.get(e));
            const T n = (xv - rm[ch]) / D;
            C ce = C(cond_of(g)) / C(cond_of(D)) * (C(abs(cond_of(xv))) + C(abs(cond_of(rm[ch])))) + (C(1) + C(cond_of(k))) * C(cond_of(g)) * C(abs(cond_of(n)));
            if (c.affine == Affine::gamma_beta) ce += C(abs(cond_of(beta[ch])));
            detail::put(y, e, apply_affine(n, c, gamma.data(), beta.data(), ch), static_cast<double>(ce));
          }
        return;  // (the next channel)
      }
      std::vector<T> xg(static_cast<std::size_t>(m)), yg(xg.size()), gg, bg;
      std::vector<double> cg(xg.size());
      if (!gamma.empty()) gg.assign(xg.size(), gamma[ch]);
      if (!beta.empty()) bg.assign(xg.size(), beta[ch]);
      for (std::int64_t i = 0; i < l.n; ++i)
        for (std::int64_t j = 0; j < l.spatial; ++j) xg[i * l.spatial + j] = T(x.get(at(s, i, ch, j)));
      GroupStatistics<T> st;
      normalize_group(xg.data(), m, true, c, gg.data(), bg.data(), yg.data(), cg.data(), static_cast<const T*>(nullptr), &st);
      if (saved) {
        detail::put(smean, ch, st.mean, st.c_mean);
        detail::put(srstd, ch, st.rstd, st.c_rstd);
      }
      for (std::int64_t i = 0; i < l.n; ++i)
        for (std::int64_t j = 0; j < l.spatial; ++j) detail::put(y, at(s, i, ch, j), yg[i * l.spatial + j], cg[i * l.spatial + j]);
      if (!update) return;  // (the next channel)
      bool finite = true;
      for (auto& v : xg) finite = finite && isfinite(v);
      if (!finite) {
        rm[ch] = rv[ch] = T(NAN);
        crm[ch] = crv[ch] = NAN;
        return;  // (the next channel)
      }
      // The condition sums in C (T itself for MPFR and double: the same values as summing
      // abs((x - mu) x) in T, since |a| |b| rounds as |a b|; binary64 midpoints for DDBall).
      T mu(0), ss(0);
      C sxm(0), sabs(0);
      for (auto& v : xg) { mu += v; sabs += C(abs(cond_of(v))); }
      mu /= T(m);
      for (auto& v : xg) {
        const T d = v - mu;
        ss += d * d;
        sxm += C(abs(cond_of(d))) * C(abs(cond_of(v)));
      }
      const T q = T(c.running_variance == Variance::unbiased ? m - 1 : m);
      const T vu = ss / q;
      {
        const C ca = C(cond_of(a)), c1a = C(abs(cond_of(T(1) - a)));
        crm[ch] = static_cast<double>(c1a * C(crm[ch]) + ca * sabs / C(m) + ca * C(abs(cond_of(rm[ch]))));
        crv[ch] = static_cast<double>(c1a * C(crv[ch]) + ca * C(2) * sxm / C(cond_of(q)) + ca * C(abs(cond_of(rv[ch]))) + ca * C(cond_of(vu)));
      }
      rm[ch] = (T(1) - a) * rm[ch] + a * mu;
      rv[ch] = (T(1) - a) * rv[ch] + a * vu;
    });
    errors.rethrow();  // an Uncertain: the whole problem reruns in T
  }
  ExactOutputs o;
  o.emplace("y", std::move(y));
  if (c.track_running_stats) {
    ExactOutput orm = detail::make_output(p.out_dtype, Shape{l.c}), orv = detail::make_output(p.out_dtype, Shape{l.c});
    for (std::int64_t ch = 0; ch < l.c; ++ch) {
      detail::put(orm, ch, rm[ch], crm[ch]);
      detail::put(orv, ch, rv[ch], crv[ch]);
    }
    o.emplace("running_mean", std::move(orm));
    o.emplace("running_var", std::move(orv));
  }
  if (saved) {
    o.emplace("mean", std::move(smean));
    o.emplace("rstd", std::move(srstd));
  }
  return o;
}

/// batch_norm forward in T; with `fast`, the whole problem first in double-double with
/// certified radii (the running statistics chain the channels' steps, so the problem is one
/// unit, as qk_norm's), and in T when any value cannot be decided (bit-identical to T's
/// result either way; counted as channels x steps).
template <class T>
ExactOutputs batch_norm(const Problem& p, bool fast = false) {
  const ChannelLayout l = channel_layout(p);
  return detail::certified_whole<T>(static_cast<std::uint64_t>(l.c * l.steps), fast,
                                    [&](auto tag) { return batch_norm_in<typename decltype(tag)::type>(p); });
}

}  // namespace normcheck::reference
