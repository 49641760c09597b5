// Backward reference of group_norm and instance_norm, a plain loop template on T.
//
// Each group (n, g) is contiguous (group_norm.hpp), m = (C/G) * spatial values; its input
// gradient is normalize_group_backward's (row_norm_backward.hpp: formula, condition
// magnitude, exactness) with the per-channel gain gamma[ch] (1 + w for one_plus_w) of each
// element; dgamma[ch] = sum over n and the spatial positions of dy n, dbeta[ch] = sum dy
// (R = N * spatial values each).
#pragma once

#include "core/region_errors.hpp"
#include "ops/common/row_norm_backward.hpp"
#include "spec/layout.hpp"

namespace normcheck::reference {

/// group_norm / instance_norm backward of a validated problem (x [N, C, *spatial], dy of x's
/// shape): dx (x's shape), dgamma, dbeta ([C]) per affine, each with its condition magnitude.
template <class T>
ExactOutputs group_norm_backward(const Problem& p) {
  const ChannelLayout l = channel_layout(p);
  const std::int64_t G = p.op == Op::instance_norm ? l.c : p.conv.num_groups;
  const std::int64_t cpg = l.c / G, m = cpg * l.spatial;
  const std::int64_t dof = p.conv.variance == Variance::unbiased ? m - 1 : m;
  std::vector<T> gain, param;
  affine_gain_and_param(p.conv, detail::load_all<T>(p.input("gamma")), gain, param);
  const Tensor& x = p.x();
  const Tensor& dyt = p.inputs.at("dy");
  ExactOutput dx = detail::make_output(p.out_dtype, x.shape());
  std::vector<T> nall(static_cast<std::size_t>(x.size())), nuall(nall.size());
  RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel for schedule(dynamic, 1) if (x.size() > detail::kParallelMin)
  for (std::int64_t grp = 0; grp < l.n * G; ++grp) errors.run([&] {
    const std::int64_t off = grp * m, ch0 = (grp % G) * cpg;
    std::vector<T> xg(static_cast<std::size_t>(m)), dg(xg.size()), gx(xg.size()), gg, pg;
    std::vector<double> cg(xg.size());  // the group's condition magnitudes, kept by put()
    if (!gain.empty()) { gg.resize(xg.size()); pg.resize(xg.size()); }
    for (std::int64_t j = 0; j < m; ++j) {
      xg[j] = T(x.get(off + j));
      dg[j] = T(dyt.get(off + j));
      if (!gain.empty()) { gg[j] = gain[ch0 + j / l.spatial]; pg[j] = param[ch0 + j / l.spatial]; }
    }
    normalize_group_backward(xg.data(), dg.data(), m, true, dof, p.conv, gg.empty() ? nullptr : gg.data(),
                             pg.empty() ? nullptr : pg.data(), gx.data(), cg.data(), nall.data() + off, nuall.data() + off);
    for (std::int64_t j = 0; j < m; ++j) detail::put(dx, off + j, gx[j], cg[j]);
  });
  errors.rethrow();
  ExactOutputs o;
  o.emplace("dx", std::move(dx));
  if (p.conv.affine != Affine::none) {
    ParamGrad<T> pgr(l.c);
    for (std::int64_t i = 0; i < x.size(); ++i) pgr.add((i / l.spatial) % l.c, T(dyt.get(i)), nall[i], nuall[i]);
    pgr.emit(o, p.out_dtype, p.inputs.at("gamma").shape(), true, p.conv.affine == Affine::gamma_beta);
  }
  return o;
}

}  // namespace normcheck::reference
