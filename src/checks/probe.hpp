// Probes: black-box experiments on a backend that infer its convention (DESIGN.md "probe").
//
// A probe only calls Backend::run on Problems it builds itself, each carrying a nominal
// convention (by default eps = 1e-5, inside_sqrt, biased, the op's usual affine), and
// infers from the outputs what the backend actually does: reduction axes and leaks across
// the sequence, gamma/beta broadcast axis, centering, affine convention, eps value and
// placement (solved from a variance sweep, checks/eps_fit.hpp), variance estimator,
// accumulation precision and algorithm, per-index conformance (tails), and behaviour on
// constant, zero, NaN, Inf and overflowing rows. Every finding carries its evidence and
// a certainty; the result prints as a convention card that is valid case-file syntax.
//
// Ops: layer_norm and rms_norm (checks/probe_row_norm.cpp). Other families add a probe
// function to the table in probe.cpp.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "spec/backend.hpp"
#include "spec/op.hpp"

namespace normcheck {

/// How sure a finding is: certain (the data admit one explanation, separated from the
/// next by orders of magnitude), likely (best explanation, weakly separated), undetermined.
enum class Certainty { certain, likely, undetermined };
std::string_view to_string(Certainty) noexcept;

/// What a finding rests on: the inputs fed, the outputs seen, and the fit of the chosen
/// model (its residual, with the residuals of the alternatives in `fit`).
struct Evidence {
  std::string inputs;
  std::string outputs;
  std::string fit;
  double residual = 0;  ///< residual of the chosen model (units in `fit`); NaN if none
};

/// One inferred property. `property` is a stable key (see probe_row_norm.cpp for the list:
/// "reduction_axes", "sequence_leak", "centering", "eps", "eps_placement", "variance",
/// "gain_law", "affine[gamma]", "affine[gamma_beta]", "affine[one_plus_w]",
/// "gamma_broadcast", "beta_broadcast", "accumulation_precision", "accumulation_algorithm",
/// "per_index", "constant_row", "zero_row", "nan_input", "inf_input", "overflow_input",
/// "rounding_order" (f16/bf16 only)).
/// `expected` is what a backend conforming to the nominal convention shows; `deviates`
/// is set when the finding (not undetermined) contradicts it.
struct Finding {
  std::string property;
  std::string value;
  std::string expected;
  Certainty certainty = Certainty::undetermined;
  bool deviates = false;
  Evidence evidence;
};

/// What to probe and with which nominal convention.
struct ProbeOptions {
  Op op = Op::layer_norm;
  DType dtype = DType::f32;      ///< dtype of x, gamma, beta and y
  std::int64_t d = 64;           ///< hidden size of the main experiments (even, >= 16)
  Convention nominal;            ///< eps, placement, variance sent; affine = the card's affine
  std::uint64_t seed = 1;        ///< seed of the random rows (printed in the evidence)
};

/// Default options for an op: eps = 1e-5, inside_sqrt, biased, f32 accumulation, affine
/// gamma_beta for layer_norm and gamma otherwise.
ProbeOptions default_probe_options(Op op);

/// All findings about one backend, and the convention they add up to.
struct ProbeResult {
  std::string backend;
  ProbeOptions options;
  std::vector<Finding> findings;
  Convention inferred;          ///< the card: what to put in [case.convention]
  Op inferred_op = Op::layer_norm;  ///< op the backend behaves as (centering)
  std::vector<std::string> card_notes;  ///< comment lines of the card
  /// The eps values the variance sweep admits ([lo, hi] of the fit; lo = 0 when eps = 0
  /// fits); NaN when the eps finding is undetermined. Presets are compared on this interval.
  double eps_lo = std::numeric_limits<double>::quiet_NaN(), eps_hi = std::numeric_limits<double>::quiet_NaN();
  /// The rounding order found (f16/bf16 probes with a weight): the dtype the normalized value
  /// is rounded to before the weight, nullopt for one rounding; meaningful when rounding_order_known.
  std::optional<DType> rounding_order;
  bool rounding_order_known = false;

  /// The finding with this property key, or nullptr.
  const Finding* find(const std::string& property) const;
  /// Whether that finding exists and is not undetermined.
  bool determined(const std::string& property) const;
  /// Whether eps is what the eps sweep found: inside [eps_lo, eps_hi], or within 1e-4
  /// relative of the fitted value; false when the eps finding is undetermined.
  bool eps_fits(double eps) const;
  /// Findings that deviate from the nominal convention.
  std::vector<const Finding*> deviations() const;
};

/// Runs every probe of options.op on `backend`. Throws std::invalid_argument for an op
/// without probes or bad options (d odd or < 16); BackendError when the backend refuses
/// the basic problem (no other finding could be made).
ProbeResult probe(Backend& backend, const ProbeOptions& options);

/// The convention card: TOML comment lines, then a `[case.convention]` table with eps,
/// eps_placement, variance, affine, normalized_shape and acc_dtype (each followed by a
/// comment with its certainty), parseable by the case parser.
std::string convention_card(const ProbeResult& r);
/// Human report: header, one block per finding (value, expected, certainty, evidence),
/// the presets it matches (format_preset_matches), then the card.
std::string format_probe_table(const ProbeResult& r);
/// JSON: {"backend","op","dtype","d","nominal","findings":[...],"convention":{...},
/// "presets":{"matches":[names],"differs":[{"name","differences":[...]}]},"card"}.
std::string format_probe_json(const ProbeResult& r);

/// How the probed convention compares with one framework preset (ops/presets.hpp).
struct PresetMatch {
  std::string name;                      ///< the preset ("keras.LayerNormalization")
  std::vector<std::string> differences;  ///< "eps 0.001 (found 1e-05)"; empty: matches
};

/// Every usable preset of the probed op and of the op the backend behaves as, compared on
/// the properties the probe determined: centering (the preset's op), eps (the preset's eps
/// for the probed dtype inside [eps_lo, eps_hi], or within 1e-4 relative of the fit),
/// eps_placement, variance (centered ops), affine (the inferred one, when its finding is
/// determined), the rounding order (normalized_dtype, when the probe found it: f16/bf16). Undetermined properties are not compared, so a match is a match on what was
/// seen. Matches first, then the others by number of differences, each in catalog order.
std::vector<PresetMatch> match_presets(const ProbeResult& r);
/// The properties match_presets compares that this probe left undetermined (or did not probe:
/// the rounding order outside f16/bf16), so a match says nothing about them.
std::vector<std::string> unmatched_properties(const ProbeResult& r);
/// "matches: pytorch.LayerNorm, onnx.LayerNormalization; differs from keras.LayerNormalization
/// in eps 0.001 (found 1e-05), ..." ("matches: none" when none matches), then the properties
/// `not_compared` names as not compared.
std::string format_preset_matches(const std::vector<PresetMatch>& m, const std::vector<std::string>& not_compared = {});

/// One line per (backend, op): the deviations found (or "conforms" with the main values).
/// `results` in any order; used by `normcheck probe --all-mutants`.
std::string format_probe_summary(const std::vector<ProbeResult>& results);
/// JSON array of the per-result summaries (backend, op, deviations, convention).
std::string format_probe_summary_json(const std::vector<ProbeResult>& results);

}  // namespace normcheck
