// CPU batch_norm forward: binary32 accumulation (binary64 for f64), running stats kept
// in the accumulation type between the calls of a sequence.
//
// Batch statistics (training, or track_running_stats = false), per channel: the N blocks of
// `spatial` contiguous values are gathered into one buffer of m = N * spatial values and
// normalized by group_kernel.hpp's two-pass algorithm (scan, 2^-e scaling, mean, centered
// sum of squares, binary64 denominator); y = n gamma + beta is scattered back. The update
// (training with running stats) reads the same scaled statistics: mu = mu_s / s and
// v_u = ss / (m - 1) / s^2 in binary64 (exact power-of-two rescaling), then
//   r <- (1 - a) r + a s   in A, with 1 - a rounded once from binary64 and a s formed in
// binary64 and rounded once (a rounded a times s rounded to A had given 0 * inf = NaN for
// momentum 0 where s is beyond A's range and the exact r is the old one; a sixth audit's
// draw), three roundings per step (the reference's running-stat condition magnitude carries
// the chain). A channel holding NaN/inf gives NaN outputs and NaN running stats.
// Eval with running stats: r = 1 / D(running_var) in binary64, rounded once to A;
// y = (x - running_mean) r gamma + beta, four roundings per element (NaN stays elementwise).
// Channels are spread over OpenMP threads.
#include <cmath>

#include "core/region_errors.hpp"
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/group_kernel.hpp"
#include "spec/layout.hpp"

namespace normcheck::kernels::cpu {

namespace {

template <class A>
void batch_norm_impl(const Problem& p, Outputs& out) {
  using namespace detail;
  const Convention& c = p.conv;
  const ChannelLayout l = channel_layout(p);
  const std::int64_t m = l.n * l.spatial, dof = dof_of(c, m);
  const std::vector<A> gamma = load_param<A>(p.input("gamma"), c.affine == Affine::one_plus_w);
  const std::vector<A> beta = load_param<A>(p.input("beta"));
  std::vector<A> rm = load_param<A>(p.input("running_mean")), rv = load_param<A>(p.input("running_var"));
  const Tensor& x = p.x();
  Tensor y(p.out_dtype, x.shape());
  const bool batch_stats = c.training || !c.track_running_stats;
  const bool update = c.training && c.track_running_stats;
  std::int64_t tracked = c.num_batches_tracked;
  const bool saved = batch_stats && l.steps == 1;  // the saved batch statistics of one call
  Tensor smean(saved_stat_dtype(p), Shape{saved ? l.c : 0}), srstd(saved_stat_dtype(p), Shape{saved ? l.c : 0});
  auto at = [&](std::int64_t s, std::int64_t i, std::int64_t ch) { return ((s * l.n + i) * l.c + ch) * l.spatial; };
  for (std::int64_t s = 0; s < l.steps; ++s) {
    double a = 0;
    if (update) {
      ++tracked;
      a = c.momentum ? *c.momentum : 1.0 / static_cast<double>(tracked);
    }
    const A keep = static_cast<A>(1.0 - a);
    RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel if (x.size() > 32768)
    {
      std::vector<A> buf;
      errors.run([&] { buf.resize(static_cast<std::size_t>(batch_stats ? m : l.spatial)); });
#pragma omp for schedule(static)
      for (std::int64_t ch = 0; ch < l.c; ++ch) errors.run([&] {
        A* b = buf.data();
        const A g = gamma.empty() ? A(1) : gamma[ch], bt = beta.empty() ? A(0) : beta[ch];
        if (!batch_stats) {
          // (not acc_inverse's cap: running_var 0 with eps 0 makes the exact y +-inf or NaN)
          const double inv = inv_scaled_denominator(static_cast<double>(rv[ch]), 1.0, false, c);
          const A r = static_cast<A>(inv);
          const A mu = rm[ch];
          // 1/D beyond A's range though finite (running_var 0 and eps below ~1e-77 in binary32):
          // in binary64, rounded once, so that x = running_mean gives 0 (0 * inf was NaN) and
          // every other y its overflow or its finite value (bn_eval_running_var0_tiny_eps).
          const bool wide = std::isinf(r) && std::isfinite(inv);
          for (std::int64_t i = 0; i < l.n; ++i) {
            load_row(x, at(s, i, ch), l.spatial, b);
            if (wide)
              for (std::int64_t j = 0; j < l.spatial; ++j)
                b[j] = static_cast<A>((static_cast<double>(b[j]) - static_cast<double>(mu)) * inv * static_cast<double>(g) + static_cast<double>(bt));
            else
              for (std::int64_t j = 0; j < l.spatial; ++j) b[j] = (b[j] - mu) * r * g + bt;
            store_row(y, at(s, i, ch), l.spatial, b);
          }
          return;  // (the next channel)
        }
        for (std::int64_t i = 0; i < l.n; ++i) load_row(x, at(s, i, ch), l.spatial, b + i * l.spatial);
        const GroupStats<A> st = normalize_in_place(b, m, true, dof, c);
        if (saved) {
          double mu = 0, r = 0;
          saved_statistics(st, dof, c, mu, r);
          smean.set(ch, mu);
          srstd.set(ch, r);
        }
        if (c.affine != Affine::none)
          for (std::int64_t j = 0; j < m; ++j) b[j] = b[j] * g + bt;
        for (std::int64_t i = 0; i < l.n; ++i) store_row(y, at(s, i, ch), l.spatial, b + i * l.spatial);
        if (!update) return;  // (the next channel)
        if (st.nonfinite) {
          rm[ch] = rv[ch] = std::numeric_limits<A>::quiet_NaN();
          return;  // (the next channel)
        }
        const double mu = static_cast<double>(st.mu_s) / st.s;
        const double q = static_cast<double>(c.running_variance == Variance::unbiased ? m - 1 : m);
        const double vu = static_cast<double>(st.ss) / q / st.s / st.s;  // s^2 may overflow for f64
        rm[ch] = keep * rm[ch] + static_cast<A>(a * mu);
        rv[ch] = keep * rv[ch] + static_cast<A>(a * vu);
      });
    }
    errors.rethrow();
  }
  out["y"] = std::move(y);
  if (c.track_running_stats) {
    Tensor orm(p.out_dtype, Shape{l.c}), orv(p.out_dtype, Shape{l.c});
    store_row(orm, 0, l.c, rm.data());
    store_row(orv, 0, l.c, rv.data());
    out["running_mean"] = std::move(orm);
    out["running_var"] = std::move(orv);
  }
  if (saved) {
    out["mean"] = std::move(smean);
    out["rstd"] = std::move(srstd);
  }
}

}  // namespace

void batch_norm_forward(const Problem& p, Outputs& out) {
  if (detail::use_f64(p)) batch_norm_impl<double>(p, out);
  else batch_norm_impl<float>(p, out);
}

}  // namespace normcheck::kernels::cpu
