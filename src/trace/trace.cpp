// Accumulated error (SiteResult::accumulated) and its threshold (`acc_limit`).
//
// Metric: stab against the reference stack's exact output r_i at the site, in units
//   |y_i - r_i| / (ulp_out(r_i)/2 + u_s (c_i + c'_i)),   u_s = max(u_acc, u_act),
// u_act the unit roundoff of the activation dtype in which the stream is carried. c_i is
// the reference's componentwise condition magnitude (a perturbation |dx_j| <= u |x_j|);
// c'_i = mean_j|x_j| * sum_j |dy_i/dx_j| is the normwise one (a perturbation
// |dx_j| <= u mean|x| of every element), bounded by the triangle inequality on
// dy_i/dx_j = g_i/D (delta_ij - [center]/m - k n_i n_j/m'):
//   c'_i <= |g_i| mean|x| / D (1 + [center] + k |n_i| (1/m') sum_j |n_j|).
// The normwise term is needed because the stream comes out of residual adds that cancel:
// an element of x + b is wrong by about u (|x| + |b|), not u |x + b|, and an element that
// cancels to exactly 0 in one stack (bf16 does this) has c_i = 0. A site within its local
// gate G_l (in u_acc units) is within G_l in these units too (the denominator only grows).
//
// Threshold. Sources of the difference between the backend stack and the reference stack:
//   * the error each site k <= l makes on its own input: <= G_k units (the local gate);
//   * the stream roundings between two sites (branch output, residual add:
//     kRoundingsPerStep = 2): a rounding of two values that already differ by delta
//     yields values that differ by <= delta + 1 ulp_act, i.e. each adds <= 2 units.
// How they propagate: a norm maps an input perturbation within k units (componentwise or
// normwise, both are in the denominator) to an output error within k units: norms do not
// amplify in these units. The branches W (entries N(0, s^2/d)) keep a random error
// vector's size on average (E|W e|^2 = s^2 |e|^2); the bundled models use s <= 1, so they
// do not amplify either (a model with s > 1 can, and then this bound is optimistic). The
// per-site contributions are independent, so they add as a random walk (the argument
// budget.cpp makes for the sqrt(m) of a sum), not linearly:
//   acc_limit_l = sqrt( sum_{k <= l} (G_k + 2 * kRoundingsPerStep)^2 ).
// For a model with one gate G: (G + 4) sqrt(n_l), n_l the number of sites up to l.
// This is an expected-size bound, not a worst case, fixed before the bundled traces were
// run; it is not fitted to any backend's results.
#include "trace/trace.hpp"

#include <chrono>
#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "spec/backend.hpp"
#include "ops/reference.hpp"
#include "ops/common/row_norm.hpp"
#include "spec/layout.hpp"
#include "ops/registry.hpp"
#include "backends/registry.hpp"

namespace normcheck::trace {

int TraceResult::failures() const {
  int n = 0;
  for (auto& s : sites) n += s.local_fail() || s.acc_fail();
  return n;
}

std::string TraceResult::repro() const {
  std::string s = fmt::format("normcheck trace {} --backend {}", file, options.backend);
  for (auto& [site, be] : options.inject) s += fmt::format(" --inject {}@{}", be, site);
  return s;
}

std::pair<int, std::string> parse_injection(const Stack& st, const std::string& spec) {
  const auto at = spec.rfind('@');
  if (at == std::string::npos || at == 0 || at + 1 == spec.size())
    throw std::invalid_argument(fmt::format("'{}': expected BACKEND@SITE (e.g. mutant:eps_outside_sqrt@7)", spec));
  const std::string be = spec.substr(0, at), where = spec.substr(at + 1);
  for (auto& s : st.sites)
    if (s.name == where) return {s.index, be};
  char* end = nullptr;
  const long k = std::strtol(where.c_str(), &end, 10);
  if (end && *end == '\0' && k >= 0 && k < static_cast<long>(st.sites.size())) return {static_cast<int>(k), be};
  throw std::invalid_argument(fmt::format("'{}': no site '{}' (sites 0..{}, or names like {})", spec, where,
                                          st.sites.size() - 1, st.sites.front().name));
}

namespace {

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

DType coarser(DType a, DType b) { return unit_roundoff(a) >= unit_roundoff(b) ? a : b; }

std::unique_ptr<Backend> open_backend(const std::string& name, const BackendOptions& limits) {
  auto be = make_named_backend(name, limits);
  if (auto why = be->unavailable()) throw BackendError(fmt::format("backend {} unavailable: {}", name, *why));
  return be;
}

/// The reference output with c_i + c'_i as its condition magnitudes (top of this file),
/// computed in binary64 from the problem's input (a denominator needs no more).
reference::ExactOutput with_normwise_cond(const Problem& p, reference::ExactOutput r) {
  const RowLayout l = row_layout(p);
  const bool center = centers(p.op);
  const std::int64_t dof = p.conv.variance == Variance::unbiased ? l.m - 1 : l.m;
  std::vector<double> g(static_cast<std::size_t>(l.m), 1.0);
  if (const Tensor* gt = p.input("gamma")) {
    std::vector<double> gv = gt->to_doubles();
    for (std::int64_t j = 0; j < l.m; ++j) g[j] = std::fabs(reference::affine_gain<double>(p.conv, gv.data(), j));
  }
  const Tensor& x = p.x();
  for (std::int64_t row = 0; row < l.rows; ++row) {
    double mu = 0, mean_abs = 0, ss = 0;
    for (std::int64_t j = 0; j < l.m; ++j) { mu += x.get(row * l.m + j); mean_abs += std::fabs(x.get(row * l.m + j)); }
    mu = center ? mu / static_cast<double>(l.m) : 0.0;
    mean_abs /= static_cast<double>(l.m);
    for (std::int64_t j = 0; j < l.m; ++j) { const double dv = x.get(row * l.m + j) - mu; ss += dv * dv; }
    const double v = ss / static_cast<double>(dof);
    const double D = reference::denominator<double>(v, p.conv);
    const double k = reference::denominator_sensitivity<double>(v, D, p.conv);
    if (!(D > 0) || !std::isfinite(D)) continue;  // a 0/0 row: the componentwise c_i stands
    double mean_n = 0;
    for (std::int64_t j = 0; j < l.m; ++j) mean_n += std::fabs((x.get(row * l.m + j) - mu) / D);
    mean_n /= static_cast<double>(dof);
    for (std::int64_t j = 0; j < l.m; ++j) {
      const double n = (x.get(row * l.m + j) - mu) / D;
      const double cn = g[j] * mean_abs / D * (1.0 + (center ? 1.0 : 0.0) + k * std::fabs(n) * mean_n);
      const auto at = static_cast<std::size_t>(row * l.m + j);
      const double c = r.cond[at];
      if (std::isfinite(c) && std::isfinite(cn)) r.cond.set(at, c + cn);
    }
  }
  return r;
}

}  // namespace

TraceResult run_trace(const Model& m, const TraceOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const Stack st = build_stack(m);
  TraceResult res;
  res.model = &m;
  res.file = m.file;
  res.options = opt;
  auto main_be = open_backend(opt.backend, opt.limits);
  std::map<int, std::unique_ptr<Backend>> injected;
  for (auto& [k, name] : opt.inject) {
    if (k < 0 || k >= static_cast<int>(st.sites.size()))
      throw std::invalid_argument(fmt::format("--inject: site {} out of range 0..{}", k, st.sites.size() - 1));
    injected[k] = open_backend(name, opt.limits);
  }

  // 1. The reference stack: exact norms rounded once to the activation dtype.
  std::vector<Tensor> ref_in(st.sites.size());
  std::vector<reference::ExactOutput> ref_out(st.sites.size()), acc_ref(st.sites.size());
  run_stack(st, [&](const Site& s, const Problem& p) {
    ref_in[s.index] = p.x();
    ref_out[s.index] = reference::evaluate_exact(p).at("y");
    acc_ref[s.index] = with_normwise_cond(p, ref_out[s.index]);
    return ref_out[s.index].rounded();
  });

  // 2. The backend stack, measured at every site against both.
  run_stack(st, [&](const Site& s, const Problem& p) {
    Backend& be = injected.count(s.index) ? *injected.at(s.index) : *main_be;
    const ValidProblem vp = validate(p);
    if (auto why = be.unsupported(vp, {})) throw BackendError(fmt::format("site {} ({}): {}", s.index, s.name, *why));
    Outputs o;
    try {
      o = be.run(vp, {});
    } catch (const BackendError&) {
      throw;
    } catch (const std::exception& e) {
      throw BackendError(fmt::format("site {} ({}) on {}: {}", s.index, s.name, be.name(), e.what()));
    }
    auto it = o.find("y");
    if (it == o.end()) throw BackendError(fmt::format("site {} ({}) on {}: output 'y' missing", s.index, s.name, be.name()));
    const Tensor& y = it->second;
    if (y.shape() != p.x().shape() || y.dtype() != p.out_dtype)
      throw BackendError(fmt::format("site {} ({}) on {}: output {} {}, expected {} {}", s.index, s.name, be.name(),
                                     dtype_name(y.dtype()), shape_str(y.shape()), dtype_name(p.out_dtype), shape_str(p.x().shape())));
    SiteResult r;
    r.index = s.index;
    r.name = s.name;
    r.backend = be.name();
    r.op = p.op;
    r.m = group_size(p);
    r.gate = default_gate(p);
    r.acc_unit = coarser(p.conv.acc_dtype, m.dtype);
    r.same_input = same_bytes(p.x(), ref_in[s.index]);
    const DType acc = p.conv.acc_dtype;
    r.local = r.same_input ? measure(y, ref_out[s.index], p.out_dtype, acc)
                           : measure(y, reference::evaluate_exact(p).at("y"), p.out_dtype, acc);
    r.accumulated = measure(y, acc_ref[s.index], p.out_dtype, r.acc_unit);
    res.sites.push_back(std::move(r));
    return y;
  });

  // Accumulated threshold (top of this file).
  double sum_sq = 0;
  for (auto& r : res.sites) {
    const double per_site = r.gate.max + 2.0 * kRoundingsPerStep;
    sum_sq += per_site * per_site;
    r.acc_limit = std::sqrt(sum_sq);
    if (!res.first_local && r.local_fail()) res.first_local = r.index;
    if (!res.first_accumulated && r.acc_fail()) res.first_accumulated = r.index;
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

namespace {

std::string num(double v) {
  if (v == 0) return "0";
  return fmt::format("{:.3g}", v);
}

std::string where(const Worst& w) {
  return fmt::format("[{}] got {:.9g} exact {:.12Lg}", fmt::join(w.coords, ","), w.got, w.exact);
}

nlohmann::json jnum(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(fmt::format("{}", v)); }

nlohmann::json metrics_json(const MetricSet& s) {
  auto w = [](const Worst& x) {
    return nlohmann::json{{"value", jnum(x.value)}, {"coords", x.coords}, {"got", jnum(x.got)}, {"exact", fmt::format("{:.21Lg}", x.exact)}};
  };
  return {{"abs", w(s.abs)}, {"rel", w(s.rel)}, {"ulp", w(s.ulp)}, {"stab", w(s.stab)}, {"nmse", jnum(s.nmse)},
          {"nan_mismatches", s.nan_mismatches}};
}

}  // namespace

std::string format_trace_table(const TraceResult& r) {
  const Model& m = *r.model;
  std::string out = fmt::format("model {} ({}): {} blocks, {}, d = {}, tokens = {}, {} activations, {} sites; backend {}{}\n",
                                m.name, r.file, m.blocks, to_string(m.placement), m.d, m.tokens, dtype_name(m.dtype),
                                r.sites.size(), r.options.backend,
                                r.options.inject.empty() ? "" : fmt::format(" (injected: {})", [&] {
                                  std::string s;
                                  for (auto& [k, b] : r.options.inject) s += fmt::format("{}{}@{}", s.empty() ? "" : ", ", b, k);
                                  return s;
                                }()));
  std::size_t wn = 4, wb = 7;
  for (auto& s : r.sites) { wn = std::max(wn, s.name.size()); wb = std::max(wb, s.backend.size()); }
  out += fmt::format("{:>4}  {:<{}}  {:<{}}  {:<10} | {:>9} {:>9} {:>9} {:>7} | {:>9} {:>9} {:>9} {:>7} | {}\n", "site", "name", wn,
                     "backend", wb, "op", "loc abs", "loc ulp", "loc stab", "gate", "acc abs", "acc ulp", "acc stab", "limit", "verdict");
  for (auto& s : r.sites) {
    std::string v = s.local_fail() || s.acc_fail() ? "FAIL" : "PASS";
    if (s.local_fail()) v += " local";
    if (s.acc_fail()) v += " accumulated";
    if (r.first_local && *r.first_local == s.index) v += "  <- first local";
    if (r.first_accumulated && *r.first_accumulated == s.index) v += "  <- first accumulated";
    out += fmt::format("{:>4}  {:<{}}  {:<{}}  {:<10} | {:>9} {:>9} {:>9} {:>7} | {:>9} {:>9} {:>9} {:>7} | {}\n", s.index, s.name, wn,
                       s.backend, wb, to_string(s.op), num(s.local.abs.value), num(s.local.ulp.value), num(s.local.stab.value),
                       num(s.gate.max), num(s.accumulated.abs.value), num(s.accumulated.ulp.value),
                       num(s.accumulated.stab.value), num(s.acc_limit), v);
  }
  out += "\nlocal: the backend's norm output vs the exact norm of the backend's own input at that site; gate "
         "stab <= 1 + 8 + sqrt(m).\naccumulated: vs the reference stack's exact output at that site; stab with u = "
         "max(u_acc, u_act) and c_i + normwise c'_i; limit sqrt(sum_k (gate_k + 4)^2) (src/trace/trace.cpp).\n";
  auto first = [&](const char* what, const std::optional<int>& k, bool local) {
    if (!k) return fmt::format("first {} divergence: none\n", what);
    const SiteResult& s = r.sites[static_cast<std::size_t>(*k)];
    const Worst& w = local ? s.local.stab : s.accumulated.stab;
    return fmt::format("first {} divergence: site {} ({}, {}): stab {} > {} at {}\n", what, s.index, s.name, s.backend,
                       num(w.value), num(local ? s.gate.max : s.acc_limit), where(w));
  };
  out += first("local", r.first_local, true);
  out += first("accumulated", r.first_accumulated, false);
  out += fmt::format("\n{} sites: {} passed, {} failed ({:.2f} s)\n", r.sites.size(), r.sites.size() - r.failures(), r.failures(), r.seconds);
  if (r.failures()) out += fmt::format("rerun: {}\n", r.repro());
  return out;
}

std::string format_trace_json(const TraceResult& r) {
  const Model& m = *r.model;
  nlohmann::json j;
  j["model"] = {{"name", m.name}, {"file", r.file}, {"placement", to_string(m.placement)}, {"blocks", m.blocks}, {"d", m.d},
                {"tokens", m.tokens}, {"dtype", dtype_name(m.dtype)}, {"seed", m.seed}};
  j["backend"] = r.options.backend;
  j["inject"] = nlohmann::json::object();
  for (auto& [k, b] : r.options.inject) j["inject"][std::to_string(k)] = b;
  j["accumulated_limit"] = "sqrt(sum_{k<=l} (gate_k + 2 * 2)^2); accumulated stab with u = max(u_acc, u_act) and c_i + c'_i (src/trace/trace.cpp)";
  for (auto& s : r.sites)
    j["sites"].push_back({{"index", s.index}, {"name", s.name}, {"backend", s.backend}, {"op", to_string(s.op)}, {"m", s.m},
                          {"gate", {{"metric", to_string(s.gate.metric)}, {"max", s.gate.max}, {"source", s.gate.source}}},
                          {"accumulated_limit", s.acc_limit}, {"accumulated_unit", dtype_name(s.acc_unit)},
                          {"same_input", s.same_input}, {"local", metrics_json(s.local)},
                          {"accumulated", metrics_json(s.accumulated)}, {"local_fail", s.local_fail()}, {"accumulated_fail", s.acc_fail()}});
  j["first_local"] = r.first_local ? nlohmann::json(*r.first_local) : nlohmann::json(nullptr);
  j["first_accumulated"] = r.first_accumulated ? nlohmann::json(*r.first_accumulated) : nlohmann::json(nullptr);
  j["summary"] = {{"sites", r.sites.size()}, {"failed", r.failures()}, {"passed", static_cast<int>(r.sites.size()) - r.failures()},
                  {"seconds", r.seconds}};
  if (r.failures()) j["repro"] = r.repro();
  return j.dump(1) + "\n";
}

}  // namespace normcheck::trace
