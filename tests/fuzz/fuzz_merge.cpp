// libFuzzer harness: `normcheck merge` on arbitrary report bytes (merge_report_texts, then
// the table and the JSON that the command prints). Contract: std::runtime_error naming the
// file and the field for any malformed report; nlohmann's own exceptions (type_error...),
// crashes and sanitizer reports are findings. A "\n\x1e\n" separator splits the input into
// two reports, so that joining is exercised too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "report/merge.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string all(reinterpret_cast<const char*>(data), size);
  std::vector<std::pair<std::string, std::string>> reports;
  const auto sep = all.find("\n\x1e\n");
  if (sep == std::string::npos) {
    reports.emplace_back("fuzz.json", all);
  } else {
    reports.emplace_back("fuzz0.json", all.substr(0, sep));
    reports.emplace_back("fuzz1.json", all.substr(sep + 3));
  }
  try {
    const nlohmann::json merged = normcheck::merge_report_texts(reports);
    (void)normcheck::format_report_table(merged);
    (void)merged.dump(2);
    (void)merged.at("summary").at("exit_code").get<int>();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
