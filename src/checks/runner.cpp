#include "checks/runner.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/structural.hpp"
#include "core/tensor_file.hpp"
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
  return fmt::format("at {}{} got {:.17g} exact {:.17Lg}", w.output.empty() || w.output == "y" ? "" : w.output,
                     coords_str(w.coords), w.got, w.exact);
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

std::string shell_quote(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=+,@%-") == std::string::npos;
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
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
      r.repro = fmt::format("{} run {} --case {} --backend {}", shell_quote(opt.program), shell_quote(cs.file),
                            shell_quote(cs.name), shell_quote(be->name()));
      const auto t0 = std::chrono::steady_clock::now();
      if (auto why = be->unavailable()) {
        r.status = Status::skipped; r.reason = *why;
        results.push_back(std::move(r));
        continue;
      }
      if (p.conv.direction == Direction::backward && !be->supports_backward()) {
        r.status = Status::skipped; r.reason = fmt::format("{}: forward only (no backward)", be->name());
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
      // Every output the reference produces is measured and gated: the primary output first
      // (y; dx for a backward case), then the others by name (running stats, h, dgamma...).
      const std::string primary = primary_output(p);
      std::vector<std::string> onames{primary};
      for (auto& [name, v] : ref) if (name != primary) onames.push_back(name);
      for (auto& name : onames) r.output_metrics.emplace_back(name, measure(out.at(name), ref.at(name), p.out_dtype, p.conv.acc_dtype));
      r.metrics = merge_worst(r.output_metrics);
      const Tensor& y = out.at(primary);
      const reference::ExactOutput& ry = ref.at(primary);
      auto add = [&](std::string name, bool ok, std::string detail, Status bad = Status::failed) {
        r.checks.push_back({std::move(name), ok ? Status::passed : bad, std::move(detail)});
      };
      auto suffix = [&](const std::string& name) { return name == primary ? std::string() : " " + name; };
      const Metric wm = cs.gate.metric == Metric::nmse ? Metric::abs : cs.gate.metric;
      for (auto& [name, ms] : r.output_metrics) {
        const double v = ms.value(cs.gate.metric);
        // nmse is one number for the whole output: no worst element (the abs one is shown).
        const bool whole = cs.gate.metric == Metric::nmse;
        add("gate" + suffix(name), v <= cs.gate.max,
            fmt::format("{}{} = {:.4g} (limit {:.4g}, {}) {}{}{}", name == primary ? "" : name + ": ", to_string(cs.gate.metric), v,
                        cs.gate.max, cs.gate.source, whole ? "; max abs " : "", worst_str(ms.worst(wm)),
                        ms.nan_mismatches ? fmt::format("; {} NaN/inf mismatches", ms.nan_mismatches) : ""));
      }
      auto expect_literal = [&](const std::string& name, const std::vector<double>& values, int line) {
        const Tensor& got = out.at(name);
        const reference::ExactOutput& rr = ref.at(name);
        if (cs.expected_tolerance_abs) {
          const LiteralError le = compare_literal(got, values, p.out_dtype);
          add("expected" + suffix(name), le.abs.value <= *cs.expected_tolerance_abs,
              fmt::format("max |{} - expected| = {:.4g} (limit {:.4g}) at {} got {:.9g} expected {:.17g}", name, le.abs.value,
                          *cs.expected_tolerance_abs, coords_str(le.abs.coords), le.abs.got, static_cast<double>(le.abs.exact)));
        } else {
          // The literal values stand in for the exact ones, judged by the case's gate.
          reference::ExactOutput lit{rr.rounded, {}, rr.cond};
          for (double e : values) lit.exact.push_back(e);
          const MetricSet ls = measure(got, lit, p.out_dtype, p.conv.acc_dtype);
          const double v = ls.value(cs.gate.metric);
          add("expected" + suffix(name), v <= cs.gate.max,
              fmt::format("{} vs literal values ({}:{}): {} = {:.4g} (limit {:.4g}) {}", name, cs.file, line,
                          to_string(cs.gate.metric), v, cs.gate.max, worst_str(ls.worst(wm))));
        }
      };
      if (cs.expected) expect_literal(primary, *cs.expected, cs.expected_line);
      for (auto& [name, values] : cs.expected_outputs) expect_literal(name, values, cs.expected_outputs_line.at(name));
      for (std::size_t k = 0; k < cs.properties.size(); ++k) {
        const Property& pr = cs.properties[k];
        const bool inv = pr.kind == Property::Kind::invariant_under;
        const std::string pname = fmt::format("{} {}", inv ? "invariant_under" : "changes_under", pr.str());
        if (!prop_ref[k]) {
          Problem q = pr.transform.apply(p);
          auto qr = reference::evaluate_exact(q);
          prop_ref[k].emplace(std::move(q), std::move(qr));
        }
        const auto& [q, qref] = *prop_ref[k];
        if (auto why = be->unsupported(q, {})) {  // e.g. a recorded source has no output for Tx
          r.checks.push_back({pname, Status::skipped, *why});
          continue;
        }
        Outputs qo;
        try {
          qo = be->run(q, {});
          check_outputs(q, qo, qref);
        } catch (const std::exception& e) {
          r.checks.push_back({pname, Status::error, fmt::format("{}: {}", be->name(), e.what())});
          continue;
        }
        // allowed_i: each evaluation within the gate of its own exact value. Compared: the
        // property's outputs (default y), only the elements under its `observe` prefix. The
        // exact outputs decide first whether the property can be tested on these inputs.
        const long double u = unit_roundoff(p.conv.acc_dtype);
        double max_diff = 0, max_exact = 0;
        std::int64_t at = -1, exact_at = -1, nan_diff = 0, exact_nan_diff = 0, compared = 0;
        std::string at_output, exact_output;
        const std::vector<std::string> pouts = pr.outputs.empty() ? std::vector<std::string>{primary} : pr.outputs;
        for (const std::string& oname : pouts) {
          const Tensor& y1 = out.at(oname);
          const Tensor& y2 = qo.at(oname);
          const auto& r1 = ref.at(oname); const auto& r2 = qref.at(oname);
          for (std::int64_t i = 0; i < y1.size(); ++i) {
            if (!pr.observe.empty()) {
              const auto c = unravel(y1.shape(), i);
              bool in = true;
              for (std::size_t a = 0; a < pr.observe.size() && a < c.size(); ++a) in = in && (pr.observe[a] < 0 || pr.observe[a] == c[a]);
              if (!in) continue;
            }
            ++compared;
            const long double e1 = r1.exact[i], e2 = r2.exact[i];
            if (std::isnan(e1) || std::isnan(e2)) {
              if (std::isnan(e1) != std::isnan(e2) && exact_nan_diff++ == 0) { exact_at = i; exact_output = oname; }
              continue;
            }
            const long double allowed1 = cs.gate.max * (ulp(p.out_dtype, e1) / 2 + u * r1.cond[i]);
            const long double allowed = allowed1 + cs.gate.max * (ulp(p.out_dtype, e2) / 2 + u * r2.cond[i]);
            // Invariance is testable only where the exact outputs agree within the base input's own
            // budget (an ill-conditioned Tx must not make any difference look acceptable); a change
            // is certain only beyond both budgets.
            const double de = static_cast<double>(std::fabs(e1 - e2) / (inv ? allowed1 : allowed));
            if (de > max_exact && !exact_nan_diff) { max_exact = de; exact_at = i; exact_output = oname; }
            const double a = y1.get(i), b = y2.get(i);
            if (std::isnan(a) || std::isnan(b)) { nan_diff += std::isnan(a) != std::isnan(b); continue; }
            const double dv = static_cast<double>(std::fabs(static_cast<long double>(a) - b) / allowed);
            if (dv > max_diff || at < 0) { max_diff = dv; at = i; at_output = oname; }
          }
        }
        const auto where = [&](const std::string& o, std::int64_t i) {
          return i >= 0 ? (o == primary ? "" : o) + coords_str(unravel(out.at(o).shape(), i)) : std::string("[]");
        };
        const std::string exact_diff = exact_nan_diff
            ? fmt::format("{} elements NaN on one side only (first at {})", exact_nan_diff, where(exact_output, exact_at))
            : fmt::format("{:.3g} budgets at {}", max_exact, where(exact_output, exact_at));
        if (compared == 0) {
          r.checks.push_back({pname, Status::mistrusted, "no output element under the observe prefix"});
        } else if (inv) {
          if (exact_nan_diff || max_exact > 0.5) {
            if (pr.transform.exact_on(p))
              add(pname, false, fmt::format("the property is false in exact arithmetic: the exact outputs differ by {} "
                                            "(the case claims an invariance the op does not have)", exact_diff));
            else
              r.checks.push_back({pname, Status::mistrusted,
                                  fmt::format("the transformed inputs round (or overflow) in their dtype: the exact outputs differ by {}",
                                              exact_diff)});
          } else {
            add(pname, max_diff <= 1 && nan_diff == 0,
                fmt::format("max |y(Tx) - y(x)| = {:.3g} budgets at {}{}", max_diff, where(at_output, at),
                            nan_diff ? fmt::format(", {} NaN differences", nan_diff) : ""));
          }
        } else {
          if (!exact_nan_diff && max_exact <= 1) {
            r.checks.push_back({pname, Status::mistrusted,
                                fmt::format("the exact outputs differ by only {}: the case cannot show a change", exact_diff)});
          } else {
            add(pname, max_diff > 1 || nan_diff > 0,
                fmt::format("max |y(Tx) - y(x)| = {:.3g} budgets at {} (exact: {})", max_diff, where(at_output, at), exact_diff));
          }
        }
      }
      // Structural properties (expect.sums_to_zero, expect.orthogonal): checks/structural.cpp.
      for (const Structural& st : cs.structural) r.checks.push_back(check_structural(st, p, out, ref, cs.gate));
      r.status = Status::passed;
      for (auto& c : r.checks) if (severity(c.status) > severity(r.status)) r.status = c.status;
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (r.status == Status::failed && !opt.dump_dir.empty()) {
        // <dump_dir>/<case>__<backend>/{x,gamma,beta}.npy (inputs), y.npy (the backend's output),
        // exact.npy (the exact value rounded to binary64), exact_rounded.npy (rounded to the
        // output dtype): all float64, which holds every value of every dtype exactly.
        namespace fs = std::filesystem;
        std::string bn = fmt::format("{}__{}", cs.name, be->name());
        for (char& ch : bn)
          if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-' && ch != '.') ch = '_';
        const fs::path dir = fs::path(opt.dump_dir) / bn;
        try {
          fs::remove_all(dir);
          fs::create_directories(dir);
          for (auto& [name, t] : p.inputs) write_npy((dir / (name + ".npy")).string(), t.to_doubles(), t.shape());
          write_npy((dir / (primary + ".npy")).string(), y.to_doubles(), y.shape());  // y.npy (dx.npy backward)
          write_npy((dir / "exact.npy").string(), ry.exact_f64(), y.shape());
          write_npy((dir / "exact_rounded.npy").string(), ry.rounded.to_doubles(), y.shape());
          for (auto& [name, ro] : ref) {  // the other outputs: out_<name>.npy, out_<name>_exact.npy
            if (name == primary) continue;
            const Tensor& t = out.at(name);
            write_npy((dir / ("out_" + name + ".npy")).string(), t.to_doubles(), t.shape());
            write_npy((dir / ("out_" + name + "_exact.npy")).string(), ro.exact_f64(), t.shape());
          }
        } catch (const std::exception& e) {
          r.checks.push_back({"dump", Status::skipped, fmt::format("could not write {}: {}", dir.string(), e.what())});
        }
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
