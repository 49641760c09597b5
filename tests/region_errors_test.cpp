// core/region_errors.hpp: exceptions inside OpenMP regions kept and rethrown after them.
#include <catch2/catch.hpp>

#include <omp.h>

#include <atomic>
#include <stdexcept>

#include "core/region_errors.hpp"

using normcheck::RegionErrors;

TEST_CASE("region errors: the first exception of a parallel loop is rethrown after it, the rest of the work skipped",
          "[omp][region_errors]") {
  SECTION("no exception: every piece runs, nothing is rethrown") {
    RegionErrors errors;
    std::atomic<int> ran{0};
#pragma omp parallel for num_threads(2) schedule(static)
    for (int i = 0; i < 1000; ++i) errors.run([&] { ++ran; });
    CHECK(ran == 1000);
    CHECK_FALSE(errors.failed());
    CHECK_NOTHROW(errors.rethrow());
  }
  SECTION("a throwing piece: its exception after the region, its type kept; later pieces skipped") {
    RegionErrors errors;
    std::atomic<int> ran{0};
#pragma omp parallel for num_threads(2) schedule(static, 1)
    for (int i = 0; i < 1000; ++i) errors.run([&] {
      ++ran;
      if (i == 10) throw std::out_of_range("piece 10");
    });
    CHECK(errors.failed());
    CHECK(ran < 1000);  // each thread stops at the first piece it starts after the failure
    CHECK_THROWS_AS(errors.rethrow(), std::out_of_range);
    CHECK_THROWS_WITH(errors.rethrow(), "piece 10");
  }
  SECTION("every piece throws: one exception, of one of them") {
    RegionErrors errors;
#pragma omp parallel num_threads(2)
    errors.run([&] { throw std::runtime_error("thread " + std::to_string(omp_get_thread_num())); });
    CHECK_THROWS_WITH(errors.rethrow(), Catch::StartsWith("thread "));
  }
}
