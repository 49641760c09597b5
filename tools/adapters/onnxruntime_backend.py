#!/usr/bin/env python3
"""ONNX Runtime (CPU) as a normcheck backend: `normcheck run --backend cmd:"python3 tools/adapters/onnxruntime_backend.py"`.

Each problem becomes a one-node ONNX graph (built with onnx.helper; sessions are cached per
op, convention, dtypes and shapes) run on the CPUExecutionProvider with default graph
optimizations, as a user would run it. Parameters are graph inputs, so no constant folding
changes the numerics. Protocol: tools/adapters/normcheck_worker.py.

Convention mapping (anything else is SKIPPED with the reason, never approximated):
- layer_norm -> LayerNormalization (opset 17): axis = -len(normalized_shape), stash_type =
  1 (f32) or 11 (f64) from acc_dtype; eps_placement inside_sqrt and biased variance only.
  Affine none: Scale = ones (y = 1 * n is exact); gamma: Scale = gamma, no B; gamma_beta:
  Scale, B; one_plus_w: Scale = 1 + gamma when every 1 + gamma is a value of the dtype
  (then identical to forming 1 + w in the kernel), else SKIPPED.
- rms_norm -> RMSNormalization (opset 23) when the installed onnx has it; no bias input, so
  gamma_beta is SKIPPED.
- group_norm -> GroupNormalization (opset 21, per-channel scale and bias), instance_norm ->
  InstanceNormalization, batch_norm -> BatchNormalization (eval mode with running stats;
  training mode without running stats, and with them when running_variance = biased: ONNX
  updates running_var with the biased batch variance, with momentum = 1 - normcheck's, which
  must survive the float32 attribute exactly).
- epsilon is a float32 attribute in ONNX: eps is rounded to binary32. For f32, f16 and bf16
  outputs that perturbs y by a relative < 2^-25 (< ulp/2, adds < 1 to stab); an f64 output
  would resolve it, so f64 problems whose eps is not a binary32 value are SKIPPED.
- Y has X's type: out_dtype must equal x's dtype. bf16 travels through exact Cast nodes
  (float32 <-> bfloat16) because NumPy has no bfloat16.
- layer_norm's saved statistics (optional outputs mean, rstd): LayerNormalization's Mean and
  InvStdDev outputs, in the stash type. The other operators have no such outputs.
- fused_add_layer_norm -> SkipLayerNormalization, fused_add_rms_norm ->
  SkipSimplifiedLayerNormalization (com.microsoft, ONNX Runtime's contrib operators): skip =
  residual (of x's type, else SKIPPED), gamma, beta (LayerNorm only), bias; y = output, h =
  input_skip_bias_sum. Last-axis normalization, float accumulation.
- l2_normalize -> LpNormalization (p = 2, opset 1), f32 and f64 (ONNX Runtime registers no
  other type): one axis; it divides by ||x|| with no eps and maps a zero group to 0
  (lp_norm.cc). That is the clamp_norm convention x / max(||x||, eps) exactly where every
  group's norm is at least eps and nonzero, checked here in binary64 with a relative margin
  of 1e-9 (far above its rounding error); a case where eps or 0/0 would decide is SKIPPED.
- rms_norm_quant, layer_norm_quant are not wired (SKIPPED): ONNX would need a graph of the
  norm, a per-row ReduceMax and QuantizeLinear, not one operator under test.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from normcheck_worker import NUMPY, Skip, exact, one_plus, serve  # noqa: E402

try:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper
except ImportError as e:  # a worker that cannot start says why on stderr and exits
    sys.stderr.write(f"onnxruntime_backend: {e} (pip install onnx onnxruntime)\n")
    sys.exit(3)

ONNX_TYPE = {"f64": TensorProto.DOUBLE, "f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16,
             "bf16": TensorProto.BFLOAT16}
STASH = {"f32": TensorProto.FLOAT, "f64": TensorProto.DOUBLE}
NAME = f"onnxruntime {ort.__version__} CPU (onnx {onnx.__version__})"

_sessions = {}


def _has_op(op, version):
    try:
        onnx.defs.get_schema(op, version, "")
        return True
    except Exception:
        return False


def _session(key, nodes, in_names, out_names, dtype, opset, out_types=None, domains=()):
    """A cached InferenceSession of the graph `nodes`. bf16 graphs take and give float32 and
    cast at the edges (exact both ways for bf16 values). out_types: ONNX types of outputs that
    do not have x's type (saved statistics in the stash type); domains: further opset imports
    as (domain, version), e.g. ("com.microsoft", 1) for ONNX Runtime's contrib operators."""
    out_types = out_types or {}
    if key in _sessions:
        return _sessions[key]
    t = ONNX_TYPE[dtype]
    io_t = TensorProto.FLOAT if dtype == "bf16" else t
    nodes = list(nodes)
    ins, outs = [], []
    for n in in_names:
        if dtype == "bf16":
            nodes.insert(0, helper.make_node("Cast", [n + "_f32"], [n], to=t))
            ins.append(helper.make_tensor_value_info(n + "_f32", io_t, None))
        else:
            ins.append(helper.make_tensor_value_info(n, io_t, None))
    for n in out_names:
        if dtype == "bf16":
            nodes.append(helper.make_node("Cast", [n], [n + "_f32"], to=TensorProto.FLOAT))
            outs.append(helper.make_tensor_value_info(n + "_f32", TensorProto.FLOAT, None))
        else:
            outs.append(helper.make_tensor_value_info(n, out_types.get(n, io_t), None))
    graph = helper.make_graph(nodes, "normcheck", ins, outs)
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in domains]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = helper.find_min_ir_version_for(opsets[:1])  # the contrib domains have no IR table
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    try:
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    except Exception as e:
        msg = str(e)
        if "Type Error" in msg and "is invalid" in msg:  # the operator's schema excludes the type
            raise Skip(f"onnxruntime: the ONNX schema of this operator does not accept {dtype}: "
                       f"{msg.splitlines()[0][:200]}")
        if "NOT_IMPLEMENTED" in msg or "Could not find an implementation" in msg:
            raise Skip(f"onnxruntime: no CPU kernel for {nodes[-1].op_type if dtype != 'bf16' else 'this graph'} "
                       f"in {dtype}: {msg.splitlines()[0][:200]}")
        raise
    _sessions[key] = sess
    return sess


def _run(sess, feeds, dtype):
    if dtype == "bf16":
        feeds = {k + "_f32": v.astype(np.float32) for k, v in feeds.items()}
    return sess.run(None, feeds)


def _epsilon(c, out_dtype):
    eps = float(c["eps"])
    e32 = np.float32(eps)
    if not np.isfinite(e32):
        raise Skip(f"onnxruntime: eps = {eps!r} overflows the float32 epsilon attribute")
    if float(e32) != eps and out_dtype == "f64":
        raise Skip(f"onnxruntime: epsilon is a float32 attribute; eps = {eps!r} is not a binary32 value and an f64 "
                   "output resolves the difference")
    return float(e32)


def _common(req, inputs, op_name):
    c = req["convention"]
    dt = inputs["x"][1]
    if req["out_dtype"] != dt:
        raise Skip(f"onnxruntime: {op_name}'s output has the input's type; out_dtype {req['out_dtype']} != x {dt}")
    if c.get("eps_placement", "inside_sqrt") != "inside_sqrt":
        raise Skip(f"onnxruntime: eps_placement {c['eps_placement']} not expressible "
                   f"({op_name} divides by sqrt(var + epsilon))")
    if c.get("variance", "biased") != "biased":
        raise Skip(f"onnxruntime: {c['variance']} variance not expressible ({op_name} uses 1/m)")
    if c.get("normalized_dtype") not in (None, dt):
        # The specification casts Normalized to X's type (normalized_dtype = x's dtype); ONNX
        # Runtime 1.32's CPU kernels round once (normalized_dtype none). Either is run, ONNX
        # Runtime judged by it; a third dtype is no ONNX order.
        raise Skip(f"onnxruntime: {op_name} rounds Normalized to X's type ({dt}) or not at all, not to {c['normalized_dtype']}")
    return c, dt


def _param(inputs, name, dt, shape, affine):
    """gamma / beta as values of x's type (exact, else SKIPPED), or the neutral value for the
    affine convention. bf16 values travel as float32; the graph's Cast to bfloat16 is then exact."""
    np_t = NUMPY.get(dt, np.float32)
    if name == "gamma":
        if affine == "none":
            return np.ones(shape, np_t)
        if affine == "one_plus_w":
            return one_plus(inputs["gamma"][0], dt, "onnxruntime").reshape(shape)
    if name == "beta" and affine != "gamma_beta":
        return np.zeros(shape, np_t)
    return exact(inputs[name][0], dt, f"onnxruntime: {name} in {dt}").reshape(shape)


def _x(inputs, dt):
    return inputs["x"][0].astype(np.float32 if dt == "bf16" else NUMPY[dt])


def layer_norm(req, inputs):
    c, dt = _common(req, inputs, "LayerNormalization")
    acc = c.get("acc_dtype", "f32")
    if acc not in STASH:
        raise Skip(f"onnxruntime: stash_type (accumulation) {acc} not offered (f32, f64)")
    x = _x(inputs, dt)
    ns = tuple(c["normalized_shape"])
    eps = _epsilon(c, req["out_dtype"])
    affine = c.get("affine", "none")
    names = ["X", "Scale"] + (["B"] if affine == "gamma_beta" else [])
    # The saved statistics, when asked: LayerNormalization's optional outputs Mean and
    # InvStdDev (in the stash type), shape [rows..., 1...], reshaped to normcheck's [rows].
    stats = "mean" in req["outputs"] or "rstd" in req["outputs"]
    outs = ["Y", "Mean", "InvStdDev"] if stats else ["Y"]
    node = helper.make_node("LayerNormalization", names, outs, axis=-len(ns), epsilon=eps, stash_type=STASH[acc])
    key = ("ln", dt, x.shape, ns, eps, acc, affine, stats)
    sess = _session(key, [node], names, outs, dt, 17, out_types={"Mean": STASH[acc], "InvStdDev": STASH[acc]})
    feeds = {"X": x, "Scale": _param(inputs, "gamma", dt, ns, affine)}
    if affine == "gamma_beta":
        feeds["B"] = _param(inputs, "beta", dt, ns, affine)
    r = _run(sess, feeds, dt)
    res = {"y": (r[0], dt)}
    if stats:
        for name, a in (("mean", r[1]), ("rstd", r[2])):
            if name in req["outputs"]:
                spec = req["outputs"][name]
                res[name] = (np.asarray(a).astype(NUMPY[spec["dtype"]]).reshape(spec["shape"]), spec["dtype"])
    return res


def rms_norm(req, inputs):
    if not _has_op("RMSNormalization", 23):
        raise Skip(f"onnxruntime: the installed onnx {onnx.__version__} has no RMSNormalization (opset 23)")
    c, dt = _common(req, inputs, "RMSNormalization")
    acc = c.get("acc_dtype", "f32")
    if acc not in STASH:
        raise Skip(f"onnxruntime: stash_type (accumulation) {acc} not offered (f32, f64)")
    affine = c.get("affine", "none")
    if affine == "gamma_beta":
        raise Skip("onnxruntime: RMSNormalization has no bias input (affine gamma_beta not expressible)")
    x = _x(inputs, dt)
    ns = tuple(c["normalized_shape"])
    eps = _epsilon(c, req["out_dtype"])
    node = helper.make_node("RMSNormalization", ["X", "Scale"], ["Y"], axis=-len(ns), epsilon=eps, stash_type=STASH[acc])
    sess = _session(("rms", dt, x.shape, ns, eps, acc, affine), [node], ["X", "Scale"], ["Y"], dt, 23)
    return {"y": (_run(sess, {"X": x, "Scale": _param(inputs, "gamma", dt, ns, affine)}, dt)[0], dt)}


def _channel_op(req, inputs, op_type, opset, attrs):
    c, dt = _common(req, inputs, op_type)
    if c.get("acc_dtype", "f32") not in ("f32", "f64"):
        raise Skip(f"onnxruntime: accumulation in {c['acc_dtype']} not offered")
    x = _x(inputs, dt)
    if x.ndim < 2:
        raise Skip(f"onnxruntime: {op_type} needs x [N, C, ...]")
    affine = c.get("affine", "none")
    cshape = (x.shape[1],)
    eps = _epsilon(c, req["out_dtype"])
    node = helper.make_node(op_type, ["X", "Scale", "B"], ["Y"], epsilon=eps, **attrs)
    sess = _session((op_type, dt, x.shape, eps, affine, tuple(sorted(attrs.items()))), [node], ["X", "Scale", "B"], ["Y"],
                    dt, opset)
    feeds = {"X": x, "Scale": _param(inputs, "gamma", dt, cshape, affine), "B": _param(inputs, "beta", dt, cshape, affine)}
    return {"y": (_run(sess, feeds, dt)[0], dt)}


def group_norm(req, inputs):
    if not _has_op("GroupNormalization", 21):
        raise Skip("onnxruntime: the installed onnx has no GroupNormalization opset 21 (per-channel scale)")
    g = int(req["convention"].get("num_groups", 0))
    if g < 1:
        raise Skip("onnxruntime: group_norm request without num_groups")
    acc = req["convention"].get("acc_dtype", "f32")
    return _channel_op(req, inputs, "GroupNormalization", 21, {"num_groups": g, "stash_type": STASH.get(acc, 1)})


def instance_norm(req, inputs):
    return _channel_op(req, inputs, "InstanceNormalization", 6, {})


def _bn_common(req, inputs):
    """What every BatchNormalization graph needs: x's dtype, x, the affine, the channel shape
    [C], the float32 epsilon, and the node's five input names."""
    cc, dt = _common(req, inputs, "BatchNormalization")
    x = _x(inputs, dt)
    return dt, x, cc.get("affine", "none"), (x.shape[1],), _epsilon(cc, req["out_dtype"]), ["X", "Scale", "B", "mean", "var"]


def batch_norm(req, inputs):
    c = req["convention"]
    training = bool(c.get("training", True))
    track = bool(c.get("track_running_stats", True))
    if c.get("sequence", False):
        raise Skip("onnxruntime: a sequence of BatchNormalization calls with chained running stats is not wired")
    if training and track:
        return _batch_norm_training(req, inputs, c)
    if not training and not track:
        training = True  # no running stats: eval also normalizes with batch statistics
    if training:
        # Batch statistics only (no running stats to report): BatchNormalization-15 still takes
        # input_mean/input_var (5 inputs); with training_mode = 1 they only feed the running
        # outputs, which are not requested, so zeros and ones stand in.
        dt, x, affine, cshape, eps, names = _bn_common(req, inputs)
        node = helper.make_node("BatchNormalization", names, ["Y", "running_mean_out", "running_var_out"], epsilon=eps,
                                training_mode=1)  # training mode must name all 3 outputs
        sess = _session(("bn_batch_stats", dt, x.shape, eps, affine), [node], names, ["Y"], dt, 15)
        feeds = {"X": x, "Scale": _param(inputs, "gamma", dt, cshape, affine), "B": _param(inputs, "beta", dt, cshape, affine),
                 "mean": np.zeros(cshape, dtype=x.dtype), "var": np.ones(cshape, dtype=x.dtype)}
        return {"y": (_run(sess, feeds, dt)[0], dt)}
    # eval with running statistics: y = (x - running_mean) / sqrt(running_var + eps) * gamma + beta
    dt, x, affine, cshape, eps, names = _bn_common(req, inputs)
    node = helper.make_node("BatchNormalization", names, ["Y"], epsilon=eps, training_mode=0)
    sess = _session(("bn_eval", dt, x.shape, eps, affine), [node], names, ["Y"], dt, 15)
    feeds = {"X": x, "Scale": _param(inputs, "gamma", dt, cshape, affine), "B": _param(inputs, "beta", dt, cshape, affine),
             "mean": _param(inputs, "running_mean", dt, cshape, "gamma_beta"),
             "var": _param(inputs, "running_var", dt, cshape, "gamma_beta")}
    out = {"y": (_run(sess, feeds, dt)[0], dt)}
    for k in ("running_mean", "running_var"):  # eval leaves them as they were, in the output's dtype
        if k in req["outputs"]:
            spec = req["outputs"][k]
            out[k] = (np.asarray(inputs[k][0]).astype(NUMPY[spec["dtype"]]).reshape(spec["shape"]), spec["dtype"])
    return out


def _batch_norm_training(req, inputs, c):
    """One training call with running stats: BatchNormalization-15 training_mode = 1, whose
    running_var takes the POPULATION (biased) batch variance and whose momentum weighs the old
    value: running = running * momentum + batch * (1 - momentum). So only running_variance =
    biased is expressible, with momentum = 1 - a; the attribute is a float32, and ONNX Runtime
    forms 1 - momentum again, so a must come back exactly (a = 1 - float32(1 - a)), else SKIPPED
    (momentum 0.1 would run as 0.10000002, moving the running stats by up to 2.4e-7 relative)."""
    if c.get("running_variance", "unbiased") != "biased":
        raise Skip("onnxruntime: BatchNormalization's training mode updates running_var with the biased batch variance; "
                   "the case asks for the unbiased one (running_variance = unbiased)")
    a = c.get("momentum")
    if a is None:
        raise Skip("onnxruntime: BatchNormalization has no cumulative moving average (momentum none)")
    m32 = np.float32(1.0 - float(a))
    if float(m32) != 1.0 - float(a) or float(np.float32(1.0) - m32) != float(a):
        raise Skip(f"onnxruntime: momentum is a float32 attribute; 1 - {a!r} is not held exactly")
    dt, x, affine, cshape, eps, names = _bn_common(req, inputs)
    outs = ["Y", "running_mean", "running_var"]
    node = helper.make_node("BatchNormalization", names, outs, epsilon=eps, momentum=float(m32), training_mode=1)
    sess = _session(("bn_train", dt, x.shape, eps, float(m32), affine), [node], names, outs, dt, 15)
    feeds = {"X": x, "Scale": _param(inputs, "gamma", dt, cshape, affine), "B": _param(inputs, "beta", dt, cshape, affine),
             "mean": _param(inputs, "running_mean", dt, cshape, "gamma_beta"),
             "var": _param(inputs, "running_var", dt, cshape, "gamma_beta")}
    y, rm, rv = _run(sess, feeds, dt)
    return {"y": (y, dt), "running_mean": (rm, dt), "running_var": (rv, dt)}


def fused_add(req, inputs, centered):
    """fused_add_layer_norm -> SkipLayerNormalization, fused_add_rms_norm ->
    SkipSimplifiedLayerNormalization (com.microsoft contrib operators): input = x, skip =
    residual, gamma, beta (LayerNorm only), bias; outputs output (y) and input_skip_bias_sum
    (h). Which value the norm reads is ONNX Runtime's own choice, under test: the adapter
    runs both norm_input conventions alike."""
    op = "SkipLayerNormalization" if centered else "SkipSimplifiedLayerNormalization"
    c, dt = _common(req, inputs, op)
    rdt = inputs["residual"][1]
    if rdt != dt:
        raise Skip(f"onnxruntime: {op} takes skip in the input's type T; residual {rdt} != x {dt}")
    acc = c.get("acc_dtype", "f32")
    if acc != "f32":
        raise Skip(f"onnxruntime: {op} accumulates in float; the case expects {acc}")
    affine = c.get("affine", "none")
    if affine == "gamma_beta" and not centered:
        raise Skip(f"onnxruntime: {op} has no beta input (affine gamma_beta not expressible)")
    x = _x(inputs, dt)
    ns = tuple(c["normalized_shape"])
    if len(ns) != 1:
        raise Skip(f"onnxruntime: {op} normalizes the last axis only; normalized_shape {list(ns)}")
    eps = _epsilon(c, req["out_dtype"])
    has_bias = "bias" in inputs
    names = ["X", "Skip", "Gamma"]
    feeds = {"X": x, "Skip": exact(inputs["residual"][0], dt, f"onnxruntime: residual in {dt}").astype(x.dtype),
             "Gamma": _param(inputs, "gamma", dt, ns, affine)}
    node_in = list(names)
    if centered:
        if affine == "gamma_beta":
            names.append("Beta")
            node_in.append("Beta")
            feeds["Beta"] = _param(inputs, "beta", dt, ns, affine)
        elif has_bias:
            node_in.append("")  # beta absent, bias given
    if has_bias:
        names.append("Bias")
        node_in.append("Bias")
        feeds["Bias"] = exact(inputs["bias"][0], dt, f"onnxruntime: bias in {dt}").astype(x.dtype)
    node = helper.make_node(op, node_in, ["Y", "", "", "H"], domain="com.microsoft", epsilon=eps)
    key = (op, dt, x.shape, eps, affine, has_bias)
    sess = _session(key, [node], names, ["Y", "H"], dt, 17, domains=[("com.microsoft", 1)])
    y, h = _run(sess, feeds, dt)
    return {"y": (y, dt), "h": (h, dt)}


def l2_normalize(req, inputs):
    c = req["convention"]
    dt = inputs["x"][1]
    if req["out_dtype"] != dt:
        raise Skip(f"onnxruntime: LpNormalization's output has the input's type; out_dtype {req['out_dtype']} != x {dt}")
    if dt not in ("f32", "f64"):
        raise Skip(f"onnxruntime: LpNormalization is registered for float and double, not {dt}")
    if c.get("eps_placement", "clamp_norm") != "clamp_norm":
        raise Skip(f"onnxruntime: eps_placement {c['eps_placement']} not expressible (LpNormalization divides by ||x||)")
    x = _x(inputs, dt)
    axes = c.get("axes") or list(range(x.ndim - len(c.get("normalized_shape") or [1]), x.ndim))
    if len(axes) != 1:
        raise Skip(f"onnxruntime: LpNormalization reduces over one axis, not {axes}")
    axis = int(axes[0]) % x.ndim
    eps = float(c["eps"])
    with np.errstate(over="ignore", invalid="ignore"):
        a = np.abs(x.astype(np.float64))
        scale = np.max(a, axis=axis, keepdims=True)
        finite = np.isfinite(scale)
        safe = np.where(finite & (scale > 0), scale, 1.0)
        norm = safe * np.sqrt(np.sum((a / safe) ** 2, axis=axis, keepdims=True))
    small = finite & ((scale == 0) | (norm < eps * (1 + 1e-9)))
    if np.any(small):
        raise Skip(f"onnxruntime: LpNormalization has no eps and maps a zero group to 0; a group here has norm "
                   f"{float(np.min(np.where(small, norm, np.inf))):g} where eps = {eps:g} (or 0/0) decides")
    node = helper.make_node("LpNormalization", ["X"], ["Y"], axis=axis, p=2)
    sess = _session(("lp", dt, x.shape, axis), [node], ["X"], ["Y"], dt, 13)
    return {"y": (_run(sess, {"X": x}, dt)[0], dt)}


OPS = {"layer_norm": layer_norm, "rms_norm": rms_norm, "group_norm": group_norm, "instance_norm": instance_norm,
       "batch_norm": batch_norm, "l2_normalize": l2_normalize, "fused_add_layer_norm": lambda r, i: fused_add(r, i, True),
       "fused_add_rms_norm": lambda r, i: fused_add(r, i, False)}


def evaluate(req, inputs):
    f = OPS.get(req["op"])
    if f is None:
        raise Skip(f"onnxruntime: no ONNX operator wired for {req['op']}")
    return f(req, inputs)


if __name__ == "__main__":
    serve(NAME, evaluate)
