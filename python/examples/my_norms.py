"""Example implementations under test: LayerNorm and RMSNorm in NumPy (float64 arithmetic,
one rounding to the output dtype), a deliberately wrong LayerNorm, and PyTorch's CPU
LayerNorm and RMSNorm. Each takes a normcheck.Problem and returns y (README "Python")."""

import numpy as np

import normcheck
from normcheck import worker

# Everything in float64 is exact enough for f32/f16/bf16 data (their squares cannot overflow
# or underflow binary64; the sums carry ~1e-16 relative error against a gate of ~1e-7 and
# above). binary64 data would need range scaling and more: skipped, honestly.
_SUPPORTED = {"f32", "f16", "bf16"}


def _row_norm(p, center, eps_outside=False):
    c = p.convention
    if p.dtypes["x"] not in _SUPPORTED or p.out_dtype not in _SUPPORTED:
        raise normcheck.Skip("binary64 data is not implemented")
    x = np.array(p.x, dtype=np.float64)
    axes = tuple(range(x.ndim - len(c["normalized_shape"]), x.ndim))
    # normcheck's convention (README "Findings"): a group holding NaN or inf is NaN throughout.
    finite = np.all(np.isfinite(x), axis=axes, keepdims=True)
    x = np.where(finite, x, 0.0)
    m = int(np.prod(c["normalized_shape"]))
    d = x - x.mean(axis=axes, keepdims=True) if center else x
    dof = m - 1 if c["variance"] == "unbiased" else m
    v = (d * d).sum(axis=axes, keepdims=True) / dof
    eps = np.float64(c["eps"])
    placement = "outside_sqrt" if eps_outside else c["eps_placement"]
    with np.errstate(divide="ignore", invalid="ignore"):
        D = {"inside_sqrt": lambda: np.sqrt(v + eps), "outside_sqrt": lambda: np.sqrt(v) + eps,
             "clamp_var": lambda: np.sqrt(np.maximum(v, eps)), "clamp_norm": lambda: np.maximum(np.sqrt(v), eps)}[placement]()
        n = np.where(finite, d / D, np.nan)
    if c.get("normalized_dtype"):
        n = worker.round_to(n, c["normalized_dtype"])
    g = None if p.gamma is None else np.asarray(p.gamma, dtype=np.float64)
    b = None if p.beta is None else np.asarray(p.beta, dtype=np.float64)
    affine = c["affine"]
    if affine == "gamma_beta":
        n = n * g + b
    elif affine == "gamma":
        n = n * g
    elif affine == "one_plus_w":
        n = n * (1.0 + g)
    return worker.round_to(n, p.out_dtype)


def numpy_layer_norm(p):
    return _row_norm(p, center=True)


def numpy_rms_norm(p):
    return _row_norm(p, center=False)


def faulty_layer_norm(p):
    """LayerNorm with eps added to the standard deviation instead of the variance."""
    return _row_norm(p, center=True, eps_outside=True)


def torch_norm(p):
    """PyTorch's F.layer_norm / F.rms_norm on the CPU, in the data's dtype."""
    import torch
    import torch.nn.functional as F

    c = p.convention
    if c["eps_placement"] != "inside_sqrt" or c["variance"] != "biased" or c.get("normalized_dtype"):
        raise normcheck.Skip("PyTorch: eps inside the sqrt, biased variance, one rounding only")
    if c["affine"] not in ("none", "gamma", "gamma_beta") or p.out_dtype != p.dtypes["x"]:
        raise normcheck.Skip("PyTorch: y in x's dtype, affine gamma[, beta]")
    if p.op == "rms_norm" and c["affine"] == "gamma_beta":
        raise normcheck.Skip("F.rms_norm has no bias")
    x, g, b = p.torch("x"), p.torch("gamma"), p.torch("beta")
    if g is not None and g.dtype != x.dtype:
        raise normcheck.Skip("PyTorch: parameters in x's dtype")
    shape = list(c["normalized_shape"])
    if p.op == "layer_norm":
        y = F.layer_norm(x, shape, g, b, c["eps"])
    else:
        y = F.rms_norm(x, shape, g, c["eps"])
    return y
