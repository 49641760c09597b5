// Probes of every op but the row norms (see probe.hpp for the contract), and the layout
// probe every op shares.
//
// Most experiments here are hypothesis tests: the backend evaluates a problem built so that
// the conventions in question give far-apart outputs, and each candidate convention (or
// known fault) predicts its outputs exactly (the reference on the same inputs under that
// convention, or on inputs transformed the way the fault reads them). The finding is the
// candidate the outputs fit (normwise relative error <= 16 u of the dtype) when the next
// one is at least 10 times further; `decide` below. The eps experiments are sweeps whose
// gains are fitted as the row norms' are (eps_fit.hpp, eps_sweep_findings).
//
//  group_norm     num_groups: x [2, 6, 4] with distinct channel means, G = 3 sent; candidates
//                 G' = 3, 1, 2, 6 contiguous and 3 interleaved (group g = channels g, g + 3).
//                 eps, eps_placement, variance: one channel per group, pairs +-a_k.
//                 affine: gamma_c = 1 + c/8, beta_c = c/16 - 1/2 per channel; candidates:
//                 as sent, beta ignored, gamma ignored, both ignored.
//  instance_norm  statistics over: per (n, c) (as sent), per sample (G = 1), per channel over
//                 the batch (batch_norm's); eps sweep; affine.
//  batch_norm     training: batch statistics (as sent) / running statistics / per (channel,
//                 position) over N only; eval: running / batch statistics; momentum: the
//                 factor a of the running_mean update, solved per channel (0.1 sent after 3
//                 batches: a caller-given momentum shows 0.1, Keras's own 0.01, the
//                 cumulative average 1/4); running_variance: unbiased / biased; variance (the forward's);
//                 eps sweep in eval (y = (x - r_mean) / D(r_var)); affine.
//  l2_normalize, scale_norm   eps sweep over the norm (v = sum x^2: clamp_norm max(||x||, eps),
//                 outside_sqrt ||x|| + eps, inside_sqrt sqrt(||x||^2 + eps)); axes: last /
//                 last two / all; scale_norm's g: applied / ignored.
//  ada_*          modulation: (1 + scale) n + shift per batch element (as sent) / scale n +
//                 shift / rows chosen by token index / shift ignored.
//  qk_norm        statistic: RMS per head (as sent) / RMS across heads / L2 per head; scores:
//                 / sqrt(d_k) (as sent) / unscaled.
//  dyt            alpha: tanh(alpha x) (as sent) / tanh(x) / alpha tanh(x).
//  fused_add_*    norm_input: the norm reads h rounded to the residual's dtype (as sent) / the
//                 unrounded sum (bf16 x = [1, 1], residual = [2^-8, 0]: y = 0 or +-0.5255).
//  *_quant        rounding: nearest_even (as sent) / nearest_away, on y / s = +-(j + 1/2);
//                 scale_form: divisor (as sent) / multiplier; quant_scale: per token (as
//                 sent) / one dynamic scale for the whole tensor. int8, judged to a step.
//  layout (every op, probe_layouts)   each layout: reads the view / storage offset ignored /
//                 strides ignored, on the op's sampled problem.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/probe_detail.hpp"
#include "ops/reference.hpp"
#include "ops/registry.hpp"
#include "spec/sample.hpp"

namespace normcheck::detail {

namespace {

/// Outputs as binary64 values, by name.
using Values = std::map<std::string, std::vector<double>>;

/// The exact outputs of p (binary64 of the exact values; a quantized output's correctly
/// rounded quantization steps, since its exact value is the unquantized y / s).
Values exact(const Problem& p) {
  Values v;
  for (const auto& [k, e] : reference::evaluate_exact(p)) v[k] = is_quantized(e.dtype) ? e.rounded().to_doubles() : e.exact_f64();
  return v;
}

/// Normwise relative distance of `got` from `want` on the outputs `names`: the largest, over
/// them, of max_i |y_i - r_i| / max_i |r_i|; a NaN on one side only is +inf, on both 0.
double distance(const Values& got, const Values& want, const std::vector<std::string>& names) {
  double worst = 0;
  for (const auto& n : names) {
    auto g = got.find(n), w = want.find(n);
    if (g == got.end() || w == want.end() || g->second.size() != w->second.size()) return HUGE_VAL;
    double num = 0, den = 0;
    for (std::size_t i = 0; i < g->second.size(); ++i) {
      const double a = g->second[i], b = w->second[i];
      if (std::isnan(a) || std::isnan(b)) {
        if (std::isnan(a) != std::isnan(b)) return HUGE_VAL;
        continue;
      }
      if (std::isinf(a) || std::isinf(b)) {
        if (a != b) return HUGE_VAL;
        continue;
      }
      num = std::max(num, std::fabs(a - b));
      den = std::max(den, std::fabs(b));
    }
    worst = std::max(worst, den > 0 ? num / den : num);
  }
  return worst;
}

/// One explanation of the backend's outputs: its name and what it predicts.
struct Hyp {
  std::string value;
  Values predicted;
};

/// The finding that `got` supports among `hyps` (hyps[0]: the nominal convention) compared on
/// the outputs `names`: certain when the best fits within `tol` and every other candidate is
/// at least 10 times further (and beyond 4 tol), likely when it fits within 64 tol and is 4
/// times closer than the next; "none of the candidates" (likely, a deviation) when none fits
/// within 64 tol; undetermined when two candidates cannot be told apart.
Finding decide(const std::string& property, const Values& got, const std::vector<Hyp>& hyps, const std::vector<std::string>& names,
               double tol, Evidence e) {
  std::vector<std::pair<double, std::size_t>> d;
  for (std::size_t i = 0; i < hyps.size(); ++i) d.emplace_back(distance(got, hyps[i].predicted, names), i);
  std::stable_sort(d.begin(), d.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::string fit;
  for (auto& [dist, i] : d) fit += fmt::format("{}{}: {}", fit.empty() ? "" : "; ", hyps[i].value, g3(dist));
  e.fit = "normwise relative error of the outputs against each candidate's exact prediction: " + fit;
  e.residual = d.front().first;
  const std::string& expected = hyps.front().value;
  const Hyp& best = hyps[d.front().second];
  const double d1 = d.front().first, d2 = d.size() > 1 ? d[1].first : HUGE_VAL;
  if (d1 > 64 * tol)
    return finding(property, fmt::format("none of the candidates (closest: {}, relative error {})", best.value, g3(d1)), expected,
                   Certainty::likely, true, e);
  if (d.size() > 1 && d2 <= std::max(4.0 * std::max(d1, tol), d1 * 4)) {
    // Two candidates fit alike. When neither is the nominal one and the nominal is far off, the
    // backend deviates either way: say so, naming both.
    const double dn = distance(got, hyps.front().predicted, names);
    const bool nominal_tied = d.front().second == 0 || d[1].second == 0;
    if (!nominal_tied && dn >= std::max(10 * d2, 4 * tol))
      return finding(property, fmt::format("{} or {} (this experiment cannot tell them apart)", best.value, hyps[d[1].second].value),
                     expected, Certainty::likely, true, e);
    return finding(property, fmt::format("cannot tell {} from {}", best.value, hyps[d[1].second].value), expected,
                   Certainty::undetermined, false, e);
  }
  const Certainty c = d1 <= tol && d2 >= std::max(10 * d1, 4 * tol) ? Certainty::certain : Certainty::likely;
  return finding(property, best.value, expected, c, best.value != expected, e);
}

/// State of one probe.
struct Fam {
  Backend& b;
  const ProbeOptions& o;
  ProbeResult& res;

  DType dt() const { return o.dtype; }
  double tol() const { return 16 * unit_roundoff(o.dtype); }

  /// p's outputs on the backend; nullopt, with the reason in `why`, when it declines p.
  /// Throws BackendError when it fails.
  std::optional<Values> run(const Problem& problem, std::string& why) {
    const ValidProblem vp = validate(problem);
    if (auto w = declined(b, *vp)) {
      why = *w;
      return std::nullopt;
    }
    if (auto w = b.unsupported(vp, {})) {
      why = *w;
      return std::nullopt;
    }
    Values v;
    for (const auto& [k, t] : b.run(vp, {})) v[k] = t.to_doubles();
    return v;
  }

  /// Runs p and decides `property` among `hyps` on `names`; an undetermined finding naming the
  /// reason when the backend declines p.
  void test(const std::string& property, const Problem& p, const std::vector<Hyp>& hyps, const std::vector<std::string>& names,
            const std::string& inputs, double tolerance = 0) {
    Evidence e;
    e.inputs = inputs;
    std::string why;
    const auto got = run(p, why);
    if (!got) {
      res.findings.push_back(finding(property, fmt::format("undetermined: the backend declines the experiment ({})", why),
                                     hyps.front().value, Certainty::undetermined, false, e));
      return;
    }
    std::string seen;
    for (const auto& n : names)
      if (got->count(n)) {
        const auto& v = got->at(n);
        seen += fmt::format("{}{} = [{}{}]", seen.empty() ? "" : "; ", n, fmt::join(v.begin(), v.begin() + std::min<std::size_t>(v.size(), 4), ", "),
                            v.size() > 4 ? ", ..." : "");
      }
    e.outputs = seen;
    res.findings.push_back(decide(property, *got, hyps, names, tolerance > 0 ? tolerance : tol(), e));
  }

  /// Whether finding `property` was determined with the value `v`.
  bool found(const std::string& property, const std::string& v) const {
    const Finding* f = res.find(property);
    return f && f->certainty != Certainty::undetermined && f->value == v;
  }
};

/// Deterministic N(0, 1) values (splitmix64 + Box-Muller): the probe's own data.
std::vector<double> normal(std::size_t n, std::uint64_t seed) {
  std::vector<double> v(n);
  auto next = [&seed] {
    std::uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1p-53;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const double u1 = next() + 0x1p-54, u2 = next();
    v[i] = std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  return v;
}

Tensor tensor(DType t, const Shape& s, const std::vector<double>& v) { return Tensor::from_doubles(t, s, v); }

/// A problem of op with the nominal convention (its eps, placement, estimator) and affine none.
Problem base(const Fam& f, Op op) {
  Problem p;
  p.op = op;
  p.conv = default_convention(op);
  p.conv.eps = f.o.nominal.eps;
  p.conv.eps_placement = f.o.nominal.eps_placement;
  p.conv.variance = f.o.nominal.variance;
  p.conv.acc_dtype = f.dt() == DType::f64 ? DType::f64 : DType::f32;
  p.conv.affine = Affine::none;
  p.out_dtype = f.dt();
  return p;
}

// ---- the eps sweep ----------------------------------------------------------------------

/// Variances 1e-14 .. 1e2 in half decades whose pattern +-a_k (4 distinct magnitudes) the
/// dtype holds within 10%, as groups of 8 values: the group's values and exact statistic.
struct Sweep {
  std::vector<std::vector<double>> groups;
  std::vector<double> v;  ///< the exact biased variance (mean square) of each group
};
Sweep sweep_groups(DType dt) {
  static constexpr double c[4] = {0.4, 0.8, 1.2, 1.45};  // spread magnitudes, mean square ~ 1
  double msq = 0;
  for (double x : c) msq += x * x / 4;
  Sweep s;
  for (int k = -28; k <= 4; ++k) {
    const double a = std::sqrt(std::pow(10.0, k / 2.0) / msq);
    std::vector<double> g;
    long double ss = 0;
    for (double x : c) {
      const double r = tensor(dt, {1}, {a * x}).get(0);
      g.push_back(r);
      g.push_back(-r);
      ss += 2 * static_cast<long double>(r) * r;
    }
    const double v = static_cast<double>(ss / 8);
    if (!(v > 0) || !std::isfinite(v) || std::fabs(v / std::pow(10.0, k / 2.0) - 1) > 0.1) continue;
    s.groups.push_back(g);
    s.v.push_back(v);
  }
  return s;
}

/// Gains g = sum y x / sum x^2 of groups of 8 values starting at `starts` (stride `stride`).
std::vector<GainSample> gains(const std::vector<double>& x, const std::vector<double>& y, const std::vector<std::int64_t>& starts,
                              std::int64_t stride, const std::vector<double>& v, double v_scale) {
  std::vector<GainSample> s;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    long double num = 0, den = 0;
    for (std::int64_t j = 0; j < 8; ++j) {
      const auto i = static_cast<std::size_t>(starts[k] + j * stride);
      num += static_cast<long double>(y[i]) * x[i];
      den += static_cast<long double>(x[i]) * x[i];
    }
    s.push_back({v[k] * v_scale, static_cast<double>(num / den)});
  }
  return s;
}

/// Runs the sweep problem p (x holding the groups) and records the eps findings.
void eps_sweep(Fam& f, const Problem& p, const std::vector<std::int64_t>& starts, std::int64_t stride, const std::vector<double>& v,
               double v_scale, std::int64_t m, bool estimator, const std::string& inputs) {
  Evidence e;
  e.inputs = inputs;
  std::string why;
  const auto got = f.run(p, why);
  if (!got) {
    for (const char* k : {"eps", "eps_placement"})
      f.res.findings.push_back(finding(k, fmt::format("undetermined: the backend declines the experiment ({})", why), "",
                                       Certainty::undetermined, false, e));
    return;
  }
  const auto samples = gains(p.x().to_doubles(), got->at("y"), starts, stride, v, v_scale);
  std::string seen;
  for (std::size_t i = 0; i < samples.size(); i += 4)
    seen += fmt::format("{}g({}) = {}", seen.empty() ? "gain g = sum y x / sum x^2: " : ", ", g3(samples[i].v), g7(samples[i].g));
  e.outputs = seen;
  eps_sweep_findings(f.res, f.o, samples, m, unit_roundoff(f.dt()) / 2, e, estimator);
}

/// Records the eps findings of a channel op: one group per channel of x [1, K, 8] (group_norm
/// with G = K; instance_norm) or x [8, K] (batch_norm in training: a channel's 8 values).
void channel_eps(Fam& f, Op op) {
  const Sweep s = sweep_groups(f.dt());
  const auto K = static_cast<std::int64_t>(s.v.size());
  Problem p = base(f, op);
  std::vector<double> x;
  std::vector<std::int64_t> starts;
  std::int64_t stride = 1;
  if (op == Op::batch_norm) {
    x.assign(static_cast<std::size_t>(8 * K), 0);
    for (std::int64_t k = 0; k < K; ++k) {
      starts.push_back(k);
      for (std::int64_t j = 0; j < 8; ++j) x[j * K + k] = s.groups[k][j];
    }
    stride = K;
    p.conv.track_running_stats = false;
    p.inputs["x"] = tensor(f.dt(), {8, K}, x);
  } else {
    for (std::int64_t k = 0; k < K; ++k) {
      starts.push_back(8 * k);
      x.insert(x.end(), s.groups[k].begin(), s.groups[k].end());
    }
    if (op == Op::group_norm) p.conv.num_groups = K;
    p.inputs["x"] = tensor(f.dt(), {1, K, 8}, x);
  }
  eps_sweep(f, p, starts, stride, s.v, 1, 8, true,
            fmt::format("{} groups of 8 values (one per channel{}): pairs +-a_k, mean 0, variance v from {} to {} in half decades, "
                        "affine none",
                        K, op == Op::batch_norm ? ", over the batch" : "", g3(s.v.front()), g3(s.v.back())));
}

// ---- channel ops --------------------------------------------------------------------------

/// x [n, c, l]: N(0, 1) plus a distinct mean per channel (0.7 c - 1), so groupings differ.
std::vector<double> channel_data(std::int64_t n, std::int64_t c, std::int64_t l, std::uint64_t seed) {
  auto v = normal(static_cast<std::size_t>(n * c * l), seed);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t ch = 0; ch < c; ++ch)
      for (std::int64_t j = 0; j < l; ++j) v[(i * c + ch) * l + j] += 0.7 * static_cast<double>(ch) - 1;
  return v;
}

/// The affine experiment of a channel op: gamma_c = 1 + c/8, beta_c = c/16 - 1/2 sent; the
/// candidates apply them (or not) to the backend's own output without affine, so a fault in
/// the statistics does not hide the affine convention.
void channel_affine(Fam& f, Problem p) {
  const std::string in = "x [N, C, L] ~ N(0,1) + 0.7 c - 1, gamma_c = 1 + c/8, beta_c = c/16 - 1/2";
  std::string why;
  p.conv.affine = Affine::none;
  p.inputs.erase("gamma");
  p.inputs.erase("beta");
  const auto y0 = f.run(p, why);
  if (!y0) {
    Evidence e;
    e.inputs = in;
    f.res.findings.push_back(finding("affine", fmt::format("undetermined: the backend declines the experiment ({})", why),
                                     "gamma_beta (gamma and beta per channel)", Certainty::undetermined, false, e));
    return;
  }
  const Shape& xs = p.x().shape();
  const std::int64_t C = xs[1], inner = numel(xs) / (xs[0] * C);
  std::vector<double> g, b;
  for (std::int64_t c = 0; c < C; ++c) g.push_back(1 + static_cast<double>(c) / 8), b.push_back(static_cast<double>(c) / 16 - 0.5);
  const std::vector<double> gs = tensor(f.dt(), {C}, g).to_doubles(), bs = tensor(f.dt(), {C}, b).to_doubles();
  auto apply = [&](bool use_g, bool use_b) {
    std::vector<double> y = y0->at("y");
    for (std::size_t i = 0; i < y.size(); ++i) {
      const auto c = static_cast<std::size_t>((static_cast<std::int64_t>(i) / inner) % C);
      y[i] = (use_g ? gs[c] : 1.0) * y[i] + (use_b ? bs[c] : 0.0);
    }
    return Values{{"y", y}};
  };
  p.conv.affine = Affine::gamma_beta;
  p.inputs["gamma"] = tensor(f.dt(), {C}, g);
  p.inputs["beta"] = tensor(f.dt(), {C}, b);
  f.test("affine", p,
         {{"gamma_beta (gamma and beta per channel)", apply(true, true)},
          {"gamma (beta ignored)", apply(true, false)},
          {"beta only (gamma ignored)", apply(false, true)},
          {"none (gamma and beta ignored)", apply(false, false)}},
         {"y"}, in + "; the candidates applied to the backend's own output without them");
  if (const Finding* fd = f.res.find("affine"); fd && fd->certainty != Certainty::undetermined) {
    if (fd->value.rfind("gamma_beta", 0) == 0) f.res.inferred.affine = Affine::gamma_beta;
    else if (fd->value.rfind("gamma (", 0) == 0) f.res.inferred.affine = Affine::gamma;
    else if (fd->value.rfind("none", 0) == 0) f.res.inferred.affine = Affine::none;
  }
}

void probe_group_norm(Fam& f) {
  Problem p = base(f, Op::group_norm);
  p.inputs["x"] = tensor(f.dt(), {2, 6, 4}, channel_data(2, 6, 4, f.o.seed));
  p.conv.num_groups = 3;
  std::vector<Hyp> h;
  for (std::int64_t g : {3, 1, 2, 6}) {
    Problem q = p;
    q.conv.num_groups = g;
    h.push_back({fmt::format("{} groups of contiguous channels", g), exact(q)});
  }
  {  // interleaved: group g = channels g, g + 3: contiguous groups of the channels permuted
    static constexpr std::int64_t perm[6] = {0, 3, 1, 4, 2, 5};
    const auto x = p.x().to_doubles();
    std::vector<double> xp(x.size());
    for (std::int64_t n = 0; n < 2; ++n)
      for (std::int64_t c = 0; c < 6; ++c)
        for (std::int64_t l = 0; l < 4; ++l) xp[(n * 6 + c) * 4 + l] = x[(n * 6 + perm[c]) * 4 + l];
    Problem q = p;
    q.inputs["x"] = tensor(f.dt(), {2, 6, 4}, xp);
    const auto yp = exact(q).at("y");
    std::vector<double> y(x.size());
    for (std::int64_t n = 0; n < 2; ++n)
      for (std::int64_t c = 0; c < 6; ++c)
        for (std::int64_t l = 0; l < 4; ++l) y[(n * 6 + perm[c]) * 4 + l] = yp[(n * 6 + c) * 4 + l];
    h.push_back({"3 groups of interleaved channels (g, g + 3)", {{"y", y}}});
  }
  f.test("num_groups", p, h, {"y"}, "x [2, 6, 4] ~ N(0,1) + 0.7 c - 1 per channel c, num_groups = 3 sent, affine none");
  channel_eps(f, Op::group_norm);
  channel_affine(f, p);
}

void probe_instance_norm(Fam& f) {
  Problem p = base(f, Op::instance_norm);
  p.inputs["x"] = tensor(f.dt(), {2, 4, 4}, channel_data(2, 4, 4, f.o.seed));
  Problem g1 = base(f, Op::group_norm);
  g1.inputs["x"] = p.x();
  g1.conv.num_groups = 1;
  Problem bn = base(f, Op::batch_norm);
  bn.inputs["x"] = p.x();
  bn.conv.track_running_stats = false;
  f.test("statistics_over", p,
         {{"each (sample, channel)", exact(p)}, {"each sample (all channels: group_norm G = 1)", exact(g1)},
          {"each channel over the batch (batch_norm's)", exact(bn)}},
         {"y"}, "x [2, 4, 4] ~ N(0,1) + 0.7 c - 1 per channel c, affine none");
  channel_eps(f, Op::instance_norm);
  channel_affine(f, p);
}

void probe_batch_norm(Fam& f) {
  const std::int64_t N = 4, C = 3, L = 2;
  Problem p = base(f, Op::batch_norm);
  p.inputs["x"] = tensor(f.dt(), {N, C, L}, channel_data(N, C, L, f.o.seed));
  p.inputs["running_mean"] = tensor(f.dt(), {C}, {0.5, -1, 2});
  p.inputs["running_var"] = tensor(f.dt(), {C}, {2, 0.5, 3});
  p.conv.momentum = 0.1;
  p.conv.num_batches_tracked = 3;
  p.conv.training = true;
  const std::string in = "x [4, 3, 2] ~ N(0,1) + 0.7 c - 1, running_mean [0.5, -1, 2], running_var [2, 0.5, 3]";
  auto mode = [&](bool training) {
    Problem q = p;
    q.conv.training = training;
    return exact(q);
  };
  // Per (channel, position) over N only: batch_norm of x viewed as [N, C * L] (affine none).
  Problem flat = base(f, Op::batch_norm);
  flat.inputs["x"] = tensor(f.dt(), {N, C * L}, p.x().to_doubles());
  flat.conv.track_running_stats = false;
  Values over_n = exact(flat);
  f.test("training", p,
         {{"batch statistics", mode(true)}, {"running statistics", mode(false)},
          {"per (channel, position) over the batch only", over_n}},
         {"y"}, in + ", training = true sent");
  if (f.found("training", "running statistics")) f.res.inferred.training = false;
  {
    Problem q = p;
    q.conv.training = false;
    f.test("eval", q, {{"running statistics", mode(false)}, {"batch statistics", mode(true)}}, {"y"}, in + ", training = false sent");
  }
  // The running-stat update: the factor a in new = (1 - a) old + a batch the backend applies,
  // solved per channel from its running_mean: a_c = (r'_c - r_c) / (mu_c - r_c), mu_c the
  // exact batch mean. Sent: momentum 0.1 (PyTorch's default; a backend that takes it from its
  // caller shows 0.1, one with its own shows that: Keras's and Flax's 0.99 is a = 0.01) after
  // 3 batches (the cumulative average would be a = 1/4).
  std::optional<double> a = 0.1;
  {
    Evidence e;
    e.inputs = in + ", training = true sent, momentum 0.1, num_batches_tracked 3: running_mean";
    std::string why;
    const auto got = f.run(p, why);
    if (!got || !got->count("running_mean")) {
      f.res.findings.push_back(finding("momentum", fmt::format("undetermined: {}", got ? "no running_mean returned" : why), "0.1",
                                       Certainty::undetermined, false, e));
    } else {
      const auto x = p.x().to_doubles(), r0 = p.inputs.at("running_mean").to_doubles();
      const auto& r1 = got->at("running_mean");
      std::vector<double> as;
      std::string seen;
      for (std::int64_t c = 0; c < C; ++c) {
        long double mu = 0;
        for (std::int64_t i = 0; i < N; ++i)
          for (std::int64_t l = 0; l < L; ++l) mu += x[(i * C + c) * L + l];
        mu /= N * L;
        as.push_back(static_cast<double>((r1[c] - r0[c]) / (mu - r0[c])));
        seen += fmt::format("{}channel {}: running_mean {} -> {} (batch mean {}): a = {}", seen.empty() ? "" : "; ", c, g7(r0[c]),
                            g7(r1[c]), g7(static_cast<double>(mu)), g7(as.back()));
      }
      e.outputs = seen;
      const auto [lo, hi] = std::minmax_element(as.begin(), as.end());
      const double am = as[as.size() / 2], spread = *hi - *lo;
      e.residual = spread;
      e.fit = fmt::format("a over the channels from {} to {}", g7(*lo), g7(*hi));
      const double tol = 64 * unit_roundoff(f.dt()) * 8;  // running stats in the dtype; mu - r ~ 1
      if (!std::isfinite(am) || spread > tol) {
        f.res.findings.push_back(finding("momentum", fmt::format("no one factor a (from {} to {} over the channels)", g7(*lo), g7(*hi)),
                                         "0.1", Certainty::likely, true, e));
        a.reset();
      } else {
        std::string v = fmt::format("{} (new = {} old + {} batch)", shortest_decimal_in(am, am - tol, am + tol), g7(1 - am), g7(am));
        if (std::fabs(am - 0.25) <= tol) v += ": the cumulative average 1/num_batches_tracked (momentum none)";
        if (std::fabs(am - 0.9) <= tol) v += ": the momentum weighs the old value (Keras's convention)";
        const bool as_sent = std::fabs(am - 0.1) <= tol;
        f.res.findings.push_back(finding("momentum", as_sent ? "0.1 (new = 0.9 old + 0.1 batch: as sent)" : v, "0.1 (new = 0.9 old + 0.1 batch: as sent)",
                                         Certainty::certain, !as_sent, e));
        if (std::fabs(am - 0.25) <= tol) a = std::nullopt;
        else a = as_sent ? 0.1 : std::strtod(shortest_decimal_in(am, am - tol, am + tol).c_str(), nullptr);
        f.res.inferred.momentum = a;
      }
    }
  }
  {
    std::vector<Hyp> hv;
    for (Variance v : {Variance::unbiased, Variance::biased}) {
      Problem q = p;
      q.conv.momentum = a;
      q.conv.running_variance = v;
      hv.push_back({std::string(to_string(v)), exact(q)});
    }
    f.test("running_variance", p, hv, {"running_var"}, in + ", training = true sent: running_var");
    if (f.found("running_variance", "biased")) f.res.inferred.running_variance = Variance::biased;
  }
  {
    std::vector<Hyp> hv;
    Problem q = p;
    q.conv.track_running_stats = false;
    q.inputs.erase("running_mean");
    q.inputs.erase("running_var");
    q.conv.variance = f.o.nominal.variance;
    for (Variance v : {f.o.nominal.variance, f.o.nominal.variance == Variance::biased ? Variance::unbiased : Variance::biased}) {
      Problem r = q;
      r.conv.variance = v;
      hv.push_back({std::string(to_string(v)), exact(r)});
    }
    f.test("variance", q, hv, {"y"}, "x [4, 3, 2] (as above), training with batch statistics, no running stats");
    if (f.found("variance", "unbiased")) f.res.inferred.variance = Variance::unbiased;
    if (f.found("variance", "biased")) f.res.inferred.variance = Variance::biased;
  }
  // eps in eval: y = x / D(r_var) with x = +-1, running_mean 0, running_var = v per channel.
  {
    const Sweep s = sweep_groups(f.dt());
    const auto K = static_cast<std::int64_t>(s.v.size());
    Problem q = base(f, Op::batch_norm);
    q.conv.training = false;
    std::vector<double> x(static_cast<std::size_t>(8 * K));
    std::vector<std::int64_t> starts;
    for (std::int64_t k = 0; k < K; ++k) {
      starts.push_back(k);
      for (std::int64_t j = 0; j < 8; ++j) x[j * K + k] = j % 2 ? -1.0 : 1.0 + j / 8.0;
    }
    q.inputs["x"] = tensor(f.dt(), {8, K}, x);
    q.inputs["running_mean"] = tensor(f.dt(), {K}, std::vector<double>(static_cast<std::size_t>(K), 0.0));
    Tensor rv = tensor(f.dt(), {K}, s.v);
    q.inputs["running_var"] = rv;
    eps_sweep(f, q, starts, K, rv.to_doubles(), 1, 1 << 20, false,
              fmt::format("eval: x [8, {}] of +-1, running_mean 0, running_var v from {} to {} in half decades (per channel), "
                          "affine none",
                          K, g3(s.v.front()), g3(s.v.back())));
  }
  channel_affine(f, p);
}

// ---- l2_normalize, scale_norm -------------------------------------------------------------

void probe_l2(Fam& f, Op op) {
  const Sweep s = sweep_groups(f.dt());
  const auto K = static_cast<std::int64_t>(s.v.size());
  Problem p = base(f, op);
  std::vector<double> x;
  std::vector<std::int64_t> starts;
  for (std::int64_t k = 0; k < K; ++k) {
    starts.push_back(8 * k);
    x.insert(x.end(), s.groups[k].begin(), s.groups[k].end());
  }
  p.inputs["x"] = tensor(f.dt(), {K, 8}, x);
  p.conv.normalized_shape = {8};
  if (op == Op::scale_norm) p.inputs["g"] = tensor(f.dt(), {1}, {1.0});
  // The statistic is the sum of squares ||x||^2 = 8 v.
  eps_sweep(f, p, starts, 1, s.v, 8, 1 << 20, false,
            fmt::format("{} rows of 8 values: pairs +-a_k, ||x||^2 from {} to {} in half decades", K, g3(8 * s.v.front()),
                        g3(8 * s.v.back())));
  Problem q = base(f, op);
  q.inputs["x"] = tensor(f.dt(), {2, 3, 4}, channel_data(2, 3, 4, f.o.seed));
  q.conv.normalized_shape = {4};
  if (op == Op::scale_norm) q.inputs["g"] = tensor(f.dt(), {1}, {1.0});
  std::vector<Hyp> h;
  for (auto [axes, name] : {std::pair<std::vector<std::int64_t>, std::string>{{2}, "the last axis"},
                            {{1, 2}, "the last two axes"},
                            {{0, 1, 2}, "every axis"},
                            {{1}, "axis 1"}}) {
    Problem r = q;
    r.conv.axes = axes;
    h.push_back({name, exact(r)});
  }
  f.test("axes", q, h, {"y"}, "x [2, 3, 4] ~ N(0,1) + 0.7 i - 1 (i: the middle index), the last axis sent");
  if (op == Op::scale_norm) {
    Problem r = q;
    r.inputs["g"] = tensor(f.dt(), {1}, {1.75});
    f.test("g", r, {{"g x / ||x||", exact(r)}, {"x / ||x|| (g ignored)", exact(q)}}, {"y"}, "as above, g = 1.75");
  }
}

// ---- ada_layer_norm, ada_rms_norm --------------------------------------------------------

void probe_ada(Fam& f, Op op) {
  const std::int64_t B = 2, T = 3, d = 8;
  Problem p = base(f, op);
  p.conv.normalized_shape = {d};
  p.inputs["x"] = tensor(f.dt(), {B, T, d}, channel_data(B, T, d, f.o.seed));
  auto sh = normal(static_cast<std::size_t>(B * d), f.o.seed + 11);
  auto sc = normal(static_cast<std::size_t>(B * d), f.o.seed + 12);
  for (auto& v : sc) v *= 0.3;
  p.inputs["scale"] = tensor(f.dt(), {B, d}, sc);
  p.inputs["shift"] = tensor(f.dt(), {B, d}, sh);
  Problem z = p;  // the normalized value n: scale = shift = 0
  z.inputs["scale"] = tensor(f.dt(), {B, d}, std::vector<double>(static_cast<std::size_t>(B * d), 0.0));
  z.inputs["shift"] = z.inputs["scale"];
  const auto n = exact(z).at("y");
  const auto s = p.inputs.at("scale").to_doubles(), b = p.inputs.at("shift").to_doubles();
  auto model = [&](int kind) {  // 0 (1+s) n + b; 1 s n + b; 2 rows by token index; 3 shift ignored
    std::vector<double> y(n.size());
    for (std::int64_t i = 0; i < B; ++i)
      for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t j = 0; j < d; ++j) {
          const std::int64_t r = kind == 2 ? t % B : i;
          const std::size_t at = static_cast<std::size_t>((i * T + t) * d + j), ps = static_cast<std::size_t>(r * d + j);
          y[at] = (kind == 1 ? s[ps] : 1 + s[ps]) * n[at] + (kind == 3 ? 0.0 : b[ps]);
        }
    return Values{{"y", y}};
  };
  f.test("modulation", p,
         {{"(1 + scale) n + shift, per batch element", exact(p)},
          {"scale n + shift", model(1)},
          {"(1 + scale) n + shift, rows chosen by token index (broadcast over the batch)", model(2)},
          {"(1 + scale) n (shift ignored)", model(3)}},
         {"y"}, "x [2, 3, 8] ~ N(0,1) + 0.7 t - 1, scale ~ 0.3 N(0,1), shift ~ N(0,1) [2, 8]");
}

// ---- qk_norm -------------------------------------------------------------------------------

void probe_qk(Fam& f) {
  const std::int64_t H = 2, T = 3, S = 2, d = 8;
  Problem p = base(f, Op::qk_norm);
  p.conv.qk_form = QkForm::rms;
  p.conv.eps_placement = EpsPlacement::inside_sqrt;
  p.conv.normalized_shape = {d};
  p.inputs["q"] = tensor(f.dt(), {1, H, T, d}, channel_data(1, H * T, d, f.o.seed));
  p.inputs["k"] = tensor(f.dt(), {1, H, S, d}, channel_data(1, H * S, d, f.o.seed + 1));
  const Values nominal = exact(p);
  // Candidates computed in binary64 (far below the tolerance) from the stored values.
  auto norm = [&](const std::string& in, std::int64_t rows, bool across, bool l2) {
    const auto v = p.inputs.at(in).to_doubles();
    std::vector<double> y(v.size());
    for (std::int64_t t = 0; t < rows; ++t)
      for (std::int64_t h = 0; h < H; ++h) {
        long double ss = 0;
        std::int64_t m = 0;
        for (std::int64_t hh = across ? 0 : h; hh < (across ? H : h + 1); ++hh)
          for (std::int64_t j = 0; j < d; ++j, ++m) ss += static_cast<long double>(v[(hh * rows + t) * d + j]) * v[(hh * rows + t) * d + j];
        const long double den = l2 ? std::sqrt(ss) : std::sqrt(ss / m + p.conv.eps);
        for (std::int64_t j = 0; j < d; ++j) y[(h * rows + t) * d + j] = static_cast<double>(v[(h * rows + t) * d + j] / den);
      }
    return y;
  };
  f.test("qk_statistic", p,
         {{"RMS per head", nominal},
          {"RMS across heads (over H d_k values per token)", {{"q_hat", norm("q", T, true, false)}, {"k_hat", norm("k", S, true, false)}}},
          {"L2 per head (q / ||q||)", {{"q_hat", norm("q", T, false, true)}, {"k_hat", norm("k", S, false, true)}}}},
         {"q_hat", "k_hat"}, "q [1, 2, 3, 8], k [1, 2, 2, 8] ~ N(0,1) + 0.7 i - 1 per row i, qk_form rms, no gains");
  std::vector<double> unscaled = nominal.at("y");
  for (double& v : unscaled) v *= std::sqrt(static_cast<double>(d));
  f.test("score_scale", p, {{"q^.k^ / sqrt(d_k)", nominal}, {"q^.k^ (unscaled)", {{"y", unscaled}}}}, {"y"}, "as above: scores y");
}

// ---- dyt, fused_add_* ----------------------------------------------------------------------

void probe_dyt(Fam& f) {
  Problem p = base(f, f.o.op);
  p.conv.normalized_shape = {8};
  p.inputs["x"] = tensor(f.dt(), {2, 8}, channel_data(1, 2, 8, f.o.seed));
  p.inputs["alpha"] = tensor(f.dt(), {1}, {0.625});
  const auto x = p.x().to_doubles();
  std::vector<double> one(x.size()), after(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) one[i] = std::tanh(x[i]), after[i] = 0.625 * std::tanh(x[i]);
  f.test("alpha", p, {{"tanh(alpha x)", exact(p)}, {"tanh(x) (alpha ignored)", {{"y", one}}}, {"alpha tanh(x)", {{"y", after}}}},
         {"y"}, "x [2, 8] ~ N(0,1) + 0.7 r - 1, alpha = 0.625, affine none");
}

void probe_fused(Fam& f, Op op) {
  // bf16 whatever the probe's dtype: the two orders are far apart only in a narrow format.
  Problem p = base(f, op);
  p.out_dtype = DType::bf16;
  p.conv.acc_dtype = DType::f32;
  p.conv.normalized_shape = {2};
  p.inputs["x"] = tensor(DType::bf16, {2, 2}, {1, 1, 3, 5});
  p.inputs["residual"] = tensor(DType::bf16, {2, 2}, {0x1p-8, 0, 1, -1});
  std::vector<Hyp> h;
  for (NormInput n : {NormInput::rounded, NormInput::unrounded}) {
    Problem q = p;
    q.conv.norm_input = n;
    h.push_back({n == NormInput::rounded ? "rounded (the norm reads h as stored)" : "unrounded (the norm reads the wide sum)", exact(q)});
  }
  f.test("norm_input", p, h, {"y"}, "bf16 x = [[1, 1], [3, 5]], residual = [[2^-8, 0], [1, -1]]: h = [1, 1] rounded (y = 0)");
  if (f.found("norm_input", h[1].value)) f.res.inferred.norm_input = NormInput::unrounded;
}

// ---- rms_norm_quant, layer_norm_quant ------------------------------------------------------

void probe_quant(Fam& f, Op op) {
  // Rows of +-1 (mean 0, variance and mean square 1) with eps = 0: n = x exactly, so
  // y = +-gamma_j = +-(j + 1/2) and y / s is a tie at s = 1; int8 output.
  Problem p = base(f, op);
  p.out_dtype = DType::int8;
  p.conv.eps = 0;
  p.conv.affine = Affine::gamma;
  p.conv.normalized_shape = {4};
  p.conv.quant_scale = QuantScale::static_per_tensor;
  p.inputs["x"] = tensor(f.dt(), {2, 4}, {1, -1, 1, -1, -1, 1, -1, 1});
  p.inputs["gamma"] = tensor(f.dt(), {4}, {0.5, 1.5, 2.5, 3.5});
  p.inputs["scale"] = tensor(DType::f32, {1}, {1.0});
  const double step = 1.5 / 127;  // one quantization step of the largest value, relative
  auto with = [&](Problem q, auto&& change) {
    change(q);
    return exact(q);
  };
  f.test("rounding", p,
         {{"nearest_even", exact(p)}, {"nearest_away", with(p, [](Problem& q) { q.conv.rounding = Rounding::nearest_away; })}},
         {"y"}, "x = [[1, -1, 1, -1], [-1, 1, -1, 1]], eps 0, gamma = [0.5, 1.5, 2.5, 3.5], static scale 1, int8: every y / s a tie",
         step);
  if (f.found("rounding", "nearest_away")) f.res.inferred.rounding = Rounding::nearest_away;
  Problem q = p;
  q.inputs["scale"] = tensor(DType::f32, {1}, {0.25});
  f.test("scale_form", q,
         {{"divisor", exact(q)}, {"multiplier", with(q, [](Problem& r) { r.conv.scale_form = ScaleForm::multiplier; })}}, {"y"},
         "as above, static scale 0.25: y / 0.25 (divisor) or y * 0.25 (multiplier)", step);
  if (f.found("scale_form", "multiplier")) f.res.inferred.scale_form = ScaleForm::multiplier;
  // Dynamic scales: rows whose max |y| differ (3.5 and 3.5 sqrt(3)): per token or per tensor.
  Problem d = p;
  d.inputs.erase("scale");
  d.conv.quant_scale = QuantScale::dynamic_per_token;
  d.inputs["x"] = tensor(f.dt(), {2, 4}, {1, -1, 1, -1, -1, -1, -1, 3});
  const Values per_token = exact(d);
  const auto& sc = per_token.at("scale");
  const double s_max = *std::max_element(sc.begin(), sc.end());
  Problem t = p;  // per tensor: the larger row's scale for both rows
  t.inputs["x"] = d.x();
  t.inputs["scale"] = tensor(DType::f32, {1}, {s_max});
  Values per_tensor = exact(t);
  per_tensor["scale"] = std::vector<double>(sc.size(), s_max);
  f.test("quant_scale", d, {{"dynamic_per_token", per_token}, {"one dynamic scale per tensor", per_tensor}}, {"y", "scale"},
         "x = [[1, -1, 1, -1], [-1, -1, -1, 3]], gamma as above, dynamic scale, int8", step);
}

}  // namespace

ProbeResult probe_family(Backend& backend, const ProbeOptions& o) {
  ProbeResult res;
  res.backend = backend.name();
  res.options = o;
  res.inferred = o.nominal;
  res.inferred_op = o.op;
  Fam f{backend, o, res};
  const std::string_view n = o.op.name();
  if (o.op == Op::group_norm) probe_group_norm(f);
  else if (o.op == Op::instance_norm) probe_instance_norm(f);
  else if (o.op == Op::batch_norm) probe_batch_norm(f);
  else if (o.op == Op::l2_normalize || o.op == Op::scale_norm) probe_l2(f, o.op);
  else if (o.op == Op::ada_layer_norm || o.op == Op::ada_rms_norm) probe_ada(f, o.op);
  else if (o.op == Op::qk_norm) probe_qk(f);
  else if (n == "dyt") probe_dyt(f);
  else if (n == "fused_add_rms_norm" || n == "fused_add_layer_norm") probe_fused(f, o.op);
  else if (n == "rms_norm_quant" || n == "layer_norm_quant") probe_quant(f, o.op);
  else throw std::invalid_argument(fmt::format("no probes for op {} yet", n));
  // A backend that declined every experiment told nothing: say so, as the row probe does.
  const bool any = std::any_of(res.findings.begin(), res.findings.end(), [](const Finding& x) { return x.certainty != Certainty::undetermined; });
  if (!any) throw BackendError(fmt::format("the backend answered none of the {} experiments: {}", n,
                                           res.findings.empty() ? std::string("no findings") : res.findings.front().value));
  return res;
}

void probe_layouts(Backend& b, const ProbeOptions& o, ProbeResult& res) {
  if (!b.takes_views()) {
    Evidence e;
    e.inputs = "none sent";
    res.findings.push_back(finding("layout", "dense tensors only: views are not presented to this backend", "reads views",
                                   Certainty::undetermined, false, e));
    return;
  }
  ProbeResult scratch;
  scratch.options = o;
  Fam f{b, o, scratch};
  for (MemoryLayout l : all_memory_layouts()) {
    if (l == MemoryLayout::contiguous) continue;
    Dims d;
    d.width = 9;
    d.rows = 3;
    d.x = d.param = o.dtype;
    d.default_convention = true;
    d.layout = l;
    d.seed = o.seed;
    std::optional<ValidProblem> vp;
    try {
      vp = draw_problem(o.op, d);
    } catch (const SpecError&) {
      continue;
    }
    const Problem& p = **vp;
    // The candidates are the backend's own outputs on dense inputs: the view's values, or the
    // values a faulty reading sees; so a backend's other faults do not hide how it reads views.
    auto own = [&](ViewReading r, std::string& why) {
      Problem q = p;
      for (auto& [name, t] : q.inputs) t = read_view(t, l, r);
      q.layout = MemoryLayout::contiguous;
      return f.run(q, why);
    };
    std::string why;
    const auto correct = own(ViewReading::correct, why);
    if (!correct) continue;  // declined dense: the layout experiment below would tell nothing
    std::vector<std::string> names;
    for (const auto& [k, v] : *correct) names.push_back(k);
    std::vector<Hyp> h{{"reads the view", *correct}};
    for (auto [r, name] : {std::pair<ViewReading, const char*>{ViewReading::offset_ignored, "storage offset ignored (reads from the buffer's start)"},
                           {ViewReading::strides_ignored, "strides ignored (reads dense rows from the offset)"}}) {
      // A reading that sees the same values as the correct one (strides ignored on a layout
      // that keeps the drawn shape row-major) is no alternative here.
      const Tensor& x0 = p.x();
      if (std::memcmp(read_view(x0, l, r).data(), x0.data(), x0.nbytes()) == 0) continue;
      if (auto v = own(r, why)) h.push_back({name, std::move(*v)});
    }
    f.test(fmt::format("layout[{}]", to_string(l)), p, h, names,
           fmt::format("the op's drawn problem ({}), its inputs handed as {} views", shape_str(p.x().shape()), to_string(l)));
  }
  for (auto& fd : scratch.findings) res.findings.push_back(std::move(fd));
}

}  // namespace normcheck::detail
