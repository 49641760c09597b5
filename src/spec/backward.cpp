// Spec of the backward direction (issue 6): which problems have a backward, its input dy
// and its outputs, and the normalization groups every direction shares.
//
// A backward problem asks for the gradients of a scalar loss L with respect to the op's
// inputs, given dy = dL/dy: the forward inputs (x, parameters, running stats...) plus dy,
// of the shape of the forward output y (= the shape of x for every op with a backward).
// Outputs (spec/op.hpp output_shapes):
//   dx      dL/dx, shape of x;
//   dgamma  dL/dgamma (for one_plus_w: dL/dw, the same value: d((1 + w) n)/dw = n), shape
//           of gamma, iff the convention has a gain; dbeta iff affine = gamma_beta;
//   ds, db  ada_layer_norm / ada_rms_norm: dL/dscale, dL/dshift, [B, d];
//   dg      scale_norm: dL/dg, the shape of g.
// batch_norm: training differentiates through the batch statistics; eval (with running
// stats) treats them as constants. Running stats are buffers, not differentiated.
// Not covered (SpecError): qk_norm (its scores couple q and k), the gated AdaLN output h,
// batch_norm sequences (sequence = true).
#include <fmt/format.h>

#include "spec/op.hpp"

namespace normcheck {

namespace detail {

void validate_direction(const Problem& p) {
  const Tensor* dy = p.input("dy");
  if (p.conv.direction == Direction::forward) {
    if (dy) throw SpecError("inputs.dy", "input dy given but direction = forward (dy is the backward pass's dL/dy)");
    return;
  }
  if (p.op == Op::qk_norm)
    throw SpecError("convention.direction", "qk_norm has no backward here (its scores couple q and k): direction = forward");
  if (p.op == Op::batch_norm && p.conv.sequence)
    throw SpecError("convention.sequence", "backward covers one batch_norm call: sequence = false");
  if ((p.op == Op::ada_layer_norm || p.op == Op::ada_rms_norm) && p.conv.gated)
    throw SpecError("convention.gated", "backward covers the ungated output y only: gated = false");
  if (!dy) throw SpecError("inputs.dy", "direction = backward needs input dy (dL/dy, the shape of y)");
  if (dy->shape() != p.x().shape())
    throw SpecError("inputs.dy.shape", fmt::format("dy has shape {}, expected the shape of y {}", shape_str(dy->shape()),
                                                   shape_str(p.x().shape())));
}

std::map<std::string, Shape> backward_output_shapes(const Problem& p) {
  std::map<std::string, Shape> o;
  o["dx"] = p.x().shape();
  auto param = [&](const char* in, const char* out) {
    if (const Tensor* t = p.input(in)) o[out] = t->shape();
  };
  switch (p.op) {
    case Op::ada_layer_norm: case Op::ada_rms_norm: param("scale", "ds"); param("shift", "db"); break;
    case Op::scale_norm: param("g", "dg"); break;
    case Op::l2_normalize: case Op::qk_norm: break;
    default: param("gamma", "dgamma"); param("beta", "dbeta"); break;
  }
  return o;
}

}  // namespace detail

std::string primary_output(const Problem& p) { return p.conv.direction == Direction::backward ? "dx" : "y"; }

ReductionLayout group_layout(const Problem& p) {
  const Shape& xs = p.x().shape();
  ReductionLayout l;
  auto rows = [&](std::int64_t m) {
    const std::int64_t n = m ? p.x().size() / m : 0;
    for (std::int64_t r = 0; r < n; ++r) l.base.push_back(r * m);
    for (std::int64_t j = 0; j < m; ++j) l.member.push_back(j);
    l.contiguous = true;
  };
  switch (p.op) {
    case Op::layer_norm: case Op::rms_norm: rows(row_layout(p).m); break;
    case Op::ada_layer_norm: case Op::ada_rms_norm: case Op::qk_norm: rows(xs.back()); break;
    case Op::group_norm: case Op::instance_norm: {
      const ChannelLayout c = channel_layout(p);
      rows((p.op == Op::instance_norm ? 1 : c.c / p.conv.num_groups) * c.spatial);
      break;
    }
    case Op::batch_norm: {
      const ChannelLayout c = channel_layout(p);
      for (std::int64_t s = 0; s < c.steps; ++s)
        for (std::int64_t ch = 0; ch < c.c; ++ch) l.base.push_back((s * c.n * c.c + ch) * c.spatial);
      for (std::int64_t i = 0; i < c.n; ++i)
        for (std::int64_t j = 0; j < c.spatial; ++j) l.member.push_back(i * c.c * c.spatial + j);
      l.contiguous = c.n == 1 || c.c == 1;
      break;
    }
    case Op::l2_normalize: case Op::scale_norm: return reduction_layout(xs, reduced_axes(p));
  }
  return l;
}

}  // namespace normcheck
