// Checked CUDA runtime calls: every call and launch goes through NORMCHECK_CUDA_CHECK,
// which throws normcheck::BackendError naming the call, file:line and CUDA's error.
#pragma once

#include <string>

#include <cuda_runtime_api.h>

#include "spec/backend.hpp"

namespace normcheck::kernels::cuda::detail {

/// Throws BackendError("<file>:<line>: <call>: <cudaErrorName>: <cudaGetErrorString>")
/// unless e is cudaSuccess.
inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  throw BackendError(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + cudaGetErrorName(e) + ": " +
                     cudaGetErrorString(e));
}

}  // namespace normcheck::kernels::cuda::detail

/// Checks a cudaError_t-returning expression (a launch: NORMCHECK_CUDA_CHECK(cudaGetLastError())).
#define NORMCHECK_CUDA_CHECK(expr) ::normcheck::kernels::cuda::detail::check_cuda((expr), #expr, __FILE__, __LINE__)
