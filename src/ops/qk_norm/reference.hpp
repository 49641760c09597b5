// Reference for qk_norm, a plain loop template on the number type T.
//
// Formulas (shared/spec/worked-examples.md "Formulas"; Henry et al. 2020 for the L2 form,
// Dehghani et al. 2023 / OLMo 2 / Qwen3 for the RMS form): q [B, H, T, d_k], k [B, H, S, d_k],
// each head vector of d_k values normalized on its own:
//   rms form: q^ = RMSNorm(q) with gains q_gamma (k^ likewise with k_gamma) per `affine`
//             (row_norm.hpp), scores y[b,h,t,s] = q^_t . k^_s / sqrt(d_k);
//   l2 form:  q^ = q / max(||q||, eps) (l2_normalize.hpp), y = g q^_t . k^_s.
// With unit gains |y| <= sqrt(d_k) (rms; Cauchy-Schwarz, ||q^|| = sqrt(d_k)) and |y| <= |g|
// (l2), whatever the scale of q and k. The scores are formed from the exact q^, k^ (a
// fused kernel); an unfused pipeline that rounds q^, k^ to a narrow out_dtype first adds
// that rounding to its score error.
// A head vector holding NaN or an infinity gives NaN for its q^ (k^) row and for its row
// (column) of scores only.
//
// Condition magnitudes: q^, k^ as normalize_group / l2_group; scores by the triangle
// inequality through the dot product (O(d_k) per score):
//   c(y_ts) = |scale| sum_l (|k^_sl| c(q^_tl) + |q^_tl| c(k^_sl)) + [l2] |y_ts|  (the g term).
#pragma once

#include <cmath>

#include "core/region_errors.hpp"
#include "ops/common/family_common.hpp"
#include "ops/l2_normalize/reference.hpp"
#include "ops/common/ball.hpp"
#include "ops/common/certified_rows.hpp"
#include "ops/common/row_norm.hpp"

namespace normcheck::reference {

/// qk_norm in T. An exception inside a parallel loop (an Uncertain: a DDBall that cannot
/// decide) is caught there (it may not leave an OpenMP region), the remaining work skipped,
/// and rethrown once the loops are done.
template <class T>
ExactOutputs qk_norm_in(const Problem& p) {
  using std::abs; using std::sqrt;
  RegionErrors errors;
  auto guard = [&](auto&& body) { errors.run(body); };
  const Tensor& q = p.inputs.at("q");
  const Tensor& k = p.inputs.at("k");
  const Shape& qs = q.shape();
  const Shape& ks = k.shape();
  const std::int64_t BH = qs[0] * qs[1], Tq = qs[2], Sk = ks[2], dk = qs[3];
  const bool rms = p.conv.qk_form == QkForm::rms;
  const std::vector<T> qg = detail::load_all<T>(p.input("q_gamma")), kg = detail::load_all<T>(p.input("k_gamma"));
  const T scale = rms ? T(1) / sqrt(T(dk)) : T(p.inputs.at("g").get(0));
  // Normalized rows of a [rows, dk] tensor, with their condition magnitudes.
  auto normalize = [&](const Tensor& t, const std::vector<T>& gain, std::vector<T>& nv, std::vector<double>& cv,
                       ExactOutput& out) {
    const std::int64_t rows = t.size() / dk;
    nv.resize(static_cast<std::size_t>(t.size()));
    cv.resize(nv.size());
#pragma omp parallel for schedule(dynamic, 1) if (t.size() > detail::kParallelMin)
    for (std::int64_t r = 0; r < rows; ++r) guard([&] {
      std::vector<T> xr(static_cast<std::size_t>(dk));
      for (std::int64_t j = 0; j < dk; ++j) xr[j] = T(t.get(r * dk + j));
      if (rms) normalize_group(xr.data(), dk, false, p.conv, gain.data(), static_cast<const T*>(nullptr), nv.data() + r * dk, cv.data() + r * dk);
      else l2_group(xr.data(), dk, p.conv, T(1), nv.data() + r * dk, cv.data() + r * dk);
      for (std::int64_t j = 0; j < dk; ++j) detail::put(out, r * dk + j, nv[r * dk + j], cv[r * dk + j]);
    });
  };
  ExactOutput qh = detail::make_output(p.out_dtype, qs), kh = detail::make_output(p.out_dtype, ks);
  std::vector<T> qn, kn;
  std::vector<double> qc, kc;
  normalize(q, qg, qn, qc, qh);
  normalize(k, kg, kn, kc, kh);
  ExactOutput y = detail::make_output(p.out_dtype, Shape{qs[0], qs[1], Tq, Sk});
  // Condition magnitudes in cond_t<T> (a bound: binary64 midpoints for DDBall, as normalize_group's).
  using C = cond_t<T>;
  const C ascale = C(abs(cond_of(scale)));
#pragma omp parallel for schedule(dynamic, 1) if (BH * Tq * Sk * dk > detail::kParallelMin)
  for (std::int64_t bt = 0; bt < BH * Tq; ++bt) guard([&] {
    const std::int64_t bh = bt / Tq;
    const std::int64_t qo = bt * dk;
    for (std::int64_t s = 0; s < Sk; ++s) {
      const std::int64_t ko = (bh * Sk + s) * dk;
      T dot(0);
      C cd(0);
      for (std::int64_t l = 0; l < dk; ++l) {
        dot += qn[qo + l] * kn[ko + l];
        cd += C(abs(cond_of(kn[ko + l]))) * C(qc[qo + l]) + C(abs(cond_of(qn[qo + l]))) * C(kc[ko + l]);
      }
      const T v = scale * dot;
      C cv = ascale * cd;
      if (!rms) cv += C(abs(cond_of(v)));
      detail::put(y, bt * Sk + s, v, static_cast<double>(cv));
    }
  });
  errors.rethrow();
  ExactOutputs o;
  o.emplace("q_hat", std::move(qh));
  o.emplace("k_hat", std::move(kh));
  o.emplace("y", std::move(y));
  return o;
}

/// qk_norm forward in T; with `fast`, the whole problem first in double-double with certified
/// radii (the scores need every normalized row in one number type), and in T when any value
/// cannot be decided (bit-identical to T's result either way; counted as rows of q and k).
template <class T>
ExactOutputs qk_norm(const Problem& p, bool fast = false) {
  const std::uint64_t rows = static_cast<std::uint64_t>((p.inputs.at("q").size() + p.inputs.at("k").size()) / p.inputs.at("q").shape()[3]);
  return detail::certified_whole<T>(rows, fast, [&](auto tag) { return qk_norm_in<typename decltype(tag)::type>(p); });
}

}  // namespace normcheck::reference
