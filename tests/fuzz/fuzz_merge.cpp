// libFuzzer harness: `normcheck merge` on arbitrary report bytes: report_from_json on each
// part, merge_reports when two parse, then every format the command prints. Contract:
// std::runtime_error naming the file and the field for any malformed report or set of
// shards; nlohmann's own exceptions, crashes and sanitizer reports are findings. A
// "\n\x1e\n" separator splits the input into two reports, so that joining is exercised too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "report/model.hpp"
#include "report/report.hpp"
#include "report/side_by_side.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string all(reinterpret_cast<const char*>(data), size);
  std::vector<std::pair<std::string, std::string>> texts;
  const auto sep = all.find("\n\x1e\n");
  if (sep == std::string::npos) {
    texts.emplace_back("fuzz.json", all);
  } else {
    texts.emplace_back("fuzz0.json", all.substr(0, sep));
    texts.emplace_back("fuzz1.json", all.substr(sep + 3));
  }
  try {
    std::vector<std::pair<std::string, normcheck::Report>> reports;
    for (const auto& [name, text] : texts) reports.emplace_back(name, normcheck::report_from_json(text, name));
    const normcheck::Report r = reports.size() == 1 ? reports.front().second : normcheck::merge_reports(reports);
    (void)normcheck::format_table(r, false);
    (void)normcheck::format_junit(r);
    (void)normcheck::format_side_by_side(r, false);
    (void)normcheck::report_from_json(normcheck::to_json(r), "round trip");
    (void)normcheck::judge(r).exit_code;
  } catch (const std::runtime_error&) {
  }
  return 0;
}
