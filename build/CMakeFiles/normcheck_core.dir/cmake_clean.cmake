file(REMOVE_RECURSE
  "CMakeFiles/normcheck_core.dir/src/backends/registry.cpp.o"
  "CMakeFiles/normcheck_core.dir/src/backends/registry.cpp.o.d"
  "CMakeFiles/normcheck_core.dir/src/cases/parser.cpp.o"
  "CMakeFiles/normcheck_core.dir/src/cases/parser.cpp.o.d"
  "CMakeFiles/normcheck_core.dir/src/checks/budget.cpp.o"
  "CMakeFiles/normcheck_core.dir/src/checks/budget.cpp.o.d"
  "CMakeFiles/normcheck_core.dir/src/checks/metrics.cpp.o"
  "CMakeFiles/normcheck_core.dir/src/checks/metrics.cpp.o.d"
  "CMakeFiles/normcheck_core.dir/src/checks/runner.cpp.o"
  "CMakeFiles/normcheck_core.dir/src/checks/runner.cpp.o.d"
  "CMakeFiles/normcheck_core.dir/src/core/dtype.cpp.o"
  "CMakeFiles/normcheck_core.dir/src/core/dtype.cpp.o.d"
  "CMakeFiles/normcheck_core.dir/src/core/tensor.cpp.o"
  "CMakeFiles/normcheck_core.dir/src/core/tensor.cpp.o.d"
  "CMakeFiles/normcheck_core.dir/src/kernels/cpu/layer_norm.cpp.o"
  "CMakeFiles/normcheck_core.dir/src/kernels/cpu/layer_norm.cpp.o.d"
  "CMakeFiles/normcheck_core.dir/src/kernels/cpu/rms_norm.cpp.o"
  "CMakeFiles/normcheck_core.dir/src/kernels/cpu/rms_norm.cpp.o.d"
  "CMakeFiles/normcheck_core.dir/src/kernels/mutant/mutants.cpp.o"
  "CMakeFiles/normcheck_core.dir/src/kernels/mutant/mutants.cpp.o.d"
  "CMakeFiles/normcheck_core.dir/src/reference/reference.cpp.o"
  "CMakeFiles/normcheck_core.dir/src/reference/reference.cpp.o.d"
  "CMakeFiles/normcheck_core.dir/src/report/report.cpp.o"
  "CMakeFiles/normcheck_core.dir/src/report/report.cpp.o.d"
  "CMakeFiles/normcheck_core.dir/src/spec/op.cpp.o"
  "CMakeFiles/normcheck_core.dir/src/spec/op.cpp.o.d"
  "libnormcheck_core.a"
  "libnormcheck_core.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/normcheck_core.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
