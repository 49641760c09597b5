# Empty dependencies file for normcheck_tests.
# This may be replaced when dependencies are built.
