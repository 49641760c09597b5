// Deliberately wrong family kernels (see mutants.hpp): a plain implementation of each
// family, exact enough to pass every bundled case (two-pass statistics in long double,
// whose range also holds the squares of binary64's extremes), with exactly one injected
// fault per mutant. Test-only.
#include <cmath>

#include <fmt/format.h>

#include "ops/common/mutants.hpp"
#include "spec/backend.hpp"
#include "spec/layout.hpp"
#include "ops/common/row_norm.hpp"

namespace normcheck::kernels::mutant::detail {

namespace {

using Wide = long double;

/// The convention's denominator D(v): the reference's one definition (ops/common/row_norm.hpp).
Wide denom(Wide v, const Convention& c) { return reference::denominator<Wide>(v, c); }

/// Normalizes v in place: (v - [center] mu) / D(sum (v - mu)^2 / dof); NaN/inf -> NaN.
/// Returns the mean and the centered sum of squares.
std::pair<Wide, Wide> normalize(std::vector<double>& v, bool center, double dof, const Convention& c,
                                bool eps_added = false) {
  bool finite = true;
  for (double a : v) finite = finite && std::isfinite(a);
  if (!finite) {
    for (double& a : v) a = NAN;
    return {NAN, NAN};
  }
  Wide mu = 0, ss = 0;
  if (center) {
    for (double a : v) mu += a;
    mu /= static_cast<Wide>(v.size());
  }
  for (double a : v) ss += (a - mu) * (a - mu);
  const Wide D = eps_added ? std::sqrt(ss / dof) + static_cast<Wide>(c.eps) : denom(ss / dof, c);
  for (double& a : v) a = static_cast<double>((a - mu) / D);
  return {mu, ss};
}

double affine(double n, const Convention& c, const Tensor* g, const Tensor* b, std::int64_t j) {
  switch (c.affine) {
    case Affine::none: return n;
    case Affine::gamma: return g->get(j) * n;
    case Affine::gamma_beta: return g->get(j) * n + b->get(j);
    case Affine::one_plus_w: return (1 + g->get(j)) * n;
  }
  return n;
}

double dof(const Convention& c, std::size_t m) { return static_cast<double>(c.variance == Variance::unbiased ? m - 1 : m); }

Outputs batch_norm(Fault f, const Problem& p) {
  const Convention& c = p.conv;
  const ChannelLayout l = channel_layout(p);
  const Tensor& x = p.x();
  const Tensor *g = p.input("gamma"), *b = p.input("beta");
  std::vector<double> rm, rv;
  if (c.track_running_stats) {
    rm = p.inputs.at("running_mean").to_doubles();
    rv = p.inputs.at("running_var").to_doubles();
  }
  Tensor y(p.out_dtype, x.shape());
  const bool batch_stats = c.training || !c.track_running_stats || f == Fault::bn_eval_batch_stats, update = c.training && c.track_running_stats;
  std::int64_t tracked = c.num_batches_tracked;
  auto at = [&](std::int64_t s, std::int64_t i, std::int64_t ch, std::int64_t j) { return ((s * l.n + i) * l.c + ch) * l.spatial + j; };
  for (std::int64_t s = 0; s < l.steps; ++s) {
    double a = 0;
    if (update) a = c.momentum ? *c.momentum : 1.0 / static_cast<double>(++tracked);
    for (std::int64_t ch = 0; ch < l.c; ++ch) {
      if (!batch_stats) {
        const Wide D = denom(rv[ch], c);
        for (std::int64_t i = 0; i < l.n; ++i)
          for (std::int64_t j = 0; j < l.spatial; ++j)
            y.set(at(s, i, ch, j), affine(static_cast<double>((x.get(at(s, i, ch, j)) - rm[ch]) / D), c, g, b, ch));
        continue;
      }
      // Groups of flat indices: the channel's N * spatial values, or (fault) one group per
      // spatial position over N.
      std::vector<std::vector<std::int64_t>> groups;
      if (f == Fault::bn_stats_over_batch_only) {
        for (std::int64_t j = 0; j < l.spatial; ++j) {
          groups.emplace_back();
          for (std::int64_t i = 0; i < l.n; ++i) groups.back().push_back(at(s, i, ch, j));
        }
      } else {
        groups.emplace_back();
        for (std::int64_t i = 0; i < l.n; ++i)
          for (std::int64_t j = 0; j < l.spatial; ++j) groups.back().push_back(at(s, i, ch, j));
      }
      for (auto& gi : groups) {
        std::vector<double> v;
        for (auto e : gi) v.push_back(x.get(e));
        normalize(v, true, dof(c, v.size()), c);
        for (std::size_t k = 0; k < gi.size(); ++k) y.set(gi[k], affine(v[k], c, g, b, ch));
      }
      if (!update) continue;
      std::vector<double> v;
      for (std::int64_t i = 0; i < l.n; ++i)
        for (std::int64_t j = 0; j < l.spatial; ++j) v.push_back(x.get(at(s, i, ch, j)));
      const auto [mu, ss] = normalize(v, true, 1, c);
      const Wide m = static_cast<Wide>(v.size());
      // The fault divides by m whatever the convention asks (with running_variance = biased it
      // is the correct kernel there, and no case on such a convention can tell it apart).
      const Wide var = f == Fault::bn_biased_running_var || c.running_variance == Variance::biased ? ss / m : ss / (m - 1);
      rm[ch] = static_cast<double>((1 - a) * rm[ch] + a * mu);
      rv[ch] = static_cast<double>((1 - a) * rv[ch] + a * var);
    }
  }
  Outputs o;
  o["y"] = std::move(y);
  if (c.track_running_stats) {
    o["running_mean"] = Tensor::from_doubles(p.out_dtype, Shape{l.c}, rm);
    o["running_var"] = Tensor::from_doubles(p.out_dtype, Shape{l.c}, rv);
  }
  return o;
}

Outputs group_norm(Fault f, const Problem& p) {
  const ChannelLayout l = channel_layout(p);
  const std::int64_t G = p.op == Op::instance_norm ? l.c : p.conv.num_groups, cpg = l.c / G;
  const Tensor& x = p.x();
  Tensor y(p.out_dtype, x.shape());
  for (std::int64_t i = 0; i < l.n; ++i)
    for (std::int64_t g = 0; g < G; ++g) {
      std::vector<std::int64_t> chans;
      for (std::int64_t k = 0; k < cpg; ++k) chans.push_back(f == Fault::gn_interleaved_groups ? g + k * G : g * cpg + k);
      std::vector<double> v;
      for (auto ch : chans)
        for (std::int64_t j = 0; j < l.spatial; ++j) v.push_back(x.get((i * l.c + ch) * l.spatial + j));
      normalize(v, true, dof(p.conv, v.size()), p.conv);
      std::size_t k = 0;
      for (auto ch : chans)
        for (std::int64_t j = 0; j < l.spatial; ++j)
          y.set((i * l.c + ch) * l.spatial + j, affine(v[k++], p.conv, p.input("gamma"), p.input("beta"), ch));
    }
  Outputs o;
  o["y"] = std::move(y);
  return o;
}

Outputs l2(Fault f, const Problem& p) {
  const Tensor& x = p.x();
  const ReductionLayout l = reduction_layout(x.shape(), reduced_axes(p));
  const double gain = p.op == Op::scale_norm ? p.inputs.at("g").get(0) : 1.0;
  Tensor y(p.out_dtype, x.shape());
  for (auto base : l.base) {
    std::vector<double> v;
    for (auto m : l.member) v.push_back(x.get(base + m));
    normalize(v, false, 1, p.conv, f == Fault::l2_eps_added);
    for (std::size_t j = 0; j < v.size(); ++j) y.set(base + l.member[j], gain * v[j]);
  }
  Outputs o;
  o["y"] = std::move(y);
  return o;
}

Outputs ada(Fault f, const Problem& p) {
  const Tensor& x = p.x();
  const Shape& xs = x.shape();
  const std::int64_t B = xs.front(), d = xs.back(), rows = x.size() / d, per_batch = rows / B;
  const Tensor& sc = p.inputs.at("scale");
  const Tensor& sh = p.inputs.at("shift");
  const Tensor* gt = p.input("gate");
  Tensor y(p.out_dtype, xs), h(p.out_dtype, xs);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t b = f == Fault::ada_broadcast_over_batch ? (r % per_batch) % B : r / per_batch;
    std::vector<double> v;
    for (std::int64_t j = 0; j < d; ++j) v.push_back(x.get(r * d + j));
    normalize(v, p.op == Op::ada_layer_norm, dof(p.conv, v.size()), p.conv);
    for (std::int64_t j = 0; j < d; ++j) {
      const double yv = (1 + sc.get(b * d + j)) * v[j] + sh.get(b * d + j);
      y.set(r * d + j, yv);
      if (gt) h.set(r * d + j, x.get(r * d + j) + gt->get(b * d + j) * yv);
    }
  }
  Outputs o;
  o["y"] = std::move(y);
  if (p.conv.gated) o["h"] = std::move(h);
  return o;
}

Outputs qk(Fault f, const Problem& p) {
  const Tensor& q = p.inputs.at("q");
  const Tensor& k = p.inputs.at("k");
  const Shape& qs = q.shape();
  const Shape& ks = k.shape();
  const std::int64_t B = qs[0], H = qs[1], T = qs[2], S = ks[2], dk = qs[3];
  const bool rms = p.conv.qk_form == QkForm::rms;
  // Normalized copy of t [B, H, L, dk] (L = T or S) with gains; per head or (fault) with
  // the statistic of all H heads of the token.
  auto norm = [&](const Tensor& t, std::int64_t L, const Tensor* gain) {
    std::vector<double> out(static_cast<std::size_t>(t.size()));
    const bool across = f == Fault::qk_norm_across_heads;
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t tok = 0; tok < L; ++tok)
        for (std::int64_t h0 = 0; h0 < (across ? 1 : H); ++h0) {
          std::vector<std::int64_t> idx;
          for (std::int64_t h = across ? 0 : h0; h < (across ? H : h0 + 1); ++h)
            for (std::int64_t j = 0; j < dk; ++j) idx.push_back(((b * H + h) * L + tok) * dk + j);
          std::vector<double> v;
          for (auto e : idx) v.push_back(t.get(e));
          normalize(v, false, rms ? dof(p.conv, v.size()) : 1.0, p.conv);
          for (std::size_t e = 0; e < idx.size(); ++e) {
            const std::int64_t j = idx[e] % dk;
            double n = v[e];
            if (gain) n *= (p.conv.affine == Affine::one_plus_w ? 1 : 0) + gain->get(j);
            out[idx[e]] = n;
          }
        }
    return out;
  };
  const auto qn = norm(q, T, p.input("q_gamma")), kn = norm(k, S, p.input("k_gamma"));
  const double scale = rms ? 1 / std::sqrt(static_cast<double>(dk)) : p.inputs.at("g").get(0);
  Tensor y(p.out_dtype, Shape{B, H, T, S});
  for (std::int64_t bh = 0; bh < B * H; ++bh)
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t s = 0; s < S; ++s) {
        double dot = 0;
        for (std::int64_t j = 0; j < dk; ++j) dot += qn[(bh * T + t) * dk + j] * kn[(bh * S + s) * dk + j];
        y.set((bh * T + t) * S + s, scale * dot);
      }
  Outputs o;
  o["q_hat"] = Tensor::from_doubles(p.out_dtype, qs, qn);
  o["k_hat"] = Tensor::from_doubles(p.out_dtype, ks, kn);
  o["y"] = std::move(y);
  return o;
}

}  // namespace

bool is_family_fault(Fault f) noexcept {
  switch (f) {
    case Fault::bn_biased_running_var: case Fault::bn_stats_over_batch_only: case Fault::bn_eval_batch_stats:
    case Fault::gn_interleaved_groups:
    case Fault::l2_eps_added: case Fault::ada_broadcast_over_batch: case Fault::qk_norm_across_heads:
      return true;
    default:
      return false;
  }
}

bool family_supports(Fault f, Op op) noexcept {
  switch (f) {
    case Fault::bn_biased_running_var: case Fault::bn_stats_over_batch_only: case Fault::bn_eval_batch_stats:
      return op == Op::batch_norm;
    case Fault::gn_interleaved_groups: return op == Op::group_norm;
    case Fault::l2_eps_added: return op == Op::l2_normalize || op == Op::scale_norm;
    case Fault::ada_broadcast_over_batch: return op == Op::ada_layer_norm || op == Op::ada_rms_norm;
    case Fault::qk_norm_across_heads: return op == Op::qk_norm;
    default: return false;
  }
}

Outputs run_family(Fault f, const Problem& p) {
  const Op op = p.op;
  if (op == Op::batch_norm) return batch_norm(f, p);
  if (op == Op::group_norm || op == Op::instance_norm) return group_norm(f, p);
  if (op == Op::l2_normalize || op == Op::scale_norm) return l2(f, p);
  if (op == Op::ada_layer_norm || op == Op::ada_rms_norm) return ada(f, p);
  if (op == Op::qk_norm) return qk(f, p);
  throw BackendError(fmt::format("mutant:{}: no kernel for {}", to_string(f), to_string(op)));
}

}  // namespace normcheck::kernels::mutant::detail
