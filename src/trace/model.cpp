// Model-file parser (toml++). Every error names file, line and field, like the case parser.
#include "trace/model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "cases/toml_fields.hpp"

#include "cases/case.hpp"
#include "ops/registry.hpp"

namespace normcheck::trace {

std::string_view to_string(Placement p) noexcept {
  switch (p) {
    case Placement::pre_norm: return "pre_norm";
    case Placement::post_norm: return "post_norm";
    case Placement::sandwich: return "sandwich";
  }
  return "?";
}

std::optional<Placement> parse_placement(std::string_view s) noexcept {
  for (Placement p : {Placement::pre_norm, Placement::post_norm, Placement::sandwich})
    if (to_string(p) == s) return p;
  return std::nullopt;
}

std::string_view to_string(Branch b) noexcept { return b == Branch::linear ? "linear" : "linear_gelu"; }

namespace {

using Ctx = detail::TomlCtx;
using detail::check_keys;
using detail::int_of;
using detail::number;
using detail::string_of;
using detail::table_of;

std::int64_t positive(const Ctx& c, const toml::table& t, const char* key, const std::string& where, std::int64_t max) {
  const toml::node* n = t.get(key);
  const std::string f = where + "." + key;
  if (!n) c.fail(&t, f, "missing (a positive integer)");
  const std::int64_t v = int_of(c, *n, f);
  if (v < 1 || v > max) c.fail(n, f, fmt::format("{} is out of range [1, {}]", v, max));
  return v;
}

Dist dist_of(const Ctx& c, const toml::node& n, const std::string& field, Dist d) {
  const toml::table& t = table_of(c, n, field);
  check_keys(c, t, field, {"mean", "std"});
  if (auto e = t.get("mean")) {
    d.mean = number(c, *e, field + ".mean");
    if (!std::isfinite(d.mean)) c.fail(e, field + ".mean", "must be finite");
  }
  if (auto e = t.get("std")) {
    d.std = number(c, *e, field + ".std");
    if (!(d.std >= 0) || !std::isfinite(d.std)) c.fail(e, field + ".std", "must be finite and >= 0");
  }
  return d;
}

/// Reads the keys of a norm table over `spec` (a site kind inherits [norm] and overrides).
void norm_of(const Ctx& c, const toml::table& t, const std::string& w, NormSpec& spec) {
  check_keys(c, t, w, {"op", "eps", "eps_placement", "variance", "affine", "acc_dtype", "gain", "bias"});
  if (auto e = t.get("op")) {
    const std::string s = string_of(c, *e, w + ".op");
    auto op = parse_op(s);
    if (!op || (*op != Op::layer_norm && *op != Op::rms_norm))
      c.fail(e, w + ".op", fmt::format("unknown or untraceable op '{}' (layer_norm | rms_norm)", s));
    spec.op = *op;
  }
  Convention& conv = spec.conv;
  if (auto e = t.get("eps")) {
    conv.eps = number(c, *e, w + ".eps");
    if (!(conv.eps >= 0) || !std::isfinite(conv.eps)) c.fail(e, w + ".eps", fmt::format("eps must be finite and >= 0, got {}", conv.eps));
  }
  if (auto e = t.get("eps_placement")) {
    const std::string s = string_of(c, *e, w + ".eps_placement");
    auto v = parse_eps_placement(s);
    if (!v) c.fail(e, w + ".eps_placement", fmt::format("unknown '{}' ({})", s, choices_eps_placement()));
    conv.eps_placement = *v;
  }
  if (auto e = t.get("variance")) {
    const std::string s = string_of(c, *e, w + ".variance");
    auto v = parse_variance(s);
    if (!v) c.fail(e, w + ".variance", fmt::format("unknown '{}' ({})", s, choices_variance()));
    conv.variance = *v;
  }
  if (auto e = t.get("affine")) {
    const std::string s = string_of(c, *e, w + ".affine");
    auto v = parse_affine(s);
    if (!v) c.fail(e, w + ".affine", fmt::format("unknown '{}' ({})", s, choices_affine()));
    conv.affine = *v;
  }
  if (auto e = t.get("acc_dtype")) {
    const std::string s = string_of(c, *e, w + ".acc_dtype");
    auto v = parse_dtype(s);
    if (!v) c.fail(e, w + ".acc_dtype", fmt::format("unknown dtype '{}' (f64 | f32 | f16 | bf16)", s));
    conv.acc_dtype = *v;
  }
  if (auto e = t.get("gain")) spec.gain = dist_of(c, *e, w + ".gain", spec.gain);
  if (auto e = t.get("bias")) {
    spec.bias = dist_of(c, *e, w + ".bias", spec.bias);
    if (conv.affine != Affine::gamma_beta && t.get("affine"))
      c.fail(e, w + ".bias", fmt::format("a bias needs affine = \"gamma_beta\" (affine is \"{}\")", to_string(conv.affine)));
  }
}

}  // namespace

Model parse_model_file(const std::string& path) {
  Ctx c{path};
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw CaseError(path, static_cast<int>(e.source().begin.line), "toml", std::string(e.description()));
  }
  check_keys(c, root, "", {"model", "input", "branch", "quiet", "norm", "norm_post", "final_norm"});
  Model m;
  m.file = path;
  const toml::node* mn = root.get("model");
  if (!mn) c.fail(nullptr, "model", "no [model] table (is this a case file? `normcheck run` reads those)");
  const toml::table& mt = table_of(c, *mn, "model");
  check_keys(c, mt, "model", {"name", "note", "d", "tokens", "blocks", "placement", "dtype", "seed"});
  if (!mt.get("name")) c.fail(mn, "model.name", "missing");
  m.name = string_of(c, *mt.get("name"), "model.name");
  if (m.name.empty() || m.name.find_first_of(" \t\"'/") != std::string::npos)
    c.fail(mt.get("name"), "model.name", fmt::format("'{}' is not a valid name (no spaces, quotes or slashes)", m.name));
  if (auto e = mt.get("note")) m.note = string_of(c, *e, "model.note");
  m.d = positive(c, mt, "d", "model", 1 << 16);
  m.tokens = positive(c, mt, "tokens", "model", 1 << 12);
  m.blocks = positive(c, mt, "blocks", "model", 1024);
  // The stack holds d x d linear maps per block and tokens x d activations per site (in
  // float, plus the reference's copies): bound the whole so a model file cannot ask for
  // more memory than a workstation has.
  if (static_cast<std::int64_t>(m.d) * m.d * m.blocks > (std::int64_t{1} << 28) ||
      static_cast<std::int64_t>(m.tokens) * m.d > (std::int64_t{1} << 22))
    c.fail(mt.get("d"), "model.d",
           fmt::format("d = {}, tokens = {}, blocks = {} is too large (d^2 * blocks <= 2^28, tokens * d <= 2^22)", m.d, m.tokens,
                       m.blocks));
  if (auto e = mt.get("placement")) {
    const std::string s = string_of(c, *e, "model.placement");
    auto p = parse_placement(s);
    if (!p) c.fail(e, "model.placement", fmt::format("unknown '{}' (pre_norm | post_norm | sandwich)", s));
    m.placement = *p;
  } else {
    c.fail(mn, "model.placement", "missing (pre_norm | post_norm | sandwich)");
  }
  if (auto e = mt.get("dtype")) {
    const std::string s = string_of(c, *e, "model.dtype");
    auto t = parse_dtype(s);
    if (!t || *t == DType::f64) c.fail(e, "model.dtype", fmt::format("unknown activation dtype '{}' (f32 | bf16 | f16)", s));
    m.dtype = *t;
  } else {
    c.fail(mn, "model.dtype", "missing (f32 | bf16 | f16)");
  }
  if (auto e = mt.get("seed")) {
    const std::int64_t s = int_of(c, *e, "model.seed");
    if (s < 0) c.fail(e, "model.seed", "seed must be >= 0");
    m.seed = static_cast<std::uint64_t>(s);
  } else {
    c.fail(mn, "model.seed", "missing (an integer >= 0: every weight, gain and input is drawn from it)");
  }

  if (auto n = root.get("input")) m.input = dist_of(c, *n, "input", m.input);
  if (auto n = root.get("branch")) {
    const toml::table& t = table_of(c, *n, "branch");
    check_keys(c, t, "branch", {"kind", "scale"});
    if (auto e = t.get("kind")) {
      const std::string s = string_of(c, *e, "branch.kind");
      if (s == "linear") m.branch = Branch::linear;
      else if (s == "linear_gelu") m.branch = Branch::linear_gelu;
      else c.fail(e, "branch.kind", fmt::format("unknown '{}' (linear | linear_gelu)", s));
    }
    if (auto e = t.get("scale")) {
      m.branch_scale = number(c, *e, "branch.scale");
      if (!(m.branch_scale >= 0) || !std::isfinite(m.branch_scale)) c.fail(e, "branch.scale", "must be finite and >= 0");
    }
  }
  if (auto n = root.get("quiet")) {
    const toml::table& t = table_of(c, *n, "quiet");
    check_keys(c, t, "quiet", {"rows", "scale"});
    const toml::node* rows = t.get("rows");
    const toml::node* scale = t.get("scale");
    if (!rows || !scale) c.fail(n, "quiet", "needs rows and scale");
    const toml::array* a = rows->as_array();
    if (!a) c.fail(rows, "quiet.rows", "expected an array of row indices");
    for (auto& e : *a) {
      const std::int64_t r = int_of(c, e, "quiet.rows");
      if (r < 0 || r >= m.tokens) c.fail(&e, "quiet.rows", fmt::format("row {} is outside [0, {})", r, m.tokens));
      if (std::find(m.quiet_rows.begin(), m.quiet_rows.end(), r) != m.quiet_rows.end())
        c.fail(&e, "quiet.rows", fmt::format("row {} listed twice", r));
      m.quiet_rows.push_back(r);
    }
    m.quiet_scale = number(c, *scale, "quiet.scale");
    if (!(m.quiet_scale > 0) || !std::isfinite(m.quiet_scale)) c.fail(scale, "quiet.scale", "must be finite and > 0");
  }

  m.norm.conv.acc_dtype = DType::f32;
  if (auto n = root.get("norm")) norm_of(c, table_of(c, *n, "norm"), "norm", m.norm);
  else c.fail(nullptr, "norm", "no [norm] table (op and convention of the norm sites)");
  m.norm.conv.normalized_shape = Shape{m.d};
  m.norm_post = m.norm;
  if (auto n = root.get("norm_post")) {
    if (m.placement != Placement::sandwich)
      c.fail(n, "norm_post", fmt::format("only a sandwich model has post norms (placement is {})", to_string(m.placement)));
    norm_of(c, table_of(c, *n, "norm_post"), "norm_post", m.norm_post);
  }
  if (auto n = root.get("final_norm")) {
    NormSpec f = m.norm;
    norm_of(c, table_of(c, *n, "final_norm"), "final_norm", f);
    m.final_norm = f;
  }
  // The spec's own rules (affine parameters, unbiased needs m >= 2), on a one-row problem.
  auto check = [&](const NormSpec& s, const char* table) {
    Problem p;
    p.op = s.op;
    p.conv = s.conv;
    p.out_dtype = m.dtype;
    p.inputs["x"] = Tensor(m.dtype, Shape{1, m.d});
    if (s.conv.affine != Affine::none) p.inputs["gamma"] = Tensor(m.dtype, Shape{m.d});
    if (s.conv.affine == Affine::gamma_beta) p.inputs["beta"] = Tensor(m.dtype, Shape{m.d});
    try {
      validate(p);
    } catch (const SpecError& e) {
      const toml::node* at = root.get(table);
      c.fail(at, std::string(table) + "." + e.field, e.what());
    }
  };
  check(m.norm, "norm");
  if (m.placement == Placement::sandwich) check(m.norm_post, "norm_post");
  if (m.final_norm) check(*m.final_norm, "final_norm");
  return m;
}

}  // namespace normcheck::trace
