#include "spec/layout.hpp"

#include <algorithm>

namespace normcheck {

RowLayout row_layout(const Problem& p) {
  RowLayout l;
  l.m = numel(p.conv.normalized_shape);
  l.rows = l.m ? numel(p.x().shape()) / l.m : 0;
  return l;
}

ChannelLayout channel_layout(const Problem& p) {
  const Shape& xs = p.x().shape();
  ChannelLayout l;
  std::size_t k = 0;
  if (p.conv.sequence && !xs.empty()) l.steps = xs[k++];  // batch_norm's `sequence`: [S, N, C, ...]
  l.n = k < xs.size() ? xs[k++] : 0;
  l.c = k < xs.size() ? xs[k++] : 0;
  for (; k < xs.size(); ++k) l.spatial *= xs[k];
  return l;
}

std::vector<std::int64_t> reduced_axes(const Problem& p) {
  const auto r = static_cast<std::int64_t>(p.x().shape().size());
  std::vector<std::int64_t> a;
  if (p.conv.axes.empty()) {
    for (auto k = r - static_cast<std::int64_t>(p.conv.normalized_shape.size()); k < r; ++k) a.push_back(k);
  } else {
    for (auto v : p.conv.axes) a.push_back(v < 0 ? v + r : v);
  }
  std::sort(a.begin(), a.end());
  return a;
}

ReductionLayout reduction_layout(const Shape& shape, const std::vector<std::int64_t>& axes) {
  const auto r = static_cast<std::int64_t>(shape.size());
  std::vector<std::int64_t> stride(static_cast<std::size_t>(r), 1);
  for (auto k = r - 1; k > 0; --k) stride[k - 1] = stride[k] * shape[k];
  std::vector<bool> red(static_cast<std::size_t>(r), false);
  for (auto a : axes) red[a] = true;
  // Offsets spanned by a set of axes, row-major over those axes.
  auto span = [&](bool reduced) {
    std::vector<std::int64_t> off{0};
    for (std::int64_t k = 0; k < r; ++k) {
      if (red[k] != reduced) continue;
      std::vector<std::int64_t> next;
      next.reserve(off.size() * static_cast<std::size_t>(shape[k]));
      for (auto o : off)
        for (std::int64_t i = 0; i < shape[k]; ++i) next.push_back(o + i * stride[k]);
      off.swap(next);
    }
    return off;
  };
  ReductionLayout l;
  l.base = span(false);
  l.member = span(true);
  l.contiguous = true;
  for (std::size_t j = 0; j < l.member.size(); ++j) l.contiguous = l.contiguous && l.member[j] == static_cast<std::int64_t>(j);
  return l;
}

ReductionLayout row_groups(const Problem& p, std::int64_t m) {
  ReductionLayout l;
  const std::int64_t n = m ? p.x().size() / m : 0;
  for (std::int64_t r = 0; r < n; ++r) l.base.push_back(r * m);
  for (std::int64_t j = 0; j < m; ++j) l.member.push_back(j);
  l.contiguous = true;
  return l;
}

}  // namespace normcheck
