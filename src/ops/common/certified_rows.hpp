// The certified fast path's row loop, shared by the references that evaluate independent
// rows (row norms, fused residual add + norm, quantizing norms): each row in double-double with
// a rigorous radius (ball.hpp DDBall) first, and in T (MPFR at working_bits) where the ball
// cannot decide a comparison or a rounding. Results are bit-identical to T's (the test:
// tests/reference_fast_path_test.cpp); the counts go to reference::fast_path_counts().
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/region_errors.hpp"
#include "ops/common/ball.hpp"
#include "ops/reference.hpp"

namespace normcheck::reference::detail {

/// row(r, std::type_identity<DDBall>{}) with everything it calls inlined into a copy compiled
/// with FMA (ball.hpp NC_BALL_FMA: TwoProduct's std::fma is then one instruction instead of a
/// call into libm, around which every live register was spilled: +20% for the row norms'
/// reference) where the CPU has it, else into one without. Their results are identical:
/// -ffp-contract=off leaves every other operation unfused, and both TwoProducts give the same
/// exact error (ball.hpp two_prod).
#ifdef NC_BALL_DISPATCH
template <class Row>
NC_BALL_FMA void ball_row_fma(Row& row, std::int64_t r) {
  row(r, std::type_identity<DDBall>{});
}
template <class Row>
NC_BALL_PLAIN void ball_row_plain(Row& row, std::int64_t r) {
  row(r, std::type_identity<DDBall>{});
}
template <class Row>
void ball_row(Row& row, std::int64_t r) {
  if (dd::kHardwareFma) ball_row_fma(row, r);
  else ball_row_plain(row, r);
}
template <class Eval>
NC_BALL_FMA ExactOutputs ball_whole_fma(Eval& eval) {
  return eval(std::type_identity<DDBall>{});
}
template <class Eval>
NC_BALL_PLAIN ExactOutputs ball_whole_plain(Eval& eval) {
  return eval(std::type_identity<DDBall>{});
}
/// eval(std::type_identity<DDBall>{}), compiled as ball_row.
template <class Eval>
ExactOutputs ball_whole(Eval& eval) {
  return dd::kHardwareFma ? ball_whole_fma(eval) : ball_whole_plain(eval);
}
#else
template <class Row>
void ball_row(Row& row, std::int64_t r) {
  row(r, std::type_identity<DDBall>{});
}
template <class Eval>
ExactOutputs ball_whole(Eval& eval) {
  return eval(std::type_identity<DDBall>{});
}
#endif

/// Calls row(r, std::type_identity<U>{}) for every row r in [0, rows): U = DDBall first when
/// `fast`, then U = T for a row whose DDBall evaluation threw Uncertain (or every row when
/// not `fast`). `row` must write every output element of its row, so that a failed attempt's
/// partial writes are overwritten. Rows run over OpenMP threads when `parallel`; another
/// exception from a row (std::bad_alloc) is rethrown after them (core/region_errors.hpp).
template <class T, class Row>
void certified_rows(std::int64_t rows, bool fast, bool parallel, Row&& row) {
  std::uint64_t certified = 0, recomputed = 0;
  RegionErrors errors;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : certified, recomputed) if (parallel)
  for (std::int64_t r = 0; r < rows; ++r) errors.run([&] {
    if (fast) {
      try {
        ball_row(row, r);
        ++certified;
        return;
      } catch (const Uncertain&) {
        ++recomputed;
      }
    }
    row(r, std::type_identity<T>{});
  });
  errors.rethrow();
  if (fast) add_fast_path_counts(certified, recomputed);
}

/// A problem evaluated as one unit (its parts depend on each other: qk_norm's scores on every
/// normalized row): eval(std::type_identity<U>{})
/// with U = DDBall first when `fast` (eval turns an exception inside a parallel region, an
/// Uncertain among them, into one thrown after it: core/region_errors.hpp), then U = T if that
/// threw Uncertain (or when not `fast`). `units` is what the counts add (rows, qk_norm's problems).
template <class T, class Eval>
ExactOutputs certified_whole(std::uint64_t units, bool fast, Eval&& eval) {
  if (fast) {
    try {
      ExactOutputs o = ball_whole(eval);
      add_fast_path_counts(units, 0);
      return o;
    } catch (const Uncertain&) {
      add_fast_path_counts(0, units);
    }
  }
  return eval(std::type_identity<T>{});
}

}  // namespace normcheck::reference::detail
