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
// in quantization steps, checks/metrics.hpp stab_of), clamped to +-qmax where the
// convention saturates (the clamp is 1-Lipschitz: a kernel within k u c of v is within k u c
// of clamp(v)); where the quantized value is not finite (no saturation: e5m2's +-inf,
// e4m3fn's NaN) that value itself; 0 for int8 where v is NaN.
//
// Condition magnitudes (first order, relative perturbations u of every input and of each
// rounded intermediate, triangle inequality):
//   static:   c_v = c_j / s + |v_j|                         (the scale's own perturbation)
//   dynamic:  s = max|y| / qmax, amax = |y_k|, c_a = max_i c_i (the max moves by at most the
//             largest change of one y_i, whichever is the largest after it):
//             c_s = s (c_a / |y_k| + 1), and
//             c_v = (c_j + |y_j| c_a / |y_k|) / s + |v_j|   (|v_j|: the division by s, whose
//             rounding moves v_j by <= u |v_j|; s's own rounding enters through c_a/|y_k|'s "+")
//   floored:  s = scale_floor is exact: c_v = c_j / s + |v_j|, c_s = 0.
// The multiplier form reports 1/s with c = (1/s)(c_s / s). The scale output is measured
// in binary32 like any output.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>
#include <vector>

#include "ops/common/family_common.hpp"
#include "ops/common/row_norm.hpp"
#include "ops/fused_add_norm/fused_add_norm.hpp"
#include "ops/fused_add_norm/reference.hpp"
#include "ops/quant_norm/quant_norm.hpp"
#include "spec/layout.hpp"

namespace normcheck::reference {

/// A condition magnitude (a bound, no correct rounding needed) as a double: MPFR's value
/// converted, a ball's midpoint (DDBall's certified conversion could refuse a boundary).
template <class T>
double cond_value(const T& v) {
  if constexpr (std::is_same_v<T, DDBall>) return cond_of(v);
  else return static_cast<double>(v);
}

/// Whether a and b are the same ball (DDBall: midpoint and radius, bit for bit); false for
/// any other T, whose values compare exactly. Two balls that are one set hold max(A, B) for
/// any A, B in it, so the maximum needs no order between them: a row's largest |y| shared by
/// two elements (equal or opposite bf16/f16 x) has two equal balls that no comparison can
/// order (they overlap), and those rows went to MPFR (14% of bf16 rows of width 768). MPFR's
/// `>` keeps the first of equal values, as this does.
template <class T>
bool same_ball(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, DDBall>) return a.hi() == b.hi() && a.lo() == b.lo() && a.radius() == b.radius();
  else return false;
}

/// What every row of a quantizing problem shares, as T: the parameters, the static scale (in
/// the divisor form), qmax and the scale floor.
template <class T>
struct QuantParams : FusedParams<T> {
  T s_static{1}, qmax, floor;
  explicit QuantParams(const Problem& p)
      : FusedParams<T>(p), qmax(ops::quant::quant_max(p.out_dtype)), floor(p.conv.scale_floor) {
    if (p.conv.quant_scale == QuantScale::static_per_tensor) {
      const T given(p.inputs.at("scale").get(0));
      s_static = p.conv.scale_form == ScaleForm::divisor ? given : T(1) / given;
    }
  }
};

/// The outputs of a quantizing problem, filled row by row.
struct QuantOutputs {
  ExactOutput y, h, scale;
};

/// Row r in T: h and z (with a residual), the norm's y, the scale, the quantized outputs
/// (every element of the row's outputs written).
template <class T>
void quant_row(const Problem& p, const RowLayout& l, std::int64_t r, const QuantParams<T>& a, QuantOutputs& o) {
  using std::abs;
  using std::isnan;
  const Convention& c = p.conv;
  const bool residual = ops::fused::has_residual(p), dynamic = c.quant_scale == QuantScale::dynamic_per_token;
  const bool divisor = c.scale_form == ScaleForm::divisor;
  const DType out = p.out_dtype;
  const double hi = out == DType::int8 ? 127.0 : ops::quant::quant_max(out), lo = out == DType::int8 ? -128.0 : -hi;
  std::vector<T> z(static_cast<std::size_t>(l.m)), mag(z), yr(z);
  std::vector<double> cy(static_cast<std::size_t>(l.m));
  if (residual) residual_row(p, r, l.m, a.bias, z.data(), mag.data(), &o.h);
  else
    for (std::int64_t j = 0; j < l.m; ++j) z[static_cast<std::size_t>(j)] = T(p.x().get(r * l.m + j));
  normalize_group(z.data(), l.m, p.op.def().centers, c, a.gamma.data(), a.beta.data(), yr.data(), cy.data(),
                  residual ? mag.data() : nullptr);
  T s = a.s_static;
  T rel_s(0);  // s's relative condition magnitude (dynamic, not floored)
  if (dynamic) {
    std::int64_t k = 0;
    bool nan = false;
    for (std::int64_t j = 0; j < l.m; ++j) nan = nan || isnan(yr[static_cast<std::size_t>(j)]);
    if (!nan)  // (a ball compared with itself overlaps: start past k)
      for (std::int64_t j = 1; j < l.m; ++j) {
        const T a = abs(yr[static_cast<std::size_t>(j)]), b = abs(yr[static_cast<std::size_t>(k)]);
        if (same_ball(a, b)) continue;  // k's ball holds the larger of the two as well
        if (a > b) k = j;
      }
    const T amax = nan ? T(NAN) : T(abs(yr[static_cast<std::size_t>(k)]));
    s = amax / a.qmax;
    bool floored = false;
    if (s < a.floor) s = a.floor, floored = true;  // NaN stays NaN
    else if (amax > T(0)) {
      // amax's condition magnitude: max_j c_j, not the argmax's own c_k. The max of |y_j| moves
      // by at most the largest change of one y_j (it is 1-Lipschitz in the max norm), whichever
      // value is the largest after the change; c_k alone understates it where another value
      // is tied with the max or nearer to it than a kernel's error. And the argmax of such
      // near-ties is not the same on both evaluations: MPFR separates values 1e-38 apart
      // (an f16 row plus an f32 residual of subnormals) that the ball path cannot, so the two
      // paths kept different magnitudes for one scale (equivalence run, seed 17).
      double cmax = 0;
      for (std::int64_t j = 0; j < l.m; ++j) cmax = std::max(cmax, cy[static_cast<std::size_t>(j)]);
      rel_s = T(cmax) / amax;
    }
    // s == floor (floored, or equal to it): the scale is the exact floor. (A ball decides the
    // equality by two strict comparisons, or leaves the row to MPFR.)
    const bool at_floor = floored || (!(s < a.floor) && !(s > a.floor));
    const T cs = s * (rel_s + (at_floor ? T(0) : T(1)));
    if (divisor) detail::put(o.scale, r, s, cond_value(cs));
    else detail::put(o.scale, r, T(1) / s, cond_value(cs / (s * s)));
    // The scale as stored (binary32) is what v divides by (the multiplier form: the
    // stored reciprocal); NaN stays NaN.
    if (!isnan(s)) {
      detail::test_rounding(DType::f32, divisor ? s : T(T(1) / s));  // (MPFR: an undecided rounding reruns wider)
      s = divisor ? T(round_to(DType::f32, s)) : T(1) / T(round_to(DType::f32, T(1) / s));
    }
  }
  // Condition magnitudes in cond_t<T> (T itself for MPFR and double; binary64 from the
  // midpoints for DDBall: a bound needs no correct rounding, row_norm.hpp cond_t).
  using C = cond_t<T>;
  const C rel_c = cond_of(rel_s), s_c = cond_of(s);
  for (std::int64_t j = 0; j < l.m; ++j) {
    const std::int64_t i = r * l.m + j;
    const T yj = yr[static_cast<std::size_t>(j)];
    const T v = yj / s;
    const double cv = cond_value(C((C(cy[static_cast<std::size_t>(j)]) + C(abs(cond_of(yj))) * rel_c) / s_c + C(abs(cond_of(v)))));
    detail::test_rounding(out, v, c.rounding);  // (MPFR: an undecided rounding of v reruns wider)
    const double q = ops::quant::quantize(out, c, v);
    T e = v;
    if (isnan(v)) e = out == DType::int8 ? T(0) : v;
    else if (c.saturate) e = v > T(hi) ? T(hi) : v < T(lo) ? T(lo) : v;
    else if (!std::isfinite(q)) e = T(q);
    detail::put_exact(o.y, i, e);
    o.y.set_rounded(static_cast<std::size_t>(i), q);
    o.y.cond.set(static_cast<std::size_t>(i), cv);
  }
}

/// y (quantized), scale (dynamic) and h (with a residual), each row on the certified fast path
/// where `fast` and it decides (certified_rows.hpp), else in T.
template <class T>
ExactOutputs quant_rows(const Problem& p, bool fast = false) {
  const Convention& c = p.conv;
  const RowLayout l = row_layout(p);
  const Tensor& x = p.x();
  const bool residual = ops::fused::has_residual(p), dynamic = c.quant_scale == QuantScale::dynamic_per_token;
  QuantOutputs o{detail::make_output(p.out_dtype, x.shape()),
                 detail::make_output(residual ? ops::fused::h_dtype(p) : p.out_dtype, residual ? x.shape() : Shape{0}),
                 detail::make_output(DType::f32, dynamic ? Shape{l.rows} : Shape{0})};
  o.y.rounding = c.rounding;  // y's stored roundings follow the option (ExactOutput::rounded_at)
  const QuantParams<T> a(p);
  const std::optional<QuantParams<DDBall>> a_dd = fast ? std::optional<QuantParams<DDBall>>(p) : std::nullopt;
  detail::certified_rows<T>(l.rows, fast, x.size() >= detail::kParallelMin, [&](std::int64_t r, auto tag) {
    using U = typename decltype(tag)::type;
    if constexpr (std::is_same_v<U, DDBall>) quant_row<DDBall>(p, l, r, *a_dd, o);
    else quant_row<T>(p, l, r, a, o);
  });
  ExactOutputs out;
  out.emplace("y", std::move(o.y));
  if (dynamic) out.emplace("scale", std::move(o.scale));
  if (residual) out.emplace("h", std::move(o.h));
  return out;
}

}  // namespace normcheck::reference
