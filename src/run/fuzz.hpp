// `normcheck fuzz`: random problems drawn over the coverage matrix's dimensions
// (spec/sample.hpp), each run on a backend and on the exact reference and judged like a case
// (the default gate on every output), and on a failure a shrink to a small failing case, as
// Hypothesis and QuickCheck do: fewer rows, a shorter width, plainer dtypes and regimes, the
// op's default convention, then simpler values, for as long as the case still fails.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cases/case.hpp"
#include "checks/runner.hpp"
#include "spec/backend.hpp"
#include "spec/sample.hpp"

namespace normcheck {

/// What a fuzz run draws from and how long it goes on.
struct FuzzOptions {
  std::vector<Op> ops;           ///< ops to draw (empty: every op with a sample rule)
  std::uint64_t seed = 1;        ///< the run's seed: draw i uses a seed derived from (seed, i)
  std::int64_t first_draw = 0;   ///< index of the first draw (--draw I reruns draw I alone)
  std::int64_t count = 0;        ///< draws to make (0: until the budget is spent)
  double budget_s = 60;          ///< CPU-independent wall-clock seconds for drawing (0: no limit)
  std::int64_t max_width = 4097; ///< the largest reduction width drawn
  bool backward = true;          ///< draw backward problems for ops that have one
  bool keep_going = false;       ///< go on after a failure (each failure is shrunk)
  std::int64_t shrink_evaluations = 400;  ///< evaluations the shrinker may spend per failure
  /// Progress: called after each draw with (draws done, failures so far).
  std::function<void(std::int64_t, std::int64_t)> progress;
};

/// One failure: the draw that failed, its shrunk form and how it was shrunk.
struct FuzzFailure {
  std::int64_t draw = 0;        ///< index of the draw
  std::string name = "fuzz";    ///< the case name of the shrunk case file ("fuzz_s<seed>_d<draw>")
  Dims dims, shrunk_dims;       ///< the draw's dimensions, before and after shrinking
  Op op;
  Case original, shrunk;        ///< cases of the draw and of its shrunk problem
  Status status = Status::failed;  ///< failed or error
  std::string message;          ///< the first failed check (or the backend's error) of the shrunk case
  std::int64_t evaluations = 0; ///< evaluations the shrinker spent
  std::vector<std::string> steps;  ///< what shrinking changed, in order ("rows 7 -> 1", ...)
};

/// The outcome of a fuzz run: how many draws were evaluated, skipped (the backend declined:
/// the reasons with their counts) or not valid (a draw the op's rules refuse), and the failures.
struct FuzzReport {
  std::string backend;
  std::uint64_t seed = 1;
  std::int64_t draws = 0, evaluated = 0, skipped = 0, invalid = 0;
  std::map<std::string, std::int64_t> skip_reasons;
  /// Evaluated draws per dimension value ("op=layer_norm", "x=bf16", "regime=huge", "w<=8"...).
  std::map<std::string, std::int64_t> coverage;
  std::vector<FuzzFailure> failures;
  double seconds = 0;
};

/// Draw i's dimensions for `seed` (deterministic): op, width (1..80, powers of two and their
/// neighbours up to max_width, primes), rows, dtypes, regime, eps regime, direction.
std::pair<Op, Dims> fuzz_draw(const FuzzOptions& opt, std::int64_t i);

/// The case of a drawn problem: literal inputs, the convention, no expectations (the default
/// gate judges every output). `name` becomes the case name.
Case fuzz_case(const ValidProblem& p, const std::string& name);

/// Runs the fuzz loop on backend.front() (one backend). Never throws for a backend failure
/// (it is a failure of the draw, status error).
FuzzReport fuzz(std::vector<std::unique_ptr<Backend>>& backend, const FuzzOptions& opt);

/// Shrinks a failing draw on backend.front() within `evaluations` evaluations: a smaller
/// case "still fails" when it ends with the draw's status (failed, or error). Returns the
/// failure with its original and shrunk cases and the steps taken.
FuzzFailure shrink(std::vector<std::unique_ptr<Backend>>& backend, Op op, const Dims& dims, std::int64_t evaluations);

/// The shrunk case as a ready-to-commit case file: a comment with the draw, the shrink steps
/// and the rerun line, the inputs as literal values (17 significant digits: they read back
/// exactly), the convention, and the exact expected values of the primary output
/// (`expect.values`, judged by the default gate).
std::string fuzz_case_file(const FuzzFailure& f, const std::string& backend, const std::string& rerun);

}  // namespace normcheck
