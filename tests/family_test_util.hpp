// Helpers for the family tests: build problems in a line, evaluate the exact reference and
// the cpu backend, read outputs as doubles.
#pragma once

#include <string>
#include <vector>

#include "spec/backend.hpp"
#include "cases/case.hpp"
#include "ops/reference.hpp"
#include "spec/op.hpp"
#include "ops/registry.hpp"
#include "backends/registry.hpp"

namespace normcheck::test {

inline Tensor tensor(const Shape& s, const std::vector<double>& v, DType t = DType::f64) {
  return Tensor::from_doubles(t, s, v);
}

/// A problem with eps = 0 (the worked examples' convention), no affine, dtype t.
inline Problem problem(Op op, const Shape& xs, const std::vector<double>& x, DType t = DType::f64) {
  Problem p;
  p.op = op;
  p.conv = default_convention(op);
  p.conv.eps = 0;
  p.conv.acc_dtype = t == DType::f64 ? DType::f64 : DType::f32;
  p.conv.normalized_shape = Shape{xs.back()};
  p.out_dtype = t;
  p.inputs[std::string(primary_input(op))] = tensor(xs, x, t);
  return p;
}

/// The exact reference's output `name`, rounded once to the problem's dtype, as doubles.
inline std::vector<double> exact(const Problem& p, const std::string& name = "y") {
  return reference::evaluate_exact(p).at(name).rounded().to_doubles();
}

/// The cpu backend's output `name` as doubles.
inline std::vector<double> cpu(const Problem& p, const std::string& name = "y") {
  auto be = make_backend("cpu");
  return be->run(validate(p), {}).at(name).to_doubles();
}

}  // namespace normcheck::test
