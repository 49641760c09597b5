// The per-row algorithm of the CUDA row kernels, written once for two compilers: nvcc
// compiles it into the kernels (row_norm.cuh), the host compiler into their CPU emulation
// (emulate.hpp), which replays a launch thread by thread with the same reduction tree, so
// that the kernels' indexing and numerics are unit-tested on machines without a GPU.
//
// Per row of d values, with A the accumulation type (binary32; binary64 for f64 data),
// a group of G threads (a warp, or a block) and thread t of the group:
//   0. scan: thread t loads the vector chunks k = t, t+G, t+2G, ... (chunk k = values
//      [kW, kW+W), W the vector width) and, if t < d mod W, the tail value
//      floor(d/W) W + t; converts them to A (exact), keeps them (shared memory, or
//      re-reads x later when the row does not fit), and forms max |x|, +inf if a value is
//      NaN or +-inf; group max. A non-finite row gives NaN everywhere (as the reference).
//   1. scale s = 2^-e, e the exponent of max|x| (row_scale, as the CPU kernels): x s is
//      exact, squares of values near 1e19..1e38 do not overflow binary32 and squares of
//      subnormals do not underflow.
//   2. layer_norm: mu = (group sum of x s) / d.  (rms_norm: mu = 0.)
//   3. ss = group sum of (x s - mu)^2, each square added by one fma (two-pass: no
//      E[x^2] - E[x]^2 cancellation);
//   4. r = 1 / D_s(ss / dof) in binary64 from the binary32 ss (the CPU kernels'
//      inv_scaled_denominator), rounded once to A; ss == 0 with eps == 0 gives +inf
//      (0 * inf: NaN, as the reference); with eps > 0, D(eps) s (finite: max_scale_up);
//   5. y = (x s - mu) r, then gamma * y or fma(gamma, y, beta), rounded once (RNE) to the
//      output dtype.
// Accumulation order of each group sum: thread t adds its values in increasing column
// order into one accumulator (ceil(d / (G W)) W + 1 terms), then a butterfly
// (__shfl_xor_sync, offsets 16, 8, 4, 2, 1) over the 32 lanes of each warp, and for a
// block a second butterfly over the warps' partials (zeros beyond the warp count). All
// threads of the group end with the same value; the order is fixed by (d, W, G) alone,
// so results are reproducible run to run, and the emulation follows the same order (its
// bit-for-bit agreement with a device is the [device] test of cuda_emulation_test.cpp).
// Error bound: thread t adds n_t <= ceil(d / (G W)) W + 1 terms, then the tree adds
// depth 5 (warp) or 10 (block): |s^ - s| <= gamma(n_t + 10) sum|a_j| (Higham, Accuracy and
// Stability of Numerical Algorithms, 2nd ed., 4.2, the bound for any summation tree by
// its depth), about sqrt(n_t + 10) u sum|a_j| in practice. Adding the rounding of
// x s - mu, the fma of each square, the division by d, the binary64 denominator rounded
// once to A and the (at most) three per-element roundings of step 5:
// |y^ - y| <= ulp_out/2 + (n_t + 16) u c_i worst case, c_i the condition magnitude of
// ops/common/row_norm.hpp; typically ulp_out/2 + (sqrt(n_t + 10) + 6) u c_i, below the
// default gate 1 + 8 + sqrt(d) of checks/budget.cpp (n_t <= d/32 + 9). The CPU kernels'
// bound, with their 8 lanes replaced by G threads.
//
// Compilation: the kernels are built with --fmad=false and this file never relies on
// contraction (every fused multiply-add is an explicit fma), so device and host evaluate
// the same IEEE operations (no flush to zero on either side: no fast-math flags); host
// conversions are the correctly rounded ones of core/dtype.hpp, device ones the cvt.rn
// instructions: the same results (NaN payloads aside).
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <math.h>
#include <stdexcept>

#include "core/dtype.hpp"
#include "kernels/cuda/launch.hpp"
#include "spec/op.hpp"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define NORMCHECK_HD __host__ __device__ __forceinline__
#else
#define NORMCHECK_HD inline
#endif
#if defined(__CUDA_ARCH__)
#define NORMCHECK_UNROLL _Pragma("unroll")
#else
#define NORMCHECK_UNROLL
#endif

namespace normcheck::kernels::cuda::detail {

// ---- storage tags --------------------------------------------------------------------
/// Storage formats of the specialized kernels (S: the element's bits) and the runtime-
/// dtype tag of the generic kernel (scalar accesses, dtype read per element).
struct F32 { using S = float; };
struct F16 { using S = std::uint16_t; };
struct BF16 { using S = std::uint16_t; };
struct Dyn { using S = unsigned char; };

// ---- conversions: widening exact, narrowing correctly rounded (RNE) ---------------------
NORMCHECK_HD float f16_to_float(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h));
#else
  return normcheck::detail::half_bits_to_float(h);
#endif
}
NORMCHECK_HD float bf16_to_float(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(static_cast<unsigned>(h) << 16);
#else
  return normcheck::detail::bf16_bits_to_float(h);
#endif
}
NORMCHECK_HD std::uint16_t to_f16(float v) {
#if defined(__CUDA_ARCH__)
  return __half_as_ushort(__float2half_rn(v));
#else
  return normcheck::detail::float_to_half_bits(v);
#endif
}
NORMCHECK_HD std::uint16_t to_f16(double v) {
#if defined(__CUDA_ARCH__)
  return __half_as_ushort(__double2half(v));
#else
  return normcheck::detail::double_to_half_bits(v);
#endif
}
NORMCHECK_HD std::uint16_t to_bf16(float v) {
#if defined(__CUDA_ARCH__)
  return __bfloat16_as_ushort(__float2bfloat16_rn(v));
#else
  return normcheck::detail::float_to_bf16_bits(v);
#endif
}
NORMCHECK_HD std::uint16_t to_bf16(double v) {
#if defined(__CUDA_ARCH__)
  return __bfloat16_as_ushort(__double2bfloat16(v));
#else
  return normcheck::detail::double_to_bf16_bits(v);
#endif
}

template <class A, class Tag> struct Conv;
template <class A> struct Conv<A, F32> {
  NORMCHECK_HD static A in(float v) { return static_cast<A>(v); }
  NORMCHECK_HD static float out(A v) { return static_cast<float>(v); }
};
template <class A> struct Conv<A, F16> {
  NORMCHECK_HD static A in(std::uint16_t v) { return static_cast<A>(f16_to_float(v)); }
  NORMCHECK_HD static std::uint16_t out(A v) { return to_f16(v); }
};
template <class A> struct Conv<A, BF16> {
  NORMCHECK_HD static A in(std::uint16_t v) { return static_cast<A>(bf16_to_float(v)); }
  NORMCHECK_HD static std::uint16_t out(A v) { return to_bf16(v); }
};

// ---- vector access -----------------------------------------------------------------------
/// W consecutive elements, aligned to min(16, W sizeof(S)) bytes: one 16-byte (or
/// narrower) load or store, two for 32 bytes (8 floats of gamma beside 8 bf16 values).
template <class S, int W>
struct alignas(sizeof(S) * W < 16 ? sizeof(S) * W : 16) Pack {
  S v[W];
};

/// Host side (the emulation): a misaligned vector access, which would fault on the device,
/// throws std::logic_error.
template <class S, int W>
inline void check_aligned(const S* p) {
  if (reinterpret_cast<std::uintptr_t>(p) % alignof(Pack<S, W>) != 0)
    throw std::logic_error("cuda row kernel: misaligned vector access");
}

template <class S, int W>
NORMCHECK_HD Pack<S, W> load_pack(const S* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const Pack<S, W>*>(p);
#else
  check_aligned<S, W>(p);
  Pack<S, W> r;
  std::memcpy(&r, p, sizeof(r));
  return r;
#endif
}
template <class S, int W>
NORMCHECK_HD void store_pack(S* p, const Pack<S, W>& v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<Pack<S, W>*>(p) = v;
#else
  check_aligned<S, W>(p);
  std::memcpy(p, &v, sizeof(v));
#endif
}

/// Loads/stores of x and y for a storage tag: chunk k of a row (W values from element kW)
/// and single elements (the tail).
/// Raw: a chunk as loaded (storage bits), converted by convert(); load = both.
template <class A, class Tag, int W>
struct Access {
  using S = typename Tag::S;
  using Raw = Pack<S, W>;
  NORMCHECK_HD static Raw load_raw(const void* row, DType, std::int64_t j) {
    return load_pack<S, W>(static_cast<const S*>(row) + j);
  }
  NORMCHECK_HD static void convert(const Raw& p, DType, A (&v)[W]) {
    NORMCHECK_UNROLL
    for (int i = 0; i < W; ++i) v[i] = Conv<A, Tag>::in(p.v[i]);
  }
  NORMCHECK_HD static void load(const void* row, DType t, std::int64_t j, A (&v)[W]) { convert(load_raw(row, t, j), t, v); }
  NORMCHECK_HD static A load1(const void* row, DType, std::int64_t j) { return Conv<A, Tag>::in(static_cast<const S*>(row)[j]); }
  NORMCHECK_HD static void store(void* row, DType, std::int64_t j, const A (&v)[W]) {
    Pack<S, W> p;
    NORMCHECK_UNROLL
    for (int i = 0; i < W; ++i) p.v[i] = Conv<A, Tag>::out(v[i]);
    store_pack<S, W>(static_cast<S*>(row) + j, p);
  }
  NORMCHECK_HD static void store1(void* row, DType, std::int64_t j, A v) { static_cast<S*>(row)[j] = Conv<A, Tag>::out(v); }
};

/// The generic kernel's access: dtype switched per element (any of the four), W = 1.
template <class A>
struct Access<A, Dyn, 1> {
  NORMCHECK_HD static A load1(const void* row, DType t, std::int64_t j) {
    switch (t) {
      case DType::f64: return static_cast<A>(static_cast<const double*>(row)[j]);
      case DType::f32: return static_cast<A>(static_cast<const float*>(row)[j]);
      case DType::f16: return static_cast<A>(f16_to_float(static_cast<const std::uint16_t*>(row)[j]));
      case DType::bf16: return static_cast<A>(bf16_to_float(static_cast<const std::uint16_t*>(row)[j]));
      default: break;  // 8-bit formats: the cuda backend refuses them (cuda_backend.cpp)
    }
    return A(0);
  }
  NORMCHECK_HD static void store1(void* row, DType t, std::int64_t j, A v) {
    switch (t) {
      case DType::f64: static_cast<double*>(row)[j] = static_cast<double>(v); break;
      case DType::f32: static_cast<float*>(row)[j] = static_cast<float>(v); break;
      case DType::f16: static_cast<std::uint16_t*>(row)[j] = to_f16(v); break;
      case DType::bf16: static_cast<std::uint16_t*>(row)[j] = to_bf16(v); break;
      default: break;  // 8-bit formats: the cuda backend refuses them (cuda_backend.cpp)
    }
  }
  struct Raw {
    A v[1];
  };
  NORMCHECK_HD static Raw load_raw(const void* row, DType t, std::int64_t j) { return Raw{{load1(row, t, j)}}; }
  NORMCHECK_HD static void convert(const Raw& p, DType, A (&v)[1]) { v[0] = p.v[0]; }
  NORMCHECK_HD static void load(const void* row, DType t, std::int64_t j, A (&v)[1]) { v[0] = load1(row, t, j); }
  NORMCHECK_HD static void store(void* row, DType t, std::int64_t j, const A (&v)[1]) { store1(row, t, j, v[0]); }
};

/// Bytes per element of a storage tag (Dyn: dtype at run time).
template <class Tag> NORMCHECK_HD std::int64_t elem_bytes(DType t) {
  if constexpr (sizeof(typename Tag::S) > 1) {
    return static_cast<std::int64_t>(sizeof(typename Tag::S));
  } else {
    return t == DType::f64 ? 8 : t == DType::f32 ? 4 : 2;
  }
}

// ---- scalar helpers ------------------------------------------------------------------------
template <class A> struct Limits;
template <> struct Limits<float> {
  static constexpr float max = FLT_MAX;
  static constexpr int max_up = 100;  // row_scale cap: 2^100 is a normal float
};
template <> struct Limits<double> {
  static constexpr double max = DBL_MAX;
  static constexpr int max_up = 1000;
};
template <class A> NORMCHECK_HD A inf() { return static_cast<A>(HUGE_VAL); }
template <class A> NORMCHECK_HD A quiet_nan() { return static_cast<A>(NAN); }
NORMCHECK_HD float fma_(float a, float b, float c) { return ::fmaf(a, b, c); }
NORMCHECK_HD double fma_(double a, double b, double c) { return ::fma(a, b, c); }

/// max |v| tracking: a NaN or +-inf value makes the maximum +inf (the non-finite flag).
template <class A> NORMCHECK_HD void track_max(A& m, A v) {
  const A a = v < 0 ? -v : v;
  if (!(a <= Limits<A>::max)) m = inf<A>();
  else if (a > m) m = a;
}

/// Power-of-two scale s = 2^-e with max|x| = f 2^e, f in [0.5, 1); 1 for a zero row; at
/// most 2^max_up. The CPU kernels' row_scale (kernels/cpu/row_kernel.hpp), same values.
/// The CPU kernels' max_scale_up (kernels/cpu/row_kernel.hpp): eps s^2 stays below 2^1020.
NORMCHECK_HD int max_scale_up(int max_up, double eps) {
  if (!(eps > 0)) return max_up;
  int e = 0;
  (void)::frexp(eps, &e);
  const int cap = (1020 - e) / 2;
  return cap < max_up ? cap : max_up;
}

NORMCHECK_HD double row_scale(double amax, int max_up) {
  if (amax == 0) return 1.0;
  int e = 0;
  (void)::frexp(amax, &e);
  return ::ldexp(1.0, -e > max_up ? max_up : -e);
}

/// 1 / D_s for the scaled statistic vs = v s^2 of a row scaled by s, in binary64: the CPU
/// kernels' inv_scaled_denominator (kernels/cpu/row_kernel.hpp), same operations.
/// all_zero (ss == 0): +inf when eps == 0; with eps > 0 not special (the CPU kernels' note).
NORMCHECK_HD double inv_scaled_denominator(double vs, double s, bool all_zero, double eps, EpsPlacement pl) {
  if (all_zero && !(eps > 0)) return HUGE_VAL;
  double D = 0;
  switch (pl) {
    case EpsPlacement::inside_sqrt: D = ::sqrt(vs + eps * s * s); break;
    case EpsPlacement::outside_sqrt: D = ::sqrt(vs) + eps * s; break;
    case EpsPlacement::clamp_var: D = ::sqrt(::fmax(vs, eps * s * s)); break;
    case EpsPlacement::clamp_norm: D = ::fmax(::sqrt(vs), eps * s); break;
  }
  const double r = 1.0 / D;
  return all_zero && r > DBL_MAX ? DBL_MAX : r;
}
/// 1/D in A; for a group whose centred values are all 0 (all_zero) at most A's largest finite
/// value (the CPU kernels' acc_inverse, row_kernel.hpp: a constant row of |x| near A's top
/// under outside_sqrt/clamp_norm gave 0 * inf = NaN, exact 0).
template <class A> NORMCHECK_HD A acc_inverse(double inv, bool all_zero) {
  const double top = static_cast<double>(Limits<A>::max);
  return static_cast<A>(all_zero && inv > top && inv != HUGE_VAL ? top : inv);
}

// ---- the per-thread passes over one row ----------------------------------------------------
/// One row as seen by thread t of a group of G threads (steps 0, 2, 3, 5 above).
/// x, y: the row's first element; cache: d values of A private to the row's group
/// (shared memory), or null to re-read x; gamma/beta: d values of A or null.
template <class A, class Tin, class Tout, int W>
struct RowPasses {
  const void* x;
  void* y;
  A* cache;
  const A* gamma;
  const A* beta;
  Affine affine;
  DType xt, yt;
  std::int64_t d;

  NORMCHECK_HD std::int64_t chunks() const { return d / W; }

  NORMCHECK_HD void get(std::int64_t k, A (&v)[W]) const {
    if (cache) {
      const Pack<A, W> p = load_pack<A, W>(cache + k * W);
      NORMCHECK_UNROLL
      for (int i = 0; i < W; ++i) v[i] = p.v[i];
    } else {
      Access<A, Tin, W>::load(x, xt, k * W, v);
    }
  }
  NORMCHECK_HD A get1(std::int64_t j) const { return cache ? cache[j] : Access<A, Tin, W>::load1(x, xt, j); }

  /// Step 0: loads (and caches) thread t's values; returns their max |x|, +inf if non-finite.
  /// kBatch chunks are loaded (as raw bits) before any is used, so that each thread keeps
  /// several 16-byte loads in flight (the maximum does not depend on the order).
  NORMCHECK_HD A scan(int t, int G) const {
    using Raw = typename Access<A, Tin, W>::Raw;
    constexpr int kBatch = sizeof(Raw) >= 16 ? 2 : 4;  // 32 bytes or more in flight, no spills
    A m = 0;
    const std::int64_t n = chunks();
    for (std::int64_t k0 = t; k0 < n; k0 += static_cast<std::int64_t>(kBatch) * G) {
      Raw raw[kBatch];
      NORMCHECK_UNROLL
      for (int u = 0; u < kBatch; ++u) {
        const std::int64_t k = k0 + static_cast<std::int64_t>(u) * G;
        if (k < n) raw[u] = Access<A, Tin, W>::load_raw(x, xt, k * W);
      }
      NORMCHECK_UNROLL
      for (int u = 0; u < kBatch; ++u) {
        const std::int64_t k = k0 + static_cast<std::int64_t>(u) * G;
        if (k >= n) break;
        A v[W];
        Access<A, Tin, W>::convert(raw[u], xt, v);
        NORMCHECK_UNROLL
        for (int i = 0; i < W; ++i) track_max(m, v[i]);
        if (cache) {
          Pack<A, W> p;
          NORMCHECK_UNROLL
          for (int i = 0; i < W; ++i) p.v[i] = v[i];
          store_pack<A, W>(cache + k * W, p);
        }
      }
    }
    const std::int64_t j = n * W + t;
    if (j < d) {
      const A v = Access<A, Tin, W>::load1(x, xt, j);
      track_max(m, v);
      if (cache) cache[j] = v;
    }
    return m;
  }

  /// Step 2: thread t's sum of x s (exact products), increasing column order.
  NORMCHECK_HD A sum_scaled(int t, int G, A sa) const {
    A acc = 0;
    const std::int64_t n = chunks();
    for (std::int64_t k = t; k < n; k += G) {
      A v[W];
      get(k, v);
      NORMCHECK_UNROLL
      for (int i = 0; i < W; ++i) acc = acc + v[i] * sa;
    }
    const std::int64_t j = n * W + t;
    if (j < d) acc = acc + get1(j) * sa;
    return acc;
  }

  /// Step 3: thread t's sum of (x s - mu)^2, one fma per square.
  NORMCHECK_HD A sum_sq(int t, int G, A sa, A mu) const {
    A acc = 0;
    const std::int64_t n = chunks();
    for (std::int64_t k = t; k < n; k += G) {
      A v[W];
      get(k, v);
      NORMCHECK_UNROLL
      for (int i = 0; i < W; ++i) {
        const A c = v[i] * sa - mu;
        acc = fma_(c, c, acc);
      }
    }
    const std::int64_t j = n * W + t;
    if (j < d) {
      const A c = get1(j) * sa - mu;
      acc = fma_(c, c, acc);
    }
    return acc;
  }

  NORMCHECK_HD A affine1(A n, A g, A b) const {
    switch (affine) {
      case Affine::none: return n;
      case Affine::gamma:
      case Affine::one_plus_w: return g * n;
      case Affine::gamma_beta: return fma_(g, n, b);
    }
    return n;
  }

  /// Step 5: y = affine((x s - mu) r), rounded once to the output dtype.
  NORMCHECK_HD void write(int t, int G, A sa, A mu, A r) const {
    const std::int64_t n = chunks();
    for (std::int64_t k = t; k < n; k += G) {
      A v[W];
      get(k, v);
      Pack<A, W> g{}, b{};
      if (affine != Affine::none) g = load_pack<A, W>(gamma + k * W);
      if (affine == Affine::gamma_beta) b = load_pack<A, W>(beta + k * W);
      A o[W];
      NORMCHECK_UNROLL
      for (int i = 0; i < W; ++i) o[i] = affine1((v[i] * sa - mu) * r, g.v[i], b.v[i]);
      Access<A, Tout, W>::store(y, yt, k * W, o);
    }
    const std::int64_t j = n * W + t;
    if (j < d) {
      const A g = affine != Affine::none ? gamma[j] : A(0);
      const A b = affine == Affine::gamma_beta ? beta[j] : A(0);
      Access<A, Tout, W>::store1(y, yt, j, affine1((get1(j) * sa - mu) * r, g, b));
    }
  }

  /// A row holding NaN or +-inf: NaN everywhere.
  NORMCHECK_HD void write_nan(int t, int G) const {
    const std::int64_t n = chunks();
    A o[W];
    NORMCHECK_UNROLL
    for (int i = 0; i < W; ++i) o[i] = quiet_nan<A>();
    for (std::int64_t k = t; k < n; k += G) Access<A, Tout, W>::store(y, yt, k * W, o);
    const std::int64_t j = n * W + t;
    if (j < d) Access<A, Tout, W>::store1(y, yt, j, quiet_nan<A>());
  }
};

/// Row-level scalars of the convention (dof: variance divisor).
struct RowConvention {
  std::int64_t dof;
  double eps;
  EpsPlacement placement;
};

/// Steps 0..5 for one row. Group: the device group (row_norm.cuh: this thread's part and
/// shuffles) or the emulated one (emulate.hpp: every thread in turn, same tree), with
/// size(), reduce_max(f), reduce_sum(f) and for_each(f), f called as f(t).
template <bool kCenter, class A, class Tin, class Tout, int W, class Group>
NORMCHECK_HD void normalize_row(const RowPasses<A, Tin, Tout, W>& p, const RowConvention& c, Group& g) {
  const int G = g.size();
  const A amax = g.reduce_max([&](int t) { return p.scan(t, G); });
  if (!(amax <= Limits<A>::max)) {
    g.for_each([&](int t) { p.write_nan(t, G); });
    return;
  }
  const double s = row_scale(static_cast<double>(amax), max_scale_up(Limits<A>::max_up, c.eps));
  const A sa = static_cast<A>(s);
  A mu = 0;
  if constexpr (kCenter) mu = g.reduce_sum([&](int t) { return p.sum_scaled(t, G, sa); }) / static_cast<A>(p.d);
  const A ss = g.reduce_sum([&](int t) { return p.sum_sq(t, G, sa, mu); });
  const A r = acc_inverse<A>(
      inv_scaled_denominator(static_cast<double>(ss) / static_cast<double>(c.dof), s, ss == 0, c.eps, c.placement), ss == 0);
  g.for_each([&](int t) { p.write(t, G, sa, mu, r); });
}

// ---- instantiation table (host) ------------------------------------------------------------
/// Calls f.template run<A, Tin, Tout, W>() for the kernel that serves (x, y, acc, cfg.vec):
/// the specialized f32-accumulation kernels for f32/f16/bf16 storage and every vector
/// width launch.hpp can choose, else the generic one. The one table both the CUDA launch
/// (row_norm.cuh) and the emulation (emulate.hpp) go through. Throws std::logic_error for
/// a width the table lacks (a launch.hpp/table mismatch).
template <class Tin, class Tout, class F>
void dispatch_width(int vec, F&& f) {
  constexpr bool narrow = sizeof(typename Tin::S) == 2 && sizeof(typename Tout::S) == 2;
  switch (vec) {
    case 1: f.template run<float, Tin, Tout, 1>(); return;
    case 2: f.template run<float, Tin, Tout, 2>(); return;
    case 4: f.template run<float, Tin, Tout, 4>(); return;
    case 8:
      if constexpr (narrow) {
        f.template run<float, Tin, Tout, 8>();
        return;
      }
      break;
    default: break;
  }
  throw std::logic_error("cuda row kernel: no instantiation for this vector width");
}

template <class Tin, class F>
void dispatch_out(DType y, int vec, F&& f) {
  switch (y) {
    case DType::f32: return dispatch_width<Tin, F32>(vec, f);
    case DType::f16: return dispatch_width<Tin, F16>(vec, f);
    case DType::bf16: return dispatch_width<Tin, BF16>(vec, f);
    default: throw std::logic_error("cuda row kernel: output dtype needs the generic kernel");
  }
}

template <class F>
void dispatch(DType x, DType y, DType acc, const LaunchConfig& cfg, F&& f) {
  if (cfg.generic != uses_generic_kernel(x, y, acc)) throw std::logic_error("cuda row kernel: launch config for other dtypes");
  if (cfg.generic) {
    if (cfg.vec != 1) throw std::logic_error("cuda row kernel: the generic kernel is scalar");
    if (acc == DType::f64) f.template run<double, Dyn, Dyn, 1>();
    else f.template run<float, Dyn, Dyn, 1>();
    return;
  }
  switch (x) {
    case DType::f32: return dispatch_out<F32>(y, cfg.vec, f);
    case DType::f16: return dispatch_out<F16>(y, cfg.vec, f);
    case DType::bf16: return dispatch_out<BF16>(y, cfg.vec, f);
    default: throw std::logic_error("cuda row kernel: input dtype needs the generic kernel");
  }
}

}  // namespace normcheck::kernels::cuda::detail
