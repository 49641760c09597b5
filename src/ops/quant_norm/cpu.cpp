// CPU norm + quantization: per row, [the residual add of ops/fused_add_norm/row_kernel.hpp],
// the two-pass, 2^-e-scaled normalization of ops/common/group_kernel.hpp and the affine in
// A (binary32; binary64 for f64 data or accumulation), then in A: the dynamic scale
// s = max(max_j |y_j| / qmax, scale_floor) (one division), v_j = y_j / s (divisor form; the
// multiplier form forms 1/s once and multiplies), and one conversion of v_j into out_dtype
// (round_to / round_to_saturating of core/dtype.hpp, from the exact binary32 value).
// Error of v_j: the norm's (m/8 + 10) u c_j worst case, two roundings for the scale and the
// division, two for the residual add: within 1 + 12 + sqrt(m) units of u c_v past the half
// step of the conversion (checks/metrics.hpp quantized_stab; op.cpp's budget row).
#include <cmath>
#include <limits>

#include "ops/fused_add_norm/fused_add_norm.hpp"
#include "ops/fused_add_norm/row_kernel.hpp"
#include "ops/quant_norm/quant_norm.hpp"

namespace normcheck::ops::quant {

namespace {

namespace kd = kernels::cpu::detail;

/// max_j |a_j|, NaN when some a_j is NaN.
template <class A>
A max_abs(const A* a, std::int64_t m) {
  A mx = 0;
  for (std::int64_t j = 0; j < m; ++j) {
    if (std::isnan(a[j])) return std::numeric_limits<A>::quiet_NaN();
    mx = std::fabs(a[j]) > mx ? std::fabs(a[j]) : mx;
  }
  return mx;
}

template <class A>
Outputs forward(const Problem& p, const Faults& f) {
  const Convention& c = p.conv;
  const RowLayout l = row_layout(p);
  const Tensor& x = p.x();
  const bool residual = fused::has_residual(p), dynamic = c.quant_scale == QuantScale::dynamic_per_token;
  const bool divisor = c.scale_form == ScaleForm::divisor;
  Tensor y(p.out_dtype, x.shape()), h(residual ? fused::h_dtype(p) : DType::f32, residual ? x.shape() : Shape{0});
  Tensor scale(DType::f32, Shape{dynamic ? l.rows : 0});
  const kd::AffineParams<A> aff(p);
  const fused::detail::ResidualAdd<A> add{p, h};
  const bool center = p.op.def().centers;
  const std::int64_t dof = kd::dof_of(c, l.m);
  const A qmax = static_cast<A>(quant_max(p.out_dtype)), floor = static_cast<A>(c.scale_floor);
  Convention qc = c;  // the conversion's convention (the faults change it)
  if (f.no_saturation) qc.saturate = false;
  if (f.toward_zero) qc.rounding = Rounding::toward_zero;
  // Pass 1: every row's y (and its max |y|, or max |n| for the pre-gamma fault).
  std::vector<A> ys(static_cast<std::size_t>(x.size())), amax(static_cast<std::size_t>(l.rows));
  for (std::int64_t r = 0; r < l.rows; ++r) {
    A* a = ys.data() + r * l.m;
    if (residual) add.row(r, l.m, a);
    else kd::load_row(x, r * l.m, l.m, a);
    kd::normalize_in_place(a, l.m, center, dof, c);
    if (f.scale_pre_gamma) amax[static_cast<std::size_t>(r)] = max_abs(a, l.m);
    aff.apply(a, l.m);
    if (!f.scale_pre_gamma) amax[static_cast<std::size_t>(r)] = max_abs(a, l.m);
  }
  if (f.per_tensor) {
    A all = 0;
    for (A v : amax) all = std::isnan(v) || std::isnan(all) ? std::numeric_limits<A>::quiet_NaN() : (v > all ? v : all);
    for (A& v : amax) v = all;
  }
  // Pass 2: the scale and the conversion.
  const A given = dynamic ? A(1) : kd::load_param<A>(p.input("scale"))[0];
  for (std::int64_t r = 0; r < l.rows; ++r) {
    const A* a = ys.data() + r * l.m;
    A s = given, inv = given;  // divisor s, multiplier inv
    if (dynamic) {
      s = amax[static_cast<std::size_t>(r)] / qmax;
      if (s < floor) s = floor;
      inv = A(1) / s;
      scale.set(r, static_cast<double>(divisor ? s : inv));
    }
    for (std::int64_t j = 0; j < l.m; ++j) {
      const A v = divisor ? a[j] / s : a[j] * inv;
      y.set(r * l.m + j, quantize(p.out_dtype, qc, static_cast<double>(v)));
    }
  }
  Outputs o{{"y", std::move(y)}};
  if (dynamic) o["scale"] = std::move(scale);
  if (residual) o["h"] = std::move(h);
  return o;
}

}  // namespace

double quant_max(DType t) noexcept { return t == DType::int8 ? 127.0 : format_info(t).max_finite; }

Outputs cpu_with(const Problem& p, const Faults& f) {
  return kd::use_f64(p) ? forward<double>(p, f) : forward<float>(p, f);
}

void cpu(const ValidProblem& p, Outputs& out) { out = cpu_with(*p, {}); }

}  // namespace normcheck::ops::quant
