// Reference of the quantizing norms (quant_norm.hpp has the formula): a plain loop template
// on T, MPFR at working_bits(p) (binary64 for quick checks). Per row: the norm's exact y_j with
// its condition magnitude c_j (normalize_group; with a residual, the magnitudes of
// ops/fused_add_norm/reference.hpp), the scale s in the divisor form, v_j = y_j / s exactly,
// then the one quantization of v_j.
//
// A dynamic scale is an output stored in binary32, and dequantization reads that value
// (y ~ y_q * scale): v_j divides by the scale as stored, s32 = fl32(s) (the multiplier form:
// multiplies by fl32(1/s)), as vLLM's and TensorRT-LLM's per-token kernels do. Where s is a
// normal binary32 this moves v_j by at most u |v_j|, which c_v below already grants; where
// it is not (a row of tiny values: s underflows to a subnormal or 0), it is the only value
// a kernel can be judged against (found by normcheck fuzz: LN of [0, 0, -2^-149] into e5m2
// has s ~ 1.5e-47, stored as 0).
//
// The exact value reported for y_q is v_j itself (the pre-quantization value; checks measure
// in quantization steps, checks/metrics.hpp quantized_stab), clamped to +-qmax where the
// convention saturates (the clamp is 1-Lipschitz: a kernel within k u c of v is within k u c
// of clamp(v)); where the quantized value is not finite (no saturation: e5m2's +-inf,
// e4m3fn's NaN) that value itself; 0 for int8 where v is NaN.
//
// Condition magnitudes (first order, relative perturbations u of every input and of each
// rounded intermediate, triangle inequality):
//   static:   c_v = c_j / s + |v_j|                         (the scale's own perturbation)
//   dynamic:  s = max|y| / qmax, amax = |y_k|: c_s = s (c_k / |y_k| + 1), and
//             c_v = (c_j + |y_j| c_k / |y_k|) / s + |v_j|   (|v_j|: the division by s, whose
//             rounding moves v_j by <= u |v_j|; s's own rounding enters through c_k/|y_k|'s "+")
//   floored:  s = scale_floor is exact: c_v = c_j / s + |v_j|, c_s = 0.
// The multiplier form reports 1/s with c = (1/s)(c_s / s). The scale output is measured
// in binary32 like any output.
#pragma once

#include <cmath>
#include <vector>

#include "ops/common/family_common.hpp"
#include "ops/common/row_norm.hpp"
#include "ops/fused_add_norm/fused_add_norm.hpp"
#include "ops/fused_add_norm/reference.hpp"
#include "ops/quant_norm/quant_norm.hpp"
#include "spec/layout.hpp"

namespace normcheck::reference {

template <class T>
ExactOutputs quant_rows(const Problem& p) {
  using std::abs;
  using std::isnan;
  const Convention& c = p.conv;
  const RowLayout l = row_layout(p);
  const Tensor& x = p.x();
  const auto gamma = detail::load_all<T>(p.input("gamma")), beta = detail::load_all<T>(p.input("beta"));
  const auto bias = detail::load_all<T>(p.input("bias"));
  const bool residual = ops::fused::has_residual(p), dynamic = c.quant_scale == QuantScale::dynamic_per_token;
  const bool divisor = c.scale_form == ScaleForm::divisor;
  const DType out = p.out_dtype;
  const T qmax(ops::quant::quant_max(out)), floor(c.scale_floor);
  const double hi = out == DType::int8 ? 127.0 : ops::quant::quant_max(out), lo = out == DType::int8 ? -128.0 : -hi;
  ExactOutput y = detail::make_output(out, x.shape());
  ExactOutput h = detail::make_output(residual ? ops::fused::h_dtype(p) : out, residual ? x.shape() : Shape{0});
  ExactOutput scale = detail::make_output(DType::f32, dynamic ? Shape{l.rows} : Shape{0});
  // Static: s (divisor form) from the input, exact.
  T s_static(1);
  if (!dynamic) {
    const T given(p.inputs.at("scale").get(0));
    s_static = divisor ? given : T(1) / given;
  }
  const bool center = p.op.def().centers;
#pragma omp parallel for schedule(dynamic, 1) if (x.size() >= detail::kParallelMin)
  for (std::int64_t r = 0; r < l.rows; ++r) {
    std::vector<T> z(static_cast<std::size_t>(l.m)), mag(z), yr(z);
    std::vector<double> cy(static_cast<std::size_t>(l.m));
    if (residual) residual_row(p, r, l.m, bias, z.data(), mag.data(), &h);
    else
      for (std::int64_t j = 0; j < l.m; ++j) z[static_cast<std::size_t>(j)] = T(x.get(r * l.m + j));
    normalize_group(z.data(), l.m, center, c, gamma.data(), beta.data(), yr.data(), cy.data(), residual ? mag.data() : nullptr);
    T s = s_static;
    T rel_s(0);  // s's relative condition magnitude (dynamic, not floored)
    if (dynamic) {
      std::int64_t k = 0;
      bool nan = false;
      for (std::int64_t j = 0; j < l.m; ++j) {
        nan = nan || isnan(yr[static_cast<std::size_t>(j)]);
        if (abs(yr[static_cast<std::size_t>(j)]) > abs(yr[static_cast<std::size_t>(k)])) k = j;
      }
      const T amax = nan ? T(NAN) : T(abs(yr[static_cast<std::size_t>(k)]));
      s = amax / qmax;
      if (s < floor) s = floor;  // NaN stays NaN
      else if (amax > 0) rel_s = T(cy[static_cast<std::size_t>(k)]) / amax;
      const T cs = s * (rel_s + (s == floor ? T(0) : T(1)));
      if (divisor) detail::put(scale, r, s, static_cast<double>(cs));
      else detail::put(scale, r, T(1) / s, static_cast<double>(cs / (s * s)));
      // The scale as stored (binary32) is what v divides by (the multiplier form: the
      // stored reciprocal); NaN stays NaN.
      if (!isnan(s)) s = divisor ? T(round_to(DType::f32, s)) : T(1) / T(round_to(DType::f32, T(1) / s));
    }
    for (std::int64_t j = 0; j < l.m; ++j) {
      const std::int64_t i = r * l.m + j;
      const T yj = yr[static_cast<std::size_t>(j)];
      const T v = yj / s;
      const double cv = static_cast<double>((T(cy[static_cast<std::size_t>(j)]) + abs(yj) * rel_s) / s + abs(v));
      const double q = ops::quant::quantize(out, c, v);
      T e = v;
      if (isnan(v)) e = out == DType::int8 ? T(0) : v;
      else if (c.saturate) e = v > T(hi) ? T(hi) : v < T(lo) ? T(lo) : v;
      else if (!std::isfinite(q)) e = T(q);
      y.exact[static_cast<std::size_t>(i)] = static_cast<long double>(e);
      y.exact64[static_cast<std::size_t>(i)] = round_to(DType::f64, e);
      y.rounded.set(i, q);
      y.cond[static_cast<std::size_t>(i)] = cv;
    }
  }
  ExactOutputs o;
  o.emplace("y", std::move(y));
  if (dynamic) o.emplace("scale", std::move(scale));
  if (residual) o.emplace("h", std::move(h));
  return o;
}

}  // namespace normcheck::reference
