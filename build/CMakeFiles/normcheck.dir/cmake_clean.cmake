file(REMOVE_RECURSE
  "CMakeFiles/normcheck.dir/src/cli/main.cpp.o"
  "CMakeFiles/normcheck.dir/src/cli/main.cpp.o.d"
  "normcheck"
  "normcheck.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/normcheck.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
