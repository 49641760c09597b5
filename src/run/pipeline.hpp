// `normcheck run` as a pipeline of small stages: select (paths, filters, shard -> cases),
// resolve (names -> backends, each constructed once), execute (each case x backend -> one
// result, checks/runner.hpp), report (results -> a Report value, expectations applied).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "report/model.hpp"
#include "run/select.hpp"

namespace normcheck {

/// Everything `normcheck run` was asked for, outputs aside.
struct RunRequest {
  SelectOptions select;
  std::vector<std::string> backends;  ///< --backend occurrences (empty: the defaults)
  std::string expect_failures;        ///< --expect-failures FILE
  std::string dump_dir;               ///< --dump-failures DIR
  std::string program = "normcheck";  ///< argv[0], for rerun lines
  bool strict = false;
  bool progress = true;               ///< a bar (terminal) or heartbeat lines on stderr
  BackendOptions limits;               ///< --timeout, --budget, --max-timeouts, --backend-memory, --backend-cpu
  /// Files the run will write (--output, --json, --junit): refused before anything runs
  /// when they could not be written or would destroy data (an input, a golden file).
  std::vector<std::pair<std::string, std::string>> outputs;  ///< (option, path)
  /// Called once everything is checked, before the first case runs, with a placeholder
  /// report (Report::incomplete): the caller writes it where the reports go, so a run that
  /// never reaches its end leaves an ERROR there, not the previous run's report.
  std::function<void(const Report&)> started;
};

/// Runs the pipeline. Throws Error (UsageError: exit 2, BackendError: exit 3) before any
/// case runs when the request cannot be carried out; never for a failing check.
Report run(const RunRequest& req);

/// Throws UsageError when `path` (the value of option `opt`) could never be written or
/// would destroy data: a missing or unwritable folder, a folder, one of `inputs`, a path
/// inside a golden/ folder beside a cases/ folder.
void check_output_path(const std::string& opt, const std::string& path, const std::vector<std::string>& inputs);

}  // namespace normcheck
