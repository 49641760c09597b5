// The exact reference: evaluates a problem in multiprecision and rounds once. Each op's
// formula is a template on the number type in its folder (ops/<op>/reference.hpp); this is
// the entry that dispatches through the op table.
#pragma once

#include <cstdint>

#include "spec/exact.hpp"
#include "spec/op.hpp"

namespace normcheck::reference {

using normcheck::ExactOutput;
using normcheck::ExactOutputs;

/// Working precision P in bits the reference needs for problem p (ops/common/row_norm.hpp
/// "Exactness"): the sum of any group of x is exact when P >= (e_max - e_min) + p_x +
/// ceil(log2 m) + 1, with e_max, e_min the exponents of the largest and smallest nonzero
/// |x| and p_x the precision of x's dtype; the result is then within (m + 8) 2^-P relative,
/// and we also ask P >= 160 + log2 m so that this is below 2^-100 ULP of binary64. The
/// reference runs at the smallest of 256, 512, 1024, 2304 bits that is >= P, and at the next
/// ones while a rounding cannot be decided from P bits (note_undecided_rounding, below).
int working_bits(const Problem& p);

/// The MPFR path's rounding decisions (Ziv's test, as the fast path's balls make it). A
/// P-bit result is within (m + 8) 2^-P relative of the exact value, so it can be on the wrong
/// side of a rounding boundary, or on it, only when the exact value is that close to the
/// boundary: then the output's binary64 value (tail 0) is the boundary itself, for a midpoint
/// of binary32, bfloat16 or binary16 (is_midpoint_of), or its long double is, for a binary64
/// midpoint (is_binary64_midpoint), and the stores (ops/common/family_common.hpp) test such a
/// value again: whether its rounding is the same for every value within |v| 2^-(P/2) of it
/// (P/2 bits: far outside the result's error, far inside a long double's spacing). Where it
/// is not, they count it (note_undecided_rounding), and at_working_precision evaluates the
/// problem again at the next precision, up to 2304 bits. An exact value that is the
/// boundary itself stays undecided at every precision: the last result stands (exact, so
/// rounded exactly). Found by the equivalence run at scale: a batch_norm running_var of
/// 0.75 rv + 0.25 v_u with v_u ~ 2^-297 from subnormal x lies 2^-298 above a binary32
/// midpoint; at 256 bits MPFR rounded it to the midpoint, then to even.
bool is_binary64_midpoint(long double L, double r);
bool is_midpoint_of(DType dt, double r);
void note_undecided_rounding();
/// The number of undecided roundings noted so far in this process (any thread: a count
/// that grows during one evaluation makes it rerun, never the reverse).
std::uint64_t undecided_roundings();

/// The certified fast path (ops/common/ball.hpp): the forward row norms evaluate each row
/// in double-double with a rigorous error radius and recompute in MPFR only the rows whose
/// radius cannot decide a rounding; the results are the MPFR ones bit for bit.
/// Process totals of rows, for the run's summary line.
struct FastPathCounts {
  std::uint64_t certified = 0;   ///< rows the fast path decided
  std::uint64_t recomputed = 0;  ///< rows it could not, evaluated in MPFR
};
FastPathCounts fast_path_counts();
void add_fast_path_counts(std::uint64_t certified, std::uint64_t recomputed);
/// Whether the fast path is used (default true). false: MPFR for every row (the judge the
/// fast path is tested against; `normcheck run --reference-path mpfr`). Not thread-safe:
/// set it before evaluating.
void set_fast_path(bool on);
bool fast_path_enabled();

/// Evaluates p exactly (MPFR at working_bits(p), or the certified fast path where it decides),
/// either direction: its op's `reference`. The result is kept in p (a ValidProblem is
/// immutable), so the run's ground truth and the `reference` backend evaluate once.
const ExactOutputs& evaluate_exact(const ValidProblem& p);
/// validate(p), then evaluate_exact: for callers holding a plain Problem (tests, tools).
/// Throws SpecError if p is invalid.
ExactOutputs evaluate_exact(const Problem& p);

/// The same formula in binary64, for quick checks and tests of the template itself.
/// Outputs are rounded from the double result (so not always correctly rounded).
ExactOutputs evaluate_double(const ValidProblem& p);
ExactOutputs evaluate_double(const Problem& p);

}  // namespace normcheck::reference
