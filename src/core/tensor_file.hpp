// Tensor files: NumPy .npy and .safetensors, read and written by one hand-checked codec.
//
// Every tensor normcheck reads from outside comes through here: the .npy files external
// workers return (README "External process backends"), the dump folders of `normcheck
// compare` (.npy and .safetensors), and the --dump-failures arrays it writes. The readers
// treat every byte as hostile: each length, offset and element count is checked against
// the bytes actually present before anything is indexed or allocated, products of
// dimensions are computed without overflow, and every malformed input is a DumpError that
// names the file and the field (the CLI exits with code 2).
//
// Formats:
// - .npy (numpy.lib.format, "NPY format" in NumPy's docs; versions 1.0, 2.0, 3.0): magic
//   "\x93NUMPY", major and minor version bytes, the header length (uint16 little-endian in
//   1.0, uint32 in 2.0/3.0), the header, a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces and a
//   final '\n' so the data starts at a multiple of 64 bytes, then the raw data.
// - .safetensors (huggingface/safetensors, "Format"): an uint64 little-endian header size
//   N, N bytes of UTF-8 JSON {"<name>": {"dtype": "F32", "shape": [..], "data_offsets":
//   [begin, end]}, ..., "__metadata__": {string: string}} (optional), then the data
//   buffer, offsets relative to its start, row-major, little-endian.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"

namespace normcheck {

/// A malformed or unreadable tensor or sidecar file: "file: field: message", or
/// "file:line: field: message" when a line is known (a JSON sidecar). The CLI exits with
/// code 2. Fields of this codec: "file", "magic", "version", "header_len", "header",
/// "descr", "fortran_order", "shape", "data", "write"; .safetensors: "header_size",
/// "header", "<name>", "<name>.dtype", "<name>.shape", "<name>.data_offsets".
struct DumpError : std::runtime_error {
  DumpError(std::string file_, int line_, std::string field_, const std::string& msg);
  std::string file;
  int line;
  std::string field;
};

/// Default largest element count a tensor file may declare: 2^36, Tensor's own limit. The
/// count checked is the product of the nonzero dimensions (so a shape (2^40, 0) is refused
/// too: Tensor refuses it). A file must also hold the declared bytes, so in practice the
/// file size bounds every allocation; this limit bounds what a caller is willing to load.
inline constexpr std::int64_t kMaxTensorFileElements = std::int64_t{1} << 36;

/// Largest .npy header read (NumPy itself reads 10,000 bytes by default).
inline constexpr std::uint32_t kMaxNpyHeaderBytes = 1u << 20;
/// Largest .safetensors JSON header read (the limit of the reference implementation).
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

/// Options of the .npy readers.
struct NpyReadOptions {
  /// Store the values as this dtype, which must hold every value exactly (a bf16 output
  /// exchanged as float32); otherwise a DumpError ("data") names the first value that is
  /// not representable. nullopt: the file's dtype.
  std::optional<DType> as;
  /// Refuse a shape whose nonzero dimensions multiply to more (field "shape"); at most
  /// kMaxTensorFileElements.
  std::int64_t max_elements = kMaxTensorFileElements;
};

/// Reads a .npy file: versions 1.0, 2.0 and 3.0; descr '<f8', '<f4', '<f2' (binary64,
/// binary32, binary16; '=' and '|' byte orders too, this host being little-endian);
/// C or Fortran order (Fortran data is reordered to row-major); 0-d arrays as shape [].
/// Returns a row-major Tensor of f64, f32 or f16 (or opt.as). The header dict must hold
/// exactly the keys descr, fortran_order and shape (NumPy's rule); the data must be
/// exactly numel * itemsize bytes. Throws DumpError naming the path and the field: "file"
/// (missing, not a regular file), "magic", "version", "header_len", "header", "descr"
/// ("unsupported npy dtype '<i4'"), "fortran_order", "shape", "data" ("truncated npy data").
Tensor read_npy(const std::string& path, const NpyReadOptions& opt = {});

/// read_npy on the bytes of a file already in memory; `name` stands for the path in
/// errors. The fuzzing harnesses and the tests use it.
Tensor parse_npy(std::string_view bytes, const std::string& name, const NpyReadOptions& opt = {});

/// What write_npy does with a bf16 or fp8 tensor, which NumPy has no dtype for.
enum class NpyBf16 {
  refuse,  ///< DumpError (field "descr"): write .safetensors instead
  as_f32,  ///< '<f4' holding the same values (exact: every bf16 and fp8 value is a binary32 value)
};

/// The bytes of `t` as a .npy file: version 1.0 (2.0 if the header exceeds 65535 bytes),
/// C order, f64 as '<f8', f32 as '<f4', f16 as '<f2' (NumPy's float16, bit for bit), int8
/// as '|i1', bf16 and fp8 per `bf16`; the data starts at a multiple of 64 bytes; 1-d shapes are tuples "(n,)".
std::string npy_bytes(const Tensor& t, NpyBf16 bf16 = NpyBf16::refuse, const std::string& name = "<memory>");

/// Writes npy_bytes(t, bf16) to `path`. Throws DumpError ("descr" for a refused bf16,
/// "write" on an I/O failure).
void write_npy(const std::string& path, const Tensor& t, NpyBf16 bf16 = NpyBf16::refuse);

/// Writes binary64 values (row-major, values.size() == numel(shape)) as a '<f8' .npy file:
/// the arrays of --dump-failures. Throws DumpError ("shape" on a size mismatch, "write").
void write_npy(const std::string& path, const std::vector<double>& values, const Shape& shape);

/// Reads every tensor of a .safetensors file (layout above); dtypes F64, F32, F16, BF16.
/// Checks, before allocating: N fits in the file and is at most
/// kMaxSafetensorsHeaderBytes; the JSON parses (nesting at most kMaxJsonDepth) and is an
/// object; every entry but "__metadata__" is an object with dtype, shape (non-negative
/// integers, nonzero ones multiplying to at most max_elements) and data_offsets [begin,
/// end] with begin <= end <= buffer size and end - begin == numel * itemsize. Throws
/// DumpError naming the tensor ("<name>.dtype", "<name>.data_offsets"...).
std::map<std::string, Tensor> read_safetensors(const std::string& path,
                                               std::int64_t max_elements = kMaxTensorFileElements);

/// read_safetensors on bytes in memory; `name` stands for the path in errors.
std::map<std::string, Tensor> parse_safetensors(std::string_view bytes, const std::string& name,
                                                std::int64_t max_elements = kMaxTensorFileElements);

/// Writes tensors (sorted by name, contiguous, the JSON header padded with spaces to a
/// multiple of 8 bytes as the reference implementation does) as .safetensors, with
/// optional string metadata. Throws DumpError ("write").
void write_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace normcheck
