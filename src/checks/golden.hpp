// Golden files: the reference's outputs for the bundled cases, stored under golden/ and
// compared bit for bit, so that a change of the reference cannot pass unnoticed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cases/case.hpp"

namespace normcheck {

/// Path of the golden file of a case file: <root>/cases/<rel>.toml -> <root>/golden/<rel>.json.
/// Throws CaseError when the case file is not under a folder named "cases".
std::string golden_path(const std::string& case_file);

/// One difference between the stored golden outputs and the reference now.
struct GoldenMismatch {
  std::string case_file, case_name, what;
};

/// Compares the reference's rounded outputs for every case of `case_file` with its golden
/// file (values as hex floats for outputs of <= 4096 elements, an FNV-1a digest of the
/// output bytes otherwise). Returns the mismatches; a missing golden file is one mismatch, and
/// so is each case or output the golden file holds that the case file no longer has (a deleted
/// case must show). `compared`, when given, is incremented by the number of cases compared.
std::vector<GoldenMismatch> check_golden(const std::string& case_file, std::int64_t* compared = nullptr);

/// Writes the golden file of `case_file` atomically (generator version, reference
/// precision and input seeds recorded per case). Returns the path written.
std::string write_golden(const std::string& case_file, const std::string& version);

}  // namespace normcheck
