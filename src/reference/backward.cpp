// Dispatch of the backward references (direction = backward), at the working precision of
// reference.cpp (working_bits() over every input, dy included).
#include "reference/backward.hpp"

#include <boost/multiprecision/mpfr.hpp>
#include <fmt/format.h>

#include "reference/ada_norm_backward.hpp"
#include "reference/batch_norm_backward.hpp"
#include "reference/group_norm_backward.hpp"
#include "reference/l2_normalize_backward.hpp"
#include "reference/row_norm_backward.hpp"

namespace normcheck::reference::detail {

namespace {

namespace mp = boost::multiprecision;
using mp256 = mp::number<mp::mpfr_float_backend<78>, mp::et_off>;
using mp512 = mp::number<mp::mpfr_float_backend<155>, mp::et_off>;
using mp1024 = mp::number<mp::mpfr_float_backend<309>, mp::et_off>;
using mp2304 = mp::number<mp::mpfr_float_backend<694>, mp::et_off>;

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
  const int bits = working_bits(p);
  if (bits <= 256) return evaluate<mp256>(p);
  if (bits <= 512) return evaluate<mp512>(p);
  if (bits <= 1024) return evaluate<mp1024>(p);
  return evaluate<mp2304>(p);
}

ExactOutputs evaluate_backward_double(const Problem& p) {
  validate(p);
  return evaluate<double>(p);
}

}  // namespace normcheck::reference::detail
