// The fast forward row kernel of layer_norm and rms_norm for binary32 accumulation (f32,
// bf16 and f16 data and outputs), issue 15: the same numerics as normalize_rows
// (row_kernel.hpp: scan, scale by 2^-e, [centre], sum of squares, binary64 denominator, one
// rounding of g n + b), in four passes over a row instead of nine (rms_norm: two, where its
// scan's unscaled sum of squares gives pass 3's bits: row_stats), reading x in place,
// writing y in its dtype directly, and compiled for AVX-512, AVX2 and baseline x86-64 with a
// run-time choice (cpu_tier(), below).
// -ffp-contract=off (CMakeLists.txt) keeps every tier's arithmetic the same: the vector width
// only decides how many lanes run at once, so the results are bit-identical across tiers
// and thread counts.
//
// Passes per row of m values:
//   1. scan: max |x| (any inf or NaN: a NaN row), whether all values equal x_0 (a constant row);
//   2. [centre] mu_s = wide_sum(x s) / m, or x_0 s exactly for a constant row (rows beyond
//      L1: s times the scan's wide_sum(x) where that is the same value: row_stats);
//   3. ss = wide_sum((x s - mu_s)^2) (rms_norm: s^2 times the scan's wide_sum(x^2) where
//      that is the same value: row_stats);
//   4. y_j = g_j ((x_j s - mu_s) r) + b_j, r = 1 / D_s(ss / m') formed in binary64 and
//      rounded once to binary32; rounded once to y's dtype. Stored directly, or a block at a
//      time through a buffer (f16: F16C; a y beyond the caches: streaming stores, below).
// Accumulation order (wide_sum): blocks of kWideBlock = 256 values, each summed by kWide = 32
// lanes (lane l adds x_{8k + ...}: values j = l, l + 32, ..., 8 per lane) whose partial sums
// are added pairwise (5 levels), then the block sums pairwise by levels (adjacent pairs, an odd
// last one carried up). Forward error of a sum of m terms
// a_j: |s^ - s| <= gamma(8 + 5 + ceil(log2(m / 256))) sum |a_j| worst case (Higham 2002,
// 4.2 and 4.6), the same 17 at m = 4096 as blocked_sum's 8 + 3 + 6; the gate's analysis
// (checks/budget.cpp) counts sqrt(m), which both are below. The 32 independent lanes are
// what lets the adds pipeline (8 lanes left the loop waiting on one register's latency).
// Rows of one block whose width is a multiple of 16 (d = 16, 32, ..., 256: head dims, QK-norm)
// go 16 at a time (tile_stats, tile_write): each row's passes as above, but the lane
// reductions of 16 rows share their shuffles and adds (and a buffered y's 16 rows are one put).
#include <omp.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define NC_F16C 1
#endif

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/region_errors.hpp"
#include "ops/common/cpu_rows_fast.hpp"
#include "ops/common/row_kernel.hpp"

// Instruction-set tiers: the row functions are compiled three times, for x86-64-v4 (AVX-512),
// x86-64-v3 (AVX2, FMA, F16C) and baseline x86-64 (SSE2), and cpu_tier() picks one per
// process from CPUID. By hand, not GCC's target_clones: GCC 12 takes its dispatcher for
// nothrow (an exception thrown inside a clone, such as std::bad_alloc from a row buffer,
// terminates the process; ball.hpp met it with Uncertain), and a test cannot choose a clone.
// NORMCHECK_CPU_TIER=x86-64-v3 or x86-64 lowers the tier and with it every instruction-set
// choice in this file (tier_allows: F16C's AVX-512 form, the streaming stores and
// AVX512-BF16 need x86-64-v4, F16C's AVX form x86-64-v3), so this file's instruction choices
// under it are those a CPU of that tier gets (ctest runs the kernel's tests at each tier;
// glibc's own routines keep their choice). Builds without dispatch (clang,
// -DNORMCHECK_NO_CPU_DISPATCH, other architectures) have the baseline only.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(NORMCHECK_NO_CPU_DISPATCH)
#define NC_TIERS 1
#endif

namespace normcheck::kernels::cpu::detail {

namespace {

enum class Tier { baseline = 0, v3 = 1, v4 = 2 };
constexpr const char* kTierNames[] = {"x86-64", "x86-64-v3", "x86-64-v4"};

/// The tier NORMCHECK_CPU_TIER names, if it is set (std::invalid_argument for another name).
std::optional<Tier> requested_tier() {
  const char* e = std::getenv("NORMCHECK_CPU_TIER");
  if (e == nullptr) return std::nullopt;
  for (int t = 0; t < 3; ++t)
    if (std::strcmp(e, kTierNames[t]) == 0) return static_cast<Tier>(t);
  throw std::invalid_argument(std::string("NORMCHECK_CPU_TIER='") + e + "': expected x86-64-v4, x86-64-v3 or x86-64 (or unset: the CPU's best)");
}

/// The best tier of this CPU and build.
Tier best_tier() {
#ifdef NC_TIERS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return Tier::v4;
  if (__builtin_cpu_supports("x86-64-v3")) return Tier::v3;
#endif
  return Tier::baseline;
}

/// The tier the row functions run at: the best, or the lower one NORMCHECK_CPU_TIER names
/// (std::runtime_error for a higher one: a test of that tier must not pass on another).
/// Decided once; normalize_rows_fast asks first, so a bad setting throws before any row runs.
Tier cpu_tier() {
  static const Tier t = [] {
    const Tier best = best_tier();
    const std::optional<Tier> want = requested_tier();
    if (want && *want > best)
      throw std::runtime_error(std::string("NORMCHECK_CPU_TIER='") + kTierNames[static_cast<int>(*want)] + "': this CPU and build run at most " +
                               kTierNames[static_cast<int>(best)]);
    return want.value_or(best);
  }();
  return t;
}

/// Whether an instruction-set choice that needs tier `needed` may be taken (the CPU's own
/// feature test comes on top): always, unless NORMCHECK_CPU_TIER names a lower tier.
bool tier_allows(Tier needed) {
  const std::optional<Tier> want = requested_tier();
  return !want || *want >= needed;
}

constexpr int kWide = 32;
constexpr std::int64_t kWideBlock = 256;

// GCC's generic vectors (every tier lowers them to its widest registers; the baseline
// to SSE pairs): the lane reductions below stay in registers (as arrays they went through the
// stack one scalar at a time, a third of the kernel's time at d = 64).
typedef float V16 __attribute__((vector_size(64)));
typedef float V8 __attribute__((vector_size(32)));
typedef float V4 __attribute__((vector_size(16)));
typedef std::uint32_t U16 __attribute__((vector_size(64)));

/// Pairwise sum of 32 lanes by levels: acc[l] += acc[l + w] for w = 16, 8, 4, 2, then
/// acc[0] + acc[1] (the order the file's header documents).
[[gnu::always_inline]] inline float lanes_sum(const float* acc) {
  static_assert(kWide == 32);
  V16 a, b;
  __builtin_memcpy(&a, acc, sizeof a);
  __builtin_memcpy(&b, acc + 16, sizeof b);
  a += b;
  const V8 c = __builtin_shufflevector(a, a, 0, 1, 2, 3, 4, 5, 6, 7) + __builtin_shufflevector(a, a, 8, 9, 10, 11, 12, 13, 14, 15);
  const V4 d = __builtin_shufflevector(c, c, 0, 1, 2, 3) + __builtin_shufflevector(c, c, 4, 5, 6, 7);
  return (d[0] + d[2]) + (d[1] + d[3]);
}

typedef std::uint32_t U8 __attribute__((vector_size(32)));
typedef std::uint32_t U4 __attribute__((vector_size(16)));
enum class LaneOp { max, min, bit_or, sum };
/// *out = kOp(u, v) lane by lane (references: a generic vector passed or returned by value
/// would cross the baseline tier's calls by another ABI than AVX-512's, of which GCC warns).
template <LaneOp kOp, class V>
[[gnu::always_inline]] inline void lane_op(V* out, const V& u, const V& v) {
  if constexpr (kOp == LaneOp::max) *out = u > v ? u : v;
  else if constexpr (kOp == LaneOp::min) *out = u < v ? u : v;
  else if constexpr (kOp == LaneOp::sum) *out = u + v;
  else *out = u | v;
}
/// kOp over the 16 lanes of a by halving in registers (a loop over the lanes made a 16-step
/// scalar chain per row, a sixth of the kernel's time at d = 64).
template <LaneOp kOp>
[[gnu::always_inline]] inline std::uint32_t tree_of_16(const U16& a) {
  U8 c;
  lane_op<kOp>(&c, __builtin_shufflevector(a, a, 0, 1, 2, 3, 4, 5, 6, 7), __builtin_shufflevector(a, a, 8, 9, 10, 11, 12, 13, 14, 15));
  U4 d, e;
  lane_op<kOp>(&d, __builtin_shufflevector(c, c, 0, 1, 2, 3), __builtin_shufflevector(c, c, 4, 5, 6, 7));
  lane_op<kOp>(&e, d, __builtin_shufflevector(d, d, 2, 3, 0, 1));
  std::uint32_t r;
  lane_op<kOp>(&r, std::uint32_t{e[0]}, std::uint32_t{e[1]});
  return r;
}

/// Maximum and bitwise or over 32 lanes of unsigned values (order-free).
[[gnu::always_inline]] inline std::uint32_t lanes_max(const std::uint32_t* v) {
  U16 a, b;
  __builtin_memcpy(&a, v, sizeof a);
  __builtin_memcpy(&b, v + 16, sizeof b);
  a = a > b ? a : b;
  return tree_of_16<LaneOp::max>(a);
}
[[gnu::always_inline]] inline std::uint32_t lanes_or(const std::uint32_t* v) {
  U16 a, b;
  __builtin_memcpy(&a, v, sizeof a);
  __builtin_memcpy(&b, v + 16, sizeof b);
  a |= b;
  return tree_of_16<LaneOp::bit_or>(a);
}

/// Sum of g(j) for j in [first, first + m), m <= kWideBlock, over kWide lanes then pairwise.
template <class G>
[[gnu::always_inline]] inline float wide_block(std::int64_t first, std::int64_t m, G g) {
  float acc[kWide] = {};
  std::int64_t j = 0;
  for (; j + kWide <= m; j += kWide)
    for (int l = 0; l < kWide; ++l) acc[l] += g(first + j + l);
  for (int l = 0; j + l < m; ++l) acc[l] += g(first + j + l);  // the tail: lanes 0.. once more
  return lanes_sum(acc);
}

/// Pairwise sum of a[0..n), in place, by levels: adjacent pairs (a[2i] + a[2i+1]), an odd
/// last value carried up unchanged, until one value is left (ceil(log2 n) levels).
[[gnu::always_inline]] inline float pairwise(float* a, std::int64_t n) {
  if (n == 0) return 0.0f;
  while (n > 1) {
    const std::int64_t h = n / 2;
    for (std::int64_t i = 0; i < h; ++i) a[i] = a[2 * i] + a[2 * i + 1];
    if (n % 2) a[h] = a[n - 1];
    n = h + n % 2;
  }
  return a[0];
}

/// Sum of g(j) for j in [0, m) in wide_sum's order (the file's header): each block of
/// kWideBlock values by wide_block, into `blocks` (ceil(m / kWideBlock) floats), then
/// pairwise by levels.
template <class G, class H>
[[gnu::always_inline]] inline float wide_sum(std::int64_t m, float* blocks, G g, H after_block) {
  const std::int64_t nb = (m + kWideBlock - 1) / kWideBlock;
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::int64_t first = b * kWideBlock;
    blocks[b] = wide_block(first, m - first < kWideBlock ? m - first : kWideBlock, g);
    after_block(b, nb);
  }
  return pairwise(blocks, nb);
}
template <class G>
[[gnu::always_inline]] inline float wide_sum(std::int64_t m, float* blocks, G g) {
  return wide_sum(m, blocks, g, [](std::int64_t, std::int64_t) {});
}

// binary16 rows <-> binary32 rows: the F16C instructions where the CPU has them (exact for
// every value; RNE with subnormals and overflow to inf, as float_to_half_bits; a NaN stays a
// NaN, its payload kept where the software conversion writes 0x7e00), else core/dtype.hpp's
// conversions. Chosen once per process (functions with their own target, not tiers: the
// intrinsics need the ISA in the function that holds them).
#ifdef NC_F16C
// GCC 12 warns inside its own avx512fintrin.h (_mm512_undefined_ps as the unused merge
// source of a conversion: GCC bug 105593), not about this code.
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
__attribute__((target("avx512f,f16c"))) void half_to_float_avx512(const std::uint16_t* s, float* d, std::int64_t n) {
  std::int64_t k = 0;
  for (; k + 16 <= n; k += 16) _mm512_storeu_ps(d + k, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + k))));
  for (; k < n; ++k) d[k] = normcheck::detail::half_bits_to_float(s[k]);
}
__attribute__((target("avx512f,f16c"))) void float_to_half_avx512(const float* s, std::uint16_t* d, std::int64_t n) {
  std::int64_t k = 0;
  for (; k + 16 <= n; k += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + k), _mm512_cvtps_ph(_mm512_loadu_ps(s + k), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; k < n; ++k) d[k] = normcheck::detail::float_to_half_bits(s[k]);
}
__attribute__((target("avx,f16c"))) void half_to_float_f16c(const std::uint16_t* s, float* d, std::int64_t n) {
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) _mm256_storeu_ps(d + k, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k))));
  for (; k < n; ++k) d[k] = normcheck::detail::half_bits_to_float(s[k]);
}
__attribute__((target("avx,f16c"))) void float_to_half_f16c(const float* s, std::uint16_t* d, std::int64_t n) {
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + k), _mm256_cvtps_ph(_mm256_loadu_ps(s + k), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; k < n; ++k) d[k] = normcheck::detail::float_to_half_bits(s[k]);
}
#pragma GCC diagnostic pop
#endif
void half_to_float_soft(const std::uint16_t* s, float* d, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) d[k] = normcheck::detail::half_bits_to_float(s[k]);
}
void float_to_half_soft(const float* s, std::uint16_t* d, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) d[k] = normcheck::detail::float_to_half_bits(s[k]);
}

struct HalfConverters {
  void (*widen)(const std::uint16_t*, float*, std::int64_t);
  void (*narrow)(const float*, std::uint16_t*, std::int64_t);
};
const HalfConverters& half_converters() {
  static const HalfConverters c = [] {
#ifdef NC_F16C
    __builtin_cpu_init();
    // F16C from CPUID leaf 1 (clang's __builtin_cpu_supports does not know "f16c"); the
    // AVX/AVX-512 checks include the OS's support of their register state.
    unsigned a = 0, b = 0, c = 0, d = 0;
    const bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
    if (f16c && std::getenv("NORMCHECK_NO_F16C") == nullptr) {  // the software path on demand (its test)
      if (__builtin_cpu_supports("avx512f") && tier_allows(Tier::v4)) return HalfConverters{half_to_float_avx512, float_to_half_avx512};
      if (__builtin_cpu_supports("avx") && tier_allows(Tier::v3)) return HalfConverters{half_to_float_f16c, float_to_half_f16c};
    }
#endif
    return HalfConverters{half_to_float_soft, float_to_half_soft};
  }();
  return c;
}

// Streaming stores of y (issue 15): a store to a line that is not in the cache first reads
// it from memory (read for ownership), so a kernel writing y with ordinary stores moves
// 3 bytes for each 2 a copy moves (the copy's `rep movsb` and non-temporal stores skip the
// read). For a y larger than kStreamBytes, pass 4 writes each block of binary32 values into a
// buffer in L1 and these functions store it in y's dtype with non-temporal stores (64-byte
// aligned; the unaligned head and the tail with ordinary ones). Same roundings as the
// ordinary paths: RNE with subnormals (float_to_bf16_bits' integer formula, F16C's
// conversion); tests compare every path bit for bit. The caller fences (_mm_sfence) before
// y is read by another thread.
// kStreamBytes: a y of at least this many bytes does not stay in the caches for its reader
// anyway (the checks read it after the whole tensor is written; L2 is 1-2 MiB a core); a
// smaller one is stored the ordinary way and stays cached. Measured (bench, 1 thread, same-run
// alternation): +15-25% GB/s for f32 y at d >= 768, +5-15% for bf16/f16; rows shorter than a
// block (d = 64) no faster, so they keep the ordinary stores.
constexpr std::int64_t kStreamBytes = std::int64_t{16} << 20;
/// The number of leading values of d (elements of `size` bytes) before a 64-byte boundary, at most n.
inline std::int64_t head_to_line(const void* d, std::size_t size, std::int64_t n) {
  const auto a = reinterpret_cast<std::uintptr_t>(d);
  const auto h = static_cast<std::int64_t>(((64 - (a & 63)) & 63) / size);
  return h < n ? h : n;
}
/// The same stores with ordinary instructions (a CPU without AVX-512 BW; the tests' buffered path there).
void put_f32_plain(const float* s, float* d, std::int64_t n) { for (std::int64_t k = 0; k < n; ++k) d[k] = s[k]; }
void put_bf16_plain(const float* s, std::uint16_t* d, std::int64_t n) { for (std::int64_t k = 0; k < n; ++k) d[k] = normcheck::detail::float_to_bf16_bits(s[k]); }
#ifdef NC_F16C
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
__attribute__((target("avx512f,avx512bw"))) void put_f32_stream(const float* s, float* d, std::int64_t n) {
  std::int64_t k = head_to_line(d, 4, n);
  for (std::int64_t i = 0; i < k; ++i) d[i] = s[i];
  for (; k + 16 <= n; k += 16) _mm512_stream_ps(d + k, _mm512_loadu_ps(s + k));
  for (; k < n; ++k) d[k] = s[k];
}
/// 16 binary32 values -> 16 bf16 bits (float_to_bf16_bits: RNE; a NaN quieted, its sign and top payload kept).
__attribute__((target("avx512f,avx512bw"))) inline __m256i bf16_of_16(__m512 v) {
  const __m512i x = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(x, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
  const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(_mm512_mask_mov_epi32(rounded, nan, quiet));
}
__attribute__((target("avx512f,avx512bw"))) void put_bf16_stream(const float* s, std::uint16_t* d, std::int64_t n) {
  std::int64_t k = head_to_line(d, 2, n);
  for (std::int64_t i = 0; i < k; ++i) d[i] = normcheck::detail::float_to_bf16_bits(s[i]);
  for (; k + 32 <= n; k += 32) {
    const __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(bf16_of_16(_mm512_loadu_ps(s + k))), bf16_of_16(_mm512_loadu_ps(s + k + 16)), 1);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + k), v);
  }
  for (; k < n; ++k) d[k] = normcheck::detail::float_to_bf16_bits(s[k]);
}
__attribute__((target("avx512f,avx512bw,f16c"))) void put_f16_stream(const float* s, std::uint16_t* d, std::int64_t n) {
  std::int64_t k = head_to_line(d, 2, n);
  for (std::int64_t i = 0; i < k; ++i) d[i] = normcheck::detail::float_to_half_bits(s[i]);
  for (; k + 32 <= n; k += 32) {
    const __m256i a = _mm512_cvtps_ph(_mm512_loadu_ps(s + k), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i b = _mm512_cvtps_ph(_mm512_loadu_ps(s + k + 16), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + k), _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1));
  }
  for (; k < n; ++k) d[k] = normcheck::detail::float_to_half_bits(s[k]);
}
/// bf16 by AVX512-BF16's VCVTNE2PS2BF16 (32 values an instruction, where bf16_of_16's formula
/// takes nine): the Intel SDM's convert_fp32_to_bfloat16 is float_to_bf16_bits' formula (RNE;
/// a NaN quieted with its sign and top payload; inf kept; MXCSR not consulted) except that a
/// subnormal input becomes +-0 (checked on all 2^32 inputs: the subnormals are the only
/// differences), so 32 values holding a subnormal go through bf16_of_16 instead. Streaming
/// (kStream: whole 64-byte lines from the first boundary) or ordinary stores.
template <bool kStream>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512bf16"))) void put_bf16_cvt(const float* s, std::uint16_t* d, std::int64_t n) {
  // VFPCLASSPS follows MXCSR.DAZ: where a host process set it, it sees no subnormal, so
  // every value takes the integer formula then (one read of MXCSR per block).
  const bool daz = (_mm_getcsr() & 0x0040u) != 0;
  std::int64_t k = kStream ? head_to_line(d, 2, n) : 0;
  for (std::int64_t i = 0; i < k; ++i) d[i] = normcheck::detail::float_to_bf16_bits(s[i]);
  for (; k + 32 <= n; k += 32) {
    const __m512 a = _mm512_loadu_ps(s + k), b = _mm512_loadu_ps(s + k + 16);
    constexpr int kSubnormal = 0x20;  // VFPCLASSPS's class bit for a denormal
    __m512i v;
    if (daz || (_mm512_fpclass_ps_mask(a, kSubnormal) | _mm512_fpclass_ps_mask(b, kSubnormal)))
      v = _mm512_inserti64x4(_mm512_castsi256_si512(bf16_of_16(a)), bf16_of_16(b), 1);
    else
      v = (__m512i)_mm512_cvtne2ps_pbh(b, a);  // b's values in the high half (a vector cast: same 64 bytes)
    if constexpr (kStream) _mm512_stream_si512(reinterpret_cast<__m512i*>(d + k), v);
    else _mm512_storeu_si512(d + k, v);
  }
  for (; k < n; ++k) d[k] = normcheck::detail::float_to_bf16_bits(s[k]);
}
void store_fence() { _mm_sfence(); }
/// Whether this CPU runs put_bf16_cvt (AVX512-BF16, -DQ, -BW; off with NORMCHECK_NO_BF16_CVT,
/// the integer formula's test on such a CPU).
bool bf16_cvt() {
  static const bool ok = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
           tier_allows(Tier::v4) && std::getenv("NORMCHECK_NO_BF16_CVT") == nullptr;
  }();
  return ok;
}
#pragma GCC diagnostic pop
#else
// No streaming stores off x86-64 (stream_stores() is false there): the ordinary ones.
void put_f32_stream(const float* s, float* d, std::int64_t n) { put_f32_plain(s, d, n); }
void put_bf16_stream(const float* s, std::uint16_t* d, std::int64_t n) { put_bf16_plain(s, d, n); }
void put_f16_stream(const float* s, std::uint16_t* d, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) d[k] = normcheck::detail::float_to_half_bits(s[k]);
}
void store_fence() {}
template <bool kStream>
void put_bf16_cvt(const float* s, std::uint16_t* d, std::int64_t n) { put_bf16_plain(s, d, n); }
bool bf16_cvt() { return false; }
#endif

/// Whether this CPU runs the put_*_stream functions (AVX-512 BW, F16C; chosen once; off with
/// NORMCHECK_NO_STREAM_STORES, the ordinary stores' test).
bool stream_stores() {
  static const bool ok = [] {
#ifdef NC_F16C
    __builtin_cpu_init();
    unsigned a = 0, b = 0, c = 0, d = 0;
    const bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
    return f16c && __builtin_cpu_supports("avx512bw") && tier_allows(Tier::v4) && std::getenv("NORMCHECK_NO_STREAM_STORES") == nullptr;
#else
    return false;
#endif
  }();
  return ok;
}

struct F32Src {
  const float* p;
  float operator()(std::int64_t j) const { return p[j]; }
};
struct Bf16Src {
  const std::uint16_t* p;
  float operator()(std::int64_t j) const { return normcheck::detail::bf16_bits_to_float(p[j]); }
};
/// A bf16 row widened into a binary32 row buffer by the scan itself (scan(j): x_j's binary32
/// value, stored into the buffer as it is returned), not by a pass of its own before it;
/// the later passes read the buffer. x_0 is widened at once (the scan compares with it).
struct Bf16ScanSrc {
  const std::uint16_t* h;
  float* buf;
  Bf16ScanSrc(const std::uint16_t* h_, float* buf_) : h(h_), buf(buf_) { buf[0] = normcheck::detail::bf16_bits_to_float(h[0]); }
  float scan(std::int64_t j) const {
    const float v = normcheck::detail::bf16_bits_to_float(h[j]);
    buf[j] = v;
    return v;
  }
  float operator()(std::int64_t j) const { return buf[j]; }
};
/// x_j as the scan reads it: through scan() where the source widens there (Bf16ScanSrc).
template <class Src>
[[gnu::always_inline]] inline float scan_at(const Src& x, std::int64_t j) {
  if constexpr (requires { x.scan(j); }) return x.scan(j);
  else return x(j);
}
/// A binary16 row beyond L1, widened into a binary32 row buffer a block at a time by the scan
/// (prepare(), before it reads the block), so that each block is scanned while it is in L1:
/// widening the whole row first and scanning it after was one more pass over an L2-resident
/// buffer. x_0 is widened at once (the scan reads it first). Only the block-structured scans
/// (rms_norm's, layer_norm's beyond L1: fold_mean) call prepare; narrower rows are widened whole.
struct HalfRowSrc {
  const std::uint16_t* h;
  float* buf;
  void (*widen)(const std::uint16_t*, float*, std::int64_t);
  HalfRowSrc(const std::uint16_t* h_, float* buf_, void (*widen_)(const std::uint16_t*, float*, std::int64_t)) : h(h_), buf(buf_), widen(widen_) {
    widen(h, buf, 1);
  }
  void prepare(std::int64_t first, std::int64_t n) const { widen(h + first, buf + first, n); }
  float operator()(std::int64_t j) const { return buf[j]; }
};
/// Widens block [first, first + n) of x where its source widens by blocks (HalfRowSrc).
template <class Src>
[[gnu::always_inline]] inline void prepare_block(const Src& x, std::int64_t first, std::int64_t n) {
  if constexpr (requires { x.prepare(first, n); }) x.prepare(first, n);
}
/// The widest bf16 row widened into a binary32 buffer (32 KiB: within L1 beside the row).
constexpr std::int64_t kWidenInL1 = 8192;
/// Whether rows of m values of dtype t are widened into a binary32 row buffer (f16 always:
/// F16C converts a row at once; bf16 in rows of one block, which the tiles read as binary32,
/// and layer_norm's (`center`) up to kWidenInL1) rather than read in place. rms_norm reads a
/// longer bf16 row twice (its scan and pass 4), so widening it was a third pass: read in
/// place, rms_norm bf16 [32768, 768] measured 18.5 -> 23.7 GB/s and [8192, 4096] 24.8 -> 26.7
/// (bench, 1 thread, same-run alternation, 3 rounds, AMD Zen 5); layer_norm's four passes
/// keep the buffer (in place measured no faster there), which their scan fills as it reads x
/// (Bf16ScanSrc; layer_norm bf16 [32768, 768] 9.2 -> 10.3 GB/s against widening first:
/// same-run A/B, 1 thread, 3 rounds, Xeon, 2026-12-07).
inline bool widened(DType t, std::int64_t m, bool center) { return t == DType::f16 || (t == DType::bf16 && (m <= kWideBlock || (center && m <= kWidenInL1))); }
struct F32Dst {
  static constexpr bool buffered = false;
  float* p;
  void operator()(std::int64_t j, float v) const { p[j] = v; }
};
struct Bf16Dst {
  static constexpr bool buffered = false;
  std::uint16_t* p;
  void operator()(std::int64_t j, float v) const { p[j] = normcheck::detail::float_to_bf16_bits(v); }
};
/// y through a block buffer: pass 4 writes a block of binary32 values into `tmp`, then `put`
/// stores it in y's dtype at once (f16: F16C's conversion; large y: streaming stores).
template <class T>
struct BlockDst {
  T* p;
  float* tmp = nullptr;  // kWideBlock floats
  void (*put)(const float*, T*, std::int64_t) = nullptr;
  bool stream = false;  ///< put's stores are non-temporal: y's lines are not prefetched
  static constexpr bool buffered = true;
};

/// One row: x's values through src, y's through dst (both indexed 0..m).
/// Prefetches [p, p + bytes) into the caches, one request per 64-byte line (the row that
/// follows in memory: its scan then finds it in L1/L2 instead of waiting on memory; issue 15).
[[gnu::always_inline]] inline void prefetch_lines(const char* p, std::int64_t bytes, bool write) {
  if (!p) return;
  if (write)
    for (std::int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + o, 1, 3);
  else
    for (std::int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + o, 0, 3);
}

/// Ahead: the next row's x and y bytes (null at the last row); y's prefetched piecewise during
/// this row's pass 4 (a slice per block of kWideBlock values), x's over passes 1-3 (Spread).
struct Ahead {
  const char* x = nullptr;
  char* y = nullptr;
  std::int64_t xbytes = 0, ybytes = 0;  // per value
};

/// The next row's x prefetched a slice at a time over this row's passes 1-3 (to(): every line
/// before byte `upto` requested; row_stats calls it after each block), so that its memory
/// traffic overlaps the whole row's arithmetic. Requested in pass 4 alone (as y's lines still
/// are), the prefetches met full fill buffers and waited there (29% of layer_norm bf16
/// [8192, 4096]'s kernel samples). Into L2 (prefetcht1), not L1: at f32 d >= 4096 the next
/// row's lines in L1 evicted the current row's between its passes (-10%). Measured (bench,
/// 1 thread, ratio to copy, same-run alternation): layer_norm bf16 [8192, 4096] 0.61 -> 0.76,
/// [1024, 65536] 0.65 -> 0.76, f16 [8192, 4096] 0.62 -> 0.83, rms_norm bf16 [8192, 4096]
/// 0.69 -> 0.88; f32 unchanged within noise.
struct Spread {
  const char* p = nullptr;
  std::int64_t bytes = 0, next = 0;
  [[gnu::always_inline]] void to(std::int64_t upto) {
    if (!p) return;
    if (upto > bytes) upto = bytes;
    for (; next < upto; next += 64) __builtin_prefetch(p + next, 0, 2);
  }
  /// to() the fraction num / den of the row (in binary64: bytes * num overflows 64-bit
  /// integers for rows beyond 2^30 values; a prefetch point off by a line is harmless).
  [[gnu::always_inline]] void to_fraction(std::int64_t num, std::int64_t den) {
    if (p) to(static_cast<std::int64_t>(static_cast<double>(bytes) * static_cast<double>(num) / static_cast<double>(den)));
  }
};

/// The bits of a binary32 value, and the value of bits.
[[gnu::always_inline]] inline std::uint32_t float_bits(float v) {
  std::uint32_t u;
  __builtin_memcpy(&u, &v, 4);
  return u;
}
[[gnu::always_inline]] inline float bits_float(std::uint32_t u) {
  float v;
  __builtin_memcpy(&v, &u, 4);
  return v;
}
/// A vector of 16 copies of v, as one broadcast: GCC 12 built `U16{} + v` inside tile_stats'
/// row loop lane by lane (16 masked broadcasts in a chain, a fifth of layer_norm bf16
/// [65536, 64]'s kernel samples).
/// (Through a pointer: a generic vector returned by value crosses the baseline tier's calls
/// by another ABI.)
[[gnu::always_inline]] inline void splat16(std::uint32_t v, U16* out) {
  const U4 a = {v, 0, 0, 0};
  *out = __builtin_shufflevector(a, a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
}
/// Whether a row is constant (layer_norm's mean is then x_0 s exactly), from the scan: x0b,
/// x_0's bits; amb, max |x|'s bits; diff, the or of x_j ^ x_0 over the row. Every value has
/// x_0's bits, or x_0 is +-0 and max |x| is 0 (the only finite values equal to another with
/// other bits are -0 and +0; an inf or NaN row is a NaN row before this is asked).
[[gnu::always_inline]] inline bool constant_row(std::uint32_t x0b, std::uint32_t amb, std::uint32_t diff) {
  return (x0b & 0x7fffffffu) == 0 ? amb == 0 : diff == 0;
}

/// One row's statistics (passes 1-3 and the denominator); `bad`: an inf or NaN in the row.
struct RowStats {
  bool bad = false;
  double s = 1;
  float sa = 1, mu = 0, ss = 0, ri = 0;
};

/// Minimum over 32 lanes of unsigned values (order-free).
[[gnu::always_inline]] inline std::uint32_t lanes_min(const std::uint32_t* v) {
  U16 a, b;
  __builtin_memcpy(&a, v, sizeof a);
  __builtin_memcpy(&b, v + 16, sizeof b);
  a = a < b ? a : b;
  return tree_of_16<LaneOp::min>(a);
}

/// 1 / D rounded once to binary32, from a row's scale and sum of squares (RowStats' ri).
[[gnu::always_inline]] inline float row_ri(const FastRows& f, const RowStats& st) {
  return acc_inverse<float>(inv_scaled_denominator(static_cast<double>(st.ss) / static_cast<double>(f.dof), st.s, st.ss == 0, *f.conv), st.ss == 0);
}

/// Whether s^2 times the unscaled sum of squares of a row of m values is the scaled row's sum
/// bit for bit (row_stats' conditions, below): nzb, the bits of the smallest nonzero |x| (0:
/// every value is +-0); am, max |x|; s, the row's scale.
[[gnu::always_inline]] inline bool squares_fold(std::uint32_t nzb, float am, double s, std::int64_t m) {
  const double nzd = static_cast<double>(bits_float(nzb)), nzs = nzd * s, amd = static_cast<double>(am);
  return (nzb == 0 || (nzd * nzd >= 0x1p-126 && nzs * nzs >= 0x1p-126)) && amd * amd * static_cast<double>(m) <= 0x1p125;
}
/// The scaled row's sum of squares from the unscaled one, where squares_fold holds (exact
/// products of a binary32 value and powers of two in binary64, one rounding).
[[gnu::always_inline]] inline float folded_squares(float unscaled, double s) { return static_cast<float>(static_cast<double>(unscaled) * s * s); }

/// Passes 1-3 of one row. For rms_norm (!kCenter) the scan (pass 1) also sums the unscaled
/// x^2 in wide_sum's order, S, and where S s^2 is pass 3's result bit for bit, pass 3 is not
/// run (two passes over the row instead of three). Why the bits agree: for binary32 A, B with
/// s A, s B binary32 (s = 2^k), fl((sA)^2) = s^2 fl(A^2) and fl(s^2 A + s^2 B) = s^2 fl(A + B)
/// whenever the results on both sides are normal (a power-of-two scale commutes with a
/// relative rounding); by induction over the sum's tree each partial sum is s^2 times its
/// unscaled twin, the root included. The conditions, checked per row from the scan's max |x|
/// and smallest nonzero |x| (nz): nz^2 >= 2^-126 and (nz s)^2 >= 2^-126 (every nonzero square
/// and every partial sum normal on both sides; zeros square to +0 on both), and max|x|^2 m <=
/// 2^125 (no unscaled partial sum overflows). Otherwise pass 3 runs as before (tests:
/// cpu_rows_fast_test's fills include rows of subnormal and of near-FLT_MAX values). The same
/// fold of pass 2 into the scan for layer_norm is done for rows beyond L1 (fold_mean, below:
/// layer_norm [1024, 65536] +5-10%); for rows within L1 it measured no faster (d = 64: slower).
template <bool kCenter, class Src>
[[gnu::always_inline]] inline RowStats row_stats(const FastRows& f, Src x, float* blocks, Spread* pf) {
  const std::int64_t m = f.m;
  RowStats st;
  // 1. scan: max |x| and whether every value equals x_0 (a constant row; -0 == +0), as
  // integer orders of the magnitudes' bits (the order of the values for non-negative
  // binary32; an inf or NaN above every finite value); rms_norm: also the smallest nonzero
  // |x| (bits - 1: a zero wraps to the top) and S.
  // layer_norm: constant_row from the or of x_j ^ x_0: an xor and an or per value, where the
  // comparison of floats cost a compare, a mask move and an or.
  const float x0 = x(0);
  std::uint32_t abits[kWide] = {};
  [[maybe_unused]] std::uint32_t nzbits[kWide], diff[kWide] = {};
  [[maybe_unused]] std::int64_t nblocks = 0;
  [[maybe_unused]] const std::uint32_t x0b = float_bits(x0);
  // layer_norm rows beyond L1 (fold_mean): the scan also sums the unscaled x in wide_sum's
  // order (into blocks) and the smallest nonzero |x|, for pass 2's fold (below).
  [[maybe_unused]] const bool fold_mean = kCenter && m > kWidenInL1;
  if (fold_mean || !kCenter) {
    // Blocks of kWideBlock values: max |x|, the smallest nonzero |x| and the block's sum in
    // wide_block's order, of x (layer_norm: fold_mean, with the constant-row bits) or of x^2.
    for (auto& v : nzbits) v = ~0u;
    for (std::int64_t first = 0; first < m; first += kWideBlock) {
      const std::int64_t n = m - first < kWideBlock ? m - first : kWideBlock;
      prepare_block(x, first, n);
      float acc[kWide] = {};
      auto scan_one = [&](int lane, int l, float v) __attribute__((always_inline)) {  // value v: statistics in `lane`, sum in acc[l]
        const std::uint32_t u = float_bits(v);
        const std::uint32_t a = u & 0x7fffffffu;
        abits[lane] = a > abits[lane] ? a : abits[lane];
        nzbits[lane] = a - 1 < nzbits[lane] ? a - 1 : nzbits[lane];
        if constexpr (kCenter) {
          diff[lane] |= u ^ x0b;
          acc[l] += v;
        } else {
          acc[l] += v * v;
        }
      };
      std::int64_t j = 0;
      for (; j + kWide <= n; j += kWide)
        for (int l = 0; l < kWide; ++l) scan_one(l, l, scan_at(x, first + j + l));
      for (int l = 0; j + l < n; ++l) scan_one(0, l, scan_at(x, first + j + l));  // the tail: the sum's lanes 0.. once more (wide_block's order)
      blocks[nblocks++] = lanes_sum(acc);
      if (pf) pf->to_fraction(first + n, kCenter ? 2 * m : m);  // layer_norm: the first half (pass 3: the second)
    }
  } else if constexpr (kCenter) {
    std::int64_t j = 0;
    for (; j + kWide <= m; j += kWide)
      for (int l = 0; l < kWide; ++l) {
        const std::uint32_t u = float_bits(scan_at(x, j + l));
        const std::uint32_t a = u & 0x7fffffffu;
        abits[l] = a > abits[l] ? a : abits[l];
        diff[l] |= u ^ x0b;
      }
    for (; j < m; ++j) {
      const std::uint32_t u = float_bits(scan_at(x, j));
      const std::uint32_t a = u & 0x7fffffffu;
      abits[0] = a > abits[0] ? a : abits[0];
      diff[0] |= u ^ x0b;
    }
  }
  const std::uint32_t amb = lanes_max(abits);
  [[maybe_unused]] bool constant = false;
  if constexpr (kCenter) constant = constant_row(x0b, amb, lanes_or(diff));
  if (amb > 0x7f7fffffu) {  // an inf or a NaN
    st.bad = true;
    return st;
  }
  const float am = bits_float(amb);
  st.s = row_scale_f32(am, f.max_up);
  const float sa = st.sa = static_cast<float>(st.s);
  // 2. the mean of the scaled row (a constant row: its value, exactly; row_mean)
  // Rows beyond L1 (fold_mean): sa times the scan's unscaled sum, where that is pass 2's sum
  // bit for bit, and pass 2 is not run (its pass from L2 was a quarter of layer_norm
  // [1024, 65536]'s time). Why the bits agree: every x_j sa is exact (nz s >= 2^-126: no
  // scaled value loses bits below the normal range; max |x s| < 1: none overflows), so both
  // sums add the same values up to the factor sa = 2^k in the same order; a partial sum of two
  // binary32 values that lies below 2^-126 is exact (a multiple of 2^-149 with at most 23
  // significant bits), and one that is normal on both sides rounds to sa times its twin's
  // rounding, so by induction over the tree each partial sum is sa times its unscaled twin,
  // the root included (and fl(S sa) = S_s exactly); no unscaled partial sum overflows where
  // max |x| m <= 2^127. Otherwise pass 2 runs (tests: cpu_rows_fast_test's fills at
  // m = 8193 include rows of subnormal and of wide-ranging values).
  float mu = 0;
  bool mean_folded = false;
  if constexpr (kCenter) {
    if (fold_mean && !constant) {
      const std::uint32_t nzb = lanes_min(nzbits) + 1;
      float nz;
      __builtin_memcpy(&nz, &nzb, 4);
      if (nzb != 0 && static_cast<double>(nz) * st.s >= 0x1p-126 && static_cast<double>(am) * static_cast<double>(m) <= 0x1p127) {
        mu = pairwise(blocks, nblocks) * sa / static_cast<float>(m);
        mean_folded = true;
      }
    }
    if (!mean_folded)
      mu = constant ? x0 * sa : wide_sum(m, blocks, [&](std::int64_t k) { return x(k) * sa; }, [&](std::int64_t b, std::int64_t nb) {
        if (pf) pf->to_fraction(b + 1, 2 * nb);
      }) / static_cast<float>(m);
  }
  st.mu = mu;
  // 3. sum of squares of the centred, scaled row (rms_norm: from S where it is the same bits;
  // the products below are of binary32 values and powers of two: exact in binary64)
  bool folded = false;
  if constexpr (!kCenter) {
    if (squares_fold(lanes_min(nzbits) + 1, am, st.s, m)) {
      st.ss = folded_squares(pairwise(blocks, nblocks), st.s);
      folded = true;
    }
  }
  if (!folded)
    st.ss = wide_sum(m, blocks, [&](std::int64_t k) {
      const float d = x(k) * sa - mu;
      return d * d;
    }, [&](std::int64_t b, std::int64_t nb) {
      if (pf) pf->to_fraction(nb + b + 1, 2 * nb);
    });
  st.ri = row_ri(f, st);
  return st;
}

/// t[r] = v rounded once to t's dtype, as Tensor::set: binary32 (the IEEE cast, RNE) and
/// binary64 stored here, other dtypes through Tensor::set. Tensor::set is out of line, a call
/// and a switch per value: at d = 64 its two calls per row were a tenth of the kernel's time
/// (layer_norm f32 [65536, 64]: 2.6% of a bench's samples beside the kernel's 29%).
[[gnu::always_inline]] inline void put_stat(Tensor& t, std::int64_t r, double v) {
  if (t.dtype() == DType::f32) t.as<float>()[r] = static_cast<float>(v);
  else if (t.dtype() == DType::f64) t.as<double>()[r] = v;
  else t.set(r, v);
}

/// Row r's saved statistics (mean, rstd; where asked for): those of the unscaled row (NaN for
/// a NaN row).
[[gnu::always_inline]] inline void save_stats(const FastRows& f, std::int64_t r, const RowStats& st) {
  if (f.mean) put_stat(*f.mean, r, st.bad ? NAN : static_cast<double>(st.mu) / st.s);
  if (f.rstd) put_stat(*f.rstd, r, st.bad ? NAN : st.ss == 0 && f.conv->eps > 0 ? 1.0 / inv_denominator_zero(*f.conv) : static_cast<double>(st.ri) * st.s);
}

/// Pass 4's values of one row for k in [k0, k1): out(k, g_k ((x_k s - mu_s) r) + b_k) in
/// binary32 (without g or b where the op has none; rounded to y's dtype by out or its put);
/// NaN for a NaN row.
template <class Src, class Out>
[[gnu::always_inline]] inline void normalize_span(const FastRows& f, Src x, const RowStats& st, std::int64_t k0, std::int64_t k1, Out out) {
  const float sa = st.sa, mu = st.mu, ri = st.ri;
  const float* g = f.gamma;
  const float* bt = f.beta;
  if (st.bad)
    for (std::int64_t k = k0; k < k1; ++k) out(k, std::numeric_limits<float>::quiet_NaN());
  else if (bt)
    for (std::int64_t k = k0; k < k1; ++k) out(k, g[k] * ((x(k) * sa - mu) * ri) + bt[k]);
  else if (g)
    for (std::int64_t k = k0; k < k1; ++k) out(k, g[k] * ((x(k) * sa - mu) * ri));
  else
    for (std::int64_t k = k0; k < k1; ++k) out(k, (x(k) * sa - mu) * ri);
}

/// Pass 4 of one row (normalize, affine, one rounding to y's dtype) and its saved
/// statistics; a NaN row for st.bad. Prefetches `ahead` piecewise.
template <class Src, class Dst>
[[gnu::always_inline]] inline void row_write(const FastRows& f, std::int64_t r, Src x, Dst y, const RowStats& st, Ahead ahead) {
  const std::int64_t m = f.m;
  // Blocks of kWideBlock values; through a buffer, the first ends where y's first whole
  // 64-byte line starts, so that put's non-temporal stores fill whole lines (a line written
  // partly by ordinary stores and partly by streaming ones is slow on both counts).
  std::int64_t first = kWideBlock;
  if constexpr (Dst::buffered) {
    const std::int64_t h = head_to_line(y.p, sizeof(*y.p), m);
    if (h > 0) first = h;
  }
  for (std::int64_t k0 = 0, k1 = 0; k0 < m; k0 = k1) {
    k1 = k0 == 0 ? first : k0 + kWideBlock;
    if (k1 > m) k1 = m;
    if (ahead.x) prefetch_lines(ahead.x + k0 * ahead.xbytes, (k1 - k0) * ahead.xbytes, false);
    if (ahead.y) prefetch_lines(ahead.y + k0 * ahead.ybytes, (k1 - k0) * ahead.ybytes, true);
    if constexpr (Dst::buffered) {
      float* t = y.tmp - k0;
      normalize_span(f, x, st, k0, k1, [&](std::int64_t k, float v) __attribute__((always_inline)) { t[k] = v; });
      y.put(y.tmp, y.p + k0, k1 - k0);
    } else {
      normalize_span(f, x, st, k0, k1, [&](std::int64_t k, float v) __attribute__((always_inline)) { y(k, v); });
    }
  }
  save_stats(f, r, st);
}

/// Rows in lanes (issue 15): the scan's and the sums' lane reductions of kTile rows at once.
/// A row of at most kWideBlock values has one block, whose 32 lane sums wide_block reduces by
/// levels (lanes_sum: l + 16, l + 8, l + 4, l + 2, then lanes 0 + 1); reducing each row alone
/// took a shuffle chain per row and statistic, and the row's division and square root waited
/// on it. Here level 16 is done per row (lanes 0-15 + lanes 16-31, one vector add) and the
/// other levels for 16 rows together: each level's two shuffles gather the lanes l of two or
/// more rows beside each other and the lanes l + w beside them, so one add performs level w of
/// every row in the vector (8 + 4 + 2 + 1 adds for 16 rows, where one row alone took 5); the
/// operands and their order are lanes_sum's, so every row's sum is bit for bit its own (and
/// max, min and or are order-free). Measured: README, `normcheck bench`.
constexpr int kTile = 16;
/// Whether rows of m values go kTile at a time (tile_stats): one block, whole vectors of 16.
inline bool tile_width(std::int64_t m) { return m <= kWideBlock && m % 16 == 0; }
/// t[i]: row i's 16 lanes (after level 16) -> out[i]: row i's reduction, i < 16.
template <LaneOp kOp, class V>
[[gnu::always_inline]] inline void reduce_tile(const V* t, V* out) {
  V u[8], v[4], w[2];
  for (int i = 0; i < 8; ++i)  // level 8: rows 2i, 2i + 1
    lane_op<kOp>(&u[i], __builtin_shufflevector(t[2 * i], t[2 * i + 1], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23),
                 __builtin_shufflevector(t[2 * i], t[2 * i + 1], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31));
  for (int i = 0; i < 4; ++i)  // level 4: rows 4i .. 4i + 3
    lane_op<kOp>(&v[i], __builtin_shufflevector(u[2 * i], u[2 * i + 1], 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27),
                 __builtin_shufflevector(u[2 * i], u[2 * i + 1], 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31));
  for (int i = 0; i < 2; ++i)  // level 2: rows 8i .. 8i + 7
    lane_op<kOp>(&w[i], __builtin_shufflevector(v[2 * i], v[2 * i + 1], 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29),
                 __builtin_shufflevector(v[2 * i], v[2 * i + 1], 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31));
  // lanes 0 + 1: rows 0 .. 15
  lane_op<kOp>(out, __builtin_shufflevector(w[0], w[1], 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30),
               __builtin_shufflevector(w[0], w[1], 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31));
}

/// row_ri for the kTile rows of a tile at once (those neither bad nor left to row_stats,
/// bit `i` of `left`), lane by lane the same binary64 operations in the same order as
/// inv_scaled_denominator (row_kernel.hpp), so each row's 1/D is bit for bit row_ri's: a
/// division, a square root and a division are correctly rounded whether one value or eight go
/// at once (-fno-math-errno, CMakeLists.txt: the square roots vectorize). Row by row, their
/// latency chain was 14% of layer_norm bf16 [65536, 64]'s time. The clamping placements
/// (fmax) keep row_ri.
[[gnu::always_inline]] inline void tile_ri(const FastRows& f, RowStats* st, unsigned left) {
  const Convention& c = *f.conv;
  if (c.eps_placement != EpsPlacement::inside_sqrt && c.eps_placement != EpsPlacement::outside_sqrt) {
    for (int i = 0; i < kTile; ++i)
      if (!st[i].bad && !(left >> i & 1)) st[i].ri = row_ri(f, st[i]);
    return;
  }
  const double eps = c.eps, dof = static_cast<double>(f.dof);
  double vs[kTile], sv[kTile], d[kTile];
  for (int i = 0; i < kTile; ++i) {
    vs[i] = static_cast<double>(st[i].ss);
    sv[i] = st[i].s;
  }
  for (int i = 0; i < kTile; ++i) vs[i] = vs[i] / dof;
  if (c.eps_placement == EpsPlacement::inside_sqrt) {
    for (int i = 0; i < kTile; ++i) d[i] = vs[i] + eps * sv[i] * sv[i];
    for (int i = 0; i < kTile; ++i) d[i] = std::sqrt(d[i]);
  } else {
    for (int i = 0; i < kTile; ++i) d[i] = std::sqrt(vs[i]);
    for (int i = 0; i < kTile; ++i) d[i] = d[i] + eps * sv[i];
  }
  for (int i = 0; i < kTile; ++i) d[i] = 1.0 / d[i];
  constexpr double top = std::numeric_limits<double>::max();
  for (int i = 0; i < kTile; ++i) d[i] = st[i].ss == 0 && d[i] > top ? top : d[i];
  const bool zero_huge = !(eps > 0);  // inv_scaled_denominator's all_zero case
  for (int i = 0; i < kTile; ++i)
    if (!st[i].bad && !(left >> i & 1)) st[i].ri = acc_inverse<float>(zero_huge && st[i].ss == 0 ? HUGE_VAL : d[i], st[i].ss == 0);
}

/// Passes 1-3 of kTile rows of m values each (m <= kWideBlock, a multiple of 16), row i read
/// from xr[i][0, m), into st[i]: bit for bit row_stats' results (the same operations on the
/// same operands in the same order, 16 lanes of one row at a time; only the reductions are
/// shared, reduce_tile). Returns the rows (bit i) it leaves to row_stats: rms_norm rows whose
/// sum of squares is not the scan's (row_stats' fold conditions; pass 3 runs there).
/// One row of a tile in wide_block's lanes (m a multiple of 16, at most kWideBlock): op(q, acc)
/// for the 16 values at q, acc being lanes 0-15 (lo) or 16-31 (hi) of each 32 values (the
/// tail of 16: lanes 0-15), both starting at +0; returns lo + hi (lanes_sum's level 16) in
/// *level16. Values are loaded by the ops through memcpy and vectors passed by reference (a
/// generic vector returned by value crosses the baseline tier's calls by another ABI).
template <class Op>
[[gnu::always_inline]] inline void tile_lanes(const float* p, std::int64_t m, V16* level16, Op op) {
  V16 lo = {}, hi = {};
  std::int64_t j = 0;
  for (; j + kWide <= m; j += kWide) {
    op(p + j, lo);
    op(p + j + 16, hi);
  }
  if (j < m) op(p + j, lo);
  *level16 = lo + hi;
}

/// kWidenBf16: row i's values are bf16 at raw[i], and the scan widens them into xr[i] (its
/// row buffer) as it reads them, for passes 2-4 to read there: one pass over a row less than
/// widening it first (layer_norm bf16 [65536, 64] +8%, [32768, 128] +9%, rms_norm [65536, 64]
/// +9%; same-run A/B, 1 thread, Xeon, 2026-12-07). The same values: bf16 -> binary32 is the
/// bits shifted left by 16.
template <bool kCenter, bool kWidenBf16 = false>
[[gnu::always_inline]] inline unsigned tile_stats(const FastRows& f, const float* const* xr, RowStats* st, const std::uint16_t* const* raw = nullptr) {
  const std::int64_t m = f.m;
  const U16 abs_mask = U16{} + 0x7fffffffu;
  // 1. scan (row_stats' pass 1): max |x| bits; layer_norm: the or of x_j ^ x_0 (constant_row);
  // rms_norm: the smallest nonzero |x| (bits - 1) and the unscaled sum of x^2.
  U16 amax[kTile], other[kTile];
  V16 sq[kTile];
  for (int i = 0; i < kTile; ++i) {
    U16 a = {}, o = kCenter ? U16{} : ~U16{};
    // x_0's bits: from the bf16 row itself where the scan widens it (the buffer is not filled yet)
    [[maybe_unused]] U16 x0b;
    splat16(kWidenBf16 ? static_cast<std::uint32_t>(raw[i][0]) << 16 : float_bits(xr[i][0]), &x0b);
    tile_lanes(xr[i], m, &sq[i], [&](const float* q, [[maybe_unused]] V16& acc) __attribute__((always_inline)) {
      U16 u;
      if constexpr (kWidenBf16) {  // the row's bf16 values widened into its buffer (xr[i]) here
        typedef std::uint16_t H16 __attribute__((vector_size(32)));
        H16 h;
        __builtin_memcpy(&h, raw[i] + (q - xr[i]), sizeof h);
        u = __builtin_convertvector(h, U16) << 16;
        __builtin_memcpy(const_cast<float*>(q), &u, sizeof u);
      } else {
        __builtin_memcpy(&u, q, sizeof u);
      }
      const U16 ua = u & abs_mask;
      lane_op<LaneOp::max>(&a, a, ua);
      if constexpr (kCenter) {
        o |= u ^ x0b;
      } else {
        V16 v;
        __builtin_memcpy(&v, &u, sizeof v);
        lane_op<LaneOp::min>(&o, o, ua - 1);
        acc += v * v;
      }
    });
    amax[i] = a;
    other[i] = o;
  }
  U16 am_bits, oth;
  reduce_tile<LaneOp::max>(amax, &am_bits);
  reduce_tile<kCenter ? LaneOp::bit_or : LaneOp::min>(other, &oth);
  unsigned to_row_stats = 0;
  for (int i = 0; i < kTile; ++i) {
    st[i] = RowStats{};
    if (am_bits[i] > 0x7f7fffffu) {  // an inf or a NaN
      st[i].bad = true;
      continue;
    }
    st[i].s = row_scale_f32(bits_float(am_bits[i]), f.max_up);
    st[i].sa = static_cast<float>(st[i].s);
  }
  V16 t[kTile], sums;
  if constexpr (kCenter) {
    // 2. the mean of the scaled row (a constant row: its value, exactly)
    for (int i = 0; i < kTile; ++i) {
      const float sa = st[i].sa;
      tile_lanes(xr[i], m, &t[i], [&](const float* q, V16& acc) __attribute__((always_inline)) {
        V16 v;
        __builtin_memcpy(&v, q, sizeof v);
        acc += v * sa;
      });
    }
    reduce_tile<LaneOp::sum>(t, &sums);
    const V16 mus = sums / static_cast<float>(m);
    for (int i = 0; i < kTile; ++i)
      st[i].mu = constant_row(float_bits(xr[i][0]), am_bits[i], oth[i]) ? xr[i][0] * st[i].sa : mus[i];
    // 3. the sum of squares of the centred, scaled row
    for (int i = 0; i < kTile; ++i) {
      const float sa = st[i].sa, mu = st[i].mu;
      tile_lanes(xr[i], m, &t[i], [&](const float* q, V16& acc) __attribute__((always_inline)) {
        V16 v;
        __builtin_memcpy(&v, q, sizeof v);
        const V16 d = v * sa - mu;
        acc += d * d;
      });
    }
    reduce_tile<LaneOp::sum>(t, &sums);
    for (int i = 0; i < kTile; ++i) st[i].ss = sums[i];
  } else {
    // 3. rms_norm: s^2 times the scan's sum, where that is pass 3's bits (row_stats' fold)
    reduce_tile<LaneOp::sum>(sq, &sums);
    for (int i = 0; i < kTile; ++i) {
      if (st[i].bad) continue;
      if (squares_fold(oth[i] + 1, bits_float(am_bits[i]), st[i].s, m)) st[i].ss = folded_squares(sums[i], st[i].s);
      else to_row_stats |= 1u << i;
    }
  }
  tile_ri(f, st, to_row_stats);
  return to_row_stats;
}

/// Pass 4 of kTile rows (normalize_span, as row_write), rows r, r + 1, ... read from xr[i]:
/// y's rows are contiguous, so a buffered y is stored by one put of kTile m values from
/// `tbuf` (kTile m floats) rather than one per row (an unbuffered y: value by value, as
/// row_write). `ahead`: the next tile's y (null: none, or stored by streaming stores),
/// prefetched for writing a row at a time.
template <class Dst>
[[gnu::always_inline]] inline void tile_write(const FastRows& f, std::int64_t r, const float* const* xr, Dst y, const RowStats* st, float* tbuf,
                                              const char* ahead) {
  const std::int64_t m = f.m;
  y.p += r * m;
  const std::int64_t row_bytes = m * static_cast<std::int64_t>(sizeof(*y.p));
  for (int i = 0; i < kTile; ++i) {
    if (ahead) prefetch_lines(ahead + i * row_bytes, row_bytes, true);
    normalize_span(f, F32Src{xr[i]}, st[i], 0, m, [&](std::int64_t k, float v) __attribute__((always_inline)) {
      if constexpr (Dst::buffered) tbuf[i * m + k] = v;
      else y(i * m + k, v);
    });
    save_stats(f, r + i, st[i]);
  }
  if constexpr (Dst::buffered) y.put(tbuf, y.p, kTile * m);
}

/// Rows [r0, r1) with x's rows through src(r, buffer) (its dtype's source; f16 widened into
/// the buffer) and y's through dst_of_row0 offset to each row. Rows of tile_width go kTile at
/// a time (tile_stats, tile_write) while 16 rows are left; other short rows (at most four
/// blocks) and the rest of those go in pairs: both rows' statistics first, then both rows' outputs, so that the
/// second row's passes run while the first's division and square root are in flight (at
/// d = 64 those latencies were a quarter of the time; at d = 768 pairs measured +5%, at
/// d = 4096 no gain: two rows' buffers crowd L1). The order of each row's arithmetic is
/// unchanged.
/// kBf16Raw: x is bf16, widened into the row buffers by the scans (src: Bf16ScanSrc; tiles:
/// tile_stats' kWidenBf16).
template <bool kCenter, bool kBf16Raw = false, class Dst, class MakeSrc>
[[gnu::always_inline]] inline void rows_with(const FastRows& f, std::int64_t r0, std::int64_t r1, Dst dst_of_row0, MakeSrc src, std::int64_t xb) {
  const std::int64_t m = f.m;
  const std::size_t nb = static_cast<std::size_t>((m + kWideBlock - 1) / kWideBlock + 1);
  std::vector<float> blocks(2 * nb);
  // Rows in lanes (tile_stats): rows of one block whose lanes are whole vectors of 16, read
  // as binary32 (f32 in place; bf16 and f16 widened, kTile rows into the buffer: bf16 by the
  // scan itself, kBf16Raw, f16 by F16C before it).
  constexpr bool kF32Rows = std::is_same_v<decltype(src(0, nullptr)), F32Src>;
  const bool tiles = (kF32Rows || kBf16Raw) && tile_width(m) && r1 - r0 >= kTile;
  std::vector<float> buf(widened(f.x->dtype(), m, kCenter) ? static_cast<std::size_t>((tiles ? kTile : 2) * m) : 0);
  std::vector<float> tile_y(tiles && Dst::buffered ? static_cast<std::size_t>(kTile * m) : 0);
  float* b0 = blocks.data();
  float* b1 = blocks.data() + nb;
  const std::int64_t yb = static_cast<std::int64_t>(sizeof(*dst_of_row0.p));
  auto y_of = [&](std::int64_t r) {
    Dst y = dst_of_row0;
    y.p += r * m;
    return y;
  };
  auto ahead_of = [&](std::int64_t r) {  // row r's bytes, when it is one of ours
    Ahead a;
    if (r < r1) a = {static_cast<const char*>(f.x->data()) + r * m * xb, reinterpret_cast<char*>(dst_of_row0.p + r * m), xb, yb};
    if constexpr (Dst::buffered)
      if (dst_of_row0.stream) a.y = nullptr;  // a streaming store does not read the line
    return a;
  };
  std::int64_t r = r0;
  if constexpr (kF32Rows || kBf16Raw)
    for (; tiles && r + kTile <= r1; r += kTile) {
      F32Src xs[kTile];
      const float* xr[kTile];
      RowStats st[kTile];
      unsigned left;
      if constexpr (kBf16Raw) {  // widened by the scan (tile_stats) into the buffer
        const std::uint16_t* raw[kTile];
        for (int i = 0; i < kTile; ++i) {
          xs[i] = F32Src{buf.data() + i * m};
          xr[i] = xs[i].p;
          raw[i] = f.x->as<std::uint16_t>() + (r + i) * m;
        }
        left = tile_stats<kCenter, true>(f, xr, st, raw);
      } else {
        for (int i = 0; i < kTile; ++i) {
          xs[i] = src(r + i, buf.empty() ? nullptr : buf.data() + i * m);
          xr[i] = xs[i].p;
        }
        left = tile_stats<kCenter>(f, xr, st);
      }
      for (int i = 0; i < kTile; ++i)
        if (left >> i & 1) st[i] = row_stats<kCenter>(f, xs[i], b0, nullptr);
      tile_write(f, r, xr, dst_of_row0, st, tile_y.data(), r + 2 * kTile <= r1 ? ahead_of(r + kTile).y : nullptr);
    }
  if (m <= 4 * kWideBlock) {
    for (; r + 1 < r1; r += 2) {
      const auto x0 = src(r, buf.data()), x1 = src(r + 1, buf.data() + (buf.empty() ? 0 : m));
      Ahead a0 = ahead_of(r + 2), a1 = ahead_of(r + 3);
      Spread p0{a0.x, a0.x ? m * a0.xbytes : 0}, p1{a1.x, a1.x ? m * a1.xbytes : 0};
      a0.x = a1.x = nullptr;
      const RowStats s0 = row_stats<kCenter>(f, x0, b0, &p0), s1 = row_stats<kCenter>(f, x1, b1, &p1);
      p0.to(p0.bytes);  // (a NaN row's statistics end after the scan)
      p1.to(p1.bytes);
      row_write(f, r, x0, y_of(r), s0, a0);
      row_write(f, r + 1, x1, y_of(r + 1), s1, a1);
    }
  }
  for (; r < r1; ++r) {
    const auto x = src(r, buf.data());
    Ahead a = ahead_of(r + 1);
    Spread pf{a.x, a.x ? m * a.xbytes : 0};
    a.x = nullptr;  // over passes 1-3 (pf), not in pass 4
    const RowStats st = row_stats<kCenter>(f, x, b0, &pf);
    pf.to(pf.bytes);  // (a NaN row's statistics end after the scan)
    row_write(f, r, x, y_of(r), st, a);
  }
}

/// How x's rows are read: f32 in place; bf16 widened into a row buffer by the scan where widened() says
/// (layer_norm within L1: in-cache -8% time) and in each pass otherwise (at d = 65536 the
/// buffer's passes from L2 cost 15%); f16 widened into a row buffer (cheaper than widening in each
/// pass), by the scan a block at a time beyond kWidenInL1 (HalfRowSrc).
enum class XPath { f32, bf16_row, bf16, f16_row, f16_blocks };
XPath x_path(DType t, std::int64_t m, bool center) {
  if (t == DType::f32) return XPath::f32;
  if (t == DType::bf16) return widened(DType::bf16, m, center) ? XPath::bf16_row : XPath::bf16;
  return m > kWidenInL1 ? XPath::f16_blocks : XPath::f16_row;
}

/// Rows [r0, r1) of x read by kX, y written through `dst_of_row0` (y's dtype).
template <bool kCenter, XPath kX, class Dst>
[[gnu::always_inline]] inline void rows_to(const FastRows& f, std::int64_t r0, std::int64_t r1, Dst dst_of_row0) {
  const std::int64_t m = f.m;
  if constexpr (kX == XPath::f32) {
    rows_with<kCenter>(f, r0, r1, dst_of_row0, [&](std::int64_t r, float*) { return F32Src{f.x->as<float>() + r * m}; }, 4);
  } else if constexpr (kX == XPath::bf16_row) {
    rows_with<kCenter, true>(f, r0, r1, dst_of_row0, [&](std::int64_t r, float* buf) {
      return Bf16ScanSrc(f.x->as<std::uint16_t>() + r * m, buf);
    }, 2);
  } else if constexpr (kX == XPath::bf16) {
    rows_with<kCenter>(f, r0, r1, dst_of_row0, [&](std::int64_t r, float*) { return Bf16Src{f.x->as<std::uint16_t>() + r * m}; }, 2);
  } else if constexpr (kX == XPath::f16_blocks) {
    rows_with<kCenter>(f, r0, r1, dst_of_row0, [&](std::int64_t r, float* buf) {
      return HalfRowSrc(f.x->as<std::uint16_t>() + r * m, buf, half_converters().widen);
    }, 2);
  } else {
    rows_with<kCenter>(f, r0, r1, dst_of_row0, [&](std::int64_t r, float* buf) {
      half_converters().widen(f.x->as<std::uint16_t>() + r * m, buf, m);
      return F32Src{buf};
    }, 2);
  }
}

// One function per op (layer_norm: kCenter), x read (XPath) and y store (YPath), compiled per
// tier: f32 and bf16 y written directly, or through a block buffer and FastRows' put (f16
// always: F16C converts a block at once; f32/bf16 for streaming stores and AVX512-BF16).
// One function per x path, not one for all five: the same code in functions a fifth the size
// (flatten inlines each whole), which GCC 12 compiles in 29% less time (this file at -O3: 453
// -> 323 s on this project's 2-core machine).
enum class YPath { f32, bf16, f32_block, u16_block };
template <bool kCenter, YPath kY, XPath kX>
[[gnu::always_inline]] inline void rows_of(const FastRows& f, std::int64_t r0, std::int64_t r1) {
  if constexpr (kY == YPath::f32) {
    rows_to<kCenter, kX>(f, r0, r1, F32Dst{f.y->as<float>()});
  } else if constexpr (kY == YPath::bf16) {
    rows_to<kCenter, kX>(f, r0, r1, Bf16Dst{f.y->as<std::uint16_t>()});
  } else if constexpr (kY == YPath::f32_block) {
    float tmp[kWideBlock];
    rows_to<kCenter, kX>(f, r0, r1, BlockDst<float>{f.y->as<float>(), tmp, f.put_f32, f.nontemporal});
  } else {
    float tmp[kWideBlock];
    rows_to<kCenter, kX>(f, r0, r1, BlockDst<std::uint16_t>{f.y->as<std::uint16_t>(), tmp, f.put_u16, f.nontemporal});
  }
}
// NORMCHECK_NO_FLATTEN (tools/sanitize.sh): the same functions without flatten, the inlining
// left to the compiler. Under ASan + UBSan, flatten's whole-function inlining made this one
// file compile for ~8 minutes at one tier on the 2-core CI machine; the sanitizers check the
// source's memory accesses and arithmetic, which inlining does not change.
#ifdef NORMCHECK_NO_FLATTEN
#define NC_FLATTEN
#else
#define NC_FLATTEN flatten,
#endif
#define NC_TIER_ROWS(ATTRIBUTES, NAME)           \
  template <bool kCenter, YPath kY, XPath kX>    \
  ATTRIBUTES void NAME(const FastRows& f, std::int64_t r0, std::int64_t r1) { rows_of<kCenter, kY, kX>(f, r0, r1); }
#ifdef NC_TIERS
NC_TIER_ROWS(__attribute__((target("arch=x86-64-v4"), NC_FLATTEN noinline)), rows_v4)
NC_TIER_ROWS(__attribute__((target("arch=x86-64-v3"), NC_FLATTEN noinline)), rows_v3)
#endif
NC_TIER_ROWS(__attribute__((NC_FLATTEN noinline)), rows_baseline)
#undef NC_TIER_ROWS
#undef NC_FLATTEN

using Rows = void (*)(const FastRows&, std::int64_t, std::int64_t);
template <bool kCenter, YPath kY, XPath kX>
Rows tier_rows(Tier t) {
#ifdef NC_TIERS
  if (t == Tier::v4) return rows_v4<kCenter, kY, kX>;
  if (t == Tier::v3) return rows_v3<kCenter, kY, kX>;
#endif
  (void)t;
  return rows_baseline<kCenter, kY, kX>;
}
template <bool kCenter, YPath kY>
Rows tier_rows(Tier t, XPath x) {
  switch (x) {
    case XPath::f32: return tier_rows<kCenter, kY, XPath::f32>(t);
    case XPath::bf16_row: return tier_rows<kCenter, kY, XPath::bf16_row>(t);
    case XPath::bf16: return tier_rows<kCenter, kY, XPath::bf16>(t);
    case XPath::f16_row: return tier_rows<kCenter, kY, XPath::f16_row>(t);
    default: return tier_rows<kCenter, kY, XPath::f16_blocks>(t);
  }
}
template <bool kCenter>
Rows tier_rows(Tier t, YPath y, XPath x) {
  switch (y) {
    case YPath::f32: return tier_rows<kCenter, YPath::f32>(t, x);
    case YPath::bf16: return tier_rows<kCenter, YPath::bf16>(t, x);
    case YPath::f32_block: return tier_rows<kCenter, YPath::f32_block>(t, x);
    default: return tier_rows<kCenter, YPath::u16_block>(t, x);
  }
}

bool small_float(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }

/// f's block stores for y's dtype `t` (f.nontemporal: the streaming ones). binary16 streams
/// only through F16C: under NORMCHECK_NO_F16C (the software conversion's test) it keeps the
/// software conversion and ordinary stores.
void set_puts(FastRows& f, DType t) {
  if (t == DType::f16 && half_converters().narrow == float_to_half_soft) f.nontemporal = false;
  f.put_f32 = f.nontemporal ? put_f32_stream : put_f32_plain;
  if (t == DType::f16) f.put_u16 = f.nontemporal ? put_f16_stream : half_converters().narrow;
  else if (bf16_cvt()) f.put_u16 = f.nontemporal ? put_bf16_cvt<true> : put_bf16_cvt<false>;
  else f.put_u16 = f.nontemporal ? put_bf16_stream : put_bf16_plain;
}

}  // namespace

void put_block(const float* s, Tensor& y, std::int64_t first, std::int64_t n, bool nontemporal) {
  if (!small_float(y.dtype()) || first < 0 || n < 0 || first + n > y.size()) throw std::invalid_argument("put_block: y must be f32/bf16/f16 and hold [first, first + n)");
  FastRows f;
  f.nontemporal = nontemporal && stream_stores();
  set_puts(f, y.dtype());
  if (y.dtype() == DType::f32) f.put_f32(s, y.as<float>() + first, n);
  else f.put_u16(s, y.as<std::uint16_t>() + first, n);
  if (f.nontemporal) store_fence();
}

bool stream_stores_available() { return stream_stores(); }
bool bf16_conversion_instruction_available() { return bf16_cvt(); }
const char* cpu_tier_name() {
  const Tier t = cpu_tier();  // (checks NORMCHECK_CPU_TIER everywhere)
#if !defined(__x86_64__)
  (void)t;
  return "portable";  // another architecture: the plain C++ build, no x86 instruction choice
#else
  return kTierNames[static_cast<int>(t)];
#endif
}
const char* half_conversion_name() {
#ifdef NC_F16C
  if (half_converters().widen == half_to_float_avx512) return "F16C (AVX-512)";
  if (half_converters().widen == half_to_float_f16c) return "F16C (AVX)";
#endif
  return "software";
}

std::string cpu_row_kernel_summary() {
  return std::string(cpu_tier_name()) + ", f16 by " + half_conversion_name() + ", bf16 by " +
         (bf16_cvt() ? "AVX512-BF16" : "integer formula") + ", streaming stores " + (stream_stores() ? "available" : "off");
}

bool fast_rows_take(const Problem& p) {
  return small_float(p.x().dtype()) && small_float(p.out_dtype) && p.conv.acc_dtype != DType::f64 && !p.conv.normalized_dtype;
}

bool normalize_rows_fast(const Problem& p, Tensor& y, bool center, Tensor* mean, Tensor* rstd, RowStore store) {
  const Tensor& x = p.x();
  if (!fast_rows_take(p) || !small_float(y.dtype())) return false;
  const Tier tier = cpu_tier();  // first: a bad NORMCHECK_CPU_TIER throws here, before any row runs
  const RowLayout l = row_layout(p);
  // x must be the dense row-major [rows, m] the layout describes (a case's views are
  // materialized by the harness before a built-in kernel runs; this only guards the assumption).
  if (l.m == 0 || l.rows * l.m != x.size() || y.size() != x.size()) return false;
  const AffineParams<float> aff(p);
  FastRows f;
  f.x = &x;
  f.y = &y;
  f.m = l.m;
  f.dof = p.conv.variance == Variance::unbiased ? l.m - 1 : l.m;
  f.center = center;
  f.max_up = max_scale_up(100, p.conv.eps);
  f.conv = &p.conv;
  f.gamma = aff.affine == Affine::none ? nullptr : aff.gamma.data();
  f.beta = aff.affine == Affine::gamma_beta ? aff.beta.data() : nullptr;
  f.mean = mean;
  f.rstd = rstd;
  // Streaming stores (kStreamBytes): for a y larger than the caches, in rows of at least a
  // block (shorter rows measured no faster: the buffer's extra pass costs what the skipped
  // reads save), on a CPU that has them; `store` may ask for either path (tests).
  const bool nt_ok = stream_stores();
  const bool stream = store != RowStore::ordinary && nt_ok && static_cast<std::int64_t>(y.nbytes()) >= kStreamBytes && l.m >= kWideBlock;
  // bf16 y with VCVTNE2PS2BF16 goes through the block buffer at every size (its conversion
  // is a ninth of the integer formula's instructions: in-cache layer_norm bf16 [64, 4096]
  // 95 -> 69 us).
  const bool buffered = store == RowStore::buffered || stream || (store != RowStore::ordinary && y.dtype() == DType::bf16 && bf16_cvt());
  f.nontemporal = store == RowStore::buffered ? nt_ok : stream;
  set_puts(f, y.dtype());  // (may turn nontemporal off: f16 without F16C)
  const YPath yp = y.dtype() == DType::f32 ? (buffered ? YPath::f32_block : YPath::f32)
                   : y.dtype() == DType::bf16 && !buffered ? YPath::bf16
                                                         : YPath::u16_block;  // f16 y, or bf16 buffered
  const XPath xp = x_path(x.dtype(), l.m, center);
  const Rows rows = center ? tier_rows<true>(tier, yp, xp) : tier_rows<false>(tier, yp, xp);
  const bool fence = f.nontemporal;
  // A thread's exception (std::bad_alloc from its row buffers) is rethrown after the region
  // (core/region_errors.hpp).
  RegionErrors errors;
#pragma omp parallel if (l.rows * l.m > 32768)
  {
    const std::int64_t t = omp_get_thread_num(), T = omp_get_num_threads();
    errors.run([&] { rows(f, l.rows * t / T, l.rows * (t + 1) / T); });
    if (fence) store_fence();  // the non-temporal stores are visible before the region ends
  }
  errors.rethrow();
  return true;
}

}  // namespace normcheck::kernels::cpu::detail
