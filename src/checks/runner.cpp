#include "checks/runner.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xadapt.hpp>
#include <xtensor/xnpy.hpp>

#include "reference/reference.hpp"

namespace normcheck {

std::string_view to_string(Status s) noexcept {
  switch (s) {
    case Status::passed: return "PASSED";
    case Status::failed: return "FAILED";
    case Status::skipped: return "SKIPPED";
    case Status::mistrusted: return "MISTRUSTED";
    case Status::error: return "ERROR";
  }
  return "?";
}

namespace {

int severity(Status s) {
  switch (s) {
    case Status::skipped: return 0;
    case Status::passed: return 1;
    case Status::mistrusted: return 2;
    case Status::failed: return 3;
    case Status::error: return 4;
  }
  return 0;
}

std::string coords_str(const std::vector<std::int64_t>& c) { return fmt::format("[{}]", fmt::join(c, ",")); }

std::string worst_str(const Worst& w) {
  return fmt::format("at {} got {:.9g} exact {:.17Lg}", coords_str(w.coords), w.got, w.exact);
}

/// Checks that a backend's outputs have the shape and dtype the problem defines.
void check_outputs(const Problem& p, const Outputs& o, const reference::ExactOutputs& ref) {
  for (auto& [name, r] : ref) {
    auto it = o.find(name);
    if (it == o.end()) throw BackendError(fmt::format("output '{}' missing", name));
    if (it->second.shape() != r.rounded.shape())
      throw BackendError(fmt::format("output '{}' has shape {}, expected {}", name, shape_str(it->second.shape()),
                                     shape_str(r.rounded.shape())));
    if (it->second.dtype() != p.out_dtype)
      throw BackendError(fmt::format("output '{}' has dtype {}, expected {}", name, dtype_name(it->second.dtype()),
                                     dtype_name(p.out_dtype)));
  }
}

}  // namespace

void write_npy(const std::string& path, const std::vector<double>& values, const Shape& shape) {
  std::vector<std::size_t> s(shape.begin(), shape.end());
  auto a = xt::adapt(values, s);
  xt::dump_npy(path, a);
}

std::vector<CaseResult> run_cases(const std::vector<Case>& cases, std::vector<std::unique_ptr<Backend>>& backends,
                                  const RunOptions& opt) {
  std::vector<CaseResult> results;
  for (const Case& cs : cases) {
    const Problem& p = cs.problem;
    const reference::ExactOutputs ref = reference::evaluate_exact(p);
    // Transformed problems of the properties and their references, computed lazily.
    std::vector<std::optional<std::pair<Problem, reference::ExactOutputs>>> prop_ref(cs.properties.size());
    for (auto& be : backends) {
      if (!be->applies(p, cs.recorded)) continue;
      CaseResult r;
      r.cs = &cs;
      r.backend = be->name();
      r.repro = fmt::format("normcheck run {} --case {} --backend {}", cs.file, cs.name, be->name());
      const auto t0 = std::chrono::steady_clock::now();
      if (auto why = be->unavailable()) {
        r.status = Status::skipped; r.reason = *why;
        results.push_back(std::move(r));
        continue;
      }
      if (auto why = be->unsupported(p, cs.recorded)) {
        r.status = Status::skipped; r.reason = *why;
        results.push_back(std::move(r));
        continue;
      }
      Outputs out;
      try {
        out = be->run(p, cs.recorded);
        check_outputs(p, out, ref);
      } catch (const std::exception& e) {
        r.status = Status::error;
        r.reason = fmt::format("{}: {}", be->name(), e.what());
        results.push_back(std::move(r));
        continue;
      }
      const Tensor& y = out.at("y");
      const reference::ExactOutput& ry = ref.at("y");
      const MetricSet ms = measure(y, ry, p.out_dtype, p.conv.acc_dtype);
      r.metrics = ms;
      auto add = [&](std::string name, bool ok, std::string detail, Status bad = Status::failed) {
        r.checks.push_back({std::move(name), ok ? Status::passed : bad, std::move(detail)});
      };
      {
        const double v = ms.value(cs.gate.metric);
        const Worst& w = ms.worst(cs.gate.metric == Metric::nmse ? Metric::abs : cs.gate.metric);
        add("gate", v <= cs.gate.max,
            fmt::format("{} = {:.4g} (limit {:.4g}, {}) {}{}", to_string(cs.gate.metric), v, cs.gate.max, cs.gate.source,
                        worst_str(w), ms.nan_mismatches ? fmt::format("; {} NaN/inf mismatches", ms.nan_mismatches) : ""));
      }
      if (cs.expected) {
        if (cs.expected_tolerance_abs) {
          const LiteralError le = compare_literal(y, *cs.expected, p.out_dtype);
          add("expected", le.abs.value <= *cs.expected_tolerance_abs,
              fmt::format("max |y - expected| = {:.4g} (limit {:.4g}) at {} got {:.9g} expected {:.17g}", le.abs.value,
                          *cs.expected_tolerance_abs, coords_str(le.abs.coords), le.abs.got, static_cast<double>(le.abs.exact)));
        } else {
          // The literal values stand in for the exact ones, judged by the case's gate.
          reference::ExactOutput lit{ry.rounded, {}, ry.cond};
          for (double e : *cs.expected) lit.exact.push_back(e);
          const MetricSet ls = measure(y, lit, p.out_dtype, p.conv.acc_dtype);
          const double v = ls.value(cs.gate.metric);
          add("expected", v <= cs.gate.max,
              fmt::format("vs literal values ({}:{}): {} = {:.4g} (limit {:.4g}) {}", cs.file, cs.expected_line,
                          to_string(cs.gate.metric), v, cs.gate.max, worst_str(ls.worst(cs.gate.metric == Metric::nmse ? Metric::abs : cs.gate.metric))));
        }
      }
      for (std::size_t k = 0; k < cs.properties.size(); ++k) {
        const Property& pr = cs.properties[k];
        const bool inv = pr.kind == Property::Kind::invariant_under;
        const std::string pname = fmt::format("{} {}", inv ? "invariant_under" : "changes_under", pr.transform.str());
        if (!prop_ref[k]) {
          Problem q = pr.transform.apply(p);
          auto qr = reference::evaluate_exact(q);
          prop_ref[k].emplace(std::move(q), std::move(qr));
        }
        const auto& [q, qref] = *prop_ref[k];
        Outputs qo;
        try {
          qo = be->run(q, {});
          check_outputs(q, qo, qref);
        } catch (const std::exception& e) {
          r.checks.push_back({pname, Status::error, fmt::format("{}: {}", be->name(), e.what())});
          continue;
        }
        // allowed_i: each evaluation within the gate of its own exact value.
        const Tensor& y2 = qo.at("y");
        const auto& r1 = ry; const auto& r2 = qref.at("y");
        const long double u = unit_roundoff(p.conv.acc_dtype);
        double max_diff = 0, max_exact = 0;
        std::int64_t at = -1, nan_diff = 0;
        for (std::int64_t i = 0; i < y.size(); ++i) {
          const double a = y.get(i), b = y2.get(i);
          if (std::isnan(a) || std::isnan(b)) { nan_diff += std::isnan(a) != std::isnan(b); continue; }
          const long double e1 = r1.exact[i], e2 = r2.exact[i];
          const long double allowed = cs.gate.max * (ulp(p.out_dtype, e1) / 2 + u * r1.cond[i]) +
                                      cs.gate.max * (ulp(p.out_dtype, e2) / 2 + u * r2.cond[i]);
          const double dv = static_cast<double>(std::fabs(static_cast<long double>(a) - b) / allowed);
          const double de = static_cast<double>(std::fabs(e1 - e2) / allowed);
          if (dv > max_diff || at < 0) { max_diff = dv; at = i; }
          max_exact = std::max(max_exact, de);
        }
        const auto coords = at >= 0 ? coords_str(unravel(y.shape(), at)) : "[]";
        if (inv) {
          // The exact outputs must agree for the property to be testable on these inputs.
          if (max_exact > 0.5) {
            r.checks.push_back({pname, Status::mistrusted,
                                fmt::format("exact outputs differ by {:.3g} budgets: the rounded inputs break the invariance", max_exact)});
          } else {
            add(pname, max_diff <= 1 && nan_diff == 0,
                fmt::format("max |y(Tx) - y(x)| = {:.3g} budgets at {}{}", max_diff, coords, nan_diff ? fmt::format(", {} NaN differences", nan_diff) : ""));
          }
        } else {
          if (max_exact <= 1) {
            r.checks.push_back({pname, Status::mistrusted,
                                fmt::format("exact outputs differ by only {:.3g} budgets: the case cannot show a change", max_exact)});
          } else {
            add(pname, max_diff > 1 || nan_diff > 0,
                fmt::format("max |y(Tx) - y(x)| = {:.3g} budgets (exact: {:.3g}) at {}", max_diff, max_exact, coords));
          }
        }
      }
      r.status = Status::passed;
      for (auto& c : r.checks) if (severity(c.status) > severity(r.status)) r.status = c.status;
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (r.status == Status::failed && !opt.dump_dir.empty()) {
        namespace fs = std::filesystem;
        std::string bn = be->name();
        for (char& ch : bn) if (ch == ':' || ch == '/') ch = '_';
        const fs::path dir = fs::path(opt.dump_dir) / fmt::format("{}__{}", cs.name, bn);
        fs::create_directories(dir);
        for (auto& [name, t] : p.inputs) write_npy((dir / (name + ".npy")).string(), t.to_doubles(), t.shape());
        write_npy((dir / "y.npy").string(), y.to_doubles(), y.shape());
        std::vector<double> ex(ry.exact.begin(), ry.exact.end());
        write_npy((dir / "exact.npy").string(), ex, y.shape());
        write_npy((dir / "exact_rounded.npy").string(), ry.rounded.to_doubles(), y.shape());
      }
      results.push_back(std::move(r));
    }
  }
  return results;
}

int exit_code(const std::vector<CaseResult>& results) {
  bool failed = false, error = false;
  for (auto& r : results) {
    failed = failed || r.status == Status::failed;
    error = error || r.status == Status::error;
  }
  return error ? 3 : failed ? 1 : 0;
}

}  // namespace normcheck
