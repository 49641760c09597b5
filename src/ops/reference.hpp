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
/// reference runs at the smallest of 256, 512, 1024, 2304 bits that is >= P.
int working_bits(const Problem& p);

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
