// Rounding to f64/f32/f16/bf16: ties to even, largest finite, overflow, subnormals, NaN.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include <boost/multiprecision/mpfr.hpp>

#include "core/dtype.hpp"
#include "core/tensor.hpp"

using namespace normcheck;

TEST_CASE("f16: ties round to even, carries into the exponent", "[dtype][f16]") {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: to even (1).
  CHECK(round_to(DType::f16, 1.0 + 0x1p-11) == 1.0);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: to even (1 + 2^-9).
  CHECK(round_to(DType::f16, 1.0 + 3 * 0x1p-11) == 1.0 + 0x1p-9);
  // Just above the tie goes up.
  CHECK(round_to(DType::f16, 1.0 + 0x1p-11 + 0x1p-40) == 1.0 + 0x1p-10);
  // 2 - 2^-12 rounds up to 2 (carry into the exponent).
  CHECK(round_to(DType::f16, 2.0 - 0x1p-12) == 2.0);
}

TEST_CASE("f16: largest finite and overflow threshold", "[dtype][f16]") {
  CHECK(round_to(DType::f16, 65504.0) == 65504.0);
  CHECK(round_to(DType::f16, 65519.99) == 65504.0);   // below max + ulp/2
  CHECK(std::isinf(round_to(DType::f16, 65520.0)));   // the tie goes to even = inf
  CHECK(round_to(DType::f16, -1e9) == -HUGE_VAL);
  CHECK(format_info(DType::f16).max_finite == 65504.0);
}

TEST_CASE("f16: subnormals by gradual underflow", "[dtype][f16]") {
  CHECK(round_to(DType::f16, 0x1p-24) == 0x1p-24);           // smallest subnormal
  CHECK(round_to(DType::f16, 0x1p-25) == 0.0);               // tie with 0: to even (0)
  CHECK(round_to(DType::f16, 0x1.8p-25) == 0x1p-24);         // above the tie
  CHECK(round_to(DType::f16, 3 * 0x1p-25) == 2 * 0x1p-24);   // 1.5 quanta: tie to even (2)
  CHECK(round_to(DType::f16, 0x1p-14 - 0x1p-26) == 0x1p-14); // into the normal range
  CHECK(std::signbit(round_to(DType::f16, -0x1p-30)));       // -0 keeps its sign
}

TEST_CASE("bf16: ties to even, largest finite, subnormals", "[dtype][bf16]") {
  CHECK(round_to(DType::bf16, 1.0 + 0x1p-8) == 1.0);
  CHECK(round_to(DType::bf16, 1.0 + 3 * 0x1p-8) == 1.0 + 0x1p-6);
  CHECK(round_to(DType::bf16, 0x1.fep127) == 0x1.fep127);
  CHECK(std::isinf(round_to(DType::bf16, 0x1.ffp127)));
  CHECK(round_to(DType::bf16, 0x1p-133) == 0x1p-133);
  CHECK(round_to(DType::bf16, 0x1p-134) == 0.0);
}

TEST_CASE("f32: round_to agrees with the hardware conversion", "[dtype][f32]") {
  for (double v : {1.0 + 0x1p-24, 1.0 + 3 * 0x1p-24, 0x1.fffffefp127, 0x1p-150, 0x1.8p-150, 1e-40, 3.4028235677973366e38})
    CHECK(round_to(DType::f32, v) == static_cast<double>(static_cast<float>(v)));
}

TEST_CASE("f16 bits: every value round-trips and every midpoint rounds to even", "[dtype][f16]") {
  for (std::uint32_t h = 0; h < 0x7c00; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const double v = detail::half_bits_to_double(bits);
    REQUIRE(detail::double_to_half_bits(v) == bits);
    REQUIRE(detail::float_to_half_bits(static_cast<float>(v)) == bits);
    REQUIRE(detail::half_bits_to_float(bits) == static_cast<float>(v));
    const double next = detail::half_bits_to_double(static_cast<std::uint16_t>(h + 1));
    const double mid = (v + next) / 2;  // exact in binary64
    const std::uint16_t even = (h & 1) ? static_cast<std::uint16_t>(h + 1) : bits;
    REQUIRE(detail::double_to_half_bits(mid) == even);
    REQUIRE(detail::float_to_half_bits(static_cast<float>(mid)) == even);  // mid is exact in f32 too
  }
  CHECK(std::isnan(detail::half_bits_to_double(detail::double_to_half_bits(NAN))));
  CHECK(std::isnan(detail::half_bits_to_float(detail::float_to_half_bits(NAN))));
}

TEST_CASE("bf16 bits: float and double paths agree on midpoints", "[dtype][bf16]") {
  for (std::uint32_t h = 0; h < 0x7f80; h += 7) {
    const auto bits = static_cast<std::uint16_t>(h);
    const double v = detail::bf16_bits_to_double(bits);
    const double next = detail::bf16_bits_to_double(static_cast<std::uint16_t>(h + 1));
    const double mid = (v + next) / 2;
    const std::uint16_t even = (h & 1) ? static_cast<std::uint16_t>(h + 1) : bits;
    REQUIRE(detail::double_to_bf16_bits(mid) == even);
    REQUIRE(detail::float_to_bf16_bits(static_cast<float>(mid)) == even);
  }
}

TEST_CASE("round_to from MPFR rounds once, not twice through binary64", "[dtype][reference]") {
  using mp = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<78>, boost::multiprecision::et_off>;
  // 1 + 2^-11 + 2^-80: binary64 would round it to the f16 tie 1 + 2^-11 (then to even, 1);
  // correctly rounded to f16 it is 1 + 2^-10.
  const mp x = mp(1) + ldexp(mp(1), -11) + ldexp(mp(1), -80);
  CHECK(round_to(DType::f16, x) == 1.0 + 0x1p-10);
  CHECK(round_to(DType::f16, static_cast<double>(x)) == 1.0);
}

TEST_CASE("ulp at binade edges and in the subnormal range", "[dtype][ulp]") {
  CHECK(ulp(DType::f32, 1.0) == 0x1p-23);
  CHECK(ulp(DType::f32, 0.99999) == 0x1p-24);
  CHECK(ulp(DType::f32, 0.0) == 0x1p-149);
  CHECK(ulp(DType::f32, 1e-40) == 0x1p-149);
  CHECK(ulp(DType::f16, 65504.0) == 32.0);
  CHECK(ulp(DType::f16, 1e9) == 32.0);  // beyond max: the ULP of max_finite
  CHECK(ulp(DType::f16, 0x1p-20) == 0x1p-24);
  CHECK(ulp(DType::bf16, 1.0) == 0x1p-7);
  CHECK(ulp(DType::f64, 1.0) == 0x1p-52);
}

TEST_CASE("tensor stores the dtype's bytes and rounds once on set", "[dtype][tensor]") {
  Tensor t(DType::f16, {2, 2});
  t.set(0, 1.0 + 0x1p-11);
  t.set(1, 70000.0);
  t.set(2, NAN);
  t.set(3, 0x1p-24);
  CHECK(t.get(0) == 1.0);
  CHECK(std::isinf(t.get(1)));
  CHECK(std::isnan(t.get(2)));
  CHECK(t.get(3) == 0x1p-24);
  CHECK(t.nbytes() == 8);
  t.poison();
  for (int i = 0; i < 4; ++i) CHECK(std::isnan(t.get(i)));
}
