// Error metrics of a backend's output against the exact reference (DESIGN.md "Error metrics").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/reference.hpp"
#include "spec/gate.hpp"

namespace normcheck {


/// The worst element of one metric: its value, flat index, coordinates in the output,
/// the backend's value and the exact one.
struct Worst {
  double value = 0;
  std::int64_t index = -1;
  std::vector<std::int64_t> coords;
  double got = 0;
  long double exact = 0;
  std::string output;  ///< which output (ops with several: "running_var", "q_hat", ...); empty: y
};

/// All metrics of one output. NaN rules: an element whose exact value is NaN (a group
/// holding NaN/inf) counts as 0 error iff the backend gave NaN; a NaN where the exact
/// value is a number, or a number where it is NaN, counts as +inf in every metric
/// (nan_mismatches counts them). Equal infinities count as 0. An exact value whose correct
/// rounding to the output dtype is not finite (beyond the format's range) counts as that
/// rounding: inf is then the right answer, not an infinite error.
struct MetricSet {
  Worst abs, rel, ulp, stab;
  double nmse = 0;
  std::int64_t count = 0;
  std::int64_t nan_mismatches = 0;
  const Worst& worst(Metric m) const;
  double value(Metric m) const { return m == Metric::nmse ? nmse : worst(m).value; }
};

/// Measures `got` (any dtype; compared as its exact values) against `ref`.
/// `out` is the dtype whose ULP the ulp and stab metrics use, `acc` the accumulation dtype
/// whose unit roundoff u_acc enters stab. Requires got.size() == ref.size().
/// stab of element i is stab_of(|y - r|, ulp_out(max(|r|, |y|)), kernel_unit(acc, c_i))
/// for every output dtype (see stab_of).
MetricSet measure(const Tensor& got, const reference::ExactOutput& ref, DType out, DType acc);

/// stab of one element (checks/budget.cpp has the analysis), for an error e = |y - r|
/// against the exact value r, the output's rounding step `step` there (ulp_out at
/// max(|r|, |y|); 1 for int8) and the kernel's unit allowance `kernel` = u_acc c
/// (c the element's condition magnitude; kernel_unit adds the underflow term):
///   e <= step/2:  e / (step/2)                    (at most the one correct rounding)
///   otherwise:    1 + (e - step/2) / kernel       (inf when kernel = 0)
/// So stab <= 1 + k iff e <= step/2 + k u c: a value the kernel computed within k u c of r
/// and rounded once to the output. Round to nearest moves it by at most half the step at
/// the rounded value, which lies between |r| and |y|; taking the step at the larger of the
/// two covers a binade edge between them, and gives a wrong value no credit to speak of (the
/// step grows with |y| by 2^-p of it). Continuous and increasing in e.
/// Why not |y - r| / (ulp/2 + u c) <= 1 + k: that multiplies the half step by 1 + k too,
/// and where the output's step dwarfs u c (f16/bf16/fp8/int8 outputs of an f32 kernel,
/// f32 outputs of an f64 kernel) it admitted (1 + k)/2 output ULPs: 18 bf16 ULPs at
/// m = 768, room for a kernel that reads half of each row.
long double stab_of(long double e, long double step, long double kernel);

/// The kernel's unit allowance of an element, in stab_of's `kernel`: u_acc c + eta_acc,
/// the bound of one rounding in the accumulation dtype of a quantity bounded by c, with
/// eta_acc = half its smallest subnormal step: below the normal range a rounding error is
/// absolute (Higham 2002, eq. 2.8: fl(a op b) = (a op b)(1 + d) + e, |d| <= u, |e| <= eta),
/// which a subnormal output of a correct kernel shows (one step of 2^-149 in f32 where
/// u c is 1e-50). A condition magnitude stored as +inf (beyond double's range, e.g. dy near
/// DBL_MAX) counts as |r|, the exact value: a lower bound of any c > DBL_MAX for a finite r.
/// Never DBL_MAX itself: an int8 output whose c overflowed (a subnormal scale) then passed
/// 66 for 127 with stab 1. NaN counts as 0.
long double kernel_unit(DType acc, double c, long double r);

/// The largest error |y - r| with stab_of(...) <= G, for an element of exact value r
/// rounded to `out` and the kernel's unit allowance `kernel` (kernel_unit): G step/2 for
/// G <= 1, else step/2 + (G - 1) kernel with the step at |r| + (G - 1) kernel. The
/// allowance the property and structural checks grant each side (same units as the gate).
long double stab_allowance(double G, DType out, long double r, long double kernel);

/// The worst of several outputs' metrics, metric by metric (count and NaN mismatches add up,
/// nmse is the largest); each Worst keeps the name of its output.
MetricSet merge_worst(const std::vector<std::pair<std::string, MetricSet>>& per_output);

/// Per-element error of `got` against literal expected values: max |y - e| and max
/// |y - e| / ulp_out(e), with the worst element (NaN expected matches NaN).
struct LiteralError {
  Worst abs, ulp;
};
LiteralError compare_literal(const Tensor& got, const std::vector<double>& expected, DType out);

}  // namespace normcheck
