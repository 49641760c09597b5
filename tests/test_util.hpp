// Helpers shared by the tests: build problems, run the gate.
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cases/case.hpp"
#include "checks/budget.hpp"
#include "checks/metrics.hpp"
#include "ops/reference.hpp"
#include "ops/registry.hpp"

namespace normcheck::test {

inline Problem row_problem(Op op, DType dt, Shape shape, const std::vector<double>& x, double eps = 0.0,
                           Affine affine = Affine::none) {
  Problem p;
  p.op = op;
  p.out_dtype = dt;
  p.conv.eps = eps;
  p.conv.affine = affine;
  p.conv.acc_dtype = dt == DType::f64 ? DType::f64 : DType::f32;
  p.conv.normalized_shape = {shape.back()};
  p.inputs["x"] = Tensor::from_doubles(dt, shape, x);
  return p;
}

/// The op's position in the op table (the seeds of generated inputs use it).
inline std::uint64_t op_index(Op op) {
  const auto& all = ops::all();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i] == op) return i;
  return all.size();
}

/// Path of a file in the source tree (NORMCHECK_SOURCE_DIR is set by CMake).
inline std::string source_path(const std::string& rel) { return std::string(NORMCHECK_SOURCE_DIR) + "/" + rel; }

/// Exact value of v rounded to binary64 and the worked example's decimal: within 0.5 ULP
/// of f64 plus the decimal's own rounding (19 significant digits: 1e-19 relative).
inline bool within_half_ulp_f64(double got, double expected_decimal) {
  if (expected_decimal == 0) return got == 0;
  return std::fabs(got - expected_decimal) <= 0.5 * ulp(DType::f64, expected_decimal) + 1e-18 * std::fabs(expected_decimal);
}

}  // namespace normcheck::test
