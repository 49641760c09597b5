// Deliberately wrong row-norm kernels, each a fault seen in real backends. Test-only:
// the suite must kill every one of them (fail at least one bundled case under the
// default gates). Backend names: mutant:<fault>.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "spec/layout.hpp"
#include "spec/op.hpp"
#include "spec/op_def.hpp"

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
  partial_warp_dropped,    ///< the statistics leave out the last partial warp (m mod 32 values) of a row
  padded_lanes_counted,    ///< mean and variance divide by m rounded up to 8 (zero padding counted)
  rows_grid_limit,         ///< rows from 65535 on (a launch grid's y limit) are never written: y = x there
  params_rounded_bf16,     ///< gamma and beta rounded to bfloat16 before use (a cast to the activations' dtype)
  eps_rounded_to_dtype,    ///< eps rounded to x's dtype before use
  group_reads_next,        ///< each row's statistics read one value past its end (the next row's first)
  normalized_rounded_to_out,///< the normalized value rounded to y's dtype before gamma/beta (Llama's x.to(dtype) * w) where the convention rounds once
  // Family faults (family_mutants.cpp), each on its own op(s):
  bn_biased_running_var,   ///< batch_norm: running_var updated with the biased 1/m batch variance (eval then divides by it)
  bn_stats_over_batch_only,
  bn_eval_batch_stats,     ///< batch_norm eval (track_running_stats): normalizes with the batch's statistics, not the running ones///< batch_norm: statistics per (channel, position) over N only, the spatial axes left out
  gn_interleaved_groups,   ///< group_norm: group g holds channels g, g+G, g+2G... instead of the contiguous block
  l2_eps_added,            ///< l2_normalize / scale_norm: x / (||x|| + eps) instead of x / max(||x||, eps)
  ada_broadcast_over_batch,///< ada_*: scale/shift/gate row chosen by the token index (mod B), i.e. broadcast over the batch
  qk_norm_across_heads,    ///< qk_norm: q/k statistics over all heads of a token (H * d_k values) instead of per head
  // Backward faults (backward_mutants.cpp), run on backward problems only:
  dgamma_wrong_axis,       ///< layer_norm/rms_norm: dgamma summed over the normalized axis (per row) instead of over the rows
  ln_dx_no_mean_term,      ///< layer_norm: dx = rstd (g dy - n mean(g dy n)), the - mean(g dy) term left out
  bn_backward_constant_stats,///< batch_norm training: dx = g dy / D, the batch statistics' dependence on x ignored
};

/// Whether mutant f has a forward kernel for op (the row faults: layer_norm, rms_norm; each
/// family fault: the ops it names; the backward faults: none). The backend reports other ops
/// as SKIPPED.
bool supports(Fault f, Op op) noexcept;
/// Whether mutant f runs problem p: a forward problem iff supports(f, p.op); a backward one
/// iff f is a backward fault written for p.op (backward_mutants.cpp).
bool supports(Fault f, const Problem& p) noexcept;

std::string_view to_string(Fault) noexcept;
std::string_view describe(Fault) noexcept;
std::optional<Fault> parse_fault(std::string_view) noexcept;
std::vector<Fault> all_faults();

/// Runs the faulty kernel on a validated problem of an op it supports; returns every
/// output of the op.
Outputs run(Fault f, const Problem& p);

/// The MutantDef of fault F, for the OpDef of the op(s) whose fault it models; `aimed`: a
/// bundled case that kills it by construction.
template <Fault F>
MutantDef def(std::string_view aimed) {
  return {to_string(F), describe(F), aimed, [](const Problem& p) { return supports(F, p); },
          [](const ValidProblem& p) { return run(F, *p); }};
}

namespace detail {
/// The family faults (family_mutants.cpp).
bool is_family_fault(Fault f) noexcept;
bool family_supports(Fault f, Op op) noexcept;
Outputs run_family(Fault f, const Problem& p);
/// The backward faults (backward_mutants.cpp).
bool is_backward_fault(Fault f) noexcept;
bool backward_supports(Fault f, Op op) noexcept;
Outputs run_backward(Fault f, const Problem& p);
}  // namespace detail

}  // namespace normcheck::kernels::mutant
