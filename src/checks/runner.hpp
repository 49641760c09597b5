// Runs cases on backends and decides each check (DESIGN.md data flow).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cases/case.hpp"
#include "checks/metrics.hpp"

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

/// Everything about one case on one backend.
struct CaseResult {
  const Case* cs = nullptr;
  std::string backend;
  Status status = Status::passed;   ///< worst of the checks (error > failed > mistrusted > passed; skipped alone)
  std::string reason;               ///< why skipped / error
  std::optional<MetricSet> metrics; ///< every output vs the exact reference: the worst per metric (Worst::output names it)
  std::vector<std::pair<std::string, MetricSet>> output_metrics;  ///< per output, y first
  std::vector<CheckResult> checks;
  std::string repro;                ///< command that reruns exactly this case on this backend
  double seconds = 0;
};

struct RunOptions {
  std::string dump_dir;             ///< --dump-failures: write .npy files of failing cases here
  std::string program = "normcheck";  ///< how the repro lines invoke the tool (argv[0])
};

/// Runs every case on every backend (the reference is evaluated once per case and shared).
/// Never throws for a backend failure: it becomes Status::error with the reason.
std::vector<CaseResult> run_cases(const std::vector<Case>& cases, std::vector<std::unique_ptr<Backend>>& backends,
                                  const RunOptions& opt);

/// Exit code of a run: 3 if any error, else 1 if any failed, else 0 (DESIGN.md "Exit codes").
int exit_code(const std::vector<CaseResult>& results);

/// Quotes a word for a POSIX shell when it holds anything but [A-Za-z0-9_./:=+,@%-].
std::string shell_quote(const std::string& s);

}  // namespace normcheck
