// Backward reference of ada_layer_norm and ada_rms_norm (gated = false), a plain loop
// template on T.
//
// y = (1 + s) n + b per token row (ada_norm.hpp), s and b [B, d] shared by the tokens of a
// batch element. dx per row is normalize_group_backward's (row_norm_backward.hpp) with the
// gain 1 + s[b] and the perturbed parameter s[b] (centered for ada_layer_norm); the
// modulation's gradients sum over the tokens of each batch element (R = tokens values):
//   ds[b, j] = sum_t dy n,  c = sum (|dy n| + |dy| nu);   db[b, j] = sum_t dy,  c = sum |dy|.
#pragma once

#include "core/region_errors.hpp"
#include "ops/common/row_norm_backward.hpp"

namespace normcheck::reference {

/// ada_layer_norm / ada_rms_norm backward of a validated problem (x [B, *, d], gated = false,
/// dy of x's shape): dx (x's shape), ds and db ([B, d]).
template <class T>
ExactOutputs ada_norm_backward(const Problem& p) {
  const Tensor& x = p.x();
  const Tensor& dyt = p.inputs.at("dy");
  const Shape& xs = x.shape();
  const std::int64_t d = xs.back(), rows = x.size() / d, per_batch = rows / xs.front();
  const std::int64_t dof = p.conv.variance == Variance::unbiased ? d - 1 : d;
  const std::vector<T> sc = detail::load_all<T>(p.input("scale"));
  std::vector<T> one_plus_s(sc);
  for (auto& v : one_plus_s) v = T(1) + v;
  const bool center = p.op == Op::ada_layer_norm;
  ExactOutput dx = detail::make_output(p.out_dtype, xs);
  std::vector<T> nall(static_cast<std::size_t>(x.size())), nuall(nall.size());
  RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel for schedule(dynamic, 1) if (x.size() > detail::kParallelMin)
  for (std::int64_t r = 0; r < rows; ++r) errors.run([&] {
    const std::int64_t off = r * d, pb = (r / per_batch) * d;
    std::vector<T> xr(static_cast<std::size_t>(d)), dr(xr.size()), gx(xr.size());
    std::vector<double> cr(xr.size());  // the row's condition magnitudes, kept by put()
    for (std::int64_t j = 0; j < d; ++j) { xr[j] = T(x.get(off + j)); dr[j] = T(dyt.get(off + j)); }
    normalize_group_backward(xr.data(), dr.data(), d, center, dof, p.conv, one_plus_s.data() + pb, sc.data() + pb, gx.data(),
                             cr.data(), nall.data() + off, nuall.data() + off);
    for (std::int64_t j = 0; j < d; ++j) detail::put(dx, off + j, gx[j], cr[j]);
  });
  errors.rethrow();
  ExactOutputs o;
  o.emplace("dx", std::move(dx));
  ParamGrad<T> pg(static_cast<std::int64_t>(sc.size()));
  for (std::int64_t i = 0; i < x.size(); ++i) pg.add((i / d / per_batch) * d + i % d, T(dyt.get(i)), nall[i], nuall[i]);
  pg.emit(o, p.out_dtype, p.inputs.at("scale").shape(), true, true, "ds", "db");
  return o;
}

}  // namespace normcheck::reference
