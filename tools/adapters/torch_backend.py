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
- Saved statistics (optional outputs "mean", "rstd", returned when asked): layer_norm from
  torch.native_layer_norm, rms_norm from torch.ops.aten._fused_rms_norm, group_norm from
  torch.native_group_norm, batch_norm (one call with batch statistics) from
  torch.native_batch_norm's save_mean / save_invstd; y still comes from the F.* call above.
  Returned only when PyTorch keeps them in the requested dtype (the accumulation type):
  its CPU native_layer_norm keeps those of f16/bf16 data in f16/bf16 (layer_norm [1, 2, 3] in
  bf16 saves rstd 1.2265625, sqrt(3/2) = 1.2247449), a convention of its own, so they are left
  out (normcheck reports them as not returned). instance_norm's are not returned.
- fused_add_rms_norm, fused_add_layer_norm (plain torch ops, the formulation inference
  engines test against: vLLM's RMSNorm.forward_native): s = x.float() + residual.float()
  (+ bias) in the accumulation type, h = s.to(residual's dtype), z = h (norm_input rounded)
  or s (unrounded); RMS: z * rsqrt(mean(z^2) + eps), rounded to x's dtype, times gamma in
  x's dtype (HF/vLLM: weight * n.to(dtype)); one_plus_w: (1 + w.float()) * n in float, then
  rounded (GemmaRMSNorm); LN: F.layer_norm(z, ..., gamma.float(), beta.float()).to(x dtype).
- rms_norm_quant, layer_norm_quant (vLLM's ref_rms_norm + ref_dynamic_per_token_quant /
  static_scaled_fp8_quant references): y = the norm above in x's dtype (the reference rounds
  it to x's dtype before quantizing); dynamic: s = max|y|.float() / qmax per row, clamped
  below by scale_floor; v = y.float() / s (divisor) or y.float() * scale (multiplier);
  saturate: v.clamp(min, max) first; fp8: v.to(torch.float8_e4m3fn / float8_e5m2); int8:
  v.round() (half to even) then .to(torch.int8). rounding = nearest_away is SKIPPED (torch
  has no half-away round). saturate = false is PyTorch's plain cast, whatever it does.
- Affine none: weight None; gamma: weight only; gamma_beta: weight and bias; one_plus_w:
  weight = 1 + gamma when every 1 + gamma is a value of the dtype (identical numerics),
  else SKIPPED. Parameters travel in x's dtype (their values must be values of it), or as
  float32 beside f16/bf16 data when the case gives them in f32: PyTorch's CPU "mixed type"
  path (weight, bias and running stats float32, statistics kept in float32).
- Output has x's dtype; accumulation is PyTorch's opmath type (f32 for f16/bf16/f32, f64 for
  f64): a case whose acc_dtype differs is SKIPPED.
- eps is a Python float (binary64); what the kernel does with it (e.g. a float cast on CPU
  for f32 data) is PyTorch's numerics, under test.
- Views (protocol 2): x, dy and the other activations reach PyTorch with the strides and
  storage offset normcheck laid them out with (torch.as_strided over the whole storage,
  padding included), so its kernels get the non-contiguous tensor a model would hand them.
- Backward (protocol 2): layer_norm, rms_norm, group_norm, instance_norm, batch_norm and
  l2_normalize run their forward above with requires_grad on x and the parameters, then
  y.backward(dy); dx, dgamma, dbeta are the leaves' .grad (autograd's own formulas and
  accumulation, under test). dgamma of one_plus_w is the gradient of w = 1 + gamma (the
  same). Other ops' backward cases are SKIPPED.
- Inputs and parameters reach PyTorch only as exact values of x's dtype (normcheck_worker's
  exact(), which rounds with round_to and compares): a value the dtype cannot hold is SKIPPED,
  never rounded on the way in.

Refused arguments are SKIPPED; everything else that goes wrong is an ERROR or a FAILED case.
PyTorch validates some arguments before computing anything, and a convention it refuses is
one it does not offer (SKIPPED with PyTorch's own message), not a backend that broke:

- A ValueError or NotImplementedError raised inside the torch package while an op is called
  (call()) becomes SKIPPED with PyTorch's type and message. These are its argument checks:
  the Python ones in torch.nn.functional (raise ValueError), C++ TORCH_CHECK_VALUE, and the
  dtype dispatch's "not implemented for 'Half'" (NotImplementedError). Those a bundled case
  can trip, torch 2.15:
    F.batch_norm, training: "batch_norm eps must be positive during training" (eps = 0; also
      eval with track_running_stats = false, which normalizes with batch statistics exactly as
      nn.BatchNorm does, by calling F.batch_norm with training=True);
    F.batch_norm, training: "Expected more than 1 value per channel when training" (N * spatial
      = 1, per call of a sequence); "batch_norm eps must be non-negative" (eps < 0, any mode);
    F.instance_norm: "Expected more than 1 spatial element when training" (x [N, C] or one
      spatial element);
    F.group_norm: "Expected more than 1 value per channel when training" (N * C / G * spatial
      = 1, i.e. one value per group).
- PyTorch reports a few refusals as RuntimeError, the type of its internal failures and of
  out-of-memory too, so those are never translated; the ones a case can reach are checked
  before the call instead, with PyTorch's wording: F.group_norm's "Expected at least 2
  dimensions" and "Expected number of channels in input to be divisible by num_groups".
  Mixed parameter dtypes ("mixed dtype (CPU)", "expected scalar type") cannot arise: every
  tensor is passed in x's dtype.
- Anything else stays an ERROR: any other exception, any exception raised in this adapter's
  own code (a ValueError from NumPy here is a bug, not a refusal), a crash, a timeout.
- Results are never judged here: NaN, inf or wrong values go back to normcheck as they are
  (FAILED by its checks), and a wrong shape or dtype is normcheck's ERROR.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from normcheck_worker import Skip, exact, one_plus, serve  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:
    sys.stderr.write(f"torch_backend: {e} (pip install torch)\n")
    sys.exit(3)

TORCH = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
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


# Backward (module docstring): the leaf tensor made for each input name, while GRAD[0] is set.
GRAD = [False]
LEAVES = {}


def leaf(t, grad):
    """t, made a leaf that requires grad and recorded as input `grad`'s in a backward run."""
    if GRAD[0] and grad is not None:
        t.requires_grad_(True)
        LEAVES[grad] = t
    return t


def tensor(a, dt, what, grad=None):
    """A torch tensor of dtype dt on DEVICE holding exactly the values of NumPy array a; SKIPPED
    (exact()) when some value is not a value of dt. bf16 values travel as float32, whose
    conversion to torch.bfloat16 is then exact. `grad`: the input whose gradient it carries."""
    v = exact(a, dt, f"torch: {what} in {dt}")
    return leaf(torch.from_numpy(np.ascontiguousarray(v)).to(TORCH[dt]).to(DEVICE), grad)


def view_tensor(req, inputs, name, dt, what, grad=None):
    """Input `name` as a torch tensor of dtype dt on DEVICE laid out as normcheck sent it: with
    protocol 2, torch.as_strided over the whole storage (its padding included) with the
    request's strides and offset, so PyTorch's kernels are handed the view itself. Its values
    are checked as tensor() does (SKIPPED unless exact in dt)."""
    a = inputs[name][0]
    spec = req["inputs"][name]
    if "strides" not in spec:
        return tensor(a, dt, what, grad)
    exact(a, dt, f"torch: {what} in {dt}")
    storage = np.load(spec["path"], allow_pickle=False)  # the 1-D storage; NaN padding stays NaN in dt
    base = torch.from_numpy(storage).to(TORCH[dt]).to(DEVICE)
    return leaf(torch.as_strided(base, [int(d) for d in spec["shape"]], [int(s) for s in spec["strides"]], int(spec["offset"])), grad)


TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


def _raised_in_torch(e):
    """Whether the innermost frame of e's traceback is torch's own code (its Python, or a C++
    op it called), not this adapter's."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(TORCH_DIR)


def call(fn_name, fn, *args):
    """fn(*args), with PyTorch's argument refusals (module docstring) turned into Skip."""
    try:
        return fn(*args)
    except (ValueError, NotImplementedError) as e:
        if not _raised_in_torch(e):
            raise
        raise Skip(f"torch: {fn_name} refuses the arguments: {type(e).__name__}: {str(e).splitlines()[0]}") from e


def out(t, dt):
    """An output as the ops return it: the torch tensor and its dtype name (numpy() at the end,
    after a backward pass has used it)."""
    return (t, dt)


def to_numpy(t, dt):
    if not isinstance(t, torch.Tensor):
        return t  # already NumPy (quantized outputs, saved statistics)
    return t.detach().to("cpu").to(torch.float32 if dt == "bf16" else TORCH[dt]).numpy()


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
    if c.get("normalized_dtype") is not None:
        raise Skip(f"torch: {fn} rounds once, at the output; normalized_dtype {c['normalized_dtype']} not expressible")
    return c, dt


def param_dtype(inputs, name, dt):
    """The dtype a parameter reaches PyTorch in: its own when it is f32 beside f16/bf16 data
    (PyTorch's CPU "mixed type" path: F.layer_norm, rms_norm, group_norm, instance_norm and
    batch_norm take float32 weight, bias and running stats with reduced-precision input, and
    keep their statistics in float32) when every parameter is f32 (PyTorch refuses a mix:
    "mixed dtype (CPU): expect parameter to have scalar type of Float"), else x's (exact()
    refuses a value x's dtype cannot hold)."""
    present = [n for n in ("gamma", "beta", "running_mean", "running_var") if n in inputs]
    mixed = dt in ("f16", "bf16") and all(inputs[n][1] == "f32" for n in present)
    return "f32" if mixed and name in present else dt


def params(inputs, c, dt, fn, bias_ok=True):
    affine = c.get("affine", "none")
    w = b = None
    if affine in ("gamma", "gamma_beta"):
        pdt = param_dtype(inputs, "gamma", dt)
        w = tensor(inputs["gamma"][0], pdt, "gamma", grad="gamma")
    elif affine == "one_plus_w":
        pdt = param_dtype(inputs, "gamma", dt)
        w = tensor(one_plus(inputs["gamma"][0], pdt, "torch"), pdt, "1 + gamma", grad="gamma")
    if affine == "gamma_beta":
        if not bias_ok:
            raise Skip(f"torch: {fn} has no bias (affine gamma_beta not expressible)")
        b = tensor(inputs["beta"][0], param_dtype(inputs, "beta", dt), "beta", grad="beta")
    return w, b


def layer_norm(req, inputs):
    c, dt = common(req, inputs, "F.layer_norm")
    w, b = params(inputs, c, dt, "F.layer_norm")
    ns = list(c["normalized_shape"])
    x = view_tensor(req, inputs, "x", dt, "x", grad="x")
    return {"y": out(call("F.layer_norm", F.layer_norm, x, ns, w.reshape(ns) if w is not None else None,
                          b.reshape(ns) if b is not None else None, float(c["eps"])), dt)}


def rms_norm(req, inputs):
    if not hasattr(F, "rms_norm"):
        raise Skip(f"torch {torch.__version__} has no F.rms_norm (2.4+)")
    c, dt = common(req, inputs, "F.rms_norm")
    w, _ = params(inputs, c, dt, "F.rms_norm", bias_ok=False)
    ns = list(c["normalized_shape"])
    x = view_tensor(req, inputs, "x", dt, "x", grad="x")
    return {"y": out(call("F.rms_norm", F.rms_norm, x, ns, w.reshape(ns) if w is not None else None,
                          float(c["eps"])), dt)}


def group_norm(req, inputs):
    c, dt = common(req, inputs, "F.group_norm")
    w, b = params(inputs, c, dt, "F.group_norm")
    x = view_tensor(req, inputs, "x", dt, "x", grad="x")
    g = int(c["num_groups"])
    if x.dim() < 2:  # RuntimeError in PyTorch: checked here (module docstring)
        raise Skip(f"torch: F.group_norm refuses the arguments: Expected at least 2 dimensions for input tensor "
                   f"but received {x.dim()}")
    if g < 1 or x.shape[1] % g != 0:
        raise Skip(f"torch: F.group_norm refuses the arguments: Expected number of channels in input to be "
                   f"divisible by num_groups, but got input of shape {list(x.shape)} and num_groups={g}")
    return {"y": out(call("F.group_norm", F.group_norm, x, g, w, b, float(c["eps"])), dt)}


def instance_norm(req, inputs):
    c, dt = common(req, inputs, "F.instance_norm")
    w, b = params(inputs, c, dt, "F.instance_norm")
    x = view_tensor(req, inputs, "x", dt, "x", grad="x")
    return {"y": out(call("F.instance_norm", F.instance_norm, x, None, None, w, b, True, 0.0, float(c["eps"])), dt)}


def batch_norm(req, inputs):
    c, dt = common(req, inputs, "F.batch_norm")
    w, b = params(inputs, c, dt, "F.batch_norm")
    training = bool(c.get("training", True))
    track = bool(c.get("track_running_stats", True))
    if training and track and c.get("running_variance", "unbiased") != "unbiased":
        raise Skip("F.batch_norm updates running_var with the unbiased batch variance only")
    x = view_tensor(req, inputs, "x", dt, "x", grad="x")
    steps = list(x) if c.get("sequence", False) else [x]
    rm = tensor(inputs["running_mean"][0], param_dtype(inputs, "running_mean", dt), "running_mean").clone() if track else None
    rv = tensor(inputs["running_var"][0], param_dtype(inputs, "running_var", dt), "running_var").clone() if track else None
    nbt = int(c.get("num_batches_tracked", 0))
    ys = []
    for xs in steps:
        if training and track:
            nbt += 1
            m = c.get("momentum")
            factor = 1.0 / nbt if m is None else float(m)
        else:
            factor = 0.0
        ys.append(call("F.batch_norm", F.batch_norm, xs, rm, rv, w, b, training or not track, factor, float(c["eps"])))
    y = torch.stack(ys) if c.get("sequence", False) else ys[0]
    res = {"y": out(y, dt)}
    if track:
        for name, t in (("running_mean", rm), ("running_var", rv)):
            spec = req["outputs"].get(name)
            if spec is None:
                continue  # a backward request asks for gradients only
            if TORCH[spec["dtype"]] != t.dtype:
                raise Skip(f"torch: F.batch_norm keeps {name} in {t.dtype}; the case asks for it in {spec['dtype']}")
            res[name] = out(t, spec["dtype"])
    return res


def l2_normalize(req, inputs):
    c, dt = common(req, inputs, "F.normalize", placements=("clamp_norm",))
    x = view_tensor(req, inputs, "x", dt, "x", grad="x")
    axes = c.get("axes") or list(range(x.ndim - len(c.get("normalized_shape", [1])), x.ndim))
    dim = axes[0] if len(axes) == 1 else tuple(axes)
    return {"y": out(call("F.normalize", F.normalize, x, 2.0, dim, float(c["eps"])), dt)}


def wanted(req, *names):
    """Whether the request asks for any of these outputs (the optional saved statistics)."""
    return any(n in req["outputs"] for n in names)


def stat(res, t, req, name):
    """Adds saved statistic `name` to res when PyTorch keeps it in the dtype the convention
    names (the accumulation type, f32 or f64). PyTorch's CPU native_layer_norm keeps the mean
    and rstd of f16/bf16 data in that dtype (a convention of its own, not a wrong value), so
    those are not returned: normcheck reports them as not returned, not checked."""
    spec = req["outputs"][name]
    dt = spec["dtype"]
    if t.dtype != TORCH[dt]:
        return
    res[name] = (t.detach().to("cpu").reshape(spec["shape"]).numpy(), dt)


def layer_norm_with_stats(req, inputs):
    res = layer_norm(req, inputs)
    if wanted(req, "mean", "rstd"):
        c = req["convention"]
        dt = inputs["x"][1]
        w, b = params(inputs, c, dt, "torch.native_layer_norm")
        ns = list(c["normalized_shape"])
        x = tensor(inputs["x"][0], dt, "x")
        _, mean, rstd = call("torch.native_layer_norm", torch.native_layer_norm, x, ns, w.reshape(ns) if w is not None else None,
                             b.reshape(ns) if b is not None else None, float(c["eps"]))
        stat(res, mean, req, "mean")
        stat(res, rstd, req, "rstd")
    return res


def rms_norm_with_stats(req, inputs):
    res = rms_norm(req, inputs)
    if wanted(req, "rstd") and hasattr(torch.ops.aten, "_fused_rms_norm"):
        c = req["convention"]
        dt = inputs["x"][1]
        w, _ = params(inputs, c, dt, "F.rms_norm", bias_ok=False)
        ns = list(c["normalized_shape"])
        x = tensor(inputs["x"][0], dt, "x")
        _, rstd = call("aten._fused_rms_norm", torch.ops.aten._fused_rms_norm, x, ns, w.reshape(ns) if w is not None else None,
                       float(c["eps"]))
        stat(res, rstd, req, "rstd")
    return res


def group_norm_with_stats(req, inputs):
    res = group_norm(req, inputs)
    if wanted(req, "mean", "rstd"):
        c = req["convention"]
        dt = inputs["x"][1]
        w, b = params(inputs, c, dt, "torch.native_group_norm")
        x = tensor(inputs["x"][0], dt, "x")
        hw = int(np.prod(x.shape[2:])) if x.dim() > 2 else 1
        _, mean, rstd = call("torch.native_group_norm", torch.native_group_norm, x, w, b, x.shape[0], x.shape[1], hw,
                             int(c["num_groups"]), float(c["eps"]))
        stat(res, mean, req, "mean")
        stat(res, rstd, req, "rstd")
    return res


def batch_norm_with_stats(req, inputs):
    res = batch_norm(req, inputs)
    if wanted(req, "mean", "rstd"):  # asked only for one call with batch statistics
        c = req["convention"]
        dt = inputs["x"][1]
        w, b = params(inputs, c, dt, "torch.native_batch_norm")
        x = tensor(inputs["x"][0], dt, "x")
        _, mean, invstd = call("torch.native_batch_norm", torch.native_batch_norm, x, w, b, None, None, True, 0.0, float(c["eps"]))
        stat(res, mean, req, "mean")
        stat(res, invstd, req, "rstd")
    return res


# ---- fused residual add + norm, norm + quantization (issue 16) ----------------------------------

ACC = {"f64": torch.float64, "f32": torch.float32}
QMAX = {"fp8_e4m3fn": 448.0, "fp8_e5m2": 57344.0, "int8": 127.0}
QTORCH = {"fp8_e4m3fn": getattr(torch, "float8_e4m3fn", None), "fp8_e5m2": getattr(torch, "float8_e5m2", None), "int8": torch.int8}


def fused_common(req, inputs, fn):
    """The convention checks of the fused and quantizing norms; returns (c, x dtype, acc dtype)."""
    c = req["convention"]
    dt = inputs["x"][1]
    if c.get("eps_placement", "inside_sqrt") != "inside_sqrt":
        raise Skip(f"torch: eps_placement {c['eps_placement']} not expressible with {fn} (rsqrt(var + eps))")
    if c.get("variance", "biased") != "biased":
        raise Skip(f"torch: {c['variance']} variance not expressible with {fn} (mean)")
    acc = c.get("acc_dtype", "f32")
    if acc != OPMATH[dt]:
        raise Skip(f"torch: {fn} on {dt} computes in {OPMATH[dt]}; the case expects {acc}")
    return c, dt, acc


def norm_input(req, inputs, c, dt, acc):
    """The norm's input z in the accumulation type, and h (or None without a residual)."""
    x = view_tensor(req, inputs, "x", dt, "x").to(ACC[acc])
    if "residual" not in inputs:
        return x, None
    rdt = inputs["residual"][1]
    s = x + view_tensor(req, inputs, "residual", rdt, "residual").to(ACC[acc])
    if "bias" in inputs:
        s = s + tensor(inputs["bias"][0], inputs["bias"][1], "bias").to(ACC[acc])
    h = s.to(TORCH[rdt])
    return (h.to(ACC[acc]) if c.get("norm_input", "rounded") == "rounded" else s), h


def norm(req, inputs, c, dt, acc, centered, z):
    """The norm of z as the torch references write it, in x's dtype."""
    ns = list(c["normalized_shape"])
    affine = c.get("affine", "none")
    eps = float(c["eps"])
    if centered:
        w = b = None
        if affine in ("gamma", "gamma_beta"):
            w = tensor(inputs["gamma"][0], inputs["gamma"][1], "gamma").to(ACC[acc]).reshape(ns)
        elif affine == "one_plus_w":
            w = 1.0 + tensor(inputs["gamma"][0], inputs["gamma"][1], "gamma").to(ACC[acc]).reshape(ns)
        if affine == "gamma_beta":
            b = tensor(inputs["beta"][0], inputs["beta"][1], "beta").to(ACC[acc]).reshape(ns)
        return call("F.layer_norm", F.layer_norm, z, ns, w, b, eps).to(TORCH[dt])
    dims = tuple(range(z.dim() - len(ns), z.dim()))
    n = z * torch.rsqrt(z.pow(2).mean(dim=dims, keepdim=True) + eps)
    if affine == "none":
        return n.to(TORCH[dt])
    g = tensor(inputs["gamma"][0], inputs["gamma"][1], "gamma").reshape(ns)
    if affine == "one_plus_w":
        return (n * (1.0 + g.to(ACC[acc]))).to(TORCH[dt])  # GemmaRMSNorm: (1 + w) in float
    y = n.to(TORCH[dt]) * g.to(TORCH[dt])  # HF / vLLM: weight * hidden.to(input_dtype)
    if affine == "gamma_beta":
        y = y + tensor(inputs["beta"][0], inputs["beta"][1], "beta").reshape(ns).to(TORCH[dt])
    return y


def fused_add(req, inputs, centered):
    fn = "fused_add_layer_norm" if centered else "fused_add_rms_norm"
    c, dt, acc = fused_common(req, inputs, fn)
    if req["out_dtype"] != dt:
        raise Skip(f"torch: the {fn} reference returns x's dtype; out_dtype {req['out_dtype']} != x {dt}")
    z, h = norm_input(req, inputs, c, dt, acc)
    return {"y": out(norm(req, inputs, c, dt, acc, centered, z), dt), "h": out(h, inputs["residual"][1])}


def quant_norm(req, inputs, centered):
    fn = "layer_norm_quant" if centered else "rms_norm_quant"
    c, dt, acc = fused_common(req, inputs, fn)
    q = req["out_dtype"]
    if QTORCH.get(q) is None:
        raise Skip(f"torch {torch.__version__} has no dtype for {q}")
    if c.get("rounding", "nearest_even") != "nearest_even":
        raise Skip("torch: torch.round and the float8 casts round half to even; rounding nearest_away not expressible")
    z, h = norm_input(req, inputs, c, dt, acc)
    y = norm(req, inputs, c, dt, acc, centered, z).to(ACC[acc])  # the reference's y, in x's dtype
    ns = list(c["normalized_shape"])
    dims = tuple(range(y.dim() - len(ns), y.dim()))
    multiplier = c.get("scale_form", "divisor") == "multiplier"
    res = {}
    if c.get("quant_scale", "dynamic_per_token") == "dynamic_per_token":
        s = y.abs().amax(dim=dims, keepdim=True) / QMAX[q]
        if float(c.get("scale_floor", 0.0)) > 0:
            s = s.clamp(min=float(c["scale_floor"]))
        v = y * (1.0 / s) if multiplier else y / s
        res["scale"] = (((1.0 / s) if multiplier else s).reshape(-1).to(torch.float32).to("cpu").numpy(), "f32")
    else:
        sc = tensor(inputs["scale"][0], inputs["scale"][1], "scale").to(ACC[acc]).reshape(())
        v = y * sc if multiplier else y / sc
    if q == "int8":
        v = v.round()
    if c.get("saturate", True):
        v = v.clamp(-128.0 if q == "int8" else -QMAX[q], QMAX[q])
    yq = v.to(QTORCH[q])
    res["y"] = (yq.to("cpu").to(torch.int8 if q == "int8" else torch.float32).numpy(), q)
    if h is not None:
        res["h"] = out(h, inputs["residual"][1])
    return res


OPS = {"layer_norm": layer_norm_with_stats, "rms_norm": rms_norm_with_stats, "group_norm": group_norm_with_stats,
       "instance_norm": instance_norm, "batch_norm": batch_norm_with_stats, "l2_normalize": l2_normalize,
       "fused_add_rms_norm": lambda r, i: fused_add(r, i, False), "fused_add_layer_norm": lambda r, i: fused_add(r, i, True),
       "rms_norm_quant": lambda r, i: quant_norm(r, i, False), "layer_norm_quant": lambda r, i: quant_norm(r, i, True)}


BACKWARD = {"layer_norm", "rms_norm", "group_norm", "instance_norm", "batch_norm", "l2_normalize"}


def backward(req, inputs, f):
    """The gradients the request asks for ("dx", "dgamma", ...), by autograd: the forward with
    requires_grad on x and the parameters, then y.backward(dy)."""
    if req["op"] not in BACKWARD:
        raise Skip(f"torch: no autograd wiring for {req['op']}'s backward")
    LEAVES.clear()
    GRAD[0] = True
    try:
        y, dt = f(req, inputs)["y"]
    finally:
        GRAD[0] = False
    dy = view_tensor(req, inputs, "dy", inputs["dy"][1], "dy")
    if dy.dtype != y.dtype:
        raise Skip(f"torch: y is {y.dtype}, dy {dy.dtype}: autograd wants one dtype")
    y.backward(dy)
    res = {}
    for name, spec in req["outputs"].items():
        t = LEAVES.get(name[1:]) if name.startswith("d") else None
        if t is None or t.grad is None:
            raise Skip(f"torch: no gradient for {name[1:]} from autograd")
        if t.grad.dtype != TORCH[spec["dtype"]]:
            raise Skip(f"torch: {name} is {t.grad.dtype}; the case asks for {spec['dtype']}")
        res[name] = (t.grad.reshape([int(d) for d in spec["shape"]]), spec["dtype"])
    return res


def evaluate(req, inputs):
    f = OPS.get(req["op"])
    if f is None:
        raise Skip(f"torch: no torch.nn.functional op wired for {req['op']}")
    if req["convention"].get("direction") == "backward":
        res = backward(req, inputs, f)
    else:
        with torch.no_grad():
            res = f(req, inputs)
    return {k: (to_numpy(t, dt), dt) for k, (t, dt) in res.items()}


if __name__ == "__main__":
    serve(NAME, evaluate, backward=True)
