
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/src/backends/registry.cpp" "CMakeFiles/normcheck_core.dir/src/backends/registry.cpp.o" "gcc" "CMakeFiles/normcheck_core.dir/src/backends/registry.cpp.o.d"
  "/work/main/src/cases/parser.cpp" "CMakeFiles/normcheck_core.dir/src/cases/parser.cpp.o" "gcc" "CMakeFiles/normcheck_core.dir/src/cases/parser.cpp.o.d"
  "/work/main/src/checks/budget.cpp" "CMakeFiles/normcheck_core.dir/src/checks/budget.cpp.o" "gcc" "CMakeFiles/normcheck_core.dir/src/checks/budget.cpp.o.d"
  "/work/main/src/checks/metrics.cpp" "CMakeFiles/normcheck_core.dir/src/checks/metrics.cpp.o" "gcc" "CMakeFiles/normcheck_core.dir/src/checks/metrics.cpp.o.d"
  "/work/main/src/checks/runner.cpp" "CMakeFiles/normcheck_core.dir/src/checks/runner.cpp.o" "gcc" "CMakeFiles/normcheck_core.dir/src/checks/runner.cpp.o.d"
  "/work/main/src/core/dtype.cpp" "CMakeFiles/normcheck_core.dir/src/core/dtype.cpp.o" "gcc" "CMakeFiles/normcheck_core.dir/src/core/dtype.cpp.o.d"
  "/work/main/src/core/tensor.cpp" "CMakeFiles/normcheck_core.dir/src/core/tensor.cpp.o" "gcc" "CMakeFiles/normcheck_core.dir/src/core/tensor.cpp.o.d"
  "/work/main/src/kernels/cpu/layer_norm.cpp" "CMakeFiles/normcheck_core.dir/src/kernels/cpu/layer_norm.cpp.o" "gcc" "CMakeFiles/normcheck_core.dir/src/kernels/cpu/layer_norm.cpp.o.d"
  "/work/main/src/kernels/cpu/rms_norm.cpp" "CMakeFiles/normcheck_core.dir/src/kernels/cpu/rms_norm.cpp.o" "gcc" "CMakeFiles/normcheck_core.dir/src/kernels/cpu/rms_norm.cpp.o.d"
  "/work/main/src/kernels/mutant/mutants.cpp" "CMakeFiles/normcheck_core.dir/src/kernels/mutant/mutants.cpp.o" "gcc" "CMakeFiles/normcheck_core.dir/src/kernels/mutant/mutants.cpp.o.d"
  "/work/main/src/reference/reference.cpp" "CMakeFiles/normcheck_core.dir/src/reference/reference.cpp.o" "gcc" "CMakeFiles/normcheck_core.dir/src/reference/reference.cpp.o.d"
  "/work/main/src/report/report.cpp" "CMakeFiles/normcheck_core.dir/src/report/report.cpp.o" "gcc" "CMakeFiles/normcheck_core.dir/src/report/report.cpp.o.d"
  "/work/main/src/spec/op.cpp" "CMakeFiles/normcheck_core.dir/src/spec/op.cpp.o" "gcc" "CMakeFiles/normcheck_core.dir/src/spec/op.cpp.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
