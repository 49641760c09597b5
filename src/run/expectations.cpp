#include "run/expectations.hpp"

#include <fmt/format.h>
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

void apply_expectations(Report& r, const std::vector<Expectation>& expectations, const std::set<std::string>& names_in_files,
                        const std::string& path) {
  r.expectations = path;
  auto matches = [&](const Expectation& e, const std::string& backend) {
    if (glob_match(e.backend_pattern, backend)) return true;
    for (const BackendRecord& b : r.backends)
      if (b.name == backend && !b.identity.empty() && glob_match(e.backend_pattern, b.identity)) return true;
    return false;
  };
  for (CaseRecord& c : r.cases)
    for (const Expectation& e : expectations)
      if (e.case_name == c.name && matches(e, c.backend)) {
        c.expected_failure = fmt::format("{} ({}:{})", e.reason, e.file, e.line);
        break;
      }
  for (const Expectation& e : expectations)
    if (!names_in_files.count(e.case_name))
      r.stale.push_back({e.backend_pattern, e.case_name, fmt::format("{}:{}", e.file, e.line)});
}

}  // namespace normcheck
