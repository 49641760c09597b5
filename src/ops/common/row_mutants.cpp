// Straightforward f32 row kernel with one injected fault each (see mutants.hpp).
#include "ops/common/mutants.hpp"
#include "spec/layout.hpp"

#include <array>
#include <cmath>

namespace normcheck::kernels::mutant {

namespace {
struct Entry { Fault f; std::string_view name, text; };
constexpr std::array<Entry, 30> kFaults{{
    {Fault::eps_outside_sqrt, "eps_outside_sqrt", "eps added outside the sqrt: x / (sqrt(v) + eps)"},
    {Fault::eps_missing, "eps_missing", "eps left out of the denominator"},
    {Fault::wrong_eps, "wrong_eps", "eps ten times too small (1e-6 for 1e-5)"},
    {Fault::unbiased_variance, "unbiased_variance", "variance with 1/(m-1)"},
    {Fault::no_sqrt, "no_sqrt", "divides by v + eps, no sqrt"},
    {Fault::one_pass_variance, "one_pass_variance", "one-pass E[x^2] - E[x]^2 in f32"},
    {Fault::f16_accumulation, "f16_accumulation", "statistics accumulated in binary16"},
    {Fault::rms_subtracts_mean, "rms_subtracts_mean", "rms_norm that subtracts the mean"},
    {Fault::ln_no_centering, "ln_no_centering", "layer_norm that does not subtract the mean"},
    {Fault::stats_over_sequence, "stats_over_sequence", "statistics over [T, d] instead of d"},
    {Fault::gamma_wrong_axis, "gamma_wrong_axis", "gamma indexed by row instead of column"},
    {Fault::w_not_one_plus_w, "w_not_one_plus_w", "one_plus_w affine applied as w"},
    {Fault::tail_unnormalized, "tail_unnormalized", "last m mod 8 elements of each row left unnormalized"},
    {Fault::partial_warp_dropped, "partial_warp_dropped", "statistics without the row's last partial warp (m mod 32 values; m > 32)"},
    {Fault::padded_lanes_counted, "padded_lanes_counted", "mean and variance over m rounded up to a multiple of 8 (zero padding counted)"},
    {Fault::rows_grid_limit, "rows_grid_limit", "rows from 65535 on never written (a launch grid's y limit): y = x there"},
    {Fault::params_rounded_bf16, "params_rounded_bf16", "gamma and beta rounded to bfloat16 before use"},
    {Fault::eps_rounded_to_dtype, "eps_rounded_to_dtype", "eps rounded to x's dtype before use"},
    {Fault::group_reads_next, "group_reads_next", "each row's statistics read one value past its end (the next row's first)"},
    {Fault::normalized_rounded_to_out, "normalized_rounded_to_out", "normalized value rounded to y's dtype before gamma/beta (HF Llama's weight * x.to(dtype)) where the convention rounds once"},
    {Fault::bn_biased_running_var, "bn_biased_running_var", "batch_norm running_var updated with the biased batch variance"},
    {Fault::bn_stats_over_batch_only, "bn_stats_over_batch_only", "batch_norm statistics over N only (spatial axes left out)"},
    {Fault::bn_eval_batch_stats, "bn_eval_batch_stats", "batch_norm eval normalizes with batch statistics instead of running stats"},
    {Fault::gn_interleaved_groups, "gn_interleaved_groups", "group_norm groups of channels g, g+G, ... (non-contiguous)"},
    {Fault::l2_eps_added, "l2_eps_added", "l2_normalize/scale_norm x / (||x|| + eps) instead of clamping the norm"},
    {Fault::ada_broadcast_over_batch, "ada_broadcast_over_batch", "AdaLN/AdaRMS modulation indexed by token (broadcast over batch)"},
    {Fault::qk_norm_across_heads, "qk_norm_across_heads", "qk_norm statistics over all heads of a token, not per head"},
    {Fault::dgamma_wrong_axis, "dgamma_wrong_axis", "backward: dgamma summed over the normalized axis (per row) instead of over the rows"},
    {Fault::ln_dx_no_mean_term, "ln_dx_no_mean_term", "backward: layer_norm dx without the - mean(g dy) term"},
    {Fault::bn_backward_constant_stats, "bn_backward_constant_stats", "backward: batch_norm training dx = g dy / D, statistics treated as constants"},
}};

float to_f16(float v) { return normcheck::detail::half_bits_to_float(normcheck::detail::float_to_half_bits(v)); }
}  // namespace

std::string_view to_string(Fault f) noexcept {
  for (auto& e : kFaults) if (e.f == f) return e.name;
  return "?";
}
std::string_view describe(Fault f) noexcept {
  for (auto& e : kFaults) if (e.f == f) return e.text;
  return "?";
}
std::optional<Fault> parse_fault(std::string_view s) noexcept {
  for (auto& e : kFaults) if (e.name == s) return e.f;
  return std::nullopt;
}
bool supports(Fault f, Op op) noexcept {
  if (detail::is_backward_fault(f)) return false;  // no forward kernel
  if (detail::is_family_fault(f)) return detail::family_supports(f, op);
  return op == Op::layer_norm || op == Op::rms_norm;
}

bool supports(Fault f, const Problem& p) noexcept {
  if (p.conv.direction == Direction::backward) return detail::is_backward_fault(f) && detail::backward_supports(f, p.op);
  return supports(f, p.op);
}

std::vector<Fault> all_faults() {
  std::vector<Fault> v;
  for (auto& e : kFaults) v.push_back(e.f);
  return v;
}

Outputs run(Fault f, const Problem& p) {
  if (detail::is_backward_fault(f)) return detail::run_backward(f, p);
  if (detail::is_family_fault(f)) return detail::run_family(f, p);
  const Tensor& x = p.x();
  RowLayout l = row_layout(p);
  const Shape& xs = x.shape();
  if (f == Fault::stats_over_sequence && xs.size() >= 2 && p.conv.normalized_shape.size() == 1) {
    l.m *= xs[xs.size() - 2];
    l.rows = x.size() / l.m;
  }
  const std::int64_t d = numel(p.conv.normalized_shape);
  const Tensor* gt = p.input("gamma");
  const Tensor* bt = p.input("beta");
  bool center = p.op == Op::layer_norm;
  if (f == Fault::rms_subtracts_mean) center = true;
  if (f == Fault::ln_no_centering) center = false;
  double eps = p.conv.eps;
  if (f == Fault::eps_missing) eps = 0;
  if (f == Fault::eps_rounded_to_dtype) eps = round_to(x.dtype(), eps);
  auto param = [&](const Tensor* t, std::int64_t i) {
    const double v = t->get(i);
    return f == Fault::params_rounded_bf16 ? round_to(DType::bf16, v) : v;
  };
  if (f == Fault::wrong_eps) eps /= 10;
  // The base kernel is exact enough to pass every case (long double statistics: x87's
  // exponent range holds the squares of every binary64 value, so the base never overflows
  // or underflows where the reference does not); only the injected fault makes it wrong.
  // Precision faults round their sums to their format.
  const bool f16 = f == Fault::f16_accumulation, f32 = f == Fault::one_pass_variance;
  using L = long double;
  auto rd = [&](L v) -> L {
    if (f16) return to_f16(static_cast<float>(v));
    if (f32) return static_cast<float>(v);
    return v;
  };
  Tensor y(p.out_dtype, xs);
  for (std::int64_t r = 0; r < l.rows; ++r) {
    const std::int64_t off = r * l.m;
    if (f == Fault::rows_grid_limit && r >= 65535) {
      for (std::int64_t j = 0; j < l.m; ++j) y.set(off + j, x.get(off + j));
      continue;
    }
    // The values the statistics read: [first, first + count) of x, divided by `divisor`.
    std::int64_t first = off, count = l.m, divisor = l.m;
    if (f == Fault::partial_warp_dropped && l.m > 32) count = divisor = l.m - l.m % 32;
    if (f == Fault::padded_lanes_counted) divisor = (l.m + 7) / 8 * 8;
    if (f == Fault::group_reads_next && off + l.m < x.size()) first = off + 1;
    L s = 0, s2 = 0;
    for (std::int64_t j = 0; j < count; ++j) {
      const L v = rd(x.get(first + j));
      s = rd(s + v);
      s2 = rd(s2 + rd(v * v));
    }
    const L mu = center ? rd(s / static_cast<L>(divisor)) : L(0);
    L ss = 0;
    for (std::int64_t j = 0; j < count; ++j) {
      const L dv = rd(x.get(first + j) - mu);
      ss = rd(ss + rd(dv * dv));
    }
    if (f == Fault::padded_lanes_counted) ss += static_cast<L>(divisor - l.m) * mu * mu;  // the zero pads' (0 - mu)^2
    if (f == Fault::one_pass_variance) {
      const L ex2 = rd(s2 / static_cast<L>(l.m));
      ss = rd((center ? rd(ex2 - rd(mu * mu)) : ex2) * static_cast<L>(l.m));
      if (ss < 0) ss = 0;
    }
    std::int64_t dof = p.conv.variance == Variance::unbiased ? divisor - 1 : divisor;
    if (f == Fault::unbiased_variance) dof = l.m - 1;
    const L v = ss / static_cast<L>(dof);
    L D;
    const L e = eps;
    EpsPlacement pl = p.conv.eps_placement;
    if (f == Fault::eps_outside_sqrt) pl = EpsPlacement::outside_sqrt;
    switch (pl) {
      case EpsPlacement::inside_sqrt: D = std::sqrt(v + e); break;
      case EpsPlacement::outside_sqrt: D = std::sqrt(v) + e; break;
      case EpsPlacement::clamp_var: D = std::sqrt(std::fmax(v, e)); break;
      default: D = std::fmax(std::sqrt(v), e); break;
    }
    if (f == Fault::no_sqrt) D = v + e;
    bool finite = true;
    for (std::int64_t j = 0; j < l.m; ++j) finite = finite && std::isfinite(x.get(off + j));
    const std::int64_t tail_from = f == Fault::tail_unnormalized ? l.m - l.m % 8 : l.m;
    for (std::int64_t j = 0; j < l.m; ++j) {
      const L xv = x.get(off + j);
      L n = j >= tail_from ? xv : (xv - mu) / D;
      if (!finite) n = NAN;
      // The convention's rounding order, as a correct kernel follows it: a mutant is killed by its
      // fault, never by rounding once where the case rounds the normalized value first.
      if (p.conv.normalized_dtype) n = round_to(*p.conv.normalized_dtype, n);
      else if (f == Fault::normalized_rounded_to_out) n = round_to(p.out_dtype, n);
      const std::int64_t col = (off + j) % d;
      const std::int64_t gi = f == Fault::gamma_wrong_axis ? ((off + j) / d) % d : col;
      switch (p.conv.affine) {
        case Affine::none: break;
        case Affine::gamma: n *= param(gt, gi); break;
        case Affine::gamma_beta: n = n * param(gt, gi) + param(bt, col); break;
        case Affine::one_plus_w: n *= (f == Fault::w_not_one_plus_w ? 0.0 : 1.0) + param(gt, gi); break;
      }
      y.set(off + j, round_to(DType::f64, n));  // then once more to y's dtype: <= 2^-53 relative more
    }
  }
  Outputs o;
  o["y"] = std::move(y);
  return o;
}

}  // namespace normcheck::kernels::mutant
