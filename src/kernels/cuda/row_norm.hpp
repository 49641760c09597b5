// CUDA kernels for the row-wise normalizations (layer_norm, rms_norm): host-visible
// declarations, no CUDA header (the CPU twin is kernels/cpu/row_norm.hpp).
// Numerics: row_norm_body.hpp; kernels: layer_norm.cu, rms_norm.cu; launch choice: launch.hpp.
// Defined only in builds with CUDA (NORMCHECK_HAVE_CUDA); the host-side logic they use
// (RowNormArgs, launch choice, parameter preparation) is in launch.hpp.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "kernels/cuda/launch.hpp"
#include "spec/op.hpp"

namespace normcheck::kernels::cuda {

/// Launches the layer_norm kernel chosen by `cfg` (choose_launch) on `stream` (a
/// cudaStream_t; nullptr = the default stream). Asynchronous: launch errors throw
/// BackendError (file:line, CUDA's error string); execution errors surface at the next
/// synchronizing call. acc: f32 or f64, as given to choose_launch.
void launch_layer_norm(const RowNormArgs& a, const LaunchConfig& cfg, DType acc, void* stream);
/// The rms_norm kernel, same contract.
void launch_rms_norm(const RowNormArgs& a, const LaunchConfig& cfg, DType acc, void* stream);

/// Why no CUDA device can be used ("cuda: unavailable: no CUDA device (<CUDA error>)"),
/// or nullopt when cudaGetDeviceCount reports at least one. Does not create a context.
std::optional<std::string> device_unavailable();

/// Opt-in shared memory limit per block of the current device, in bytes.
std::size_t max_smem_per_block();

/// layer_norm forward of a validated Problem on the current device (x: [..., normalized_shape]
/// row-major; gamma/beta: normalized_shape, any dtype). Uploads the inputs, poisons y with
/// 0xFF bytes (NaN in every format) so an unwritten element shows, launches, synchronizes
/// and writes outputs["y"] (shape of x, out_dtype). Throws BackendError on any CUDA error.
void layer_norm_forward(const Problem& p, Outputs& out);
/// rms_norm forward, same contract.
void rms_norm_forward(const Problem& p, Outputs& out);

}  // namespace normcheck::kernels::cuda
