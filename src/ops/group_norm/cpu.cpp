// CPU group_norm / instance_norm forward: binary32 accumulation (binary64 for f64).
//
// x [N, C, *spatial] is row-major, so group (n, g) is one contiguous block of
// m = (C/G) * spatial values (instance_norm: G = C, m = spatial): each block is a row
// for group_kernel.hpp's two-pass normalization (scan, 2^-e scaling, mean, centered sum of
// squares, binary64 denominator), then y = n gamma[ch] + beta[ch] with ch = g C/G + j / spatial.
// Groups are spread over OpenMP threads. Error bound: group_kernel.hpp, with m as above.
#include "core/region_errors.hpp"
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/group_kernel.hpp"
#include "spec/layout.hpp"

namespace normcheck::kernels::cpu {

namespace {

template <class A>
void group_norm_rows(const Problem& p, Tensor& y, Tensor& mean, Tensor& rstd) {
  using namespace detail;
  const ChannelLayout l = channel_layout(p);
  const std::int64_t G = p.op == Op::instance_norm ? l.c : p.conv.num_groups;
  const std::int64_t cpg = l.c / G, m = cpg * l.spatial, dof = dof_of(p.conv, m);
  const std::vector<A> gamma = load_param<A>(p.input("gamma"), p.conv.affine == Affine::one_plus_w);
  const std::vector<A> beta = load_param<A>(p.input("beta"));
  const Tensor& x = p.x();
  RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel if (x.size() > 32768)
  {
    std::vector<A> buf;
    errors.run([&] { buf.resize(static_cast<std::size_t>(m)); });
#pragma omp for schedule(static)
    for (std::int64_t grp = 0; grp < l.n * G; ++grp) errors.run([&] {
      A* a = buf.data();
      load_row(x, grp * m, m, a);
      const GroupStats<A> st = normalize_in_place(a, m, true, dof, p.conv);
      double mu = 0, r = 0;
      saved_statistics(st, dof, p.conv, mu, r);
      mean.set(grp, mu);
      rstd.set(grp, r);
      if (!gamma.empty()) {
        const std::int64_t ch0 = (grp % G) * cpg;
        for (std::int64_t cc = 0; cc < cpg; ++cc) {
          const A g = gamma[ch0 + cc], b = beta.empty() ? A(0) : beta[ch0 + cc];
          A* row = a + cc * l.spatial;
          if (beta.empty()) for (std::int64_t j = 0; j < l.spatial; ++j) row[j] *= g;
          else for (std::int64_t j = 0; j < l.spatial; ++j) row[j] = row[j] * g + b;
        }
      }
      store_row(y, grp * m, m, a);
    });
  }
  errors.rethrow();
}

}  // namespace

void group_norm_forward(const Problem& p, Outputs& out) {
  Tensor y(p.out_dtype, p.x().shape());
  const ChannelLayout l = channel_layout(p);
  const Shape stats{l.n, p.op == Op::instance_norm ? l.c : p.conv.num_groups};  // the saved statistics
  Tensor mean(saved_stat_dtype(p), stats), rstd(saved_stat_dtype(p), stats);
  if (detail::use_f64(p)) group_norm_rows<double>(p, y, mean, rstd);
  else group_norm_rows<float>(p, y, mean, rstd);
  out["y"] = std::move(y);
  out["mean"] = std::move(mean);
  out["rstd"] = std::move(rstd);
}

}  // namespace normcheck::kernels::cpu
