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
// unscaled normalization (normalize_group with no affine: ([LN] (1 - 2/d)|x_i| + mean|x|, RMS |x_i|; + k|n_i|
// mean|n x|)/D + |n_i|):
//   y: |1 + s| c_n + |s n| + |b|                 (x terms, then the s and b terms);
//   h: |x| + |g| c_y + |g y|                     (identity path, y's terms, the g term).
#pragma once

#include "ops/common/certified_rows.hpp"
#include "ops/common/family_common.hpp"
#include "ops/common/row_norm.hpp"

namespace normcheck::reference {

/// ada_layer_norm / ada_rms_norm forward in T; with `fast`, each row first in double-double
/// with a certified radius (ops/common/certified_rows.hpp: bit-identical to T's values; the
/// condition magnitudes in cond_t, a bound, as normalize_group's).
template <class T>
ExactOutputs ada_norm(const Problem& p, bool fast = false) {
  using std::abs;
  const Tensor& x = p.x();
  const Shape& xs = x.shape();
  const std::int64_t d = xs.back(), rows = x.size() / d, per_batch = rows / xs.front();
  Convention c0 = p.conv;
  c0.affine = Affine::none;
  // scale, shift, gate as their exact binary64 values.
  const std::vector<double> sc = detail::load_all<double>(p.input("scale")), sh = detail::load_all<double>(p.input("shift")),
                            gt = detail::load_all<double>(p.input("gate"));
  const bool center = p.op == Op::ada_layer_norm, gated = p.conv.gated;
  ExactOutput y = detail::make_output(p.out_dtype, xs), h = detail::make_output(p.out_dtype, gated ? xs : Shape{0});
  auto one_row = [&](std::int64_t r, auto tag) {
    using U = typename decltype(tag)::type;
    using C = cond_t<U>;
    const std::int64_t off = r * d, pb = (r / per_batch) * d;
    std::vector<U> xr(static_cast<std::size_t>(d)), nr(xr.size());
    std::vector<double> cn(xr.size());
    for (std::int64_t j = 0; j < d; ++j) xr[j] = U(x.get(off + j));
    normalize_group(xr.data(), d, center, c0, static_cast<const U*>(nullptr), static_cast<const U*>(nullptr), nr.data(), cn.data());
    for (std::int64_t j = 0; j < d; ++j) {
      const U s(sc[pb + j]), b(sh[pb + j]);
      const U one_s = U(1) + s;
      const U yv = one_s * nr[j] + b;
      const C cy = C(abs(cond_of(one_s))) * C(cn[j]) + C(abs(cond_of(U(s * nr[j])))) + C(abs(cond_of(b)));
      detail::put(y, off + j, yv, static_cast<double>(cy));
      if (gated) {
        const U g(gt[pb + j]);
        const U hv = xr[j] + g * yv;
        detail::put(h, off + j, hv, static_cast<double>(C(abs(cond_of(xr[j]))) + C(abs(cond_of(g))) * cy + C(abs(cond_of(U(g * yv))))));
      }
    }
  };
  detail::certified_rows<T>(rows, fast, x.size() > detail::kParallelMin, one_row);
  ExactOutputs o;
  o.emplace("y", std::move(y));
  if (gated) o.emplace("h", std::move(h));
  return o;
}

}  // namespace normcheck::reference
