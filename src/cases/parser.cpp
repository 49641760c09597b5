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

namespace normcheck {

CaseError::CaseError(std::string file_, int line_, std::string field_, const std::string& msg)
    : std::runtime_error(fmt::format("{}:{}: {}: {}", file_, line_, field_, msg)),
      file(std::move(file_)), line(line_), field(std::move(field_)) {}

std::string Transform::str() const {
  std::string s;
  if (scale != 1) s += fmt::format("scale({})", scale);
  if (shift != 0) s += fmt::format("{}shift({})", s.empty() ? "" : "+", shift);
  return s.empty() ? "identity" : s;
}

Problem Transform::apply(const Problem& p) const {
  Problem q = p;
  Tensor& x = q.inputs.at("x");
  for (std::int64_t i = 0; i < x.size(); ++i) x.set(i, x.get(i) * scale + shift);
  return q;
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

struct Ctx {
  std::string file;
  [[noreturn]] void fail(const toml::node* n, const std::string& field, const std::string& msg) const {
    throw CaseError(file, n ? static_cast<int>(n->source().begin.line) : 0, field, msg);
  }
  [[noreturn]] void fail(int line, const std::string& field, const std::string& msg) const {
    throw CaseError(file, line, field, msg);
  }
};

int line_of(const toml::node* n) { return n ? static_cast<int>(n->source().begin.line) : 0; }

void check_keys(const Ctx& c, const toml::table& t, const std::string& where, std::initializer_list<std::string_view> allowed) {
  for (auto& [k, v] : t) {
    if (std::find(allowed.begin(), allowed.end(), k.str()) == allowed.end())
      c.fail(&v, where.empty() ? std::string(k.str()) : where + "." + std::string(k.str()),
             fmt::format("unknown key '{}' (allowed: {})", k.str(), fmt::join(allowed, ", ")));
  }
}

/// A number: TOML integer or float, or a string holding a C99 number ("0x1p-149",
/// "nan", "-inf", "1e-40").
double number(const Ctx& c, const toml::node& n, const std::string& field) {
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

std::string string_of(const Ctx& c, const toml::node& n, const std::string& field) {
  if (auto v = n.as_string()) return v->get();
  c.fail(&n, field, "expected a string");
}

std::int64_t int_of(const Ctx& c, const toml::node& n, const std::string& field) {
  if (auto v = n.as_integer()) return v->get();
  c.fail(&n, field, "expected an integer");
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
  c.fail(&n, field, fmt::format("unknown dtype '{}' (f64 | f32 | f16 | bf16)", s));
}

/// Reads one tensor: { shape, values | generator..., dtype }.
Tensor tensor_of(const Ctx& c, const toml::node& n, const std::string& field, DType default_dtype, std::string& seeds) {
  const toml::table* t = n.as_table();
  if (!t) c.fail(&n, field, "expected a table with shape and values or generator");
  check_keys(c, *t, field, {"shape", "values", "dtype", "generator", "mean", "std", "low", "high", "value",
                            "start", "stop", "step", "seed"});
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
    if (!shape) shape = inferred;
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

Transform transform_of(const Ctx& c, const toml::node& n, const std::string& field) {
  const toml::table* t = n.as_table();
  if (!t) c.fail(&n, field, "expected a table like { shift = 10.0 } or { scale = 5.0 }");
  check_keys(c, *t, field, {"shift", "scale"});
  if (t->empty()) c.fail(&n, field, "empty transform: give shift and/or scale");
  Transform tr;
  if (auto s = t->get("shift")) tr.shift = number(c, *s, field + ".shift");
  if (auto s = t->get("scale")) {
    tr.scale = number(c, *s, field + ".scale");
    if (!(tr.scale > 0) || !std::isfinite(tr.scale)) c.fail(s, field + ".scale", "scale must be finite and > 0");
  }
  if (!std::isfinite(tr.shift)) c.fail(t->get("shift"), field + ".shift", "shift must be finite");
  return tr;
}

void convention_of(const Ctx& c, const toml::table& t, const std::string& field, Convention& conv, bool& has_ns) {
  check_keys(c, t, field, {"eps", "eps_placement", "variance", "affine", "normalized_shape", "acc_dtype"});
  if (auto e = t.get("eps")) {
    conv.eps = number(c, *e, field + ".eps");
    if (!(conv.eps >= 0) || !std::isfinite(conv.eps)) c.fail(e, field + ".eps", fmt::format("eps must be finite and >= 0, got {}", conv.eps));
  }
  if (auto e = t.get("eps_placement")) {
    const auto s = string_of(c, *e, field + ".eps_placement");
    auto v = parse_eps_placement(s);
    if (!v) c.fail(e, field + ".eps_placement", fmt::format("unknown '{}' ({})", s, choices_eps_placement()));
    conv.eps_placement = *v;
  }
  if (auto e = t.get("variance")) {
    const auto s = string_of(c, *e, field + ".variance");
    auto v = parse_variance(s);
    if (!v) c.fail(e, field + ".variance", fmt::format("unknown '{}' ({})", s, choices_variance()));
    conv.variance = *v;
  }
  if (auto e = t.get("affine")) {
    const auto s = string_of(c, *e, field + ".affine");
    auto v = parse_affine(s);
    if (!v) c.fail(e, field + ".affine", fmt::format("unknown '{}' ({})", s, choices_affine()));
    conv.affine = *v;
  }
  if (auto e = t.get("normalized_shape")) { conv.normalized_shape = shape_of(c, *e, field + ".normalized_shape"); has_ns = true; }
  if (auto e = t.get("acc_dtype")) conv.acc_dtype = dtype_of(c, *e, field + ".acc_dtype");
}

/// Merges [defaults] under a case table (case keys win; sub-tables merge one level).
toml::table merged(const toml::table& defaults, const toml::table& cs) {
  toml::table m = defaults;
  for (auto& [k, v] : cs) {
    if (v.is_table() && m.contains(k) && m.get(k)->is_table()) {
      toml::table sub = *m.get(k)->as_table();
      for (auto& [k2, v2] : *v.as_table()) sub.insert_or_assign(k2, v2);
      m.insert_or_assign(k, sub);
    } else {
      m.insert_or_assign(k, v);
    }
  }
  return m;
}

Case case_of(const Ctx& c, const toml::table& defaults, const toml::table& raw, const std::map<std::string, Case>& earlier) {
  const int line = static_cast<int>(raw.source().begin.line);
  check_keys(c, raw, "case", {"name", "layer", "op", "dtype", "out_dtype", "note", "base", "transform", "convention",
                              "inputs", "expect", "recorded"});
  const toml::table t = merged(defaults, raw);
  // Lines: fields from the case itself point at the case; defaults point at [defaults].
  // A derived case (base = ...) starts from its base: only its own keys change it, and
  // [defaults] do not apply again.
  const bool derived = raw.contains("base");
  auto node = [&](std::string_view k) -> const toml::node* { return raw.get(k) ? raw.get(k) : derived ? nullptr : t.get(k); };
  Case cs;
  cs.file = c.file;
  cs.line = line;
  if (!raw.get("name")) c.fail(line, "case.name", "every [[case]] needs a name");
  cs.name = string_of(c, *raw.get("name"), "case.name");
  if (cs.name.empty() || cs.name.find_first_of(" \t\"'") != std::string::npos)
    c.fail(raw.get("name"), "case.name", fmt::format("'{}' is not a valid name (no spaces or quotes)", cs.name));
  if (earlier.count(cs.name)) c.fail(raw.get("name"), "case.name", fmt::format("duplicate case name '{}'", cs.name));
  const std::string f = "case." + cs.name;
  if (auto n = node("note")) cs.note = string_of(c, *n, f + ".note");

  const Case* base = nullptr;
  if (auto n = node("base")) {
    const std::string b = string_of(c, *n, f + ".base");
    auto it = earlier.find(b);
    if (it == earlier.end()) c.fail(n, f + ".base", fmt::format("base case '{}' is not defined earlier in this file", b));
    base = &it->second;
  }
  Problem& p = cs.problem;
  if (base) { p = base->problem; cs.seeds = base->seeds; }
  if (auto n = node("op")) {
    const std::string s = string_of(c, *n, f + ".op");
    auto op = parse_op(s);
    if (!op) c.fail(n, f + ".op", fmt::format("unknown op '{}' ({})", s, choices_op()));
    p.op = *op;
  } else if (!base) {
    c.fail(line, f + ".op", "missing op");
  }
  DType dt = base ? p.x().dtype() : DType::f32;
  if (auto n = node("dtype")) dt = dtype_of(c, *n, f + ".dtype");
  else if (!base) c.fail(line, f + ".dtype", "missing dtype (f64 | f32 | f16 | bf16)");
  p.out_dtype = base ? p.out_dtype : dt;
  if (node("dtype")) p.out_dtype = dt;
  if (auto n = node("out_dtype")) p.out_dtype = dtype_of(c, *n, f + ".out_dtype");
  if (!base) p.conv.acc_dtype = dt == DType::f64 ? DType::f64 : DType::f32;
  bool has_ns = base != nullptr;
  if (auto n = node("convention")) {
    if (!n->as_table()) c.fail(n, f + ".convention", "expected a table");
    convention_of(c, *n->as_table(), f + ".convention", p.conv, has_ns);
  }
  if (auto n = node("inputs")) {
    const toml::table* it = n->as_table();
    if (!it) c.fail(n, f + ".inputs", "expected a table of tensors");
    for (auto& [k, v] : *it) {
      const std::string name(k.str());
      p.inputs[name] = tensor_of(c, v, f + ".inputs." + name, dt, cs.seeds);
    }
  } else if (!base) {
    c.fail(line, f + ".inputs", "missing inputs (at least inputs.x)");
  }
  if (!p.input("x")) c.fail(node("inputs") ? node("inputs") : nullptr, f + ".inputs.x", "missing input x");
  if (!has_ns) p.conv.normalized_shape = Shape{p.x().shape().back()};
  if (auto n = node("transform")) {
    if (!base) c.fail(n, f + ".transform", "transform needs a base case");
    p = transform_of(c, *n, f + ".transform").apply(p);
  }
  cs.layer = base ? base->layer : std::string(to_string(p.op));
  if (auto n = node("layer")) cs.layer = string_of(c, *n, f + ".layer");
  try {
    validate(p);
  } catch (const SpecError& e) {
    // Map the spec field back to the line of the TOML node that set it.
    const toml::node* at = nullptr;
    const std::string& sf = e.field;
    if (sf.rfind("convention.", 0) == 0 && node("convention"))
      at = node("convention")->as_table()->get(sf.substr(11)) ? node("convention")->as_table()->get(sf.substr(11)) : node("convention");
    else if (sf.rfind("inputs.", 0) == 0 && node("inputs"))
      at = node("inputs")->as_table()->get(sf.substr(7, sf.find('.', 7) - 7)) ? node("inputs")->as_table()->get(sf.substr(7, sf.find('.', 7) - 7)) : node("inputs");
    else if (sf == "op") at = node("op");
    c.fail(at ? line_of(at) : line, f + "." + sf, e.what());
  }

  cs.gate = default_gate(p);
  if (auto n = node("expect")) {
    const toml::table* et = n->as_table();
    if (!et) c.fail(n, f + ".expect", "expected a table");
    check_keys(c, *et, f + ".expect", {"values", "tolerance_abs", "gate", "invariant_under", "changes_under"});
    if (auto v = et->get("values")) {
      cs.expected = values_of(c, *v, f + ".expect.values");
      cs.expected_line = line_of(v);
      if (static_cast<std::int64_t>(cs.expected->size()) != p.x().size())
        c.fail(v, f + ".expect.values", fmt::format("{} values for an output of {} elements", cs.expected->size(), p.x().size()));
    }
    if (auto v = et->get("tolerance_abs")) {
      cs.expected_tolerance_abs = number(c, *v, f + ".expect.tolerance_abs");
      if (!(*cs.expected_tolerance_abs >= 0)) c.fail(v, f + ".expect.tolerance_abs", "must be >= 0");
    }
    if (auto g = et->get("gate")) {
      const toml::table* gt = g->as_table();
      if (!gt) c.fail(g, f + ".expect.gate", "expected { metric = \"stab\", max = 10 }");
      check_keys(c, *gt, f + ".expect.gate", {"metric", "max"});
      if (!gt->get("metric") || !gt->get("max")) c.fail(g, f + ".expect.gate", "gate needs metric and max");
      const std::string ms = string_of(c, *gt->get("metric"), f + ".expect.gate.metric");
      auto m = parse_metric(ms);
      if (!m) c.fail(gt->get("metric"), f + ".expect.gate.metric", fmt::format("unknown metric '{}' (abs | rel | ulp | nmse | stab)", ms));
      cs.gate.metric = *m;
      cs.gate.max = number(c, *gt->get("max"), f + ".expect.gate.max");
      if (!(cs.gate.max >= 0)) c.fail(gt->get("max"), f + ".expect.gate.max", "must be >= 0");
      cs.gate.source = fmt::format("{}:{}", c.file, line_of(g));
    }
    for (auto kind : {Property::Kind::invariant_under, Property::Kind::changes_under}) {
      const char* key = kind == Property::Kind::invariant_under ? "invariant_under" : "changes_under";
      if (auto a = et->get(key)) {
        const toml::array* arr = a->as_array();
        if (!arr) c.fail(a, f + ".expect." + key, "expected an array of transforms like [{ shift = 10.0 }]");
        for (auto& e : *arr)
          cs.properties.push_back({kind, transform_of(c, e, f + ".expect." + key), line_of(&e)});
      }
    }
  }
  if (auto n = node("recorded")) {
    const toml::table* rt = n->as_table();
    if (!rt) c.fail(n, f + ".recorded", "expected a table of sources");
    for (auto& [src, outs] : *rt) {
      const std::string sf = f + ".recorded." + std::string(src.str());
      const toml::table* ot = outs.as_table();
      if (!ot) c.fail(&outs, sf, "expected a table of outputs");
      check_keys(c, *ot, sf, {"y"});
      Outputs o;
      for (auto& [on, ov] : *ot) {
        std::string dummy;
        Tensor y = tensor_of(c, ov, sf + "." + std::string(on.str()), p.out_dtype, dummy);
        if (y.shape() != p.x().shape())
          c.fail(&ov, sf + "." + std::string(on.str()), fmt::format("shape {} differs from x {}", shape_str(y.shape()), shape_str(p.x().shape())));
        o[std::string(on.str())] = std::move(y);
      }
      cs.recorded[std::string(src.str())] = std::move(o);
    }
  }
  return cs;
}

}  // namespace

std::vector<Case> parse_case_file(const std::string& path) {
  Ctx c{path};
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw CaseError(path, static_cast<int>(e.source().begin.line), "toml", std::string(e.description()));
  }
  check_keys(c, root, "", {"defaults", "case"});
  toml::table defaults;
  if (auto d = root.get("defaults")) {
    if (!d->as_table()) c.fail(d, "defaults", "expected a table");
    defaults = *d->as_table();
    check_keys(c, defaults, "defaults", {"layer", "op", "dtype", "out_dtype", "note", "convention", "inputs", "expect"});
  }
  const toml::node* cn = root.get("case");
  if (!cn) c.fail(1, "case", "no [[case]] in file");
  const toml::array* arr = cn->as_array();
  if (!arr) c.fail(cn, "case", "expected [[case]] tables");
  std::vector<Case> out;
  std::map<std::string, Case> by_name;
  for (auto& e : *arr) {
    const toml::table* t = e.as_table();
    if (!t) c.fail(&e, "case", "expected a table");
    Case cs = case_of(c, defaults, *t, by_name);
    by_name.emplace(cs.name, cs);
    out.push_back(std::move(cs));
  }
  return out;
}

std::vector<std::string> find_case_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (auto& e : fs::recursive_directory_iterator(p))
        // *.trace.toml are model files for `normcheck trace`, not case files.
        if (e.is_regular_file() && e.path().extension() == ".toml" && !e.path().stem().string().ends_with(".trace"))
          found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      throw CaseError(p, 0, "path", "no such file or directory");
    }
  }
  return files;
}

}  // namespace normcheck
