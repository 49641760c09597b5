#include "run/select.hpp"

#include <fnmatch.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "cases/matrix.hpp"
#include "run/data_dir.hpp"

namespace normcheck {

bool glob_match(const std::string& pattern, const std::string& s) { return fnmatch(pattern.c_str(), s.c_str(), 0) == 0; }

std::string fingerprint(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", h);
}

namespace {

namespace fs = std::filesystem;

/// A case file's name relative to the path argument that found it (so the same suite has
/// the same fingerprint wherever it is installed or checked out).
std::string relative_to_root(const std::string& file, const std::vector<std::string>& roots) {
  std::error_code ec;
  const fs::path f = fs::weakly_canonical(file, ec);
  for (const auto& r : roots) {
    const fs::path root = fs::weakly_canonical(r, ec);
    const fs::path base = fs::is_directory(root, ec) ? root : root.parent_path();
    const fs::path rel = f.lexically_relative(base);
    if (!rel.empty() && *rel.begin() != "..") return rel.generic_string();
  }
  return fs::path(file).filename().string();
}

}  // namespace

Selection select_cases(const SelectOptions& opt) {
  Selection sel;
  std::vector<std::string> paths;
  std::optional<Tier> tier;
  if (!opt.tier.empty()) {
    tier = parse_matrix_source("matrix:" + opt.tier);
    if (!tier) throw UsageError(fmt::format("--tier '{}': expected quick or full", opt.tier));
  }
  for (const auto& p : opt.paths) {
    if (auto t = parse_matrix_source(p)) tier = !tier || *t == Tier::full ? *t : *tier;
    else if (p.rfind("matrix:", 0) == 0) throw UsageError(fmt::format("{}: unknown matrix tier (matrix:quick | matrix:full)", p));
    else paths.push_back(p);
  }
  const bool bundled = opt.paths.empty();
  if (bundled && !tier) tier = Tier::quick;
  if (paths.empty() && bundled) {
    // The bundled suite, found relative to the executable: a cases/ folder in the working
    // directory is the user's, and must not silently replace it.
    try {
      paths.push_back(bundled_cases_dir());
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
    sel.suite = fmt::format("bundled cases ({})", paths.front());
  } else {
    sel.suite = fmt::format("{}", fmt::join(paths, " "));
  }
  if (tier) sel.suite += fmt::format("{}coverage matrix {}", sel.suite.empty() ? "" : " + ", to_string(*tier));
  // (find_case_files refuses a folder without case files: an empty bundled cases/ folder ran
  // the matrix alone and passed, false-pass audit)
  const auto files = paths.empty() ? std::vector<std::string>{} : find_case_files(paths);
  if (files.empty() && !tier) throw UsageError(fmt::format("no case files (*.toml) found in {}", sel.suite));
  std::vector<int> filter_hits(opt.filters.size(), 0);
  std::vector<Case> selected;
  std::string identity;
  std::vector<std::pair<std::string, std::vector<Case>>> sources;  // (name for the fingerprint, cases)
  for (const auto& f : files) sources.emplace_back(relative_to_root(f, paths), parse_case_file(f));
  if (tier) sources.emplace_back(fmt::format("matrix:{}", to_string(*tier)), coverage_matrix(*tier));
  for (auto& [rel, cases] : sources) {
    for (auto& c : cases) {
      sel.names_in_files[c.name].insert(c.file);
      bool keep = opt.filters.empty();
      for (std::size_t k = 0; k < opt.filters.size(); ++k) {
        const std::string& pat = opt.filters[k];
        if (glob_match(pat, c.layer) || glob_match(pat, std::string(to_string(c.problem.op))) || glob_match(pat, c.name)) {
          keep = true;
          ++filter_hits[k];
        }
      }
      if (!opt.case_names.empty()) {
        bool named = false;
        for (auto& n : opt.case_names) named = named || n == c.name;
        keep = keep && named;
      }
      if (!keep) continue;
      identity += rel + "\x1f" + c.name + "\n";
      selected.push_back(std::move(c));
    }
  }
  // Every --filter and --case must select something: a typo must not shrink the check.
  for (std::size_t k = 0; k < opt.filters.size(); ++k)
    if (filter_hits[k] == 0)
      throw UsageError(fmt::format("--filter {}: matches no case (layer, op or name) in {}", opt.filters[k], sel.suite));
  for (const auto& n : opt.case_names) {
    bool found = false;
    for (auto& c : selected) found = found || c.name == n;
    if (!found)
      throw UsageError(sel.names_in_files.count(n)
                           ? fmt::format("--case {}: the case exists but no --filter keeps it", n)
                           : fmt::format("--case {}: no such case in {}", n, sel.suite));
  }
  if (selected.empty()) throw UsageError(fmt::format("no case selected in {}", sel.suite));
  sel.suite_cases = static_cast<std::int64_t>(selected.size());
  sel.cases_fingerprint = fingerprint(identity);

  std::string spec = opt.shard;
  const char* gi = std::getenv("GTEST_SHARD_INDEX");
  const char* gn = std::getenv("GTEST_TOTAL_SHARDS");
  if (spec.empty() && gi && gn && *gi && *gn) spec = fmt::format("{}/{}", gi, gn);
  // One of the pair without the other: a runner meant to shard, and every process would run
  // the whole suite (or a shard's report would claim it): an error, not a silent full run.
  if (spec.empty() && ((gi && *gi) != (gn && *gn)))
    throw UsageError(fmt::format("GTEST_SHARD_INDEX ({}) and GTEST_TOTAL_SHARDS ({}) must be set together", gi && *gi ? gi : "unset",
                                 gn && *gn ? gn : "unset"));
  if (spec.empty()) {
    sel.cases = std::move(selected);
    return sel;
  }
  long k = -1, n = 0;
  char slash = 0, extra = 0;
  if (std::sscanf(spec.c_str(), "%ld%c%ld%c", &k, &slash, &n, &extra) != 3 || slash != '/' || n < 1 || k < 0 || k >= n ||
      n > 1000000)
    throw UsageError(fmt::format("--shard '{}': expected K/N with 0 <= K < N <= 10^6 (GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS)", spec));
  sel.shard_index = static_cast<int>(k);
  sel.shard_count = static_cast<int>(n);
  for (std::size_t i = 0; i < selected.size(); ++i)
    if (static_cast<long>(i % static_cast<std::size_t>(n)) == k) sel.cases.push_back(std::move(selected[i]));
  if (const char* status = std::getenv("GTEST_SHARD_STATUS_FILE"); status && *status)  // gtest protocol: "I shard"
    if (std::FILE* sf = std::fopen(status, "w")) std::fclose(sf);
  return sel;
}

}  // namespace normcheck
