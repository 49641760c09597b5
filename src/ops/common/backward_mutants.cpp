// Deliberately wrong backward kernels (see mutants.hpp): a plain long double implementation
// of the gradient of layer_norm / rms_norm / batch_norm (exact enough to pass every bundled
// backward case), with exactly one injected fault per mutant. Test-only.
#include <cmath>

#include "ops/common/mutants.hpp"
#include "spec/layout.hpp"
#include "ops/common/row_norm.hpp"

namespace normcheck::kernels::mutant::detail {

namespace {

using Wide = long double;

/// The convention's denominator D(v): the reference's one definition (ops/common/row_norm.hpp).
Wide denom(Wide v, const Convention& c) { return reference::denominator<Wide>(v, c); }

Wide sensitivity(Wide v, Wide D, const Convention& c) {
  switch (c.eps_placement) {
    case EpsPlacement::inside_sqrt: return 1;
    case EpsPlacement::outside_sqrt: return v > 0 ? D / std::sqrt(v) : 0;
    case EpsPlacement::clamp_var: return v < c.eps ? 0 : 1;
    case EpsPlacement::clamp_norm: return std::sqrt(v) < c.eps ? 0 : 1;
  }
  return 1;
}

/// Backward of one group: x, dy, gain g per element in; n and dx out.
/// dx = (1/D) (a - [center, keep_mean] mean(a) - [through_stats] (k/m') n sum(a n)), a = g dy.
void group(const std::vector<Wide>& x, const std::vector<Wide>& dy, const std::vector<Wide>& g, bool center, Wide dof,
           const Convention& c, bool keep_mean, bool through_stats, std::vector<Wide>& n, std::vector<Wide>& dx) {
  const std::size_t m = x.size();
  n.assign(m, 0);
  dx.assign(m, 0);
  bool finite = true;
  for (std::size_t j = 0; j < m; ++j) finite = finite && std::isfinite(x[j]) && std::isfinite(dy[j]);
  if (!finite) {
    n.assign(m, NAN);
    dx.assign(m, NAN);
    return;
  }
  Wide mu = 0, ss = 0, abar = 0, S = 0;
  if (center) {
    for (Wide v : x) mu += v;
    mu /= static_cast<Wide>(m);
  }
  for (Wide v : x) ss += (v - mu) * (v - mu);
  const Wide v = ss / dof, D = denom(v, c), k = sensitivity(v, D, c);
  std::vector<Wide> a(m);
  for (std::size_t j = 0; j < m; ++j) {
    n[j] = (x[j] - mu) / D;
    a[j] = g[j] * dy[j];
    abar += a[j];
    S += a[j] * n[j];
  }
  abar /= static_cast<Wide>(m);
  if (!center || !keep_mean) abar = 0;
  if (!through_stats) abar = S = 0;
  for (std::size_t j = 0; j < m; ++j) dx[j] = (a[j] - abar - k / dof * n[j] * S) / D;
}

Wide gain_of(const Convention& c, const Tensor* gamma, std::int64_t j) {
  switch (c.affine) {
    case Affine::none: return 1;
    case Affine::gamma: case Affine::gamma_beta: return gamma->get(j);
    case Affine::one_plus_w: return 1 + static_cast<Wide>(gamma->get(j));
  }
  return 1;
}

Outputs params(const Problem& p, const std::vector<Wide>& dgamma, const std::vector<Wide>& dbeta) {
  Outputs o;
  if (p.conv.affine == Affine::none) return o;
  const Shape& s = p.inputs.at("gamma").shape();
  std::vector<double> g(dgamma.begin(), dgamma.end()), b(dbeta.begin(), dbeta.end());
  o["dgamma"] = Tensor::from_doubles(p.out_dtype, s, g);
  if (p.conv.affine == Affine::gamma_beta) o["dbeta"] = Tensor::from_doubles(p.out_dtype, s, b);
  return o;
}

Outputs rows(Fault f, const Problem& p) {
  const RowLayout l = row_layout(p);
  const Tensor& x = p.x();
  const Tensor& dy = p.inputs.at("dy");
  const Tensor* gamma = p.input("gamma");
  const Wide dof = static_cast<Wide>(p.conv.variance == Variance::unbiased ? l.m - 1 : l.m);
  Tensor dx(p.out_dtype, x.shape());
  std::vector<Wide> nall(static_cast<std::size_t>(x.size()));
  for (std::int64_t r = 0; r < l.rows; ++r) {
    std::vector<Wide> xr, dr, g, n, gx;
    for (std::int64_t j = 0; j < l.m; ++j) {
      xr.push_back(x.get(r * l.m + j));
      dr.push_back(dy.get(r * l.m + j));
      g.push_back(gain_of(p.conv, gamma, j));
    }
    group(xr, dr, g, p.op == Op::layer_norm, dof, p.conv, f != Fault::ln_dx_no_mean_term, true, n, gx);
    for (std::int64_t j = 0; j < l.m; ++j) {
      dx.set(r * l.m + j, static_cast<double>(gx[j]));
      nall[r * l.m + j] = n[j];
    }
  }
  std::vector<Wide> dgamma(static_cast<std::size_t>(l.m)), dbeta(dgamma.size());
  if (f == Fault::dgamma_wrong_axis) {
    // The fault: sums over the normalized axis (dim -1) instead of over the rows (dim 0);
    // slot j of the parameter receives row (j mod rows)'s sum.
    std::vector<Wide> rg(static_cast<std::size_t>(l.rows)), rb(rg.size());
    for (std::int64_t i = 0; i < x.size(); ++i) {
      rg[i / l.m] += dy.get(i) * nall[i];
      rb[i / l.m] += dy.get(i);
    }
    for (std::int64_t j = 0; j < l.m; ++j) {
      dgamma[j] = rg[j % l.rows];
      dbeta[j] = rb[j % l.rows];
    }
  } else {
    for (std::int64_t i = 0; i < x.size(); ++i) {
      dgamma[i % l.m] += dy.get(i) * nall[i];
      dbeta[i % l.m] += dy.get(i);
    }
  }
  Outputs o = params(p, dgamma, dbeta);
  o["dx"] = std::move(dx);
  return o;
}

Outputs batch(Fault f, const Problem& p) {
  const Convention& c = p.conv;
  const ChannelLayout l = channel_layout(p);
  const Tensor& x = p.x();
  const Tensor& dy = p.inputs.at("dy");
  const Tensor* gamma = p.input("gamma");
  const std::int64_t m = l.n * l.spatial;
  const Wide dof = static_cast<Wide>(c.variance == Variance::unbiased ? m - 1 : m);
  const bool batch_stats = c.training || !c.track_running_stats;
  Tensor dx(p.out_dtype, x.shape());
  std::vector<Wide> dgamma(static_cast<std::size_t>(l.c)), dbeta(dgamma.size());
  for (std::int64_t ch = 0; ch < l.c; ++ch) {
    std::vector<std::int64_t> idx;
    std::vector<Wide> xg, dg, g, n, gx;
    for (std::int64_t i = 0; i < l.n; ++i)
      for (std::int64_t j = 0; j < l.spatial; ++j) {
        idx.push_back((i * l.c + ch) * l.spatial + j);
        xg.push_back(x.get(idx.back()));
        dg.push_back(dy.get(idx.back()));
        g.push_back(gain_of(c, gamma, ch));
      }
    if (batch_stats) {
      group(xg, dg, g, true, dof, c, true, f != Fault::bn_backward_constant_stats, n, gx);
    } else {
      const Wide rm = p.inputs.at("running_mean").get(ch), D = denom(p.inputs.at("running_var").get(ch), c);
      n.resize(idx.size());
      gx.resize(idx.size());
      for (std::size_t k = 0; k < idx.size(); ++k) {
        n[k] = (xg[k] - rm) / D;
        gx[k] = g[k] * dg[k] / D;
      }
    }
    for (std::size_t k = 0; k < idx.size(); ++k) {
      dx.set(idx[k], static_cast<double>(gx[k]));
      dgamma[ch] += dg[k] * n[k];
      dbeta[ch] += dg[k];
    }
  }
  Outputs o = params(p, dgamma, dbeta);
  o["dx"] = std::move(dx);
  return o;
}

}  // namespace

bool is_backward_fault(Fault f) noexcept {
  return f == Fault::dgamma_wrong_axis || f == Fault::ln_dx_no_mean_term || f == Fault::bn_backward_constant_stats;
}

bool backward_supports(Fault f, Op op) noexcept {
  switch (f) {
    case Fault::dgamma_wrong_axis: return op == Op::layer_norm || op == Op::rms_norm;
    case Fault::ln_dx_no_mean_term: return op == Op::layer_norm;
    case Fault::bn_backward_constant_stats: return op == Op::batch_norm;
    default: return false;
  }
}

Outputs run_backward(Fault f, const Problem& p) {
  if (p.op == Op::batch_norm) return batch(f, p);
  return rows(f, p);
}

}  // namespace normcheck::kernels::mutant::detail
