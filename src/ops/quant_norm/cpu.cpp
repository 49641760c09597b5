// CPU norm + quantization: per row, [the residual add of ops/fused_add_norm/row_kernel.hpp],
// the two-pass, 2^-e-scaled normalization of ops/common/group_kernel.hpp in A (binary32;
// binary64 for f64 data or accumulation), the reciprocal and the affine in binary64, then
// in binary64: the dynamic scale
// s = max(max_j |y_j| / qmax, scale_floor) (one division) stored in binary32, v_j = y_j / s
// with that stored s (divisor form; the multiplier form forms fl32(1/s) once and multiplies),
// and one conversion of v_j into out_dtype
// (round_to / round_to_saturating of core/dtype.hpp, from the exact binary32 value).
// Error of v_j: the norm's (m/8 + 10) u c_j worst case, two roundings for the scale and the
// division, two for the residual add: within 1 + 12 + sqrt(m) units of u c_v past the half
// step of the conversion (checks/metrics.hpp stab_of; op.cpp's budget row).
#include <cmath>
#include <limits>

#include "ops/fused_add_norm/fused_add_norm.hpp"
#include "ops/fused_add_norm/row_kernel.hpp"
#include "ops/quant_norm/quant_norm.hpp"

namespace normcheck::ops::quant {

namespace {

namespace kd = kernels::cpu::detail;

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
  // Pass 1: every row's y in binary64 (and its max |y|, or max |n| for the pre-gamma fault):
  // y_j = g_j (x s - mu_s)_j r (+ b_j), from the centered scaled values in A and the binary64
  // reciprocal r: a row whose y lies below binary32's normal range (eps dominating a tiny
  // variance) keeps its digits, as the ratios y / scale need (binary32 y rounded them to a
  // few bits: RMS of [-8.4e-45, ..., -4.2e-45] into int8 gave -65 for -64.48; found by
  // normcheck fuzz). Two roundings more than the A path, each <= u relative.
  // ga_j = g_j (x s - mu_s)_j in binary64, r per row: y_j = ga_j r + b_j is formed only as
  // far as needed, and v_j = y_j / s as ga_j (r / s) + b_j / s, so that a y below binary64's
  // range still divides by a scale that is (a stored scale of 0 gives +-inf, saturated).
  std::vector<double> ga(static_cast<std::size_t>(x.size())), rinv(static_cast<std::size_t>(l.rows)),
      amax(static_cast<std::size_t>(l.rows));
  std::vector<A> buf(static_cast<std::size_t>(l.m));
  const bool has_beta = aff.affine == Affine::gamma_beta;
  auto beta = [&](std::int64_t j) { return has_beta ? static_cast<double>(aff.beta[static_cast<std::size_t>(j)]) : 0.0; };
  for (std::int64_t r = 0; r < l.rows; ++r) {
    A* a = buf.data();
    double* gr = ga.data() + r * l.m;
    if (residual) add.row(r, l.m, a);
    else kd::load_row(x, r * l.m, l.m, a);
    const auto st = kd::normalize_in_place(a, l.m, center, dof, c, /*apply=*/false);
    rinv[static_cast<std::size_t>(r)] = st.r;
    double mn = 0, my = 0;
    for (std::int64_t j = 0; j < l.m; ++j) {
      const double g = aff.gamma.empty() ? 1.0 : static_cast<double>(aff.gamma[static_cast<std::size_t>(j)]);
      gr[j] = g * static_cast<double>(a[j]);
      const double n = static_cast<double>(a[j]) * st.r, yj = gr[j] * st.r + beta(j);
      mn = std::isnan(n) || std::isnan(mn) ? NAN : std::fmax(mn, std::fabs(n));
      my = std::isnan(yj) || std::isnan(my) ? NAN : std::fmax(my, std::fabs(yj));
    }
    amax[static_cast<std::size_t>(r)] = f.scale_pre_gamma ? mn : my;
  }
  if (f.per_tensor) {
    double all = 0;
    for (double v : amax) all = std::isnan(v) || std::isnan(all) ? NAN : (v > all ? v : all);
    for (double& v : amax) v = all;
  }
  // Pass 2: the scale and the conversion.
  const double given = dynamic ? 1.0 : static_cast<double>(kd::load_param<A>(p.input("scale"))[0]);
  for (std::int64_t r = 0; r < l.rows; ++r) {
    const double* gr = ga.data() + r * l.m;
    double s = given, inv = given;  // divisor s, multiplier inv
    if (dynamic) {
      s = amax[static_cast<std::size_t>(r)] / static_cast<double>(qmax);
      if (s < static_cast<double>(floor)) s = static_cast<double>(floor);
      // The scale is stored in binary32, and y_q is what that stored value dequantizes:
      // divide by fl32(s), or multiply by fl32(1 / s).
      inv = static_cast<float>(1.0 / s);
      s = static_cast<float>(s);
      scale.set(r, divisor ? s : inv);
    }
    const double rr = rinv[static_cast<std::size_t>(r)], top = std::numeric_limits<double>::max();
    double k = divisor ? rr / s : rr * inv;
    // 1/D at binary64's top (inv_scaled_denominator: a constant row, whose g n are all 0) over a
    // nonzero scale below 1 overflowed, and 0 * inf gave NaN where the exact term is 0 (matrix
    // point mx_layer_norm_quant_w33_r2_f64_f64_constant_huge_typical). A zero scale's inf (the
    // exact y is 0 / 0, NaN) and a NaN row's NaN stay.
    if (rr == top && k > top && (divisor ? s > 0 : inv <= top)) k = top;
    for (std::int64_t j = 0; j < l.m; ++j) {
      const double v = gr[j] * k + (has_beta ? (divisor ? beta(j) / s : beta(j) * inv) : 0.0);
      y.set(r * l.m + j, quantize(p.out_dtype, qc, v));
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
