#include "compare/compare.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/json_bounded.hpp"
#include "ops/reference.hpp"
#include "ops/registry.hpp"
#include "spec/convention.hpp"

namespace normcheck {

namespace fs = std::filesystem;

std::pair<std::string, std::string> split_layer_name(const std::string& name) {
  const auto dot = name.rfind('.');
  if (dot != std::string::npos && dot > 0) {
    const std::string role = name.substr(dot + 1);
    if (role == "input" || role == "output" || role == "gamma" || role == "beta") return {name.substr(0, dot), role};
  }
  return {name, ""};
}

bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      std::string x = a.substr(i, i2 - i), y = b.substr(j, j2 - j);
      x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
      y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j || (a.size() - i == b.size() - j && a < b);
}

namespace {

int line_of_byte(const std::string& text, std::size_t byte) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(std::min(byte, text.size())), '\n'));
}

LayerMeta read_sidecar(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw DumpError(path, 0, "file", "cannot open");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  nlohmann::json j;
  try {
    j = parse_json_bounded(text, path);
  } catch (const JsonError& e) {  // syntax, nesting, or a number beyond binary64
    throw DumpError(path, line_of_byte(text, e.byte), "json", e.detail);
  }
  if (!j.is_object()) throw DumpError(path, 1, "json", "expected an object");
  LayerMeta m;
  m.file = path;
  // JSON carries no line numbers through nlohmann: point at the key's line by search.
  auto line = [&](const std::string& key) {
    const auto at = text.find("\"" + key + "\"");
    return at == std::string::npos ? 1 : line_of_byte(text, at);
  };
  auto str = [&](const std::string& key) {
    if (!j[key].is_string()) throw DumpError(path, line(key), key, "expected a string");
    return j[key].get<std::string>();
  };
  static const std::set<std::string> allowed{"op", "eps", "eps_placement", "variance", "affine", "normalized_shape", "acc_dtype", "note", "source"};
  for (auto& [k, v] : j.items())
    if (!allowed.count(k)) throw DumpError(path, line(k), k, fmt::format("unknown key (allowed: {})", fmt::join(allowed, ", ")));
  if (!j.contains("op")) throw DumpError(path, 1, "op", "missing (layer_norm | rms_norm)");
  const std::string ops = str("op");
  auto op = parse_op(ops);
  if (!op || (*op != Op::layer_norm && *op != Op::rms_norm)) throw DumpError(path, line("op"), "op", fmt::format("'{}' not compared (layer_norm | rms_norm)", ops));
  m.op = *op;
  if (!j.contains("eps")) throw DumpError(path, 1, "eps", "missing (the value the layer used)");
  // The convention keys, by the one reader (spec/convention.hpp), errors at their lines.
  struct Sidecar final : JsonSource {
    Sidecar(const nlohmann::json& o, const std::string& file, std::function<int(const std::string&)> at)
        : JsonSource(o, file), file_(file), at_(std::move(at)) {}
    [[noreturn]] void fail(std::string_view key, const std::string& msg) const override {
      throw DumpError(file_, at_(std::string(key)), std::string(key), msg);
    }
    std::string file_;
    std::function<int(const std::string&)> at_;
  };
  nlohmann::json conv = j;
  for (const char* k : {"op", "note", "source"}) conv.erase(k);
  read_convention(Sidecar(conv, path, line), m.op, m.conv);
  m.has_affine = conv.contains("affine");
  m.has_acc_dtype = conv.contains("acc_dtype");
  m.has_normalized_shape = conv.contains("normalized_shape");
  return m;
}

}  // namespace

Dump read_dump(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw DumpError(dir, 0, "path", "not a directory");
  Dump d;
  d.label = dir;
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(dir)) if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  auto add = [&](const std::string& name, Tensor t, const std::string& file) {
    if (d.tensors.count(name))
      throw DumpError(file, 0, name, fmt::format("tensor '{}' also comes from {}", name, d.origin[name]));
    d.tensors.emplace(name, std::move(t));
    d.origin[name] = file;
  };
  std::vector<fs::path> sidecars;
  for (auto& p : files) {
    const std::string ext = p.extension().string();
    if (ext == ".npy") add(p.stem().string(), read_npy(p.string()), p.string());
    else if (ext == ".safetensors")
      for (auto& [name, t] : read_safetensors(p.string())) add(name, std::move(t), p.string());
    else if (ext == ".json") sidecars.push_back(p);
  }
  // A layer is a name with a role tensor (<layer>.input, .output, .gamma, .beta). A name
  // "<layer>.<word>" beside such a layer is a misspelt role, and "<layer>.<word>.json" a
  // misspelt sidecar: refused, since either would silently drop the layer's reference gate.
  std::set<std::string> layers;
  for (auto& [name, t] : d.tensors)
    if (auto [layer, role] = split_layer_name(name); !role.empty()) layers.insert(layer);
  for (auto& [name, t] : d.tensors) {
    const auto dot = name.rfind('.');
    if (split_layer_name(name).second.empty() && dot != std::string::npos && layers.count(name.substr(0, dot)))
      throw DumpError(d.origin[name], 0, name,
                      fmt::format("tensor '{}': '{}' is not a role of layer {} (input, output, gamma, beta)", name,
                                  name.substr(dot + 1), name.substr(0, dot)));
  }
  for (auto& p : sidecars) {
    const std::string layer = p.stem().string();
    bool used = false;
    for (auto& [name, t] : d.tensors) used = used || split_layer_name(name).first == layer;
    if (!used) {
      const auto dot = layer.rfind('.');
      if (dot != std::string::npos && layers.count(layer.substr(0, dot)))
        throw DumpError(p.string(), 0, "sidecar",
                        fmt::format("'{}' names no layer; the sidecar of layer {} is {}.json", p.filename().string(),
                                    layer.substr(0, dot), layer.substr(0, dot)));
      continue;  // e.g. a provenance.json: not a sidecar of any layer
    }
    d.meta[layer] = read_sidecar(p.string());
  }
  if (d.tensors.empty()) throw DumpError(dir, 0, "path", "no tensors (*.npy, *.safetensors)");
  return d;
}

std::optional<Problem> layer_problem(const Dump& d, const std::string& layer) {
  auto mi = d.meta.find(layer);
  auto xi = d.tensors.find(layer + ".input");
  if (mi == d.meta.end() || xi == d.tensors.end()) return std::nullopt;
  const LayerMeta& m = mi->second;
  Problem p;
  p.op = m.op;
  p.conv = m.conv;
  p.inputs["x"] = xi->second;
  auto yi = d.tensors.find(layer + ".output");
  p.out_dtype = yi != d.tensors.end() ? yi->second.dtype() : xi->second.dtype();
  if (!m.has_normalized_shape) p.conv.normalized_shape = Shape{xi->second.shape().empty() ? 1 : xi->second.shape().back()};
  if (!m.has_affine)
    p.conv.affine = d.tensors.count(layer + ".gamma") ? (d.tensors.count(layer + ".beta") ? Affine::gamma_beta : Affine::gamma) : Affine::none;
  // An f64 layer accumulates in f64 unless the sidecar says otherwise (the case-file default).
  if (!m.has_acc_dtype && xi->second.dtype() == DType::f64) p.conv.acc_dtype = DType::f64;
  if (auto g = d.tensors.find(layer + ".gamma"); g != d.tensors.end()) p.inputs["gamma"] = g->second;
  if (auto b = d.tensors.find(layer + ".beta"); b != d.tensors.end()) p.inputs["beta"] = b->second;
  try {
    validate(p);
  } catch (const SpecError& e) {
    throw DumpError(m.file, 0, e.field, fmt::format("layer {}: {}", layer, e.what()));
  }
  return p;
}

Dump recompute(const Dump& a, Backend& backend) {
  Dump b = a;
  b.label = backend.name() + "(recomputed)";
  std::set<std::string> layers;
  for (auto& [name, t] : a.tensors) layers.insert(split_layer_name(name).first);
  std::size_t recomputed = 0;
  for (auto& layer : layers) {
    auto p = layer_problem(a, layer);
    if (!p) continue;
    ++recomputed;
    const ValidProblem vp = validate(*p);
    if (auto why = backend.unsupported(vp, {})) throw BackendError(fmt::format("layer {}: {}", layer, *why));
    Outputs o = backend.run(vp, {});
    auto it = o.find("y");
    if (it == o.end() || it->second.shape() != p->x().shape() || it->second.dtype() != p->out_dtype)
      throw BackendError(fmt::format("layer {}: {} returned no output of shape {} and dtype {}", layer, backend.name(),
                                     shape_str(p->x().shape()), dtype_name(p->out_dtype)));
    b.tensors[layer + ".output"] = it->second;
    b.origin[layer + ".output"] = b.label;
  }
  if (recomputed == 0)
    throw std::invalid_argument(fmt::format("{}: no layer has <layer>.input (and its parameters): nothing to recompute", a.label));
  return b;
}

namespace {

void update(Worst& w, double v, std::int64_t i, double got, long double exact) {
  if (w.index < 0 || v > w.value || (std::isnan(v) && !std::isnan(w.value))) {
    w.value = v; w.index = i; w.got = got; w.exact = exact;
  }
}

bool same_values(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  for (std::int64_t i = 0; i < a.size(); ++i) {
    const double x = a.get(i), y = b.get(i);
    if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
  }
  return true;
}

TensorDiff diff(const std::string& name, const Tensor& a, const Tensor& b, double tol) {
  TensorDiff t;
  t.name = name;
  t.role = split_layer_name(name).second;
  t.shape_a = a.shape();
  t.shape_b = b.shape();
  t.dtype_a = a.dtype();
  t.dtype_b = b.dtype();
  if (a.shape() != b.shape()) {
    t.differs = true;
    return t;
  }
  const DType u = unit_roundoff(a.dtype()) >= unit_roundoff(b.dtype()) ? a.dtype() : b.dtype();
  for (std::int64_t i = 0; i < a.size(); ++i) {
    const double x = a.get(i), y = b.get(i);
    double e;
    if (std::isnan(x) || std::isnan(y)) e = std::isnan(x) == std::isnan(y) ? 0 : HUGE_VAL;
    else if (std::isinf(x) || std::isinf(y)) e = x == y ? 0 : HUGE_VAL;
    else e = std::fabs(x - y);
    t.count_different += e != 0;
    update(t.abs, e, i, y, x);
    update(t.rel, e == 0 ? 0 : (x == 0 ? HUGE_VAL : e / std::fabs(x)), i, y, x);
    update(t.ulp, e == 0 ? 0 : e / ulp(u, std::isfinite(x) ? x : 0.0), i, y, x);
  }
  for (Worst* w : {&t.abs, &t.rel, &t.ulp})
    if (w->index >= 0) w->coords = unravel(a.shape(), w->index);
  t.differs = t.ulp.value > tol || (tol == 0 && t.count_different > 0);
  return t;
}

}  // namespace

const TensorDiff* LayerCompare::worst() const {
  const TensorDiff* w = nullptr;
  for (auto& t : tensors)
    if (!w || t.ulp.value > w->ulp.value || (t.differs && !w->differs)) w = &t;
  return w;
}

int CompareResult::exit_code() const {
  for (auto& l : layers) {
    if (l.a_fails() || l.b_fails()) return 1;
    if (l.differs && !l.has_reference) return 1;
  }
  return 0;
}

CompareResult compare_dumps(const Dump& a, const Dump& b, double tol) {
  CompareResult r;
  r.a_label = a.label;
  r.b_label = b.label;
  r.tolerance_ulp = tol;
  std::set<std::string> names;
  for (auto& [n, t] : a.tensors) names.insert(n);
  for (auto& [n, t] : b.tensors) names.insert(n);
  std::map<std::string, std::vector<std::string>> by_layer;
  for (auto& n : names) by_layer[split_layer_name(n).first].push_back(n);
  std::vector<std::string> order;
  for (auto& [l, v] : by_layer) order.push_back(l);
  std::sort(order.begin(), order.end(), natural_less);
  for (auto& layer : order) {
    LayerCompare lc;
    lc.layer = layer;
    for (auto& n : by_layer[layer]) {
      const bool ia = a.tensors.count(n), ib = b.tensors.count(n);
      if (ia && ib) {
        lc.tensors.push_back(diff(n, a.tensors.at(n), b.tensors.at(n), tol));
        lc.differs = lc.differs || lc.tensors.back().differs;
      } else {
        (ia ? lc.only_a : lc.only_b).push_back(n);
        lc.differs = true;  // a tensor missing on one side: the dumps are not the same
      }
    }
    // The exact reference of each side's own input, when A or B describes the layer.
    std::optional<Problem> pa = layer_problem(a, layer), pb = layer_problem(b, layer);
    if (!pa && pb) pa = pb;
    if (!pb && pa) pb = pa;
    const std::string out = layer + ".output";
    if (pa && a.tensors.count(out) && b.tensors.count(out)) {
      lc.has_reference = true;
      lc.gate = default_gate(*pa);
      lc.inputs_match = same_values(pa->x(), pb->x());
      const Tensor& ya = a.tensors.at(out);
      const Tensor& yb = b.tensors.at(out);
      const auto ra = reference::evaluate_exact(*pa).at("y");
      // An output of another shape than its input cannot be measured: it fails the gate (it
      // made the gate "-" and the verdict SAME, exit 0; issue 19).
      auto shape_error = [&](const Tensor& y, const Problem& p) {
        return y.shape() == p.x().shape() ? std::string()
                                          : fmt::format("{} has shape {}, its input {}", out, shape_str(y.shape()), shape_str(p.x().shape()));
      };
      lc.a_shape_error = shape_error(ya, *pa);
      lc.b_shape_error = shape_error(yb, *pb);
      if (ya.shape() == pa->x().shape()) lc.a_exact = measure(ya, ra, ya.dtype(), pa->conv.acc_dtype);
      if (yb.shape() == pb->x().shape())
        lc.b_exact = lc.inputs_match ? measure(yb, ra, yb.dtype(), pb->conv.acc_dtype)
                                     : measure(yb, reference::evaluate_exact(*pb).at("y"), yb.dtype(), pb->conv.acc_dtype);
      if (lc.a_exact && lc.b_exact) {
        const double sa = lc.a_exact->value(lc.gate.metric), sb = lc.b_exact->value(lc.gate.metric);
        lc.closer = sa < sb ? "A" : sb < sa ? "B" : "tie";
      }
    }
    const std::size_t k = r.layers.size();
    if (lc.differs && !r.first_divergence) r.first_divergence = k;
    if (lc.a_fails() && !r.first_fail_a) r.first_fail_a = k;
    if (lc.b_fails() && !r.first_fail_b) r.first_fail_b = k;
    r.layers.push_back(std::move(lc));
  }
  return r;
}

namespace {

std::string num(double v) {
  if (v == 0) return "0";
  return fmt::format("{:.3g}", v);
}

nlohmann::json jnum(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(fmt::format("{}", v)); }

nlohmann::json worst_json(const Worst& w) {
  return {{"value", jnum(w.value)}, {"coords", w.coords}, {"b", jnum(w.got)}, {"a", jnum(static_cast<double>(w.exact))}};
}

nlohmann::json exact_json(const MetricSet& s) {
  auto w = [](const Worst& x) {
    return nlohmann::json{{"value", jnum(x.value)}, {"coords", x.coords}, {"got", jnum(x.got)}, {"exact", fmt::format("{:.21Lg}", x.exact)}};
  };
  return {{"abs", w(s.abs)}, {"ulp", w(s.ulp)}, {"stab", w(s.stab)}};
}

}  // namespace

std::string format_compare_table(const CompareResult& r) {
  std::string out = fmt::format("A: {}\nB: {}\ntolerance: {} ULP{}\n", r.a_label, r.b_label, r.tolerance_ulp,
                                r.tolerance_ulp == 0 ? " (any difference diverges)" : "");
  std::size_t wl = 5;
  for (auto& l : r.layers) wl = std::max(wl, l.layer.size());
  out += fmt::format("{:<{}}  {:>3}  {:>9} {:>9} {:>9}  {:>9} {:>9} {:>7}  {:<6} {}\n", "layer", wl, "ten", "max abs", "max rel",
                     "max ulp", "A stab", "B stab", "gate", "closer", "verdict");
  for (std::size_t k = 0; k < r.layers.size(); ++k) {
    const LayerCompare& l = r.layers[k];
    const TensorDiff* w = l.worst();
    std::string v = l.a_fails() || l.b_fails() ? "FAIL" : l.differs ? (l.has_reference ? "DIFFERS" : "DIFFERS (no reference)") : "SAME";
    if (l.a_fails()) v += " A";
    if (l.b_fails()) v += " B";
    if (!l.inputs_match) v += " (inputs differ)";
    if (!l.only_a.empty()) v += fmt::format(" only in A: {}", fmt::join(l.only_a, ","));
    if (!l.only_b.empty()) v += fmt::format(" only in B: {}", fmt::join(l.only_b, ","));
    if (r.first_divergence && *r.first_divergence == k) v += "  <- first divergence";
    out += fmt::format("{:<{}}  {:>3}  {:>9} {:>9} {:>9}  {:>9} {:>9} {:>7}  {:<6} {}\n", l.layer, wl, l.tensors.size(),
                       w ? num(w->abs.value) : "-", w ? num(w->rel.value) : "-", w ? num(w->ulp.value) : "-",
                       l.a_exact ? num(l.a_exact->stab.value) : "-", l.b_exact ? num(l.b_exact->stab.value) : "-",
                       l.has_reference ? num(l.gate.max) : "-", l.closer.empty() ? "-" : l.closer, v);
  }
  out += "\nmax abs/rel/ulp: over the layer's tensors matched by name, B against A (ulp of the coarser dtype at A's value).\n"
         "A stab, B stab: each side's <layer>.output against the exact reference of its own <layer>.input "
         "(MPFR, README \"Checks, metrics and gates\"); closer: the side with the smaller stab.\n";
  if (r.first_divergence) {
    const LayerCompare& l = r.layers[*r.first_divergence];
    const TensorDiff* w = nullptr;
    for (auto& t : l.tensors) if (t.differs && (!w || t.ulp.value > w->ulp.value)) w = &t;
    if (w && w->shape_a != w->shape_b)
      out += fmt::format("first divergence: layer {} ({}): shape {} vs {}\n", l.layer, w->name, shape_str(w->shape_a), shape_str(w->shape_b));
    else if (w)
      out += fmt::format("first divergence: layer {} ({}): {} of {} values differ, max {} ULP at [{}] A {:.9g} B {:.9g}\n", l.layer,
                         w->name, w->count_different, numel(w->shape_a), num(w->ulp.value), fmt::join(w->ulp.coords, ","),
                         static_cast<double>(w->ulp.exact), w->ulp.got);
  } else {
    out += "first divergence: none\n";
  }
  auto fail_line = [&](const char* side, const std::optional<std::size_t>& k, bool a) {
    if (!k) {
      std::size_t gated = 0;
      for (auto& l : r.layers) gated += (a ? l.a_exact : l.b_exact).has_value();
      // "none" alone would read as if a gate had run: say on how many layers it did.
      if (gated == 0)
        return fmt::format("first gate failure ({}): none, and no layer was gated (none has <layer>.input, "
                           "<layer>.output and a <layer>.json sidecar on this side)\n", side);
      return fmt::format("first gate failure ({}): none ({} of {} layers gated)\n", side, gated, r.layers.size());
    }
    const LayerCompare& l = r.layers[*k];
    if (const std::string& se = a ? l.a_shape_error : l.b_shape_error; !se.empty())
      return fmt::format("first gate failure ({}): layer {}: {}\n", side, l.layer, se);
    const Worst& w = (a ? *l.a_exact : *l.b_exact).stab;
    return fmt::format("first gate failure ({}): layer {}: stab {} > {} at [{}] got {:.9g} exact {:.12Lg}\n", side, l.layer,
                       num(w.value), num(l.gate.max), fmt::join(w.coords, ","), w.got, w.exact);
  };
  out += fail_line("A", r.first_fail_a, true);
  out += fail_line("B", r.first_fail_b, false);
  int same = 0, differ = 0;
  for (auto& l : r.layers) (l.differs ? differ : same) += 1;
  out += fmt::format("\n{} layers: {} same, {} differ; exit {}\n", r.layers.size(), same, differ, r.exit_code());
  return out;
}

std::string format_compare_json(const CompareResult& r) {
  nlohmann::json j;
  j["a"] = r.a_label;
  j["b"] = r.b_label;
  j["tolerance_ulp"] = r.tolerance_ulp;
  j["layers"] = nlohmann::json::array();
  for (auto& l : r.layers) {
    nlohmann::json lj{{"layer", l.layer}, {"differs", l.differs}, {"only_a", l.only_a}, {"only_b", l.only_b}};
    for (auto& t : l.tensors)
      lj["tensors"].push_back({{"name", t.name}, {"role", t.role}, {"shape_a", t.shape_a}, {"shape_b", t.shape_b},
                               {"dtype_a", dtype_name(t.dtype_a)}, {"dtype_b", dtype_name(t.dtype_b)}, {"differs", t.differs},
                               {"count_different", t.count_different}, {"abs", worst_json(t.abs)}, {"rel", worst_json(t.rel)},
                               {"ulp", worst_json(t.ulp)}});
    if (l.has_reference) {
      lj["gate"] = {{"metric", to_string(l.gate.metric)}, {"max", l.gate.max}, {"source", l.gate.source}};
      lj["inputs_match"] = l.inputs_match;
      if (!l.a_shape_error.empty()) lj["a_shape_error"] = l.a_shape_error;
      if (!l.b_shape_error.empty()) lj["b_shape_error"] = l.b_shape_error;
      if (l.a_exact) lj["a_vs_exact"] = exact_json(*l.a_exact);
      if (l.b_exact) lj["b_vs_exact"] = exact_json(*l.b_exact);
      lj["closer"] = l.closer;
      lj["a_fails"] = l.a_fails();
      lj["b_fails"] = l.b_fails();
    }
    j["layers"].push_back(lj);
  }
  auto opt = [&](const std::optional<std::size_t>& k) { return k ? nlohmann::json(r.layers[*k].layer) : nlohmann::json(nullptr); };
  j["first_divergence"] = opt(r.first_divergence);
  j["first_gate_failure_a"] = opt(r.first_fail_a);
  j["first_gate_failure_b"] = opt(r.first_fail_b);
  j["exit_code"] = r.exit_code();
  return j.dump(1) + "\n";
}

}  // namespace normcheck
