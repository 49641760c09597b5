// Where normcheck's bundled data (cases/, golden/, adapters/) is, found relative to the
// executable, never through the working directory (a cases/ folder there is the user's).
#pragma once

#include <string>

namespace normcheck {

/// The folder holding the bundled `cases/` and `golden/` (and `adapters/` once installed):
/// 1. $NORMCHECK_DATA_DIR when set (it must hold cases/);
/// 2. <exe dir>/../share/normcheck, the layout `cmake --install` writes (the relative path
///    from CMAKE_INSTALL_BINDIR to CMAKE_INSTALL_DATADIR/normcheck);
/// 3. the source tree named by <exe dir>/normcheck-source-dir, a file CMake writes beside the
///    binary in its build folder only (an installed copy has none, so never reads it).
/// Throws std::runtime_error naming every place looked at when none holds cases/.
std::string data_dir();

/// data_dir() + "/cases": the bundled suite `normcheck run` runs when given no paths.
std::string bundled_cases_dir();

/// The folder of the framework adapters (torch_backend.py, onnxruntime_backend.py, the
/// worker module): <data dir>/adapters when installed, <source>/tools/adapters in a build
/// folder. Empty when neither exists.
std::string adapters_dir();

}  // namespace normcheck
