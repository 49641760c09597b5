// Host driver of the CUDA family kernels (group_norm / instance_norm, batch_norm): the
// device executor of family.hpp's orchestration. Built only with CUDA
// (NORMCHECK_HAVE_CUDA); every runtime call is checked (BackendError).
#include "kernels/cuda/family.hpp"

#include <memory>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/cuda/check.hpp"

namespace normcheck::kernels::cuda {

namespace {

/// The device executor: cudaMalloc'd buffers (256-byte aligned) freed on destruction.
class DeviceExec {
 public:
  DeviceExec() = default;
  DeviceExec(const DeviceExec&) = delete;
  DeviceExec& operator=(const DeviceExec&) = delete;
  ~DeviceExec() {
    for (void* p : bufs_) (void)cudaFree(p);  // a failing free cannot be reported from a destructor
  }
  void* alloc(std::size_t n) {
    if (!n) return nullptr;
    void* p = nullptr;
    NORMCHECK_CUDA_CHECK(cudaMalloc(&p, n));
    bufs_.push_back(p);
    return p;
  }
  void upload(void* dst, const void* src, std::size_t n) {
    if (n) NORMCHECK_CUDA_CHECK(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice));
  }
  void download(void* dst, const void* src, std::size_t n) {
    if (n) NORMCHECK_CUDA_CHECK(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost));
  }
  void poison(void* p, std::size_t n) {
    if (n) NORMCHECK_CUDA_CHECK(cudaMemset(p, 0xff, n));
  }
  void sync() { NORMCHECK_CUDA_CHECK(cudaDeviceSynchronize()); }  // execution errors surface here
  void group_norm(const detail::GroupNormArgs& a, const FamilyLaunch& c, DType acc) { launch_group_norm(a, c, acc); }
  void bn_stats(const detail::BatchNormArgs& a, const FamilyLaunch& c, DType acc) { launch_batch_norm_stats(a, c, acc); }
  void bn_apply(const detail::BatchNormArgs& a, const FamilyLaunch& c, DType acc) { launch_batch_norm_apply(a, c, acc); }

 private:
  std::vector<void*> bufs_;
};

}  // namespace

void group_norm_forward(const Problem& p, Outputs& out) {
  DeviceExec ex;
  detail::group_norm_forward_on(p, out, ex);
}

void batch_norm_forward(const Problem& p, Outputs& out) {
  DeviceExec ex;
  detail::batch_norm_forward_on(p, out, ex);
}

}  // namespace normcheck::kernels::cuda
