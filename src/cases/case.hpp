// Declarative test cases (cases/**/*.toml) and their parser. Schema: README.md "Case files".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "spec/backend.hpp"
#include "core/error.hpp"
#include "spec/gate.hpp"
#include "spec/op.hpp"

namespace normcheck {

/// A malformed case file: "file:line: field: message". The CLI exits with code 2.
struct CaseError : UsageError {
  CaseError(std::string file_, int line_, std::string field_, const std::string& msg);
  std::string file;
  int line;
  std::string field;
};

/// An input transform: x -> scale * x + shift (each rounded once to x's dtype).
/// `input`: the input it applies to (empty: the primary input, x or q). `at`: a prefix of
/// coordinates (-1 = any index on that axis) selecting the elements transformed, e.g.
/// at = [1] changes sample 1 of x only; empty: every element.
struct Transform {
  double shift = 0;
  double scale = 1;
  std::string input;
  std::vector<std::int64_t> at;
  std::string str() const;  ///< "shift(10)", "scale(5)", "scale(5)+shift(10)", "k:scale(3)@[1]"
  Problem apply(const Problem& p) const;
  /// Whether scale * x + shift is exact (no rounding) in x's dtype for every element of x,
  /// decided with error-free transformations (fma for the product, TwoSum for the sum).
  bool exact_on(const Problem& p) const;
  /// Whether apply(p) changes at least one element of the input (compared as values after
  /// the rounding to its dtype: -0 and +0 are one value, a NaN stays itself). A transform
  /// that the rounding absorbs entirely (shift 1e-30 on [1, 2, 3]) tests nothing.
  bool moves(const Problem& p) const;
};

/// A metamorphic property of the backend's own outputs: y(T x) vs y(x).
/// `outputs`: the outputs compared (empty: "y"); `observe`: a coordinate prefix (-1 = any)
/// of the output elements compared (empty: all), so that "changing sample 1 does not
/// change sample 0" reads invariant_under = [{ shift = 3.0, at = [1], observe = [0] }].
struct Property {
  enum class Kind { invariant_under, changes_under } kind = Kind::invariant_under;
  Transform transform;
  int line = 0;
  std::vector<std::string> outputs;
  std::vector<std::int64_t> observe;
  std::string str() const;  ///< transform, then "->[0]" and the outputs when not the default
};

/// A structural property of one backend's outputs, per normalization group (spec/op.hpp
/// group_layout): sums_to_zero: sum_j a_j = 0; orthogonal: sum_j a_j b_j = 0. a and b name
/// outputs or inputs of x's shape (e.g. a = "dx", b = "x"). checks/structural.hpp judges
/// it against a budget derived from the gate.
struct Structural {
  enum class Kind { sums_to_zero, orthogonal } kind = Kind::sums_to_zero;
  std::string a, b;  ///< b empty for sums_to_zero
  int line = 0;
  std::string str() const;  ///< "sums_to_zero dx", "orthogonal dx.x"
};

/// One case: a Problem plus what is expected of every backend on it. Plain data: the
/// parser checked the problem (validate) to point at the line of a mistake; the run
/// validates it once more into the ValidProblem the reference and every backend take.
struct Case {
  std::string file;
  int line = 0;
  std::string name;
  std::string layer;     ///< report group; default "<op>"
  std::string preset;    ///< the framework preset the convention started from (ops/presets.hpp); empty: none
  std::string note;
  Problem problem;
  std::string seeds;     ///< "x: normal(seed=7)" etc., printed with failures
  std::optional<std::vector<double>> expected;  ///< literal y, row-major
  std::optional<double> expected_tolerance_abs;
  int expected_line = 0;
  /// Literal values of the other outputs (expect.outputs.<name>), row-major, with their lines.
  std::map<std::string, std::vector<double>> expected_outputs;
  std::map<std::string, int> expected_outputs_line;
  std::optional<Gate> gate;  ///< expect.gate; empty: the default gate (checks/budget.hpp)
  std::vector<Property> properties;
  std::vector<Structural> structural;  ///< expect.sums_to_zero, expect.orthogonal
  Recorded recorded;     ///< outputs stored by other sources, by source name
};

/// Parses one case file. Throws CaseError (file, line, field, message) on any unknown key,
/// wrong type, shape/value-count mismatch, invalid convention (SpecError mapped to its line).
std::vector<Case> parse_case_file(const std::string& path);

/// Largest element count of a tensor in a case file (2^28).
inline constexpr std::int64_t kMaxCaseElements = std::int64_t{1} << 28;

/// parse_case_file on the text of a case file already in memory; `path` names it in
/// errors. `max_elements` (at most kMaxCaseElements) bounds every tensor's element count
/// (CaseError on the shape's field): the fuzzing harness parses with a small bound so that
/// no input can make it allocate gigabytes. Throws CaseError only (bad_alloc aside).
std::vector<Case> parse_case_text(std::string_view text, const std::string& path,
                                  std::int64_t max_elements = kMaxCaseElements);

/// Collects case files: each path is a .toml file or a directory searched recursively
/// (sorted). Throws CaseError for a missing path.
/// Throws CaseError for a path that does not exist and for a folder without case files.
std::vector<std::string> find_case_files(const std::vector<std::string>& paths);

/// Deterministic generators (also used by tests and tools): values in binary64, to be
/// rounded to the input dtype. mt19937_64 (fully specified by C++) with Box-Muller for
/// normal, so a seed gives the same values on every platform.
std::vector<double> generate_normal(std::int64_t n, double mean, double stddev, std::uint64_t seed);
std::vector<double> generate_uniform(std::int64_t n, double low, double high, std::uint64_t seed);

}  // namespace normcheck
