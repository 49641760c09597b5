// `normcheck merge`: joins the JSON reports of several runs (one per shard) into one.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace normcheck {

/// Joins reports written by `normcheck run --format json` (format_json): the "cases" arrays
/// are concatenated in the order given, "summary" (counts, exit_code) and "layers" (per
/// layer x backend x dtype: counts, max abs/ulp/stab, verdict) are recomputed from them, as
/// format_json computes them for a single run. Throws std::runtime_error naming the file
/// for an unreadable file, invalid JSON, or a JSON that is not such a report.
nlohmann::json merge_reports(const std::vector<std::string>& paths);

/// merge_reports on report texts already read: (name, JSON text) pairs, the name standing
/// for the path in messages and in "merged_from". Accepts any bytes: JSON nesting deeper
/// than kMaxJsonDepth, and every field the merge or format_report_table reads having
/// another type than format_json writes, is a std::runtime_error naming the file and the
/// field; nothing else is thrown (the fuzzing harness tests/fuzz/fuzz_merge.cpp checks it).
nlohmann::json merge_report_texts(const std::vector<std::pair<std::string, std::string>>& reports);

/// The per-layer table of a (merged) JSON report, in the layout of format_table.
std::string format_report_table(const nlohmann::json& report);

}  // namespace normcheck
