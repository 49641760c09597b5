#include "ops/reference.hpp"

#include <algorithm>
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
    for (std::int64_t i = 0; i < t.size(); ++i) {
      const double v = t.get(i);
      if (v == 0 || !std::isfinite(v)) continue;
      int e = 0;
      std::frexp(v, &e);
      emax = std::max(emax, e);
      emin = std::min(emin, e);
    }
  }
  int log2m = 0;
  while ((std::int64_t{1} << log2m) < n) ++log2m;
  const int range = emax == INT_MIN ? 0 : emax - emin;
  return std::max(range + prec + log2m + 1, 160 + log2m);
}

ExactOutputs evaluate_exact(const ValidProblem& p) { return p->op.def().reference(p); }
ExactOutputs evaluate_exact(const Problem& p) { return evaluate_exact(validate(p)); }
ExactOutputs evaluate_double(const ValidProblem& p) { return p->op.def().reference_double(p); }
ExactOutputs evaluate_double(const Problem& p) { return evaluate_double(validate(p)); }

}  // namespace normcheck::reference
