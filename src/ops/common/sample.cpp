#include "ops/common/sample.hpp"

#include <vector>

namespace normcheck::ops::sampling {

void rows_x(Sampler& s, Problem& p) {
  const Dims& d = s.dims();
  if (d.wide && d.width % 4 == 0 && d.width >= 8) {  // a normalized_shape of two dims
    p.inputs["x"] = s.x(Shape{d.rows, 4, d.width / 4}, d.width);
    p.conv.normalized_shape = Shape{4, d.width / 4};
    return;
  }
  Shape xs{d.rows, d.width};
  if (d.rows % 2 == 0 && s.coin(0.3)) xs = {2, d.rows / 2, d.width};
  p.inputs["x"] = s.x(xs, d.width);
  p.conv.normalized_shape = Shape{d.width};
}

void affine(Sampler& s, Problem& p, std::initializer_list<Affine> allowed, const Shape& shape, const char* gamma,
            const char* beta) {
  if (s.vary()) {
    std::vector<Affine> choices(allowed);
    if (s.dims().params) std::erase(choices, Affine::none);
    if (choices.empty()) choices.assign(allowed);
    p.conv.affine = choices[s.index(choices.size())];
  }
  switch (p.conv.affine) {
    case Affine::none: break;
    case Affine::gamma: p.inputs[gamma] = s.gain(shape); break;
    case Affine::gamma_beta:
      p.inputs[gamma] = s.gain(shape);
      p.inputs[beta] = s.shift(shape);
      break;
    case Affine::one_plus_w: p.inputs[gamma] = s.uniform(shape, s.dims().param, -0.5, 0.5); break;
  }
}

void statistic(Sampler& s, Problem& p, std::int64_t m) {
  if (!s.vary()) return;
  if (s.coin(0.15)) p.conv.eps_placement = s.pick({EpsPlacement::outside_sqrt, EpsPlacement::clamp_var, EpsPlacement::clamp_norm});
  if (m >= 2 && s.coin(0.1)) p.conv.variance = Variance::unbiased;
}

Shape channel_shape(std::int64_t n, std::int64_t channels, std::int64_t spatial) {
  return Shape{n, channels, spatial};
}

}  // namespace normcheck::ops::sampling
