// Default gates: the error analysis.
//
// Metric (checks/metrics.hpp stab_of): with h = ulp_out/2 at max(|r|, |y|) and
// K = u c_i + eta (u the unit roundoff of the case's accumulation dtype, eta half its
// smallest subnormal step, c_i = sum_j |dy_i/dx_j x_j| + affine terms, the condition
// magnitude of ops/common/row_norm.hpp), stab_i = e/h for e = |y^_i - y_i| <= h and
// 1 + (e - h)/K beyond. A kernel whose value before its one rounding to the output was
// within k K of the exact one (backward stable with a perturbation of k u per input, each
// rounding also allowed eta absolute below the normal range) has e <= h + k K, i.e.
// stab_i <= 1 + k, whatever the output dtype.
//
// What k is for a conforming layer_norm / rms_norm kernel (accumulate in dtype acc,
// two-pass or Welford statistics, one rounding to the output dtype):
//   * the final rounding: the "1" (ulp_out/2 over ulp_out/2);
//   * per-element roundings on the path x -> d = x - mu -> d r -> g d r + b, plus the
//     statistics' final division, eps addition, sqrt and reciprocal: at most 8 of them,
//     each a relative perturbation <= u of a quantity bounded by c_i: k_ops = 8;
//   * the two reductions over m values (mean, sum of squares). Worst case gamma(m) u
//     (Higham 2002, eq. 4.4) is no gate (it is 4096 at d = 4096 while the fault classes
//     we must reject sit at 26 .. 2e7); the rounding errors of a recursive sum behave as
//     a random walk, whose size is sqrt(m) u sum|a_j| for the worst (sequential, same-sign)
//     summation order (Higham & Mary, SIAM J. Sci. Comput. 41(5), 2019: lambda sqrt(m) u
//     with lambda ~ 1 at one standard deviation; a shifted row, mean >> std, is the
//     same-sign case). Blocked, pairwise and tree (GPU warp) reductions do better:
//     sqrt(m/L + log2 L). We grant the sequential order: k_sum = sqrt(m).
// Gate: stab <= 1 + 8 + sqrt(m).  At m = 768: 36.7; m = 4096: 73; m = 65536: 265.
//
// What it rejects (DESIGN.md simulation, LN f32, d <= 4097): one-pass E[x^2]-E[x]^2
// gives 583 .. inf on shifted rows (mean 1e4); eps outside the sqrt gives 26 .. 2e7 and
// 2e7 on the tiny-variance cases (var 1e-12, eps 1e-5: gain 90909 vs 316); binary16
// accumulation gives 8e3 .. inf. The bundled degenerate cases put each of these well
// above the gate at every m they use.
//
// f16/bf16 outputs of an f32 kernel: "the correct rounding of a value within
// (8 + sqrt(m)) u c of the exact one": one output ULP at most where c ~ |y|, more only where
// the exact output is near 0 (c >> |y|). (The metric used to be e / (h + u c), which this
// gate multiplied as a whole: (9 + sqrt(m))/2 output ULPs, 18 bf16 ULPs at m = 768.)
#include "checks/budget.hpp"

#include <cmath>

#include <fmt/format.h>

#include "spec/op_def.hpp"

namespace normcheck {

// The families (m = values per statistic; the same k_ops = 8 and sqrt(m) reduction term):
//   group_norm (C/G) * spatial, instance_norm spatial; batch_norm N * spatial with batch
//   statistics (the running-stat update adds 3 roundings per step, within k_ops: the
//   running stats' condition magnitude, ops/batch_norm/reference.hpp, carries the chain), 1 in
//   eval (y = g (x - rm)/D(rv) + b reads no reduction); l2_normalize / scale_norm the
//   values along the reduced axes (one sum of squares, no mean); ada_layer_norm /
//   ada_rms_norm d (the modulation (1 + s) n + b and the gate x + g y add 4 roundings,
//   within k_ops); qk_norm d_k (the per-head statistic and the score's dot product both
//   reduce d_k values; the dot product's rounding is bounded by its condition magnitude
//   sum_l |k^_l| c(q^_l) + |q^_l| c(k^_l), each c >= |q^_l|, so it enters as sqrt(d_k) again).
std::int64_t group_size(const Problem& p) { return p.op.def().group_size(p); }

// Backward (direction = backward, issue 6). Outputs dx, and the parameter gradients
// dgamma, dbeta (ds, db; dg). Reference formula (ops/common/row_norm_backward.hpp): per group,
//   dx_i = (1/D) (a_i - [center] mean(a) - (k/m') n_i S),  a = g dy,  S = sum_j a_j n_j,
//   dgamma_j = sum_r dy_rj n_rj,  dbeta_j = sum_r dy_rj  (R terms each),
// with condition magnitudes c_i bounding the first-order effect of relative perturbations
// of x, dy and the parameters (the derivation is beside the formula). Counting as above,
// for a kernel that recomputes n with the forward's algorithm and forms dx by that formula:
//   * the final rounding: 1;
//   * n (statistics, centering, scaling): the forward's 8 and its sqrt(m); an error in n_j of
//     (8 + sqrt(m)) u nu_j (nu_j: n_j's condition magnitude under x) reaches dx_i only through
//     the terms (k/m') (nu_i |S| + |n_i| sum_j |a_j| nu_j) / D and rho |.|/D of c_i, and
//     dgamma_j through sum_r |dy_rj| nu_rj: each within the same multiple of c;
//   * the backward combination: a = g dy, the mean's division, n_i S, the factor k/m',
//     a_i - mean, the second subtraction, the product by 1/D, and (1 + w) formed once for
//     one_plus_w/ada: 8 roundings, each relative <= u of a quantity bounded by c_i;
//   * the reductions sum a, sum a n over the m values of a group: the random walk sqrt(m)
//     (they enter disjoint terms of c_i, so their sqrt(m) u adds up to sqrt(m) u c_i, not
//     more); the parameter gradients' sums over R values (R: the values each dgamma element
//     sums: rows for layer_norm / rms_norm, N * spatial for group_norm / instance_norm /
//     batch_norm, the tokens of a batch element for ada_*, every element for scale_norm):
//     sqrt(R), on top of n's own sqrt(m).
// Gate: stab <= 1 + 16 + sqrt(m) + sqrt(R)   (R = 0 when the op has no parameter gradient).
// At m = 64, R = 8 (a [8, 64] LayerNorm): 27.8. What it rejects (the bundled backward
// mutants): dx without the mean term (error |mean(a)|/D, ~ 1e7 units), batch-norm dx that
// ignores the statistics' dependence on x (error of the size of dx itself), dgamma summed
// over the wrong axis (error of the size of dgamma).
std::int64_t param_reduction_size(const Problem& p) {
  if (p.conv.direction != Direction::backward) return 0;
  return p.op.def().param_reduction(p);
}

Gate default_gate(const Problem& p) {
  const double m = static_cast<double>(group_size(p));
  Gate g;
  g.metric = Metric::stab;
  if (p.conv.direction == Direction::backward) {
    const auto R = param_reduction_size(p);
    g.max = 1.0 + 16.0 + std::sqrt(m) + std::sqrt(static_cast<double>(R));
    g.source = fmt::format("default backward: 1 + 16 + sqrt(m) + sqrt(R), m = {}, R = {}", static_cast<std::int64_t>(m), R);
    return g;
  }
  // Ops with more roundings on the path (fused residual add, quantization) name them in
  // their OpDef (extra_roundings); their analysis is beside it.
  const int extra = p.op.def().extra_roundings;
  const double k_ops = 8.0 + extra;
  g.max = 1.0 + k_ops + std::sqrt(m);
  g.source = fmt::format("default: 1 + {} + sqrt(m), m = {}", 8 + extra, static_cast<std::int64_t>(m));
  return g;
}

}  // namespace normcheck
