// Reading and writing tensor files: NumPy .npy (via xtensor's xnpy) and .safetensors.
#pragma once

#include <map>
#include <stdexcept>
#include <string>

#include "core/tensor.hpp"

namespace normcheck {

/// A malformed or unreadable tensor or sidecar file: "file: field: message", or
/// "file:line: field: message" for a JSON syntax error. The CLI exits with code 2.
struct DumpError : std::runtime_error {
  DumpError(std::string file_, int line_, std::string field_, const std::string& msg);
  std::string file;
  int line;
  std::string field;
};

/// Reads a .npy file (format 1.0 or 2.0; C order; little-endian '<f2' binary16, '<f4'
/// binary32, '<f8' binary64; 0-d arrays as shape []). numpy has no bfloat16: store bf16
/// in .safetensors. Throws DumpError (field "descr", "fortran_order", "data"...).
Tensor read_npy(const std::string& path);

/// Writes a tensor as .npy ('<f2', '<f4' or '<f8', C order) via xnpy. bf16 is refused
/// (DumpError): numpy cannot read it. Throws DumpError on a write failure.
void write_npy(const std::string& path, const Tensor& t);

/// Reads every tensor of a .safetensors file. Layout (huggingface/safetensors, format
/// docs): an unsigned 64-bit little-endian header size N; N bytes of UTF-8 JSON
/// {"<name>": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
/// "__metadata__": {string: string}} (optional); then the data buffer, offsets relative
/// to its start, row-major, little-endian. dtypes read: F64, F32, F16, BF16.
/// Checks: N fits in the file, the JSON parses, every entry has the three keys, end -
/// begin == numel * size(dtype), offsets within the buffer. Throws DumpError naming
/// the tensor ("<name>.dtype", "<name>.data_offsets"...).
std::map<std::string, Tensor> read_safetensors(const std::string& path);

/// Writes tensors (sorted by name, contiguous, 8-byte aligned header as the reference
/// implementation pads with spaces) as .safetensors, with optional string metadata.
void write_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace normcheck
