#include "backends/cuda_backend.hpp"

#include <fmt/format.h>

#ifdef NORMCHECK_HAVE_CUDA
#include "kernels/cuda/family.hpp"
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
  std::string identity() const override { return "normcheck " NORMCHECK_VERSION; }
  std::string description() const override {
    return "normcheck CUDA kernels: layer/rms_norm (warp/block per row), group/instance_norm (block per group), "
           "batch_norm (block per channel + elementwise); two-pass, f32 accumulation (f64 for f64)";
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
  std::optional<std::string> unsupported(const ValidProblem& vp, const Recorded&) const override {
    const Problem& p = *vp;
    if (p.op != Op::layer_norm && p.op != Op::rms_norm && p.op != Op::group_norm && p.op != Op::instance_norm &&
        p.op != Op::batch_norm)
      return fmt::format("cuda: no kernel for {}", to_string(p.op));
    if (p.conv.acc_dtype != DType::f32 && p.conv.acc_dtype != DType::f64)
      return fmt::format("cuda: accumulation in {} not offered", dtype_name(p.conv.acc_dtype));
    for (auto& [name, t] : p.inputs)
      if (is_quantized(t.dtype())) return fmt::format("cuda: no {} storage (input {})", dtype_name(t.dtype()), name);
    if (p.conv.normalized_dtype) return std::string("cuda: the kernels round once, at the output (normalized_dtype not offered)");
    return std::nullopt;
  }
  Outputs run(const ValidProblem& vp, const Recorded&) override {
    const Problem& p = *vp;
    Outputs o;
#ifdef NORMCHECK_HAVE_CUDA
    if (p.op == Op::layer_norm) kernels::cuda::layer_norm_forward(p, o);
    else if (p.op == Op::rms_norm) kernels::cuda::rms_norm_forward(p, o);
    else if (p.op == Op::group_norm || p.op == Op::instance_norm) kernels::cuda::group_norm_forward(p, o);
    else if (p.op == Op::batch_norm) kernels::cuda::batch_norm_forward(p, o);
    else throw BackendError(fmt::format("cuda: no kernel for {}", to_string(p.op)));
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
