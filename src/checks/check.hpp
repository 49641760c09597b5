// The checks of one evaluation (a case on a backend), as a list of objects: the gate on every
// output, literal expectations, metamorphic properties, structural sums. The runner
// (checks/runner.hpp) builds the list per case and asks each to judge each backend.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cases/case.hpp"
#include "checks/metrics.hpp"
#include "spec/backend.hpp"

namespace normcheck {

/// Statuses (STYLE.md 7): only failed and error change the exit code.
/// mistrusted: the case cannot discriminate (e.g. an invariance the rounded inputs break).
enum class Status { passed, failed, skipped, mistrusted, error };
std::string_view to_string(Status) noexcept;

/// One check of one case on one backend.
struct CheckResult {
  std::string name;    ///< "gate", "expected", "invariant_under shift(10)", ...
  Status status = Status::passed;
  std::string detail;  ///< human-readable numbers: value vs bound, worst element
};

/// Everything a check may look at: the case, its validated problem and exact outputs, the
/// effective gate, the backend and what it returned, and the metrics of every output.
struct Evaluation {
  const Case& cs;
  const ValidProblem& problem;
  const ExactOutputs& exact;
  const Gate& gate;
  Backend& backend;
  const Outputs& outputs;
  const std::vector<std::pair<std::string, MetricSet>>& output_metrics;  ///< primary output first
  /// Optional outputs (saved statistics) the reference defines and the backend did not return.
  const std::vector<std::string>& not_returned;
};

/// A check of a case: judge() appends its results for one evaluation. A check may keep
/// state across the backends of its case (a property's transformed problem and reference).
class Check {
 public:
  virtual ~Check() = default;
  virtual void judge(const Evaluation& e, std::vector<CheckResult>& out) = 0;
};

/// The checks of a case, in report order: the gate on each output, the literal values,
/// the properties, the structural sums.
std::vector<std::unique_ptr<Check>> checks_for(const Case& cs);

/// Throws BackendError unless `o` holds every output of `ref` but the optional ones
/// (spec/op.hpp is_optional_output), each it holds with its shape and dtype (output_dtype),
/// and nothing else: an output `ref` lacks is a misnamed one (a backend that returns anything
/// else broke, it did not fail). Returns the optional
/// outputs of `ref` that `o` lacks.
std::vector<std::string> check_outputs(const Problem& p, const Outputs& o, const ExactOutputs& ref);

/// "[1,2]".
std::string coords_str(const std::vector<std::int64_t>& c);
/// "at [0,3] got 0.5 exact 0.49999..." (the output's name first when it is not y).
std::string worst_str(const Worst& w);

}  // namespace normcheck

/// {} of a Status: PASSED, FAILED, SKIPPED, MISTRUSTED, ERROR.
template <>
struct fmt::formatter<normcheck::Status> : fmt::formatter<std::string_view> {
  template <class Ctx>
  auto format(normcheck::Status v, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(normcheck::to_string(v), ctx);
  }
};
