#include "checks/check.hpp"

#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/structural.hpp"
#include "ops/reference.hpp"

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

std::string coords_str(const std::vector<std::int64_t>& c) { return fmt::format("[{}]", fmt::join(c, ",")); }

std::string worst_str(const Worst& w) {
  // A NaN prints as "nan" whatever its sign bit (no value depends on it; the two reference
  // paths' NaNs differ there, and their reports should not).
  const double got = std::isnan(w.got) ? std::fabs(w.got) : w.got;
  const long double exact = std::isnan(w.exact) ? std::fabs(w.exact) : w.exact;
  return fmt::format("at {}{} got {:.17g} exact {:.17Lg}", w.output.empty() || w.output == "y" ? "" : w.output,
                     coords_str(w.coords), got, exact);
}

std::vector<std::string> check_outputs(const Problem& p, const Outputs& o, const ExactOutputs& ref) {
  std::vector<std::string> not_returned;
  for (auto& [name, r] : ref) {
    auto it = o.find(name);
    if (it == o.end()) {
      if (!is_optional_output(p, name)) throw BackendError(fmt::format("output '{}' missing", name));
      not_returned.push_back(name);
      continue;
    }
    if (it->second.shape() != r.shape)
      throw BackendError(fmt::format("output '{}' has shape {}, expected {}", name, shape_str(it->second.shape()),
                                     shape_str(r.shape)));
    const DType want = output_dtype(p, name);
    if (it->second.dtype() != want)
      throw BackendError(fmt::format("output '{}' has dtype {}, expected {}", name, dtype_name(it->second.dtype()),
                                     dtype_name(want)));
  }
  // An output the op does not define is a misnamed one ("Mean" for "mean"): the value under
  // its right name was never checked (false-pass audit: a worker's saved statistics under
  // another name passed as "not returned").
  for (auto& [name, t] : o)
    if (!ref.count(name)) {
      std::string names;
      for (auto& [n, r] : ref) names += (names.empty() ? "" : ", ") + n;
      throw BackendError(fmt::format("output '{}' is not an output of {} here (its outputs: {})", name, to_string(p.op), names));
    }
  return not_returned;
}

namespace {

CheckResult result(std::string name, bool ok, std::string detail) {
  return {std::move(name), ok ? Status::passed : Status::failed, std::move(detail)};
}

/// " dgamma" for a name other than the primary output.
std::string suffix(const Evaluation& e, const std::string& name) {
  return name == primary_output(*e.problem) ? std::string() : " " + name;
}

/// The worst element of the gate's metric (nmse is one number: its abs worst is shown).
Metric worst_metric(const Gate& g) { return g.metric == Metric::nmse ? Metric::abs : g.metric; }

/// gate: each output's metric against the exact reference.
class GateCheck final : public Check {
 public:
  void judge(const Evaluation& e, std::vector<CheckResult>& out) override {
    const std::string primary = primary_output(*e.problem);
    const bool whole = e.gate.metric == Metric::nmse;
    for (const auto& [name, ms] : e.output_metrics) {
      const double v = ms.value(e.gate.metric);
      // The primary output's line also names the optional outputs the backend left out, so
      // a saved statistic that was not checked is never mistaken for one that passed.
      const std::string missing = name == primary && !e.not_returned.empty()
          ? fmt::format("; not returned (optional, not checked): {}", fmt::join(e.not_returned, ", "))
          : std::string();
      out.push_back(result("gate" + suffix(e, name), v <= e.gate.max,
                           fmt::format("{}{} = {:.4g} (limit {:.4g}, {}) {}{}{}{}", name == primary ? "" : name + ": ",
                                       to_string(e.gate.metric), v, e.gate.max, e.gate.source, whole ? "; max abs " : "",
                                       worst_str(ms.worst(worst_metric(e.gate))),
                                       ms.nan_mismatches ? fmt::format("; {} NaN/inf mismatches", ms.nan_mismatches) : "",
                                       missing)));
    }
  }
};

/// expected: an output against the case's literal values (judged by the gate, or by
/// tolerance_abs when the case gives one).
class LiteralCheck final : public Check {
 public:
  LiteralCheck(std::string output, const std::vector<double>& values, int line)
      : output_(std::move(output)), values_(values), line_(line) {}
  void judge(const Evaluation& e, std::vector<CheckResult>& out) override {
    const Problem& p = *e.problem;
    if (!e.outputs.count(output_)) {  // an optional output the backend did not return
      out.push_back({"expected" + suffix(e, output_), Status::skipped,
                     fmt::format("{} not returned by {} (optional output)", output_, e.backend.name())});
      return;
    }
    const Tensor& got = e.outputs.at(output_);
    const ExactOutput& rr = e.exact.at(output_);
    const DType odt = output_dtype(p, output_);
    if (e.cs.expected_tolerance_abs) {
      const double tol = *e.cs.expected_tolerance_abs;
      const LiteralError le = compare_literal(got, values_, odt);
      out.push_back(result("expected" + suffix(e, output_), le.abs.value <= tol,
                           fmt::format("max |{} - expected| = {:.4g} (limit {:.4g}) at {} got {:.9g} expected {:.17g}", output_,
                                       le.abs.value, tol, coords_str(le.abs.coords), le.abs.got,
                                       static_cast<double>(le.abs.exact))));
      return;
    }
    // The literal values stand in for the exact ones, judged by the case's gate.
    ExactOutput lit = ExactOutput::of_values(rr.dtype, rr.shape, std::vector<long double>(values_.begin(), values_.end()), rr.cond.to_doubles());
    const MetricSet ls = measure(got, lit, odt, p.conv.acc_dtype);
    const double v = ls.value(e.gate.metric);
    out.push_back(result("expected" + suffix(e, output_), v <= e.gate.max,
                         fmt::format("{} vs literal values ({}:{}): {} = {:.4g} (limit {:.4g}) {}", output_, e.cs.file, line_,
                                     to_string(e.gate.metric), v, e.gate.max, worst_str(ls.worst(worst_metric(e.gate))))));
  }

 private:
  std::string output_;
  const std::vector<double>& values_;
  int line_;
};

/// invariant_under / changes_under: the backend's outputs on the transformed input against
/// its own outputs on the base input, each within its gate of its own exact value. The exact
/// outputs decide first whether the property can be tested on these inputs.
class PropertyCheck final : public Check {
 public:
  explicit PropertyCheck(const Property& pr) : pr_(pr) {}
  void judge(const Evaluation& e, std::vector<CheckResult>& out) override {
    const Problem& p = *e.problem;
    const bool inv = pr_.kind == Property::Kind::invariant_under;
    const std::string pname = fmt::format("{} {}", inv ? "invariant_under" : "changes_under", pr_.str());
    if (!transformed_) {  // once per case, shared by every backend
      // The parser checks the transformed problem; one made otherwise (a test, the API)
      // that is not valid fails this check, never the whole run.
      std::optional<ValidProblem> q;
      try {
        q = validate(pr_.transform.apply(p));
      } catch (const SpecError& ex) {
        out.push_back({pname, Status::failed, fmt::format("the transformed problem is not valid: {}: {}", ex.field, ex.what())});
        return;
      }
      ExactOutputs qref = reference::evaluate_exact(*q);
      transformed_.emplace(std::move(*q), std::move(qref));
      moves_ = pr_.transform.moves(p);
    }
    const auto& [q, qref] = *transformed_;
    if (auto why = e.backend.unsupported(q, {})) {  // e.g. a recorded source has no output for Tx
      out.push_back({pname, Status::skipped, *why});
      return;
    }
    Outputs qo;
    try {
      qo = e.backend.run(q, {});
      check_outputs(*q, qo, qref);
    } catch (const std::exception& ex) {
      out.push_back({pname, Status::error, fmt::format("{}: {}", e.backend.name(), ex.what())});
      return;
    }
    const std::string primary = primary_output(p);
    for (const std::string& oname : pr_.outputs)
      if (!e.outputs.count(oname) || !qo.count(oname)) {  // optional outputs the backend left out
        out.push_back({pname, Status::skipped, fmt::format("{} not returned by {} (optional output)", oname, e.backend.name())});
        return;
      }
    double max_diff = 0, max_exact = 0;
    std::int64_t at = -1, exact_at = -1, nan_diff = 0, exact_nan_diff = 0, compared = 0;
    std::string at_output, exact_output;
    const std::vector<std::string> pouts = pr_.outputs.empty() ? std::vector<std::string>{primary} : pr_.outputs;
    for (const std::string& oname : pouts) {
      const Tensor& y1 = e.outputs.at(oname);
      const Tensor& y2 = qo.at(oname);
      const auto& r1 = e.exact.at(oname);
      const auto& r2 = qref.at(oname);
      for (std::int64_t i = 0; i < y1.size(); ++i) {
        if (!pr_.observe.empty()) {
          const auto c = unravel(y1.shape(), i);
          bool in = true;
          for (std::size_t a = 0; a < pr_.observe.size() && a < c.size(); ++a) in = in && (pr_.observe[a] < 0 || pr_.observe[a] == c[a]);
          if (!in) continue;
        }
        ++compared;
        const long double e1 = r1.exact_at(i), e2 = r2.exact_at(i);
        if (std::isnan(e1) || std::isnan(e2)) {
          if (std::isnan(e1) != std::isnan(e2) && exact_nan_diff++ == 0) { exact_at = i; exact_output = oname; }
          continue;
        }
        const DType odt = output_dtype(p, oname);
        // The magnitudes as kept (binary32 toward zero) where a smaller allowance is stricter
        // (invariance); their upper bounds where a larger one is (a change must exceed it:
        // spec/exact.hpp CondMagnitudes).
        const auto k = static_cast<std::size_t>(i);
        const double c1 = inv ? r1.cond[k] : r1.cond.upper(k), c2 = inv ? r2.cond[k] : r2.cond.upper(k);
        const long double allowed1 = stab_allowance(e.gate.max, odt, e1, kernel_unit(p.conv.acc_dtype, c1, e1));
        const long double allowed = allowed1 + stab_allowance(e.gate.max, odt, e2, kernel_unit(p.conv.acc_dtype, c2, e2));
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
      return i >= 0 ? (o == primary ? "" : o) + coords_str(unravel(e.outputs.at(o).shape(), i)) : std::string("[]");
    };
    const std::string exact_diff = exact_nan_diff
        ? fmt::format("{} elements NaN on one side only (first at {})", exact_nan_diff, where(exact_output, exact_at))
        : fmt::format("{:.3g} budgets at {}", max_exact, where(exact_output, exact_at));
    if (compared == 0) {
      out.push_back({pname, Status::mistrusted, "no output element under the observe prefix"});
    } else if (!moves_) {
      out.push_back({pname, Status::mistrusted,
                     "the transform changes no input element once rounded to its dtype: y(Tx) = y(x) shows nothing"});
    } else if (inv) {
      if (exact_nan_diff || max_exact > 0.5) {
        if (pr_.transform.exact_on(p))
          out.push_back(result(pname, false, fmt::format("the property is false in exact arithmetic: the exact outputs differ by {} "
                                                         "(the case claims an invariance the op does not have)", exact_diff)));
        else
          out.push_back({pname, Status::mistrusted,
                         fmt::format("the transformed inputs round (or overflow) in their dtype: the exact outputs differ by {}", exact_diff)});
      } else {
        out.push_back(result(pname, max_diff <= 1 && nan_diff == 0,
                             fmt::format("max |y(Tx) - y(x)| = {:.3g} budgets at {}{}", max_diff, where(at_output, at),
                                         nan_diff ? fmt::format(", {} NaN differences", nan_diff) : "")));
      }
    } else if (!exact_nan_diff && max_exact <= 1) {
      out.push_back({pname, Status::mistrusted, fmt::format("the exact outputs differ by only {}: the case cannot show a change", exact_diff)});
    } else {
      out.push_back(result(pname, max_diff > 1 || nan_diff > 0,
                           fmt::format("max |y(Tx) - y(x)| = {:.3g} budgets at {} (exact: {})", max_diff, where(at_output, at), exact_diff)));
    }
  }

 private:
  const Property& pr_;
  std::optional<std::pair<ValidProblem, ExactOutputs>> transformed_;
  bool moves_ = true;  ///< whether the transform changes any input element (Transform::moves)
};

/// expect.sums_to_zero / expect.orthogonal (checks/structural.hpp).
class StructuralCheck final : public Check {
 public:
  explicit StructuralCheck(const Structural& s) : s_(s) {}
  void judge(const Evaluation& e, std::vector<CheckResult>& out) override {
    out.push_back(check_structural(s_, *e.problem, e.outputs, e.exact, e.gate));
  }

 private:
  const Structural& s_;
};

}  // namespace

std::vector<std::unique_ptr<Check>> checks_for(const Case& cs) {
  std::vector<std::unique_ptr<Check>> v;
  v.push_back(std::make_unique<GateCheck>());
  if (cs.expected) v.push_back(std::make_unique<LiteralCheck>(primary_output(cs.problem), *cs.expected, cs.expected_line));
  for (auto& [name, values] : cs.expected_outputs)
    v.push_back(std::make_unique<LiteralCheck>(name, values, cs.expected_outputs_line.at(name)));
  for (const Property& pr : cs.properties) v.push_back(std::make_unique<PropertyCheck>(pr));
  for (const Structural& st : cs.structural) v.push_back(std::make_unique<StructuralCheck>(st));
  return v;
}

}  // namespace normcheck
