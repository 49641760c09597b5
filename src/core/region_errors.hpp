// Exceptions inside OpenMP parallel regions. An exception may not leave a region's structured
// block (OpenMP 5.2, 1.2.2 "structured block"): with GCC's libgomp the process terminates
// (std::terminate, SIGABRT), so a std::bad_alloc from a thread's row buffer ended the whole
// run without its report. Every region in the kernels and references whose work may throw
// (an allocation, the certified path's Uncertain) runs it through RegionErrors::run, and the
// caller rethrows the first exception after the region (test: tests/alloc_failure/).
#pragma once

#include <atomic>
#include <exception>
#include <utility>

namespace normcheck {

/// The first exception thrown by work run on any thread of one OpenMP region, kept to be
/// rethrown after the region. Use: declare before the region; inside it, wrap every piece of
/// work that may throw (allocations included) in run(); after it, call rethrow(). Once a
/// piece has thrown, run() skips the remaining pieces on every thread (their results are
/// discarded with the exception), so a worksharing loop still reaches its barrier on every
/// thread. Thread-safe; not copyable.
class RegionErrors {
 public:
  RegionErrors() = default;
  RegionErrors(const RegionErrors&) = delete;
  RegionErrors& operator=(const RegionErrors&) = delete;

  /// Runs f() unless an earlier piece failed; keeps the first exception. Never throws.
  template <class F>
  void run(F&& f) noexcept {
    if (failed_.load(std::memory_order_relaxed)) return;
    try {
      std::forward<F>(f)();
    } catch (...) {
      if (!claimed_.exchange(true, std::memory_order_acq_rel)) first_ = std::current_exception();
      failed_.store(true, std::memory_order_release);
    }
  }

  /// Whether a piece has thrown.
  bool failed() const { return failed_.load(std::memory_order_acquire); }

  /// After the region (its end is a barrier): rethrows the first exception, if any.
  void rethrow() const {
    if (failed() && first_) std::rethrow_exception(first_);
  }

 private:
  std::atomic<bool> failed_{false}, claimed_{false};
  std::exception_ptr first_;
};

}  // namespace normcheck
