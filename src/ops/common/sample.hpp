// Shared pieces of the ops' sample hooks (OpDef::sample, spec/sample.hpp): the row layout
// x [rows, width], the affine parameters, and the choices of the statistic conventions.
#pragma once

#include <initializer_list>

#include "spec/sample.hpp"

namespace normcheck::ops::sampling {

/// x of shape [rows, width] (for an even row count, sometimes [2, rows / 2, width], so that
/// leading dims are more than one), normalized_shape [width].
void rows_x(Sampler& s, Problem& p);
/// When s.vary(): affine drawn among `allowed` (else the op's default stays). Then the
/// parameters the affine needs, of `shape`: gamma (a gain; for one_plus_w a weight w around
/// 0, so that 1 + w is a gain) and beta (a shift), named `gamma`, `beta`.
void affine(Sampler& s, Problem& p, std::initializer_list<Affine> allowed, const Shape& shape, const char* gamma = "gamma",
            const char* beta = "beta");
/// When s.vary(): eps_placement sometimes outside_sqrt, clamp_var or clamp_norm, the variance sometimes
/// unbiased (m >= 2 values per group).
void statistic(Sampler& s, Problem& p, std::int64_t m);
/// The shape [N, C, L] of x for the channel ops (L = 1 included: a spatial axis of one).
Shape channel_shape(std::int64_t n, std::int64_t channels, std::int64_t spatial);

}  // namespace normcheck::ops::sampling
