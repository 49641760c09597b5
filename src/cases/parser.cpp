// Case-file parser (toml++). Every error names file, line and field.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "cases/case.hpp"
#include "cases/toml_fields.hpp"
#include "ops/presets.hpp"
#include "ops/registry.hpp"
#include "spec/convention.hpp"

namespace normcheck {

CaseError::CaseError(std::string file_, int line_, std::string field_, const std::string& msg)
    : UsageError(line_ > 0 ? fmt::format("{}:{}: {}: {}", file_, line_, field_, msg)
                                   : fmt::format("{}: {}: {}", file_, field_, msg)),
      file(std::move(file_)), line(line_), field(std::move(field_)) {}

namespace {
/// Whether the coordinates of flat index i in `s` start with `prefix` (-1 matches any).
bool prefix_match(const Shape& s, std::int64_t i, const std::vector<std::int64_t>& prefix) {
  if (prefix.empty()) return true;
  const auto c = unravel(s, i);
  for (std::size_t k = 0; k < prefix.size() && k < c.size(); ++k)
    if (prefix[k] >= 0 && prefix[k] != c[k]) return false;
  return true;
}
std::string prefix_str(const std::vector<std::int64_t>& p) {
  std::vector<std::string> parts;
  for (auto v : p) parts.push_back(v < 0 ? std::string("*") : std::to_string(v));
  return fmt::format("[{}]", fmt::join(parts, ","));
}
}  // namespace

std::string Transform::str() const {
  std::string s;
  if (scale != 1) s += fmt::format("scale({})", scale);
  if (shift != 0) s += fmt::format("{}shift({})", s.empty() ? "" : "+", shift);
  if (s.empty()) s = "identity";
  if (!input.empty()) s = input + ":" + s;
  if (!at.empty()) s += "@" + prefix_str(at);
  return s;
}

Problem Transform::apply(const Problem& p) const {
  Problem q = p;
  Tensor& x = q.inputs.at(input.empty() ? std::string(p.op.def().primary_input) : input);
  for (std::int64_t i = 0; i < x.size(); ++i)
    if (prefix_match(x.shape(), i, at)) x.set(i, x.get(i) * scale + shift);
  return q;
}

bool Transform::exact_on(const Problem& p) const {
  const Tensor& x = p.inputs.at(input.empty() ? std::string(p.op.def().primary_input) : input);
  for (std::int64_t i = 0; i < x.size(); ++i) {
    if (!prefix_match(x.shape(), i, at)) continue;
    const double v = x.get(i);
    if (!std::isfinite(v)) continue;
    const double prod = v * scale;
    if (!std::isfinite(prod) || std::fma(v, scale, -prod) != 0) return false;
    const double sum = prod + shift;
    const double bp = sum - shift;  // TwoSum (Knuth): prod + shift is exact iff its error term is 0
    if (!std::isfinite(sum) || (prod - bp) + (shift - (sum - bp)) != 0) return false;
    if (!representable(x.dtype(), sum)) return false;
  }
  return true;
}

bool Transform::moves(const Problem& p) const {
  const std::string& name = input.empty() ? std::string(p.op.def().primary_input) : input;
  const Tensor& x = p.inputs.at(name);
  const Problem q = apply(p);
  const Tensor& tx = q.inputs.at(name);
  for (std::int64_t i = 0; i < x.size(); ++i)
    if (prefix_match(x.shape(), i, at) && !std::isnan(x.get(i)) && tx.get(i) != x.get(i)) return true;
  return false;
}

std::string Structural::str() const {
  return kind == Kind::sums_to_zero ? "sums_to_zero " + a : "orthogonal " + a + "." + b;
}

std::string Property::str() const {
  std::string s = transform.str();
  if (!observe.empty()) s += " observe " + prefix_str(observe);
  if (!outputs.empty()) s += fmt::format(" outputs {}", fmt::join(outputs, ","));
  return s;
}

std::vector<double> generate_normal(std::int64_t n, double mean, double stddev, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  auto unit = [&] { return (static_cast<double>(g() >> 11) + 0.5) * 0x1p-53; };  // (0,1)
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; i += 2) {
    const double r = std::sqrt(-2 * std::log(unit())), t = 2 * M_PI * unit();
    v[i] = mean + stddev * r * std::cos(t);
    if (i + 1 < n) v[i + 1] = mean + stddev * r * std::sin(t);
  }
  return v;
}

std::vector<double> generate_uniform(std::int64_t n, double low, double high, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = low + (high - low) * (static_cast<double>(g() >> 11) * 0x1p-53);
  return v;
}

namespace {

using Ctx = detail::TomlCtx;
using detail::check_keys;
using detail::int_of;
using detail::line_of;
using detail::number;
using detail::string_of;
using detail::bool_of;

/// Checks that a shape is non-empty and its element count within c.max_elements (2^28 by
/// default: 2 GiB as f64, the reference's working copies come on top, far above any bundled
/// case; larger shapes are typos or attacks), computed without overflow.
void check_size(const Ctx& c, const toml::node* n, const std::string& field, const Shape& s) {
  if (s.empty()) c.fail(n, field, "a tensor needs at least one dimension (a scalar is shape = [1])");
  std::int64_t count = 1;
  for (auto d : s) {
    if (d <= 0) c.fail(n, field, fmt::format("dimension {} is not positive", d));
    if (count > c.max_elements / d)
      c.fail(n, field,
             c.max_elements == kMaxCaseElements ? fmt::format("shape {} has more than 2^28 elements", shape_str(s))
                                                 : fmt::format("shape {} has more than {} elements", shape_str(s), c.max_elements));
    count *= d;
  }
}

Shape shape_of(const Ctx& c, const toml::node& n, const std::string& field);

/// Checks, before any input is generated, that a case's inputs together hold at most
/// c.max_elements elements (the bound of one tensor): four inputs at the limit made one case
/// allocate 8 GiB (bad_alloc, exit 3) where the file is a few hundred bytes. Shapes given
/// by `shape` are counted here; literal values are already in memory and counted by
/// tensor_of.
template <class Items>
void check_inputs_size(const Ctx& c, const Items& inputs, const std::string& field) {
  std::int64_t total = 0;
  for (auto& [name, v] : inputs.items()) {
    const toml::table* t = v->as_table();
    const toml::node* sn = t ? t->get("shape") : nullptr;
    if (!sn) continue;
    const std::int64_t n = numel(shape_of(c, *sn, field + "." + std::string(name) + ".shape"));
    if (n > c.max_elements - total)
      c.fail(sn, field + "." + std::string(name) + ".shape",
             fmt::format("the case's inputs would hold more than {} elements together (the limit of one tensor; ~{:.1f} GiB "
                         "as f64 before the reference's working copies): split the case",
                         c.max_elements == kMaxCaseElements ? std::string("2^28") : std::to_string(c.max_elements),
                         static_cast<double>(total + n) * 8 / (1024.0 * 1024 * 1024)));
    total += n;
  }
}

Shape shape_of(const Ctx& c, const toml::node& n, const std::string& field) {
  const toml::array* a = n.as_array();
  if (!a) c.fail(&n, field, "expected an array of positive integers");
  Shape s;
  for (auto& e : *a) {
    const std::int64_t d = int_of(c, e, field);
    if (d <= 0) c.fail(&e, field, fmt::format("dimension {} is not positive", d));
    s.push_back(d);
  }
  check_size(c, &n, field, s);
  return s;
}

/// Flattens a (possibly nested) array of numbers row-major and infers its shape.
void flatten(const Ctx& c, const toml::node& n, const std::string& field, std::size_t depth,
             std::vector<double>& out, Shape& shape) {
  const toml::array* a = n.as_array();
  if (!a) {
    if (depth != shape.size()) c.fail(&n, field, "ragged nested array");
    out.push_back(number(c, n, field));
    return;
  }
  if (depth == shape.size()) {
    if (!out.empty() && depth > 0) c.fail(&n, field, "ragged nested array");
    shape.push_back(static_cast<std::int64_t>(a->size()));
  } else if (shape[depth] != static_cast<std::int64_t>(a->size())) {
    c.fail(&n, field, fmt::format("ragged nested array: {} elements where {} expected", a->size(), shape[depth]));
  }
  for (auto& e : *a) flatten(c, e, field, depth + 1, out, shape);
}

std::vector<double> values_of(const Ctx& c, const toml::node& n, const std::string& field, Shape* inferred = nullptr) {
  if (!n.as_array()) c.fail(&n, field, "expected an array of numbers");
  std::vector<double> v;
  Shape s;
  flatten(c, n, field, 0, v, s);
  if (inferred) *inferred = s;
  return v;
}

DType dtype_of(const Ctx& c, const toml::node& n, const std::string& field) {
  const std::string s = string_of(c, n, field);
  if (auto t = parse_dtype(s)) return *t;
  c.fail(&n, field, fmt::format("unknown dtype '{}' ({})", s, dtype_choices()));
}

/// Reads one tensor: { shape, values | generator..., dtype }.
Tensor tensor_of(const Ctx& c, const toml::node& n, const std::string& field, DType default_dtype, std::string& seeds) {
  const toml::table* t = n.as_table();
  if (!t) c.fail(&n, field, "expected a table with shape and values or generator");
  check_keys(c, *t, field, {"shape", "values", "dtype", "generator", "mean", "std", "low", "high", "value",
                            "start", "stop", "step", "seed"});
  {  // Each form takes only its own keys: a key the generator ignores is a mistake in the file.
    static const std::map<std::string, std::set<std::string>> kAllowed = {
        {"values", {"shape", "values", "dtype"}},
        {"normal", {"shape", "dtype", "generator", "mean", "std", "seed"}},
        {"uniform", {"shape", "dtype", "generator", "low", "high", "seed"}},
        {"constant", {"shape", "dtype", "generator", "value"}},
        {"linspace", {"shape", "dtype", "generator", "start", "stop"}},
        {"arange", {"shape", "dtype", "generator", "start", "step"}}};
    std::string form = "values";
    if (auto g = t->get("generator"); g && g->as_string()) form = g->as_string()->get();
    if (auto it = kAllowed.find(form); it != kAllowed.end())
      for (auto& [k, v] : *t)
        if (!it->second.count(std::string(k.str())))
          c.fail(&v, field + "." + std::string(k.str()),
                 fmt::format("'{}' does not apply to {}", k.str(), form == "values" ? "literal values" : "generator '" + form + "'"));
    for (const char* k : {"mean", "std", "low", "high", "value", "start", "stop", "step"})
      if (auto e = t->get(k); e && !std::isfinite(number(c, *e, field + "." + k)))
        c.fail(e, field + "." + k, "must be finite (write nan/inf as literal values)");
  }
  const DType dt = t->contains("dtype") ? dtype_of(c, *t->get("dtype"), field + ".dtype") : default_dtype;
  std::optional<Shape> shape;
  if (auto s = t->get("shape")) shape = shape_of(c, *s, field + ".shape");
  std::vector<double> v;
  const bool has_values = t->contains("values"), has_gen = t->contains("generator");
  if (has_values == has_gen) c.fail(&n, field, "give exactly one of 'values' and 'generator'");
  auto num = [&](const char* k, double def) {
    const toml::node* e = t->get(k);
    return e ? number(c, *e, field + "." + k) : def;
  };
  if (has_values) {
    Shape inferred;
    v = values_of(c, *t->get("values"), field + ".values", &inferred);
    if (v.empty()) c.fail(t->get("values"), field + ".values", "no values");
    if (!shape) {
      shape = inferred;
      check_size(c, t->get("values"), field + ".values", *shape);
    } else if (inferred.size() > 1 && inferred != *shape) {
      c.fail(t->get("values"), field + ".values",
             fmt::format("nested values of shape {} for shape {}", shape_str(inferred), shape_str(*shape)));
    }
    if (numel(*shape) != static_cast<std::int64_t>(v.size()))
      c.fail(t->get("values"), field + ".values",
             fmt::format("{} values for shape {} ({} elements)", v.size(), shape_str(*shape), numel(*shape)));
  } else {
    if (!shape) c.fail(&n, field + ".shape", "a generator needs a shape");
    const std::string g = string_of(c, *t->get("generator"), field + ".generator");
    const std::int64_t cnt = numel(*shape);
    std::set<std::string_view> used;
    auto seed = [&] {
      const toml::node* e = t->get("seed");
      if (!e) c.fail(&n, field + ".seed", fmt::format("generator '{}' needs a seed", g));
      const std::int64_t s = int_of(c, *e, field + ".seed");
      if (s < 0) c.fail(e, field + ".seed", "seed must be >= 0");
      return static_cast<std::uint64_t>(s);
    };
    if (g == "normal") {
      const double sd = num("std", 1);
      if (!(sd >= 0)) c.fail(t->get("std"), field + ".std", "std must be >= 0");
      const auto sdv = seed();
      v = generate_normal(cnt, num("mean", 0), sd, sdv);
      seeds += fmt::format("{}: normal(mean={}, std={}, seed={}) ", field, num("mean", 0), sd, sdv);
    } else if (g == "uniform") {
      const auto sdv = seed();
      v = generate_uniform(cnt, num("low", 0), num("high", 1), sdv);
      seeds += fmt::format("{}: uniform(low={}, high={}, seed={}) ", field, num("low", 0), num("high", 1), sdv);
    } else if (g == "constant") {
      if (!t->contains("value")) c.fail(&n, field + ".value", "generator 'constant' needs a value");
      v.assign(static_cast<std::size_t>(cnt), num("value", 0));
    } else if (g == "linspace") {
      if (!t->contains("start") || !t->contains("stop")) c.fail(&n, field, "generator 'linspace' needs start and stop");
      const double a = num("start", 0), b = num("stop", 0);
      v.resize(static_cast<std::size_t>(cnt));
      for (std::int64_t i = 0; i < cnt; ++i) v[i] = cnt == 1 ? a : a + (b - a) * static_cast<double>(i) / static_cast<double>(cnt - 1);
    } else if (g == "arange") {
      const double a = num("start", 0), st = num("step", 1);
      v.resize(static_cast<std::size_t>(cnt));
      for (std::int64_t i = 0; i < cnt; ++i) v[i] = a + st * static_cast<double>(i);
    } else {
      c.fail(t->get("generator"), field + ".generator",
             fmt::format("unknown generator '{}' (normal | uniform | constant | linspace | arange)", g));
    }
  }
  return Tensor::from_doubles(dt, *shape, v);
}

/// A coordinate prefix: integers >= -1 (-1 = any index).
std::vector<std::int64_t> prefix_of(const Ctx& c, const toml::node& n, const std::string& field) {
  const toml::array* a = n.as_array();
  if (!a) c.fail(&n, field, "expected an array of indices (-1 = any)");
  std::vector<std::int64_t> v;
  for (auto& e : *a) {
    const std::int64_t i = int_of(c, e, field);
    if (i < -1) c.fail(&e, field, fmt::format("index {} (use -1 for any)", i));
    v.push_back(i);
  }
  return v;
}

/// Checks a coordinate prefix against a shape.
void check_prefix(const Ctx& c, const toml::node* n, const std::string& field, const std::vector<std::int64_t>& pre,
                  const Shape& s, const std::string& what) {
  if (pre.size() > s.size()) c.fail(n, field, fmt::format("{} indices for {} of shape {}", pre.size(), what, shape_str(s)));
  for (std::size_t k = 0; k < pre.size(); ++k)
    if (pre[k] >= s[k]) c.fail(n, field, fmt::format("index {} out of range for axis {} of {} {}", pre[k], k, what, shape_str(s)));
}

/// A transform table; `p` (the problem it will apply to) checks `input` and `at`;
/// `pr` non-null: a property, which may also name `observe` and `outputs`.
Transform transform_of(const Ctx& c, const toml::node& n, const std::string& field, const Problem& p, Property* pr = nullptr) {
  const toml::table* t = n.as_table();
  if (!t) c.fail(&n, field, "expected a table like { shift = 10.0 } or { scale = 5.0 }");
  if (pr) check_keys(c, *t, field, {"shift", "scale", "input", "at", "observe", "outputs"});
  else check_keys(c, *t, field, {"shift", "scale", "input", "at"});
  if (!t->contains("shift") && !t->contains("scale")) c.fail(&n, field, "empty transform: give shift and/or scale");
  Transform tr;
  if (auto s = t->get("input")) {
    tr.input = string_of(c, *s, field + ".input");
    if (!p.input(tr.input)) c.fail(s, field + ".input", fmt::format("no input '{}' in this case", tr.input));
  }
  const Tensor& target = p.inputs.at(tr.input.empty() ? std::string(p.op.def().primary_input) : tr.input);
  if (auto s = t->get("at")) {
    tr.at = prefix_of(c, *s, field + ".at");
    check_prefix(c, s, field + ".at", tr.at, target.shape(), "input");
  }
  if (pr) {
    const auto outs = output_shapes(p);
    if (auto s = t->get("outputs")) {
      const toml::array* a = s->as_array();
      if (!a || a->empty()) c.fail(s, field + ".outputs", "expected a non-empty array of output names");
      for (auto& e : *a) {
        const std::string o = string_of(c, e, field + ".outputs");
        if (!outs.count(o)) c.fail(&e, field + ".outputs", fmt::format("{} has no output '{}'", to_string(p.op), o));
        pr->outputs.push_back(o);
      }
    }
    if (auto s = t->get("observe")) {
      pr->observe = prefix_of(c, *s, field + ".observe");
      for (auto& o : pr->outputs.empty() ? std::vector<std::string>{primary_output(p)} : pr->outputs)
        check_prefix(c, s, field + ".observe", pr->observe, outs.at(o), "output " + o);
    }
  }
  if (auto s = t->get("shift")) tr.shift = number(c, *s, field + ".shift");
  if (auto s = t->get("scale")) {
    tr.scale = number(c, *s, field + ".scale");
    if (!(tr.scale > 0) || !std::isfinite(tr.scale)) c.fail(s, field + ".scale", "scale must be finite and > 0");
  }
  if (!std::isfinite(tr.shift)) c.fail(t->get("shift"), field + ".shift", "shift must be finite");
  // shift 0 and scale 1 leave x as it is: an invariance that holds whatever the backend does
  // (it was reported PASSED; false-pass audit), a change that cannot happen.
  if (tr.shift == 0 && tr.scale == 1) c.fail(&n, field, "the identity transform (shift 0, scale 1) checks nothing: give a shift != 0 or a scale != 1");
  // The same when the rounding to the input's dtype absorbs it (shift 1e-30 on [1, 2, 3]).
  if (!tr.moves(p))
    c.fail(&n, field, fmt::format("{} changes no element of {} once rounded to {}: it checks nothing; give a larger shift or scale",
                                  tr.str(), tr.input.empty() ? std::string(p.op.def().primary_input) : tr.input, dtype_name(target.dtype())));
  return tr;
}

/// A case's sub-table (convention, inputs, expect) seen through the same sub-table of
/// [defaults]: the case's keys win, the others come from [defaults]. The nodes are the
/// parsed originals, so every error keeps its line (toml++ copies drop source positions).
struct Layered {
  const toml::table* low = nullptr;   ///< [defaults]' sub-table
  const toml::table* high = nullptr;  ///< the case's
  const toml::node* self = nullptr;   ///< the node to blame for the table as a whole
  const toml::node* get(std::string_view k) const {
    if (high && high->get(k)) return high->get(k);
    return low ? low->get(k) : nullptr;
  }
  bool contains(std::string_view k) const { return get(k) != nullptr; }
  /// Every key with its winning node: [defaults]' keys the case does not set, then the case's.
  std::vector<std::pair<std::string, const toml::node*>> items() const {
    std::vector<std::pair<std::string, const toml::node*>> v;
    if (low)
      for (auto& [k, n] : *low)
        if (!high || !high->get(k.str())) v.emplace_back(std::string(k.str()), &n);
    if (high)
      for (auto& [k, n] : *high) v.emplace_back(std::string(k.str()), &n);
    return v;
  }
};

void check_keys(const Ctx& c, const Layered& t, const std::string& where, std::initializer_list<std::string_view> allowed) {
  if (t.low) check_keys(c, *t.low, where, allowed);
  if (t.high) check_keys(c, *t.high, where, allowed);
}

/// expect.sums_to_zero = "dx" | ["dx", ...] and expect.orthogonal = { a = "dx", b = "x" } |
/// [{...}, ...]: each name an output or an input of x's shape (per-group sums need it).
void structural_of(const Ctx& c, const Layered& et, const std::string& field, const Problem& p, std::vector<Structural>& out) {
  const auto outs = output_shapes(p);
  auto name_of = [&](const toml::node& n, const std::string& fld) {
    const std::string s = string_of(c, n, fld);
    const Shape* shape = outs.count(s) ? &outs.at(s) : p.input(s) ? &p.input(s)->shape() : nullptr;
    if (!shape) c.fail(&n, fld, fmt::format("'{}' is neither an output nor an input of this case", s));
    if (*shape != p.x().shape())
      c.fail(&n, fld, fmt::format("'{}' has shape {}; per-group sums need the shape of x {}", s, shape_str(*shape), shape_str(p.x().shape())));
    return s;
  };
  if (auto v = et.get("sums_to_zero")) {
    const std::string fld = field + ".sums_to_zero";
    std::vector<const toml::node*> items;
    if (const toml::array* a = v->as_array()) for (auto& e : *a) items.push_back(&e);
    else items.push_back(v);
    if (items.empty()) c.fail(v, fld, "expected an output name or an array of names");
    for (auto* e : items) out.push_back({Structural::Kind::sums_to_zero, name_of(*e, fld), "", line_of(e)});
  }
  if (auto v = et.get("orthogonal")) {
    const std::string fld = field + ".orthogonal";
    std::vector<const toml::node*> items;
    if (const toml::array* a = v->as_array()) for (auto& e : *a) items.push_back(&e);
    else items.push_back(v);
    if (items.empty()) c.fail(v, fld, "expected { a = \"dx\", b = \"x\" } or an array of them");
    for (auto* e : items) {
      const toml::table* t = e->as_table();
      if (!t) c.fail(e, fld, "expected { a = \"dx\", b = \"x\" }");
      check_keys(c, *t, fld, {"a", "b"});
      if (!t->get("a") || !t->get("b")) c.fail(e, fld, "orthogonal needs a and b");
      out.push_back({Structural::Kind::orthogonal, name_of(*t->get("a"), fld + ".a"), name_of(*t->get("b"), fld + ".b"), line_of(e)});
    }
  }
}

/// Runs the spec's rules on a parsed problem (spec/op.hpp check) and turns a SpecError into
/// a CaseError at the TOML node that set the field: a convention key, an input, op or out_dtype
/// (else the case's line).
void check_problem(const Ctx& c, const Problem& p, const std::optional<Layered>& conv_t, const std::optional<Layered>& inputs_t,
                   const toml::node* op, const toml::node* out_dtype, int line, const std::string& f) {
  try {
    check(p);
  } catch (const SpecError& e) {
    // Map the spec field back to the line of the TOML node that set it.
    const toml::node* at = nullptr;
    const std::string& sf = e.field;
    if (sf.rfind("convention.", 0) == 0 && conv_t)
      at = conv_t->get(sf.substr(11)) ? conv_t->get(sf.substr(11)) : conv_t->self;
    else if (sf.rfind("inputs.", 0) == 0 && inputs_t)
      at = inputs_t->get(sf.substr(7, sf.find('.', 7) - 7)) ? inputs_t->get(sf.substr(7, sf.find('.', 7) - 7)) : inputs_t->self;
    else if (sf == "op") at = op;
    else if (sf == "out_dtype") at = out_dtype;
    c.fail(at ? line_of(at) : line, f + "." + sf, e.what());
  }
}

/// An explicit gate, expect.gate = { metric = "stab", max = 10 } (the metric by name, max >= 0),
/// with its file:line as the source the report names.
Gate gate_of(const Ctx& c, const toml::node* g, const std::string& f) {
  const toml::table* gt = g->as_table();
  if (!gt) c.fail(g, f + ".expect.gate", "expected { metric = \"stab\", max = 10 }");
  check_keys(c, *gt, f + ".expect.gate", {"metric", "max"});
  if (!gt->get("metric") || !gt->get("max")) c.fail(g, f + ".expect.gate", "gate needs metric and max");
  const std::string ms = string_of(c, *gt->get("metric"), f + ".expect.gate.metric");
  auto m = parse_metric(ms);
  if (!m) c.fail(gt->get("metric"), f + ".expect.gate.metric", fmt::format("unknown metric '{}' (abs | rel | ulp | nmse | stab)", ms));
  Gate gate;
  gate.metric = *m;
  gate.max = number(c, *gt->get("max"), f + ".expect.gate.max");
  // (an infinite limit passes every backend, NaN and inf outputs included: false-pass audit)
  if (!(gate.max >= 0) || !std::isfinite(gate.max)) c.fail(gt->get("max"), f + ".expect.gate.max", "must be a finite number >= 0");
  gate.source = fmt::format("{}:{}", c.file, line_of(g));
  return gate;
}

/// The case's expectations (expect.*): literal values of y/dx and of other outputs, an
/// absolute tolerance, an explicit gate, properties and structural checks, into cs.
void expect_of(const Ctx& c, const Layered& et, const std::string& f, const Problem& p, Case& cs) {
  check_keys(c, et, f + ".expect", {"values", "tolerance_abs", "gate", "invariant_under", "changes_under", "outputs",
                                     "sums_to_zero", "orthogonal"});
  const auto outs = output_shapes(p);
  const std::string primary = primary_output(p);  // "y", or "dx" for a backward case
  if (auto v = et.get("values")) {
    cs.expected = values_of(c, *v, f + ".expect.values");
    cs.expected_line = line_of(v);
    if (static_cast<std::int64_t>(cs.expected->size()) != numel(outs.at(primary)))
      c.fail(v, f + ".expect.values", fmt::format("{} values for an output of {} elements", cs.expected->size(), numel(outs.at(primary))));
  }
  if (auto v = et.get("outputs")) {
    const toml::table* ot = v->as_table();
    if (!ot) c.fail(v, f + ".expect.outputs", "expected a table { <output> = [values...] }");
    for (auto& [k, vals] : *ot) {
      const std::string on(k.str()), of = f + ".expect.outputs." + on;
      if (!outs.count(on) || on == primary)
        c.fail(&vals, of, on == primary ? fmt::format("give {}'s values as expect.values", primary)
                                        : fmt::format("{} has no output '{}'", to_string(p.op), on));
      cs.expected_outputs[on] = values_of(c, vals, of);
      cs.expected_outputs_line[on] = line_of(&vals);
      if (static_cast<std::int64_t>(cs.expected_outputs[on].size()) != numel(outs.at(on)))
        c.fail(&vals, of, fmt::format("{} values for output {} of {} elements", cs.expected_outputs[on].size(), on, numel(outs.at(on))));
    }
  }
  if (auto v = et.get("tolerance_abs")) {
    cs.expected_tolerance_abs = number(c, *v, f + ".expect.tolerance_abs");
    if (!(*cs.expected_tolerance_abs >= 0) || !std::isfinite(*cs.expected_tolerance_abs))
      c.fail(v, f + ".expect.tolerance_abs", "must be a finite number >= 0");
  }
  if (auto g = et.get("gate")) cs.gate = gate_of(c, g, f);
  for (auto kind : {Property::Kind::invariant_under, Property::Kind::changes_under}) {
    const char* key = kind == Property::Kind::invariant_under ? "invariant_under" : "changes_under";
    if (auto a = et.get(key)) {
      const toml::array* arr = a->as_array();
      if (!arr) c.fail(a, f + ".expect." + key, "expected an array of transforms like [{ shift = 10.0 }]");
      for (auto& e : *arr) {
        Property pr;
        pr.kind = kind;
        pr.line = line_of(&e);
        pr.transform = transform_of(c, e, f + ".expect." + key, p, &pr);
        // The transformed problem must be valid too, here with its line: found at run time,
        // it ended the whole run with exit 2 and no file:line (issue 19).
        try {
          check(pr.transform.apply(p));
        } catch (const SpecError& err) {
          c.fail(&e, f + ".expect." + key, fmt::format("{} makes the problem invalid: {}: {}", pr.transform.str(), err.field, err.what()));
        }
        cs.properties.push_back(std::move(pr));
      }
    }
  }
  structural_of(c, et, f + ".expect", p, cs.structural);
}

/// Outputs recorded from other sources (recorded.<source>.<output>), each checked against
/// the output's shape and dtype, into cs.recorded.
void recorded_of(const Ctx& c, const toml::node* n, const std::string& f, const Problem& p, Case& cs) {
  const toml::table* rt = n->as_table();
  if (!rt) c.fail(n, f + ".recorded", "expected a table of sources");
  for (auto& [src, outs] : *rt) {
    const std::string sf = f + ".recorded." + std::string(src.str());
    const toml::table* ot = outs.as_table();
    if (!ot) c.fail(&outs, sf, "expected a table of outputs");
    if (std::string_view(src.str()).find_first_of(": \t/") != std::string_view::npos || src.str().empty())
      c.fail(&outs, sf, fmt::format("'{}' is not a recorded source's name (no ':', '/' or blanks)", src.str()));
    if (!ot->contains("y")) c.fail(&outs, sf, "a recorded source needs at least output y");
    const auto shapes = output_shapes(p);
    Outputs o;
    for (auto& [on, ov] : *ot) {
      std::string dummy;
      const std::string osf = sf + "." + std::string(on.str());
      if (!shapes.count(std::string(on.str()))) c.fail(&ov, osf, fmt::format("{} has no output '{}'", to_string(p.op), on.str()));
      const DType odt = output_dtype(p, std::string(on.str()));
      Tensor y = tensor_of(c, ov, osf, odt, dummy);
      if (y.dtype() != odt)
        c.fail(&ov, osf, fmt::format("dtype {} differs from the output's dtype {}", dtype_name(y.dtype()), dtype_name(odt)));
      const Shape& want = shapes.at(std::string(on.str()));
      if (y.shape() != want)
        c.fail(&ov, osf, fmt::format("shape {} differs from the output's {}", shape_str(y.shape()), shape_str(want)));
      o[std::string(on.str())] = std::move(y);
    }
    cs.recorded[std::string(src.str())] = std::move(o);
  }
}

Case case_of(const Ctx& c, const toml::table& defaults, const toml::table& raw, const std::vector<Case>& cases,
             const std::map<std::string, std::size_t>& earlier) {
  const int line = static_cast<int>(raw.source().begin.line);
  check_keys(c, raw, "case", {"name", "layer", "op", "dtype", "out_dtype", "layout", "note", "base", "transform", "convention",
                              "inputs", "expect", "recorded"});
  // Lines: fields from the case itself point at the case; defaults point at [defaults].
  // A derived case (base = ...) starts from its base: only its own keys change it, and
  // [defaults] do not apply again.
  const bool derived = raw.contains("base");
  auto node = [&](std::string_view k) -> const toml::node* {
    return raw.get(k) ? raw.get(k) : derived ? nullptr : defaults.get(k);
  };
  // Sub-tables merge one level: the case's keys over [defaults]' (Layered).
  auto layered = [&](std::string_view k, const std::string& field) -> std::optional<Layered> {
    const toml::node* lo = derived ? nullptr : defaults.get(k);
    const toml::node* hi = raw.get(k);
    if (!lo && !hi) return std::nullopt;
    if (lo && !lo->as_table()) c.fail(lo, "defaults." + std::string(k), "expected a table");
    if (hi && !hi->as_table()) c.fail(hi, field, "expected a table");
    return Layered{lo ? lo->as_table() : nullptr, hi ? hi->as_table() : nullptr, hi ? hi : lo};
  };
  Case cs;
  cs.file = c.file;
  cs.line = line;
  if (!raw.get("name")) c.fail(line, "case.name", "every [[case]] needs a name");
  cs.name = string_of(c, *raw.get("name"), "case.name");
  // Names become folder names (--dump-failures) and shell words (rerun lines).
  if (cs.name.empty() || cs.name.size() > 200 || cs.name[0] == '.' || cs.name[0] == '-' ||
      cs.name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+=-") != std::string::npos)
    c.fail(raw.get("name"), "case.name",
           fmt::format("'{}' is not a valid name (letters, digits and _ . + = -, not starting with . or -)", cs.name));
  if (earlier.count(cs.name)) c.fail(raw.get("name"), "case.name", fmt::format("duplicate case name '{}'", cs.name));
  const std::string f = "case." + cs.name;
  if (auto n = node("note")) cs.note = string_of(c, *n, f + ".note");

  const Case* base = nullptr;
  if (auto n = node("base")) {
    const std::string b = string_of(c, *n, f + ".base");
    auto it = earlier.find(b);
    if (it == earlier.end()) c.fail(n, f + ".base", fmt::format("base case '{}' is not defined earlier in this file", b));
    base = &cases[it->second];
  }
  Problem& p = cs.problem;
  if (base) { p = base->problem; cs.seeds = base->seeds; }
  if (auto n = node("op")) {
    const std::string s = string_of(c, *n, f + ".op");
    auto op = ops::find(s);
    if (!op) c.fail(n, f + ".op", fmt::format("unknown op '{}' ({})", s, ops::choices()));
    p.op = *op;
  } else if (!base) {
    c.fail(line, f + ".op", "missing op");
  }
  DType dt = base ? p.x().dtype() : DType::f32;
  if (auto n = node("dtype")) dt = dtype_of(c, *n, f + ".dtype");
  else if (!base) c.fail(line, f + ".dtype", fmt::format("missing dtype ({})", dtype_choices()));
  p.out_dtype = base ? p.out_dtype : dt;
  if (node("dtype")) p.out_dtype = dt;
  if (auto n = node("out_dtype")) p.out_dtype = dtype_of(c, *n, f + ".out_dtype");
  if (auto n = node("layout")) {
    const std::string s = string_of(c, *n, f + ".layout");
    const auto l = parse_memory_layout(s);
    if (!l) c.fail(n, f + ".layout", fmt::format("unknown layout '{}' ({})", s, choices_memory_layout()));
    p.layout = *l;
  }
  if (!base) p.conv = default_convention(p.op);
  if (!base) p.conv.acc_dtype = dt == DType::f64 ? DType::f64 : DType::f32;
  // A derived case keeps its base's normalized_shape unless it brings a new primary input.
  const std::string px(p.op.def().primary_input);
  const bool new_x = base && raw.get("inputs") && raw.get("inputs")->as_table() && raw.get("inputs")->as_table()->contains(px);
  bool has_ns = base != nullptr && !new_x;
  // convention = "pytorch.LayerNorm" (in the case or in [defaults]) is convention = { preset =
  // "pytorch.LayerNorm" }: the preset's fields first (ops/presets.cpp), then every other key of
  // the case's and [defaults]' convention tables (the case's win). The case's preset wins over
  // [defaults]'.
  const toml::node* conv_lo = derived ? nullptr : defaults.get("convention");
  const toml::node* conv_hi = raw.get("convention");
  auto conv_table = [&](const toml::node* n, const std::string& fld) -> const toml::table* {
    if (!n || n->as_string()) return nullptr;
    if (!n->as_table()) c.fail(n, fld, "expected a table or a preset name (normcheck presets)");
    return n->as_table();
  };
  const toml::table* conv_lo_t = conv_table(conv_lo, "defaults.convention");
  const toml::table* conv_hi_t = conv_table(conv_hi, f + ".convention");
  // A case naming its own preset drops the keys of a [defaults] preset: they were overrides of
  // that other preset (keys of a [defaults].convention without a preset still apply to all).
  const bool case_preset = (conv_hi && conv_hi->as_string()) || (conv_hi_t && conv_hi_t->get("preset"));
  const bool defaults_preset = (conv_lo && conv_lo->as_string()) || (conv_lo_t && conv_lo_t->get("preset"));
  if (case_preset && defaults_preset) conv_lo_t = nullptr;
  std::optional<Layered> conv_t;
  if (conv_lo_t || conv_hi_t) conv_t = Layered{conv_lo_t, conv_hi_t, conv_hi ? conv_hi : conv_lo};
  const toml::node* pn = nullptr;
  std::string fld;
  if (conv_hi && conv_hi->as_string()) pn = conv_hi, fld = f + ".convention";
  else if (conv_hi_t && conv_hi_t->get("preset")) pn = conv_hi_t->get("preset"), fld = f + ".convention.preset";
  else if (conv_lo && conv_lo->as_string()) pn = conv_lo, fld = "defaults.convention";
  else if (conv_lo_t && conv_lo_t->get("preset")) pn = conv_lo_t->get("preset"), fld = "defaults.convention.preset";
  if (pn) {
    const std::string name = string_of(c, *pn, fld);
    const Preset* preset = find_preset(name);
    if (!preset) c.fail(pn, fld, unknown_preset_message(name));
    if (preset->op != p.op)
      c.fail(pn, fld, fmt::format("preset {} is a convention of {}; this case's op is {}", name, to_string(preset->op), to_string(p.op)));
    try {
      apply_preset(*preset, dt, p.conv);
    } catch (const std::exception& e) {
      c.fail(pn, fld, e.what());
    }
    cs.preset = name;
  } else if (base) {
    cs.preset = base->preset;
  }
  if (conv_t) {
    auto items = conv_t->items();
    std::erase_if(items, [](const auto& kv) { return kv.first == "preset"; });
    read_convention(detail::TomlSource(c, std::move(items), conv_t->self, f + ".convention"), p.op, p.conv);
    has_ns = has_ns || conv_t->contains("normalized_shape");
  }
  const auto inputs_t = layered("inputs", f + ".inputs");
  if (inputs_t) {
    check_inputs_size(c, *inputs_t, f + ".inputs");
    for (auto& [name, v] : inputs_t->items()) p.inputs[name] = tensor_of(c, *v, f + ".inputs." + name, dt, cs.seeds);
  } else if (!base) {
    c.fail(line, f + ".inputs", "missing inputs (at least inputs.x)");
  }
  if (!p.input(px)) c.fail(inputs_t ? inputs_t->self : nullptr, f + ".inputs." + px, "missing input " + px);
  if (!has_ns) p.conv.normalized_shape = Shape{p.x().shape().back()};
  if (auto n = node("transform")) {
    if (!base) c.fail(n, f + ".transform", "transform needs a base case");
    p = transform_of(c, *n, f + ".transform", p).apply(p);
  }
  // A derived case reports under its base's layer, unless it changed the op.
  cs.layer = base && base->problem.op == p.op ? base->layer : std::string(to_string(p.op));
  if (auto n = node("layer")) cs.layer = string_of(c, *n, f + ".layer");
  // Backward cases report beside the forward ones: "<layer>/backward".
  if (p.conv.direction == Direction::backward && !cs.layer.ends_with("/backward")) cs.layer += "/backward";
  check_problem(c, p, conv_t, inputs_t, node("op"), node("out_dtype") ? node("out_dtype") : node("dtype"), line, f);

  if (const auto expect_t = layered("expect", f + ".expect")) expect_of(c, *expect_t, f, p, cs);
  if (auto n = node("recorded")) recorded_of(c, n, f, p, cs);
  return cs;
}

}  // namespace

namespace {

std::vector<Case> cases_of(const Ctx& c, const toml::table& root) {
  check_keys(c, root, "", {"defaults", "case"});
  static const toml::table kNoDefaults;
  const toml::table* defaults = &kNoDefaults;  // the parsed original: its nodes keep their lines
  if (auto d = root.get("defaults")) {
    if (!d->as_table()) c.fail(d, "defaults", "expected a table");
    defaults = d->as_table();
    check_keys(c, *defaults, "defaults", {"layer", "op", "dtype", "out_dtype", "layout", "note", "convention", "inputs", "expect"});
  }
  const toml::node* cn = root.get("case");
  if (!cn) c.fail(1, "case", "no [[case]] in file");
  const toml::array* arr = cn->as_array();
  if (!arr) c.fail(cn, "case", "expected [[case]] tables");
  std::vector<Case> out;
  std::map<std::string, std::size_t> by_name;  // index into out (not a copy: inputs can be GBs)
  for (auto& e : *arr) {
    const toml::table* t = e.as_table();
    if (!t) c.fail(&e, "case", "expected a table");
    Case cs = case_of(c, *defaults, *t, out, by_name);
    by_name.emplace(cs.name, out.size());
    out.push_back(std::move(cs));
  }
  return out;
}

}  // namespace

std::vector<Case> parse_case_file(const std::string& path) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw CaseError(path, static_cast<int>(e.source().begin.line), "toml", std::string(e.description()));
  }
  return cases_of(Ctx{path}, root);
}

std::vector<Case> parse_case_text(std::string_view text, const std::string& path, std::int64_t max_elements) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw CaseError(path, static_cast<int>(e.source().begin.line), "toml", std::string(e.description()));
  }
  Ctx c{path};
  c.max_elements = std::clamp<std::int64_t>(max_elements, 1, kMaxCaseElements);
  return cases_of(c, root);
}

std::vector<std::string> find_case_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    const auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) throw CaseError(p, 0, "path", ec ? ec.message() : "no such file or directory");
    if (fs::is_directory(st)) {
      std::vector<std::string> found;
      // Symlinked folders are followed (stow, Nix and Bazel runfiles install trees of links:
      // skipping them had dropped a linked cases/layer_norm without a word); each real folder
      // is entered once, so a link loop ends.
      std::set<fs::path> entered{fs::weakly_canonical(p, ec)};
      fs::recursive_directory_iterator it(p, fs::directory_options::follow_directory_symlink, ec), end;
      for (; !ec && it != end; it.increment(ec)) {
        std::error_code e2;
        if (it->is_directory(e2) && !entered.insert(fs::canonical(it->path(), e2)).second) {
          it.disable_recursion_pending();
          continue;
        }
        // *.trace.toml are model files for `normcheck trace`, not case files.
        if (it->is_regular_file(e2) && it->path().extension() == ".toml" && !it->path().stem().string().ends_with(".trace"))
          found.push_back(it->path().string());
      }
      if (ec) throw CaseError(p, 0, "path", fmt::format("cannot list the folder: {}", ec.message()));
      // A folder named must hold case files (run, golden, zoo): an empty one, or one of trace
      // files only, beside others or the matrix, was checked as if it held cases (exit 0).
      if (found.empty()) throw CaseError(p, 0, "path", "no case files (*.toml) in this folder");
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(st)) {
      files.push_back(p);
    } else {
      throw CaseError(p, 0, "path", "not a regular file or folder");
    }
  }
  // The same file named twice (directly and through its folder) runs once.
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (auto& f : files) {
    std::error_code ec;
    const auto canon = fs::weakly_canonical(f, ec).string();
    if (seen.insert(ec ? f : canon).second) unique.push_back(f);
  }
  return unique;
}

}  // namespace normcheck
