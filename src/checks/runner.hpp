// The execute stage of a run: each case on each backend -> one CaseResult (DESIGN.md data
// flow). The reference is evaluated once per case and shared by every backend; the checks
// (checks/check.hpp) judge each evaluation; observers (progress, dumps) see each result.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cases/case.hpp"
#include "checks/check.hpp"
#include "checks/metrics.hpp"

namespace normcheck {

/// Everything about one case on one backend.
struct CaseResult {
  const Case* cs = nullptr;
  std::string backend;
  Status status = Status::passed;   ///< worst of the checks (error > failed > mistrusted > passed; skipped alone)
  std::string reason;               ///< why skipped / error
  std::optional<MetricSet> metrics; ///< every required output vs the exact reference: the worst per metric (Worst::output names it); optional ones (saved statistics) are in output_metrics only
  std::vector<std::pair<std::string, MetricSet>> output_metrics;  ///< per output, y first
  std::optional<Gate> gate;         ///< the gate the case was judged by (evaluated runs)
  std::vector<CheckResult> checks;
  std::string repro;                ///< command that reruns exactly this case on this backend
  double seconds = 0;
};

/// Sees each result as it is made, before it joins the list (it may add a check of its
/// own, as the failure dumper does); `e` is null when the backend did not evaluate the case
/// (skipped, error).
using ResultObserver = std::function<void(CaseResult& r, const Evaluation* e)>;

struct RunOptions {
  std::string program = "normcheck";  ///< how the repro lines invoke the tool (argv[0])
  std::vector<ResultObserver> observers;
};

/// Runs every case on every backend. Never throws for a backend failure: it becomes
/// Status::error with the reason. Throws SpecError for a case that is not valid.
std::vector<CaseResult> run_cases(const std::vector<Case>& cases, std::vector<std::unique_ptr<Backend>>& backends,
                                  const RunOptions& opt);

/// Exit code of a list of results: 3 if any error, else 1 if any failed, else 0.
int exit_code(const std::vector<CaseResult>& results);

/// Quotes a word for a POSIX shell when it holds anything but [A-Za-z0-9_./:=+,@%-].
std::string shell_quote(const std::string& s);

}  // namespace normcheck
