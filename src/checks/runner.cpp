#include "checks/runner.hpp"

#include <chrono>

#include <fmt/format.h>

#include "checks/budget.hpp"
#include "ops/reference.hpp"

namespace normcheck {

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
    // Once per case, for the reference and every backend; borrowed: `cases` outlives vp and
    // every copy a backend or check makes during this iteration (none keeps one past it).
    const ValidProblem vp = validate_borrowed(cs.problem);
    const Problem& p = *vp;
    const ExactOutputs& ref = reference::evaluate_exact(vp);  // kept in vp: no copy
    const Gate gate = cs.gate ? *cs.gate : default_gate(p);
    auto checks = checks_for(cs);
    for (auto& be : backends) {
      if (!be->applies(vp, cs.recorded)) continue;
      CaseResult r;
      r.cs = &cs;
      r.backend = be->name();
      r.repro = fmt::format("{} run {} --case {} --backend {}", shell_quote(opt.program), shell_quote(cs.file),
                            shell_quote(cs.name), shell_quote(be->name()));
      const auto t0 = std::chrono::steady_clock::now();
      auto done = [&](const Evaluation* e) {
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        for (const auto& obs : opt.observers) obs(r, e);
        results.push_back(std::move(r));
      };
      std::optional<std::string> skip = declined(*be, p);
      if (!skip) skip = be->unsupported(vp, cs.recorded);
      if (skip) {
        r.status = Status::skipped;
        r.reason = *skip;
        done(nullptr);
        continue;
      }
      Outputs out;
      std::vector<std::string> not_returned;
      try {
        out = be->run(vp, cs.recorded);
        not_returned = check_outputs(p, out, ref);
      } catch (const std::exception& e) {
        r.status = Status::error;
        r.reason = fmt::format("{}: {}", be->name(), e.what());
        done(nullptr);
        continue;
      }
      // Every output the reference produces is measured and gated, in its own dtype: the
      // primary output first (y; dx for a backward case), then the others by name (running
      // stats, h, dgamma, scale...); an optional output (saved statistics) when returned.
      const std::string primary = primary_output(p);
      r.output_metrics.emplace_back(primary, measure(out.at(primary), ref.at(primary), output_dtype(p, primary), p.conv.acc_dtype));
      for (auto& [name, v] : ref)
        if (name != primary && out.count(name))
          r.output_metrics.emplace_back(name, measure(out.at(name), v, output_dtype(p, name), p.conv.acc_dtype));
      // The summary (report rows, side-by-side) covers the outputs every backend returns, so
      // backends compare like with like; a returned saved statistic keeps its own metrics in
      // output_metrics and its own gate check.
      std::vector<std::pair<std::string, MetricSet>> required;
      for (const auto& om : r.output_metrics)
        if (!is_optional_output(p, om.first)) required.push_back(om);
      r.metrics = merge_worst(required);
      r.gate = gate;
      const Evaluation e{cs, vp, ref, gate, *be, out, r.output_metrics, not_returned};
      for (auto& c : checks) c->judge(e, r.checks);
      r.status = Status::passed;
      for (auto& c : r.checks)
        if (severity(c.status) > severity(r.status)) r.status = c.status;
      done(&e);
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
