#include "core/tensor.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace normcheck {

std::int64_t numel(const Shape& s) noexcept {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

std::vector<std::int64_t> unravel(const Shape& s, std::int64_t i) {
  std::vector<std::int64_t> c(s.size());
  for (std::size_t k = s.size(); k-- > 0;) {
    c[k] = s[k] ? i % s[k] : 0;
    i = s[k] ? i / s[k] : 0;
  }
  return c;
}

Tensor::Tensor(DType t, Shape s) : Tensor(t, std::move(s), Uninitialized{}) {
  if (!bytes_.empty()) std::memset(bytes_.data(), 0, bytes_.size());
}

Tensor::Tensor(DType t, Shape s, Uninitialized) : dtype_(t), shape_(std::move(s)) {
  // Shapes come from files (case files, .npy/.safetensors headers, workers): check them here,
  // once, for every reader. 2^36 elements (512 GiB of f64) is beyond any machine this runs on.
  constexpr std::int64_t kMax = std::int64_t{1} << 36;
  std::int64_t n = 1;
  for (auto d : shape_) {
    if (d < 0) throw std::length_error(fmt::format("shape {} has a negative dimension", shape_str(shape_)));
    if (d != 0 && n > kMax / d) throw std::length_error(fmt::format("shape {} has more than 2^36 elements", shape_str(shape_)));
    n *= d;
  }
  bytes_.resize(static_cast<std::size_t>(n) * format_info(t).bytes);
}

double Tensor::get(std::int64_t i) const noexcept {
  switch (dtype_) {
    case DType::f64: return as<double>()[i];
    case DType::f32: return as<float>()[i];
    case DType::f16: return detail::half_bits_to_double(as<std::uint16_t>()[i]);
    case DType::bf16: return detail::bf16_bits_to_double(as<std::uint16_t>()[i]);
    case DType::fp8_e4m3fn:
    case DType::fp8_e5m2: return detail::fp8_bits_to_double(dtype_, as<std::uint8_t>()[i]);
    case DType::int8: return as<std::int8_t>()[i];
  }
  return 0;
}

void Tensor::set(std::int64_t i, double v) noexcept {
  switch (dtype_) {
    case DType::f64: as<double>()[i] = v; break;
    case DType::f32: as<float>()[i] = static_cast<float>(v); break;  // IEEE cast is RNE
    case DType::f16: as<std::uint16_t>()[i] = detail::double_to_half_bits(v); break;
    case DType::bf16: as<std::uint16_t>()[i] = detail::double_to_bf16_bits(v); break;
    case DType::fp8_e4m3fn:
    case DType::fp8_e5m2: as<std::uint8_t>()[i] = detail::double_to_fp8_bits(dtype_, v); break;
    case DType::int8: as<std::int8_t>()[i] = std::isnan(v) ? std::int8_t{0} : static_cast<std::int8_t>(round_to(DType::int8, v)); break;
  }
}

std::vector<double> Tensor::to_doubles() const {
  const std::int64_t n = size();
  std::vector<double> v(static_cast<std::size_t>(n));
  if (dtype_ == DType::f32) {
    const float* d = as<float>();
    for (std::int64_t i = 0; i < n; ++i) v[i] = d[i];
  } else {
    for (std::int64_t i = 0; i < n; ++i) v[i] = get(i);
  }
  return v;
}

Tensor Tensor::from_doubles(DType t, Shape s, const std::vector<double>& v) {
  Tensor x(t, std::move(s));
  const std::int64_t n = x.size();
  if (t == DType::f32) {  // as set(): the IEEE cast is RNE, in a loop that vectorizes
    float* d = x.as<float>();
    for (std::int64_t i = 0; i < n; ++i) d[i] = static_cast<float>(v[static_cast<std::size_t>(i)]);
  } else {
    for (std::int64_t i = 0; i < n; ++i) x.set(i, v[static_cast<std::size_t>(i)]);
  }
  return x;
}

Tensor Tensor::cast(DType t) const {
  Tensor y(t, shape_);
  const std::int64_t n = size();
  for (std::int64_t i = 0; i < n; ++i) y.set(i, get(i));
  return y;
}

}  // namespace normcheck
