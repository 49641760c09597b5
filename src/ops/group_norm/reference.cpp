// group_norm / instance_norm reference entries: the templates of reference.hpp and
// reference_backward.hpp at the working precision.
#include "ops/group_norm/group_norm.hpp"

#include "ops/common/precision.hpp"
#include "ops/group_norm/reference.hpp"
#include "ops/group_norm/reference_backward.hpp"

namespace normcheck::ops::group_norms {

namespace {
template <class T>
ExactOutputs eval(const Problem& p, bool fast) {
  return p.conv.direction == Direction::backward ? reference::group_norm_backward<T>(p) : reference::group_norm<T>(p, fast);
}
}  // namespace

ExactOutputs reference_exact(const ValidProblem& vp) {
  const Problem& p = *vp;
  return reference::detail::at_working_precision(p, [&](auto t) { return eval<typename decltype(t)::type>(p, reference::fast_path_enabled()); });
}
ExactOutputs reference_double(const ValidProblem& vp) { return eval<double>(*vp, false); }

}  // namespace normcheck::ops::group_norms
