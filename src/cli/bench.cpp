// normcheck_bench: forward throughput of the CUDA layer_norm / rms_norm kernels against a
// device-to-device cudaMemcpy of the same bytes (the attainable bandwidth, measured in the
// same run) and, when given, PyTorch's kernels timed by tools/gpu-check.sh.
//
// Timing: cudaEvent pairs around each launch, L2 flushed (a 256 MiB memset) before each,
// `--warmup` untimed launches, the median of `--iters`. Bandwidth = (bytes of x read + y
// written + parameters read) / time, in GB/s (1e9 bytes/s); the memcpy of the x bytes moves
// the same 2 N b bytes. Before timing, each kernel's output (poisoned with 0xFF bytes) is
// checked for unwritten or NaN elements: the inputs are finite, so there must be none.
// Exit codes: 0 done, 1 a kernel left NaN in its output, 2 bad usage, 3 a CUDA error.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/launch.hpp"
#include "kernels/cuda/row_norm.hpp"

namespace nc = normcheck;
namespace kc = normcheck::kernels::cuda;

namespace {

struct Row {
  std::string op, dtype;
  std::int64_t rows = 0, d = 0;
  kc::LaunchConfig cfg;
  double us = 0, gbs = 0, memcpy_us = 0, memcpy_gbs = 0;
  double torch_us = NAN;
  std::int64_t bad = 0;
};

class Buf {
 public:
  explicit Buf(std::size_t n) : n_(n) { NORMCHECK_CUDA_CHECK(cudaMalloc(&p_, n)); }
  ~Buf() { (void)cudaFree(p_); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  void* get() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  void* p_ = nullptr;
  std::size_t n_;
};

/// Median time in microseconds of `iters` runs of f, each after an L2 flush.
template <class F>
double time_us(F&& f, int warmup, int iters, const Buf& flush) {
  cudaEvent_t a, b;
  NORMCHECK_CUDA_CHECK(cudaEventCreate(&a));
  NORMCHECK_CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < warmup; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    NORMCHECK_CUDA_CHECK(cudaMemsetAsync(flush.get(), i & 0xff, flush.size()));
    NORMCHECK_CUDA_CHECK(cudaEventRecord(a));
    f();
    NORMCHECK_CUDA_CHECK(cudaEventRecord(b));
    NORMCHECK_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    NORMCHECK_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(1e3 * ms);
  }
  NORMCHECK_CUDA_CHECK(cudaEventDestroy(a));
  NORMCHECK_CUDA_CHECK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// Fills rows*d values of dtype t with a deterministic pseudo-random N(0,1)-like pattern
/// (sum of 4 uniforms, centered), generating 256 rows on the host and replicating them.
void fill(const Buf& x, nc::DType t, std::int64_t rows, std::int64_t d) {
  const std::int64_t pat_rows = std::min<std::int64_t>(rows, 256);
  nc::Tensor h(t, {pat_rows, d});
  std::uint64_t s = 0x9e3779b97f4a7c15ull;
  auto u = [&] {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    return static_cast<double>(s >> 11) * 0x1p-53;
  };
  for (std::int64_t i = 0; i < h.size(); ++i) h.set(i, (u() + u() + u() + u() - 2.0) * 1.7320508);
  NORMCHECK_CUDA_CHECK(cudaMemcpy(x.get(), h.data(), h.nbytes(), cudaMemcpyHostToDevice));
  std::size_t done = h.nbytes();
  while (done < x.size()) {
    const std::size_t n = std::min(done, x.size() - done);
    NORMCHECK_CUDA_CHECK(cudaMemcpy(static_cast<char*>(x.get()) + done, x.get(), n, cudaMemcpyDeviceToDevice));
    done += n;
  }
}

/// Elements of y (dtype t) that are NaN: never written (poison) or wrong.
std::int64_t count_nan(const Buf& y, nc::DType t, std::int64_t n) {
  nc::Tensor h(t, {n});
  NORMCHECK_CUDA_CHECK(cudaMemcpy(h.data(), y.get(), h.nbytes(), cudaMemcpyDeviceToHost));
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < n; ++i) bad += std::isnan(h.get(i));
  return bad;
}

/// tools/gpu-check.sh's torch timings: lines "op,dtype,rows,d,median_us".
std::map<std::tuple<std::string, std::string, std::int64_t, std::int64_t>, double> read_torch(const std::string& path) {
  std::map<std::tuple<std::string, std::string, std::int64_t, std::int64_t>, double> m;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string op, dt, r, d, us;
    if (!std::getline(ss, op, ',') || !std::getline(ss, dt, ',') || !std::getline(ss, r, ',') ||
        !std::getline(ss, d, ',') || !std::getline(ss, us, ','))
      continue;
    try {
      m[{op, dt, std::stoll(r), std::stoll(d)}] = std::stod(us);
    } catch (const std::exception&) {
      // header line
    }
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"normcheck_bench: CUDA layer_norm / rms_norm forward throughput vs cudaMemcpy (and torch)"};
  std::int64_t rows = 16384;
  std::vector<std::int64_t> ds{768, 4096, 8192, 16384};
  std::vector<std::string> dtypes{"bf16", "f32"};
  int warmup = 5, iters = 30;
  std::string out, torch_csv;
  app.add_option("--rows", rows, "rows per problem");
  app.add_option("--d", ds, "row lengths")->delimiter(',');
  app.add_option("--dtypes", dtypes, "storage dtypes of x and y (f32, f16, bf16)")->delimiter(',');
  app.add_option("--warmup", warmup, "untimed launches first");
  app.add_option("--iters", iters, "timed launches (the median is reported)");
  app.add_option("--out", out, "write every number as CSV here");
  app.add_option("--torch-csv", torch_csv, "torch timings (op,dtype,rows,d,median_us) to compare with");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (rows <= 0 || iters <= 0 || warmup < 0) {
    fmt::print(stderr, "normcheck_bench: --rows and --iters must be positive\n");
    return 2;
  }
  std::vector<Row> results;
  try {
    if (auto why = kc::device_unavailable()) {
      fmt::print(stderr, "normcheck_bench: {}\n", *why);
      return 3;
    }
    int dev = 0;
    cudaDeviceProp prop{};
    NORMCHECK_CUDA_CHECK(cudaGetDevice(&dev));
    NORMCHECK_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    fmt::print("device {}: {} (sm_{}{}, {} SMs, {:.1f} GiB)\n", dev, prop.name, prop.major, prop.minor,
               prop.multiProcessorCount, prop.totalGlobalMem / double(1 << 30));
    const auto torch = torch_csv.empty() ? decltype(read_torch("")){} : read_torch(torch_csv);
    const Buf flush(256u << 20);
    const std::size_t smem = kc::max_smem_per_block();
    for (const auto& dts : dtypes) {
      const auto dt = nc::parse_dtype(dts);
      if (!dt || *dt == nc::DType::f64) {
        fmt::print(stderr, "normcheck_bench: --dtypes: '{}' is not f32, f16 or bf16\n", dts);
        return 2;
      }
      const std::size_t b = nc::format_info(*dt).bytes;
      for (const std::int64_t d : ds) {
        const std::int64_t n = rows * d;
        const Buf x(n * b), y(n * b), g(d * 4), be(d * 4);
        fill(x, *dt, rows, d);
        {
          std::vector<float> hg(d), hb(d);
          for (std::int64_t j = 0; j < d; ++j) { hg[j] = 1.0f + 0.001f * (j % 97); hb[j] = 0.01f * (j % 13); }
          NORMCHECK_CUDA_CHECK(cudaMemcpy(g.get(), hg.data(), d * 4, cudaMemcpyHostToDevice));
          NORMCHECK_CUDA_CHECK(cudaMemcpy(be.get(), hb.data(), d * 4, cudaMemcpyHostToDevice));
        }
        const double memcpy_us = time_us([&] {
          NORMCHECK_CUDA_CHECK(cudaMemcpyAsync(y.get(), x.get(), n * b, cudaMemcpyDeviceToDevice));
        }, warmup, iters, flush);
        for (const bool center : {true, false}) {
          kc::RowNormArgs a;
          a.x = x.get(); a.y = y.get(); a.gamma = g.get(); a.beta = center ? be.get() : nullptr;
          a.rows = rows; a.d = d; a.dof = d; a.eps = 1e-5;
          a.affine = center ? nc::Affine::gamma_beta : nc::Affine::gamma;
          a.x_dtype = *dt; a.y_dtype = *dt;
          kc::LaunchQuery q;
          q.rows = rows; q.d = d; q.x = *dt; q.y = *dt; q.acc = nc::DType::f32;
          q.x_addr = reinterpret_cast<std::uintptr_t>(a.x); q.y_addr = reinterpret_cast<std::uintptr_t>(a.y);
          q.gamma_addr = reinterpret_cast<std::uintptr_t>(a.gamma); q.beta_addr = reinterpret_cast<std::uintptr_t>(a.beta);
          q.max_smem_per_block = smem;
          const kc::LaunchConfig cfg = kc::choose_launch(q);
          auto launch = [&] {
            if (center) kc::launch_layer_norm(a, cfg, nc::DType::f32, nullptr);
            else kc::launch_rms_norm(a, cfg, nc::DType::f32, nullptr);
          };
          Row r;
          r.op = center ? "layer_norm" : "rms_norm";
          r.dtype = dts; r.rows = rows; r.d = d; r.cfg = cfg;
          NORMCHECK_CUDA_CHECK(cudaMemset(y.get(), 0xff, n * b));
          launch();
          NORMCHECK_CUDA_CHECK(cudaDeviceSynchronize());
          r.bad = count_nan(y, *dt, n);
          r.us = time_us(launch, warmup, iters, flush);
          NORMCHECK_CUDA_CHECK(cudaDeviceSynchronize());
          const double bytes = static_cast<double>(n) * 2 * b + static_cast<double>(d) * 4 * (center ? 2 : 1);
          r.gbs = bytes / (r.us * 1e3);
          r.memcpy_us = memcpy_us;
          r.memcpy_gbs = 2.0 * n * b / (memcpy_us * 1e3);
          if (auto it = torch.find({r.op, dts, rows, d}); it != torch.end()) r.torch_us = it->second;
          results.push_back(r);
        }
      }
    }
  } catch (const nc::BackendError& e) {
    fmt::print(stderr, "normcheck_bench: {}\n", e.what());
    return 3;
  }
  auto split = [](const kc::LaunchConfig& c) {
    return fmt::format("{}x{} v{}{}", c.strategy == kc::RowStrategy::warp_per_row ? "warp" : "block", c.threads, c.vec,
                       c.cached ? "" : " uncached");
  };
  if (!out.empty()) {
    std::ofstream f(out);
    f << "op,dtype,rows,d,split,us,GBps,memcpy_us,memcpy_GBps,ratio_memcpy,torch_us,speedup_vs_torch,nan_outputs\n";
    for (auto& r : results)
      f << fmt::format("{},{},{},{},{},{:.3f},{:.1f},{:.3f},{:.1f},{:.3f},{},{},{}\n", r.op, r.dtype, r.rows, r.d, split(r.cfg),
                       r.us, r.gbs, r.memcpy_us, r.memcpy_gbs, r.gbs / r.memcpy_gbs,
                       std::isnan(r.torch_us) ? "" : fmt::format("{:.3f}", r.torch_us),
                       std::isnan(r.torch_us) ? "" : fmt::format("{:.3f}", r.torch_us / r.us), r.bad);
    if (!f) {
      fmt::print(stderr, "normcheck_bench: cannot write {}\n", out);
      return 2;
    }
  }
  fmt::print("\n{:<11} {:<5} {:>6} {:>6} {:<22} {:>9} {:>8} {:>8} {:>7} {:>9} {:>8} {:>5}\n", "op", "dtype", "rows", "d", "split",
             "us", "GB/s", "memcpy", "ratio", "torch_us", "speedup", "NaN");
  bool any_bad = false;
  for (auto& r : results) {
    any_bad = any_bad || r.bad != 0;
    fmt::print("{:<11} {:<5} {:>6} {:>6} {:<22} {:>9.2f} {:>8.0f} {:>8.0f} {:>7.3f} {:>9} {:>8} {:>5}\n", r.op, r.dtype, r.rows, r.d,
               split(r.cfg), r.us, r.gbs, r.memcpy_gbs, r.gbs / r.memcpy_gbs,
               std::isnan(r.torch_us) ? "-" : fmt::format("{:.2f}", r.torch_us),
               std::isnan(r.torch_us) ? "-" : fmt::format("{:.2f}x", r.torch_us / r.us), r.bad);
  }
  fmt::print("(GB/s: bytes of x + y + parameters / median time; ratio: vs cudaMemcpy D2D of x; speedup: torch time / ours)\n");
  return any_bad ? 1 : 0;
}
