// What an op is, as data: one OpDef per op, in its folder under src/ops/, registered once in
// the op table (src/ops/registry.cpp). The parser, validation, budgets, the CPU backend,
// the mutant backends, the worker protocol, probes and tests iterate the table; none of them
// names an op to decide what to do with it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "spec/exact.hpp"
#include "spec/op.hpp"

namespace normcheck {

struct ConventionKey;  // spec/convention.hpp
class Sampler;        // spec/sample.hpp

/// A deliberately wrong kernel (the test-only backend mutant:<name>), registered with the
/// op whose fault it models. Names are unique over the whole table.
struct MutantDef {
  std::string_view name;
  std::string_view description;
  /// A bundled case built to kill it (tests/mutant_test.cpp runs it on the mutant).
  std::string_view aimed_case;
  /// Whether it has a kernel for this problem (any op, either direction): the mutant
  /// backend skips the others with that reason.
  bool (*supports)(const Problem&);
  Outputs (*run)(const ValidProblem&);
};

/// One op: its convention keys and defaults, its input/output schema and rules, its
/// normalization groups and budget rows, its backward rules, its reference, its CPU
/// kernel and its mutants. Function members take problems of this op only.
struct OpDef {
  std::string_view name = {};     ///< as case files spell it: "layer_norm"
  std::string_view formula = {};  ///< one line: "y = gamma (x - mean) / sqrt(var + eps) + beta"
  std::string_view primary_input = "x";  ///< the input transforms and x() refer to
  bool centers = false;      ///< subtracts a mean before scaling (probes, structural checks)
  /// Elementwise, no statistic (dyt): the coverage matrix leaves out its points of many rows
  /// beyond the first (cases/matrix.cpp), whose faults are those of a statistic's launch grid.
  bool elementwise = false;
  /// Convention keys beyond the common core (spec/convention.hpp) that this op accepts.
  std::vector<const ConventionKey*> params = {};
  /// Defaults beyond Convention{}'s (eps 1e-5, inside_sqrt, biased, affine none); may be null.
  void (*defaults)(Convention&) = nullptr;
  /// The op's own rules on inputs, shapes and parameters, in either direction (the common
  /// rules, eps and dy, are validate()'s); throws SpecError naming the field.
  void (*validate)(const Problem&) = nullptr;
  /// The forward outputs every backend must return, and their shapes.
  std::map<std::string, Shape> (*outputs)(const Problem&) = nullptr;
  /// Optional forward outputs (saved statistics "mean", "rstd") and their shapes, or null:
  /// the reference produces them; a backend may return them, and then they are measured
  /// and gated like any output, or not, and then the gate reports them as not returned.
  std::map<std::string, Shape> (*optional_outputs)(const Problem&) = nullptr;
  /// The dtypes of the forward outputs that are not out_dtype (a residual stream in its own
  /// dtype, a dequantization scale in f32, saved statistics in binary32/64), or null.
  std::map<std::string, DType> (*output_dtypes)(const Problem&) = nullptr;
  /// Whether out_dtype may be an 8-bit quantized format (core/dtype.hpp is_quantized):
  /// only ops that define the quantization (scale, saturation, rounding) accept one.
  bool quantized_out = false;
  /// The normalization groups of x (structural checks).
  ReductionLayout (*groups)(const Problem&) = nullptr;
  /// Budget row (checks/budget.cpp): the number m of values each statistic reduces.
  std::int64_t (*group_size)(const Problem&) = nullptr;
  /// Budget row: roundings on the forward path beyond the norm's 8 (a fused residual add,
  /// a quantization scale), each a relative perturbation <= u of a quantity c_i bounds.
  int extra_roundings = 0;

  /// Backward: the gradients' names and shapes (dx first), or null when the op has none.
  std::map<std::string, Shape> (*backward_outputs)(const Problem&) = nullptr;
  /// Why there is no backward (backward_outputs null), or rules beyond validate's for one.
  std::string_view no_backward = {};
  void (*validate_backward)(const Problem&) = nullptr;
  /// Budget row, backward: the number R of values each parameter-gradient element sums
  /// (0: no parameter gradient); null when the op has no backward.
  std::int64_t (*param_reduction)(const Problem&) = nullptr;

  /// The exact reference in either direction: MPFR at working_bits(p), rounded once.
  ExactOutputs (*reference)(const ValidProblem&) = nullptr;
  /// The same formula in binary64 (quick checks and tests of the template).
  ExactOutputs (*reference_double)(const ValidProblem&) = nullptr;
  /// The CPU kernel in either direction (the backward only when the op has one).
  void (*cpu)(const ValidProblem&, Outputs&) = nullptr;
  /// Deliberately wrong kernels modelling this op's fault kinds.
  std::vector<MutantDef> mutants = {};
  /// The coverage matrix and fuzzing (spec/sample.hpp): fills a problem whose op, default
  /// convention, acc_dtype and out_dtype are set with inputs drawn at s.dims() (groups of
  /// about dims().width values, about dims().rows of them) and, when s.vary(), the op's own
  /// convention choices (affine, its parameters). draw_problem() then sets eps and dy.
  void (*sample)(Sampler& s, Problem& p) = nullptr;

  bool has_backward() const noexcept { return backward_outputs != nullptr; }
};

}  // namespace normcheck
