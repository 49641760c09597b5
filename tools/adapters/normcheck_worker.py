"""The worker side of normcheck's external-process protocol (README "External process backends").

An adapter calls serve(name, evaluate): this reads one JSON request per line on stdin and
answers one JSON line on stdout until EOF. Requests:

    {"type": "hello", "protocol": 1}
        -> {"protocol": 1, "name": NAME}
    {"type": "run", "id": 7, "op": "layer_norm", "out_dtype": "f16",
     "convention": {"eps": 1e-05, "eps_placement": "inside_sqrt", "variance": "biased",
                    "affine": "gamma_beta", "normalized_shape": [8], "acc_dtype": "f32", ...},
     "inputs":  {"x": {"path": ".../7_x.npy", "dtype": "f16", "shape": [2, 8]}, ...},
     "outputs": {"y": {"path": ".../7_y.npy", "dtype": "f16", "shape": [2, 8]}}}
        -> {"id": 7, "outputs": {"y": {"path": ".../7_y.npy", "dtype": "f16"}}}
         | {"id": 7, "skip": "reason"}      (the convention cannot be expressed: SKIPPED)
         | {"id": 7, "error": "message"}    (the framework failed: ERROR)

Tensors are .npy files: f64, f32 and f16 as float64/float32/float16; bf16 as float32
holding bfloat16 values, with "dtype": "bf16" beside the path (NumPy has no bfloat16).
Only protocol lines may go to stdout: serve() points sys.stdout at stderr, so prints and
library warnings cannot corrupt the stream.
"""

import json
import sys
import traceback

import numpy as np

PROTOCOL = 1
NUMPY = {"f64": np.float64, "f32": np.float32, "f16": np.float16}


class Skip(Exception):
    """Raised by an adapter for a problem its framework cannot express; the message is the reason."""


def load_inputs(req):
    """The request's inputs as {name: (array, dtype name)}; bf16 arrives as float32 values."""
    out = {}
    for name, spec in req["inputs"].items():
        a = np.load(spec["path"], allow_pickle=False)
        out[name] = (a, spec.get("dtype", {np.dtype(np.float64): "f64", np.dtype(np.float32): "f32",
                                             np.dtype(np.float16): "f16"}[a.dtype]))
    return out


def exact_cast(a, dtype, what):
    """a converted to NumPy dtype `dtype`, raising Skip if some value would change."""
    b = np.asarray(a).astype(dtype)
    same = (b.astype(np.float64) == np.asarray(a, dtype=np.float64)) | (np.isnan(b) & np.isnan(a))
    if not np.all(same):
        i = np.argwhere(~same)[0]
        raise Skip(f"{what}: value {np.asarray(a)[tuple(i)]!r} at {list(i)} is not a {np.dtype(dtype).name} value")
    return b


def one_plus(w, dtype, what):
    """1 + w as `dtype` when every 1 + w is exactly a value of it (the same numerics as a kernel
    that forms 1 + w itself in that type); else Skip."""
    w64 = np.asarray(w, dtype=np.float64)
    s = 1.0 + w64
    bb = s - 1.0
    err = (1.0 - (s - bb)) + (w64 - bb)  # TwoSum: the exact rounding error of 1 + w in binary64
    if np.any(err != 0):
        raise Skip(f"{what}: 1 + gamma is not exact in binary64")
    return exact_cast(s, dtype, f"{what}: 1 + gamma")


def _write(path, array, dtype_name):
    a = np.ascontiguousarray(array)
    if dtype_name == "bf16":
        a = a.astype(np.float32)  # bf16 values are float32 values: exact
    np.save(path, a, allow_pickle=False)


def serve(name, evaluate):
    """Runs the protocol loop. evaluate(req, inputs) gets the request and load_inputs(req) and
    returns {output name: (array, dtype name)} with the arrays in the framework's own output
    type (bf16 as float32 values), or raises Skip(reason); any other exception is an error."""
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
                reply = {"protocol": PROTOCOL, "name": name}
            elif req.get("type") == "run":
                outs = evaluate(req, load_inputs(req))
                reply = {"id": rid, "outputs": {}}
                for oname, (array, dtype_name) in outs.items():
                    spec = req["outputs"].get(oname, {})
                    path = spec.get("path") or req["outputs"]["y"]["path"].replace("_y.npy", f"_{oname}.npy")
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
