// Probes of layer_norm and rms_norm backends (see probe.hpp for the contract).
//
// Experiments, in order (each later one uses what the earlier ones established):
//  1. axes       x [2, 3, d] ~ N(0,1); perturb x[0,0,0], x[0,2,5], x[1,0,0] by +3 and see
//                which outputs move (bit-exact unless the backend is not repeatable); the
//                nominal reference over [d], [T, d], [B, T, d] as the fitted model. A leak
//                across rows makes every later experiment run one row per call.
//  2. centering  rows 3 + N(0,1); per row fit y = a x + b: -b / (a mean x) is 1 for a
//                kernel that subtracts the row mean, 0 for one that does not.
//  3. eps sweep  rows of pairs +-a_k (mean exactly 0, statistic v = mean a_k^2 known exactly)
//                for v = 1e-14 .. 1e2 (half decades); measured gain g = sum y x / sum x^2;
//                eps, placement and estimator solved by least squares (eps_fit.hpp); the
//                slope of ln g over v >= 1 gives the gain law (-1/2; -1 for a missing sqrt).
//  4. affine     distinct gamma_j = 1 + j/16 (w_j = j/16 for one_plus_w), beta_j = j/32 - 1
//                on x [2, 3, d]; y fitted against gain {param, 1 + param, 1} and beta
//                indexed by hidden index, flat row, token, batch or reversed index.
//  5. accumulation  against the exact reference under the inferred convention, on N(0,1)
//                rows of 4096 and 256: the stab metric (DESIGN.md) per candidate dtype and
//                the row-coherent error (a wrong statistic moves a whole row together, so a
//                per-row fit resolves it far below one output ULP); binary16 range rows
//                (2^-12 and 2^9 N(0,1)) tell f16 from bf16; rows S + N(0,1) (S = 1e4 and the
//                largest shift both formats hold to 1/16) tell one-pass E[x^2]-E[x]^2 (stab
//                grows like S) from two-pass/Welford.
//  6. per-index  d = 8k + r (65..73, 79, 95), rows 5 + 3 N(0,1): each output against the
//                exact reference (or, without a model, the row's own line y = a x + b); the
//                set of failing indices matched to "the last d mod B".
//  7. degenerate constant, zero, NaN, +Inf and overflowing (|x| = max/4) rows against the
//                reference under the inferred convention (nominal when none was inferred).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cases/case.hpp"
#include "checks/eps_fit.hpp"
#include "checks/metrics.hpp"
#include "checks/probe_detail.hpp"
#include "ops/reference.hpp"
#include "spec/layout.hpp"
#include "ops/registry.hpp"

namespace normcheck::detail {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();


/// State shared by the experiments of one probe.
struct Ctx {
  Backend& b;
  const ProbeOptions& o;
  ProbeResult& res;
  bool isolate = false;  ///< statistics leak across rows: run every row alone
  double noise = 0;      ///< max |difference| between two identical runs
  std::int64_t calls = 0;

  DType dt() const { return o.dtype; }
  std::int64_t d() const { return o.d; }

  /// A Problem of the probed op with the nominal convention, affine `a`, x of `shape`
  /// (values rounded once to the dtype), normalized over the last axis.
  Problem make(const Shape& shape, const std::vector<double>& x, Affine a = Affine::none,
               const std::vector<double>& gamma = {}, const std::vector<double>& beta = {}) const {
    Problem p;
    p.op = o.op;
    p.conv = o.nominal;
    p.conv.affine = a;
    p.conv.normalized_shape = Shape{shape.back()};
    p.out_dtype = dt();
    p.inputs["x"] = Tensor::from_doubles(dt(), shape, x);
    if (a != Affine::none) p.inputs["gamma"] = Tensor::from_doubles(dt(), Shape{shape.back()}, gamma);
    if (a == Affine::gamma_beta) p.inputs["beta"] = Tensor::from_doubles(dt(), Shape{shape.back()}, beta);
    return p;
  }

  /// Runs p on the backend; throws BackendError when it refuses or returns a bad "y".
  Tensor run(const Problem& problem) {
    const ValidProblem vp = validate(problem);
    const Problem& p = *vp;
    if (auto why = b.unsupported(vp, {})) throw BackendError(fmt::format("backend refused the probe problem: {}", *why));
    ++calls;
    Outputs out = b.run(vp, {});
    auto it = out.find("y");
    if (it == out.end()) throw BackendError("backend returned no output 'y'");
    if (it->second.shape() != p.x().shape())
      throw BackendError(fmt::format("backend returned y of shape {} for x of shape {}", shape_str(it->second.shape()),
                                     shape_str(p.x().shape())));
    return it->second;
  }

  /// Runs rows [R, m] (one call, or one call per row when isolating); y as doubles.
  std::vector<double> run_rows(std::int64_t R, std::int64_t m, const std::vector<double>& x) {
    if (!isolate) return run(make({R, m}, x)).to_doubles();
    std::vector<double> y;
    for (std::int64_t r = 0; r < R; ++r) {
      std::vector<double> row(x.begin() + r * m, x.begin() + (r + 1) * m);
      auto yr = run(make({1, m}, row)).to_doubles();
      y.insert(y.end(), yr.begin(), yr.end());
    }
    return y;
  }

  /// Whether output i moved between two runs (bitwise, or beyond the repeat noise).
  bool moved(double a, double b) const {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) != std::isnan(b);
    return noise == 0 ? a != b : std::fabs(a - b) > 4 * noise;
  }
};

/// Stored values of x rounded to the dtype (what the backend sees).
std::vector<double> stored(DType t, const std::vector<double>& v) {
  return Tensor::from_doubles(t, Shape{static_cast<std::int64_t>(v.size())}, v).to_doubles();
}

/// Max |y - r| / max |r| over finite pairs; +inf on a NaN mismatch.
double rel_diff(const std::vector<double>& y, const std::vector<long double>& r) {
  long double num = 0, den = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (std::isnan(y[i]) || std::isnan(r[i])) {
      if (std::isnan(y[i]) != std::isnan(r[i])) return HUGE_VAL;
      continue;
    }
    num = std::max(num, std::fabs(static_cast<long double>(y[i]) - r[i]));
    den = std::max(den, std::fabs(r[i]));
  }
  return den == 0 ? static_cast<double>(num) : static_cast<double>(num / den);
}

// ---------------------------------------------------------------------------------------
// 1. Reduction axes and leaks across rows.
void probe_axes(Ctx& c) {
  const std::int64_t B = 2, T = 3, d = c.d();
  const Shape shape{B, T, d};
  const std::vector<double> x = generate_normal(B * T * d, 0, 1, c.o.seed);
  const Problem p0 = c.make(shape, x);
  const std::vector<double> y0 = c.run(p0).to_doubles(), y0b = c.run(p0).to_doubles();
  for (std::size_t i = 0; i < y0.size(); ++i)
    if (!(std::isnan(y0[i]) && std::isnan(y0b[i]))) c.noise = std::max(c.noise, std::fabs(y0[i] - y0b[i]));
  auto idx = [&](std::int64_t b, std::int64_t t, std::int64_t j) { return (b * T + t) * d + j; };
  // moved[k][token] = number of elements of token (b,t) whose output moved under perturbation k.
  struct Pert { std::int64_t b, t, j; };
  const Pert perts[3] = {{0, 0, 0}, {0, 2, 5}, {1, 0, 0}};
  std::int64_t moved[3][6] = {};
  for (int k = 0; k < 3; ++k) {
    std::vector<double> xp = x;
    xp[idx(perts[k].b, perts[k].t, perts[k].j)] += 3;
    const auto yp = c.run(c.make(shape, xp)).to_doubles();
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t j = 0; j < d; ++j) {
          if (b == perts[k].b && t == perts[k].t && j == perts[k].j) continue;
          moved[k][b * T + t] += c.moved(y0[idx(b, t, j)], yp[idx(b, t, j)]);
        }
  }
  const std::int64_t own = moved[0][0];  // other elements of the perturbed token that moved
  const bool seq_leak = moved[0][1] + moved[0][2] + moved[1][0] + moved[1][1] > 0;
  const bool future_to_past = moved[1][0] + moved[1][1] > 0;
  const bool batch_leak = moved[0][3] + moved[0][4] + moved[0][5] + moved[2][0] + moved[2][1] + moved[2][2] > 0;
  c.isolate = seq_leak || batch_leak;

  // Model fit: the nominal reference (affine none) normalized over [d], [T, d], [B, T, d].
  std::vector<std::pair<std::string, double>> fits;
  for (const Shape& ns : {Shape{d}, Shape{T, d}, Shape{B, T, d}}) {
    Problem q = p0;
    q.conv.normalized_shape = ns;
    const auto r = reference::evaluate_exact(q).at("y");
    static const char* names[] = {"[d]", "[T, d]", "[B, T, d]"};
    fits.emplace_back(names[ns.size() - 1], rel_diff(y0, r.exact_values()));
  }
  std::string fit_text;
  for (auto& [n, v] : fits) fit_text += fmt::format("{}{} {}", fit_text.empty() ? "" : "; ", n, g3(v));
  Evidence e;
  e.inputs = fmt::format("x [2, 3, {}] ~ N(0,1) seed {}; x[0,0,0], x[0,2,5], x[1,0,0] each += 3 in turn", d, c.o.seed);
  e.outputs = fmt::format(
      "x[0,0,0]: {}/{} other outputs of its token moved, {} of other tokens, {} of batch 1; x[0,2,5]: {} of tokens 0-1 "
      "moved; x[1,0,0]: {} of batch 0 moved; repeat noise {}",
      own, d - 1, moved[0][1] + moved[0][2], moved[0][3] + moved[0][4] + moved[0][5], moved[1][0] + moved[1][1],
      moved[2][0] + moved[2][1] + moved[2][2], g3(c.noise));
  e.fit = "max rel. difference to the nominal reference normalized over " + fit_text;
  std::string value;
  Shape ns{d};
  if (batch_leak) { value = "[B, T, d]"; ns = {B, T, d}; }
  else if (seq_leak) { value = "[T, d]"; ns = {T, d}; }
  else value = "[d]";
  // Rounding can hide a small move of an output near zero: fewer than half moving is what
  // marks a partial reduction.
  if (own == 0) value += " (no reduction over d: outputs are elementwise)";
  else if (2 * own < d - 1) value += fmt::format(" (only {} of {} hidden elements share statistics)", own + 1, d);
  e.residual = fits[batch_leak ? 2 : seq_leak ? 1 : 0].second;
  const Certainty cert = c.noise == 0 ? Certainty::certain : Certainty::likely;
  c.res.inferred.normalized_shape = ns;
  c.res.findings.push_back(finding("reduction_axes", value, "[d]", cert, value != "[d]", e));
  std::string leak = "none (a token's output depends on its own token only)";
  if (seq_leak)
    leak = future_to_past ? "statistics leak across the sequence: a later token changes earlier outputs (not causal)"
                          : "statistics leak across the sequence (earlier tokens change later outputs)";
  c.res.findings.push_back(finding("sequence_leak", leak, "none (a token's output depends on its own token only)", cert,
                                   seq_leak, e));
  c.res.findings.push_back(finding("batch_leak", batch_leak ? "statistics leak across the batch" : "none", "none", cert,
                                   batch_leak, e));
  if (c.isolate) c.res.card_notes.push_back("statistics leak across rows: later probes ran one row per call");
}

// ---------------------------------------------------------------------------------------
// 2. Centering.
bool probe_centering(Ctx& c) {
  const std::int64_t R = 4, d = c.d();
  const auto x = stored(c.dt(), generate_normal(R * d, 3, 1, c.o.seed + 1));
  const auto y = c.run_rows(R, d, x);
  std::vector<double> ts;
  double resid = 0;
  std::string fits;
  for (std::int64_t r = 0; r < R; ++r) {
    long double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::int64_t j = 0; j < d; ++j) {
      const long double xv = x[r * d + j], yv = y[r * d + j];
      sx += xv; sy += yv; sxx += xv * xv; sxy += xv * yv;
    }
    const long double n = d, mx = sx / n, my = sy / n;
    const long double a = (sxy - n * mx * my) / (sxx - n * mx * mx), bb = my - a * mx;
    ts.push_back(static_cast<double>(-bb / (a * mx)));
    long double ymax = 0, rmax = 0;
    for (std::int64_t j = 0; j < d; ++j) {
      ymax = std::max(ymax, std::fabs(static_cast<long double>(y[r * d + j])));
      rmax = std::max(rmax, std::fabs(y[r * d + j] - (a * x[r * d + j] + bb)));
    }
    resid = std::max(resid, static_cast<double>(rmax / ymax));
    if (r < 2) fits += fmt::format("{}row {}: a = {}, b = {}, mean x = {}", r ? "; " : "", r, g7(a), g7(bb), g7(mx));
  }
  // Tolerance of the ratio: rounding of y to the dtype (8 u) or 1e-3, whichever is larger.
  const double tol = std::max(1e-3, 8 * unit_roundoff(c.dt()));
  bool all1 = true, all0 = true, near1 = true, near0 = true;
  for (double t : ts) {
    all1 = all1 && std::fabs(t - 1) < tol; all0 = all0 && std::fabs(t) < tol;
    near1 = near1 && std::fabs(t - 1) < std::fabs(t); near0 = near0 && std::fabs(t) < std::fabs(t - 1);
  }
  Evidence e;
  e.inputs = fmt::format("x [{}, {}] = 3 + N(0,1) seed {}, affine none", R, d, c.o.seed + 1);
  e.outputs = fits;
  e.fit = fmt::format("per-row least squares y = a x + b; -b/(a mean x) = {} (1: subtracts the mean, 0: does not; "
                      "tolerance {}); max rel. residual of the line {}", fmt::join(ts, ", "), g3(tol), g3(resid));
  e.residual = resid;
  const bool expect = centers(c.o.op);
  const std::string yes = "subtracts the row mean (layer_norm)", no = "does not subtract the mean (rms_norm)";
  const Certainty cert = (all1 || all0) && resid < tol ? Certainty::certain
                         : (near1 || near0) ? Certainty::likely : Certainty::undetermined;
  const bool centered = cert == Certainty::undetermined ? expect : near1;
  c.res.findings.push_back(finding("centering", cert == Certainty::undetermined ? "undetermined" : (centered ? yes : no),
                                   expect ? yes : no, cert, centered != expect, e));
  c.res.inferred_op = centered ? Op::layer_norm : Op::rms_norm;
  if (centered != expect && cert != Certainty::undetermined)
    c.res.card_notes.push_back(fmt::format("it behaves as op = \"{}\" (asked {})", to_string(c.res.inferred_op),
                                           to_string(c.o.op)));
  return centered;
}

}  // namespace

bool eps_sweep_findings(ProbeResult& res, const ProbeOptions& o, const std::vector<GainSample>& samples, std::int64_t m, double floor,
                        Evidence e, bool estimator) {
  std::vector<EpsFit> fits;
  try {
    fits = fit_eps_models(samples, m, floor);
  } catch (const std::exception& ex) {
    e.fit = ex.what();
    for (const char* p : {"eps", "eps_placement", "variance"})
      if (estimator || std::string(p) != "variance") res.findings.push_back(finding(p, "undetermined", "", Certainty::undetermined, false, e));
    return false;
  }
  // clamp_var(eps) and clamp_norm(sqrt(eps)) are the same function: when the best model is a
  // clamp, its twin fits exactly as well. Keep the one the nominal convention names (no false
  // deviation), else the one with the shorter eps, and name both.
  std::size_t bi = 0;
  const EpsFit* twin = nullptr;
  auto is_clamp = [](EpsPlacement p) { return p == EpsPlacement::clamp_var || p == EpsPlacement::clamp_norm; };
  if (is_clamp(fits[0].placement))
    for (std::size_t i = 1; i < fits.size(); ++i)
      if (is_clamp(fits[i].placement) && fits[i].placement != fits[0].placement && fits[i].variance == fits[0].variance &&
          fits[i].residual <= fits[0].residual * (1 + 1e-6) + 1e-15) {
        const bool nominal_twin = fits[i].placement == o.nominal.eps_placement;
        const bool nominal_best = fits[0].placement == o.nominal.eps_placement;
        if (nominal_twin || (!nominal_best && fits[i].eps_text.size() < fits[0].eps_text.size())) bi = i;
        twin = &fits[bi == 0 ? i : 0];
        break;
      }
  const EpsFit& best = fits[bi];
  std::string ftxt;
  for (const auto& f : fits)
    ftxt += fmt::format("{}{}/{}: eps {} [{}, {}] residual {}", ftxt.empty() ? "" : "; ", to_string(f.placement),
                        to_string(f.variance), g7(f.eps), g3(f.eps_lo), g3(f.eps_hi), g3(f.residual));
  e.fit = "least squares in ln g per model (placement/variance: eps [interval] RMS residual): " + ftxt;
  e.residual = best.residual;
  double r_other_pl = HUGE_VAL, r_other_var = HUGE_VAL;
  for (const auto& f : fits) {
    if (f.placement != best.placement && !(twin && f.placement == twin->placement))
      r_other_pl = std::min(r_other_pl, f.residual);
    if (f.variance != best.variance) r_other_var = std::min(r_other_var, f.residual);
  }
  const double good = std::max(1e-3, 8 * floor), fair = std::max(3e-2, 64 * floor);
  auto certainty = [&](double other) {
    const double r1 = std::max(best.residual, floor);
    if (best.residual <= good && other >= 30 * r1) return Certainty::certain;
    if (best.residual <= fair && other >= 3 * r1) return Certainty::likely;
    return Certainty::undetermined;
  };
  const Convention& nom = o.nominal;
  const bool eps_zero = best.eps == 0 || best.eps_lo == 0;
  const double eps = eps_zero ? 0.0 : std::strtod(best.eps_text.c_str(), nullptr);
  // eps: its own certainty is that of the fit (a zero eps makes every placement equal).
  Certainty ce = best.residual <= good ? Certainty::certain : best.residual <= fair ? Certainty::likely
                                                                                   : Certainty::undetermined;
  if (!eps_zero && ce == Certainty::certain && certainty(r_other_pl) != Certainty::certain) ce = Certainty::likely;
  const bool eps_dev = eps_zero ? nom.eps != 0
                                : !(nom.eps >= best.eps_lo && nom.eps <= best.eps_hi) &&
                                      std::fabs(best.eps - nom.eps) > 1e-4 * nom.eps;
  const std::string eps_val = ce == Certainty::undetermined ? "undetermined"
                              : eps_zero ? fmt::format("0 (no eps: compatible with eps <= {})", g3(best.eps_hi))
                                         : fmt::format("{} (least squares {}, interval [{}, {}])", best.eps_text,
                                                       g7(best.eps), g7(best.eps_lo), g7(best.eps_hi));
  res.findings.push_back(finding("eps", eps_val, fmt::format("{}", nom.eps), ce, eps_dev, e));
  Certainty cp = eps_zero ? ce : certainty(r_other_pl);
  const std::string pl_val = cp == Certainty::undetermined ? "undetermined (no model fits)"
                             : eps_zero ? "any (eps = 0: every placement gives x/sqrt(v))"
                             : twin ? fmt::format("{} (the same function as {} with eps = {})", to_string(best.placement),
                                                  to_string(twin->placement), twin->eps_text)
                                    : std::string(to_string(best.placement));
  res.findings.push_back(finding("eps_placement", pl_val, std::string(to_string(nom.eps_placement)), cp,
                                   !eps_zero && best.placement != nom.eps_placement, e));
  const Certainty cv = estimator ? certainty(r_other_var) : Certainty::undetermined;
  if (estimator)
    res.findings.push_back(finding("variance",
                                   cv == Certainty::undetermined ? "undetermined" : std::string(to_string(best.variance)),
                                   std::string(to_string(nom.variance)), cv, best.variance != nom.variance, e));
  // Gain law: slope of ln g against ln v where v >= 1 (eps negligible for any usual eps).
  {
    long double sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0;
    for (const auto& s : samples)
      if (s.v >= 1 && s.g > 0) {
        const long double lx = std::log(s.v), ly = std::log(s.g);
        sx += lx; sy += ly; sxx += lx * lx; sxy += lx * ly; n += 1;
      }
    const double slope = n >= 2 ? static_cast<double>((n * sxy - sx * sy) / (n * sxx - sx * sx)) : kNaN;
    Evidence eg = e;
    eg.fit = fmt::format("slope of ln g against ln v over v >= 1: {} (1/sqrt(v): -0.5; 1/v: -1)", fmt::format("{:.4f}", slope));
    eg.residual = std::fabs(slope + 0.5);
    std::string law = fmt::format("g ~ v^{:.3f}", slope);
    if (std::fabs(slope + 1) < 0.02) law += " (no sqrt: divides by the variance)";
    else if (std::fabs(slope + 0.5) < 0.02) law = "g ~ 1/sqrt(v)";
    if (std::fabs(slope + 0.5) >= 0.02 && std::isfinite(slope))
      res.card_notes.push_back(fmt::format("no convention reproduces this backend: its gain goes like v^{:.3f}, not "
                                             "1/sqrt(v)", slope));
    res.findings.push_back(finding("gain_law", law, "g ~ 1/sqrt(v)",
                                     std::isfinite(slope) ? Certainty::certain : Certainty::undetermined,
                                     std::fabs(slope + 0.5) >= 0.02, eg));
  }
  Convention& inf = res.inferred;
  inf.eps = ce == Certainty::undetermined ? nom.eps : eps;
  if (ce != Certainty::undetermined) {
    res.eps_lo = eps_zero ? 0.0 : best.eps_lo;
    res.eps_hi = best.eps_hi;
  }
  inf.eps_placement = (cp == Certainty::undetermined || eps_zero) ? nom.eps_placement : best.placement;
  inf.variance = cv == Certainty::undetermined ? nom.variance : best.variance;
  if (eps_zero && ce != Certainty::undetermined)
    res.card_notes.push_back("eps = 0: the placement cannot matter and was not determined");
  return ce != Certainty::undetermined && cp != Certainty::undetermined;
}

namespace {

// ---------------------------------------------------------------------------------------
// 3. eps value, placement, variance estimator, gain law.
/// Returns whether the fitted denominator model is trustworthy (for later experiments).
bool probe_eps(Ctx& c) {
  const std::int64_t d = c.d(), h = d / 2;
  // Row pattern: pairs +-a_k with distinct a_k = s c_k (c_k spread over (0, 1.7), mean c^2 = 1),
  // so the mean is exactly 0 in every dtype, v = mean a_k^2 is known exactly from the stored
  // values, and the output roundings differ from element to element (the least-squares gain
  // averages them instead of repeating one rounding d times).
  std::vector<double> cpat(h);
  double msq = 0;
  for (std::int64_t k = 0; k < h; ++k) { cpat[k] = (k + 0.5) / h; msq += cpat[k] * cpat[k] / h; }
  for (auto& v : cpat) v /= std::sqrt(msq);
  std::vector<double> x, v_used;
  for (int k = -28; k <= 4; ++k) {
    const double s = std::sqrt(std::pow(10.0, k / 2.0));
    std::vector<double> row(d);
    for (std::int64_t j = 0; j < h; ++j) row[2 * j] = s * cpat[j];
    row = stored(c.dt(), row);
    long double ss = 0;
    for (std::int64_t j = 0; j < h; ++j) { row[2 * j + 1] = -row[2 * j]; ss += static_cast<long double>(row[2 * j]) * row[2 * j]; }
    const double v = static_cast<double>(ss / h);
    if (!(v > 0) || !std::isfinite(v) || std::fabs(v / (s * s) - 1) > 0.1) continue;  // not representable
    v_used.push_back(v);
    x.insert(x.end(), row.begin(), row.end());
  }
  const std::int64_t R = static_cast<std::int64_t>(v_used.size());
  const auto y = c.run_rows(R, d, x);
  std::vector<GainSample> samples;
  for (std::int64_t r = 0; r < R; ++r) {
    long double num = 0, den = 0;
    for (std::int64_t j = 0; j < d; ++j) {
      num += static_cast<long double>(y[r * d + j]) * x[r * d + j];
      den += static_cast<long double>(x[r * d + j]) * x[r * d + j];
    }
    samples.push_back({v_used[r], static_cast<double>(num / den)});
  }
  Evidence e;
  e.inputs = fmt::format("{} rows of {} values: pairs +-a_k, a_k = s (k + 1/2) spread, mean 0, biased variance = mean "
                         "square = v, v from {} to {} in half decades, affine none", R, d, g3(v_used.front()), g3(v_used.back()));
  std::string seen;
  for (std::size_t i = 0; i < samples.size(); i += 4)
    seen += fmt::format("{}g({}) = {}", seen.empty() ? "gain g = sum y x / sum x^2: " : ", ", g3(samples[i].v), g7(samples[i].g));
  e.outputs = seen;
  // Resolution of one measured gain: the output rounding (u of the dtype) averaged over the
  // d/2 distinct magnitudes of the row.
  return eps_sweep_findings(c.res, c.o, samples, d, unit_roundoff(c.dt()) / std::sqrt(static_cast<double>(h)), e, true);
}

// ---------------------------------------------------------------------------------------
// 4. Affine convention and broadcast axes.
void probe_affine(Ctx& c) {
  const std::int64_t B = 2, T = 3, d = c.d(), n_el = B * T * d;
  const Shape shape{B, T, d};
  const std::vector<double> x = generate_normal(n_el, 0, 1, c.o.seed + 3);
  const auto n = c.run(c.make(shape, x)).to_doubles();
  std::vector<double> gamma(d), w(d), beta(d);
  for (std::int64_t j = 0; j < d; ++j) {
    gamma[j] = 1 + j / 16.0;
    w[j] = j / 16.0;
    beta[j] = j / 32.0 - 1;
  }
  gamma = stored(c.dt(), gamma); w = stored(c.dt(), w); beta = stored(c.dt(), beta);
  // Index maps: element (b, t, j) -> parameter index.
  struct IndexMap { const char* name; std::function<std::int64_t(std::int64_t, std::int64_t, std::int64_t)> f; };
  const std::vector<IndexMap> maps = {
      {"per hidden index", [](auto, auto, auto j) { return j; }},
      {"per row (flat token index b*T + t)", [=](auto b, auto t, auto) { return (b * T + t) % d; }},
      {"per token t", [](auto, auto t, auto) { return t; }},
      {"per batch element b", [](auto b, auto, auto) { return b; }},
      {"reversed hidden index", [=](auto, auto, auto j) { return d - 1 - j; }},
  };
  struct Model { std::string gain, gain_map, beta_map; double resid; };
  auto fit = [&](const std::vector<double>& y, const std::vector<double>& p, bool with_beta) {
    std::vector<Model> ms;
    long double ymax = 0;
    for (double v : y) ymax = std::max(ymax, std::fabs(static_cast<long double>(v)));
    for (const char* form : {"param", "1 + param", "1"}) {
      for (std::size_t gm = 0; gm < maps.size(); ++gm) {
        if (std::string(form) == "1" && gm > 0) break;
        for (std::size_t bm = 0; bm <= (with_beta ? maps.size() : 0); ++bm) {
          long double worst = 0;
          for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t t = 0; t < T; ++t)
              for (std::int64_t j = 0; j < d; ++j) {
                const std::int64_t i = (b * T + t) * d + j;
                const double pv = p[maps[gm].f(b, t, j)];
                const long double G = std::string(form) == "param" ? pv : std::string(form) == "1" ? 1.0L : 1.0L + pv;
                const long double bv = bm < maps.size() && with_beta ? beta[maps[bm].f(b, t, j)] : 0.0L;
                const long double err = std::fabs(y[i] - (G * n[i] + bv));
                worst = std::isnan(err) ? HUGE_VALL : std::max(worst, err);
              }
          ms.push_back({form, std::string(form) == "1" ? "-" : maps[gm].name,
                        !with_beta ? "-" : bm < maps.size() ? maps[bm].name : "none",
                        static_cast<double>(ymax > 0 ? worst / ymax : worst)});
        }
      }
    }
    std::stable_sort(ms.begin(), ms.end(), [](const Model& a, const Model& b) { return a.resid < b.resid; });
    return ms;
  };
  auto cert_of = [](const std::vector<Model>& ms) {
    const double r1 = ms[0].resid, r2 = ms.size() > 1 ? ms[1].resid : HUGE_VAL;
    if (r1 <= 1e-3 && r2 >= 10 * r1 && r2 >= 1e-2) return Certainty::certain;
    if (r1 <= 1e-2 && r2 > 2 * r1) return Certainty::likely;
    return Certainty::undetermined;
  };
  auto fit_text = [](const std::vector<Model>& ms) {
    std::string s;
    for (std::size_t i = 0; i < std::min<std::size_t>(ms.size(), 3); ++i)
      s += fmt::format("{}gain {} ({}){} rel. residual {}", i ? "; " : "", ms[i].gain, ms[i].gain_map,
                       ms[i].beta_map == "-" ? "" : fmt::format(" + beta ({})", ms[i].beta_map), g3(ms[i].resid));
    return "max rel. residual of y = G n + beta per model (n: output with affine none): " + s;
  };
  for (Affine a : {Affine::gamma, Affine::gamma_beta, Affine::one_plus_w}) {
    const std::string key = fmt::format("affine[{}]", to_string(a));
    Evidence e;
    e.inputs = fmt::format("x [2, 3, {}] ~ N(0,1) seed {}; {}", d, c.o.seed + 3,
                           a == Affine::one_plus_w ? "w_j = j/16" : a == Affine::gamma ? "gamma_j = 1 + j/16"
                                                                                       : "gamma_j = 1 + j/16, beta_j = j/32 - 1");
    try {
      const auto& p = a == Affine::one_plus_w ? w : gamma;
      const auto y = c.run(c.make(shape, x, a, p, beta)).to_doubles();
      const auto ms = fit(y, p, a == Affine::gamma_beta);
      e.outputs = fmt::format("y[0,0,0..3] = {}, {}, {}, {}; y[1,2,{}] = {}", g7(y[0]), g7(y[1]), g7(y[2]), g7(y[3]), d - 1,
                              g7(y.back()));
      e.fit = fit_text(ms);
      e.residual = ms[0].resid;
      const Certainty cert = cert_of(ms);
      const Model& m = ms[0];
      // What the gain form means under this asked convention.
      std::string applied;
      const bool asked_w = a == Affine::one_plus_w;
      if (m.gain == "1") applied = "none (parameters ignored)";
      else if (m.gain == "param") applied = asked_w ? "gamma (w applied as a plain gamma, not 1 + w)" : "gamma";
      else applied = asked_w ? "one_plus_w" : "one_plus_w (1 + gamma applied where gamma was asked)";
      if (a == Affine::gamma_beta && m.gain != "1") {
        if (m.beta_map == "none") applied += " (beta ignored)";
        else if (applied == "gamma") applied = "gamma_beta";
      }
      const std::string expect(to_string(a));
      const bool dev = applied != expect;
      if (cert == Certainty::undetermined) applied = "undetermined (no affine model fits)";
      c.res.findings.push_back(finding(key, applied, expect, cert, dev, e));
      if (a == c.o.nominal.affine) {  // the card's affine: what was applied when the nominal one was asked
        c.res.inferred.affine = cert == Certainty::undetermined || dev ? c.o.nominal.affine : a;
        if (dev && cert != Certainty::undetermined) {
          if (m.gain == "1") c.res.inferred.affine = Affine::none;
          else if (m.gain == "param") c.res.inferred.affine = m.beta_map != "none" && a == Affine::gamma_beta ? Affine::gamma_beta : Affine::gamma;
          else c.res.inferred.affine = Affine::one_plus_w;
        }
      }
      if (a == Affine::gamma) {
        const std::string axis = cert == Certainty::undetermined ? "undetermined" : m.gain == "1" ? "gamma not applied" : m.gain_map;
        c.res.findings.push_back(finding("gamma_broadcast", axis, "per hidden index", cert, axis != "per hidden index", e));
      }
      if (a == Affine::gamma_beta)
        c.res.findings.push_back(finding("beta_broadcast", cert == Certainty::undetermined ? "undetermined" : m.beta_map,
                                         "per hidden index", cert, m.beta_map != "per hidden index", e));
    } catch (const BackendError& ex) {
      e.outputs = ex.what();
      c.res.findings.push_back(finding(key, "undetermined (backend error)", std::string(to_string(a)),
                                       Certainty::undetermined, false, e));
    }
  }
}

// ---------------------------------------------------------------------------------------
// 5. Accumulation precision and algorithm.
struct AccOutcome { DType acc = DType::f32; bool known = false; };

/// 6. rounding order (f16, bf16 with a weight): does the backend round the normalized value
/// to the dtype before the weight (Llama, ONNX: normalized_dtype = x's dtype) or once, at the
/// output? x [16, d] ~ N(0,1), gamma_j in [0.5, 3) (seed + 9), the inferred affine; the exact
/// reference under the inferred convention both ways. Only elements where the two correctly
/// rounded results differ tell them apart; the finding is the order whose bits the backend
/// returns there (certain: >= 90% of >= 20 such elements and the other <= 10%; likely: twice
/// as often; else undetermined).
void probe_rounding_order(Ctx& c, bool model_ok) {
  const DType dt = c.dt();
  if (dt != DType::f16 && dt != DType::bf16) return;  // f32/f64 outputs: the two orders agree to ~1 ulp of f32 n
  const Affine a = c.res.inferred.affine;
  const bool nominal_early = c.o.nominal.normalized_dtype.has_value();
  const std::string expected =
      nominal_early ? fmt::format("normalized value rounded to {} first", dtype_name(*c.o.nominal.normalized_dtype)) : "once";
  Evidence e;
  const std::int64_t R = 16, d = c.d();
  e.inputs = fmt::format("x [{}, {}] ~ N(0,1) seed {}; gamma_j in [0.5, 3) seed {}; affine {}", R, d, c.o.seed + 9,
                         c.o.seed + 10, to_string(a));
  if (a == Affine::none || !model_ok) {
    e.fit = a == Affine::none ? "no weight: both orders give round(n)" : "no convention inferred to compute the two references";
    c.res.findings.push_back(finding("rounding_order", "undetermined", expected, Certainty::undetermined, false, e));
    return;
  }
  const auto x = stored(dt, generate_normal(R * d, 0, 1, c.o.seed + 9));
  auto gamma = generate_normal(d, 0, 1, c.o.seed + 10);
  std::vector<double> beta(static_cast<std::size_t>(d));
  for (std::int64_t j = 0; j < d; ++j) {
    gamma[j] = 0.5 + 2.5 * (0.5 + 0.5 * std::tanh(gamma[j]));  // in [0.5, 3)
    beta[j] = (j % 7) / 8.0 - 0.375;
  }
  gamma = stored(dt, gamma);
  beta = stored(dt, beta);
  Problem q = c.make({R, d}, x, a, gamma, beta);
  const auto y = c.run(q).to_doubles();
  q.op = c.res.inferred_op;
  q.conv.eps = c.res.inferred.eps;
  q.conv.eps_placement = c.res.inferred.eps_placement;
  q.conv.variance = c.res.inferred.variance;
  q.conv.normalized_dtype.reset();
  const auto once = reference::evaluate_exact(q).at("y").rounded().to_doubles();
  q.conv.normalized_dtype = dt;
  const auto early = reference::evaluate_exact(q).at("y").rounded().to_doubles();
  std::int64_t differ = 0, m_once = 0, m_early = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (once[i] == early[i]) continue;
    ++differ;
    m_once += y[i] == once[i];
    m_early += y[i] == early[i];
  }
  e.outputs = fmt::format("{} of {} elements differ between the two correctly rounded references; there the backend "
                          "returns the one-rounding value {} times, the normalized-rounded value {} times",
                          differ, y.size(), m_once, m_early);
  const double f_once = differ ? static_cast<double>(m_once) / differ : 0, f_early = differ ? static_cast<double>(m_early) / differ : 0;
  Certainty cert = Certainty::undetermined;
  std::string value = "undetermined";
  if (differ >= 20 && std::max(f_once, f_early) >= 0.9 && std::min(f_once, f_early) <= 0.1) cert = Certainty::certain;
  else if (differ >= 8 && (m_once >= 2 * m_early + 2 || m_early >= 2 * m_once + 2)) cert = Certainty::likely;
  const bool is_early = m_early > m_once;
  if (cert != Certainty::undetermined) {
    value = is_early ? fmt::format("normalized value rounded to {} before the weight (normalized_dtype = \"{}\")", dtype_name(dt),
                                   dtype_name(dt))
                     : std::string("once, at the output");
    c.res.rounding_order = is_early ? std::optional<DType>(dt) : std::nullopt;
    c.res.rounding_order_known = true;
    c.res.inferred.normalized_dtype = c.res.rounding_order;
  }
  e.fit = fmt::format("matches where they differ: one rounding {:.0f}%, rounded before the weight {:.0f}%", 100 * f_once,
                      100 * f_early);
  c.res.findings.push_back(finding("rounding_order", value, expected, cert, is_early != nominal_early, e));
}

/// The inferred convention as a Problem for the exact reference on rows [R, m].
Problem inferred_problem(const Ctx& c, std::int64_t R, std::int64_t m, const std::vector<double>& x) {
  Problem q;
  q.op = c.res.inferred_op;
  q.conv = c.res.inferred;
  q.conv.affine = Affine::none;
  q.conv.normalized_shape = Shape{m};
  q.out_dtype = c.dt();
  q.inputs["x"] = Tensor::from_doubles(c.dt(), Shape{R, m}, x);
  return q;
}

/// Errors of y against the exact reference under the inferred convention.
/// stab[k]: max stab (DESIGN.md) with the accumulation dtype kCands[k] (+inf on NaN
/// mismatches). coherent: max over rows of the row-common error, from the least-squares
/// fit y = a r + b per row: max(|a - 1|, |b| / rms(r)); a wrong denominator or mean moves
/// the whole row together, so this resolves errors far below one output ULP. floor: the
/// same fit applied to the correctly rounded reference (the measurement's resolution).
constexpr DType kCands[4] = {DType::f64, DType::f32, DType::f16, DType::bf16};
struct RowErrors {
  double stab[4] = {0, 0, 0, 0};
  double coherent = 0, floor = 0;
  void merge(const RowErrors& o) {
    for (int k = 0; k < 4; ++k) stab[k] = std::max(stab[k], o.stab[k]);
    coherent = std::max(coherent, o.coherent);
    floor = std::max(floor, o.floor);
  }
};

double coherent_error(const std::vector<double>& y, const std::vector<long double>& r, std::int64_t R, std::int64_t m) {
  double worst = 0;
  for (std::int64_t row = 0; row < R; ++row) {
    long double sr = 0, sy = 0, srr = 0, sry = 0;
    for (std::int64_t j = 0; j < m; ++j) {
      const long double rv = r[row * m + j], yv = y[row * m + j];
      sr += rv; sy += yv; srr += rv * rv; sry += rv * yv;
    }
    const long double n = m, det = n * srr - sr * sr;
    if (!(det > 0)) return HUGE_VAL;
    const long double a = (n * sry - sr * sy) / det, b = (sy - a * sr) / n, rms = std::sqrt(srr / n);
    const double e = static_cast<double>(std::max(std::fabs(a - 1), std::fabs(b) / rms));
    worst = std::isnan(e) ? HUGE_VAL : std::max(worst, e);
  }
  return worst;
}

RowErrors row_errors(const Ctx& c, const Problem& q, const std::vector<double>& y) {
  const auto r = reference::evaluate_exact(q).at("y");
  const Tensor got = Tensor::from_doubles(DType::f64, q.x().shape(), y);
  RowErrors e;
  for (int k = 0; k < 4; ++k) {
    const MetricSet ms = measure(got, r, c.dt(), kCands[k]);
    e.stab[k] = ms.nan_mismatches ? HUGE_VAL : ms.stab.value;
  }
  const RowLayout l = row_layout(q);
  const std::vector<long double> exact = r.exact_values();
  e.coherent = coherent_error(y, exact, l.rows, l.m);
  e.floor = coherent_error(r.rounded().to_doubles(), exact, l.rows, l.m);
  return e;
}

AccOutcome probe_accumulation(Ctx& c, bool model_ok, bool centered) {
  AccOutcome out;
  const std::string expect_prec = fmt::format("{} (or finer)", dtype_name(c.o.nominal.acc_dtype));
  const std::string expect_alg = "two-pass or Welford (stable)";
  Evidence e;
  if (!model_ok) {
    e.fit = "skipped: the eps/placement model did not fit, so no exact reference can stand for this backend";
    c.res.findings.push_back(finding("accumulation_precision", "undetermined", expect_prec, Certainty::undetermined, false, e));
    if (centered) c.res.findings.push_back(finding("accumulation_algorithm", "undetermined", expect_alg, Certainty::undetermined, false, e));
    return out;
  }
  struct Set { std::int64_t R, m; double mean, sd; std::uint64_t seed; };
  auto measure_set = [&](const Set& s) {
    const auto x = stored(c.dt(), generate_normal(s.R * s.m, s.mean, s.sd, s.seed));
    const auto y = c.run_rows(s.R, s.m, x);
    return row_errors(c, inferred_problem(c, s.R, s.m, x), y);
  };
  // The long rows resolve the row-coherent error best (resolution ~ u_out / sqrt(m)): it is
  // taken from them alone; stab from both sets.
  RowErrors err = measure_set(Set{2, 4096, 0, 1, c.o.seed + 4});
  {
    RowErrors short_rows = measure_set(Set{4, 256, 0, 1, c.o.seed + 5});
    for (int k = 0; k < 4; ++k) err.stab[k] = std::max(err.stab[k], short_rows.stab[k]);
  }
  // A kernel accumulating in precision u keeps stab below ~ (m/8 + 10) (DESIGN.md "Error
  // metrics": a two-pass f32 kernel stays below 4; T leaves room for sequential sums), and
  // its row-coherent error (the statistics' own error) below ~ sqrt(m) u typically, m u at
  // worst: Tc = 2 sqrt(4096) + 16 units. Coarser candidates always pass; the finest passing
  // one is the answer, provided the measurement resolves it (4 x floor below u of the next
  // coarser candidate: certain below 0.25 u, likely below 1 u).
  const double T = 64, Tc = 144;
  const double u32 = unit_roundoff(DType::f32), res = 4 * err.floor;
  auto passes = [&](int k) { return err.stab[k] <= T && err.coherent <= std::max(res, Tc * unit_roundoff(kCands[k])); };
  e.inputs = fmt::format("x [2, 4096] and [4, 256] ~ N(0,1) seeds {}, {}; exact reference under the inferred convention "
                         "(op {}, eps {}, {}, {})", c.o.seed + 4, c.o.seed + 5, to_string(c.res.inferred_op),
                         c.res.inferred.eps, to_string(c.res.inferred.eps_placement), to_string(c.res.inferred.variance));
  e.outputs = fmt::format("max stab (checks/metrics.hpp stab_of): f64 {}, f32 {}, f16 {}, bf16 {}; row-coherent error "
                          "{} = {} u_f32 = {} u_f16 (resolution {})", g3(err.stab[0]), g3(err.stab[1]), g3(err.stab[2]),
                          g3(err.stab[3]), g3(err.coherent), g3(err.coherent / u32),
                          g3(err.coherent / unit_roundoff(DType::f16)), g3(err.floor));
  e.fit = fmt::format("finest candidate with max stab <= {} and row-coherent error (least squares y = a r + b per row: "
                      "max |a - 1|, |b|/rms r, on the 4096-rows) <= max(4 x resolution, {} u)", T, Tc);
  std::string value;
  Certainty cert = Certainty::undetermined;
  if (passes(0) && res <= u32) {
    out.acc = DType::f64;
    value = "f64 (or finer)";
    cert = res <= 0.25 * u32 ? Certainty::certain : Certainty::likely;
    e.residual = err.stab[0];
  } else if (passes(0) || passes(1)) {
    out.acc = DType::f32;
    const bool hidden = passes(0);  // f64 passes too, but the output cannot resolve the difference
    value = hidden ? fmt::format("f32 or finer ({} outputs cannot resolve finer accumulation)", dtype_name(c.dt())) : "f32";
    cert = !hidden && (err.stab[0] > 10 * T || err.coherent > 10 * std::max(res, Tc * unit_roundoff(DType::f64)))
               ? Certainty::certain : Certainty::likely;
    e.residual = err.stab[1];
  } else if (passes(3)) {
    // f16 or bf16: binary16's narrow range (squares overflow at |x| ~ 256, underflow near 2^-12) decides.
    RowErrors range;
    for (const Set& s : {Set{2, 256, 0, std::ldexp(1.0, -12), c.o.seed + 6}, Set{2, 256, 0, 512, c.o.seed + 7}})
      range.merge(measure_set(s));
    e.inputs += "; range rows [2, 256] of 2^-12 N(0,1) and 512 N(0,1)";
    e.outputs += fmt::format("; range rows: max stab at bf16 {}", g3(range.stab[3]));
    if (range.stab[3] > T) { out.acc = DType::f16; value = "f16 (binary16 range: squares overflow/underflow)"; }
    else { out.acc = DType::bf16; value = "bf16 (half precision with f32 range)"; }
    cert = err.stab[1] > 10 * T || err.coherent > 10 * Tc * u32 ? Certainty::certain : Certainty::likely;
    if (out.acc == DType::bf16) cert = Certainty::likely;
    e.residual = err.stab[out.acc == DType::f16 ? 2 : 3];
  } else {
    value = "undetermined (errors beyond bf16 accumulation: not a precision effect)";
    e.residual = err.stab[3];
  }
  out.known = cert != Certainty::undetermined;
  const auto rank = [](DType t) { return t == DType::f64 ? 0 : t == DType::f32 ? 1 : t == DType::f16 ? 2 : 3; };
  c.res.findings.push_back(finding("accumulation_precision", value, expect_prec, cert,
                                   out.known && rank(out.acc) > rank(c.o.nominal.acc_dtype), e));
  if (out.known) c.res.inferred.acc_dtype = out.acc;
  if (!centered) return out;

  // Algorithm: rows of mean S and std 1 against the same rows unshifted. One-pass
  // E[x^2] - E[x]^2 loses ~ u_acc S^2 in the variance while the stab denominator grows
  // only like u_acc S, so its stab grows like S; a two-pass/Welford kernel stays O(1).
  // S: 1e4 (the classic case) and 2^(p-4), the largest shift whose input ULP is <= 1/16
  // (a larger one would quantize the rows to a few values); 1e4 only where representable so.
  const DType acc = out.known ? out.acc : DType::f32;
  const int k_acc = static_cast<int>(std::find(kCands, kCands + 4, acc) - kCands);
  // The shift must also suit the accumulation format: its ULP at S <= 1/16 and m S far
  // below its overflow threshold (else both algorithms fail alike).
  const double s_max = std::min({std::ldexp(1.0, format_info(c.dt()).precision - 4),
                                 std::ldexp(1.0, format_info(acc).precision - 4), format_info(acc).max_finite / (4 * 256.0)});
  std::vector<double> shifts;
  if (1e4 <= s_max) shifts.push_back(1e4);
  shifts.push_back(s_max);
  double st_shift = 0, st_ctrl = 0;
  std::string per_shift;
  for (double S : shifts) {
    const auto x = stored(c.dt(), generate_normal(4 * 256, S, 1, c.o.seed + 8));
    const double st = row_errors(c, inferred_problem(c, 4, 256, x), c.run_rows(4, 256, x)).stab[k_acc];
    per_shift += fmt::format("{}mean {}: {}", per_shift.empty() ? "" : ", ", S, g3(st));
    st_shift = std::max(st_shift, st);
  }
  {
    const auto x = stored(c.dt(), generate_normal(4 * 256, 0, 1, c.o.seed + 8));
    st_ctrl = row_errors(c, inferred_problem(c, 4, 256, x), c.run_rows(4, 256, x)).stab[k_acc];
  }
  Evidence ea;
  ea.inputs = fmt::format("x [4, 256] = S + N(0,1) for S = {} and the same rows with S = 0 (seed {})", fmt::join(shifts, ", "),
                          c.o.seed + 8);
  ea.outputs = fmt::format("max stab at {}: {}; unshifted {}", dtype_name(acc), per_shift, g3(st_ctrl));
  const double thr = std::max(16.0, 8 * st_ctrl);
  // Visibility: one-pass in the inferred precision changes the variance by ~ u_acc S^2 (relative);
  // below a few output ULPs it cannot be told from two-pass.
  const double visible = unit_roundoff(acc) * s_max * s_max / (4 * unit_roundoff(c.dt()));
  ea.fit = fmt::format("one-pass if the shifted stab exceeds max(16, 8 x unshifted) = {}; a one-pass kernel in {} would "
                       "move the outputs by ~{} output ULPs at S = {}", g3(thr), dtype_name(acc), g3(visible), s_max);
  ea.residual = st_shift;
  const bool one_pass = st_shift > thr;
  Certainty ca = !std::isfinite(st_ctrl) ? Certainty::undetermined
                 : (st_shift > 4 * thr || st_shift < thr / 4) ? Certainty::certain : Certainty::likely;
  if (!one_pass && visible < 16 && ca == Certainty::certain) ca = Certainty::likely;
  c.res.findings.push_back(finding("accumulation_algorithm",
                                   ca == Certainty::undetermined ? "undetermined"
                                   : one_pass ? "one-pass E[x^2] - E[x]^2 (cancels at mean >> std)" : expect_alg,
                                   expect_alg, ca, one_pass, ea));
  if (one_pass && ca != Certainty::undetermined)
    c.res.card_notes.push_back("variance computed one-pass as E[x^2] - E[x]^2: unstable for mean >> std");
  return out;
}

// ---------------------------------------------------------------------------------------
// 6. Per-index conformance over d = 8k + r.
void probe_per_index(Ctx& c, bool model_ok, DType acc) {
  const std::vector<std::int64_t> ds = {65, 66, 67, 68, 69, 70, 71, 72, 73, 79, 95};
  const std::int64_t R = 2;
  std::map<std::int64_t, std::set<std::int64_t>> bad;
  std::map<std::int64_t, bool> copied;
  std::int64_t total = 0, nbad = 0;
  double worst = 0;
  const double line_tol = std::max(1e-3, 16 * unit_roundoff(c.dt()));
  for (std::size_t k = 0; k < ds.size(); ++k) {
    const std::int64_t m = ds[k];
    const auto x = stored(c.dt(), generate_normal(R * m, 5, 3, c.o.seed + 10 + k));
    const auto y = c.run_rows(R, m, x);
    const Problem q = inferred_problem(c, R, m, x);
    const auto r = reference::evaluate_exact(q).at("y");
    bool all_copied = true;
    for (std::int64_t i = 0; i < R * m; ++i) {
      bool is_bad;
      if (model_ok) {
        const long double u = ulp(c.dt(), std::isfinite(r.exact_at(i)) ? r.exact_at(i) : 0.0L);
        const long double e = std::fabs(static_cast<long double>(y[i]) - r.exact_at(i));
        const long double st = std::isnan(e) ? HUGE_VALL : stab_of(e, u, kernel_unit(acc, r.cond[i], r.exact_at(i)));
        worst = std::max(worst, static_cast<double>(st));
        is_bad = st > 1e3;
      } else {
        is_bad = false;  // filled below by the line check
      }
      if (is_bad) {
        bad[m].insert(i % m);
        all_copied = all_copied && y[i] == x[i];
        ++nbad;
      }
      ++total;
    }
    if (!model_ok) {
      // Model-free: every output of a row lies on the row's line y = a x + b (fitted on
      // the first half of the row); outputs off it are flagged.
      for (std::int64_t rr = 0; rr < R; ++rr) {
        const std::int64_t h = m / 2, off = rr * m;
        long double sx = 0, sy = 0, sxx = 0, sxy = 0, ymax = 0;
        for (std::int64_t j = 0; j < h; ++j) {
          sx += x[off + j]; sy += y[off + j]; sxx += x[off + j] * x[off + j]; sxy += x[off + j] * y[off + j];
          ymax = std::max(ymax, std::fabs(static_cast<long double>(y[off + j])));
        }
        const long double a = (h * sxy - sx * sy) / (h * sxx - sx * sx), b = (sy - a * sx) / h;
        for (std::int64_t j = 0; j < m; ++j) {
          const long double e = std::fabs(y[off + j] - (a * x[off + j] + b)) / ymax;
          worst = std::max(worst, static_cast<double>(e));
          if (!(e <= line_tol)) { bad[m].insert(j); all_copied = all_copied && y[off + j] == x[off + j]; ++nbad; }
        }
      }
    }
    copied[m] = all_copied && !bad[m].empty();
  }
  Evidence e;
  e.inputs = fmt::format("rows [2, m] = 5 + 3 N(0,1) for m = {}", fmt::join(ds, ", "));
  e.fit = model_ok ? fmt::format("per element stab against the exact reference under the inferred convention "
                                 "(acc {}); flagged above 1e3; worst {}", dtype_name(acc), g3(worst))
                   : fmt::format("model-free: each output against its row's line y = a x + b fitted on the first half; "
                                 "flagged above {} relative; worst {}", g3(line_tol), g3(worst));
  e.residual = worst;
  std::string seen;
  for (auto m : ds)
    if (!bad[m].empty())
      seen += fmt::format("{}m={}: {} bad (from {}){}", seen.empty() ? "" : "; ", m, bad[m].size(), *bad[m].begin(),
                          copied[m] ? ", copied through" : "");
  e.outputs = seen.empty() ? "no index flagged" : seen;
  std::string value = "every index normalized";
  Certainty cert = Certainty::certain;
  if (nbad) {
    int block = 0;
    for (int B : {2, 4, 8, 16, 32, 64}) {
      bool match = true;
      for (auto m : ds) {
        std::set<std::int64_t> tail;
        for (std::int64_t j = m - m % B; j < m; ++j) tail.insert(j);
        match = match && bad[m] == tail;
      }
      if (match) { block = B; break; }
    }
    bool all_copy = true;
    for (auto m : ds) all_copy = all_copy && (bad[m].empty() || copied[m]);
    if (block) value = fmt::format("tail unnormalized: the last m mod {} elements of each row{}", block,
                                   all_copy ? " are copied through (y = x)" : " are wrong");
    else if (2 * nbad > total) { value = "undetermined (errors at most indices: not an index-local fault)"; cert = Certainty::undetermined; }
    else { value = fmt::format("wrong outputs at {} of {} elements (no tail pattern)", nbad, total); cert = Certainty::likely; }
  }
  c.res.findings.push_back(finding("per_index", value, "every index normalized", cert, nbad > 0, e));
  if (nbad && cert != Certainty::undetermined) c.res.card_notes.push_back(value);
}

// ---------------------------------------------------------------------------------------
// 7. Degenerate inputs, against the nominal convention's reference.
std::string describe_row(const std::vector<double>& y, const std::vector<long double>& r, double tol) {
  std::int64_t nan = 0, inf = 0, zero = 0;
  for (double v : y) { nan += std::isnan(v); inf += std::isinf(v); zero += v == 0; }
  const std::int64_t n = static_cast<std::int64_t>(y.size());
  if (nan == n) return "all NaN";
  if (nan) return fmt::format("{} of {} NaN", nan, n);
  if (inf) return fmt::format("{} of {} infinite", inf, n);
  if (zero == n) return "all zero";
  bool ref_nan = !r.empty();
  for (long double v : r) ref_nan = ref_nan && std::isnan(v);
  if (ref_nan) return "finite (the NaN/Inf input was swallowed)";
  const double rd = rel_diff(y, r);
  return rd <= tol ? "finite, as the reference" : fmt::format("finite, max rel. error {} to the reference", g3(rd));
}

void probe_degenerate(Ctx& c, bool model_ok) {
  const std::int64_t d = c.d();
  // Against the inferred convention when it is known (so a fault already named, e.g. a
  // missing eps, is not counted again here), else against the nominal one.
  auto ref_of = [&](std::int64_t R, const std::vector<double>& x) {
    const Problem q = model_ok ? inferred_problem(c, R, d, x) : c.make({R, d}, x);
    return reference::evaluate_exact(q).at("y").exact_values();
  };
  const std::string which = model_ok ? "inferred" : "nominal";
  const double tol = std::max(1e-3, 8 * unit_roundoff(c.dt()));
  const double big = format_info(c.dt()).max_finite / 4;
  struct Row { const char* key; const char* what; std::vector<double> x; };
  std::vector<Row> rows;
  rows.push_back({"constant_row", "x = 5 everywhere", std::vector<double>(d, 5.0)});
  rows.push_back({"zero_row", "x = 0 everywhere", std::vector<double>(d, 0.0)});
  {
    std::vector<double> x(d);
    for (std::int64_t j = 0; j < d; ++j) x[j] = big * (j % 2 ? -1.0 : 1.0) * (1 - j / (4.0 * d));
    rows.push_back({"overflow_input", "x = +-(max/4) (1 - j/(4d)): squares overflow the dtype", stored(c.dt(), x)});
  }
  for (auto& r : rows) {
    Evidence e;
    e.inputs = fmt::format("one row of {}: {}", d, r.what);
    try {
      const auto y = c.run(c.make({1, d}, r.x)).to_doubles();
      const auto ref = ref_of(1, r.x);
      std::vector<double> refd(ref.begin(), ref.end());
      const std::string got = describe_row(y, ref, tol), want = describe_row(refd, ref, tol);
      e.outputs = fmt::format("y[0..1] = {}, {}; reference {}, {}", g7(y[0]), g7(y[1]), g7(static_cast<double>(ref[0])),
                              g7(static_cast<double>(ref[1])));
      e.residual = rel_diff(y, ref);
      e.fit = fmt::format("max rel. difference to the reference under the {} convention {}", which, g3(e.residual));
      c.res.findings.push_back(finding(r.key, got, want, Certainty::certain, got != want, e));
    } catch (const BackendError& ex) {
      e.outputs = ex.what();
      c.res.findings.push_back(finding(r.key, "undetermined (backend error)", "", Certainty::undetermined, false, e));
    }
  }
  // NaN / Inf in one element of the middle row of three.
  const auto x = stored(c.dt(), generate_normal(3 * d, 0, 1, c.o.seed + 30));
  std::vector<double> y0;
  try { y0 = c.run_rows(3, d, x); } catch (const BackendError&) {}
  for (double bad : {kNaN, HUGE_VAL}) {
    const char* key = std::isnan(bad) ? "nan_input" : "inf_input";
    Evidence e;
    e.inputs = fmt::format("x [3, {}] ~ N(0,1) seed {} with x[1,5] = {}", d, c.o.seed + 30, std::isnan(bad) ? "NaN" : "+inf");
    try {
      std::vector<double> xb = x;
      xb[d + 5] = bad;
      const auto y = c.run_rows(3, d, xb);
      std::vector<double> mid(y.begin() + d, y.begin() + 2 * d);
      std::int64_t others_moved = 0, others_nan = 0;
      for (std::int64_t i = 0; i < 3 * d; ++i) {
        if (i >= d && i < 2 * d) continue;
        others_nan += std::isnan(y[i]);
        others_moved += y0.empty() ? 0 : c.moved(y0[i], y[i]);
      }
      const std::vector<long double> ref(d, static_cast<long double>(kNaN));
      std::string got = "row " + describe_row(mid, ref, tol);
      got += others_nan ? fmt::format("; NaN leaks into {} outputs of other rows", others_nan)
             : others_moved ? fmt::format("; {} outputs of other rows changed", others_moved)
                            : "; other rows unaffected";
      e.outputs = fmt::format("row 1: {}", describe_row(mid, ref, tol));
      e.fit = fmt::format("other rows: {} NaN, {} changed against the run without {}", others_nan, others_moved,
                          std::isnan(bad) ? "NaN" : "inf");
      e.residual = static_cast<double>(others_nan + others_moved);
      const std::string want = "row all NaN; other rows unaffected";
      c.res.findings.push_back(finding(key, got, want, Certainty::certain, got != want, e));
    } catch (const BackendError& ex) {
      e.outputs = ex.what();
      c.res.findings.push_back(finding(key, "undetermined (backend error)", "", Certainty::undetermined, false, e));
    }
  }
}

}  // namespace

ProbeResult probe_row_norm(Backend& backend, const ProbeOptions& o) {
  ProbeResult res;
  res.backend = backend.name();
  res.options = o;
  res.inferred = o.nominal;
  res.inferred_op = o.op;
  Ctx c{backend, o, res};
  probe_axes(c);  // a refusal here propagates: nothing else could run
  bool centered = centers(o.op), model_ok = false;
  AccOutcome acc;
  auto guarded = [&](const char* what, auto&& fn) {
    try {
      fn();
    } catch (const BackendError& e) {
      Evidence ev;
      ev.outputs = e.what();
      res.findings.push_back(finding(what, "undetermined (backend error)", "", Certainty::undetermined, false, ev));
    }
  };
  guarded("centering", [&] { centered = probe_centering(c); });
  guarded("eps", [&] { model_ok = probe_eps(c); });
  guarded("affine", [&] { probe_affine(c); });
  guarded("accumulation_precision", [&] { acc = probe_accumulation(c, model_ok, centered); });
  guarded("per_index", [&] { probe_per_index(c, model_ok && acc.known, acc.known ? acc.acc : DType::f32); });
  guarded("degenerate", [&] { probe_degenerate(c, model_ok); });
  guarded("rounding_order", [&] { probe_rounding_order(c, model_ok); });
  return res;
}

}  // namespace normcheck::detail
