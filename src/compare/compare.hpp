// `normcheck compare`: two directories of per-layer tensors, matched by name; per layer
// max abs / rel / ULP, the first divergence, and, where a layer's input and norm
// parameters are present, the exact reference and which side is closer to it.
//
// Directory layout (README.md "Per-layer dumps"):
//   <name>.npy              one tensor named <name> ('<f2', '<f4', '<f8')
//   <file>.safetensors      every tensor inside, named by its key (F64, F32, F16, BF16)
//   <layer>.json            the layer's norm convention (a sidecar; optional):
//                           {"op": "layer_norm", "eps": 1e-12, "eps_placement": "inside_sqrt",
//                            "variance": "biased", "affine": "gamma_beta",
//                            "normalized_shape": [384], "acc_dtype": "f32"}
//                           op and eps required; affine defaults from the tensors present
//                           (gamma and beta: gamma_beta; gamma: gamma; none),
//                           normalized_shape to the input's last dim, acc_dtype to f32
//                           (f64 for an f64 input)
// A tensor named <layer>.<role> with role input | output | gamma | beta belongs to layer
// <layer>; any other tensor is a layer of its own. Layers are ordered by name in natural
// order (digits compare as numbers: layer2 < layer10), which is their execution order
// when a dumper numbers them.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spec/backend.hpp"
#include "checks/budget.hpp"
#include "checks/metrics.hpp"
#include "core/tensor_file.hpp"

namespace normcheck {

/// A norm layer's convention from its <layer>.json sidecar.
struct LayerMeta {
  Op op = Op::layer_norm;
  Convention conv;
  bool has_normalized_shape = false;
  bool has_affine = false;
  bool has_acc_dtype = false;
  std::string file;
};

/// One directory of named tensors.
struct Dump {
  std::string label;                           ///< the directory, or "<backend>(recomputed)"
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> origin;   ///< file each tensor came from
  std::map<std::string, LayerMeta> meta;       ///< by layer name
};

/// Reads a dump directory (layout above). Throws DumpError for a missing or unreadable
/// directory, a malformed file, a tensor name given twice, or a bad sidecar (naming the
/// file, line for JSON syntax errors, and field).
Dump read_dump(const std::string& dir);

/// Splits "<layer>.<role>" (role input | output | gamma | beta); other names: {name, ""}.
std::pair<std::string, std::string> split_layer_name(const std::string& name);

/// Natural order: digit runs compare by value, everything else bytewise.
bool natural_less(const std::string& a, const std::string& b);

/// The Problem of a layer of `d` (needs <layer>.input and a sidecar; gamma/beta per
/// affine); nullopt when the layer has no input or no sidecar. The output dtype is that of
/// <layer>.output if present, else the input's. Throws DumpError when the tensors do not
/// fit the convention (SpecError's field, in the sidecar).
std::optional<Problem> layer_problem(const Dump& d, const std::string& layer);

/// B side recomputed by `backend` from A's inputs: a copy of `a` whose <layer>.output is
/// the backend's output for every layer with a problem. Throws BackendError.
Dump recompute(const Dump& a, Backend& backend);

/// Differences of one tensor present on both sides (A is the baseline): abs |a - b|,
/// rel |a - b| / |a|, ulp |a - b| / ulp_t(a) with t the coarser of the two dtypes; NaN
/// against NaN counts as equal, NaN against a number as +inf. `differs`: shapes differ or
/// max ulp > tolerance (tolerance 0: any bit of value differs).
struct TensorDiff {
  std::string name, role;
  Shape shape_a, shape_b;
  DType dtype_a = DType::f32, dtype_b = DType::f32;
  Worst abs, rel, ulp;
  std::int64_t count_different = 0;
  bool differs = false;
};

/// A layer's comparison: its tensors, names on one side only, and (when both sides have
/// the output and A has input, sidecar and parameters) each side's output against the
/// exact reference of its own input, judged by default_gate.
struct LayerCompare {
  std::string layer;
  std::vector<TensorDiff> tensors;
  std::vector<std::string> only_a, only_b;
  bool differs = false;
  bool has_reference = false;
  bool inputs_match = true;        ///< A's and B's inputs are identical (or B has none)
  Gate gate;
  std::optional<MetricSet> a_exact, b_exact;
  std::string closer;              ///< "A", "B", "tie" (by max stab), "" without reference
  /// A side's output whose shape is not its input's: a failure, never "not measured".
  std::string a_shape_error, b_shape_error;
  bool a_fails() const { return !a_shape_error.empty() || (a_exact && !(a_exact->value(gate.metric) <= gate.max)); }
  bool b_fails() const { return !b_shape_error.empty() || (b_exact && !(b_exact->value(gate.metric) <= gate.max)); }
  const TensorDiff* worst() const;  ///< the tensor with the largest ulp difference
};

struct CompareResult {
  std::string a_label, b_label;
  double tolerance_ulp = 0;
  std::vector<LayerCompare> layers;   ///< natural order
  std::optional<std::size_t> first_divergence, first_fail_a, first_fail_b;
  /// 1 when a side fails its gate, or two sides differ beyond the tolerance on a layer
  /// without a reference; else 0.
  int exit_code() const;
};

/// Compares two dumps (A the baseline). The reference runs in MPFR per layer.
CompareResult compare_dumps(const Dump& a, const Dump& b, double tolerance_ulp);

/// Per-layer table, first divergence, first gate failure per side.
std::string format_compare_table(const CompareResult& r);
/// JSON with the same content.
std::string format_compare_json(const CompareResult& r);

}  // namespace normcheck
