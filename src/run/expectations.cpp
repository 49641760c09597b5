#include "run/expectations.hpp"

#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "cases/toml_fields.hpp"
#include "run/select.hpp"

namespace normcheck {

std::vector<Expectation> read_expectations(const std::string& path) {
  detail::TomlCtx c{path};
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw CaseError(path, static_cast<int>(e.source().begin.line), "toml", std::string(e.description()));
  }
  std::vector<Expectation> out;
  for (auto& [pattern, node] : root) {
    const std::string field(pattern.str());
    const toml::table* t = node.as_table();
    if (!t) c.fail(&node, field, "expected a table [\"backend pattern\"] of case = \"reason\" entries");
    if (field.empty()) c.fail(&node, field, "empty backend pattern");
    for (auto& [name, v] : *t) {
      const std::string f = field + "." + std::string(name.str());
      const std::string reason = detail::string_of(c, v, f);
      if (reason.empty()) c.fail(&v, f, "give the reason the case fails (the finding)");
      out.push_back({field, std::string(name.str()), reason, path, detail::line_of(&v)});
    }
  }
  return out;
}

void apply_expectations(Report& r, const std::vector<Expectation>& expectations,
                        const std::map<std::string, std::set<std::string>>& names_in_files, const std::string& path) {
  r.expectations = path;
  auto matches = [&](const Expectation& e, const std::string& backend) {
    if (glob_match(e.backend_pattern, backend)) return true;
    for (const BackendRecord& b : r.backends)
      if (b.name == backend && !b.identity.empty() && glob_match(e.backend_pattern, b.identity)) return true;
    return false;
  };
  // An entry names a case ("ln_d1") or a case of one file ("degenerate.toml::ln_d1": the
  // case file's path ends with that suffix). Case names are unique within a file only, so a
  // bare name that the run meets in two files is refused: it would excuse a failure it was
  // not written for.
  auto split = [](const std::string& key) -> std::pair<std::string, std::string> {
    const auto at = key.rfind("::");
    if (at == std::string::npos) return {"", key};
    return {key.substr(0, at), key.substr(at + 2)};
  };
  auto in_file = [](const std::string& file, const std::string& suffix) {
    if (suffix.empty()) return true;
    return file == suffix || (file.size() > suffix.size() && file.ends_with(suffix) && file[file.size() - suffix.size() - 1] == '/');
  };
  for (const Expectation& e : expectations) {
    const auto [suffix, name] = split(e.case_name);
    if (!suffix.empty()) continue;
    std::set<std::string> files;
    for (const CaseRecord& c : r.cases)
      if (c.name == name) files.insert(c.file);
    if (files.size() > 1)
      throw CaseError(e.file, e.line, e.case_name,
                      fmt::format("case name '{}' is in {} case files of this run ({}): write the entry as '<file>::{}' "
                                  "(a suffix of the case file's path, e.g. '{}::{}')",
                                  name, files.size(), fmt::join(files, ", "), name,
                                  std::filesystem::path(*files.begin()).filename().string(), name));
  }
  for (CaseRecord& c : r.cases)
    for (const Expectation& e : expectations) {
      const auto [suffix, name] = split(e.case_name);
      if (name == c.name && in_file(c.file, suffix) && matches(e, c.backend)) {
        c.expected_failure = fmt::format("{} ({}:{})", e.reason, e.file, e.line);
        break;
      }
    }
  // Stale: no case of the files read has the entry's name in a file its FILE part names (a
  // typo in FILE had left an entry that never applied and was never reported; audit 21).
  for (const Expectation& e : expectations) {
    const auto [suffix, name] = split(e.case_name);
    const auto it = names_in_files.find(name);
    bool named = false;
    if (it != names_in_files.end())
      for (const std::string& f : it->second) named = named || in_file(f, suffix);
    if (!named) r.stale.push_back({e.backend_pattern, e.case_name, fmt::format("{}:{}", e.file, e.line)});
  }
}

}  // namespace normcheck
