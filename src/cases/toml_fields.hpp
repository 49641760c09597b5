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
#include "spec/convention.hpp"

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

/// TOML key/node pairs (a table, or a case's table over [defaults]) as a FieldSource for
/// read_convention; errors name the file, the node's line and "<field>.<key>".
class TomlSource final : public FieldSource {
 public:
  TomlSource(const TomlCtx& c, std::vector<std::pair<std::string, const toml::node*>> items, const toml::node* self,
             std::string field)
      : c_(c), items_(std::move(items)), self_(self), field_(std::move(field)) {}
  std::vector<std::string> keys() const override {
    std::vector<std::string> k;
    for (auto& [name, n] : items_) k.push_back(name);
    return k;
  }
  bool has(std::string_view key) const override { return find(key) != nullptr; }
  bool is_string(std::string_view key) const override { return node(key).as_string() != nullptr; }
  double number(std::string_view key) const override { return detail::number(c_, node(key), f(key)); }
  std::int64_t integer(std::string_view key) const override { return int_of(c_, node(key), f(key)); }
  bool boolean(std::string_view key) const override { return bool_of(c_, node(key), f(key)); }
  std::string text(std::string_view key) const override { return string_of(c_, node(key), f(key)); }
  std::vector<std::int64_t> integers(std::string_view key) const override {
    const toml::array* a = node(key).as_array();
    if (!a) c_.fail(&node(key), f(key), "expected an array of integers");
    std::vector<std::int64_t> v;
    for (auto& e : *a) v.push_back(int_of(c_, e, f(key)));
    return v;
  }
  [[noreturn]] void fail(std::string_view key, const std::string& msg) const override {
    const toml::node* n = find(key);
    c_.fail(n ? n : self_, f(key), msg);
  }

 private:
  const toml::node* find(std::string_view key) const {
    for (auto& [name, n] : items_)
      if (name == key) return n;
    return nullptr;
  }
  const toml::node& node(std::string_view key) const { return *find(key); }
  std::string f(std::string_view key) const { return field_ + "." + std::string(key); }
  const TomlCtx& c_;
  std::vector<std::pair<std::string, const toml::node*>> items_;
  const toml::node* self_;
  std::string field_;
};

/// The key/node pairs of a table, for TomlSource.
inline std::vector<std::pair<std::string, const toml::node*>> items_of(const toml::table& t) {
  std::vector<std::pair<std::string, const toml::node*>> v;
  for (auto& [k, n] : t) v.emplace_back(std::string(k.str()), &n);
  return v;
}

}  // namespace normcheck::detail
