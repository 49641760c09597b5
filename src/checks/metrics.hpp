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
/// (nan_mismatches counts them). Equal infinities count as 0.
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
MetricSet measure(const Tensor& got, const reference::ExactOutput& ref, DType out, DType acc);

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
