// libFuzzer harness: the .safetensors reader (parse_safetensors, the code behind
// read_safetensors) on arbitrary bytes, at most 2^20 elements per tensor. Contract:
// DumpError for any malformed input; what reads tiles the buffer exactly.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/tensor_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace normcheck;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto tensors = parse_safetensors(bytes, "fuzz.safetensors", std::int64_t{1} << 20);
    std::size_t total = 0;
    for (const auto& [name, t] : tensors) total += t.nbytes();
    if (total > size) std::abort();  // more bytes than the file holds: the tiling check failed
  } catch (const DumpError&) {
  }
  return 0;
}
