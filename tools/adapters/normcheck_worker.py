"""The worker side of normcheck's external-process protocol (README "External process backends").

An adapter calls serve(name, evaluate): this reads one JSON request per line on stdin and
answers one JSON line on stdout until EOF. Requests (as normcheck sends them):

    {"type": "hello", "protocol": 2, "protocols": [1, 2]}
        -> {"protocol": 2, "name": NAME, "backward": false, "views": true}
           (protocol 1 to a host that offers only 1)
    {"type": "run", "id": 7, "op": "layer_norm", "out_dtype": "f16", "layout": "padded",
     "convention": {"eps": 1e-05, "eps_placement": "inside_sqrt", "variance": "biased",
                    "affine": "gamma_beta", "normalized_shape": [8], "axes": [], "acc_dtype": "f32",
                    "num_groups": 0, "momentum": null, "training": true, "track_running_stats": true,
                    "num_batches_tracked": 0, "running_variance": "unbiased", "sequence": false, "gated": false, "qk_form": "rms"},
     "inputs":  {"x": {"path": ".../7_x.npy", "dtype": "f16", "shape": [2, 8], "strides": [11, 1], "offset": 5},
                 "gamma": ..., "beta": ...},
     "outputs": {"y": {"path": ".../7_out_y.npy", "dtype": "f16", "shape": [2, 8]}}}
        -> {"id": 7, "outputs": {"y": {"path": ".../7_out_y.npy", "dtype": "f16"}}}
         | {"id": 7, "skip": "reason"}      (the convention cannot be expressed: SKIPPED)
         | {"id": 7, "error": "message"}    (the framework failed: ERROR)

Protocol 2: each input's file holds its storage (a 1-D array) and the input is the view of
"shape" with "strides" (in elements) at "offset" into it; load_inputs() builds it with NumPy's
as_strided (view()), read-only, so an adapter sees the strided tensor a framework would be
handed (padded rows, column-major, channels-last; README "Case files", layout). Backward
problems ("direction": "backward" in the convention, input "dy", outputs "dx" and the
parameters' gradients "dgamma", "dbeta", ...) come only to a worker that serve()s with
backward=True.

Every request carries the op's convention fields (momentum "none" is null), new ones included:
layer_norm/rms_norm's "normalized_dtype" (null, or the dtype the normalized value is rounded to
before the affine) and batch_norm's "running_variance" ("unbiased" | "biased"). An adapter
must answer {"skip": ...} for a value its framework does not implement, and check every key
it maps: one that ignores a key runs the case under another convention (and the default
gate admits a rounding order one ULP off). batch_norm
with running stats asks for "running_mean" and "running_var" outputs beside "y".
Each output names its own dtype: h (fused_add_*) has the residual's, a quantized y
(rms_norm_quant, layer_norm_quant) out_dtype fp8_e4m3fn, fp8_e5m2 or int8, their scale f32.
Outputs marked "optional": true (the saved statistics "mean" and "rstd" of layer_norm,
rms_norm, group_norm, instance_norm, batch_norm) may be left out of the reply; normcheck then
reports them as not returned, and measures and gates them when they are there.
Tensors are .npy files: f64, f32 and f16 as float64/float32/float16; bf16, fp8_e4m3fn and
fp8_e5m2 as float32 holding values of that format, with "dtype" beside the path (NumPy has
no bfloat16 or float8); int8 as int8 ('|i1').
Only protocol lines may go to stdout: serve() points sys.stdout at stderr, so prints and
library warnings cannot corrupt the stream.

Helpers for adapters: round_to(a, dtype) (round_bf16, round_f16) rounds to a format once,
correctly; exact(a, dtype, what) passes a framework only values it holds exactly, else Skip;
one_plus(w, dtype, what) forms 1 + w for affine one_plus_w under the same rule.
"""

import json
import sys
import traceback

import numpy as np

PROTOCOL = 2
NUMPY = {"f64": np.float64, "f32": np.float32, "f16": np.float16}


class Skip(Exception):
    """Raised by an adapter for a problem its framework cannot express; the message is the reason."""


def view(storage, shape, strides, offset):
    """The view of `shape` with `strides` and `offset` (both in elements) into the 1-D array
    `storage`, read-only (NumPy's as_strided, strides scaled by the item size). Raises
    ValueError when the view would reach outside the storage or a stride or the offset is
    negative: a request that does not fit is never read past its storage."""
    storage = np.asarray(storage)
    shape, strides, offset = [int(d) for d in shape], [int(s) for s in strides], int(offset)
    if storage.ndim != 1 or len(shape) != len(strides):
        raise ValueError(f"view: a {storage.ndim}-d storage, shape {shape}, strides {strides}")
    if offset < 0 or any(s < 0 for s in strides) or any(d < 0 for d in shape):
        raise ValueError(f"view: negative offset, stride or extent ({offset}, {strides}, {shape})")
    if all(d > 0 for d in shape):
        last = offset + sum((d - 1) * s for d, s in zip(shape, strides))
        if last >= storage.shape[0]:
            raise ValueError(f"view: element {last} of a storage of {storage.shape[0]}")
        base = storage[offset:]
    else:
        base = storage[:0]
    return np.lib.stride_tricks.as_strided(base, shape=tuple(shape),
                                           strides=tuple(s * storage.itemsize for s in strides), writeable=False)


def load_inputs(req):
    """The request's inputs as {name: (array, dtype name)}; bf16 arrives as float32 values.
    Protocol 2 inputs are views into their storage (view()): index them, do not assume they
    are contiguous (np.ascontiguousarray makes a dense copy where a framework needs one)."""
    out = {}
    for name, spec in req["inputs"].items():
        a = np.load(spec["path"], allow_pickle=False)
        dt = spec.get("dtype", {np.dtype(np.float64): "f64", np.dtype(np.float32): "f32",
                                np.dtype(np.float16): "f16", np.dtype(np.int8): "int8"}[a.dtype])
        if "strides" in spec:
            a = view(a, spec["shape"], spec["strides"], spec.get("offset", 0))
        out[name] = (a, dt)
    return out


# The formats the protocol carries, as (fraction bits p, minimum normal exponent emin,
# maximum exponent emax, NumPy storage type): a finite nonzero value is m * 2^(e - p) with
# integer |m| < 2^(p+1) and e >= emin, and |value| < 2^(emax + 1).
FORMATS = {"f64": (52, -1022, 1023, np.float64), "f32": (23, -126, 127, np.float32),
           "f16": (10, -14, 15, np.float16), "bf16": (7, -126, 127, np.float32)}


def round_to(a, dtype_name):
    """The values of `a` (float16, float32 or float64, any shape) rounded once, to nearest with
    ties to even, to the format `dtype_name` ("bf16", "f16", "f32" or "f64"), as an array of
    that format's NumPy storage type: float16 for f16, float32 for bf16 (bfloat16 values) and
    f32, float64 for f64.

    The rounding is IEEE 754 roundTiesToEven from the exact input value (float64 inputs are not
    rounded to float32 first, which could round twice): gradual underflow to the format's
    subnormals (bf16 steps of 2^-133 below 2^-126, f16 steps of 2^-24 below 2^-14) and to
    signed zero; values at or beyond the rounding boundary of the largest finite value (bf16
    0x1.ffp127, half-way between 0x1.fep127 and 2^128; f16 65520) become +-inf; inf stays inf
    and NaN stays NaN. round_bf16 and round_f16 are its two common uses.

    How: with e the exponent of a's leading bit, clamped below at emin, the format's spacing
    there is 2^(e - p); a * 2^(p - e) is exact in binary64 (a power-of-two scaling that stays
    in binary64's normal range), np.rint rounds it to the nearest integer with ties to even,
    and scaling back is exact. A result of 2^(emax + 1) or more is the overflow to inf."""
    p, emin, emax, storage = FORMATS[dtype_name]
    x = np.asarray(a)
    if x.dtype not in (np.float16, np.float32, np.float64):
        raise TypeError(f"round_to: {x.dtype} input (float16, float32 or float64 only)")
    with np.errstate(over="ignore", invalid="ignore"):  # inf and NaN (signaling ones too) pass through
        x = x.astype(np.float64)  # exact
        if dtype_name == "f64":
            return x
        _, e = np.frexp(x)  # x = f * 2^e with 0.5 <= |f| < 1 (e = 0 for zero, inf, NaN)
        ulp_exp = np.maximum(e.astype(np.int64) - 1, emin) - p
        r = np.ldexp(np.rint(np.ldexp(x, -ulp_exp)), ulp_exp)
        r = np.where(np.abs(r) >= 2.0 ** (emax + 1), np.copysign(np.inf, x), r)
        r = np.where(np.isfinite(x), r, x)  # inf stays inf, NaN stays NaN
        return r.astype(storage)  # exact: r is a value of the format, or +-inf, or NaN


def round_bf16(a):
    """round_to(a, "bf16"): a's values rounded to nearest even bfloat16, as float32."""
    return round_to(a, "bf16")


def round_f16(a):
    """round_to(a, "f16"): a's values rounded to nearest even binary16, as float16."""
    return round_to(a, "f16")


def exact(a, dtype_name, what):
    """a as values of `dtype_name` in its storage type (round_to), raising Skip naming the first
    value that is not one: an adapter passes a framework only values it can hold exactly, so a
    case is never run on rounded inputs."""
    a = np.asarray(a)
    b = round_to(a, dtype_name)
    same = (b.astype(np.float64) == a.astype(np.float64)) | (np.isnan(b) & np.isnan(a))
    if not np.all(same):
        i = tuple(int(k) for k in np.argwhere(~same)[0])
        raise Skip(f"{what}: value {float(a[i])!r} at {list(i)} is not a {dtype_name} value")
    return b


def exact_cast(a, dtype, what):
    """a converted to NumPy dtype `dtype` (float16, float32 or float64), raising Skip if some
    value would change (exact() with the format named by its NumPy type)."""
    return exact(a, {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32",
                     np.dtype(np.float64): "f64"}[np.dtype(dtype)], what)


def one_plus(w, dtype_name, what):
    """1 + w as values of `dtype_name` (storage type as round_to) when every 1 + w is exactly a
    value of it (the same numerics as a kernel that forms 1 + w itself in that type); else Skip."""
    w64 = np.asarray(w, dtype=np.float64)
    s = 1.0 + w64
    bb = s - 1.0
    err = (1.0 - (s - bb)) + (w64 - bb)  # TwoSum: the exact rounding error of 1 + w in binary64
    if np.any(err != 0):
        raise Skip(f"{what}: 1 + gamma is not exact in binary64")
    return exact(s, dtype_name, f"{what}: 1 + gamma")


def wire_array(array, dtype_name):
    """An output array in the form normcheck reads for `dtype_name`: contiguous; bf16 and fp8
    values as float32, int8 as int8. Nothing is rounded, truncated or wrapped on the way:
    bf16/fp8 values must be float32 values (normcheck then refuses one that is not of the
    format), int8 values integers in [-128, 127]; else ValueError naming the first offender
    (a float64 array one step off a bf16 value cast to float32 could land on it, and 42.4 or
    383 cast to int8 would become 42 or 127). Also used by the in-process path (the normcheck
    package)."""
    a = np.ascontiguousarray(array)
    if a.dtype.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):  # ml_dtypes: exact in float32
        a = a.astype(np.float32)
    if dtype_name in ("bf16", "fp8_e4m3fn", "fp8_e5m2", "int8") and a.dtype.kind not in "fiu":
        raise ValueError(f"{dtype_name} outputs must hold real numbers; got an array of dtype {a.dtype}")
    if dtype_name in ("bf16", "fp8_e4m3fn", "fp8_e5m2"):
        w = a.astype(np.float32)
        wide = a.astype(np.float64)
        bad = ~((w.astype(np.float64) == wide) | (np.isnan(w) & np.isnan(wide)))
        if bad.any():
            i = tuple(int(k) for k in np.argwhere(bad)[0])
            raise ValueError(f"element {list(i)} = {float(wide[i])!r} is not a {dtype_name} value (not even a float32 value)")
        a = w
    elif dtype_name == "int8":
        wide = a.astype(np.float64)
        bad = ~(np.isfinite(wide) & (wide == np.round(wide)) & (wide >= -128) & (wide <= 127))
        if bad.any():
            i = tuple(int(k) for k in np.argwhere(bad)[0])
            raise ValueError(f"element {list(i)} = {float(wide[i])!r} is not an int8 value")
        a = a.astype(np.int8)
    return a


def _write(path, array, dtype_name):
    np.save(path, wire_array(array, dtype_name), allow_pickle=False)


def serve(name, evaluate, backward=False, views=True):
    """Runs the protocol loop. evaluate(req, inputs) gets the request and load_inputs(req) and
    returns {output name: (array, dtype name)} with the arrays in the framework's own output
    type (bf16 as float32 values), or raises Skip(reason); any other exception is an error.
    backward=True: the adapter computes gradients too (req["convention"]["direction"] ==
    "backward": inputs include "dy", the outputs asked are "dx" and the parameters'
    gradients); otherwise normcheck reports backward cases SKIPPED without sending them.
    views=False: normcheck sends only contiguous inputs (cases with another layout are
    SKIPPED for this backend)."""
    proto = sys.stdout
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        rid = None
        try:
            req = json.loads(line)
            rid = req.get("id")
            if req.get("type") == "hello":
                version = min(int(req.get("protocol", 1)), PROTOCOL)
                reply = {"protocol": version, "name": name}
                if version >= 2:
                    reply.update({"backward": bool(backward), "views": bool(views)})
            elif req.get("type") == "run":
                if req.get("convention", {}).get("direction") == "backward" and not backward:
                    raise Skip(f"{name}: forward only")
                outs = evaluate(req, load_inputs(req))
                reply = {"id": rid, "outputs": {}}
                for oname, (array, dtype_name) in outs.items():
                    spec = req["outputs"].get(oname)
                    if spec is None:  # not asked for (e.g. a forward output in a backward request): dropped
                        sys.stderr.write(f"normcheck_worker: output {oname!r} was not requested; not returned\n")
                        continue
                    path = spec["path"]
                    _write(path, array, dtype_name)
                    reply["outputs"][oname] = {"path": path, "dtype": dtype_name}
            else:
                reply = {"id": rid, "error": f"unknown request type {req.get('type')!r}"}
        except Skip as s:
            reply = {"id": rid, "skip": str(s)}
        except Exception as e:  # the framework failed on this problem: report it, keep serving
            traceback.print_exc(file=sys.stderr)
            reply = {"id": rid, "error": f"{type(e).__name__}: {e}".strip()[:2000]}
        proto.write(json.dumps(reply) + "\n")
        proto.flush()
