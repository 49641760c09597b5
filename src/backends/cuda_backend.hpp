// The cuda backend (src/kernels/cuda), registered in registry.cpp.
#pragma once

#include <memory>

#include "spec/backend.hpp"

namespace normcheck {

/// The project's CUDA kernels on the current device. In a build without CUDA, or on a
/// machine without a device, unavailable() says why and the runner marks its cases SKIPPED
/// (an error under --strict).
std::unique_ptr<Backend> make_cuda_backend();

}  // namespace normcheck
