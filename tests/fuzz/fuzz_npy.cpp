// libFuzzer harness: the .npy reader (parse_npy, the code behind read_npy) on arbitrary
// bytes, at most 2^20 elements. Contract: DumpError for any malformed input; a file that
// reads must write back (npy_bytes) and read again to the same dtype, shape and bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/tensor_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace normcheck;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  NpyReadOptions opt;
  opt.max_elements = std::int64_t{1} << 20;
  Tensor t;
  try {
    t = parse_npy(bytes, "fuzz.npy", opt);
  } catch (const DumpError&) {
    return 0;
  }
  const Tensor r = parse_npy(npy_bytes(t), "roundtrip.npy", opt);
  if (r.dtype() != t.dtype() || r.shape() != t.shape() || r.nbytes() != t.nbytes() ||
      (t.nbytes() && std::memcmp(r.data(), t.data(), t.nbytes()) != 0))
    std::abort();
  // The worker exchange stores outputs as a declared dtype: exercise that conversion too.
  try {
    opt.as = DType::bf16;
    (void)parse_npy(bytes, "fuzz.npy", opt);
  } catch (const DumpError&) {
  }
  return 0;
}
