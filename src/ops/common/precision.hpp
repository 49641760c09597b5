// The MPFR number types of the reference and the choice among them (working_bits).
#pragma once

#include <type_traits>

#include <boost/multiprecision/mpfr.hpp>

#include "ops/reference.hpp"

namespace normcheck::reference::detail {

namespace mp = boost::multiprecision;
// Digits10 for >= 256, 512, 1024, 2304 bits (bits ~ 3.3219 * digits10 + 1).
using mp256 = mp::number<mp::mpfr_float_backend<78>, mp::et_off>;
using mp512 = mp::number<mp::mpfr_float_backend<155>, mp::et_off>;
using mp1024 = mp::number<mp::mpfr_float_backend<309>, mp::et_off>;
using mp2304 = mp::number<mp::mpfr_float_backend<694>, mp::et_off>;

/// Calls f(std::type_identity<T>{}) with T the smallest MPFR type of at least
/// working_bits(p) bits (reference.hpp explains the choice) and returns its result; where a
/// rounding in it could not be decided (undecided_roundings grew), again with the next wider
/// type, up to 2304 bits (with the fast path on, the certified units come out the same and
/// only the units it recomputes run at the wider type).
template <class F>
ExactOutputs at_working_precision(const Problem& p, F&& f) {
  auto at = [&](int bits) -> ExactOutputs {
    if (bits <= 256) return f(std::type_identity<mp256>{});
    if (bits <= 512) return f(std::type_identity<mp512>{});
    if (bits <= 1024) return f(std::type_identity<mp1024>{});
    return f(std::type_identity<mp2304>{});
  };
  int bits = working_bits(p);
  for (;;) {
    const std::uint64_t before = undecided_roundings();
    ExactOutputs o = at(bits);
    const int next = bits <= 256 ? 512 : bits <= 512 ? 1024 : bits <= 1024 ? 2304 : 0;
    if (next == 0 || undecided_roundings() == before) return o;
    bits = next;
  }
}

}  // namespace normcheck::reference::detail
