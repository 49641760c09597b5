#include "checks/metrics.hpp"

#include <algorithm>
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

long double quantized_stab(long double e, long double step, long double kernel) {
  const long double half = step / 2;
  if (e <= half) return e / half;
  if (!(kernel > 0) || !std::isfinite(kernel)) return HUGE_VALL;
  return 1 + (e - half) / kernel;
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
  const long double max_finite = format_info(out).max_finite;
  const bool quantized = is_quantized(out);
  long double se = 0, sr = 0;
  const std::int64_t n = got.size();
  s.count = n;
  for (std::int64_t i = 0; i < n; ++i) {
    const double y = got.get(i);
    long double r = ref.exact[static_cast<std::size_t>(i)];
    // An exact value beyond the output format's range has a non-finite correct rounding
    // (+-inf; NaN for fp8_e4m3fn): that is the value to return (a saved rstd of a subnormal
    // row in binary32).
    if (std::isfinite(r) && std::fabs(r) > max_finite && !std::isfinite(round_to(out, r))) r = round_to(out, r);
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
    const long double u = ulp(out, std::isfinite(r) ? r : 0.0L);
    const long double c = ref.cond[static_cast<std::size_t>(i)];
    const long double denom = u / 2 + u_acc * (std::isfinite(c) ? c : 0.0L);
    if (could_exceed(s.abs, e, 1)) update(s.abs, static_cast<double>(e), i, y, r);
    if (mismatch || ar == 0 || could_exceed(s.rel, e, ar))
      update(s.rel, static_cast<double>(mismatch ? HUGE_VALL : e == 0 ? 0 : (ar == 0 ? HUGE_VALL : e / ar)), i, y, r);
    if (could_exceed(s.ulp, e, u)) update(s.ulp, static_cast<double>(e / u), i, y, r);
    if (quantized || could_exceed(s.stab, e, denom))
      update(s.stab, static_cast<double>(e == 0 ? 0 : quantized ? quantized_stab(e, u, u_acc * c) : e / denom), i, y, r);
    if (std::isfinite(r) && !mismatch) { se += e * e; sr += r * r; }
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
