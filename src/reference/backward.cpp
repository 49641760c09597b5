// Dispatch of the backward references (direction = backward), at the working precision of
// reference.cpp (working_bits() over every input, dy included).
#include "reference/backward.hpp"

#include "reference/precision.hpp"
#include <fmt/format.h>

#include "reference/ada_norm_backward.hpp"
#include "reference/batch_norm_backward.hpp"
#include "reference/group_norm_backward.hpp"
#include "reference/l2_normalize_backward.hpp"
#include "reference/row_norm_backward.hpp"

namespace normcheck::reference::detail {

namespace {

template <class T>
ExactOutputs evaluate(const Problem& p) {
  switch (p.op) {
    case Op::layer_norm: case Op::rms_norm: return row_norm_backward<T>(p);
    case Op::group_norm: case Op::instance_norm: return group_norm_backward<T>(p);
    case Op::batch_norm: return batch_norm_backward<T>(p);
    case Op::l2_normalize: case Op::scale_norm: return l2_normalize_backward<T>(p);
    case Op::ada_layer_norm: case Op::ada_rms_norm: return ada_norm_backward<T>(p);
    case Op::qk_norm: break;
  }
  throw SpecError("convention.direction", fmt::format("{} has no backward", to_string(p.op)));
}

}  // namespace

ExactOutputs evaluate_backward_exact(const Problem& p) {
  validate(p);
  return at_working_precision(p, [&](auto t) { return evaluate<typename decltype(t)::type>(p); });
}

ExactOutputs evaluate_backward_double(const Problem& p) {
  validate(p);
  return evaluate<double>(p);
}

}  // namespace normcheck::reference::detail
