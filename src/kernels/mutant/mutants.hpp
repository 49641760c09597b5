// Deliberately wrong row-norm kernels, each a fault seen in real backends. Test-only:
// the suite must kill every one of them (fail at least one bundled case under the
// default gates). Backend names: mutant:<fault>.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "spec/op.hpp"

namespace normcheck::kernels::mutant {

enum class Fault {
  eps_outside_sqrt,        ///< x / (sqrt(v) + eps) for an inside_sqrt convention
  eps_missing,             ///< eps dropped
  wrong_eps,               ///< eps / 10 (1e-6 for 1e-5)
  unbiased_variance,       ///< 1/(m-1) instead of 1/m
  no_sqrt,                 ///< divides by v + eps
  one_pass_variance,       ///< E[x^2] - E[x]^2 in f32
  f16_accumulation,        ///< statistics accumulated in binary16
  rms_subtracts_mean,      ///< rms_norm that centers
  ln_no_centering,         ///< layer_norm without the mean
  stats_over_sequence,     ///< statistics over the last two axes ([T, d]) instead of d
  gamma_wrong_axis,        ///< gamma indexed by the row instead of the column
  w_not_one_plus_w,        ///< one_plus_w applied as plain gamma
  tail_unnormalized,       ///< last m mod 8 elements of a row copied through
};

std::string_view to_string(Fault) noexcept;
std::string_view describe(Fault) noexcept;
std::optional<Fault> parse_fault(std::string_view) noexcept;
std::vector<Fault> all_faults();

/// Runs the faulty kernel on a validated layer_norm/rms_norm problem; returns {"y"}.
Outputs run(Fault f, const Problem& p);

}  // namespace normcheck::kernels::mutant
