#include "ops/common/channel_op.hpp"

#include <fmt/format.h>

#include "spec/rules.hpp"
#include "spec/layout.hpp"

namespace normcheck::ops::channels {

ChannelLayout validate_x_and_affine(const Problem& p) {
  const Shape& xs = p.x().shape();
  const std::size_t lead = p.conv.sequence ? 1 : 0;
  rules::need(xs.size() >= 2 + lead, "inputs.x.shape",
              fmt::format("{} needs x of shape {}[N, C, *spatial], got {}", to_string(p.op), lead ? "[S, " : "[", shape_str(xs)));
  const ChannelLayout l = channel_layout(p);
  rules::affine_inputs(p, Shape{l.c});
  return l;
}

std::map<std::string, Shape> backward_outputs(const Problem& p) {
  std::map<std::string, Shape> o{{"dx", p.x().shape()}};
  if (const Tensor* t = p.input("gamma")) o["dgamma"] = t->shape();
  if (const Tensor* t = p.input("beta")) o["dbeta"] = t->shape();
  return o;
}

std::int64_t param_reduction(const Problem& p) {
  const ChannelLayout l = channel_layout(p);
  return p.conv.affine == Affine::none ? 0 : l.steps * l.n * l.spatial;
}

}  // namespace normcheck::ops::channels
