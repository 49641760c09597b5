#include "checks/eps_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace normcheck {

double model_gain(EpsPlacement placement, double c, double eps, double v) noexcept {
  const double cv = c * v;
  double D = 0;
  switch (placement) {
    case EpsPlacement::inside_sqrt: D = std::sqrt(cv + eps); break;
    case EpsPlacement::outside_sqrt: D = std::sqrt(cv) + eps; break;
    case EpsPlacement::clamp_var: D = std::sqrt(std::fmax(cv, eps)); break;
    case EpsPlacement::clamp_norm: D = std::fmax(std::sqrt(cv), eps); break;
  }
  return D == 0 ? HUGE_VAL : 1.0 / D;
}

double gain_residual(const std::vector<GainSample>& samples, EpsPlacement placement, double c, double eps) {
  double ss = 0;
  std::size_t n = 0;
  for (const auto& s : samples) {
    if (!(s.g > 0) || !std::isfinite(s.g)) continue;
    const double mg = model_gain(placement, c, eps, s.v);
    const double r = std::isfinite(mg) ? std::log(s.g / mg) : HUGE_VAL;
    ss += r * r;
    ++n;
  }
  return n ? std::sqrt(ss / static_cast<double>(n)) : HUGE_VAL;
}

std::string shortest_decimal_in(double best, double lo, double hi) {
  if (lo == 0 && hi < 1e-300) return "0";
  for (int digits = 1; digits <= 17; ++digits) {
    const std::string s = fmt::format("{:.{}e}", best, digits - 1);
    const double v = std::strtod(s.c_str(), nullptr);
    if (v >= lo && v <= hi) return fmt::format("{}", v);
  }
  return fmt::format("{}", best);
}

std::vector<EpsFit> fit_eps_models(const std::vector<GainSample>& samples, std::int64_t m, double floor) {
  std::vector<GainSample> s;
  for (const auto& x : samples)
    if (x.g > 0 && std::isfinite(x.g) && x.v >= 0 && std::isfinite(x.v)) s.push_back(x);
  if (s.size() < 3) throw std::invalid_argument("fit_eps_models: fewer than 3 usable gain samples");
  if (m < 2) throw std::invalid_argument("fit_eps_models: m must be >= 2");
  constexpr double kLo = -30, kHi = 6, kStep = 0.005;
  std::vector<EpsFit> fits;
  for (EpsPlacement pl : {EpsPlacement::inside_sqrt, EpsPlacement::outside_sqrt, EpsPlacement::clamp_var,
                          EpsPlacement::clamp_norm}) {
    for (Variance var : {Variance::biased, Variance::unbiased}) {
      const double c = var == Variance::biased ? 1.0 : static_cast<double>(m) / static_cast<double>(m - 1);
      auto F = [&](double le) { return gain_residual(s, pl, c, std::pow(10.0, le)); };
      // Coarse grid over log10 eps, then golden section around the best grid point.
      double best_le = kLo, best = HUGE_VAL;
      for (double le = kLo; le <= kHi; le += kStep) {
        const double f = F(le);
        if (f < best) { best = f; best_le = le; }
      }
      double a = best_le - kStep, b = best_le + kStep;
      const double phi = (std::sqrt(5.0) - 1) / 2;
      for (int it = 0; it < 80; ++it) {
        const double x1 = b - phi * (b - a), x2 = a + phi * (b - a);
        if (F(x1) < F(x2)) b = x2; else a = x1;
      }
      double le = (a + b) / 2;
      double rmin = F(le);
      if (best < rmin) { rmin = best; le = best_le; }
      EpsFit fit;
      fit.placement = pl;
      fit.variance = var;
      fit.eps = std::pow(10.0, le);
      const double r0 = gain_residual(s, pl, c, 0.0);
      const double thr = 2 * std::min(rmin, r0) + floor;
      if (r0 <= rmin) { fit.eps = 0; rmin = r0; }
      fit.residual = rmin;
      // Interval: where the residual stays below thr, by bisection in log10 eps.
      auto edge = [&](double dir) {
        double inside = le, step = 1e-9;
        double outside = le + dir * step;
        while (F(outside) <= thr) {
          inside = outside;
          step *= 2;
          outside = le + dir * step;
          if (outside < kLo - 10) return -HUGE_VAL;
          if (outside > kHi + 10) return HUGE_VAL;
        }
        for (int it = 0; it < 60; ++it) {
          const double mid = (inside + outside) / 2;
          (F(mid) <= thr ? inside : outside) = mid;
        }
        return inside;
      };
      if (fit.eps == 0) {
        fit.eps_lo = 0;
        // Largest eps still compatible with the data: scan up from the grid bottom.
        double hi = kLo;
        while (hi < kHi && F(hi + kStep) <= thr) hi += kStep;
        fit.eps_hi = hi <= kLo ? 0 : std::pow(10.0, hi);
      } else {
        const double lo = edge(-1), hi = edge(+1);
        fit.eps_lo = (lo == -HUGE_VAL || r0 <= thr) ? 0 : std::pow(10.0, lo);
        fit.eps_hi = hi == HUGE_VAL ? HUGE_VAL : std::pow(10.0, hi);
      }
      fit.eps_text = fit.eps == 0 ? "0" : shortest_decimal_in(fit.eps, fit.eps_lo, fit.eps_hi);
      fits.push_back(fit);
    }
  }
  std::stable_sort(fits.begin(), fits.end(), [](const EpsFit& x, const EpsFit& y) { return x.residual < y.residual; });
  return fits;
}

}  // namespace normcheck
