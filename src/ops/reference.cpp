#include "ops/reference.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>

#include "spec/op_def.hpp"

namespace normcheck::reference {

int working_bits(const Problem& p) {
  // Over every input (x, parameters, modulations, running stats): the widest exponent range
  // and precision; log2 of the largest input size bounds log2 m for every op.
  int emax = INT_MIN, emin = INT_MAX, prec = 0;
  std::int64_t n = 1;
  for (const auto& [name, t] : p.inputs) {
    prec = std::max(prec, format_info(t.dtype()).precision);
    n = std::max(n, t.size());
    const std::int64_t size = t.size();
    for (std::int64_t i = 0; i < size; ++i) {
      const double v = t.get(i);
      if (v == 0 || !std::isfinite(v)) continue;
      const int e = normcheck::detail::frexp_exponent(std::fabs(v));  // frexp's exponent
      emax = std::max(emax, e);
      emin = std::min(emin, e);
    }
  }
  int log2m = 0;
  while ((std::int64_t{1} << log2m) < n) ++log2m;
  const int range = emax == INT_MIN ? 0 : emax - emin;
  return std::max(range + prec + log2m + 1, 160 + log2m);
}

namespace {
std::atomic<std::uint64_t> g_certified{0}, g_recomputed{0};
std::atomic<bool> g_fast{true};
}  // namespace

FastPathCounts fast_path_counts() { return {g_certified.load(), g_recomputed.load()}; }
void add_fast_path_counts(std::uint64_t certified, std::uint64_t recomputed) {
  g_certified += certified;
  g_recomputed += recomputed;
}
void set_fast_path(bool on) { g_fast = on; }
bool fast_path_enabled() { return g_fast; }

const ExactOutputs& evaluate_exact(const ValidProblem& p) {
  return p.memo_exact([&] { return p->op.def().reference(p); });
}
ExactOutputs evaluate_exact(const Problem& p) { return evaluate_exact(validate(p)); }
ExactOutputs evaluate_double(const ValidProblem& p) { return p->op.def().reference_double(p); }
ExactOutputs evaluate_double(const Problem& p) { return evaluate_double(validate(p)); }

}  // namespace normcheck::reference
