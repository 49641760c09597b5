// CPU ada_layer_norm / ada_rms_norm backward (gated = false): binary32 accumulation
// (binary64 for f64).
//
// Per token row of d values (rows over OpenMP threads): backward_kernel.hpp's
// group_backward_in_place with the gain 1 + s[b] (formed once in A per batch element, as the
// forward kernel does), centered for ada_layer_norm: dx. Then per (b, j) (in parallel over
// b, j): ds = sum dy n and db = sum dy over the R = tokens rows of batch element b,
// lane-blocked. Error bound: backward_kernel.hpp, within 1 + 16 + sqrt(d) + sqrt(R).
#include "core/region_errors.hpp"
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/backward_kernel.hpp"

namespace normcheck::kernels::cpu {

namespace {

template <class A>
void ada_backward_impl(const Problem& p, Outputs& out) {
  using namespace detail;
  const Tensor& x = p.x();
  const Tensor& dy = p.inputs.at("dy");
  const Shape& xs = x.shape();
  const std::int64_t B = xs.front(), d = xs.back(), rows = x.size() / d, per_batch = rows / B, dof = dof_of(p.conv, d);
  const bool center = p.op == Op::ada_layer_norm;
  const std::vector<A> one_plus_s = load_param<A>(p.input("scale"), true);
  Tensor dx(p.out_dtype, xs);
  std::vector<A> nall(static_cast<std::size_t>(x.size()));
  RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel if (x.size() > 32768)
  {
    std::vector<A> xb, gb;
    errors.run([&] { xb.resize(static_cast<std::size_t>(d)); gb.resize(xb.size()); });
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) errors.run([&] {
      load_row(x, r * d, d, xb.data());
      load_row(dy, r * d, d, gb.data());
      group_backward_in_place(xb.data(), gb.data(), d, center, dof, p.conv, one_plus_s.data() + (r / per_batch) * d);
      store_row(dx, r * d, d, gb.data());
      std::copy(xb.begin(), xb.end(), nall.begin() + r * d);
    });
  }
  errors.rethrow();
  out["dx"] = std::move(dx);
  std::vector<A> ds(static_cast<std::size_t>(B * d)), db(ds.size());
  const Reader<A> rd{dy.data(), dy.dtype()};
#pragma omp parallel for schedule(static) if (x.size() > 32768)
  for (std::int64_t bj = 0; bj < B * d; ++bj) {
    const std::int64_t b = bj / d, j = bj % d;
    auto at = [&](std::int64_t t) { return (b * per_batch + t) * d + j; };
    ds[bj] = blocked_sum_n<A>(per_batch, [&](std::int64_t t) { return rd(at(t)) * nall[at(t)]; });
    db[bj] = blocked_sum_n<A>(per_batch, [&](std::int64_t t) { return rd(at(t)); });
  }
  Tensor tds(p.out_dtype, p.inputs.at("scale").shape()), tdb(p.out_dtype, p.inputs.at("shift").shape());
  store_row(tds, 0, tds.size(), ds.data());
  store_row(tdb, 0, tdb.size(), db.data());
  out["ds"] = std::move(tds);
  out["db"] = std::move(tdb);
}

}  // namespace

void ada_norm_backward(const Problem& p, Outputs& out) {
  if (detail::use_f64(p)) ada_backward_impl<double>(p, out);
  else ada_backward_impl<float>(p, out);
}

}  // namespace normcheck::kernels::cpu
