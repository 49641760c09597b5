#!/usr/bin/env python3
"""One framework layer, built with its DEFAULT arguments, as a normcheck backend:

    normcheck probe --backend "cmd:python3 tools/adapters/framework_layer.py keras.LayerNormalization"

The layer is what a user gets from `keras.layers.LayerNormalization()`, `flax.linen.LayerNorm()`,
`torch.nn.LayerNorm(d)`, an ONNX LayerNormalization node without attributes: eps, eps placement,
estimator and the compute dtype are the framework's, whatever the request's convention says.
Only what belongs to the layer's shape and parameters is taken from the request: the normalized
axes (normalized_shape), gamma and beta (ones and zeros when the request has none, which is
the layer's initial state). So `normcheck probe` on it reads the framework's own convention,
and tests/cli/presets_frameworks_test.sh checks that probe names the preset of the same name
(ops/presets.cpp): the catalog verified against the framework itself, where it installs.

Layers (the name is the preset's; each needs its framework, else the worker exits 3 saying so):
  keras.LayerNormalization, keras.RMSNormalization   Keras 3 on the JAX backend (KERAS_BACKEND=jax)
  flax.LayerNorm, flax.RMSNorm                       flax.linen
  pytorch.LayerNorm, pytorch.RMSNorm                 torch.nn
  onnx.LayerNormalization, onnx.RMSNormalization     one node (opset 17 / 23) on ONNX Runtime's CPU provider
  keras.BatchNormalization, flax.BatchNorm,          one training call (the layer's momentum and eps) on
  pytorch.BatchNorm2d                                x [N, C, *spatial] (moved to channels-last for Keras
                                                     and Flax); replies y, running_mean, running_var
  keras.GroupNormalization, flax.GroupNorm            x [N, C, *spatial] (channels-last for Keras, Flax, whose
  (groups=32), pytorch.GroupNorm, onnx.Group...      default is 32 groups: other num_groups SKIPPED; PyTorch's
                                                     and ONNX's num_groups has no default: the request's)
  pytorch.InstanceNorm2d (affine=False),             x [N, C, H, W] / [N, C, *spatial]
  onnx.InstanceNormalization
  pytorch.F.normalize (p=2, dim=1, eps=1e-12),       one axis: the request's (F.normalize's dim=1 default is
  onnx.LpNormalization (p=2, axis=-1)                a shape choice; LpNormalization: the last axis only)
  hf.LlamaRMSNorm, hf.T5LayerNorm, hf.GemmaRMSNorm    the transformers classes themselves (PyTorch), eps 1e-6,
                                                     the weight in x's dtype (a half-precision model); Gemma's
                                                     weight is w of y = (1 + w) n (affine one_plus_w)
  tf.math.l2_normalize (epsilon=1e-12)               TensorFlow (CPU), the request's one axis
  emulated.keras.LayerNormalization                  NumPy only: Keras's formula as written in
                                                     keras/src/ops/nn.py _layer_normalization (Keras 3.15),
                                                     in float32 with epsilon = 1e-3; for tests that run
                                                     without Keras
  emulated.hf.LlamaRMSNorm                           PyTorch: LlamaRMSNorm.forward as written in
                                                     transformers/models/llama/modeling_llama.py (4.46),
                                                     eps 1e-6, weight of x's dtype: the normalized value
                                                     is cast to x's dtype BEFORE the weight (no transformers
                                                     package needed)
Problems of another op, an affine the layer does not have (one_plus_w), or a dtype the
framework path does not take are SKIPPED with the reason. Protocol: normcheck_worker.py.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from normcheck_worker import Skip, round_to, serve  # noqa: E402

LAYERS = {  # name -> (op, framework module the layer needs)
    "keras.LayerNormalization": ("layer_norm", "keras"),
    "keras.RMSNormalization": ("rms_norm", "keras"),
    "flax.LayerNorm": ("layer_norm", "flax"),
    "flax.RMSNorm": ("rms_norm", "flax"),
    "pytorch.LayerNorm": ("layer_norm", "torch"),
    "pytorch.RMSNorm": ("rms_norm", "torch"),
    "onnx.LayerNormalization": ("layer_norm", "onnxruntime"),
    "onnx.RMSNormalization": ("rms_norm", "onnxruntime"),
    "emulated.keras.LayerNormalization": ("layer_norm", "numpy"),
    "keras.BatchNormalization": ("batch_norm", "keras"),
    "flax.BatchNorm": ("batch_norm", "flax"),
    "pytorch.BatchNorm2d": ("batch_norm", "torch"),
    "emulated.hf.LlamaRMSNorm": ("rms_norm", "torch"),
    "hf.LlamaRMSNorm": ("rms_norm", "transformers"),
    "hf.T5LayerNorm": ("rms_norm", "transformers"),
    "hf.GemmaRMSNorm": ("rms_norm", "transformers"),
    "keras.GroupNormalization": ("group_norm", "keras"),
    "flax.GroupNorm": ("group_norm", "flax"),
    "pytorch.GroupNorm": ("group_norm", "torch"),
    "onnx.GroupNormalization": ("group_norm", "onnxruntime"),
    "pytorch.InstanceNorm2d": ("instance_norm", "torch"),
    "onnx.InstanceNormalization": ("instance_norm", "onnxruntime"),
    "pytorch.F.normalize": ("l2_normalize", "torch"),
    "onnx.LpNormalization": ("l2_normalize", "onnxruntime"),
    "tf.math.l2_normalize": ("l2_normalize", "tensorflow"),
}


def params(req, inputs, ns, one_plus_w=False):
    """gamma and beta of the request as float64 arrays of shape ns (ones, zeros when absent).
    one_plus_w: the layer computes (1 + w) n (Gemma): gamma is w (zeros when absent)."""
    aff = req["convention"]["affine"]
    if one_plus_w:
        if aff not in ("none", "one_plus_w"):
            raise Skip(f"the layer computes (1 + w) n; affine {aff} is not that")
        return (inputs["gamma"][0].astype(np.float64).reshape(ns) if "gamma" in inputs else np.zeros(ns)), np.zeros(ns)
    if aff not in ("none", "gamma", "gamma_beta"):
        raise Skip(f"the default layer has y = n * gamma + beta; affine {aff} is not that")
    g = inputs["gamma"][0].astype(np.float64).reshape(ns) if "gamma" in inputs else np.ones(ns)
    b = inputs["beta"][0].astype(np.float64).reshape(ns) if "beta" in inputs else np.zeros(ns)
    return g, b


def make_keras(name):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    import keras
    if keras.backend.backend() != "jax":
        raise SystemExit(f"framework_layer: KERAS_BACKEND={keras.backend.backend()}; this adapter runs Keras on jax")
    policy = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}

    def run(req, x, dt, ns, g, b):
        if dt not in policy:
            raise Skip(f"Keras path: {dt} not wired (f32, f16, bf16)")
        axes = list(range(x.ndim - len(ns), x.ndim))
        axis = axes[0] if len(axes) == 1 else axes
        if name == "keras.LayerNormalization":
            layer = keras.layers.LayerNormalization(axis=axis, dtype=policy[dt])
            layer.build(x.shape)
            layer.set_weights([g, b])
        else:
            if np.any(b != 0):
                raise Skip("keras.RMSNormalization has no bias")
            layer = keras.layers.RMSNormalization(axis=axis, dtype=policy[dt])
            layer.build(x.shape)
            layer.set_weights([g])
        xin = x.astype(np.float16) if dt == "f16" else x.astype(np.float32)
        if dt == "bf16":
            import ml_dtypes
            xin = xin.astype(ml_dtypes.bfloat16)
        return np.asarray(layer(xin)).astype(np.float64)

    def run_bn(x, dt, g, b, rm, rv):
        if dt not in policy:
            raise Skip(f"Keras path: {dt} not wired (f32, f16, bf16)")
        xl = np.moveaxis(x, 1, -1).astype(np.float32)  # Keras's channel axis is the last
        layer = keras.layers.BatchNormalization(dtype=policy[dt])
        layer.build(xl.shape)
        layer.set_weights([g, b, rm, rv])
        y = np.asarray(layer(xl, training=True)).astype(np.float64)
        return (np.moveaxis(y, -1, 1), np.asarray(layer.moving_mean).astype(np.float64),
                np.asarray(layer.moving_variance).astype(np.float64))
    run.bn = run_bn

    def run_gn(x, dt, g, b, groups):
        if dt not in policy:
            raise Skip(f"Keras path: {dt} not wired (f32, f16, bf16)")
        if groups != 32:
            raise Skip(f"keras.GroupNormalization() has groups=32, the case num_groups = {groups}")
        xl = np.moveaxis(x, 1, -1).astype(np.float32)
        layer = keras.layers.GroupNormalization(dtype=policy[dt])
        layer.build(xl.shape)
        layer.set_weights([g, b])
        return np.moveaxis(np.asarray(layer(xl)).astype(np.float64), -1, 1)
    run.gn = run_gn
    return keras.__version__, run


def make_flax(name):
    import jax.numpy as jnp
    import flax
    import flax.linen as nn
    jt = {"f32": jnp.float32, "f16": jnp.float16, "bf16": jnp.bfloat16}

    def run(req, x, dt, ns, g, b):
        if dt not in jt:
            raise Skip(f"flax path: {dt} not wired (f32, f16, bf16; f64 needs jax_enable_x64)")
        axes = tuple(range(x.ndim - len(ns), x.ndim))
        t = jt[dt]
        xin = jnp.asarray(x.astype(np.float32)).astype(t)
        if name == "flax.LayerNorm":
            m = nn.LayerNorm(reduction_axes=axes, feature_axes=axes)
            p = {"scale": jnp.asarray(g, jnp.float32).astype(t), "bias": jnp.asarray(b, jnp.float32).astype(t)}
        else:
            if np.any(b != 0):
                raise Skip("flax.RMSNorm has no bias")
            m = nn.RMSNorm(reduction_axes=axes, feature_axes=axes)
            p = {"scale": jnp.asarray(g, jnp.float32).astype(t)}
        return np.asarray(m.apply({"params": p}, xin).astype(jnp.float32)).astype(np.float64)

    def run_bn(x, dt, g, b, rm, rv):
        if dt not in jt:
            raise Skip(f"flax path: {dt} not wired (f32, f16, bf16)")
        t = jt[dt]
        xl = jnp.asarray(np.moveaxis(x, 1, -1).astype(np.float32)).astype(t)  # Flax's feature axis is the last
        m = nn.BatchNorm(use_running_average=False)
        f32 = lambda a: jnp.asarray(a, jnp.float32)  # noqa: E731  (the variables' default param_dtype)
        y, upd = m.apply({"params": {"scale": f32(g), "bias": f32(b)}, "batch_stats": {"mean": f32(rm), "var": f32(rv)}},
                         xl, mutable=["batch_stats"])
        y = np.asarray(y.astype(jnp.float32)).astype(np.float64)
        st = upd["batch_stats"]
        return np.moveaxis(y, -1, 1), np.asarray(st["mean"]).astype(np.float64), np.asarray(st["var"]).astype(np.float64)
    run.bn = run_bn

    def run_gn(x, dt, g, b, groups):
        if dt not in jt:
            raise Skip(f"flax path: {dt} not wired (f32, f16, bf16)")
        if groups != 32:
            raise Skip(f"flax.linen.GroupNorm() has num_groups=32, the case num_groups = {groups}")
        t = jt[dt]
        xl = jnp.asarray(np.moveaxis(x, 1, -1).astype(np.float32)).astype(t)
        m = nn.GroupNorm()
        y = m.apply({"params": {"scale": jnp.asarray(g, jnp.float32), "bias": jnp.asarray(b, jnp.float32)}}, xl)
        return np.moveaxis(np.asarray(y.astype(jnp.float32)).astype(np.float64), -1, 1)
    run.gn = run_gn
    return flax.__version__, run


def make_torch(name):
    import torch
    tt = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}

    def run(req, x, dt, ns, g, b):
        t = tt[dt]
        with torch.no_grad():
            if name == "emulated.hf.LlamaRMSNorm":
                if np.any(b != 0):
                    raise Skip("LlamaRMSNorm has no bias")
                h = torch.from_numpy(x).to(t)
                input_dtype = h.dtype
                h = h.to(torch.float32)
                variance = h.pow(2).mean(-1, keepdim=True)
                h = h * torch.rsqrt(variance + 1e-6)
                y = torch.from_numpy(g).to(t) * h.to(input_dtype)
                return y.to(torch.float64).numpy()
            if name == "pytorch.LayerNorm":
                m = torch.nn.LayerNorm(list(ns), dtype=t)
                m.bias.copy_(torch.from_numpy(b).to(t))
            else:
                if np.any(b != 0):
                    raise Skip("torch.nn.RMSNorm has no bias")
                m = torch.nn.RMSNorm(list(ns), dtype=t)
            m.weight.copy_(torch.from_numpy(g).to(t))
            y = m(torch.from_numpy(x).to(t))
        return y.to(torch.float64).numpy()

    def run_bn(x, dt, g, b, rm, rv):
        if x.ndim != 4:
            raise Skip(f"pytorch.BatchNorm2d takes x [N, C, H, W], not {x.ndim}-d")
        t = tt[dt]
        m = torch.nn.BatchNorm2d(x.shape[1], dtype=t)
        with torch.no_grad():
            m.weight.copy_(torch.from_numpy(g).to(t))
            m.bias.copy_(torch.from_numpy(b).to(t))
            m.running_mean.copy_(torch.from_numpy(rm).to(t))
            m.running_var.copy_(torch.from_numpy(rv).to(t))
            m.train()
            y = m(torch.from_numpy(x).to(t))
        d = lambda a: a.to(torch.float64).numpy()  # noqa: E731
        return d(y), d(m.running_mean), d(m.running_var)
    run.bn = run_bn

    def run_gn(x, dt, g, b, groups):
        t = tt[dt]
        with torch.no_grad():
            if name == "pytorch.InstanceNorm2d":
                if x.ndim != 4:
                    raise Skip(f"InstanceNorm2d takes x [N, C, H, W], not {x.ndim}-d")
                y = torch.nn.InstanceNorm2d(x.shape[1], dtype=t)(torch.from_numpy(x).to(t))
            else:
                m = torch.nn.GroupNorm(groups, x.shape[1], dtype=t)
                m.weight.copy_(torch.from_numpy(g).to(t))
                m.bias.copy_(torch.from_numpy(b).to(t))
                y = m(torch.from_numpy(x).to(t))
        return y.to(torch.float64).numpy()
    run.gn = run_gn

    def run_l2(x, dt, axis):
        t = tt[dt]
        y = torch.nn.functional.normalize(torch.from_numpy(x).to(t), dim=axis)
        return y.to(torch.float64).numpy()
    run.l2 = run_l2
    return torch.__version__, run


def make_hf(name):
    import torch
    import transformers
    from transformers.models.gemma.modeling_gemma import GemmaRMSNorm
    from transformers.models.llama.modeling_llama import LlamaRMSNorm
    from transformers.models.t5.modeling_t5 import T5LayerNorm
    cls = {"hf.LlamaRMSNorm": LlamaRMSNorm, "hf.T5LayerNorm": T5LayerNorm, "hf.GemmaRMSNorm": GemmaRMSNorm}[name]
    tt = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}

    def run(req, x, dt, ns, g, b):
        if len(ns) != 1:
            raise Skip(f"{name} normalizes the last axis only")
        if np.any(b != 0):
            raise Skip(f"{name} has no bias")
        t = tt[dt]
        m = cls(ns[0]).to(t)  # eps: the class's default, 1e-6
        with torch.no_grad():
            m.weight.copy_(torch.from_numpy(g).to(t))
            y = m(torch.from_numpy(x).to(t))
        return y.to(torch.float64).numpy()
    return f"{transformers.__version__}, torch {torch.__version__}", run


def make_onnx(name):
    import onnxruntime as ort
    from onnx import TensorProto, helper
    ot = {"f32": (TensorProto.FLOAT, np.float32), "f16": (TensorProto.FLOAT16, np.float16)}
    sessions = {}

    def run(req, x, dt, ns, g, b):
        if dt not in ot:
            raise Skip(f"ONNX path: {dt} not wired (f32, f16)")
        ty, npt = ot[dt]
        rms = name == "onnx.RMSNormalization"
        if rms and np.any(b != 0):
            raise Skip("RMSNormalization has no bias")
        key = (dt, x.shape, len(ns))
        if key not in sessions:
            ins = ["X", "Scale"] if rms else ["X", "Scale", "B"]
            node = helper.make_node("RMSNormalization" if rms else "LayerNormalization", ins, ["Y"], axis=-len(ns))
            vi = [helper.make_tensor_value_info("X", ty, list(x.shape)), helper.make_tensor_value_info("Scale", ty, list(ns))]
            if not rms:
                vi.append(helper.make_tensor_value_info("B", ty, list(ns)))
            graph = helper.make_graph([node], "norm", vi, [helper.make_tensor_value_info("Y", ty, list(x.shape))])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23 if rms else 17)])
            model.ir_version = 10
            sessions[key] = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        feed = {"X": x.astype(npt), "Scale": g.astype(npt)}
        if not rms:
            feed["B"] = b.astype(npt)
        return sessions[key].run(["Y"], feed)[0].astype(np.float64)

    def one_node(key, op_type, ins, x, dt, opset, feed, **attrs):
        ty, npt = ot[dt]
        if key not in sessions:
            node = helper.make_node(op_type, [n for n, _ in ins], ["Y"], **attrs)
            vi = [helper.make_tensor_value_info(n, ty, list(s)) for n, s in ins]
            graph = helper.make_graph([node], "norm", vi, [helper.make_tensor_value_info("Y", ty, list(x.shape))])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
            model.ir_version = 10
            sessions[key] = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return sessions[key].run(["Y"], {k: v.astype(npt) for k, v in feed.items()})[0].astype(np.float64)

    def run_gn(x, dt, g, b, groups):
        if dt not in ot:
            raise Skip(f"ONNX path: {dt} not wired (f32, f16)")
        c = (x.shape[1],)
        if name == "onnx.InstanceNormalization":
            return one_node((name, dt, x.shape), "InstanceNormalization", [("X", x.shape), ("S", c), ("B", c)], x, dt, 6,
                            {"X": x, "S": g, "B": b})
        return one_node((name, dt, x.shape, groups), "GroupNormalization", [("X", x.shape), ("S", c), ("B", c)], x, dt, 21,
                        {"X": x, "S": g, "B": b}, num_groups=groups)
    run.gn = run_gn

    def run_l2(x, dt, axis):
        if dt not in ot:
            raise Skip(f"ONNX path: {dt} not wired (f32, f16)")
        if axis != x.ndim - 1:
            raise Skip("onnx.LpNormalization() normalizes the last axis (axis=-1)")
        return one_node((name, dt, x.shape), "LpNormalization", [("X", x.shape)], x, dt, 22, {"X": x})
    run.l2 = run_l2
    return ort.__version__, run


def make_tf(name):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    tt = {"f64": tf.float64, "f32": tf.float32, "f16": tf.float16}

    def run(req, x, dt, ns, g, b):
        raise Skip(f"{name} is an l2_normalize")

    def run_l2(x, dt, axis):
        if dt not in tt:
            raise Skip(f"TensorFlow path: {dt} not wired (f64, f32, f16)")
        return tf.math.l2_normalize(tf.cast(tf.constant(x), tt[dt]), axis=axis).numpy().astype(np.float64)
    run.l2 = run_l2
    return tf.__version__, run


def make_emulated_keras(name):
    def run(req, x, dt, ns, g, b):
        if dt != "f32":
            raise Skip("emulated Keras: f32 only")
        axes = tuple(range(x.ndim - len(ns), x.ndim))
        x32, g32, b32 = x.astype(np.float32), g.astype(np.float32), b.astype(np.float32)
        mean = np.mean(x32, axis=axes, keepdims=True, dtype=np.float32)
        var = np.mean(np.square(x32 - mean), axis=axes, keepdims=True, dtype=np.float32)
        inv = (np.float32(1) / np.sqrt(var + np.float32(1e-3))) * g32  # rsqrt(variance + epsilon) * gamma
        return (x32 * inv + (-mean * inv + b32)).astype(np.float64)  # x * inv + (beta - mean * inv)
    return np.__version__, run


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in LAYERS:
        sys.stderr.write(f"usage: framework_layer.py LAYER ({', '.join(LAYERS)})\n")
        sys.exit(2)
    name = sys.argv[1]
    op, module = LAYERS[name]
    make = {"keras": make_keras, "flax": make_flax, "torch": make_torch, "onnxruntime": make_onnx, "transformers": make_hf, "tensorflow": make_tf,
            "numpy": make_emulated_keras}[module]
    try:
        version, run = make(name)
    except ImportError as e:  # a worker that cannot start says why on stderr and exits
        sys.stderr.write(f"framework_layer {name}: {e} (pip install {module})\n")
        sys.exit(3)

    def evaluate(req, inputs):
        if req["op"] != op:
            raise Skip(f"{name} computes {op}, not {req['op']}")
        x, dt = inputs["x"]
        if req["out_dtype"] != dt:
            raise Skip(f"{name}: y has x's dtype ({dt}), not {req['out_dtype']}")
        if op in ("group_norm", "instance_norm"):
            if x.ndim < 2:
                raise Skip(f"{name}: x [N, C, *spatial]")
            g, b = params(req, inputs, (x.shape[1],))
            groups = x.shape[1] if op == "instance_norm" else int(req["convention"]["num_groups"])
            if name == "pytorch.InstanceNorm2d" and req["convention"]["affine"] != "none":
                raise Skip("torch.nn.InstanceNorm2d() has affine=False")
            return {"y": (round_to(run.gn(x.astype(np.float64), dt, g, b, groups), dt), dt)}
        if op == "l2_normalize":
            axes = req["convention"].get("axes") or [x.ndim - 1]
            if len(axes) != 1:
                raise Skip(f"{name}: one axis, not {axes}")
            ax = axes[0] % x.ndim
            return {"y": (round_to(run.l2(x.astype(np.float64), dt, ax), dt), dt)}
        if op == "batch_norm":
            c = req["convention"]
            if not (c["training"] and c["track_running_stats"]) or c["sequence"]:
                raise Skip(f"{name}: one training call with running stats only")
            if x.ndim < 2:
                raise Skip(f"{name}: x [N, C, *spatial]")
            g, b = params(req, inputs, (x.shape[1],))
            rm, rv = (inputs[k][0].astype(np.float64) for k in ("running_mean", "running_var"))
            y, rm, rv = run.bn(x.astype(np.float64), dt, g, b, rm, rv)
            return {"y": (round_to(y, dt), dt), "running_mean": (round_to(rm, dt), dt), "running_var": (round_to(rv, dt), dt)}
        ns = tuple(req["convention"]["normalized_shape"])
        if tuple(x.shape[x.ndim - len(ns):]) != ns:
            raise Skip(f"{name}: normalized_shape {list(ns)} is not x's trailing shape")
        g, b = params(req, inputs, ns, one_plus_w=name == "hf.GemmaRMSNorm")
        y = run(req, x.astype(np.float64), dt, ns, g, b)
        return {"y": (round_to(y, dt), dt)}

    serve(f"{name} (default arguments; {module} {version})", evaluate)


if __name__ == "__main__":
    main()
