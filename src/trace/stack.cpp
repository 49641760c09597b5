#include "trace/stack.hpp"

#include <cmath>

#include <fmt/format.h>

#include "cases/case.hpp"

namespace normcheck::trace {

std::string_view to_string(SiteRole r) noexcept {
  switch (r) {
    case SiteRole::norm: return "norm";
    case SiteRole::pre: return "pre";
    case SiteRole::post: return "post";
    case SiteRole::final: return "final";
  }
  return "?";
}

namespace {

/// splitmix64 (Steele, Lea, Flood 2014): a fixed mixing of (seed, tag, index) into a seed.
std::uint64_t mix(std::uint64_t seed, std::uint64_t tag, std::uint64_t index) {
  std::uint64_t z = seed ^ (tag * 0x9e3779b97f4a7c15ull) ^ (index * 0xbf58476d1ce4e5b9ull);
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
enum Tag : std::uint64_t { kInput = 1, kWeight = 2, kGain = 3, kBias = 4 };

Tensor draw(DType t, Shape s, const Dist& d, std::uint64_t seed) {
  return Tensor::from_doubles(t, s, generate_normal(numel(s), d.mean, d.std, seed));
}

Site make_site(const Model& m, int index, std::string name, std::int64_t block, SiteRole role, const NormSpec* spec) {
  Site s{index, std::move(name), block, role, spec, {}, {}};
  const Shape ps{m.d};
  if (spec->conv.affine != Affine::none) s.gamma = draw(m.dtype, ps, spec->gain, mix(m.seed, kGain, static_cast<std::uint64_t>(index)));
  if (spec->conv.affine == Affine::gamma_beta) s.beta = draw(m.dtype, ps, spec->bias, mix(m.seed, kBias, static_cast<std::uint64_t>(index)));
  return s;
}

/// F_b(h): binary32 products accumulated in binary32, j ascending; GELU on the accumulator;
/// times tau_t (binary64) when `scaled`; one rounding to the activation dtype.
Tensor branch(const Stack& st, std::int64_t b, const Tensor& h, bool scaled = false) {
  const Model& m = *st.model;
  const std::int64_t T = m.tokens, d = m.d;
  const std::vector<float>& W = st.weights[static_cast<std::size_t>(b)];
  std::vector<float> hf(static_cast<std::size_t>(T * d));
  for (std::int64_t i = 0; i < T * d; ++i) hf[i] = static_cast<float>(h.get(i));
  Tensor out(m.dtype, Shape{T, d});
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t i = 0; i < d; ++i) {
      const float* w = W.data() + i * d;
      const float* x = hf.data() + t * d;
      float acc = 0.0f;
      for (std::int64_t j = 0; j < d; ++j) acc += w[j] * x[j];
      if (m.branch == Branch::linear_gelu) acc = 0.5f * acc * (1.0f + std::erf(acc * 0.70710678118654752f));
      out.set(t * d + i, scaled ? st.tau[static_cast<std::size_t>(t)] * static_cast<double>(acc) : static_cast<double>(acc));
    }
  return out;
}

/// rnd(a + tau (.) b) per row, in binary64, one rounding.
Tensor residual(const Stack& st, const Tensor& a, const Tensor& b) {
  const std::int64_t d = st.model->d;
  Tensor out(a.dtype(), a.shape());
  for (std::int64_t i = 0; i < a.size(); ++i) out.set(i, a.get(i) + st.tau[static_cast<std::size_t>(i / d)] * b.get(i));
  return out;
}

/// rnd(tau (.) (a + b)) per row, in binary64, one rounding (post_norm's norm input).
Tensor scaled_sum(const Stack& st, const Tensor& a, const Tensor& b) {
  const std::int64_t d = st.model->d;
  Tensor out(a.dtype(), a.shape());
  for (std::int64_t i = 0; i < a.size(); ++i) out.set(i, st.tau[static_cast<std::size_t>(i / d)] * (a.get(i) + b.get(i)));
  return out;
}

}  // namespace

Stack build_stack(const Model& m) {
  Stack st;
  st.model = &m;
  st.tau.assign(static_cast<std::size_t>(m.tokens), 1.0);
  for (auto r : m.quiet_rows) st.tau[static_cast<std::size_t>(r)] = m.quiet_scale;
  int k = 0;
  for (std::int64_t b = 0; b < m.blocks; ++b) {
    const std::string bn = fmt::format("block{:02d}", b);
    if (m.placement == Placement::sandwich) {
      st.sites.push_back(make_site(m, k++, bn + ".pre", b, SiteRole::pre, &m.norm));
      st.sites.push_back(make_site(m, k++, bn + ".post", b, SiteRole::post, &m.norm_post));
    } else {
      st.sites.push_back(make_site(m, k++, bn + ".norm", b, SiteRole::norm, &m.norm));
    }
    const Tensor w = draw(m.dtype, Shape{m.d, m.d}, Dist{0.0, m.branch_scale / std::sqrt(static_cast<double>(m.d))},
                          mix(m.seed, kWeight, static_cast<std::uint64_t>(b)));
    std::vector<float> wf(static_cast<std::size_t>(w.size()));
    for (std::int64_t i = 0; i < w.size(); ++i) wf[i] = static_cast<float>(w.get(i));
    st.weights.push_back(std::move(wf));
  }
  if (m.final_norm) st.sites.push_back(make_site(m, k++, "final", -1, SiteRole::final, &*m.final_norm));
  std::vector<double> z = generate_normal(m.tokens * m.d, m.input.mean, m.input.std, mix(m.seed, kInput, 0));
  if (m.placement != Placement::post_norm)
    for (std::int64_t i = 0; i < m.tokens * m.d; ++i) z[i] *= st.tau[static_cast<std::size_t>(i / m.d)];
  st.x0 = Tensor::from_doubles(m.dtype, Shape{m.tokens, m.d}, z);
  return st;
}

Problem site_problem(const Stack& st, const Site& site, const Tensor& x) {
  Problem p;
  p.op = site.spec->op;
  p.conv = site.spec->conv;
  p.out_dtype = st.model->dtype;
  p.inputs["x"] = x;
  if (!site.gamma.empty()) p.inputs["gamma"] = site.gamma;
  if (!site.beta.empty()) p.inputs["beta"] = site.beta;
  return p;
}

Tensor run_stack(const Stack& st, const NormFn& norm) {
  const Model& m = *st.model;
  auto at = [&](const Site& s, const Tensor& x) { return norm(s, site_problem(st, s, x)); };
  Tensor x = st.x0;
  std::size_t k = 0;
  for (std::int64_t b = 0; b < m.blocks; ++b) {
    switch (m.placement) {
      case Placement::pre_norm: {
        const Tensor h = at(st.sites[k++], x);
        x = residual(st, x, branch(st, b, h));
        break;
      }
      case Placement::post_norm:
        x = at(st.sites[k++], scaled_sum(st, x, branch(st, b, x)));
        break;
      case Placement::sandwich: {
        const Tensor h = at(st.sites[k++], x);
        const Tensor p = at(st.sites[k++], branch(st, b, h, true));
        x = residual(st, x, p);
        break;
      }
    }
  }
  if (m.final_norm) x = at(st.sites[k++], x);
  return x;
}

}  // namespace normcheck::trace
