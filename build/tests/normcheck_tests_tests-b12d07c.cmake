set( normcheck_tests_TESTS)
