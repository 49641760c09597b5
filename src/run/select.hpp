// Stage 1 of `normcheck run`: which cases run (paths, --filter, --case, --shard -> plan).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cases/case.hpp"

namespace normcheck {

/// What the user asked to select.
struct SelectOptions {
  std::vector<std::string> paths;       ///< case files or folders; empty: the bundled suite
  std::vector<std::string> filters;     ///< globs on layer, op or name; each must match a case
  std::vector<std::string> case_names;  ///< exact names; each must name a selected case
  std::string shard;                    ///< "K/N"; empty: GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS, else 0/1
  /// The coverage matrix tier (cases/matrix.hpp) added to the selection: "quick" | "full";
  /// empty: quick with the bundled suite (no paths), none with paths. A path may also name
  /// the matrix itself: matrix:quick, matrix:full.
  std::string tier;
};

/// The plan: the cases of this shard, and what the whole selection was.
struct Selection {
  std::vector<Case> cases;             ///< this shard's cases, files sorted, cases in file order
  std::string suite;                   ///< "bundled cases (DIR)" or "PATH PATH ..."
  std::int64_t suite_cases = 0;        ///< cases selected before sharding
  std::string cases_fingerprint;       ///< FNV-1a 64 of the selection before sharding (hex)
  int shard_index = 0, shard_count = 1;
  /// Every case name of the files read (before filters), with the files holding it.
  std::map<std::string, std::set<std::string>> names_in_files;
};

/// Reads the case files and applies the filters, names and shard. Throws CaseError for a
/// malformed case file and UsageError (exit 2) for a --filter or --case that selects
/// nothing, a malformed shard, no case file found, or no bundled suite. Case i of the
/// selection runs on shard i mod N; touches GTEST_SHARD_STATUS_FILE when sharding.
Selection select_cases(const SelectOptions& opt);

/// Whether fnmatch(3) matches `pattern` against `s` (no flags).
bool glob_match(const std::string& pattern, const std::string& s);

/// FNV-1a 64-bit hash of `s` as 16 hex digits: an identity for accident detection (two
/// shard reports of different selections), not a cryptographic digest.
std::string fingerprint(const std::string& s);

}  // namespace normcheck
