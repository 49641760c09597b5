#include "core/view.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace normcheck {

namespace {

constexpr std::int64_t kOffset = 5, kPad = 3, kGuard = 16;

struct LayoutName {
  MemoryLayout layout;
  std::string_view name;
};
constexpr LayoutName kNames[] = {{MemoryLayout::contiguous, "contiguous"},
                                 {MemoryLayout::offset, "offset"},
                                 {MemoryLayout::padded, "padded"},
                                 {MemoryLayout::transposed, "transposed"},
                                 {MemoryLayout::channels_last, "channels_last"}};

/// The order of the dims in memory, outermost first.
std::vector<std::size_t> memory_order(MemoryLayout l, std::size_t n) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (l == MemoryLayout::transposed) std::reverse(order.begin(), order.end());
  if (l == MemoryLayout::channels_last && n >= 3) {  // N, spatial..., C
    order.erase(order.begin() + 1);
    order.push_back(1);
  }
  return order;
}

}  // namespace

std::string_view to_string(MemoryLayout l) noexcept {
  for (const auto& n : kNames)
    if (n.layout == l) return n.name;
  return "?";
}

std::optional<MemoryLayout> parse_memory_layout(std::string_view s) noexcept {
  for (const auto& n : kNames)
    if (n.name == s) return n.layout;
  return std::nullopt;
}

std::string choices_memory_layout() {
  std::string s;
  for (const auto& n : kNames) s += (s.empty() ? "" : " | ") + std::string(n.name);
  return s;
}

const std::vector<MemoryLayout>& all_memory_layouts() {
  static const std::vector<MemoryLayout> v = [] {
    std::vector<MemoryLayout> r;
    for (const auto& n : kNames) r.push_back(n.layout);
    return r;
  }();
  return v;
}

std::int64_t StridedView::storage_elements() const noexcept {
  return static_cast<std::int64_t>(storage.size() / format_info(dtype).bytes);
}

std::int64_t StridedView::index(std::int64_t flat) const noexcept {
  std::int64_t at = offset;
  for (std::size_t k = shape.size(); k-- > 0;) {
    if (shape[k] == 0) return offset;
    at += (flat % shape[k]) * strides[k];
    flat /= shape[k];
  }
  return at;
}

bool StridedView::dense() const noexcept {
  if (offset != 0 || storage_elements() != numel(shape)) return false;
  std::int64_t s = 1;
  for (std::size_t k = shape.size(); k-- > 0;) {
    if (shape[k] != 1 && strides[k] != s) return false;
    s *= shape[k];
  }
  return true;
}

bool StridedView::row_major() const noexcept {
  std::int64_t s = 1;
  for (std::size_t k = shape.size(); k-- > 0;) {
    if (shape[k] != 1 && strides[k] != s) return false;
    s *= shape[k];
  }
  return true;
}

StridedView present(const Tensor& t, MemoryLayout l) {
  StridedView v;
  v.dtype = t.dtype();
  v.shape = t.shape();
  const std::size_t n = v.shape.size();
  v.strides.assign(n, 0);
  const std::size_t esize = format_info(t.dtype()).bytes;
  if (l == MemoryLayout::contiguous) {
    std::int64_t s = 1;
    for (std::size_t k = n; k-- > 0;) v.strides[k] = s, s *= v.shape[k];
    v.storage.assign(static_cast<const unsigned char*>(t.data()), static_cast<const unsigned char*>(t.data()) + t.nbytes());
    return v;
  }
  const MemoryLayout eff = n <= 1 ? MemoryLayout::offset : l;
  const auto order = memory_order(eff, n);
  std::int64_t s = 1;  // from the innermost dim outwards
  for (std::size_t r = n; r-- > 0;) {
    const std::size_t k = order[r];
    v.strides[k] = s;
    s = s * v.shape[k] + (eff == MemoryLayout::padded && r > 0 ? kPad : 0);
  }
  std::int64_t extent = numel(v.shape) == 0 ? 0 : 1;
  for (std::size_t k = 0; k < n && extent; ++k) extent += (v.shape[k] - 1) * v.strides[k];
  v.offset = kOffset;
  v.storage.assign(static_cast<std::size_t>(kOffset + extent + kGuard) * esize, 0xff);  // NaN in every float format
  const auto* src = static_cast<const unsigned char*>(t.data());
  for (std::int64_t i = 0; i < t.size(); ++i)
    std::memcpy(v.storage.data() + static_cast<std::size_t>(v.index(i)) * esize, src + static_cast<std::size_t>(i) * esize, esize);
  return v;
}

Tensor gather(const StridedView& v) {
  if (v.strides.size() != v.shape.size()) throw std::invalid_argument("view: strides and shape differ in rank");
  Tensor t(v.dtype, v.shape);
  if (t.size() == 0) return t;
  std::int64_t last = v.offset;
  for (std::size_t k = 0; k < v.shape.size(); ++k) {
    if (v.strides[k] < 0) throw std::invalid_argument(fmt::format("view: negative stride {} in dim {}", v.strides[k], k));
    last += (v.shape[k] - 1) * v.strides[k];
  }
  if (v.offset < 0 || last >= v.storage_elements())
    throw std::invalid_argument(fmt::format("view: elements up to {} in a storage of {}", last, v.storage_elements()));
  const std::size_t esize = format_info(v.dtype).bytes;
  auto* dst = static_cast<unsigned char*>(t.data());
  for (std::int64_t i = 0; i < t.size(); ++i)
    std::memcpy(dst + static_cast<std::size_t>(i) * esize, v.storage.data() + static_cast<std::size_t>(v.index(i)) * esize, esize);
  return t;
}

Tensor read_view(const Tensor& t, MemoryLayout l, ViewReading r) {
  StridedView v = present(t, l);
  if (r == ViewReading::offset_ignored) v.offset = 0;
  if (r == ViewReading::strides_ignored) {
    std::int64_t s = 1;
    for (std::size_t k = v.shape.size(); k-- > 0;) v.strides[k] = s, s *= v.shape[k];
  }
  return gather(v);  // within the storage: a dense extent is no larger than the view's
}

}  // namespace normcheck
