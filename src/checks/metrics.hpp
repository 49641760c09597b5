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
/// whose unit roundoff u_acc enters stab. Requires got.size() == ref.exact.size().
/// For an 8-bit quantized `out` (fp8_e4m3fn, fp8_e5m2, int8; core/dtype.hpp) stab is
/// quantized_stab(|y - r|, ulp_out(r), u_acc c): there the rounding to the output is a whole
/// quantization step, orders of magnitude above the kernel's own error, and the usual
/// |y - r| / (ulp/2 + u c) <= 1 + k would let (1 + k)/2 steps through.
MetricSet measure(const Tensor& got, const reference::ExactOutput& ref, DType out, DType acc);

/// stab of a quantized output, in the same units as stab (1: correctly rounded; 1 + k: the
/// rounding of a value within k u c of the exact one), for an error e = |y - r| against the
/// exact pre-quantization value r (saturated where the convention saturates), the
/// quantization step `step` at r (ulp_out(r); 1 for int8) and the kernel's allowance
/// `kernel` = u_acc c:
///   e <= step/2:  e / (step/2)                    (at most the one correct rounding)
///   otherwise:    1 + (e - step/2) / kernel       (inf when kernel = 0)
/// A value the kernel computed within k u c of r rounds to within step/2 + k u c of r (round
/// to nearest moves it by at most half a step, and a binade edge between them only shrinks
/// the step), so a correct kernel near a tie may round either way and stays <= 1 + k, while
/// a wrong rounding direction (toward zero) or a wrong scale costs up to a whole step:
/// thousands of units. Continuous and increasing in e.
long double quantized_stab(long double e, long double step, long double kernel);

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
