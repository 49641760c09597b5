// Strided views: how a tensor's values are laid out in the memory a backend is handed
// (issue 13). A Tensor holds the values densely; present() lays them out in a larger storage
// buffer at an offset, with padded or permuted strides, the bytes around and between the
// elements filled with NaN bit patterns, so that a kernel that ignores the storage offset, reads
// a row past its end or assumes dense rows reads NaN and is caught; gather() is the correct
// reading of a view. The plugin ABI, the worker protocol, the cpu backend and the layout
// mutants all go through these two functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"

namespace normcheck {

/// How a problem's inputs are laid out for a backend that takes views. With the dims
/// d_0..d_{n-1} of a tensor (strides in elements):
///   contiguous     row-major, storage offset 0, nothing around it (the default)
///   offset         row-major strides at a storage offset of 5 elements (not a multiple of
///                  any vector width), 16 poison elements after the last one
///   padded         offset 5, and every stride above the innermost padded by 3 elements
///                  (stride[n-2] = d_{n-1} + 3, ...): rows are not adjacent
///   transposed     offset 5, column-major (dim 0 innermost): a row's elements are
///                  stride[n-1] = d_0 ... d_{n-2} apart
///   channels_last  offset 5, dim 1 (C of [N, C, *spatial]) innermost, then the spatial dims,
///                  then N (PyTorch's channels_last); rank < 3: row-major
/// Rank 0 and 1 tensors (parameters, statistics) get the offset only.
enum class MemoryLayout : std::uint8_t { contiguous, offset, padded, transposed, channels_last };

std::string_view to_string(MemoryLayout l) noexcept;
std::optional<MemoryLayout> parse_memory_layout(std::string_view s) noexcept;
/// "contiguous | offset | padded | transposed | channels_last", for messages.
std::string choices_memory_layout();
/// Every layout, contiguous first.
const std::vector<MemoryLayout>& all_memory_layouts();

/// A strided view of `shape` into `storage`: element (i_0, ..., i_{n-1}) is storage element
/// offset + sum_k i_k strides[k] (each element bytes(dtype) wide, in the dtype's storage format
/// as Tensor holds it). Strides are >= 0; storage holds at least the view's extent after the
/// offset.
struct StridedView {
  DType dtype = DType::f32;
  Shape shape;
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  std::vector<unsigned char> storage;

  /// Elements the storage holds.
  std::int64_t storage_elements() const noexcept;
  /// Storage index of the element with row-major flat index i (0 <= i < numel(shape)).
  std::int64_t index(std::int64_t flat) const noexcept;
  /// Whether the view is row-major at offset 0 with nothing around it (a plain dense tensor).
  bool dense() const noexcept;
  /// Whether the elements lie in row-major order (strides of a dense tensor on every dim of
  /// extent > 1), the offset and the storage around them aside: then reading the view as
  /// dense rows from its offset gives the right values, and the layout tests nothing beyond
  /// the offset (channels_last of a rank-2 tensor or of one spatial position, transposed
  /// with a dim of extent 1).
  bool row_major() const noexcept;
};

/// The values of t laid out per `l` (see MemoryLayout). Deterministic: the same tensor and
/// layout give the same bytes.
StridedView present(const Tensor& t, MemoryLayout l);
/// The dense tensor a view shows (the correct reading). Throws std::invalid_argument when an
/// element lies outside the storage or a stride is negative.
Tensor gather(const StridedView& v);

/// How a kernel reads a view: correctly, or with one of the faults of real kernels: from the
/// start of the storage (its offset ignored: the base pointer of a sliced tensor), or as dense
/// row-major from the offset (its strides ignored: contiguity assumed).
enum class ViewReading : std::uint8_t { correct, offset_ignored, strides_ignored };
/// What a kernel reading present(t, l) the way `r` says sees, as a dense tensor (NaN where it
/// reads outside the view's elements). The layout mutants and the layout probe use it.
Tensor read_view(const Tensor& t, MemoryLayout l, ViewReading r);

}  // namespace normcheck
