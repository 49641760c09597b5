#!/usr/bin/env python3
"""Tests of tools/adapters/normcheck_worker.py's rounding helpers (round_to, round_bf16,
round_f16) and the exactness checks built on them (exact, exact_cast, one_plus).

    python3 tests/adapters/test_normcheck_worker.py

Plain asserts, no test framework. Exit 0 when every check passes, 1 on a failure, 77 (ctest's
SKIP_RETURN_CODE) when NumPy is missing. The reference is an independent exact rounding in
Python Fractions; bf16 of float32 inputs is also compared with ml_dtypes where installed, and
f16 with NumPy's own float16 conversion (both correctly rounded for those inputs). ml_dtypes
is not a reference for float64 inputs: 0.6.0 rounds float64 to float32 first, then to
bfloat16 (twice), e.g. 0x1.feffffp127 -> inf where the nearest bfloat16 is 0x1.fep127.
"""

import math
import os
import sys
from fractions import Fraction

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not installed (pip install numpy); the worker helpers were not tested")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "adapters"))
from normcheck_worker import Skip, exact, exact_cast, one_plus, round_bf16, round_f16, round_to  # noqa: E402

FMT = {"bf16": (7, -126, 127), "f16": (10, -14, 15), "f32": (23, -126, 127)}
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL {what}")


def ref_round(v, name):
    """Exact round-to-nearest-even of the float v to format `name`, in Fractions: the reference."""
    p, emin, emax = FMT[name]
    if math.isnan(v) or math.isinf(v) or v == 0:
        return v
    f = Fraction(v)
    a = abs(f)
    e = a.numerator.bit_length() - a.denominator.bit_length()  # 2^e <= a < 2^(e+1), after fixing up
    if Fraction(2) ** e > a:
        e -= 1
    ulp = Fraction(2) ** (max(e, emin) - p)
    q = a / ulp
    n = q.numerator // q.denominator
    rem = q - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    r = n * ulp
    if r >= Fraction(2) ** (emax + 1):
        return math.copysign(math.inf, v)
    return math.copysign(float(r), v)


def same_bits(got, want):
    """Elementwise: equal values with equal signs (so -0 != +0), or both NaN."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    return ((got == want) & (np.signbit(got) == np.signbit(want))) | (np.isnan(got) & np.isnan(want))


def against_reference(values, name, fn, label):
    got = fn(np.array(values, dtype=np.float64))
    want = [ref_round(v, name) for v in values]
    ok = same_bits(got, want)
    for v, g, w, good in zip(values, got, want, ok):
        check(good, f"{label}: {v.hex() if isinstance(v, float) else v} -> {float(g).hex()}, exact rounding {float(w).hex()}")


H = float.fromhex
# bf16 (8 fraction bits incl. the leading one; ulp at 1 is 2^-7): ties go to even.
BF16_CASES = [
    (1 + 2 ** -8, 1.0),                       # tie between 1 and 1 + 2^-7: even is 1
    (1 + 3 * 2 ** -8, 1 + 2 ** -6),           # tie between 1 + 2^-7 and 1 + 2^-6: even is 1 + 2^-6
    (1 + 2 ** -8 + 2 ** -40, 1 + 2 ** -7),    # just above the tie (float64 only): up
    (-(1 + 2 ** -8), -1.0),
    (H("0x1.fep127"), H("0x1.fep127")),       # the largest finite bfloat16
    (H("0x1.ffp127"), math.inf),              # the tie above it: even is 2^128 -> overflow
    (H("0x1.feffffp127"), H("0x1.fep127")),   # below the tie (float64): no overflow
    (-H("0x1.ffp127"), -math.inf),
    (H("0x1.fffffep127"), math.inf),          # FLT_MAX
    (2.0 ** -126, 2.0 ** -126),               # smallest normal
    (2.0 ** -133, 2.0 ** -133),               # smallest subnormal
    (2.0 ** -134, 0.0),                       # tie between 0 and 2^-133: even is 0
    (3 * 2.0 ** -134, 2.0 ** -132),           # tie between 2^-133 and 2^-132: even is 2^-132
    (2.0 ** -134 + 2.0 ** -160, 2.0 ** -133), # just above the tie: up
    (-(2.0 ** -134), -0.0),                   # signed zero
    (2.0 ** -149, 0.0),                       # the smallest float32 subnormal
    (5e-324, 0.0),                            # the smallest float64 subnormal
    (H("0x1.fcp-127"), H("0x1.fcp-127")),     # the largest subnormal, 127 * 2^-133
    (H("0x1.fep-127"), 2.0 ** -126),          # the tie above it rounds up into the normals (128 is even)
    (-0.0, -0.0),
    (math.inf, math.inf),
    (-math.inf, -math.inf),
    (-952320.0251205473, -954368.0),          # f64 just beyond a tie (232.5 ulps): up, not to even 232
]
F16_CASES = [
    (1 + 2 ** -11, 1.0),
    (1 + 3 * 2 ** -11, 1 + 2 ** -9),
    (1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -10),  # float64 just above the tie: up (no rounding to float32 first)
    (65504.0, 65504.0),
    (65519.99999, 65504.0),
    (65520.0, math.inf),                      # the tie above 65504: even is 2^16 -> overflow
    (-65520.0, -math.inf),
    (2.0 ** -14, 2.0 ** -14),
    (2.0 ** -24, 2.0 ** -24),
    (2.0 ** -25, 0.0),
    (3 * 2.0 ** -25, 2.0 ** -23),
    (2.0 ** -25 + 2.0 ** -60, 2.0 ** -24),
    (-(2.0 ** -25), -0.0),
    (1e-40, 0.0),
]


def test_edges():
    for name, cases, fn in (("bf16", BF16_CASES, round_bf16), ("f16", F16_CASES, round_f16)):
        vals = [v for v, _ in cases]
        got = fn(np.array(vals, dtype=np.float64))
        ok = same_bits(got, [w for _, w in cases])
        for (v, w), g, good in zip(cases, got, ok):
            check(good, f"{name} edge {v.hex()} -> {float(g).hex()}, want {float(w).hex()}")
        against_reference(vals, name, fn, f"{name} edge vs Fraction reference")
        # float32 inputs where the edge value is one
        v32 = [v for v in vals if float(np.float32(v)) == v or math.isinf(v)]
        got32 = fn(np.array(v32, dtype=np.float32))
        check(np.all(same_bits(got32, [ref_round(v, name) for v in v32])), f"{name} edges from float32 inputs")
    nan = round_bf16(np.array([np.nan, -np.nan], dtype=np.float32))
    check(bool(np.all(np.isnan(nan))) and nan.dtype == np.float32, "bf16: NaN stays NaN, float32 storage")
    nan = round_f16(np.array([np.nan]))
    check(bool(np.isnan(nan[0])) and nan.dtype == np.float16, "f16: NaN stays NaN, float16 storage")
    check(round_to(np.array([1.5], np.float16), "f64").dtype == np.float64, "f64 storage is float64")
    check(round_to(np.float32(3.0), "bf16").shape == (), "0-d arrays keep their shape")
    check(round_bf16(np.zeros((2, 3, 4))).shape == (2, 3, 4), "shapes are kept")


def bits32_reference(x32):
    """bfloat16 of float32 values by the usual integer trick on their bits (an independent,
    bit-exact reimplementation for float32 inputs; NaN handled apart)."""
    u = x32.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    out = r.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x32), np.float32(np.nan), out)


def test_random_float32():
    rng = np.random.default_rng(20260807)
    with np.errstate(invalid="ignore", over="ignore"):
        x = rng.integers(0, 2 ** 32, 400000, dtype=np.uint64).astype(np.uint32).view(np.float32)
        got = round_bf16(x)
        check(bool(np.all(same_bits(got, bits32_reference(x)))), "bf16 of random float32 bit patterns vs the integer trick")
        try:
            import ml_dtypes
            want = x.astype(ml_dtypes.bfloat16).astype(np.float32)
            check(bool(np.all(same_bits(got, want))), "bf16 of random float32 bit patterns vs ml_dtypes")
        except ImportError:
            print("note: ml_dtypes not installed; bf16 checked against the integer trick and Fractions only")
        check(bool(np.all(same_bits(round_f16(x), x.astype(np.float16)))), "f16 of random float32 bit patterns vs NumPy")


def test_random_float64():
    rng = np.random.default_rng(7)
    with np.errstate(invalid="ignore", over="ignore"):
        x = rng.integers(0, 2 ** 64, 200000, dtype=np.uint64).view(np.float64)
        check(bool(np.all(same_bits(round_f16(x), x.astype(np.float16)))), "f16 of random float64 bit patterns vs NumPy")
    # Values within a few float64 ulps of a tie, where rounding to float32 first would be
    # wrong, across the normal and subnormal ranges: against the Fraction reference.
    for name, fn in (("bf16", round_bf16), ("f16", round_f16)):
        p, emin, emax = FMT[name]
        n = 3000
        m = rng.integers(2 ** p, 2 ** (p + 1), n).astype(np.float64)
        e = rng.integers(emin - p - 2, emax + 1, n)
        nudge = rng.choice([-1.0, 0.0, 1.0], n) * 2.0 ** -rng.integers(20, 45, n).astype(np.float64)
        vals = [float(np.ldexp(mm + 0.5 + d, int(ee) - p)) for mm, ee, d in zip(m, e, nudge)]
        vals += [float(v) for v in rng.standard_normal(n) * 10.0 ** rng.integers(-45, 40, n)]
        vals = [v for v in vals if math.isfinite(v)]
        got = fn(np.array(vals))
        want = [ref_round(v, name) for v in vals]
        bad = ~same_bits(got, want)
        check(not bad.any(), f"{name} of float64 values near ties: {int(bad.sum())} differ from the Fraction reference"
              + (f", first {vals[int(np.argmax(bad))].hex()}" if bad.any() else ""))


def test_exact():
    check(np.array_equal(exact(np.array([1.0, 1.0078125]), "bf16", "t"), np.array([1.0, 1.0078125], np.float32)),
          "exact passes bf16 values")
    for v, name in ((1 + 2 ** -8, "bf16"), (1 + 2 ** -30, "bf16"), (1 + 2 ** -11, "f16"), (1 + 2 ** -30, "f32"),
                    (1e300, "f32"), (70000.0, "f16")):
        try:
            exact(np.array([0.5, v]), name, "gamma")
            check(False, f"exact({v!r}, {name}) did not refuse a value that rounds")
        except Skip as s:
            check("gamma: value" in str(s) and f"at [1] is not a {name} value" in str(s), f"exact's reason names the value: {s}")
    check(np.isnan(exact(np.array([np.nan]), "f16", "t")[0]), "exact keeps NaN")
    check(exact(np.array([-np.inf]), "bf16", "t")[0] == -np.inf, "exact keeps inf")
    check(exact_cast(np.array([0.25]), np.float16, "t").dtype == np.float16, "exact_cast by NumPy type")
    check(np.array_equal(one_plus(np.array([0.5, -0.25]), "bf16", "t"), np.array([1.5, 0.75], np.float32)), "one_plus bf16")
    try:
        one_plus(np.array([2.0 ** -9]), "bf16", "t")
        check(False, "one_plus accepted 1 + 2^-9 as bf16")
    except Skip:
        pass


def test_write_8bit():
    """The 8-bit outputs of issue 16 travel as normcheck reads them: fp8 values as float32
    ('<f4', the reply naming the dtype), int8 as '|i1'; a request's int8 input loads as int8."""
    import json
    import tempfile
    from normcheck_worker import _write, load_inputs
    with tempfile.TemporaryDirectory() as d:
        p8, pi, pin = (os.path.join(d, n) for n in ("y8.npy", "yi.npy", "x.npy"))
        _write(p8, np.array([448.0, -0.5], np.float64), "fp8_e4m3fn")
        _write(pi, np.array([127.0, -128.0]), "int8")
        check(np.load(p8).dtype == np.float32 and np.load(p8)[0] == 448.0, "fp8 values written as float32")
        check(np.load(pi).dtype == np.int8 and list(np.load(pi)) == [127, -128], "int8 written as int8")
        np.save(pin, np.array([1, -2], np.int8))
        got = load_inputs(json.loads(json.dumps({"inputs": {"x": {"path": pin}}})))
        check(got["x"][1] == "int8", "an int8 .npy loads as int8")


def test_views():
    """Protocol 2 inputs: the view into a storage array, read-only; views reaching outside the
    storage, negative strides or offsets are refused."""
    import json
    import tempfile
    from normcheck_worker import load_inputs, view
    storage = np.full(5 + 24 + 3 + 16, np.nan, np.float32)  # [2, 3, 4] padded: strides [24, 7, 1], offset 5
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for i in range(2):
        for j in range(3):
            storage[5 + 24 * i + 7 * j: 5 + 24 * i + 7 * j + 4] = x[i, j]
    v = view(storage, [2, 3, 4], [24, 7, 1], 5)
    check(np.array_equal(v, x), "a padded view reads the tensor")
    check(not v.flags.writeable, "views are read-only")
    flat = np.arange(24, dtype=np.float64)
    t = view(flat, [4, 6], [1, 4], 0)  # column-major: a [6, 4] array seen transposed
    check(np.array_equal(t, flat.reshape(6, 4).T), "a column-major view")
    for bad in ([[2, 3, 4], [24, 7, 1], 40], [[2, 3, 4], [24, 7, -1], 5], [[2, 3, 4], [24, 7, 1], -1], [[3, 3, 4], [24, 7, 1], 5]):
        try:
            view(storage, *bad)
            check(False, f"view {bad} outside its storage refused")
        except ValueError:
            pass
    check(view(storage, [0, 4], [4, 1], 1000).shape == (0, 4), "an empty view reads nothing")
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "x.npy")
        np.save(p, storage)
        got = load_inputs(json.loads(json.dumps(
            {"inputs": {"x": {"path": p, "dtype": "f32", "shape": [2, 3, 4], "strides": [24, 7, 1], "offset": 5}}})))
        check(np.array_equal(got["x"][0], x) and got["x"][1] == "f32", "load_inputs builds the view of a protocol 2 input")


if __name__ == "__main__":
    for t in (test_edges, test_random_float32, test_random_float64, test_exact, test_write_8bit, test_views):
        t()
    if failures:
        print(f"{len(failures)} checks failed")
        sys.exit(1)
    print("test_normcheck_worker: all checks passed")
