// The coverage matrix (issue 12): cases generated over the dimensions of spec/sample.hpp for
// every op of the table, in two tiers. It is the source `matrix:quick` / `matrix:full` of
// `normcheck run` (run/select.hpp), beside the case files: the dimensions are data here, in
// one place, not thousands of hand-written TOML lines.
//
// quick (part of the default suite), per op:
//   width sweep   1..5, 7..9, 2^k - 1, 2^k, 2^k + 1 for k = 4..10 (vector, warp and block
//                 tails), f32, two groups, alternately the op's defaults and drawn choices;
//   residues      widths 6, 10..14, 18..30, 36, 44 (every remainder mod 8 and mod 16 past one
//                 vector) in f32, the even ones in bf16, and backward in f32;
//   narrow tails  widths 1, 3, 8, 9, 33, 65 in bf16, f16, f64;
//   regimes       every magnitude regime x every data dtype, width 33;
//   eps           every eps regime x {normal, constant, tiny} x {f32, bf16}, width 17;
//   placements    every eps placement x {constant, tiny, constant_huge} x {typical,
//                 dominant, comparable eps} and normal x comparable, forward and backward,
//                 f32, width 9 (Dims::placement; a third audit's faulty backends, a swapped
//                 clamp in rms_norm_quant and a backward blind to the placement in batch_norm,
//                 group_norm and scale_norm, and the cpu kernels' NaN for huge constant rows,
//                 passed the quick tier without them);
//   parameters    bf16 data with f32 parameters, f32 with bf16, f16 with f32 (width 33);
//                 f32 with bf16 and f16, bf16 with f32 (widths 12 and 64);
//   output dtype  bf16 and f16 data with a binary32 output (eps or parameters rounded to
//                 the data's dtype show there), typical and comparable eps;
//   backward      (ops with one) widths 1, 2, 8, 9, 33, 128, 129 and every regime in f32, bf16;
//   scale         where kernels change strategy with the size: 65537 groups of width 2 (a
//                 launch grid's y limit at 65535) in f32 and 300 groups of width 33 (more
//                 than a GPU's multiprocessors: a persistent kernel's state carried from
//                 group to group; not a multiple of 32) in bf16; widths 4097, 8192 and 16385
//                 in f32, bf16 and f16 (a row split over several blocks and merged: Welford's
//                 combination, a second reduction stage); backward over 300 groups (f32,
//                 bf16) and 4099 groups of width 8 (dgamma and dbeta reduced over the rows in
//                 tiles and stages). A gap audit's faulty backends (each modelled on a
//                 published bug class) passed the quick tier without them;
//   structure     (Dims::wide) the op's large structural choices over 32 groups of 64
//                 values: a 2-D normalized_shape, 16 channels per group, 16 or 32
//                 channels (channels_last from C = 16), 4 heads in 2 batches, the optional inputs present, in
//                 f32/bf16/f16 forward and backward and through every view in f32 and bf16;
//                 13 groups in bf16 and f16 (a tail of rows past 4 and 8), forward and
//                 backward; backward of bf16/f16 data with binary32 parameters and outputs;
//                 rows of 32769 values in bf16 and f16. A second audit's faulty backends
//                 passed the quick tier without them (tests/matrix_test.cpp).
//   many groups   1031 groups at widths 6 and 13 (f32), 6 (bf16, f16), 1 (batch_norm eval
//                 over 1031 channels) and 12 with the op's structure (wide; f32 and bf16
//                 forward, f32 backward); backward at 12 x 1031 (f32) and 1500 x 2 (a group
//                 past 1024 values ending in a partial chunk; f32, bf16); every view in f16
//                 and f64. A fourth audit's faulty backends (statistics wrapping at 1024 rows or
//                 channels, row tails wrong past 1024 rows, a partial chunk dropped) passed
//                 both tiers without them.
// full: quick, plus widths 2^k +- 1 up to 65537 and primes (one group; 8192 +- 1 and
// 32768 +- 1 also in bf16 and f16), 65537 groups of
// widths 1 and 3 (grid limits on the rows), every regime x dtype x eps regime, every quick
// width in every data dtype, and backward over every regime x dtype.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cases/case.hpp"
#include "spec/sample.hpp"

namespace normcheck {

enum class Tier { quick, full };

/// "matrix:quick" -> quick, "matrix:full" -> full; nullopt for anything else.
std::optional<Tier> parse_matrix_source(std::string_view s) noexcept;
std::string_view to_string(Tier t) noexcept;

/// The points of the tier for `op` (deterministic: each point's seed is a hash of its name).
std::vector<Dims> matrix_points(Op op, Tier t);
/// The name of a point: "mx_layer_norm_w17_r2_f32_f32_normal_typical" (+ "_bwd", "_def").
std::string matrix_case_name(Op op, const Dims& d);

/// Every case of the tier, op by op in table order (layer "<op>/matrix", file
/// "matrix:<tier>"). A point an op cannot be drawn at (its rules refuse the draw) is left
/// out and counted in `refused` when given.
std::vector<Case> coverage_matrix(Tier t, std::int64_t* refused = nullptr);

}  // namespace normcheck
