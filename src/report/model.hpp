// The report of a run as a value: what ran (suite, shard, backends), every case on every
// backend, and the verdict derived from them. The table, JSON, JUnit and side-by-side
// formats and `normcheck merge` are functions of it; it round-trips through JSON, so a
// merged report is judged by the same code as a single run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checks/budget.hpp"
#include "checks/metrics.hpp"
#include "checks/runner.hpp"

#include <fmt/format.h>

namespace normcheck {

/// Version of the JSON layout written by to_json (1: before the run/backends sections).
inline constexpr int kReportSchema = 2;

/// One case on one backend, copied out of the Case so a report needs no case file.
struct CaseRecord {
  std::string name, layer, file, op, dtype, backend;
  int line = 0;
  std::string note;    ///< why the case exists ("the squares overflow f32")
  std::string seeds;   ///< generator seeds of the inputs
  Status status = Status::passed;
  std::string reason;  ///< why skipped / error
  std::optional<MetricSet> metrics;                       ///< worst over every output
  std::vector<std::pair<std::string, MetricSet>> outputs;  ///< per output, primary first
  std::optional<Gate> gate;
  std::vector<CheckResult> checks;
  std::string repro;   ///< shell command that reruns exactly this case on this backend
  double seconds = 0;
  std::string expected_failure;  ///< --expect-failures lists (case, backend): its reason; empty: not listed
  std::vector<std::string> dims; ///< the case's coverage dimensions (spec/sample.hpp problem_dims)
  /// The convention checked, every key of the op (spec/convention.hpp convention_json) as
  /// compact JSON text: what a case's preset or fields resolved to. Empty: not known.
  std::string convention;
};

/// A backend of the run.
struct BackendRecord {
  std::string name;         ///< as --backend spells it: the key of every CaseRecord
  std::string identity;     ///< self-reported name and version (worker hello, plugin, library)
  std::string unavailable;  ///< why it cannot run on this machine; empty: available
  bool requested = true;    ///< named by --backend or a default; false: a recorded source met in the cases
};

/// An --expect-failures entry that names no case of the selected files (stale).
struct StaleExpectation {
  std::string backend_pattern, case_name, where;  ///< where: "file:line"
};

/// Everything a run reports.
struct Report {
  std::string version;          ///< normcheck version that ran
  int schema = kReportSchema;
  std::string suite;            ///< "bundled cases (DIR)" or the paths given
  std::string fingerprint;      ///< of the selection before sharding and of the backend list
  std::int64_t suite_cases = 0; ///< cases selected before sharding
  int shard_index = 0, shard_count = 1;
  bool strict = false;
  std::string expectations;     ///< the --expect-failures file, if any
  std::vector<BackendRecord> backends;
  std::vector<CaseRecord> cases;
  std::vector<StaleExpectation> stale;
  std::vector<std::string> merged_from;  ///< report files joined by `normcheck merge`
  /// A placeholder written where the reports go when the run starts (its cases not run yet),
  /// replaced by the real report at its end: a run killed or crashed in between leaves a
  /// report whose verdict is ERROR, never the previous run's PASS (false-pass audit 21).
  bool incomplete = false;
};

/// Counts of one backend over the cases of a report.
struct BackendTally {
  int runs = 0, evaluated = 0, passed = 0, failed = 0, expected_failures = 0, unexpected_passes = 0,
      skipped = 0, skipped_checks = 0, mistrusted = 0, errors = 0;
};
BackendTally tally(const Report& r, const std::string& backend);

/// Checks skipped inside the evaluated cases of a report, over every backend (a worker that
/// declines a property's transformed problem): they show in the console, the layer rows,
/// JSON and JUnit, and fail the run under --strict.
int skipped_checks(const Report& r);

/// The verdict of a report (DESIGN.md "Exit codes"): 3 when a backend errored or a requested
/// backend is unavailable; else 1 when a check failed that --expect-failures does not list,
/// or a requested backend evaluated none of the cases (all skipped), or, under --strict, a
/// requested backend skipped a case or a check or had a MISTRUSTED case, a listed failure passed, or an
/// --expect-failures entry is stale; else 0. `problems` says each reason in a line.
struct Verdict {
  int exit_code = 0;
  std::vector<std::string> problems;
};
Verdict judge(const Report& r);

/// One report row: a layer on a backend at one output dtype.
struct LayerRow {
  std::string layer, op, backend, dtype;
  int cases = 0, passed = 0, failed = 0, expected_failures = 0, skipped = 0, mistrusted = 0, errors = 0;
  int skipped_checks = 0;  ///< checks skipped inside evaluated cases (a property's transformed problem declined)
  double max_abs = 0, max_ulp = 0, max_stab = 0;
  std::string verdict() const;  ///< "PASS", "FAIL", "XFAIL" (every failure expected), "ERROR", "SKIP"
};
/// Rows grouped by (layer, backend, dtype), sorted by layer, first-seen order within one.
std::vector<LayerRow> summarize(const Report& r);

/// The JSON report: {"normcheck", "run", "backends", "summary", "layers", "cases",
/// "stale_expectations"} (README "Reports"). NaN and infinities are the strings "nan",
/// "inf", "-inf"; exact values are decimal strings of 21 significant digits.
std::string to_json(const Report& r);
/// Parses a JSON report written by to_json (schema 2). `what` (a file name) prefixes every
/// error. Throws std::runtime_error "WHAT: FIELD: message" for malformed JSON (nesting
/// deeper than core/json_bounded.hpp's limit included), a missing or mistyped field, an
/// unknown status.
Report report_from_json(std::string_view text, const std::string& what);

/// Joins reports of the shards of one run (`normcheck run --shard K/N`) into one. Throws
/// std::runtime_error naming the files when they are not the complete set of shards of
/// one suite: a shard given twice, a shard missing, different fingerprints, shard counts
/// or --strict settings.
Report merge_reports(const std::vector<std::pair<std::string, Report>>& shards);

}  // namespace normcheck

/// {} of a Verdict: "PASS (exit 0)", "FAIL (exit 1)" or "ERROR (exit 3)"; the reasons are
/// the caller's to print (one a line).
template <>
struct fmt::formatter<normcheck::Verdict> : fmt::formatter<std::string_view> {
  template <class Ctx>
  auto format(const normcheck::Verdict& v, Ctx& ctx) const {
    const char* word = v.exit_code == 0 ? "PASS" : v.exit_code == 3 ? "ERROR" : "FAIL";
    return fmt::format_to(ctx.out(), "{} (exit {})", word, v.exit_code);
  }
};
