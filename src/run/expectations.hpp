// --expect-failures FILE: a baseline of known findings, so a CI gate can run a backend
// that has them (README "Expected failures").
//
// File format (TOML): each table is a backend pattern, an fnmatch glob matched against the
// backend's report name (its --backend spelling) or its self-reported identity (a worker's
// hello name, a plugin's name); each key in it is a case name, its value the finding:
//
//   ["onnxruntime*"]
//   ln_huge_f32 = "(x - mu)^2 overflows binary32: x = [1.9e19, -1.9e19] -> [0, -0], exact [1, -1]"
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "report/model.hpp"

namespace normcheck {

/// One entry: (backend pattern, case name) is expected to FAIL, for `reason`.
struct Expectation {
  std::string backend_pattern, case_name, reason;
  std::string file;
  int line = 0;
};

/// Reads an expectations file. Throws CaseError "file:line: field: message" (exit 2) for
/// malformed TOML, a value that is not a string or is empty, a table that is not a table.
std::vector<Expectation> read_expectations(const std::string& path);

/// Marks every listed FAILED case of `r` as expected (CaseRecord::expected_failure), so it no
/// longer fails the run; a listed case that PASSED keeps its status and becomes an
/// unexpected pass; ERROR and SKIPPED stay what they are. An entry that names no case of
/// `names_in_files` (case name -> the case files read holding it), its FILE part included, is
/// stale. Sets r.expectations to `path`.
/// A key "FILE::name" names the case of the case file whose path ends with FILE; a bare name
/// that the report meets in two case files throws CaseError (file, line, key: exit 2).
void apply_expectations(Report& r, const std::vector<Expectation>& expectations,
                        const std::map<std::string, std::set<std::string>>& names_in_files, const std::string& path);

}  // namespace normcheck
