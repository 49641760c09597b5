// CPU ada_layer_norm / ada_rms_norm forward: binary32 accumulation (binary64 for f64).
//
// Per token row of d values (x [B, *, d], row r belongs to batch element b = r / tokens):
// group_kernel.hpp's two-pass normalization (centered for ada_layer_norm), then
//   y = (1 + s[b]) n + shift[b]     ((1 + s) formed once in A per batch element),
//   h = x + gate[b] y               (with `gated`; x exact in A, so gate 0 gives h = x),
// two and two more roundings. A row holding NaN/inf gives NaN for its y and h.
// Error bound: group_kernel.hpp's for n, plus 4 roundings, within 1 + 8 + sqrt(d).
#include <algorithm>

#include "core/region_errors.hpp"
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/group_kernel.hpp"

namespace normcheck::kernels::cpu {

namespace {

template <class A>
void ada_rows(const Problem& p, Outputs& out) {
  using namespace detail;
  const Tensor& x = p.x();
  const Shape& xs = x.shape();
  const std::int64_t d = xs.back(), rows = x.size() / d, per_batch = rows / xs.front(), dof = dof_of(p.conv, d);
  const bool center = p.op == Op::ada_layer_norm, gated = p.conv.gated;
  const std::vector<A> one_plus_s = load_param<A>(p.input("scale"), true), shift = load_param<A>(p.input("shift"));
  const std::vector<A> gate = load_param<A>(p.input("gate"));
  Tensor y(p.out_dtype, xs), h(p.out_dtype, gated ? xs : Shape{0});
  RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel if (x.size() > 32768)
  {
    std::vector<A> buf, xb;
    errors.run([&] { buf.resize(static_cast<std::size_t>(d)); xb.resize(buf.size()); });
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) errors.run([&] {
      A* a = buf.data();
      const std::int64_t off = r * d, pb = (r / per_batch) * d;
      load_row(x, off, d, a);
      if (gated) std::copy(a, a + d, xb.data());
      normalize_in_place(a, d, center, dof, p.conv);
      const A* s1 = one_plus_s.data() + pb;
      const A* sh = shift.data() + pb;
      for (std::int64_t j = 0; j < d; ++j) a[j] = s1[j] * a[j] + sh[j];
      store_row(y, off, d, a);
      if (gated) {
        const A* g = gate.data() + pb;
        for (std::int64_t j = 0; j < d; ++j) a[j] = xb[j] + g[j] * a[j];
        store_row(h, off, d, a);
      }
    });
  }
  errors.rethrow();
  out["y"] = std::move(y);
  if (gated) out["h"] = std::move(h);
}

}  // namespace

void ada_norm_forward(const Problem& p, Outputs& out) {
  if (detail::use_f64(p)) ada_rows<double>(p, out);
  else ada_rows<float>(p, out);
}

}  // namespace normcheck::kernels::cpu
