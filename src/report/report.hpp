// Reports of a run: per-layer table, JSON, JUnit XML (DESIGN.md data flow).
#pragma once

#include <string>
#include <vector>

#include "checks/runner.hpp"

namespace normcheck {

/// One report row: a layer on a backend at one output dtype.
struct LayerRow {
  std::string layer, op, backend, dtype;
  int cases = 0, passed = 0, failed = 0, skipped = 0, mistrusted = 0, errors = 0;
  double max_abs = 0, max_ulp = 0, max_stab = 0;
  std::string verdict() const;  ///< "PASS", "FAIL", "ERROR", "SKIP"
};

/// Groups results by (layer, backend, dtype), in first-seen order.
std::vector<LayerRow> summarize(const std::vector<CaseResult>& results);

/// Human table grouped by layer, followed by every failure with its repro line.
/// `color`: ANSI colours (only on a TTY and without NO_COLOR; the CLI decides).
std::string format_table(const std::vector<CaseResult>& results, bool color);
/// JSON: {"summary": {...}, "layers": [...], "cases": [...]} (nlohmann-json).
std::string format_json(const std::vector<CaseResult>& results);
/// JUnit XML: one <testsuite> per layer, one <testcase> per case x backend (pugixml).
std::string format_junit(const std::vector<CaseResult>& results);

/// Writes `text` to `path` atomically (temporary file in the same folder, then rename),
/// so a reader never sees a half-written report. Throws std::runtime_error.
void write_atomically(const std::string& path, const std::string& text);

}  // namespace normcheck
