// NumPy .npy files of normcheck tensors: the exchange format of external-process backends
// (README "External process backends").
//
// Format: NumPy's format version 1.0/2.0/3.0 (magic "\x93NUMPY", version, little-endian
// header length, a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)},
// padded so the data starts at a multiple of 64 bytes, then the raw data). We write
// version 1.0, little-endian, C order. xtensor's xnpy has no binary16 type, hence this file.
#pragma once

#include <optional>
#include <string>

#include "core/tensor.hpp"

namespace normcheck {

/// Writes t as a .npy file: f64 as '<f8', f32 as '<f4', f16 as '<f2' (NumPy's float16,
/// bit for bit), bf16 as '<f4' holding the same values (NumPy has no bfloat16; every bf16
/// value is a binary32 value, so this is exact). Throws std::runtime_error on I/O errors.
void write_npy_tensor(const std::string& path, const Tensor& t);

/// Reads a .npy file of '<f8', '<f4' or '<f2' (also '=' or '|' byte order on this
/// little-endian host; C or Fortran order, converted to row-major) as a Tensor of f64, f32
/// or f16. If `as` is given, the values are then stored as that dtype, which must hold
/// every value exactly (a bf16 output exchanged as float32); otherwise it is an error that
/// names the first value that is not representable. Throws std::runtime_error naming the
/// file and the problem (missing file, bad magic, unsupported dtype, truncated data).
Tensor read_npy_tensor(const std::string& path, std::optional<DType> as = std::nullopt);

}  // namespace normcheck
