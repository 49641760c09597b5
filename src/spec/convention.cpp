#include "spec/convention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "spec/op_def.hpp"

namespace normcheck {

namespace {

template <class E>
E choice(const FieldSource& s, std::string_view key, std::optional<E> (*parse)(std::string_view), std::string (*choices)()) {
  const std::string v = s.text(key);
  auto e = parse(v);
  if (!e) s.fail(key, fmt::format("unknown '{}' ({})", v, choices()));
  return *e;
}

const ConventionKey kEps{"eps", "added to the statistic per eps_placement; finite, >= 0 (binary64)",
                         [](const FieldSource& s, Convention& c) {
                           c.eps = s.number("eps");
                           if (!(c.eps >= 0) || !std::isfinite(c.eps))
                             s.fail("eps", fmt::format("eps must be finite and >= 0, got {}", c.eps));
                         },
                         [](const Convention& c) -> ConventionValue { return c.eps; }};
const ConventionKey kPlacement{"eps_placement", "inside_sqrt | outside_sqrt | clamp_var | clamp_norm",
                               [](const FieldSource& s, Convention& c) {
                                 c.eps_placement = choice(s, "eps_placement", parse_eps_placement, choices_eps_placement);
                               },
                               [](const Convention& c) -> ConventionValue { return std::string(to_string(c.eps_placement)); }};
const ConventionKey kVariance{"variance", "biased (1/m) | unbiased (1/(m-1))",
                              [](const FieldSource& s, Convention& c) {
                                c.variance = choice(s, "variance", parse_variance, choices_variance);
                              },
                              [](const Convention& c) -> ConventionValue { return std::string(to_string(c.variance)); }};
const ConventionKey kAffine{"affine", "none | gamma | gamma_beta | one_plus_w",
                            [](const FieldSource& s, Convention& c) { c.affine = choice(s, "affine", parse_affine, choices_affine); },
                            [](const Convention& c) -> ConventionValue { return std::string(to_string(c.affine)); }};
const ConventionKey kShape{"normalized_shape", "trailing dims of x reduced over (default: the last dim)",
                           [](const FieldSource& s, Convention& c) {
                             const auto v = s.integers("normalized_shape");
                             if (v.empty()) s.fail("normalized_shape", "expected a non-empty array of positive integers");
                             for (auto d : v)
                               if (d <= 0) s.fail("normalized_shape", fmt::format("dimension {} is not positive", d));
                             c.normalized_shape = v;
                           },
                           [](const Convention& c) -> ConventionValue { return std::vector<std::int64_t>(c.normalized_shape); }};
const ConventionKey kAcc{"acc_dtype", "accumulation dtype of a conforming kernel (f64 | f32 | f16 | bf16)",
                         [](const FieldSource& s, Convention& c) {
                           const std::string v = s.text("acc_dtype");
                           auto d = parse_dtype(v);
                           if (!d || is_quantized(*d)) s.fail("acc_dtype", fmt::format("unknown dtype '{}' (f64 | f32 | f16 | bf16)", v));
                           c.acc_dtype = *d;
                         },
                         [](const Convention& c) -> ConventionValue { return std::string(dtype_name(c.acc_dtype)); }};
const ConventionKey kDirection{"direction", "forward | backward (gradients given the input dy)",
                               [](const FieldSource& s, Convention& c) {
                                 c.direction = choice(s, "direction", parse_direction, choices_direction);
                               },
                               [](const Convention& c) -> ConventionValue { return std::string(to_string(c.direction)); }};

}  // namespace

const std::vector<const ConventionKey*>& common_convention_keys() {
  static const std::vector<const ConventionKey*> keys{&kEps, &kPlacement, &kVariance, &kAffine, &kShape, &kAcc, &kDirection};
  return keys;
}

Convention default_convention(Op op) {
  Convention c;
  if (op.def().defaults) op.def().defaults(c);
  return c;
}

std::string convention_key_names(Op op) {
  std::vector<std::string_view> names;
  for (const ConventionKey* k : common_convention_keys()) names.push_back(k->name);
  for (const ConventionKey* k : op.def().params) names.push_back(k->name);
  return fmt::format("{}", fmt::join(names, ", "));
}

void read_convention(const FieldSource& src, Op op, Convention& c) {
  auto find = [](const std::vector<const ConventionKey*>& ks, std::string_view name) -> const ConventionKey* {
    for (const ConventionKey* k : ks)
      if (k->name == name) return k;
    return nullptr;
  };
  for (const std::string& key : src.keys())
    if (!find(common_convention_keys(), key) && !find(op.def().params, key))
      src.fail(key, fmt::format("'{}' is not a parameter of {} (its keys: {})", key, op.name(), convention_key_names(op)));
  for (const ConventionKey* k : op.def().params)
    if (src.has(k->name)) k->read(src, c);
  for (const ConventionKey* k : common_convention_keys())
    if (src.has(k->name)) k->read(src, c);
}

std::vector<std::pair<std::string_view, ConventionValue>> write_convention(const Convention& c, Op op) {
  std::vector<std::pair<std::string_view, ConventionValue>> out;
  for (const ConventionKey* k : common_convention_keys()) out.emplace_back(k->name, k->write(c));
  for (const ConventionKey* k : op.def().params) out.emplace_back(k->name, k->write(c));
  return out;
}

nlohmann::json convention_json(const Convention& c, Op op) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, v] : write_convention(c, op))
    std::visit(
        [&, n = std::string(name)](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::monostate>) j[n] = nullptr;
          else j[n] = x;
        },
        v);
  return j;
}

std::string convention_value_text(const ConventionValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "\"none\"";
        else if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::int64_t>) return std::to_string(x);
        else if constexpr (std::is_same_v<T, double>) return fmt::format("{:.17g}", x);
        else if constexpr (std::is_same_v<T, std::string>) return "\"" + x + "\"";
        else return fmt::format("[{}]", fmt::join(x, ", "));
      },
      v);
}

// ---- key=value text -----------------------------------------------------------------------

KeyValueSource::KeyValueSource(std::string text, std::string what) : what_(std::move(what)) {
  std::size_t a = 0;
  while (a <= text.size()) {
    std::size_t b = text.find(',', a);
    // A bracketed list ("normalized_shape=[2,3]") keeps its commas.
    const std::size_t lb = text.find('[', a);
    if (lb != std::string::npos && lb < b) {
      const std::size_t rb = text.find(']', lb);
      b = rb == std::string::npos ? std::string::npos : text.find(',', rb);
    }
    if (b == std::string::npos) b = text.size();
    const std::string item = text.substr(a, b - a);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw std::invalid_argument(fmt::format("{}: '{}' is not key=value", what_, item));
    std::string key = item.substr(0, eq);
    if (key == "placement") key = "eps_placement";
    for (auto& [k, v] : items_)
      if (k == key) throw std::invalid_argument(fmt::format("{}: {} given twice", what_, key));
    items_.emplace_back(key, item.substr(eq + 1));
    a = b + 1;
  }
}

std::vector<std::string> KeyValueSource::keys() const {
  std::vector<std::string> k;
  for (auto& [key, v] : items_) k.push_back(key);
  return k;
}
bool KeyValueSource::has(std::string_view key) const {
  return std::any_of(items_.begin(), items_.end(), [&](auto& kv) { return kv.first == key; });
}
const std::string& KeyValueSource::raw(std::string_view key) const {
  for (auto& [k, v] : items_)
    if (k == key) return v;
  fail(key, "missing");
}
bool KeyValueSource::is_string(std::string_view key) const {
  const std::string& v = raw(key);
  char* end = nullptr;
  std::strtod(v.c_str(), &end);
  return !(end && *end == '\0');
}
double KeyValueSource::number(std::string_view key) const {
  const std::string& v = raw(key);
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0') fail(key, fmt::format("'{}' is not a number", v));
  return d;
}
std::int64_t KeyValueSource::integer(std::string_view key) const {
  const std::string& v = raw(key);
  char* end = nullptr;
  const long long d = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0') fail(key, fmt::format("'{}' is not an integer", v));
  return d;
}
bool KeyValueSource::boolean(std::string_view key) const {
  const std::string& v = raw(key);
  if (v == "true") return true;
  if (v == "false") return false;
  fail(key, fmt::format("'{}' is not true or false", v));
}
std::string KeyValueSource::text(std::string_view key) const { return raw(key); }
std::vector<std::int64_t> KeyValueSource::integers(std::string_view key) const {
  std::string v = raw(key);
  if (v.size() < 2 || v.front() != '[' || v.back() != ']') fail(key, fmt::format("'{}' is not a list [a, b, ...]", v));
  std::vector<std::int64_t> out;
  std::size_t a = 1;
  while (a < v.size() - 1) {
    std::size_t b = v.find(',', a);
    if (b == std::string::npos || b > v.size() - 1) b = v.size() - 1;
    const std::string item = v.substr(a, b - a);
    char* end = nullptr;
    const long long d = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0') fail(key, fmt::format("'{}' is not an integer", item));
    out.push_back(d);
    a = b + 1;
  }
  return out;
}
void KeyValueSource::fail(std::string_view key, const std::string& msg) const {
  for (auto& [k, v] : items_)
    if (k == key) throw std::invalid_argument(fmt::format("{}: {} '{}': {}", what_, key, v, msg));
  throw std::invalid_argument(fmt::format("{}: {}: {}", what_, key, msg));
}

// ---- JSON -------------------------------------------------------------------------------

JsonSource::JsonSource(const nlohmann::json& obj, std::string what) : obj_(obj), what_(std::move(what)) {
  if (!obj_.is_object()) throw UsageError(fmt::format("{}: expected a JSON object", what_));
}
std::vector<std::string> JsonSource::keys() const {
  std::vector<std::string> k;
  for (auto it = obj_.begin(); it != obj_.end(); ++it) k.push_back(it.key());
  return k;
}
bool JsonSource::has(std::string_view key) const { return obj_.contains(std::string(key)); }
bool JsonSource::is_string(std::string_view key) const { return obj_.at(std::string(key)).is_string(); }
bool JsonSource::is_null(std::string_view key) const { return obj_.at(std::string(key)).is_null(); }
double JsonSource::number(std::string_view key) const {
  const auto& v = obj_.at(std::string(key));
  if (!v.is_number()) fail(key, "expected a finite number");
  return v.get<double>();
}
std::int64_t JsonSource::integer(std::string_view key) const {
  const auto& v = obj_.at(std::string(key));
  if (!v.is_number_integer()) fail(key, "expected an integer");
  return v.get<std::int64_t>();
}
bool JsonSource::boolean(std::string_view key) const {
  const auto& v = obj_.at(std::string(key));
  if (!v.is_boolean()) fail(key, "expected true or false");
  return v.get<bool>();
}
std::string JsonSource::text(std::string_view key) const {
  const auto& v = obj_.at(std::string(key));
  if (!v.is_string()) fail(key, "expected a string");
  return v.get<std::string>();
}
std::vector<std::int64_t> JsonSource::integers(std::string_view key) const {
  const auto& v = obj_.at(std::string(key));
  if (!v.is_array()) fail(key, "expected an array of integers");
  std::vector<std::int64_t> out;
  for (const auto& e : v) {
    if (!e.is_number_integer()) fail(key, "expected an array of integers");
    out.push_back(e.get<std::int64_t>());
  }
  return out;
}
void JsonSource::fail(std::string_view key, const std::string& msg) const {
  throw UsageError(fmt::format("{}: {}: {}", what_, key, msg));
}

}  // namespace normcheck
