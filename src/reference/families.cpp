#include "reference/families.hpp"
#include "reference/precision.hpp"

#include <algorithm>

#include <boost/multiprecision/mpfr.hpp>
#include <fmt/format.h>

#include "reference/ada_norm.hpp"
#include "reference/batch_norm.hpp"
#include "reference/group_norm.hpp"
#include "reference/l2_normalize.hpp"
#include "reference/qk_norm.hpp"

namespace normcheck::reference::detail {

namespace {

template <class T>
ExactOutputs evaluate(const Problem& p) {
  switch (p.op) {
    case Op::group_norm: case Op::instance_norm: return group_norm<T>(p);
    case Op::batch_norm: return batch_norm<T>(p);
    case Op::l2_normalize: case Op::scale_norm: return l2_normalize<T>(p);
    case Op::ada_layer_norm: case Op::ada_rms_norm: return ada_norm<T>(p);
    case Op::qk_norm: return qk_norm<T>(p);
    case Op::layer_norm: case Op::rms_norm: break;
  }
  throw SpecError("op", fmt::format("{} is not a family op", to_string(p.op)));
}

}  // namespace

ExactOutputs evaluate_family_exact(const Problem& p) {
  validate(p);
  return at_working_precision(p, [&](auto t) { return evaluate<typename decltype(t)::type>(p); });
}

ExactOutputs evaluate_family_double(const Problem& p) {
  validate(p);
  return evaluate<double>(p);
}

}  // namespace normcheck::reference::detail
