// libFuzzer harness: the case-file parser (parse_case_text) on arbitrary bytes. Contract:
// CaseError (file, line, field) for any malformed input; any other exception, a crash, a
// sanitizer report, or an allocation beyond -rss_limit_mb is a finding. Tensors are
// bounded to 2^16 elements so that a valid case cannot allocate gigabytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cases/case.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto cases = normcheck::parse_case_text(text, "fuzz.toml", std::int64_t{1} << 16);
    for (const auto& c : cases) (void)c.problem.inputs.size();
  } catch (const normcheck::CaseError&) {
  }
  return 0;
}
