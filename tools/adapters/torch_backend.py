#!/usr/bin/env python3
"""PyTorch as a normcheck backend:

    normcheck run --backend cmd:"python3 tools/adapters/torch_backend.py"               (CPU)
    normcheck run --backend cmd:"python3 tools/adapters/torch_backend.py --device cuda"

The device may also come from NORMCHECK_TORCH_DEVICE (cpu, cuda, cuda:1, ...); the
argument wins. Protocol: tools/adapters/normcheck_worker.py.

Convention mapping (anything else is SKIPPED with the reason, never approximated):
- layer_norm -> F.layer_norm(x, normalized_shape, weight, bias, eps): inside_sqrt, biased.
- rms_norm -> F.rms_norm(x, normalized_shape, weight, eps) (torch >= 2.4): inside_sqrt;
  no bias, so gamma_beta is SKIPPED. eps = 0 is passed as 0.0 (eps=None would mean
  torch.finfo(dtype).eps).
- group_norm -> F.group_norm, instance_norm -> F.instance_norm (use_input_stats),
  batch_norm -> F.batch_norm with running stats chained over `sequence` steps; momentum
  None (cumulative average) becomes 1 / (num_batches_tracked + 1) per training step, exactly
  what nn.BatchNorm does.
- l2_normalize -> F.normalize(x, p=2, dim, eps): clamp_norm only.
- Affine none: weight None; gamma: weight only; gamma_beta: weight and bias; one_plus_w:
  weight = 1 + gamma when every 1 + gamma is a value of the dtype (identical numerics),
  else SKIPPED. Parameters must be values of x's dtype (PyTorch wants one dtype).
- Output has x's dtype; accumulation is PyTorch's opmath type (f32 for f16/bf16/f32, f64 for
  f64): a case whose acc_dtype differs is SKIPPED.
- eps is a Python float (binary64); what the kernel does with it (e.g. a float cast on CPU
  for f32 data) is PyTorch's numerics, under test.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from normcheck_worker import Skip, one_plus, serve  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:
    sys.stderr.write(f"torch_backend: {e} (pip install torch)\n")
    sys.exit(3)

TORCH = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
NP = {"f64": np.float64, "f32": np.float32, "f16": np.float16, "bf16": np.float32}
OPMATH = {"f64": "f64", "f32": "f32", "f16": "f32", "bf16": "f32"}

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--device", default=os.environ.get("NORMCHECK_TORCH_DEVICE", "cpu"))
DEVICE = torch.device(parser.parse_args().device)
if DEVICE.type == "cuda" and not torch.cuda.is_available():
    sys.stderr.write("torch_backend: --device cuda but torch.cuda.is_available() is False\n")
    sys.exit(3)
torch.use_deterministic_algorithms(False)
if DEVICE.type == "cuda":
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
NAME = f"torch {torch.__version__} {DEVICE}" + (f" ({torch.cuda.get_device_name(DEVICE)})" if DEVICE.type == "cuda" else "")


def tensor(a, dt):
    """An exact torch tensor of dtype dt on DEVICE from a NumPy array of its values."""
    t = torch.from_numpy(np.ascontiguousarray(a).astype(NP[dt]))
    r = t.to(TORCH[dt])
    if not torch.equal(r.to(torch.float64), t.to(torch.float64)) and not bool(torch.isnan(t).any()):
        raise Skip(f"torch: some value is not a {dt} value")
    return r.to(DEVICE)


def out(t, dt):
    return (t.detach().to("cpu").to(torch.float32 if dt == "bf16" else TORCH[dt]).numpy(), dt)


def common(req, inputs, fn, placements=("inside_sqrt",)):
    c = req["convention"]
    dt = inputs["x"][1]
    if req["out_dtype"] != dt:
        raise Skip(f"torch: {fn} returns x's dtype; out_dtype {req['out_dtype']} != x {dt}")
    if c.get("eps_placement", "inside_sqrt") not in placements:
        raise Skip(f"torch: eps_placement {c['eps_placement']} not expressible with {fn}")
    if c.get("variance", "biased") != "biased":
        raise Skip(f"torch: {c['variance']} variance not expressible with {fn} (1/m)")
    acc = c.get("acc_dtype", "f32")
    if acc != OPMATH[dt]:
        raise Skip(f"torch: {fn} on {dt} accumulates in {OPMATH[dt]}; the case expects {acc}")
    return c, dt


def params(inputs, c, dt, fn, bias_ok=True):
    affine = c.get("affine", "none")
    w = b = None
    if affine in ("gamma", "gamma_beta"):
        w = tensor(inputs["gamma"][0], dt)
    elif affine == "one_plus_w":
        w = tensor(one_plus(inputs["gamma"][0], NP[dt] if dt != "bf16" else np.float32, "torch"), dt)
    if affine == "gamma_beta":
        if not bias_ok:
            raise Skip(f"torch: {fn} has no bias (affine gamma_beta not expressible)")
        b = tensor(inputs["beta"][0], dt)
    return w, b


def layer_norm(req, inputs):
    c, dt = common(req, inputs, "F.layer_norm")
    w, b = params(inputs, c, dt, "F.layer_norm")
    ns = list(c["normalized_shape"])
    x = tensor(inputs["x"][0], dt)
    return {"y": out(F.layer_norm(x, ns, w.reshape(ns) if w is not None else None,
                                  b.reshape(ns) if b is not None else None, float(c["eps"])), dt)}


def rms_norm(req, inputs):
    if not hasattr(F, "rms_norm"):
        raise Skip(f"torch {torch.__version__} has no F.rms_norm (2.4+)")
    c, dt = common(req, inputs, "F.rms_norm")
    w, _ = params(inputs, c, dt, "F.rms_norm", bias_ok=False)
    ns = list(c["normalized_shape"])
    x = tensor(inputs["x"][0], dt)
    return {"y": out(F.rms_norm(x, ns, w.reshape(ns) if w is not None else None, float(c["eps"])), dt)}


def group_norm(req, inputs):
    c, dt = common(req, inputs, "F.group_norm")
    w, b = params(inputs, c, dt, "F.group_norm")
    x = tensor(inputs["x"][0], dt)
    return {"y": out(F.group_norm(x, int(c["num_groups"]), w, b, float(c["eps"])), dt)}


def instance_norm(req, inputs):
    c, dt = common(req, inputs, "F.instance_norm")
    w, b = params(inputs, c, dt, "F.instance_norm")
    x = tensor(inputs["x"][0], dt)
    if x[0, 0].numel() == 1:
        raise Skip("torch: F.instance_norm refuses a single spatial element (\"Expected more than 1 spatial element\")")
    return {"y": out(F.instance_norm(x, None, None, w, b, True, 0.0, float(c["eps"])), dt)}


def batch_norm(req, inputs):
    c, dt = common(req, inputs, "F.batch_norm")
    w, b = params(inputs, c, dt, "F.batch_norm")
    training = bool(c.get("training", True))
    track = bool(c.get("track_running_stats", True))
    x = tensor(inputs["x"][0], dt)
    steps = list(x) if c.get("sequence", False) else [x]
    rm = tensor(inputs["running_mean"][0], dt).clone() if track else None
    rv = tensor(inputs["running_var"][0], dt).clone() if track else None
    nbt = int(c.get("num_batches_tracked", 0))
    ys = []
    for xs in steps:
        if training and track:
            nbt += 1
            m = c.get("momentum")
            factor = 1.0 / nbt if m is None else float(m)
        else:
            factor = 0.0
        ys.append(F.batch_norm(xs, rm, rv, w, b, training or not track, factor, float(c["eps"])))
    y = torch.stack(ys) if c.get("sequence", False) else ys[0]
    res = {"y": out(y, dt)}
    if track:
        res["running_mean"] = out(rm, dt)
        res["running_var"] = out(rv, dt)
    return res


def l2_normalize(req, inputs):
    c, dt = common(req, inputs, "F.normalize", placements=("clamp_norm",))
    x = tensor(inputs["x"][0], dt)
    axes = c.get("axes") or list(range(x.ndim - len(c.get("normalized_shape", [1])), x.ndim))
    dim = axes[0] if len(axes) == 1 else tuple(axes)
    return {"y": out(F.normalize(x, p=2.0, dim=dim, eps=float(c["eps"])), dt)}


OPS = {"layer_norm": layer_norm, "rms_norm": rms_norm, "group_norm": group_norm, "instance_norm": instance_norm,
       "batch_norm": batch_norm, "l2_normalize": l2_normalize}


def evaluate(req, inputs):
    f = OPS.get(req["op"])
    if f is None:
        raise Skip(f"torch: no torch.nn.functional op wired for {req['op']}")
    with torch.no_grad():
        return f(req, inputs)


if __name__ == "__main__":
    serve(NAME, evaluate)
