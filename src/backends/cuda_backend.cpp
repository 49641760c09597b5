#include "backends/cuda_backend.hpp"

#include <fmt/format.h>

#ifdef NORMCHECK_HAVE_CUDA
#include "kernels/cuda/row_norm.hpp"
#endif

#ifndef NORMCHECK_CUDA_STUB_REASON
#define NORMCHECK_CUDA_STUB_REASON "nvcc not found"
#endif

namespace normcheck {

namespace {

class CudaBackend final : public Backend {
 public:
  std::string name() const override { return "cuda"; }
  std::string description() const override {
    return "normcheck CUDA kernels: warp/block per row, two-pass, f32 accumulation (f64 for f64)";
  }
  std::optional<std::string> unavailable() const override {
#ifdef NORMCHECK_HAVE_CUDA
    if (!probed_) {
      why_ = kernels::cuda::device_unavailable();
      probed_ = true;
    }
    return why_;
#else
    return std::string("cuda: not built (" NORMCHECK_CUDA_STUB_REASON ")");
#endif
  }
  std::optional<std::string> unsupported(const Problem& p, const Recorded&) const override {
    if (p.op != Op::layer_norm && p.op != Op::rms_norm) return fmt::format("cuda: no kernel for {}", to_string(p.op));
    if (p.conv.acc_dtype != DType::f32 && p.conv.acc_dtype != DType::f64)
      return fmt::format("cuda: accumulation in {} not offered", dtype_name(p.conv.acc_dtype));
    return std::nullopt;
  }
  Outputs run(const Problem& p, const Recorded&) override {
    Outputs o;
#ifdef NORMCHECK_HAVE_CUDA
    if (p.op == Op::layer_norm) kernels::cuda::layer_norm_forward(p, o);
    else kernels::cuda::rms_norm_forward(p, o);
#else
    (void)p;
    throw BackendError("cuda: not built (" NORMCHECK_CUDA_STUB_REASON ")");
#endif
    return o;
  }

 private:
  mutable bool probed_ = false;
  mutable std::optional<std::string> why_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace normcheck
