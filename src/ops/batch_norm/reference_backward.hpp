// Backward reference of batch_norm (one call, sequence = false), a plain loop template on T.
//
// Training (or track_running_stats = false: batch statistics): per channel the m = N * spatial
// values form one group and dx is normalize_group_backward's (row_norm_backward.hpp), through
// the batch statistics: changing one sample changes every sample's gradient. The running-stat
// update is a buffer write, not differentiated.
// Eval with running stats: the statistics are constants, n = (x - rm)/D(rv) elementwise, so
//   dx_i = g dy_i / D,   c(dx_i) = (|g dy_i| (1 + k |rv|/(2 D^2)) + |p dy_i|) / D
// (dy and x-free: the terms of dy, of rv through D, and of the parameter p = gamma or w).
// Both: dgamma[ch] = sum dy n, dbeta[ch] = sum dy over the channel's N * spatial values, with
// c(dgamma) = sum (|dy n| + |dy| nu), nu = n's condition magnitude under x (and rm, rv in eval:
// (|x| + |rm|)/D + |n| k |rv|/(2 D^2)).
#pragma once

#include "core/region_errors.hpp"
#include "ops/common/row_norm_backward.hpp"
#include "spec/layout.hpp"

namespace normcheck::reference {

/// batch_norm backward of a validated problem (x [N, C, *spatial], sequence = false; dy of
/// x's shape): dx (x's shape), dgamma, dbeta ([C]) per affine, through the batch statistics
/// in training, with the running statistics as constants in eval.
template <class T>
ExactOutputs batch_norm_backward(const Problem& p) {
  using std::abs;
  const Convention& c = p.conv;
  const ChannelLayout l = channel_layout(p);
  const std::int64_t m = l.n * l.spatial, dof = c.variance == Variance::unbiased ? m - 1 : m;
  std::vector<T> gain, param;
  affine_gain_and_param(c, detail::load_all<T>(p.input("gamma")), gain, param);
  const std::vector<T> rm = detail::load_all<T>(p.input("running_mean")), rv = detail::load_all<T>(p.input("running_var"));
  const Tensor& x = p.x();
  const Tensor& dyt = p.inputs.at("dy");
  const bool batch_stats = c.training || !c.track_running_stats;
  auto at = [&](std::int64_t i, std::int64_t ch, std::int64_t j) { return (i * l.c + ch) * l.spatial + j; };
  ExactOutput dx = detail::make_output(p.out_dtype, x.shape());
  ParamGrad<T> pg(l.c);
  RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel for schedule(dynamic, 1) if (m * l.c > detail::kParallelMin)
  for (std::int64_t ch = 0; ch < l.c; ++ch) errors.run([&] {
    const T g = gain.empty() ? T(1) : gain[ch];
    if (!batch_stats) {
      const T D = denominator(rv[ch], c), k = denominator_sensitivity(rv[ch], D, c);
      const T rvt = k * abs(rv[ch]) / (T(2) * D * D);
      const T pa = param.empty() ? T(0) : abs(param[ch]);
      for (std::int64_t i = 0; i < l.n; ++i)
        for (std::int64_t j = 0; j < l.spatial; ++j) {
          const std::int64_t e = at(i, ch, j);
          const T xv(x.get(e)), dy(dyt.get(e));
          const T n = (xv - rm[ch]) / D;
          detail::put(dx, e, g * dy / D, static_cast<double>((abs(g * dy) * (T(1) + rvt) + pa * abs(dy)) / D));
          pg.add(ch, dy, n, (abs(xv) + abs(rm[ch])) / D + abs(n) * rvt);
        }
      return;  // (the next one)
    }
    std::vector<T> xg(static_cast<std::size_t>(m)), dg(xg.size()), gx(xg.size()), n(xg.size()), nu(xg.size()), gg, pp;
    std::vector<double> cg(xg.size());
    if (!gain.empty()) { gg.assign(xg.size(), gain[ch]); pp.assign(xg.size(), param[ch]); }
    for (std::int64_t i = 0; i < l.n; ++i)
      for (std::int64_t j = 0; j < l.spatial; ++j) {
        xg[i * l.spatial + j] = T(x.get(at(i, ch, j)));
        dg[i * l.spatial + j] = T(dyt.get(at(i, ch, j)));
      }
    normalize_group_backward(xg.data(), dg.data(), m, true, dof, c, gg.empty() ? nullptr : gg.data(),
                             pp.empty() ? nullptr : pp.data(), gx.data(), cg.data(), n.data(), nu.data());
    for (std::int64_t i = 0; i < l.n; ++i)
      for (std::int64_t j = 0; j < l.spatial; ++j) {
        const std::int64_t k = i * l.spatial + j;
        detail::put(dx, at(i, ch, j), gx[k], cg[k]);
        pg.add(ch, dg[k], n[k], nu[k]);
      }
  });
  errors.rethrow();
  ExactOutputs o;
  o.emplace("dx", std::move(dx));
  if (c.affine != Affine::none) pg.emit(o, p.out_dtype, p.inputs.at("gamma").shape(), true, c.affine == Affine::gamma_beta);
  return o;
}

}  // namespace normcheck::reference
