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
/// "per_index", "constant_row", "zero_row", "nan_input", "inf_input", "overflow_input").
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

  /// The finding with this property key, or nullptr.
  const Finding* find(const std::string& property) const;
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
/// then the card.
std::string format_probe_table(const ProbeResult& r);
/// JSON: {"backend","op","dtype","d","nominal","findings":[...],"convention":{...},"card"}.
std::string format_probe_json(const ProbeResult& r);

/// One line per (backend, op): the deviations found (or "conforms" with the main values).
/// `results` in any order; used by `normcheck probe --all-mutants`.
std::string format_probe_summary(const std::vector<ProbeResult>& results);
/// JSON array of the per-result summaries (backend, op, deviations, convention).
std::string format_probe_summary_json(const std::vector<ProbeResult>& results);

}  // namespace normcheck
