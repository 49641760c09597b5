#include "cli/trace_compare.hpp"

#include "cli/backend_options.hpp"

#include <cmath>
#include <fmt/format.h>

#include "spec/backend.hpp"
#include "cases/case.hpp"
#include "compare/compare.hpp"
#include "report/report.hpp"
#include "trace/trace.hpp"
#include "backends/registry.hpp"

namespace normcheck::cli {

namespace {

constexpr int kBadInput = 2, kBackendError = 3;

int bad(const std::string& msg) {
  fmt::print(stderr, "normcheck: {}\n", msg);
  return kBadInput;
}

/// Prints the report or writes it atomically, keeping the last summary line on stdout.
int emit(const std::string& text, const std::string& output) {
  if (output.empty()) {
    fmt::print("{}", text);
    return 0;
  }
  try {
    write_atomically(output, text);
  } catch (const std::exception& e) {
    return bad(e.what());
  }
  return 0;
}

int cmd_trace(const TraceCompareArgs& a) {
  if (a.format != "table" && a.format != "json") return bad(fmt::format("--format: unknown '{}' (table | json)", a.format));
  trace::Model m;
  try {
    m = trace::parse_model_file(a.model);
  } catch (const CaseError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return kBadInput;
  }
  trace::TraceOptions opt;
  opt.backend = a.backend;
  opt.limits = a.trace_limits;
  trace::TraceResult r;
  try {
    const trace::Stack st = trace::build_stack(m);
    for (auto& s : a.inject) {
      auto [k, be] = trace::parse_injection(st, s);
      if (opt.inject.count(k)) return bad(fmt::format("--inject {}: site {} injected twice", s, k));
      opt.inject[k] = be;
    }
    r = trace::run_trace(m, opt);
  } catch (const std::invalid_argument& e) {
    return bad(fmt::format("trace: {}", e.what()));
  } catch (const BackendError& e) {
    fmt::print(stderr, "normcheck: backend error: {}\n", e.what());
    return kBackendError;
  }
  const std::string text = a.format == "json" ? trace::format_trace_json(r) : trace::format_trace_table(r);
  if (int rc = emit(text, a.output)) return rc;
  if (!a.output.empty())
    fmt::print("{}: {} sites, {} failed\n", m.name, r.sites.size(), r.failures());
  return r.failures() ? 1 : 0;
}

int cmd_compare(const TraceCompareArgs& a) {
  if (a.format != "table" && a.format != "json") return bad(fmt::format("--format: unknown '{}' (table | json)", a.format));
  // (infinite: nothing could ever diverge, and compare would exit 0 having compared nothing)
  if (!(a.tolerance_ulp >= 0) || !std::isfinite(a.tolerance_ulp)) return bad("--tolerance-ulp must be a finite number >= 0");
  const bool recomputed = !a.compare_backend.empty();
  if (recomputed ? a.dirs.size() != 1 : a.dirs.size() != 2)
    return bad("compare: give two directories (DIR_A DIR_B), or one directory and --backend NAME to recompute it");
  CompareResult r;
  try {
    const Dump da = read_dump(a.dirs[0]);
    Dump db;
    if (recomputed) {
      auto be = make_named_backend(a.compare_backend, a.compare_limits);
      if (auto why = be->unavailable()) throw BackendError(fmt::format("backend {} unavailable: {}", a.compare_backend, *why));
      db = normcheck::recompute(da, *be);
    } else {
      db = read_dump(a.dirs[1]);
    }
    r = compare_dumps(da, db, a.tolerance_ulp);
  } catch (const DumpError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return kBadInput;
  } catch (const std::invalid_argument& e) {
    return bad(e.what());
  } catch (const BackendError& e) {
    fmt::print(stderr, "normcheck: backend error: {}\n", e.what());
    return kBackendError;
  }
  const std::string text = a.format == "json" ? format_compare_json(r) : format_compare_table(r);
  if (int rc = emit(text, a.output)) return rc;
  if (!a.output.empty()) fmt::print("{} layers compared, exit {}\n", r.layers.size(), r.exit_code());
  return r.exit_code();
}

}  // namespace

void add_trace_compare(CLI::App& app, TraceCompareArgs& a) {
  a.trace = app.add_subcommand("trace", "run a model's residual stack on a backend and on the reference; error per norm site");
  a.trace->add_option("model", a.model, "model file (*.trace.toml)")->required();
  a.trace->add_option("--backend,-b", a.backend, "backend for the norm sites (default cpu)");
  a.trace->add_option("--inject", a.inject, "BACKEND@SITE: run site SITE (index or name) on BACKEND instead (repeatable)");
  a.trace->add_option("--format", a.format, "table | json");
  a.trace->add_option("--output,-o", a.output, "write the report to this file (atomically)");
  add_backend_options(a.trace, a.trace_limits);

  a.compare = app.add_subcommand("compare", "compare two directories of per-layer tensors (.npy, .safetensors) by name");
  a.compare->add_option("dirs", a.dirs, "DIR_A DIR_B, or DIR_A with --backend")->required();
  a.compare->add_option("--backend,-b", a.compare_backend, "recompute B from DIR_A's inputs on this backend");
  a.compare->add_option("--tolerance-ulp", a.tolerance_ulp, "a layer diverges when a tensor differs by more ULP than this (default 0: any difference)");
  a.compare->add_option("--format", a.format, "table | json");
  a.compare->add_option("--output,-o", a.output, "write the report to this file (atomically)");
  add_backend_options(a.compare, a.compare_limits);
}

int run_trace_compare(const TraceCompareArgs& a) {
  if (a.trace && *a.trace) return cmd_trace(a);
  if (a.compare && *a.compare) return cmd_compare(a);
  return -1;
}

}  // namespace normcheck::cli
