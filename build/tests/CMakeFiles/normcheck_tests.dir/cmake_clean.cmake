file(REMOVE_RECURSE
  "CMakeFiles/normcheck_tests.dir/dtype_test.cpp.o"
  "CMakeFiles/normcheck_tests.dir/dtype_test.cpp.o.d"
  "CMakeFiles/normcheck_tests.dir/layer_norm_test.cpp.o"
  "CMakeFiles/normcheck_tests.dir/layer_norm_test.cpp.o.d"
  "CMakeFiles/normcheck_tests.dir/main.cpp.o"
  "CMakeFiles/normcheck_tests.dir/main.cpp.o.d"
  "CMakeFiles/normcheck_tests.dir/metrics_test.cpp.o"
  "CMakeFiles/normcheck_tests.dir/metrics_test.cpp.o.d"
  "CMakeFiles/normcheck_tests.dir/mutant_test.cpp.o"
  "CMakeFiles/normcheck_tests.dir/mutant_test.cpp.o.d"
  "CMakeFiles/normcheck_tests.dir/parser_test.cpp.o"
  "CMakeFiles/normcheck_tests.dir/parser_test.cpp.o.d"
  "CMakeFiles/normcheck_tests.dir/rms_norm_test.cpp.o"
  "CMakeFiles/normcheck_tests.dir/rms_norm_test.cpp.o.d"
  "normcheck_tests"
  "normcheck_tests.pdb"
  "normcheck_tests_tests-b12d07c.cmake"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/normcheck_tests.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
