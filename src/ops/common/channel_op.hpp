// Rules the channel ops share (group_norm, instance_norm, batch_norm: x [N, C, *spatial],
// gamma/beta [C] per affine), for their OpDefs.
#pragma once

#include <map>
#include <string>

#include "spec/layout.hpp"
#include "spec/op.hpp"

namespace normcheck::ops::channels {

/// x has at least [N, C] (after the leading S of batch_norm's `sequence`) and gamma/beta
/// are [C] per the affine. Returns the layout.
ChannelLayout validate_x_and_affine(const Problem& p);
/// Backward: dx, and dgamma/dbeta for the parameters given.
std::map<std::string, Shape> backward_outputs(const Problem& p);
/// dgamma/dbeta elements sum over steps * N * spatial values (0 without parameters).
std::int64_t param_reduction(const Problem& p);

}  // namespace normcheck::ops::channels
