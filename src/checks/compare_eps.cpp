#include "checks/compare_eps.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"
#include "ops/presets.hpp"
#include "ops/reference.hpp"
#include "core/svg_plot.hpp"
#include "spec/convention.hpp"

namespace normcheck {

LabeledConvention parse_convention_spec(const std::string& spec, Op op, DType dtype) {
  LabeledConvention lc;
  lc.label = spec;
  lc.conv = default_convention(op);
  // A preset first ("pytorch.LayerNorm[,eps=1e-6]"): its fields, then the keys after it.
  std::string keys = spec;
  const std::string head = spec.substr(0, spec.find(','));
  const bool preset = !head.empty() && head.find('=') == std::string::npos;
  if (preset) {
    const Preset* p = find_preset(head);
    if (!p) throw std::invalid_argument(unknown_preset_message(head));
    if (p->op != op)
      throw std::invalid_argument(fmt::format("preset {} is a convention of {}, not of {} (--op)", head, to_string(p->op), to_string(op)));
    try {
      apply_preset(*p, dtype, lc.conv);
    } catch (const UsageError& e) {
      throw std::invalid_argument(e.what());
    }
    keys = head.size() < spec.size() ? spec.substr(head.size() + 1) : "";
  }
  if (!keys.empty()) {
    // The one reader of convention keys (spec/convention.hpp), limited to what the sweep varies.
    const KeyValueSource src(keys, fmt::format("'{}'", spec));
    for (const std::string& k : src.keys())
      if (k != "eps" && k != "eps_placement" && k != "variance")
        throw std::invalid_argument(fmt::format("unknown key '{}' in '{}' (keys: eps, placement or eps_placement, variance; "
                                                "compare-eps compares eps conventions only)", k, spec));
    if (!preset && !src.has("eps")) throw std::invalid_argument(fmt::format("'{}' needs eps=VALUE or a preset name", spec));
    try {
      read_convention(src, op, lc.conv);
    } catch (const UsageError& e) {
      throw std::invalid_argument(e.what());
    }
  } else if (!preset) {
    throw std::invalid_argument("an empty --conv: give eps=VALUE[,placement=...] or a preset name (normcheck presets)");
  }
  // The sweep compares eps conventions: a preset's rounding order (normalized_dtype) would add
  // its own rounding of n to the gains, so every convention is compared rounded once.
  lc.conv.normalized_dtype.reset();
  if (!(lc.conv.eps <= 1e10))
    throw std::invalid_argument(fmt::format("eps {} in '{}' is not in [0, 1e10] (the sweep covers variances 1e-14..1e4)", lc.conv.eps, spec));
  return lc;
}

std::vector<std::string> default_compare_presets(Op op) {
  if (op == Op::rms_norm) return {"pytorch.RMSNorm", "hf.LlamaRMSNorm", "flax.RMSNorm", "onnx.RMSNormalization"};
  return {"pytorch.LayerNorm", "keras.LayerNormalization", "flax.LayerNorm"};
}

CompareEpsResult compare_eps(const std::vector<LabeledConvention>& convs, const CompareEpsOptions& o) {
  if (convs.size() < 2) throw std::invalid_argument("compare-eps needs at least two conventions (--conv twice)");
  if (o.op != Op::layer_norm && o.op != Op::rms_norm)
    throw std::invalid_argument(fmt::format("compare-eps: op {} not supported (layer_norm, rms_norm)", to_string(o.op)));
  if (o.d < 2 || o.d % 2) throw std::invalid_argument(fmt::format("compare-eps: d must be even and >= 2, got {}", o.d));
  CompareEpsResult res;
  res.options = o;
  if (res.options.variances.empty())
    for (int k = -56; k <= 16; ++k) res.options.variances.push_back(std::pow(10.0, k / 4.0));
  for (const auto& c : convs) res.labels.push_back(c.label);
  const auto& vars = res.options.variances;
  const std::int64_t nv = static_cast<std::int64_t>(vars.size()), d = o.d;
  for (double mean : o.means) {
    // Rows mean +- s, rounded once to the dtype; the statistics below are of the stored row.
    std::vector<double> x;
    std::vector<ComparePoint> pts(static_cast<std::size_t>(nv));
    for (std::int64_t r = 0; r < nv; ++r) {
      const double s = std::sqrt(vars[r]);
      const double hi = round_to(o.dtype, mean + s), lo = round_to(o.dtype, mean - s);
      for (std::int64_t j = 0; j < d; ++j) x.push_back(j % 2 ? lo : hi);
      ComparePoint& p = pts[r];
      p.mean = mean;
      p.var = vars[r];
      p.real_mean = static_cast<double>((static_cast<long double>(hi) + lo) / 2);
      const long double half = (static_cast<long double>(hi) - lo) / 2;
      p.real_var = static_cast<double>(half * half);
      p.representable = std::fabs(p.real_var / p.var - 1) <= 0.1;
    }
    std::vector<std::vector<long double>> ys;
    for (const auto& c : convs) {
      Problem q;
      q.op = o.op;
      q.conv = c.conv;
      q.conv.affine = Affine::none;
      q.conv.normalized_shape = Shape{d};
      q.out_dtype = o.dtype;
      q.inputs["x"] = Tensor::from_doubles(o.dtype, Shape{nv, d}, x);
      ys.push_back(reference::evaluate_exact(q).at("y").exact_values());
    }
    for (std::int64_t r = 0; r < nv; ++r) {
      ComparePoint& p = pts[r];
      const long double x0 = x[r * d];
      const long double den = o.op == Op::layer_norm ? x0 - static_cast<long double>(p.real_mean) : x0;
      for (std::size_t k = 0; k < convs.size(); ++k) {
        p.gain.push_back(den == 0 ? static_cast<long double>(NAN) : ys[k][r * d] / den);
        double worst = 0;
        long double abs_diff = 0, scale = 0;
        for (std::int64_t j = 0; j < d; ++j) {
          const long double y0 = ys[0][r * d + j], yk = ys[k][r * d + j];
          const long double u = ulp(o.dtype, std::isfinite(y0) ? y0 : 0.0L);
          const long double e = std::fabs(yk - y0) / u;
          const bool both_nan = std::isnan(y0) && std::isnan(yk);
          worst = std::isnan(e) ? (both_nan ? worst : HUGE_VAL) : std::max(worst, static_cast<double>(e));
          if (!both_nan) abs_diff = std::isnan(yk - y0) ? HUGE_VALL : std::max(abs_diff, std::fabs(yk - y0));
          if (std::isfinite(y0)) scale = std::max(scale, std::fabs(y0));
        }
        p.diff_ulp.push_back(worst);
        p.diff_rel.push_back(abs_diff == 0 ? 0.0 : scale > 0 ? static_cast<double>(abs_diff / scale) : HUGE_VAL);
      }
    }
    res.points.insert(res.points.end(), pts.begin(), pts.end());
  }
  return res;
}

namespace {
bool is_decade(double v) { const double l = std::log10(v); return std::fabs(l - std::round(l)) < 1e-9; }
}  // namespace

std::string format_compare_eps_table(const CompareEpsResult& r) {
  const auto& o = r.options;
  const std::size_t K = r.labels.size();
  std::string s = fmt::format("normcheck compare-eps: op {}, dtype {}, rows of {} values mean +- s (exact reference; "
                              "gain = y/(x - mu) = 1/D{})\n",
                              to_string(o.op), dtype_name(o.dtype), o.d, o.op == Op::rms_norm ? ", here y/x" : "");
  for (std::size_t k = 0; k < K; ++k) s += fmt::format("  #{} = {}\n", k + 1, r.labels[k]);
  for (double mean : o.means) {
    // The variances this dtype cannot hold at this mean: one line of ranges, rows left out.
    std::string gaps;
    double lo = -1, prev = 0;
    auto close = [&] { if (lo >= 0) gaps += fmt::format("{}[{:.3g}, {:.3g}]", gaps.empty() ? "" : ", ", lo, prev); lo = -1; };
    for (const auto& p : r.points) {
      if (p.mean != mean) continue;
      if (!p.representable) { if (lo < 0) lo = p.var; prev = p.var; } else close();
    }
    close();
    s += fmt::format("\nmean = {} (variance: of the row as stored in {})\n", mean, dtype_name(o.dtype));
    if (!gaps.empty())
      s += fmt::format("  not representable in {} at mean {}: variance {} (mean +- s rounds to a row whose variance is more "
                       "than 10% off); those rows are left out\n", dtype_name(o.dtype), mean, gaps);
    s += fmt::format("{:>10}", "variance");
    for (std::size_t k = 0; k < K; ++k) s += fmt::format(" {:>16}", fmt::format("gain #{}", k + 1));
    for (std::size_t k = 1; k < K; ++k) s += fmt::format(" {:>12} {:>10}", fmt::format("ULP #{}-#1", k + 1), fmt::format("rel #{}-#1", k + 1));
    s += "\n";
    for (const auto& p : r.points) {
      if (p.mean != mean || !is_decade(p.var) || !p.representable) continue;
      s += fmt::format("{:>10}", fmt::format("{:.3g}", p.real_var));
      for (std::size_t k = 0; k < K; ++k) s += fmt::format(" {:>16.10g}", static_cast<double>(p.gain[k]));
      for (std::size_t k = 1; k < K; ++k) s += fmt::format(" {:>12.4g} {:>10.3g}", p.diff_ulp[k], p.diff_rel[k]);
      s += "\n";
    }
  }
  s += fmt::format("\nwhere the outputs differ from #1 by more than 1 ULP of {} (sweep: {} variances per mean, "
                   "{:.0e} .. {:.0e}):\n", dtype_name(o.dtype), o.variances.empty() ? 0 : o.variances.size(),
                   o.variances.empty() ? 0.0 : o.variances.front(), o.variances.empty() ? 0.0 : o.variances.back());
  for (std::size_t k = 1; k < K; ++k)
    for (double mean : o.means) {
      std::string ranges;
      double worst = 0, worst_v = 0, worst_rel = 0, lo = -1, prev = 0;
      auto close = [&] { if (lo >= 0) ranges += fmt::format("{}[{:.3g}, {:.3g}]", ranges.empty() ? "" : ", ", lo, prev); lo = -1; };
      for (const auto& p : r.points) {
        if (p.mean != mean || !p.representable) continue;
        if (p.diff_ulp[k] > 1) { if (lo < 0) lo = p.var; prev = p.var; } else close();
        if (p.diff_ulp[k] > worst) { worst = p.diff_ulp[k]; worst_v = p.var; worst_rel = p.diff_rel[k]; }
      }
      close();
      s += fmt::format("  #{} vs #1, mean {}: {}\n", k + 1, mean,
                       ranges.empty() ? fmt::format("never (max {:.3g} ULP)", worst)
                                      : fmt::format("variance in {}; max {:.4g} ULP (relative {:.3g}) at variance {:.3g}", ranges,
                                                    worst, worst_rel, worst_v));
    }
  return s;
}

std::string compare_eps_svg(const CompareEpsResult& r) {
  static const char* colors[] = {"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
  static const char* dashes[] = {"", "6 3", "2 2", "8 3 2 3", "1 3"};
  LogLogPlot p;
  p.title = fmt::format("{}, {}: where eps conventions differ (exact reference)", to_string(r.options.op),
                        dtype_name(r.options.dtype));
  for (std::size_t k = 0; k < r.labels.size(); ++k) p.notes.push_back(fmt::format("#{} = {}", k + 1, r.labels[k]));
  p.notes.push_back("(differences of 0 drawn at the bottom)");
  p.x_label = "row variance";
  p.y_label = fmt::format("max |y - y#1| in ULPs of {}", dtype_name(r.options.dtype));
  p.y_floor = 1e-2;
  p.hline = 1;
  p.hline_label = "1 ULP";
  for (std::size_t k = 1; k < r.labels.size(); ++k)
    for (std::size_t mi = 0; mi < r.options.means.size(); ++mi) {
      PlotSeries s;
      s.label = fmt::format("#{} vs #1, mean {}", k + 1, r.options.means[mi]);
      s.color = colors[(k - 1) % 8];
      s.dash = dashes[mi % 5];
      for (const auto& pt : r.points)
        if (pt.mean == r.options.means[mi] && pt.representable) s.points.emplace_back(pt.var, pt.diff_ulp[k]);
      p.series.push_back(std::move(s));
    }
  return render_loglog_svg(p);
}

}  // namespace normcheck
