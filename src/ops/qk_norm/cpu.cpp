// CPU qk_norm forward (fused: the scores use the normalized q, k in the accumulation type,
// not their rounding to out_dtype): binary32 accumulation (binary64 for f64).
//
// Each head vector of d_k values of q and k: group_kernel.hpp's normalization without
// centering (rms form: dof per `variance`, then the gains q_gamma / k_gamma, (1 + w)
// formed once; l2 form: dof = 1, D = max(||x||, eps) by default). q_hat, k_hat are those
// values rounded once to out_dtype. Scores y[b,h,t,s] = blocked_dot(q^_t, k^_s) * scale,
// scale = 1/sqrt(d_k) rounded once from binary64 (rms) or the scalar g (l2): the dot
// product's error is (d_k/8 + 4) u sum_l |q^_l k^_l| worst case, about sqrt(d_k/8) u,
// bounded by the scores' condition magnitude (ops/qk_norm/reference.hpp). Head rows are
// spread over OpenMP threads.
#include <cmath>

#include "core/region_errors.hpp"
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/group_kernel.hpp"

namespace normcheck::kernels::cpu {

namespace {

template <class A>
void qk_impl(const Problem& p, Outputs& out) {
  using namespace detail;
  const Tensor& q = p.inputs.at("q");
  const Tensor& k = p.inputs.at("k");
  const Shape& qs = q.shape();
  const Shape& ks = k.shape();
  const std::int64_t BH = qs[0] * qs[1], T = qs[2], S = ks[2], dk = qs[3];
  const bool rms = p.conv.qk_form == QkForm::rms;
  const bool one_plus = p.conv.affine == Affine::one_plus_w;
  const std::vector<A> qg = load_param<A>(p.input("q_gamma"), one_plus), kg = load_param<A>(p.input("k_gamma"), one_plus);
  const std::int64_t dof = rms ? dof_of(p.conv, dk) : 1;
  const A scale = rms ? static_cast<A>(1.0 / std::sqrt(static_cast<double>(dk))) : load_param<A>(p.input("g"))[0];
  std::vector<A> qn(static_cast<std::size_t>(q.size())), kn(static_cast<std::size_t>(k.size()));
  Tensor qh(p.out_dtype, qs), kh(p.out_dtype, ks), y(p.out_dtype, Shape{qs[0], qs[1], T, S});
  auto normalize = [&](const Tensor& t, const std::vector<A>& gain, std::vector<A>& n, Tensor& o) {
    const std::int64_t rows = t.size() / dk;
#pragma omp parallel for schedule(static) if (t.size() > 32768)
    for (std::int64_t r = 0; r < rows; ++r) {
      A* a = n.data() + r * dk;
      load_row(t, r * dk, dk, a);
      normalize_in_place(a, dk, false, dof, p.conv);
      if (!gain.empty()) for (std::int64_t j = 0; j < dk; ++j) a[j] *= gain[j];
      store_row(o, r * dk, dk, a);
    }
  };
  normalize(q, qg, qn, qh);
  normalize(k, kg, kn, kh);
  RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel if (BH * T * S * dk > 32768)
  {
    std::vector<A> row;
    errors.run([&] { row.resize(static_cast<std::size_t>(S)); });
#pragma omp for schedule(static)
    for (std::int64_t bt = 0; bt < BH * T; ++bt) errors.run([&] {
      const A* qa = qn.data() + bt * dk;
      const A* kb = kn.data() + (bt / T) * S * dk;
      for (std::int64_t s = 0; s < S; ++s) row[s] = blocked_dot(qa, kb + s * dk, dk) * scale;
      store_row(y, bt * S, S, row.data());
    });
  }
  errors.rethrow();
  out["q_hat"] = std::move(qh);
  out["k_hat"] = std::move(kh);
  out["y"] = std::move(y);
}

}  // namespace

void qk_norm_forward(const Problem& p, Outputs& out) {
  if (detail::use_f64(p)) qk_impl<double>(p, out);
  else qk_impl<float>(p, out);
}

}  // namespace normcheck::kernels::cpu
