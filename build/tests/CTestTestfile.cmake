# CMake generated Testfile for 
# Source directory: /work/main/tests
# Build directory: /work/main/build/tests
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
include("/work/main/build/tests/normcheck_tests_include-b12d07c.cmake")
add_test([=[cli]=] "/usr/bin/cmake" "-E" "env" "NORMCHECK=/work/main/build/normcheck" "bash" "/work/main/tests/cli/cli_test.sh")
set_tests_properties([=[cli]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;20;add_test;/work/main/tests/CMakeLists.txt;0;")
