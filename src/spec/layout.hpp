// Index layouts of x that several ops share: rows over trailing dims, channels, reduced
// axes. The reference, the kernels and the mutants of those ops all use these.
#pragma once

#include <cstdint>
#include <vector>

#include "spec/op.hpp"

namespace normcheck {

/// Row decomposition over the trailing dims normalized_shape: x viewed as [rows, m] with
/// m = numel(normalized_shape); per-column parameters are indexed by the column.
struct RowLayout {
  std::int64_t rows = 0;
  std::int64_t m = 0;
};
RowLayout row_layout(const Problem& p);

/// Channel view of x [N, C, *spatial] (or [S, N, C, *spatial] with the batch_norm
/// `sequence` parameter): x as [steps, n, c, spatial] (spatial = product of the dims after
/// C, 1 if none). Element (s, i, ch, l) sits at ((s*n + i)*c + ch)*spatial + l.
struct ChannelLayout {
  std::int64_t steps = 1, n = 0, c = 0, spatial = 1;
};
ChannelLayout channel_layout(const Problem& p);

/// Axes reduced over, sorted, non-negative: conv.axes when given, else the trailing dims
/// normalized_shape.
std::vector<std::int64_t> reduced_axes(const Problem& p);
/// Groups of elements that agree on all axes but `axes` (row-major).
ReductionLayout reduction_layout(const Shape& shape, const std::vector<std::int64_t>& axes);
/// Contiguous groups of m elements (rows of x viewed as [size/m, m]).
ReductionLayout row_groups(const Problem& p, std::int64_t m);

}  // namespace normcheck
