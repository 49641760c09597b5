// Typed field readers over toml++ nodes, shared by the case parser (cases/parser.cpp) and
// the model-file parser (trace/model.cpp). Every failure is a CaseError naming the file,
// the node's line and the field (DESIGN.md: errors name file, line and field; exit 2).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "cases/case.hpp"

namespace normcheck::detail {

/// The file being read; fail() throws CaseError at a node's line (0 when unknown).
struct TomlCtx {
  std::string file;
  /// Largest element count of a tensor in the file (the case parser's default: 2^28).
  std::int64_t max_elements = kMaxCaseElements;
  [[noreturn]] void fail(const toml::node* n, const std::string& field, const std::string& msg) const {
    throw CaseError(file, n ? static_cast<int>(n->source().begin.line) : 0, field, msg);
  }
  [[noreturn]] void fail(int line, const std::string& field, const std::string& msg) const {
    throw CaseError(file, line, field, msg);
  }
};

inline int line_of(const toml::node* n) { return n ? static_cast<int>(n->source().begin.line) : 0; }

/// Fails on the first key of t that is not in `allowed` (field "<where>.<key>").
inline void check_keys(const TomlCtx& c, const toml::table& t, const std::string& where,
                       std::initializer_list<std::string_view> allowed) {
  for (auto& [k, v] : t)
    if (std::find(allowed.begin(), allowed.end(), k.str()) == allowed.end())
      c.fail(&v, where.empty() ? std::string(k.str()) : where + "." + std::string(k.str()),
             fmt::format("unknown key '{}' (allowed: {})", k.str(), fmt::join(allowed, ", ")));
}

/// A number: TOML integer or float, or a string holding a C99 number ("0x1p-149",
/// "nan", "-inf", "1e-40"), read with strtod (correctly rounded to binary64).
inline double number(const TomlCtx& c, const toml::node& n, const std::string& field) {
  if (auto v = n.as_integer()) return static_cast<double>(v->get());
  if (auto v = n.as_floating_point()) return v->get();
  if (auto v = n.as_string()) {
    const std::string& s = v->get();
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end && *end == '\0') return d;
    c.fail(&n, field, fmt::format("'{}' is not a number", s));
  }
  c.fail(&n, field, "expected a number");
}

inline std::string string_of(const TomlCtx& c, const toml::node& n, const std::string& field) {
  if (auto v = n.as_string()) return v->get();
  c.fail(&n, field, "expected a string");
}

inline std::int64_t int_of(const TomlCtx& c, const toml::node& n, const std::string& field) {
  if (auto v = n.as_integer()) return v->get();
  c.fail(&n, field, "expected an integer");
}

inline bool bool_of(const TomlCtx& c, const toml::node& n, const std::string& field) {
  if (auto v = n.as_boolean()) return v->get();
  c.fail(&n, field, "expected true or false");
}

inline const toml::table& table_of(const TomlCtx& c, const toml::node& n, const std::string& field) {
  if (auto t = n.as_table()) return *t;
  c.fail(&n, field, "expected a table");
}

}  // namespace normcheck::detail
