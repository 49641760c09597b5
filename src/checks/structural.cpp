#include "checks/structural.hpp"

#include "checks/budget.hpp"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace normcheck {

namespace {

/// One side of the product: the backend's value, the exact value and the allowance E_i.
struct Side {
  const Tensor* got = nullptr;                  // null: the constant 1 (sums_to_zero)
  const reference::ExactOutput* exact = nullptr;  // null: an input (exact, E = 0)
  long double value(std::int64_t i) const { return got ? got->get(i) : 1.0L; }
  long double exact_value(std::int64_t i) const {
    return exact ? exact->exact_at(static_cast<std::size_t>(i)) : value(i);
  }
};

}  // namespace

CheckResult check_structural(const Structural& s, const Problem& p, const Outputs& out,
                             const reference::ExactOutputs& ref, const Gate& gate) {
  const double G = gate.metric == Metric::stab ? gate.max : default_gate(p).max;
  auto side = [&](const std::string& name) {
    Side sd;
    if (name.empty()) return sd;
    if (auto it = ref.find(name); it != ref.end()) {
      sd.got = &out.at(name);
      sd.exact = &it->second;
    } else {
      sd.got = p.input(name);
    }
    return sd;
  };
  const Side a = side(s.a), b = side(s.b);
  // The magnitudes as kept (binary32 toward zero: the sum's budget is then stricter), or
  // their upper bounds (`upper`: whether a group can show the property at all, which a larger
  // budget makes stricter; spec/exact.hpp CondMagnitudes).
  auto allowance = [&](const Side& sd, std::int64_t i, bool upper) -> long double {
    if (!sd.exact) return 0;
    const auto k = static_cast<std::size_t>(i);
    const long double e = sd.exact->exact_at(k);
    const double c = upper ? sd.exact->cond.upper(k) : sd.exact->cond[k];
    return stab_allowance(G, p.out_dtype, e, kernel_unit(p.conv.acc_dtype, c, e));
  };
  const ReductionLayout l = group_layout(p);
  const auto m = static_cast<long double>(l.member.size());
  double worst = 0, worst_exact = 0;
  long double worst_sum = 0, worst_budget = 0;
  std::int64_t worst_at = -1, exact_at = -1, discriminating = 0, judged = 0;
  for (std::size_t g = 0; g < l.base.size(); ++g) {
    long double sum = 0, sum_exact = 0, mag = 0, mag_got = 0, budget = 0, budget_upper = 0;
    bool nan_exact = false;
    for (auto off : l.member) {
      const std::int64_t i = l.base[g] + off;
      const long double ea = a.exact_value(i), eb = b.exact_value(i);
      if (std::isnan(ea) || std::isnan(eb) || std::isinf(ea) || std::isinf(eb)) { nan_exact = true; break; }
      const long double ga = a.value(i), gb = b.value(i);
      const long double Ea = allowance(a, i, false), Eb = allowance(b, i, false);
      const long double Ua = allowance(a, i, true), Ub = allowance(b, i, true);
      sum += ga * gb;
      sum_exact += ea * eb;
      mag += std::fabs(ea * eb);
      mag_got += std::fabs(ga * gb);
      budget += Ea * std::fabs(eb) + std::fabs(ea) * Eb + Ea * Eb;
      budget_upper += Ua * std::fabs(eb) + std::fabs(ea) * Ub + Ua * Ub;
    }
    if (nan_exact) continue;  // a group holding NaN/inf has no sum to speak of
    ++judged;
    const long double slack = (m + 2) * 0x1p-62L * (mag + mag_got);
    const long double limit = budget + slack;
    if (mag > budget_upper) ++discriminating;
    const double re = static_cast<double>(std::fabs(sum_exact) / limit);
    if (re > worst_exact || exact_at < 0) { worst_exact = re; exact_at = static_cast<std::int64_t>(g); }
    const double rv = std::isnan(sum) ? HUGE_VAL : static_cast<double>(std::fabs(sum) / limit);
    if (rv > worst || worst_at < 0) {
      worst = rv; worst_at = static_cast<std::int64_t>(g); worst_sum = sum; worst_budget = limit;
    }
  }
  CheckResult r;
  r.name = s.str();
  auto where = [&](std::int64_t g) {
    return g < 0 ? std::string("[]") : fmt::format("[{}]", fmt::join(unravel(p.x().shape(), l.base[static_cast<std::size_t>(g)]), ","));
  };
  if (judged == 0 || discriminating == 0) {
    r.status = Status::mistrusted;
    r.detail = judged == 0 ? "every group holds NaN or inf"
                           : "no group's terms exceed its budget (e.g. an all-zero gradient): the case cannot show the property";
    return r;
  }
  if (worst_exact > 0.5) {
    r.status = Status::failed;
    r.detail = fmt::format("the property is false in exact arithmetic: the exact sum of the group at {} is {:.3g} budgets "
                           "(the case claims a structure the op does not have, e.g. orthogonality with eps > 0)",
                           where(exact_at), worst_exact);
    return r;
  }
  r.status = worst <= 1 ? Status::passed : Status::failed;
  r.detail = fmt::format("max |sum| = {:.3g} budgets ({:.4Lg}, budget {:.4Lg}, G = {:.4g}) in the group at {}", worst, worst_sum,
                         worst_budget, G, where(worst_at));
  return r;
}

}  // namespace normcheck
