
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/tests/dtype_test.cpp" "tests/CMakeFiles/normcheck_tests.dir/dtype_test.cpp.o" "gcc" "tests/CMakeFiles/normcheck_tests.dir/dtype_test.cpp.o.d"
  "/work/main/tests/layer_norm_test.cpp" "tests/CMakeFiles/normcheck_tests.dir/layer_norm_test.cpp.o" "gcc" "tests/CMakeFiles/normcheck_tests.dir/layer_norm_test.cpp.o.d"
  "/work/main/tests/main.cpp" "tests/CMakeFiles/normcheck_tests.dir/main.cpp.o" "gcc" "tests/CMakeFiles/normcheck_tests.dir/main.cpp.o.d"
  "/work/main/tests/metrics_test.cpp" "tests/CMakeFiles/normcheck_tests.dir/metrics_test.cpp.o" "gcc" "tests/CMakeFiles/normcheck_tests.dir/metrics_test.cpp.o.d"
  "/work/main/tests/mutant_test.cpp" "tests/CMakeFiles/normcheck_tests.dir/mutant_test.cpp.o" "gcc" "tests/CMakeFiles/normcheck_tests.dir/mutant_test.cpp.o.d"
  "/work/main/tests/parser_test.cpp" "tests/CMakeFiles/normcheck_tests.dir/parser_test.cpp.o" "gcc" "tests/CMakeFiles/normcheck_tests.dir/parser_test.cpp.o.d"
  "/work/main/tests/rms_norm_test.cpp" "tests/CMakeFiles/normcheck_tests.dir/rms_norm_test.cpp.o" "gcc" "tests/CMakeFiles/normcheck_tests.dir/rms_norm_test.cpp.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build/CMakeFiles/normcheck_core.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
