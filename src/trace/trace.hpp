// `normcheck trace`: a model's stack on a backend and on the reference, error per norm site.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "checks/budget.hpp"
#include "backends/registry.hpp"
#include "checks/metrics.hpp"
#include "trace/stack.hpp"

namespace normcheck::trace {

/// Which backend evaluates the norms: `backend` everywhere except the sites in `inject`
/// (site index -> backend name), e.g. {7: "mutant:eps_outside_sqrt"}. Any backend
/// make_named_backend accepts (plugin:, cmd: with `limits`).
struct TraceOptions {
  std::string backend = "cpu";
  std::map<int, std::string> inject;
  BackendOptions limits;
};

/// The errors of one site. Both compare the backend's norm output y_l (computed from the
/// backend stack's own input x_l) with an exact result:
///   local:       the reference evaluated on x_l itself (the site's own error; judged by
///                the case gate `gate`, default_gate: stab <= 1 + 8 + sqrt(m));
///   accumulated: the reference stack's exact output at this site (computed from the
///                reference stack's input x*_l), i.e. everything that went wrong up to here.
///                Its stab uses u = max(u_acc, u_act) (acc_unit), the stream being carried
///                in the activation dtype, and adds a normwise term to the condition
///                magnitude; judged by `acc_limit` (trace.cpp, top).
struct SiteResult {
  int index = 0;
  std::string name;
  std::string backend;
  Op op = Op::layer_norm;
  std::int64_t m = 0;
  Gate gate;
  double acc_limit = 0;
  DType acc_unit = DType::f32;
  MetricSet local, accumulated;
  bool same_input = false;          ///< x_l == x*_l bit for bit (local == accumulated)
  bool local_fail() const { return !(local.value(gate.metric) <= gate.max); }
  bool acc_fail() const { return !(accumulated.stab.value <= acc_limit); }
};

/// A whole trace: per-site results in evaluation order and the first site that exceeds
/// each bound (nullopt: none).
struct TraceResult {
  const Model* model = nullptr;
  std::string file;
  TraceOptions options;
  std::vector<SiteResult> sites;
  std::optional<int> first_local, first_accumulated;
  double seconds = 0;
  int failures() const;  ///< sites that exceed either bound
  std::string repro() const;  ///< the command line that reruns this trace
};

/// Runs the model's stack on the reference (exact norms rounded to the activation dtype)
/// and on the backend(s), and measures every site. Throws std::invalid_argument for an
/// unknown backend name or an injection site out of range; BackendError when a backend
/// cannot run a site or returns an output of the wrong shape or dtype.
TraceResult run_trace(const Model& m, const TraceOptions& opt);

/// Parses "--inject NAME@SITE" (SITE: index or site name such as "block07.norm") against
/// the model's sites. Throws std::invalid_argument with the reason.
std::pair<int, std::string> parse_injection(const Stack& st, const std::string& spec);

/// Per-site table with the first local and accumulated divergences and a repro line.
std::string format_trace_table(const TraceResult& r);
/// JSON: {"model", "backend", "inject", "sites": [...], "first_local", "first_accumulated", "summary"}.
std::string format_trace_json(const TraceResult& r);

}  // namespace normcheck::trace
