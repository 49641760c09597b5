#include "run/resolve.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"

namespace normcheck {

std::vector<std::string> split_backend_list(const std::vector<std::string>& occurrences) {
  std::vector<std::string> out;
  auto trim = [](std::string s) {
    const auto first = s.find_first_not_of(" \t"), last = s.find_last_not_of(" \t");
    return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
  };
  for (const std::string& s : occurrences) {
    std::size_t a = 0;
    while (true) {
      const std::string head = trim(s.substr(a));
      std::size_t b = s.find(',', a);
      if (head.rfind("cmd:", 0) == 0 || head.rfind("plugin:", 0) == 0) b = std::string::npos;  // the rest, whole
      if (b == std::string::npos) b = s.size();
      const std::string item = trim(s.substr(a, b - a));
      if (item.empty()) throw UsageError(fmt::format("--backend: empty entry in '{}'", s));
      if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
      if (b == s.size()) break;
      a = b + 1;
    }
  }
  return out;
}

BackendSet resolve_backends(const std::vector<std::string>& occurrences, const std::map<std::string, std::string>& recorded,
                            const BackendOptions& opt, bool strict) {
  for (const auto& [name, where] : recorded)
    if (is_reserved_backend_name(name))
      throw UsageError(fmt::format("{}: recorded.{}: '{}' names a built-in backend; give the recorded source another name", where,
                                   name, name));
  std::vector<std::string> names = split_backend_list(occurrences);
  std::set<std::string> implicit;  // recorded sources added by default, not requested
  if (names.empty()) {
    names = default_backends();
    for (const auto& [r, where] : recorded)
      if (std::find(names.begin(), names.end(), r) == names.end()) names.push_back(r), implicit.insert(r);
  }
  BackendSet set;
  for (const std::string& n : names) {
    bool builtin = false;
    for (auto& [bn, d] : builtin_backends()) builtin = builtin || bn == n;
    if (!builtin && !is_backend_spec(n) && !recorded.count(n))
      throw UsageError(fmt::format("--backend {}: unknown backend (built in: {}; recorded in the selected cases: {})", n,
                                   fmt::join(default_backends(), ", "),
                                   recorded.empty() ? "none" : [&] {
                                     std::string s;
                                     for (const auto& [r, w] : recorded) s += (s.empty() ? "" : ", ") + r;
                                     return s;
                                   }()));
    std::unique_ptr<Backend> be;
    try {
      be = make_backend(n, opt);
    } catch (const BackendError& e) {
      throw BackendError(fmt::format("--backend {}: {}", n, e.what()));
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("--backend {}: {}", n, e.what()));
    }
    BackendRecord rec{be->name(), be->identity(), be->unavailable().value_or(""), !implicit.count(n)};
    if (strict && !rec.unavailable.empty())
      throw BackendError(fmt::format("backend {} unavailable under --strict: {}", n, rec.unavailable));
    set.records.push_back(std::move(rec));
    set.backends.push_back(std::move(be));
  }
  return set;
}

}  // namespace normcheck
