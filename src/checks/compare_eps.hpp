// compare-eps: where do eps conventions give different outputs? (issue 4)
//
// For rows of d values mean +- s (so the biased variance is s^2 and, for rms_norm, the
// mean square is mean^2 + s^2), each convention's output is computed by the exact
// reference (reference::evaluate_exact) over a sweep of the variance (1e-14 .. 1e4, a
// quarter decade apart) and of the mean (0 .. 1e4), and compared with the first
// convention in ULPs of the chosen dtype. Worked example (shared/spec/worked-examples.md
// "Epsilon placement"): var 1e-12, eps 1e-5: inside_sqrt gain 316.2277502, outside_sqrt
// gain 90909.09.
#pragma once

#include <string>
#include <vector>

#include "spec/op.hpp"

namespace normcheck {

/// One convention to compare, with the text it was given as.
struct LabeledConvention {
  std::string label;
  Convention conv;
};

/// Parses "eps=1e-5,placement=inside_sqrt[,variance=biased]" (keys: eps, placement or
/// eps_placement, variance; any order; eps required), or a preset of `op` (ops/presets.hpp)
/// optionally followed by those keys ("pytorch.LayerNorm,eps=1e-6"); `dtype` resolves a
/// preset's dtype-dependent eps. Starts from default_convention(op); a preset's rounding order
/// (normalized_dtype) is dropped: the sweep compares eps conventions, each rounded once. Throws
/// std::invalid_argument with a message naming the bad key, value or preset.
LabeledConvention parse_convention_spec(const std::string& spec, Op op = Op::layer_norm, DType dtype = DType::f32);

/// The presets compare-eps compares when given no --conv: the common ones of `op`
/// (layer_norm: PyTorch, Keras, Flax; rms_norm: PyTorch, Hugging Face Llama, Flax, ONNX).
std::vector<std::string> default_compare_presets(Op op);

struct CompareEpsOptions {
  Op op = Op::layer_norm;          ///< layer_norm or rms_norm
  DType dtype = DType::f32;        ///< dtype of x and y; ULPs are this dtype's
  std::int64_t d = 64;             ///< row length (even)
  std::vector<double> variances;   ///< empty: 10^(k/4), k = -56 .. 16 (1e-14 .. 1e4)
  std::vector<double> means = {0, 1, 100, 1e4};
};

/// One (mean, variance) point of the sweep.
struct ComparePoint {
  double mean = 0, var = 0;         ///< targets
  double real_mean = 0, real_var = 0;  ///< of the row as stored in the dtype (exact)
  bool representable = true;        ///< real_var within 10% of the target (else skipped)
  std::vector<long double> gain;    ///< per convention: 1/D = y/(x - mu) (layer_norm), y/x (rms_norm), exact
  std::vector<double> diff_ulp;     ///< per convention: max_j |y_k - y_0| / ulp_dtype(y_0), exact values
  std::vector<double> diff_rel;     ///< per convention: max_j |y_k - y_0| / max_j |y_0| (normwise relative), exact values
};

struct CompareEpsResult {
  CompareEpsOptions options;
  std::vector<std::string> labels;
  std::vector<ComparePoint> points;  ///< mean-major, then variance ascending
};

/// Runs the sweep. Throws std::invalid_argument for fewer than 2 conventions, an odd d or
/// an op other than layer_norm/rms_norm.
CompareEpsResult compare_eps(const std::vector<LabeledConvention>& convs, const CompareEpsOptions& o);

/// Table: per mean, one line per decade of variance with each convention's gain and its
/// difference to the first in ULPs and relative, the variances the dtype cannot represent at
/// that mean said once (one line of ranges, those rows left out), then for each (convention,
/// mean) the variance ranges where it differs by more than 1 ULP and the largest difference.
std::string format_compare_eps_table(const CompareEpsResult& r);

/// SVG: difference to the first convention (ULPs, log) against variance (log), one line per
/// (convention, mean): one colour per pair (#k vs #1), one dash pattern per mean, with the
/// 1-ULP level marked.
std::string compare_eps_svg(const CompareEpsResult& r);

}  // namespace normcheck
