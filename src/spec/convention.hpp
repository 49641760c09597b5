// A convention's keys as data, and the one function pair that reads and writes them, used
// by case files (TOML), the worker protocol and compare sidecars (JSON), compare-eps and
// probe (key=value text and cards). A key is the common core's (every op) or an op's
// parameter (its OpDef lists it); nothing else knows which op takes which key.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "spec/op.hpp"

namespace normcheck {

/// A key's value as readers and writers exchange it (monostate: null, e.g. momentum "none").
using ConventionValue = std::variant<std::monostate, bool, std::int64_t, double, std::string, std::vector<std::int64_t>>;

/// Where a convention's keys come from: typed reads that fail with the source's location
/// ("file:line: field: message"); each reader throws through fail() on a wrong type.
class FieldSource {
 public:
  virtual ~FieldSource() = default;
  /// The keys present, in source order.
  virtual std::vector<std::string> keys() const = 0;
  virtual bool has(std::string_view key) const = 0;
  virtual bool is_string(std::string_view key) const = 0;
  /// A JSON null (momentum "none" in the worker protocol); no other source has nulls.
  virtual bool is_null(std::string_view) const { return false; }
  virtual double number(std::string_view key) const = 0;
  virtual std::int64_t integer(std::string_view key) const = 0;
  virtual bool boolean(std::string_view key) const = 0;
  virtual std::string text(std::string_view key) const = 0;
  virtual std::vector<std::int64_t> integers(std::string_view key) const = 0;
  [[noreturn]] virtual void fail(std::string_view key, const std::string& msg) const = 0;
};

/// One convention key: its name, what it means, how it is read into and written from a
/// Convention. read() validates the value's range (fail() otherwise).
struct ConventionKey {
  std::string_view name;
  std::string_view doc;
  void (*read)(const FieldSource& src, Convention& c);
  ConventionValue (*write)(const Convention& c);
  /// The coverage matrix's and fuzz's draw of this key (spec/sample.hpp draw_problem): sets
  /// one of its values, the default among them, from `rng` on a problem the op's sample hook
  /// has drawn (it may reshape x where the key reads x's axes: batch_norm's sequence). Null:
  /// the op's hook draws the key, or nothing does.
  void (*draw)(std::mt19937_64& rng, Problem& p) = nullptr;
};

/// The common core: eps, eps_placement, variance, affine, normalized_shape, acc_dtype,
/// direction (every op takes them).
const std::vector<const ConventionKey*>& common_convention_keys();

/// The convention of `op` before any key is read: Convention{} with the op's defaults.
Convention default_convention(Op op);
/// Reads every key of `src` into `c` (op's parameters first, then the common core, so a
/// parameter may set defaults the core keys then override). A key that is neither common
/// nor `op`'s fails with the list of keys `op` takes.
void read_convention(const FieldSource& src, Op op, Convention& c);
/// Every key of `op` with its value in `c`: the common core, then op's parameters.
std::vector<std::pair<std::string_view, ConventionValue>> write_convention(const Convention& c, Op op);
/// The names of the keys `op` takes ("eps, eps_placement, ..."), for messages.
std::string convention_key_names(Op op);

/// The key=value forms: "eps=1e-5,placement=inside_sqrt" (compare-eps --conv) as a
/// FieldSource (`placement` is accepted for eps_placement); fail() throws
/// std::invalid_argument("what: key: message").
class KeyValueSource final : public FieldSource {
 public:
  KeyValueSource(std::string text, std::string what);
  std::vector<std::string> keys() const override;
  bool has(std::string_view key) const override;
  bool is_string(std::string_view key) const override;
  double number(std::string_view key) const override;
  std::int64_t integer(std::string_view key) const override;
  bool boolean(std::string_view key) const override;
  std::string text(std::string_view key) const override;
  std::vector<std::int64_t> integers(std::string_view key) const override;
  [[noreturn]] void fail(std::string_view key, const std::string& msg) const override;

 private:
  std::vector<std::pair<std::string, std::string>> items_;
  std::string what_;
  const std::string& raw(std::string_view key) const;
};

/// A JSON object (worker protocol, compare sidecars) as a FieldSource; fail() throws
/// UsageError("what: key: message") unless a subclass says otherwise.
class JsonSource : public FieldSource {
 public:
  JsonSource(const nlohmann::json& obj, std::string what);
  std::vector<std::string> keys() const override;
  bool has(std::string_view key) const override;
  bool is_string(std::string_view key) const override;
  bool is_null(std::string_view key) const override;
  double number(std::string_view key) const override;
  std::int64_t integer(std::string_view key) const override;
  bool boolean(std::string_view key) const override;
  std::string text(std::string_view key) const override;
  std::vector<std::int64_t> integers(std::string_view key) const override;
  [[noreturn]] void fail(std::string_view key, const std::string& msg) const override;

 protected:
  const nlohmann::json& obj_;
  std::string what_;
};

/// The convention as a JSON object (every key of the op; null for an absent momentum).
nlohmann::json convention_json(const Convention& c, Op op);
/// A value as TOML (and JSON) text: 1e-05, "inside_sqrt", [64], true, "none" for null.
std::string convention_value_text(const ConventionValue& v);

}  // namespace normcheck
