// Solving eps and its placement from a measured gain curve (probe "eps sweep").
//
// A row-wise normalization maps a row with statistic v (biased variance for layer_norm,
// mean square for rms_norm) to y = g(v) (x - mu), with the gain g(v) = 1 / D(c v):
//   inside_sqrt   D = sqrt(c v + eps)        outside_sqrt  D = sqrt(c v) + eps
//   clamp_var     D = sqrt(max(c v, eps))    clamp_norm    D = max(sqrt(c v), eps)
// c = 1 for the biased estimator, m/(m-1) for the unbiased one (formulas: spec/op.hpp,
// shared/spec/worked-examples.md "Epsilon placement"). Given gains measured over a sweep
// of v (1e-14 .. 1e2), every (placement, estimator) model is fitted by least squares in
// ln g over eps >= 0; the model with the smallest residual explains the backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/op.hpp"

namespace normcheck {

/// One point of a sweep: the row's exact statistic v >= 0 (biased variance or mean square,
/// computed from the stored inputs) and the measured gain g = y / (x - mu) > 0.
struct GainSample {
  double v = 0;
  double g = 0;
};

/// Gain 1 / D(c v) of `placement` with eps >= 0 and variance factor c > 0 (formulas above).
/// Returns +inf where D = 0 (v = 0 and eps = 0).
double model_gain(EpsPlacement placement, double c, double eps, double v) noexcept;

/// The least-squares fit of one (placement, variance) model.
struct EpsFit {
  EpsPlacement placement = EpsPlacement::inside_sqrt;
  Variance variance = Variance::biased;
  double eps = 0;       ///< least-squares eps (0 when eps = 0 fits as well as any eps)
  double eps_lo = 0;    ///< interval of eps whose residual stays <= 2 min + floor
  double eps_hi = 0;    ///< (+inf when unbounded above)
  double residual = 0;  ///< RMS over the samples of ln(g_measured / g_model) at eps
  std::string eps_text; ///< shortest decimal inside [eps_lo, eps_hi] ("1e-05", "0")
};

/// Fits the 8 models (4 placements x biased/unbiased) to `samples`; returns them sorted by
/// residual, best first. `m`: row length (unbiased factor m/(m-1), m >= 2). `floor`: the
/// relative resolution of the measured gains (e.g. the unit roundoff of the output dtype),
/// which widens the eps interval. Search: eps = 0 and a grid of log10 eps in [-30, 6]
/// (step 0.005), refined by golden section; the interval by bisection on each side.
/// Samples with non-finite or non-positive g are ignored. Throws std::invalid_argument
/// when fewer than 3 samples remain.
std::vector<EpsFit> fit_eps_models(const std::vector<GainSample>& samples, std::int64_t m, double floor);

/// RMS of ln(g / model_gain) over the samples (the objective fit_eps_models minimizes).
double gain_residual(const std::vector<GainSample>& samples, EpsPlacement placement, double c, double eps);

/// Shortest decimal (1 to 17 significant digits) of a value in [lo, hi], as close to `best`
/// as that many digits allow; "0" when lo == 0 and hi is below 1e-300.
std::string shortest_decimal_in(double best, double lo, double hi);

}  // namespace normcheck
