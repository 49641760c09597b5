// Reference of the fused residual add + norm (fused_add_norm.hpp has the formula), a plain
// loop template on T (MPFR at working_bits(p): the sum x + residual + bias is exact there,
// as is every group sum; binary64 for quick checks).
//
// Condition magnitudes. h = x + r + b is an input of the norm that a kernel computes, in
// its accumulation type, with an error <= 2 u (|x| + |r| + |b|) (two additions): relative to
// the magnitude a_j = |x_j| + |r_j| + |b_j|, not to |h_j|, which may cancel. The norm's c_i
// (normalize_group with mag = a) therefore bounds the effect of those errors, and of the
// inputs' own relative perturbations, on y; h's own c is a_j. With norm_input = rounded the
// norm reads round_h(h) exactly as stored: a kernel whose wide sum lands on the other side of
// a rounding boundary of h's dtype stores a neighbour (one ulp of h away, a different but
// legitimate input of the norm); the bundled cases are chosen so that no element of h lies
// within 4 u a_j of such a boundary (tests/fused_add_norm_test.cpp checks it).
#pragma once

#include <cmath>
#include <optional>
#include <type_traits>
#include <vector>

#include "ops/common/certified_rows.hpp"
#include "ops/common/family_common.hpp"
#include "ops/common/row_norm.hpp"
#include "ops/fused_add_norm/fused_add_norm.hpp"
#include "spec/layout.hpp"

namespace normcheck::reference {

/// The norm's input row r of a problem with a residual: z (rounded or not per norm_input),
/// the perturbation magnitudes a_j = |x_j| + |r_j| + |b_j|, and h's exact value, its one
/// rounding to h's dtype and its condition magnitude a_j stored into `h` (when not null).
template <class T>
void residual_row(const Problem& p, std::int64_t r, std::int64_t m, const std::vector<T>& bias, T* z, T* mag, ExactOutput* h) {
  using std::abs;
  const Tensor& x = p.x();
  const Tensor& res = p.inputs.at("residual");
  const DType hd = res.dtype();
  for (std::int64_t j = 0; j < m; ++j) {
    const std::int64_t i = r * m + j;
    const T xv(x.get(i)), rv(res.get(i)), bv = bias.empty() ? T(0) : bias[static_cast<std::size_t>(j)];
    const T sum = xv + rv + bv;  // exact at the working precision
    mag[j] = abs(xv) + abs(rv) + abs(bv);
    if (h) detail::put(*h, i, sum, static_cast<double>(mag[j]), detail::Exact::yes);  // exact at P: no rounding test
    z[j] = p.conv.norm_input == NormInput::rounded ? T(round_to(hd, sum)) : sum;
  }
}

/// gamma, beta and bias as T, loaded once per problem.
template <class T>
struct FusedParams {
  std::vector<T> gamma, beta, bias;
  explicit FusedParams(const Problem& p)
      : gamma(detail::load_all<T>(p.input("gamma"))), beta(detail::load_all<T>(p.input("beta"))), bias(detail::load_all<T>(p.input("bias"))) {}
};

/// Row r of fused_add_layer_norm / fused_add_rms_norm in T: h, then the norm of z (every
/// element of the row's y and h written).
template <class T>
void fused_add_row(const Problem& p, const RowLayout& l, std::int64_t r, const FusedParams<T>& a, ExactOutput& y, ExactOutput& h) {
  std::vector<T> z(static_cast<std::size_t>(l.m)), mag(z), yr(z);
  std::vector<double> cr(z.size());  // the row's condition magnitudes, kept by put()
  residual_row(p, r, l.m, a.bias, z.data(), mag.data(), &h);
  normalize_group(z.data(), l.m, p.op.def().centers, p.conv, a.gamma.data(), a.beta.data(), yr.data(), cr.data(),
                  mag.data());
  for (std::int64_t j = 0; j < l.m; ++j) {
    const std::int64_t i = r * l.m + j;
    detail::put(y, i, yr[static_cast<std::size_t>(j)], cr[static_cast<std::size_t>(j)]);
  }
}

/// y and h of fused_add_layer_norm / fused_add_rms_norm (centering per the op's OpDef), each
/// row on the certified fast path where `fast` and it decides (certified_rows.hpp), else in T.
template <class T>
ExactOutputs fused_add_rows(const Problem& p, bool fast = false) {
  const RowLayout l = row_layout(p);
  const Tensor& x = p.x();
  ExactOutput y = detail::make_output(p.out_dtype, x.shape()), h = detail::make_output(ops::fused::h_dtype(p), x.shape());
  const FusedParams<T> a(p);
  const std::optional<FusedParams<DDBall>> a_dd = fast ? std::optional<FusedParams<DDBall>>(p) : std::nullopt;
  detail::certified_rows<T>(l.rows, fast, x.size() >= detail::kParallelMin, [&](std::int64_t r, auto tag) {
    using U = typename decltype(tag)::type;
    if constexpr (std::is_same_v<U, DDBall>) fused_add_row<DDBall>(p, l, r, *a_dd, y, h);
    else fused_add_row<T>(p, l, r, a, y, h);
  });
  ExactOutputs o;
  o.emplace("y", std::move(y));
  o.emplace("h", std::move(h));
  return o;
}

}  // namespace normcheck::reference
