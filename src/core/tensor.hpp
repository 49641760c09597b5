// A dense, row-major tensor holding the bytes of its dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <new>
#include <type_traits>
#include <vector>

#include "core/dtype.hpp"

namespace normcheck {

using Shape = std::vector<std::int64_t>;

/// Number of elements of a shape (1 for the empty shape of a scalar).
std::int64_t numel(const Shape& s) noexcept;
/// "[2, 3, 4]".
std::string shape_str(const Shape& s);
/// Row-major coordinates of flat index `i` in `s`.
std::vector<std::int64_t> unravel(const Shape& s, std::int64_t i);

/// Dense row-major tensor: `dtype`, `shape` and numel * bytes(dtype) bytes of storage.
/// Values are stored in their format (binary16 bits for f16, the upper half of a binary32
/// for bf16, the OFP8 byte for fp8_*, int8_t for int8), so a kernel sees exactly what a
/// device buffer holds. get()/set() convert through double, which holds every value of
/// every format exactly; set() rounds once (RNE, subnormals, overflow to inf; fp8_e4m3fn:
/// NaN; int8: saturated, NaN stored as 0) (core/dtype.hpp round_to).
class Tensor {
 public:
  Tensor() = default;
  /// Throws std::length_error for a negative dimension or more than 2^36 elements
  /// (std::bad_alloc when the memory is not there). Every element is 0.
  Tensor(DType t, Shape s);
  /// Tag of the constructor that leaves the storage unwritten.
  struct Uninitialized {};
  /// As Tensor(t, s) but the elements hold whatever the allocator returned: for a kernel that
  /// writes every element (a zero fill of a 16 MB output cost as much as the kernel itself).
  Tensor(DType t, Shape s, Uninitialized);

  DType dtype() const noexcept { return dtype_; }
  const Shape& shape() const noexcept { return shape_; }
  std::int64_t size() const noexcept { return static_cast<std::int64_t>(bytes_.size() / format_info(dtype_).bytes); }
  bool empty() const noexcept { return bytes_.empty(); }

  /// Value of element i as a double (exact).
  double get(std::int64_t i) const noexcept;
  /// Stores v rounded once to the dtype.
  void set(std::int64_t i, double v) noexcept;

  /// All values as doubles (exact).
  std::vector<double> to_doubles() const;
  /// Builds a tensor of dtype t from doubles (each rounded once).
  static Tensor from_doubles(DType t, Shape s, const std::vector<double>& v);
  /// The same values (rounded once) in another dtype.
  Tensor cast(DType t) const;

  void* data() noexcept { return bytes_.data(); }
  const void* data() const noexcept { return bytes_.data(); }
  template <class T> T* as() noexcept { return reinterpret_cast<T*>(bytes_.data()); }
  template <class T> const T* as() const noexcept { return reinterpret_cast<const T*>(bytes_.data()); }
  std::size_t nbytes() const noexcept { return bytes_.size(); }

  /// Fills every element with a signalling bit pattern (0xFF bytes: NaN in all float
  /// formats; -1 in int8, which has no NaN), so that an element a kernel never writes is
  /// visible.
  void poison() noexcept { std::memset(bytes_.data(), 0xff, bytes_.size()); }

 private:
  DType dtype_ = DType::f32;
  Shape shape_;
  /// Default-initializes on resize (no zero fill); the zeroing constructor fills explicitly.
  /// Storage starts on a 64-byte boundary (a cache line, an AVX-512 vector): a kernel's rows
  /// of 64-byte multiples then fill whole lines, which its streaming stores need (issue 15).
  /// A whole allocator, not one derived from std::allocator: an inherited allocation function
  /// (C++23's allocate_at_least) would take unaligned memory that deallocate frees as aligned.
  struct NoFill {
    using value_type = unsigned char;
    template <class U> struct rebind {  // only ever to its own value type
      static_assert(std::is_same_v<U, unsigned char>);
      using other = NoFill;
    };
    static constexpr std::align_val_t kAlign{64};
    NoFill() noexcept = default;
    unsigned char* allocate(std::size_t n) { return static_cast<unsigned char*>(::operator new(n, kAlign)); }
    void deallocate(unsigned char* p, std::size_t) noexcept { ::operator delete(p, kAlign); }
    void construct(unsigned char* p) noexcept { ::new (static_cast<void*>(p)) unsigned char; }
    void construct(unsigned char* p, unsigned char v) noexcept { ::new (static_cast<void*>(p)) unsigned char(v); }
    friend bool operator==(const NoFill&, const NoFill&) noexcept { return true; }
  };
  std::vector<unsigned char, NoFill> bytes_;
};

}  // namespace normcheck
