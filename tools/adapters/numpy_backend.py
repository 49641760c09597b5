#!/usr/bin/env python3
"""NumPy as a normcheck backend: every op of the op table, forward and backward, in np.longdouble.

    normcheck run cases --backend "cmd:python3 tools/adapters/numpy_backend.py"
    normcheck run cases/*/memory_layout.toml --backend "cmd:python3 tools/adapters/numpy_backend.py --fault offset"

The worked example of worker protocol 2 (tools/adapters/normcheck_worker.py, README "External
process backends") for every op: each input arrives as a read-only strided view of its storage
(padded rows, column-major, channels-last), backward problems come with dy, and every output the
request names goes back in its own dtype (bf16 and fp8 as float32 values, int8 as int8). It is
also a plain, readable implementation of each op's reference (src/ops/<op>/reference*.hpp,
src/ops/common/row_norm.hpp, row_norm_backward.hpp), one function per op.

Numerics. Every input is converted exactly to np.longdouble (x87 80-bit here: a 64-bit
significand and exponents to 2^16383, so binary64's extremes square without overflow and its
subnormals without underflow) and every output is computed there with two-pass statistics, then
rounded ONCE from long double to its dtype by round_out() (to nearest even, or per the quantized
ops' `rounding`, with gradual underflow, overflow to inf, fp8_e4m3fn's NaN, int8's saturation),
never through float64 first. Details that make it agree with the exact reference:
- a group holding NaN or inf gives NaN for all of its outputs (and saved statistics);
- the mean takes one correction step (mu += mean(x - mu)), so a constant row has x - mu = 0
  exactly and eps = 0 gives 0/0 = NaN there, as the reference does;
- the affine y = g n + b is formed as an exact unevaluated pair (two_prod, two_sum) whose
  remainder decides ties in round_out: with normalized_dtype, where n is a short exact value,
  y is correctly rounded (Llama's order, cases/rms_norm/rounding_order.toml); h = x + residual
  (+ bias) likewise;
- the dynamic scale of the quantizing norms is stored as binary32 and y / s divides by that
  stored value, as the reference does (the multiplier form multiplies by fl32(1/s)).
Long double accumulation is wider than every acc_dtype (f64, f32, f16, bf16): it meets each
one's budget, so acc_dtype is accepted with any of its values.

Conventions: check_request() accepts exactly the keys each op defines (and the core ones) with
the values implemented here; anything else (an unknown key, value, input, dtype or op) is
SKIPPED with the reason, never ignored. normalized_shape is read by the row norms (layer_norm,
rms_norm, the fused and the quantizing ones), dyt and l2_normalize/scale_norm (without axes);
the channel ops' groups come from x's shape, the ada norms' from its last dim, and dyt has no
statistic (eps, eps_placement unused), as in the reference.

Fault modes (--fault, each a real bug class normcheck must catch; the last section below):
  offset        each input's view built at storage offset 0 (the offset ignored),
  strides       each view built with dense row-major strides from its offset (a padded row's
                stride ignored: the kernel reads the padding and the wrong rows),
  no_mean_term  layer_norm's backward without the -mean(gamma dy) term of dx.
Each fails cases/*/memory_layout.toml or cases/*/backward.toml; the correct worker passes them
(tests/adapters/test_numpy_backend.sh checks both, and with FULL=1 the whole suite and fuzz).
"""

import argparse
import math
import os
import sys
from functools import partial
from typing import NamedTuple

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import normcheck_worker  # noqa: E402
from normcheck_worker import Skip, serve  # noqa: E402

L = np.longdouble
INF = L(np.inf)
NAN = L(np.nan)
P = np.finfo(L).nmant + 1  # long double's precision: 64 (x87), 113 (IEEE quad)
if P < 64 or np.finfo(L).maxexp < 16384:
    sys.stderr.write(f"numpy_backend: np.longdouble has a {P}-bit significand and exponents to 2^{np.finfo(L).maxexp} "
                     "here; this worker needs x87 80-bit (or wider) long double\n")
    sys.exit(3)

# ---- formats and the one rounding ----------------------------------------------------------

# dtype: (precision p with the hidden bit, frexp exponent of the smallest normal, largest finite
# value): a value is n 2^q with integer |n| < 2^p and q >= min_exp - p (src/core/dtype.hpp).
# int8: precision 8 at min_exp 8 makes the quantum 2^0 = 1 below 2^8.
FORMATS = {
    "f64": (53, -1021, float(np.finfo(np.float64).max)),
    "f32": (24, -125, float(np.finfo(np.float32).max)),
    "f16": (11, -13, 65504.0),
    "bf16": (8, -125, (2.0 - 2.0**-7) * 2.0**127),
    "fp8_e4m3fn": (4, -5, 448.0),
    "fp8_e5m2": (3, -13, 57344.0),
    "int8": (8, 8, 127.0),
}
STORAGE = {"f64": np.float64, "f32": np.float32, "f16": np.float16, "bf16": np.float32,
           "fp8_e4m3fn": np.float32, "fp8_e5m2": np.float32, "int8": np.int8}
FLOATS = ("f64", "f32", "f16", "bf16")
QUANTIZED = ("fp8_e4m3fn", "fp8_e5m2", "int8")
QMAX = {"fp8_e4m3fn": L(448), "fp8_e5m2": L(57344), "int8": L(127)}


def round_out(a, dt, rounding="nearest_even", saturate=False, lo=None):
    """The long double values `a` rounded once to the format `dt`, as its storage type.

    `lo` (optional) is the remainder of the exact value beyond `a` (|lo| <= half an ulp of a in
    long double, an unevaluated pair a + lo): where `a` is exactly halfway between two values of
    the format, the exact value lies on lo's side of it, and it decides instead of the tie rule.
    `rounding`: nearest_even (IEEE's) or nearest_away (ties away from zero, C's round()).
    `saturate`: clamp to [-max, max] first (inf included); int8 always clamps to [-128, 127] and
    stores NaN as 0. Otherwise a result beyond max is +-inf (NaN for fp8_e4m3fn, which has no
    infinity) and NaN stays NaN. Subnormals by gradual underflow; zeros keep their sign."""
    with np.errstate(invalid="ignore"):  # inf - inf in frac: inf and NaN pass through
        return _round_out(a, dt, rounding, saturate, lo)


def _round_out(a, dt, rounding, saturate, lo):
    p, min_exp, top = FORMATS[dt]
    a = np.asarray(a, dtype=L)
    lo = np.zeros_like(a) if lo is None else np.broadcast_to(np.asarray(lo, dtype=L), a.shape)
    if saturate or dt == "int8":
        bottom = -128.0 if dt == "int8" else -top
        outside = (a >= top) | (a <= bottom)
        a = np.where(a >= top, L(top), np.where(a <= bottom, L(bottom), a))
        lo = np.where(outside, L(0), lo)
    _, e = np.frexp(a)  # a = f 2^e, 0.5 <= |f| < 1
    q = np.maximum(e, min_exp) - p  # the quantum's exponent at |a|
    s = np.ldexp(a, -q)  # exact: a power-of-two scaling
    n = np.trunc(s)
    frac = np.abs(s - n)  # exact: the part of |s| below the integer n
    beyond = np.sign(lo) * np.sign(s)  # +1: the exact value is farther from zero than a
    if rounding == "nearest_even":
        tie_up = np.fmod(n, 2) != 0
    elif rounding == "nearest_away":
        tie_up = np.ones(n.shape, dtype=bool)
    else:
        raise Skip(f"numpy: rounding {rounding!r} not implemented")
    up = (frac > 0.5) | ((frac == 0.5) & ((beyond > 0) | ((beyond == 0) & tie_up)))
    n = np.where(up, n + np.sign(s), n)  # np.where keeps the sign of a zero n
    r = np.ldexp(n, q)
    if dt == "int8":
        return np.where(np.isnan(r), L(0), r).astype(np.int8)
    big = np.abs(r) > top
    r = np.where(big, NAN if dt == "fp8_e4m3fn" else np.copysign(INF, r), r)
    return r.astype(STORAGE[dt])  # exact: r is a value of the format


def rounded(a, dt, lo=None):
    """round_out back in long double: the value a kernel stores and reads again."""
    return round_out(a, dt, lo=lo).astype(L)


def two_sum(a, b):
    """s + e == a + b exactly, s = fl(a + b) (Knuth's TwoSum, in long double); e = 0 where s
    is inf or NaN."""
    s = a + b
    bb = s - a
    return s, np.where(np.isfinite(s), (a - (s - bb)) + (b - bb), L(0))


def _split(a):
    c = L(2.0 ** ((P + 1) // 2) + 1) * a  # Dekker's splitter: halves of (P + 1) // 2 bits
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a, b):
    """p + e == a b exactly, p = fl(a b) (Dekker's TwoProduct, in long double; no underflow of
    e at our magnitudes); e = 0 where p is inf or NaN."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, np.where(np.isfinite(p), ((ah * bh - p) + ah * bl + al * bh) + al * bl, L(0))


def fma_pair(g, n, b):
    """g n + b as an unevaluated pair (hi, lo): exact up to the rounding of lo's two terms."""
    p, e = two_prod(g, n)
    s, e2 = two_sum(p, b)
    return two_sum(s, e + e2)


# ---- the request: what this worker implements ----------------------------------------------

def _nonneg(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0


def _ints(v):
    return isinstance(v, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in v)


def _one_of(*values):
    return lambda v: isinstance(v, str) and v in values


def _boolean(v):
    return isinstance(v, bool)


PLACEMENTS = ("inside_sqrt", "outside_sqrt", "clamp_var", "clamp_norm")
AFFINES = ("none", "gamma", "gamma_beta", "one_plus_w")
CORE = {"eps": _nonneg, "eps_placement": _one_of(*PLACEMENTS), "variance": _one_of("biased", "unbiased"),
        "affine": _one_of(*AFFINES), "normalized_shape": _ints, "acc_dtype": _one_of(*FLOATS),
        "direction": _one_of("forward", "backward")}
ROW_KEYS = {"normalized_dtype": lambda v: v is None or v in FLOATS}
RESIDUAL_KEYS = {"norm_input": _one_of("rounded", "unrounded")}
QUANT_KEYS = {**RESIDUAL_KEYS, "quant_scale": _one_of("dynamic_per_token", "static_per_tensor"),
              "scale_form": _one_of("divisor", "multiplier"), "saturate": _boolean,
              "rounding": _one_of("nearest_even", "nearest_away"), "scale_floor": _nonneg}
BATCH_KEYS = {"momentum": lambda v: v is None or (_nonneg(v) and v <= 1),
              "num_batches_tracked": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
              "training": _boolean, "track_running_stats": _boolean, "sequence": _boolean,
              "running_variance": _one_of("biased", "unbiased")}
NO_AFFINE = {"affine": _one_of("none")}
BIASED = {"variance": _one_of("biased")}


class OpSpec(NamedTuple):
    keys: dict  # convention keys beyond CORE, and CORE keys whose values this op restricts
    inputs: tuple  # input names (dy besides, in backward)
    has_backward: bool
    quantized: bool  # y is fp8 / int8 (out_dtype)


ROW_INPUTS = ("x", "gamma", "beta")
FUSED_INPUTS = ("x", "residual", "bias", "gamma", "beta")
OP_SPECS = {
    "layer_norm": OpSpec(ROW_KEYS, ROW_INPUTS, True, False),
    "rms_norm": OpSpec(ROW_KEYS, ROW_INPUTS, True, False),
    "group_norm": OpSpec({"num_groups": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1},
                         ROW_INPUTS, True, False),
    "instance_norm": OpSpec({}, ROW_INPUTS, True, False),
    "batch_norm": OpSpec(BATCH_KEYS, ROW_INPUTS + ("running_mean", "running_var"), True, False),
    "l2_normalize": OpSpec({**NO_AFFINE, **BIASED, "axes": _ints}, ("x",), True, False),
    "scale_norm": OpSpec({**NO_AFFINE, **BIASED, "axes": _ints}, ("x", "g"), True, False),
    "ada_layer_norm": OpSpec({**NO_AFFINE, "gated": _boolean}, ("x", "scale", "shift", "gate"), True, False),
    "ada_rms_norm": OpSpec({**NO_AFFINE, "gated": _boolean}, ("x", "scale", "shift", "gate"), True, False),
    "qk_norm": OpSpec({"affine": _one_of("none", "gamma", "one_plus_w"), "qk_form": _one_of("rms", "l2")},
                      ("q", "k", "q_gamma", "k_gamma", "g"), False, False),
    "dyt": OpSpec({**BIASED, "affine": _one_of("none", "gamma", "gamma_beta")}, ("x", "alpha", "gamma", "beta"), True, False),
    "fused_add_rms_norm": OpSpec(RESIDUAL_KEYS, FUSED_INPUTS, False, False),
    "fused_add_layer_norm": OpSpec(RESIDUAL_KEYS, FUSED_INPUTS, False, False),
    "rms_norm_quant": OpSpec(QUANT_KEYS, FUSED_INPUTS + ("scale",), False, True),
    "layer_norm_quant": OpSpec(QUANT_KEYS, FUSED_INPUTS + ("scale",), False, True),
}


def check_request(req, inputs):
    """Skip unless every part of the request is one this worker implements."""
    op = req["op"]
    if op not in OP_SPECS:
        raise Skip(f"numpy: op {op!r} not implemented")
    spec = OP_SPECS[op]
    keys = {**CORE, **spec.keys}
    conv = req["convention"]
    for key, value in conv.items():
        if key not in keys:
            raise Skip(f"numpy: convention key {key!r} not implemented for {op}")
        if not keys[key](value):
            raise Skip(f"numpy: {op} with {key} = {value!r} not implemented")
    missing = sorted(set(keys) - set(conv))
    if missing:
        raise ValueError(f"the request's convention lacks {missing} (protocol 2 sends every key of {op})")
    backward = conv["direction"] == "backward"
    if backward and not spec.has_backward:
        raise Skip(f"numpy: {op} has no backward")
    for name, (_, dt) in inputs.items():
        if name not in spec.inputs and not (backward and name == "dy"):
            raise Skip(f"numpy: input {name!r} not implemented for {op}")
        if dt not in FLOATS:
            raise Skip(f"numpy: input {name} in {dt} not implemented")
    for name, out in req["outputs"].items():
        if out["dtype"] not in (QUANTIZED if spec.quantized and name == "y" else FLOATS):
            raise Skip(f"numpy: output {name} in {out['dtype']} not implemented for {op}")


# ---- one normalization group (src/ops/common/row_norm.hpp, row_norm_backward.hpp) ----------
# Groups lie along the last axis of a long double array; every reduction keeps its axis.

def moments(z, center):
    """mu (0 unless `center`), d = z - mu and the sum of squares ss = sum d^2 of each group.
    A group holding NaN or inf gives NaN for all three. The mean takes one correction step, so
    a constant group has mu = z exactly and d = 0."""
    finite = np.all(np.isfinite(z), axis=-1, keepdims=True)
    z = np.where(finite, z, L(0))
    mu = np.zeros(z.shape[:-1] + (1,), dtype=L)
    if center:
        mu = np.mean(z, axis=-1, keepdims=True)
        mu = mu + np.mean(z - mu, axis=-1, keepdims=True)
    d = z - mu
    ss = np.sum(d * d, axis=-1, keepdims=True)
    poison = np.where(finite, L(0), NAN)
    return mu + poison, d + poison, ss + poison


def denominator(v, conv):
    """D(v) per eps_placement (eps is a binary64 value, exact in long double)."""
    eps, place = L(conv["eps"]), conv["eps_placement"]
    if place == "inside_sqrt":
        return np.sqrt(v + eps)
    if place == "outside_sqrt":
        return np.sqrt(v) + eps
    if place == "clamp_var":
        return np.sqrt(np.where(v < eps, eps, v))
    s = np.sqrt(v)  # clamp_norm
    return np.where(s < eps, eps, s)


def sensitivity(v, D, conv):
    """k = 2 D dD/dv: 1 inside the sqrt, D / sqrt(v) outside it (0 at v = 0), 0 where a clamp holds."""
    eps, place = L(conv["eps"]), conv["eps_placement"]
    one = np.ones_like(v)
    if place == "inside_sqrt":
        return one
    if place == "outside_sqrt":
        return np.where(v > 0, D / np.sqrt(v), L(0))
    if place == "clamp_var":
        return np.where(v < eps, L(0), one)
    return np.where(np.sqrt(v) < eps, L(0), one)


def dof_of(conv, m):
    """The variance's denominator m' (m - 1 unbiased)."""
    return L(m - 1 if conv["variance"] == "unbiased" else m)


def normalize(z, center, conv, dof):
    """n = (z - mu) / D(ss / dof) per group; returns n, mu, D and v = ss / dof."""
    mu, d, ss = moments(z, center)
    v = ss / dof
    D = denominator(v, conv)
    return d / D, mu, D, v


def group_backward(z, dy, center, conv, dof, gain=None, mean_term=True):
    """dx of each group given dy (row_norm_backward.hpp), and n:
        dx = (a - [center] mean(a) - (k / dof) n sum(a n)) / D,   a = gain dy.
    A group with NaN or inf in z or dy gives NaN for dx and n. mean_term=False drops mean(a)
    (the fault no_mean_term)."""
    n, _, D, v = normalize(z, center, conv, dof)
    n = n + np.where(np.all(np.isfinite(dy), axis=-1, keepdims=True), L(0), NAN)
    k = sensitivity(v, D, conv)
    a = dy if gain is None else gain * dy
    abar = np.mean(a, axis=-1, keepdims=True) if center and mean_term else L(0)
    S = np.sum(a * n, axis=-1, keepdims=True)
    return (a - abar - (k / dof) * n * S) / D, n


def affine(n, conv, gamma, beta):
    """y = n | gamma n | gamma n + beta | (1 + gamma) n per `affine`, as a pair (fma_pair)."""
    kind = conv["affine"]
    if kind == "none":
        return n, None
    g = L(1) + gamma if kind == "one_plus_w" else gamma
    return fma_pair(g, n, beta if kind == "gamma_beta" else L(0))


def gain_of(conv, gamma):
    """The effective gain of the affine (gamma, 1 + w), None without one."""
    if conv["affine"] == "none":
        return None
    return L(1) + gamma if conv["affine"] == "one_plus_w" else gamma


def backward(conv):
    return conv["direction"] == "backward"


# ---- the ops: each maps (request, long double inputs, input dtypes) to exact outputs --------
# An output is a long double array, or a pair (hi, lo) whose remainder round_out() reads.

def params(X, name, shape):
    """Input `name` reshaped for broadcasting, or None where the request has none."""
    return X[name].reshape(shape) if name in X else None


def row_norm(req, X, dts, center):
    """layer_norm (center) and rms_norm over the trailing normalized_shape (row_norm.hpp)."""
    conv = req["convention"]
    m = math.prod(conv["normalized_shape"])
    z = X["x"].reshape(-1, m)
    dof = dof_of(conv, m)
    gamma, beta = params(X, "gamma", m), params(X, "beta", m)
    if backward(conv):  # normalized_dtype is not read: the cast's derivative is 1
        dy = X["dy"].reshape(-1, m)
        mean_term = not (center and FAULT == "no_mean_term")
        dx, n = group_backward(z, dy, center, conv, dof, gain_of(conv, gamma), mean_term)
        return {"dx": dx, "dgamma": np.sum(dy * n, axis=0), "dbeta": np.sum(dy, axis=0)}
    n, mu, D, _ = normalize(z, center, conv, dof)
    if conv["normalized_dtype"] is not None:
        n = rounded(n, conv["normalized_dtype"])  # the framework's intermediate rounding
    out = {"y": affine(n, conv, gamma, beta), "rstd": L(1) / D}
    if center:
        out["mean"] = mu
    return out


def group_norm(req, X, dts):
    """group_norm: per (n, g) over the C/G contiguous channels and the spatial positions;
    instance_norm is G = C (group_norm/reference*.hpp)."""
    conv = req["convention"]
    N, C = X["x"].shape[:2]
    G = C if req["op"] == "instance_norm" else conv["num_groups"]
    if C % G:
        raise ValueError(f"num_groups = {G} does not divide C = {C}")
    x = X["x"].reshape(N, C, -1)
    m = C // G * x.shape[2]
    dof = dof_of(conv, m)
    gamma, beta = params(X, "gamma", (1, C, 1)), params(X, "beta", (1, C, 1))
    grouped = (lambda t: t.reshape(N, G, m))  # [N, C, spatial] <-> [N, G, m]: each group contiguous
    ungrouped = (lambda t: t.reshape(N, C, -1))
    if backward(conv):
        dy = X["dy"].reshape(N, C, -1)
        gain = gain_of(conv, gamma)
        gain = None if gain is None else grouped(np.broadcast_to(gain, dy.shape))
        dx, n = group_backward(grouped(x), grouped(dy), True, conv, dof, gain)
        n = ungrouped(n)
        return {"dx": dx, "dgamma": np.sum(dy * n, axis=(0, 2)), "dbeta": np.sum(dy, axis=(0, 2))}
    n, mu, D, _ = normalize(grouped(x), True, conv, dof)
    return {"y": affine(ungrouped(n), conv, gamma, beta), "mean": mu, "rstd": L(1) / D}


def batch_norm(req, X, dts):
    """batch_norm per channel over N and the spatial positions; training updates the running
    stats (momentum, or the cumulative average 1 / num_batches_tracked); eval uses them; with
    `sequence` x is [S, N, C, ...], S chained calls (batch_norm/reference*.hpp)."""
    conv = req["convention"]
    xs = X["x"] if conv["sequence"] else X["x"][np.newaxis]
    S, N, C = xs.shape[:3]
    xs = xs.reshape(S, N, C, -1)
    m = N * xs.shape[3]
    dof = dof_of(conv, m)
    track = conv["track_running_stats"]
    batch_stats = conv["training"] or not track
    gamma, beta = params(X, "gamma", (1, C, 1)), params(X, "beta", (1, C, 1))
    rm, rv = params(X, "running_mean", (1, C, 1)), params(X, "running_var", (1, C, 1))
    channels = (lambda t: t.transpose(1, 0, 2).reshape(C, m))  # [N, C, spatial] -> [C, m]: one group per channel
    samples = (lambda t: t.reshape(C, N, -1).transpose(1, 0, 2))  # and back
    if backward(conv):
        if S != 1:
            raise Skip("numpy: batch_norm's backward covers one call (sequence = false)")
        dy = X["dy"].reshape(N, C, -1)
        gain = gain_of(conv, gamma)
        if batch_stats:  # through the batch statistics
            dx, n = group_backward(channels(xs[0]), channels(dy), True, conv, dof, None if gain is None else gain.reshape(C, 1))
            dx, n = samples(dx), samples(n)
        else:  # the running stats are constants: n is elementwise
            D = denominator(rv, conv)
            n = (xs[0] - rm) / D
            dx = (dy if gain is None else gain * dy) / D
        return {"dx": dx, "dgamma": np.sum(dy * n, axis=(0, 2)), "dbeta": np.sum(dy, axis=(0, 2))}
    y, y_lo = np.empty(xs.shape, dtype=L), np.zeros(xs.shape, dtype=L)
    out = {}
    tracked = conv["num_batches_tracked"]
    for s in range(S):
        if batch_stats:
            mu, d, ss = moments(channels(xs[s]), True)
            D = denominator(ss / dof, conv)
            n = samples(d / D)
            out.update({"mean": mu, "rstd": L(1) / D})  # asked for a single call only
            if conv["training"] and track:
                tracked += 1
                a = L(conv["momentum"]) if conv["momentum"] is not None else L(1) / L(tracked)
                q = L(m - 1 if conv["running_variance"] == "unbiased" else m)
                rm = (L(1) - a) * rm + a * mu.reshape(rm.shape)
                rv = (L(1) - a) * rv + a * (ss / q).reshape(rv.shape)
        else:
            n = (xs[s] - rm) / denominator(rv, conv)
        hi, lo = affine(n, conv, gamma, beta)
        y[s] = hi
        if lo is not None:
            y_lo[s] = lo
    out["y"] = (y, y_lo)
    if track:
        out.update({"running_mean": rm, "running_var": rv})
    return out


def reduced_to_last(x, conv):
    """x with its reduced axes (`axes`, or the trailing normalized_shape) moved last and merged:
    ([groups, m] array, a function putting a [groups, m] result back in x's layout)."""
    r = x.ndim
    axes = sorted(a % r for a in conv["axes"]) if conv["axes"] else list(range(r - len(conv["normalized_shape"]), r))
    if len(set(axes)) != len(axes):
        raise ValueError(f"axes {conv['axes']} name an axis twice")
    last = list(range(r - len(axes), r))
    moved = np.moveaxis(x, axes, last)
    m = math.prod(moved.shape[r - len(axes):])
    return moved.reshape(-1, m), lambda t: np.moveaxis(t.reshape(moved.shape), last, axes)


def l2_normalize(req, X, dts):
    """y = g x / D(sum x^2) over the reduced axes (g = 1; scale_norm: its scalar input g);
    backward: group_backward with m' = 1, no centering (l2_normalize/reference*.hpp)."""
    conv = req["convention"]
    z, back = reduced_to_last(X["x"], conv)
    g = params(X, "g", ())
    if backward(conv):
        dy, _ = reduced_to_last(X["dy"], conv)
        dx, n = group_backward(z, dy, False, conv, L(1), g)
        return {"dx": back(dx), "dg": np.sum(dy * n).reshape(1)}
    n = normalize(z, False, conv, L(1))[0]
    return {"y": back(n if g is None else g * n)}


def ada_norm(req, X, dts, center):
    """y = (1 + scale_b) N0(x) + shift_b per token row, N0 the norm without affine; gated:
    h = x + gate_b y (ada_layer_norm/reference*.hpp). x [B, *, d], scale/shift/gate [B, d]."""
    conv = req["convention"]
    B, d = X["x"].shape[0], X["x"].shape[-1]
    z = X["x"].reshape(B, -1, d)
    one_plus_s, shift = L(1) + X["scale"].reshape(B, 1, d), X["shift"].reshape(B, 1, d)
    dof = dof_of(conv, d)
    if backward(conv):
        if conv["gated"]:
            raise Skip("numpy: the ada norms' backward covers the ungated y (gated = false)")
        dy = X["dy"].reshape(B, -1, d)
        dx, n = group_backward(z, dy, center, conv, dof, one_plus_s)
        return {"dx": dx, "ds": np.sum(dy * n, axis=1), "db": np.sum(dy, axis=1)}
    n = normalize(z, center, conv, dof)[0]
    hi, lo = fma_pair(one_plus_s, n, shift)
    out = {"y": (hi, lo)}
    if conv["gated"]:
        out["h"] = fma_pair(X["gate"].reshape(B, 1, d), hi + lo, z)
    return out


def qk_norm(req, X, dts):
    """q^ = N(q), k^ = N(k) per head vector (rms: RMSNorm with q_gamma, k_gamma per affine;
    l2: t / D(||t||^2)); scores y = q^ . k^ / sqrt(d_k) (rms) or g q^ . k^ (l2), formed from the
    unrounded q^, k^ (qk_norm/reference.hpp)."""
    conv = req["convention"]
    dk = X["q"].shape[-1]
    heads = []
    for t, gname in (("q", "q_gamma"), ("k", "k_gamma")):
        if conv["qk_form"] == "rms":
            hi, lo = affine(normalize(X[t], False, conv, dof_of(conv, dk))[0], conv, X.get(gname), None)
            heads.append(hi if lo is None else hi + lo)
        else:
            if conv["affine"] != "none" or conv["variance"] != "biased":
                raise Skip("numpy: qk_norm's l2 form has no affine and no variance estimator")
            heads.append(normalize(X[t], False, conv, L(1))[0])
    qh, kh = heads
    scale = L(1) / np.sqrt(L(dk)) if conv["qk_form"] == "rms" else X["g"].reshape(())
    return {"q_hat": qh, "k_hat": kh, "y": scale * np.matmul(qh, np.swapaxes(kh, -1, -2))}


def dyt(req, X, dts):
    """Dynamic Tanh: y = gamma tanh(alpha x) + beta elementwise; backward with
    sech^2 z = 1 / cosh^2 z, never 1 - tanh^2 z (dyt/reference.hpp)."""
    conv = req["convention"]
    m = math.prod(conv["normalized_shape"])
    x = X["x"].reshape(-1, m)
    alpha, gamma, beta = X["alpha"].reshape(()), params(X, "gamma", m), params(X, "beta", m)
    z = alpha * x
    t = np.tanh(z)
    if not backward(conv):
        return {"y": fma_pair(L(1) if gamma is None else gamma, t, L(0) if beta is None else beta)}
    dy = X["dy"].reshape(-1, m)
    s = L(1) / np.square(np.cosh(z))  # 0 where cosh overflows or z is infinite: s's limit
    gdy = dy if gamma is None else gamma * dy
    return {"dx": gdy * alpha * s, "dalpha": np.sum(gdy * x * s).reshape(1),
            "dgamma": np.sum(dy * t, axis=0), "dbeta": np.sum(dy, axis=0)}


def residual_add(conv, X, dts, m):
    """h = x + residual (+ bias) as a pair (the updated residual stream), and the norm's input z:
    h as stored in the residual's dtype (norm_input rounded) or the wide sum (unrounded)."""
    s, e = two_sum(X["x"].reshape(-1, m), X["residual"].reshape(-1, m))
    if "bias" in X:
        s, e2 = two_sum(s, X["bias"].reshape(m))
        e = e + e2
    hi, lo = two_sum(s, e)
    z = rounded(hi, dts["residual"], lo) if conv["norm_input"] == "rounded" else hi + lo
    return (hi, lo), z


def fused_add_norm(req, X, dts, center):
    """fused_add_rms_norm, fused_add_layer_norm: h = x + residual (+ bias), y = norm(z) with
    layer_norm's / rms_norm's affine (fused_add_norm/reference.hpp)."""
    conv = req["convention"]
    m = math.prod(conv["normalized_shape"])
    h, z = residual_add(conv, X, dts, m)
    n = normalize(z, center, conv, dof_of(conv, m))[0]
    return {"y": affine(n, conv, params(X, "gamma", m), params(X, "beta", m)), "h": h}


def quant_norm(req, X, dts, center):
    """rms_norm_quant, layer_norm_quant: y = norm(z) (z = x, or h with a residual), then the
    value to quantize v = y / s, s static (the input scale) or per row max(max|y| / qmax,
    scale_floor), stored in binary32, which v divides by (the multiplier form: v = y fl32(1/s))
    (quant_norm/reference.hpp). evaluate() quantizes v per rounding and saturate."""
    conv = req["convention"]
    m = math.prod(conv["normalized_shape"])
    out = {}
    if "residual" in X:
        out["h"], z = residual_add(conv, X, dts, m)
    else:
        z = X["x"].reshape(-1, m)
    n = normalize(z, center, conv, dof_of(conv, m))[0]
    hi, lo = affine(n, conv, params(X, "gamma", m), params(X, "beta", m))
    y = hi if lo is None else hi + lo
    divisor = conv["scale_form"] == "divisor"
    if conv["quant_scale"] == "static_per_tensor":
        given = X["scale"].reshape(())
        out["y"] = y / given if divisor else y * given
        return out
    amax = np.max(np.abs(y), axis=-1, keepdims=True)  # NaN for a row holding NaN
    s = amax / QMAX[req["out_dtype"]]
    floor = L(conv["scale_floor"])
    s = np.where(s < floor, floor, s)  # NaN stays NaN
    out["scale"] = s if divisor else L(1) / s
    stored = rounded(out["scale"], "f32")  # the binary32 scale a dequantizer reads
    out["y"] = y / stored if divisor else y * stored
    return out


OPS = {
    "layer_norm": partial(row_norm, center=True),
    "rms_norm": partial(row_norm, center=False),
    "group_norm": group_norm,
    "instance_norm": group_norm,
    "batch_norm": batch_norm,
    "l2_normalize": l2_normalize,
    "scale_norm": l2_normalize,
    "ada_layer_norm": partial(ada_norm, center=True),
    "ada_rms_norm": partial(ada_norm, center=False),
    "qk_norm": qk_norm,
    "dyt": dyt,
    "fused_add_rms_norm": partial(fused_add_norm, center=False),
    "fused_add_layer_norm": partial(fused_add_norm, center=True),
    "rms_norm_quant": partial(quant_norm, center=False),
    "layer_norm_quant": partial(quant_norm, center=True),
}


def evaluate(req, inputs):
    """One request: check it, compute every output in long double, round each once to the
    dtype the request names for it (a quantized y per rounding and saturate), in its shape."""
    check_request(req, inputs)
    conv = req["convention"]
    X = {name: np.array(a, dtype=L) for name, (a, _) in inputs.items()}  # exact, dense
    dts = {name: dt for name, (_, dt) in inputs.items()}
    with np.errstate(all="ignore"):  # 0/0, inf - inf, overflow: the IEEE results are the answers
        exact = OPS[req["op"]](req, X, dts)
        outs = {}
        for name, spec in req["outputs"].items():
            if name not in exact:
                if spec.get("optional"):
                    continue
                raise KeyError(f"{req['op']} computed no output {name!r}")
            hi, lo = exact[name] if isinstance(exact[name], tuple) else (exact[name], None)
            dt = spec["dtype"]
            quantize = {"rounding": conv["rounding"], "saturate": conv["saturate"]} if dt in QUANTIZED else {}
            r = round_out(hi, dt, lo=lo, **quantize)
            outs[name] = (r.reshape([int(d) for d in spec["shape"]]), dt)
    return outs


# ---- fault modes: real bug classes normcheck must catch -------------------------------------

FAULT = None  # --fault: None, "offset", "strides" or "no_mean_term" (row_norm reads the last)
VIEW = normcheck_worker.view  # the correct view construction, which the view faults wrap


def _view_ignoring_offset(storage, shape, strides, offset):
    """--fault offset: the view built at storage offset 0."""
    return VIEW(storage, shape, strides, 0)


def _view_dense_strides(storage, shape, strides, offset):
    """--fault strides: the view built with dense row-major strides from its offset."""
    return VIEW(storage, shape, [math.prod(shape[k + 1:]) for k in range(len(shape))], offset)


FAULT_VIEWS = {"offset": _view_ignoring_offset, "strides": _view_dense_strides}


def main():
    global FAULT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fault", choices=["offset", "strides", "no_mean_term"],
                        help="inject one bug class (module docstring); normcheck must fail the cases that expose it")
    FAULT = parser.parse_args().fault
    if FAULT in FAULT_VIEWS:
        normcheck_worker.view = FAULT_VIEWS[FAULT]  # load_inputs() builds every input's view through it
    name = f"numpy {np.__version__} longdouble" + (f" (fault {FAULT})" if FAULT else "")
    serve(name, evaluate, backward=True, views=True)


if __name__ == "__main__":
    main()
