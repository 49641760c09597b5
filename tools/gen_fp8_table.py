#!/usr/bin/env python3
"""Writes tests/data/fp8_ml_dtypes.txt: float32 inputs and their conversions by ml_dtypes
(float8_e4m3fn, float8_e5m2: round to nearest even, non-saturating), the independent
reference tests/dtype_test.cpp checks core/dtype.hpp's round_to against.

Inputs: every finite value of both formats, every midpoint between neighbours, each midpoint
one float32 ulp below and above, values around the overflow thresholds (464 and 61440), and
2000 seeded random float32 values across the exponents -20..20. Only float32 inputs: ml_dtypes
0.6.0 converts float64 through float32 (two roundings), so float32 is where it is a reference.

Each line: input, e4m3fn result, e5m2 result, as C99 hex floats (float.hex) or nan/inf/-inf.
Regenerate on request: python3 tools/gen_fp8_table.py (needs numpy and ml_dtypes).
"""
import pathlib

import ml_dtypes
import numpy as np


def values(t):
    bits = np.arange(256, dtype=np.uint8).view(t).astype(np.float32)
    v = np.unique(bits[np.isfinite(bits)])
    return v


def main():
    inputs = set()
    for t in (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2):
        v = values(t)
        inputs.update(v.tolist())
        mids = ((v[:-1].astype(np.float64) + v[1:]) / 2).astype(np.float32)  # exact in float32
        inputs.update(mids.tolist())
        inputs.update(np.nextafter(mids, np.float32(np.inf)).tolist())
        inputs.update(np.nextafter(mids, np.float32(-np.inf)).tolist())
    for x in (448, 464, 465, 480, 500, 57344, 61439, 61440, 61441, 65536, 1e6, 3e38):
        inputs.update([float(np.float32(x)), -float(np.float32(x))])
    rng = np.random.default_rng(16)
    r = (rng.uniform(1, 2, 2000) * 2.0 ** rng.integers(-20, 21, 2000) * rng.choice([-1, 1], 2000)).astype(np.float32)
    inputs.update(r.tolist())
    xs = np.array(sorted(inputs), dtype=np.float32)

    def fmt(a):
        return [("nan" if np.isnan(v) else "inf" if v == np.inf else "-inf" if v == -np.inf else float(v).hex()) for v in a]

    e4 = fmt(xs.astype(ml_dtypes.float8_e4m3fn).astype(np.float32))
    e5 = fmt(xs.astype(ml_dtypes.float8_e5m2).astype(np.float32))
    out = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "fp8_ml_dtypes.txt"
    lines = [f"# ml_dtypes {ml_dtypes.__version__}: float32 input, float8_e4m3fn, float8_e5m2 (tools/gen_fp8_table.py)"]
    lines += [f"{float(x).hex()} {a} {b}" for x, a, b in zip(xs, e4, e5)]
    out.write_text("\n".join(lines) + "\n")
    print(out, len(xs))


if __name__ == "__main__":
    main()
