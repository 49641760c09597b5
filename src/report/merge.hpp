// `normcheck merge`: joins the JSON reports of several runs (one per shard) into one.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace normcheck {

/// Joins reports written by `normcheck run --format json` (format_json): the "cases" arrays
/// are concatenated in the order given, "summary" (counts, exit_code) and "layers" (per
/// layer x backend x dtype: counts, max abs/ulp/stab, verdict) are recomputed from them, as
/// format_json computes them for a single run. Throws std::runtime_error naming the file
/// for an unreadable file, invalid JSON, or a JSON that is not such a report.
nlohmann::json merge_reports(const std::vector<std::string>& paths);

/// The per-layer table of a (merged) JSON report, in the layout of format_table.
std::string format_report_table(const nlohmann::json& report);

}  // namespace normcheck
