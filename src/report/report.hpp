// Formats of a report (report/model.hpp): per-layer table, JSON, JUnit XML (DESIGN.md data
// flow). Report files are written with core/atomic_file.hpp.
#pragma once

#include <string>
#include <vector>

#include "checks/runner.hpp"
#include "core/atomic_file.hpp"
#include "report/model.hpp"

namespace normcheck {

/// What the run was, for make_report: the parts of a Report the results do not carry.
struct RunInfo {
  std::string version, suite, fingerprint, expectations;
  std::int64_t suite_cases = 0;
  int shard_index = 0, shard_count = 1;
  bool strict = false;
  std::vector<BackendRecord> backends;
};

/// The report of a run: `results` copied into CaseRecords (the Cases may then go away).
Report make_report(const std::vector<CaseResult>& results, RunInfo info);

/// Human table grouped by layer, then details(): failures with their repro lines, skip
/// reasons, per-backend counts, the suite and the verdict. `color`: ANSI colours (the CLI
/// decides: a TTY, no NO_COLOR).
std::string format_table(const Report& r, bool color);
/// The part of format_table after the layer rows: every FAILED, ERROR and MISTRUSTED case
/// with its note, checks and rerun line; expected failures and unexpected passes; stale
/// expectations; skip reasons; per-backend counts; totals; the verdict and its reasons.
/// The CLI prints it on the console when the report itself goes to files.
std::string format_details(const Report& r, bool color);
/// The coverage report (`normcheck run --coverage`): one row per coverage dimension value
/// (CaseRecord::dims), per requested backend "evaluated/runs", and "NONE" where a backend
/// evaluated none of a value's runs (it skipped every bf16 case, every width above 1024...),
/// with the most frequent skip reason of that backend and value.
std::string format_coverage(const Report& r);
/// JUnit XML: one <testsuite> per layer, one <testcase> per case x backend (pugixml); a
/// failure's message is its first failed check with its numbers. Control characters that
/// XML 1.0 forbids and invalid UTF-8 are replaced, so outside text cannot break the file.
std::string format_junit(const Report& r);

}  // namespace normcheck
