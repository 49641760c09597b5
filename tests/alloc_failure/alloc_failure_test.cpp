// An allocation that fails inside an OpenMP parallel region (core/region_errors.hpp): every
// op's cpu kernel (forward, and backward where the op has one) and exact reference (the
// certified fast path and MPFR alone), on two threads, with every allocation inside a region
// failing. Before RegionErrors the std::bad_alloc left the region and
// libgomp terminated the process (this executable then dies instead of reporting); now the
// call throws std::bad_alloc after the region, and the same call succeeds once allocations
// work again. An injected failure that the call swallows (returning as if it had computed
// everything) fails the test too: a result computed with missing rows is a false pass waiting.
// Its own executable: it replaces the global operator new.
#include <catch2/catch.hpp>

#include <omp.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <new>
#include <optional>
#include <set>
#include <string>

#include "ops/reference.hpp"
#include "ops/registry.hpp"
#include "spec/op_def.hpp"
#include "spec/sample.hpp"

namespace {

std::atomic<bool> g_armed{false};
std::atomic<long> g_injected{0};

/// Whether this allocation is one to fail: armed, inside a parallel region (any thread, and a
/// region whose `if` clause made it a team of one too: an exception may not leave that either).
bool fail_here() {
  if (!g_armed.load(std::memory_order_relaxed)) return false;
  if (omp_get_level() == 0) return false;
  g_injected.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void* allocate(std::size_t n) {
  if (fail_here()) throw std::bad_alloc();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}

void* allocate_aligned(std::size_t n, std::size_t a) {
  if (fail_here()) throw std::bad_alloc();
  void* p = nullptr;
  if (posix_memalign(&p, a < sizeof(void*) ? sizeof(void*) : a, n ? n : 1) == 0) return p;
  throw std::bad_alloc();
}

}  // namespace

// Every form, the nothrow ones included (Catch2 allocates with those; left to the sanitizer's
// runtime they were freed here by free(): ASan's alloc-dealloc-mismatch). The nothrow forms
// never fail on purpose: a nullptr is a valid answer their callers handle without an
// exception (std::get_temporary_buffer), which this test would misread as a swallowed failure.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return std::malloc(n ? n : 1); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return std::malloc(n ? n : 1); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  void* p = nullptr;
  const auto al = static_cast<std::size_t>(a);
  return posix_memalign(&p, al < sizeof(void*) ? sizeof(void*) : al, n ? n : 1) == 0 ? p : nullptr;
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t& t) noexcept { return operator new(n, a, t); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, std::align_val_t a) { return allocate_aligned(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocate_aligned(n, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

using namespace normcheck;

namespace {

/// What one armed call did: "threw" (std::bad_alloc after an injected failure), "ran" (no
/// allocation inside a region: nothing injected, the call completed). Every thread's
/// allocations fail (not one thread's: with a dynamic schedule a busy machine may give a
/// given thread no row at all), so the outcome does not depend on scheduling.
std::string armed_call(const std::function<void()>& f) {
  std::string what;
  g_injected = 0;
  g_armed = true;
  try {
    f();
    what = "ran";
  } catch (const std::bad_alloc&) {
    what = "threw";
  }
  g_armed = false;
  const long injected = g_injected.load();
  if (what == "ran") REQUIRE(injected == 0);  // an injected failure swallowed
  if (what == "threw") REQUIRE(injected > 0);
  return what;
}

}  // namespace

TEST_CASE("an allocation failing inside a parallel region is a std::bad_alloc after it, for every op's kernels and reference",
          "[alloc][omp]") {
  omp_set_num_threads(2);
  omp_set_dynamic(0);
  std::set<std::string> threw;
  for (Op op : ops::all()) {
    for (const bool backward : {false, true}) {
      if (backward && !op.def().has_backward()) continue;
      for (const DType dt : {DType::f32, DType::bf16, DType::f64}) {
        Dims d;
        d.width = 256;
        d.rows = 256;  // 65536 values: above every region's threshold (32768, kParallelMin)
        d.x = d.param = dt;
        d.backward = backward;
        d.default_convention = true;
        std::optional<ValidProblem> drawn;
        try {
          drawn = draw_problem(op, d);
        } catch (const SpecError&) {
          continue;  // not drawable at this point (the op's sample rule)
        }
        const ValidProblem& vp = *drawn;
        const std::string what = std::string(op.name()) + (backward ? " backward " : " ") + std::string(dtype_name(dt));
        INFO(what);
        if (op.def().cpu) {
          Outputs out;
          const std::string r = armed_call([&] { op.def().cpu(vp, out); });
          if (r == "threw") threw.insert("cpu " + what);
          Outputs again;
          REQUIRE_NOTHROW(op.def().cpu(vp, again));
        }
        for (const bool fast : {true, false}) {
          if (dt != DType::f32 && !fast) continue;  // MPFR alone: once per op and direction
          reference::set_fast_path(fast);
          const std::string r = armed_call([&] { (void)op.def().reference(vp); });
          if (r == "threw") threw.insert(std::string(fast ? "reference " : "mpfr ") + what);
          REQUIRE_NOTHROW((void)op.def().reference(vp));
          reference::set_fast_path(true);
        }
      }
    }
  }
  // The injection reached the regions that allocate per thread (each kind of loop at least
  // once), so the passes above are not of calls that never allocated in a region.
  for (const char* must : {"cpu layer_norm f32", "cpu layer_norm f64", "cpu layer_norm backward f32", "cpu group_norm f32",
                           "cpu batch_norm f32", "cpu l2_normalize f32", "cpu ada_layer_norm f32", "cpu qk_norm f32",
                           "reference layer_norm f32", "mpfr layer_norm f32", "reference batch_norm f32", "reference qk_norm f32",
                           "mpfr layer_norm backward f32", "mpfr batch_norm backward f32"}) {
    INFO(must);
    CHECK(threw.count(must) == 1);
  }
}
