// Host driver of the CUDA row kernels: device buffers, upload, poisoning, launch, download.
// Built only with CUDA (NORMCHECK_HAVE_CUDA); every runtime call is checked.
#include "kernels/cuda/row_norm.hpp"

#include <cuda_runtime_api.h>

#include "kernels/cuda/check.hpp"

namespace normcheck::kernels::cuda {

namespace {

/// cudaMalloc'd bytes, freed on scope exit (256-byte aligned: every vector width applies).
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (n_) NORMCHECK_CUDA_CHECK(cudaMalloc(&p_, n_));
  }
  ~DeviceBuffer() {
    if (p_) (void)cudaFree(p_);  // a failing free cannot be reported from a destructor
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const noexcept { return p_; }
  std::size_t size() const noexcept { return n_; }
  void upload(const void* src) {
    if (n_) NORMCHECK_CUDA_CHECK(cudaMemcpy(p_, src, n_, cudaMemcpyHostToDevice));
  }

 private:
  void* p_ = nullptr;
  std::size_t n_ = 0;
};

void forward(const Problem& p, Outputs& out, bool center) {
  const DType acc = accumulation_dtype(p);
  const Tensor& x = p.x();
  Tensor y(p.out_dtype, x.shape());
  const KernelParams kp = kernel_params(p, acc);
  DeviceBuffer dx(x.nbytes()), dy(y.nbytes()), dg(kp.gamma.size()), db(kp.beta.size());
  dx.upload(x.data());
  dg.upload(kp.gamma.data());
  db.upload(kp.beta.data());
  if (dy.size()) NORMCHECK_CUDA_CHECK(cudaMemset(dy.get(), 0xff, dy.size()));  // unwritten elements read as NaN
  const RowNormArgs a = row_norm_args(p, dx.get(), dy.get(), dg.get(), db.get());
  LaunchQuery q;
  q.rows = a.rows;
  q.d = a.d;
  q.x = a.x_dtype;
  q.y = a.y_dtype;
  q.acc = acc;
  q.x_addr = reinterpret_cast<std::uintptr_t>(a.x);
  q.y_addr = reinterpret_cast<std::uintptr_t>(a.y);
  q.gamma_addr = reinterpret_cast<std::uintptr_t>(a.gamma);
  q.beta_addr = reinterpret_cast<std::uintptr_t>(a.beta);
  q.max_smem_per_block = max_smem_per_block();
  const LaunchConfig cfg = choose_launch(q);
  if (center) launch_layer_norm(a, cfg, acc, nullptr);
  else launch_rms_norm(a, cfg, acc, nullptr);
  NORMCHECK_CUDA_CHECK(cudaDeviceSynchronize());  // execution errors of the kernel surface here
  if (dy.size()) NORMCHECK_CUDA_CHECK(cudaMemcpy(y.data(), dy.get(), dy.size(), cudaMemcpyDeviceToHost));
  out["y"] = std::move(y);
}

}  // namespace

std::optional<std::string> device_unavailable() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear the (non-sticky) error
    return std::string("cuda: unavailable: no CUDA device (") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + ")";
  }
  if (n == 0) return std::string("cuda: unavailable: no CUDA device");
  return std::nullopt;
}

std::size_t max_smem_per_block() {
  int dev = 0, v = 0;
  NORMCHECK_CUDA_CHECK(cudaGetDevice(&dev));
  NORMCHECK_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  return static_cast<std::size_t>(v);
}

void layer_norm_forward(const Problem& p, Outputs& out) { forward(p, out, true); }

void rms_norm_forward(const Problem& p, Outputs& out) { forward(p, out, false); }

}  // namespace normcheck::kernels::cuda
