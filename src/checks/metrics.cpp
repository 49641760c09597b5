#include "checks/metrics.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace normcheck {

const Worst& MetricSet::worst(Metric m) const {
  switch (m) {
    case Metric::abs: return abs;
    case Metric::rel: return rel;
    case Metric::ulp: return ulp;
    case Metric::stab: return stab;
    case Metric::nmse: return abs;
  }
  return abs;
}

long double stab_of(long double e, long double step, long double kernel) {
  const long double half = step / 2;
  if (e <= half) return e / half;
  if (!(kernel > 0) || !std::isfinite(kernel)) return HUGE_VALL;
  return 1 + (e - half) / kernel;
}

long double kernel_unit(DType acc, double c, long double r) {
  const long double cc = std::isnan(c) ? 0.0L : std::isinf(c) ? (std::isfinite(r) ? std::fabs(r) : 0.0L) : std::fabs(static_cast<long double>(c));
  return unit_roundoff(acc) * cc + ulp(acc, 0.0L) / 2;
}

long double stab_allowance(double G, DType out, long double r, long double kernel) {
  if (!std::isfinite(r)) return 0;
  const long double k = std::isfinite(kernel) && kernel > 0 ? kernel : 0.0L;
  if (G <= 1) return G * ulp(out, r) / 2;
  const long double delta = (G - 1) * k;
  return ulp(out, std::fabs(r) + delta) / 2 + delta;
}

namespace {
void update(Worst& w, double v, std::int64_t i, double got, long double exact) {
  if (w.index < 0 || v > w.value || (std::isnan(v) && !std::isnan(w.value))) {
    w.value = v; w.index = i; w.got = got; w.exact = exact;
  }
}

/// Whether the metric value e / d of an element (d > 0; rounded to double by update) could
/// be chosen over w's: false only where e <= w d (1 - 2^-50), so e / d < w and its double
/// is at most w, which update() would not take (a larger value wins, the first of equals
/// stays). The test lets measure skip the divisions and updates of the elements that
/// cannot be the worst (nearly all of them); NaN anywhere answers true (update decides).
bool could_exceed(const Worst& w, long double e, long double d) {
  return w.index < 0 || !(e <= static_cast<long double>(w.value) * d * (1 - 0x1p-50L));
}
}  // namespace

MetricSet measure(const Tensor& got, const reference::ExactOutput& ref, DType out, DType acc) {
  MetricSet s;
  const long double u_acc = unit_roundoff(acc);
  const long double eta_acc = ulp(acc, 0.0L) / 2;  // kernel_unit's underflow term
  const long double max_finite = format_info(out).max_finite;
  const bool quantized = is_quantized(out);
  const UlpOf ulp_out(out);
  long double se = 0, sr = 0;
  const std::int64_t n = got.size();
  s.count = n;
  // Every metric of element i (y the backend's value, r the exact one); `sums`: whether it
  // also adds to nmse's sums (the fast loop below adds the elements it screens itself).
  const auto element = [&](std::int64_t i, double y, long double r, bool sums) {
    // An exact value beyond the output format's range has a non-finite correct rounding
    // (+-inf; NaN for fp8_e4m3fn): that is the value to return (a saved rstd of a subnormal
    // row in binary32).
    // Taken from the reference's own rounding of the exact value when it has one in this
    // dtype: the long double r may itself have rounded up to the overflow threshold (an exact
    // 2^128 - 2^103 - 0.76 is 2^128 - 2^103 as a long double, whose rounding is inf; the
    // correct rounding is max_finite; found by a hunt).
    if (std::isfinite(r) && std::fabs(r) > max_finite) {
      const double rr = ref.dtype == out ? ref.rounded_at(static_cast<std::size_t>(i)) : round_to(out, r);
      if (!std::isfinite(rr)) r = rr;
    }
    long double e;
    bool mismatch = false;
    if (std::isnan(r) || std::isnan(y)) {
      mismatch = std::isnan(r) != std::isnan(y);
      e = mismatch ? HUGE_VALL : 0;
    } else if (std::isinf(r) || std::isinf(y)) {
      mismatch = !(r == y);
      e = mismatch ? HUGE_VALL : 0;
    } else {
      e = std::fabs(static_cast<long double>(y) - r);
    }
    s.nan_mismatches += mismatch;
    const long double ar = std::fabs(r);
    const long double u = ulp_out(std::isfinite(r) ? r : 0.0L);
    const long double c = ref.cond[static_cast<std::size_t>(i)];
    const long double kernel = kernel_unit(acc, c, r);
    if (could_exceed(s.abs, e, 1)) update(s.abs, static_cast<double>(e), i, y, r);
    if (mismatch || ar == 0 || could_exceed(s.rel, e, ar))
      update(s.rel, static_cast<double>(mismatch ? HUGE_VALL : e == 0 ? 0 : (ar == 0 ? HUGE_VALL : e / ar)), i, y, r);
    if (could_exceed(s.ulp, e, u)) update(s.ulp, static_cast<double>(e / u), i, y, r);
    if (e == 0) {
      if (s.stab.index < 0) update(s.stab, 0, i, y, r);
    } else {
      // The step at the larger of |r| and |y| (stab_of); a non-finite y is an infinite e.
      const long double step = std::isfinite(y) && std::fabs(y) > ar && std::isfinite(r) ? ulp_out(static_cast<long double>(y)) : u;
      update(s.stab, static_cast<double>(stab_of(e, step, kernel)), i, y, r);
    }
    if (sums && std::isfinite(r) && !mismatch) { se += e * e; sr += r * r; }
  };
  // The screen: a finite element (y, r within the format's range, c) whose error e satisfies
  // e <= t d for every metric's divisor d and threshold t = worst (1 - 2^-50) cannot change
  // a worst value (could_exceed), so it only adds to nmse's sums; for stab, an element with
  // stab_of(e, u_low, u_acc c) <= t (stab_of only grows as the step shrinks). The ulp and
  // stab steps are taken at their lower bounds u >= |r| 2^-p (2^(e-p) for |r| < 2^e; the
  // subnormal spacing below min_normal) so that most elements need no ulp at all; an
  // element the bound cannot screen gets every metric exactly (element()). Quantized
  // outputs (int8's step is 1, not a multiple of |r|): element().
  constexpr long double kShrink = 1 - 0x1p-50L;
  const auto threshold = [&](const Worst& w) { return w.index < 0 ? -1.0L : static_cast<long double>(w.value) * kShrink; };
  const long double ulp_scale = std::ldexp(1.0L, -format_info(out).precision);  // u >= |r| ulp_scale
  long double t_abs = -1, t_rel = -1, t_ulp = -1, t_stab = -1;
  for (std::int64_t i = 0; i < n; ++i) {
    const double y = got.get(i);
    const long double r = ref.exact_at(static_cast<std::size_t>(i));
    const double c = ref.cond[static_cast<std::size_t>(i)];
    const long double ar = std::fabs(r);
    if (!quantized && ar <= max_finite && std::fabs(y) <= DBL_MAX && std::fabs(c) <= DBL_MAX) {
      const long double e = std::fabs(static_cast<long double>(y) - r);
      se += e * e;
      sr += r * r;
      const long double u_low = ar * ulp_scale;
      const long double h_low = u_low / 2;
      const bool stab_below = e <= h_low ? e <= t_stab * h_low : e - h_low <= (t_stab - 1) * (u_acc * c + eta_acc);
      if (e <= t_abs && e <= t_rel * ar && e <= t_ulp * u_low && stab_below) continue;
      element(i, y, r, false);
    } else {
      element(i, y, r, true);
    }
    t_abs = threshold(s.abs);
    t_rel = threshold(s.rel);
    t_ulp = threshold(s.ulp);
    t_stab = threshold(s.stab);
  }
  // A non-finite mismatch (NaN for a number, inf for a finite value, a number for NaN) is an
  // infinite error in every metric, nmse included: nmse skipped non-finite exact elements,
  // so an nmse gate passed a backend returning 0 where the exact result is NaN (issue 19).
  s.nmse = static_cast<double>(s.nan_mismatches > 0 ? HUGE_VALL : se == 0 ? 0 : (sr == 0 ? HUGE_VALL : se / sr));
  for (Worst* w : {&s.abs, &s.rel, &s.ulp, &s.stab})
    if (w->index >= 0) w->coords = unravel(got.shape(), w->index);
  return s;
}

MetricSet merge_worst(const std::vector<std::pair<std::string, MetricSet>>& per_output) {
  MetricSet m;
  bool first = true;
  for (const auto& entry : per_output) {
    // Not a structured binding: clang before 16 cannot capture one in a lambda (P1091).
    const std::string& name = entry.first;
    const MetricSet& s = entry.second;
    auto pick = [&](Worst& into, const Worst& w) {
      if (first || w.value > into.value || (std::isnan(w.value) && !std::isnan(into.value))) {
        into = w;
        into.output = name;
      }
    };
    pick(m.abs, s.abs);
    pick(m.rel, s.rel);
    pick(m.ulp, s.ulp);
    pick(m.stab, s.stab);
    m.nmse = first ? s.nmse : std::max(m.nmse, s.nmse);
    m.count += s.count;
    m.nan_mismatches += s.nan_mismatches;
    first = false;
  }
  return m;
}

LiteralError compare_literal(const Tensor& got, const std::vector<double>& expected, DType out) {
  LiteralError le;
  for (std::int64_t i = 0; i < got.size(); ++i) {
    const double y = got.get(i), r = expected[static_cast<std::size_t>(i)];
    double e;
    if (std::isnan(r) || std::isnan(y)) e = std::isnan(r) == std::isnan(y) ? 0 : HUGE_VAL;
    else if (std::isinf(r) || std::isinf(y)) e = r == y ? 0 : HUGE_VAL;
    else e = std::fabs(y - r);
    update(le.abs, e, i, y, r);
    update(le.ulp, e == 0 ? 0 : e / ulp(out, std::isfinite(r) ? r : 0.0), i, y, r);
  }
  for (Worst* w : {&le.abs, &le.ulp})
    if (w->index >= 0) w->coords = unravel(got.shape(), w->index);
  return le;
}

}  // namespace normcheck
