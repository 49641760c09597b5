#include "run/data_dir.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#ifndef NORMCHECK_DATA_RELPATH
#define NORMCHECK_DATA_RELPATH "../share/normcheck"
#endif

namespace normcheck {

namespace {

namespace fs = std::filesystem;

fs::path exe_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

bool has_cases(const fs::path& d) {
  std::error_code ec;
  return !d.empty() && fs::is_directory(d / "cases", ec);
}

/// The source tree recorded beside a build-folder binary, or empty.
fs::path source_tree(const fs::path& dir) {
  std::ifstream f(dir / "normcheck-source-dir");
  std::string line;
  if (!f || !std::getline(f, line)) return {};
  return fs::path(line);
}

}  // namespace

std::string data_dir() {
  std::vector<std::string> tried;
  if (const char* env = std::getenv("NORMCHECK_DATA_DIR"); env && *env) {
    if (has_cases(env)) return fs::path(env).lexically_normal().string();
    throw std::runtime_error(fmt::format("NORMCHECK_DATA_DIR={} holds no cases/ folder", env));
  }
  const fs::path dir = exe_dir();
  if (!dir.empty()) {
    const fs::path installed = (dir / NORMCHECK_DATA_RELPATH).lexically_normal();
    if (has_cases(installed)) return installed.string();
    tried.push_back(installed.string());
    const fs::path src = source_tree(dir);
    if (has_cases(src)) return src.lexically_normal().string();
    tried.push_back((dir / "normcheck-source-dir").string());
  }
  throw std::runtime_error(fmt::format("cannot find the bundled cases (looked in {}; set NORMCHECK_DATA_DIR)",
                                       fmt::join(tried, ", ")));
}

std::string bundled_cases_dir() { return (fs::path(data_dir()) / "cases").string(); }

std::string adapters_dir() {
  std::error_code ec;
  try {
    const fs::path d = data_dir();
    for (const fs::path& a : {d / "adapters", d / "tools" / "adapters"})
      if (fs::is_directory(a, ec)) return a.string();
  } catch (const std::exception&) {
  }
  return {};
}

}  // namespace normcheck
