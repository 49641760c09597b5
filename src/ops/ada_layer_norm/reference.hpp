// Reference for ada_layer_norm and ada_rms_norm, a plain loop template on the number type T.
//
// Formulas (shared/spec/worked-examples.md "Formulas"; Peebles & Xie 2023 for AdaLN(-Zero)):
// x is [B, *, d] (tokens in the middle), scale s, shift b and gate g are [B, d] and
// broadcast over the tokens of their batch element:
//   n = N0(x) over the last dim (ada_layer_norm: layer_norm without affine; ada_rms_norm:
//       rms_norm without affine; row_norm.hpp with the case's eps, placement, variance),
//   y = (1 + s) n + b,     and with `gated`:  h = x + g y  (g = 0 gives h = x exactly).
// A row holding NaN or an infinity gives NaN for its y (and h) only.
//
// Condition magnitudes (triangle inequality, O(d) per row), with c_n the bound of the
// unscaled normalization (normalize_group with no affine: (|x_i| + [LN] mean|x| + k|n_i|
// mean|n x|)/D + |n_i|):
//   y: |1 + s| c_n + |s n| + |b|                 (x terms, then the s and b terms);
//   h: |x| + |g| c_y + |g y|                     (identity path, y's terms, the g term).
#pragma once

#include "ops/common/family_common.hpp"
#include "ops/common/row_norm.hpp"

namespace normcheck::reference {

template <class T>
ExactOutputs ada_norm(const Problem& p) {
  using std::abs;
  const Tensor& x = p.x();
  const Shape& xs = x.shape();
  const std::int64_t d = xs.back(), rows = x.size() / d, per_batch = rows / xs.front();
  Convention c0 = p.conv;
  c0.affine = Affine::none;
  const std::vector<T> sc = detail::load_all<T>(p.input("scale")), sh = detail::load_all<T>(p.input("shift")),
                       gt = detail::load_all<T>(p.input("gate"));
  const bool center = p.op == Op::ada_layer_norm, gated = p.conv.gated;
  ExactOutput y = detail::make_output(p.out_dtype, xs), h = detail::make_output(p.out_dtype, gated ? xs : Shape{0});
#pragma omp parallel for schedule(dynamic, 1) if (x.size() > detail::kParallelMin)
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t off = r * d, pb = (r / per_batch) * d;
    std::vector<T> xr(static_cast<std::size_t>(d)), nr(xr.size());
    std::vector<double> cn(xr.size());
    for (std::int64_t j = 0; j < d; ++j) xr[j] = T(x.get(off + j));
    normalize_group(xr.data(), d, center, c0, static_cast<const T*>(nullptr), static_cast<const T*>(nullptr), nr.data(), cn.data());
    for (std::int64_t j = 0; j < d; ++j) {
      const T& s = sc[pb + j];
      const T& b = sh[pb + j];
      const T yv = (T(1) + s) * nr[j] + b;
      const T cy = abs(T(1) + s) * T(cn[j]) + abs(s * nr[j]) + abs(b);
      detail::put(y, off + j, yv, static_cast<double>(cy));
      if (gated) {
        const T& g = gt[pb + j];
        detail::put(h, off + j, xr[j] + g * yv, static_cast<double>(abs(xr[j]) + abs(g) * cy + abs(g * yv)));
      }
    }
  }
  ExactOutputs o;
  o.emplace("y", std::move(y));
  if (gated) o.emplace("h", std::move(h));
  return o;
}

}  // namespace normcheck::reference
