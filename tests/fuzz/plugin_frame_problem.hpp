// The problems the plugin-frame harness (fuzz_plugin_frame.cpp) and its seeds
// (make_seeds.cpp) share: layer_norm over the last dim of x [rows, 3] with gamma, y in one
// of the four ABI 1 dtypes. `selector`: bits 0-1 the out_dtype, bits 2-3 the rows (0..3),
// bit 4 a padded view (ABI 2), bit 5 backward (ABI 2: dy in, dx and dgamma out).
#pragma once

#include <cstdint>

#include "spec/op.hpp"

namespace normcheck::fuzz {

inline Problem plugin_frame_problem(std::uint8_t selector) {
  static constexpr DType kOut[] = {DType::f64, DType::f32, DType::f16, DType::bf16};
  const std::int64_t rows = (selector >> 2) & 3;
  Problem p{Op::layer_norm, {}, kOut[selector & 3], {}};
  p.conv.normalized_shape = {3};
  p.conv.affine = Affine::gamma;
  std::vector<double> x;
  for (std::int64_t i = 0; i < rows * 3; ++i) x.push_back(0.5 * static_cast<double>(i) - 1);
  p.inputs["x"] = Tensor::from_doubles(DType::f32, {rows, 3}, x);
  p.inputs["gamma"] = Tensor::from_doubles(DType::f32, {3}, {1, 2, -1});
  if (selector & 0x10) p.layout = MemoryLayout::padded;
  if (selector & 0x20) {
    p.conv.direction = Direction::backward;
    p.inputs["dy"] = Tensor::from_doubles(DType::f32, {rows, 3}, std::vector<double>(static_cast<std::size_t>(rows * 3), 0.5));
  }
  return p;
}

}  // namespace normcheck::fuzz
