// The residual stack of a model: its norm sites, seeded parameters, and one forward pass
// with a caller-supplied evaluator for the norms (DESIGN.md "trace").
//
// Everything but the norms is the same code for every path (backend, injected backend,
// reference): the branches in binary32 on the CPU, each stream value rounded to the
// activation dtype. Two paths that feed the same norm outputs produce bit-identical
// streams, so any difference between them comes from the norms alone.
//
// Per block b (x: [tokens, d] in the activation dtype, tau_r the row gain, F_b the branch):
//   pre_norm   x <- rnd(x + tau (.) rnd(F_b(N_b(x))))
//   post_norm  x <- N_b(rnd(tau (.) (x + rnd(F_b(x)))))
//   sandwich   x <- rnd(x + tau (.) N_post,b(rnd(tau (.) F_b(N_pre,b(x)))))
// then, if the model has one, the final norm N_final(x). rnd: one rounding (RNE) to the
// activation dtype of the value computed in binary64 (sums of two stream values and the
// product by tau); F_b's matrix product accumulates in binary32 in a fixed order
// (j = 0..d-1), GELU is applied to the binary32 accumulator, then rnd.
//
// Quiet rows (tokens with tau_r = quiet.scale, all others 1): pre_norm and sandwich also
// start them at x0_r = tau_r z_r. Every tensor that enters a norm then has quiet rows of
// rms near tau (the stream of pre_norm and sandwich grows by about sqrt(blocks)), which a
// model file sets near sqrt(eps): there the eps convention decides the output (DESIGN.md:
// var 1e-12 vs eps 1e-5 gives gain 316 inside the sqrt and 90909 outside), so a fault in
// eps handling is visible at the site where it happens and not only where it has
// accumulated. With tau = 1 for all rows (no [quiet] table) the formulas are the plain
// pre-norm, post-norm and sandwich blocks.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "trace/model.hpp"

namespace normcheck::trace {

/// Which norm of a block a site is.
enum class SiteRole { norm, pre, post, final };
std::string_view to_string(SiteRole) noexcept;

/// One norm site: evaluation order, name ("block03.norm", "block03.pre", "block03.post",
/// "final"), the block it belongs to (-1 for final), its spec and its drawn parameters
/// (gamma/w and beta of shape [d] in the activation dtype; empty when the affine
/// convention has none).
struct Site {
  int index = 0;
  std::string name;
  std::int64_t block = -1;
  SiteRole role = SiteRole::norm;
  const NormSpec* spec = nullptr;
  Tensor gamma, beta;
};

/// A model instantiated from its seed: sites, branch weights W_b ([d, d] row-major, stored
/// as binary32 values of the activation dtype), the input x0 ([tokens, d]) and the row
/// gains tau ([tokens]). Seeds: splitmix64(model.seed, tag, index) per tensor, so adding a
/// block does not change the others.
struct Stack {
  const Model* model = nullptr;
  std::vector<Site> sites;
  std::vector<std::vector<float>> weights;
  Tensor x0;
  std::vector<double> tau;
};

/// Builds the stack of a parsed model (deterministic on every platform: generators of
/// cases/case.hpp). The Stack refers to `m`, which must outlive it.
Stack build_stack(const Model& m);

/// The problem of `site` on input x ([tokens, d], activation dtype): op, convention,
/// out_dtype = activation dtype, inputs x, gamma, beta.
Problem site_problem(const Stack& st, const Site& site, const Tensor& x);

/// Evaluates one norm site: returns its output ([tokens, d], activation dtype).
using NormFn = std::function<Tensor(const Site&, const Problem&)>;

/// One forward pass of the stack (formulas above), calling `norm` at every site in order.
/// Returns the final stream (after the final norm, if any).
Tensor run_stack(const Stack& st, const NormFn& norm);

/// Most stream roundings to the activation dtype on the path between one norm site and the
/// next: branch output and residual add (pre_norm), branch output and sum (post_norm); a
/// sandwich has one between N_pre and N_post and one after N_post, so 2 over-counts there.
/// Used by the accumulated threshold (trace.cpp).
constexpr int kRoundingsPerStep = 2;

}  // namespace normcheck::trace
