#!/usr/bin/env python3
"""Tests of tools/adapters/torch_backend.py's rule for refusals (its module docstring): PyTorch's
argument refusals are SKIPPED with PyTorch's message; a torch RuntimeError, an adapter bug and
results are not. Drives the adapter through the worker protocol, as normcheck does.

    python3 tests/adapters/test_torch_backend.py

Exit 0 when every check passes, 1 on a failure, 77 (ctest's SKIP_RETURN_CODE) when NumPy or
torch is missing.
"""

import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch  # noqa: F401  (only to know the adapter can start)
except ImportError as e:
    print(f"SKIP: {e} (pip install numpy torch); the torch adapter was not tested")
    sys.exit(77)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ADAPTER = os.path.join(ROOT, "tools", "adapters", "torch_backend.py")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL {what}")


def requests(tmp):
    """(label, request, what the reply must be: ("skip", substring) | ("error", substring) | ("outputs", None))."""
    def npy(rid, name, a, dtype="f32"):
        path = os.path.join(tmp, f"{rid}_{name}.npy")
        np.save(path, a)
        return {"path": path, "dtype": dtype, "shape": list(a.shape)}

    def run(rid, op, conv, inputs, outputs=("y",)):
        x = inputs["x"]
        return {"type": "run", "id": rid, "op": op, "out_dtype": "f32",
                "convention": dict({"eps_placement": "inside_sqrt", "variance": "biased", "affine": "none",
                                    "acc_dtype": "f32"}, **conv),
                "inputs": {k: npy(rid, k, v) for k, v in inputs.items()},
                "outputs": {k: {"path": os.path.join(tmp, f"{rid}_{k}.npy"), "dtype": "f32",
                                "shape": list(x.shape) if k == "y" else [x.shape[-1 if x.ndim == 2 else 1]]}
                            for k in outputs}}

    x42 = np.array([[1, 10], [3, 20], [5, 30], [7, 40]], np.float32)
    stats = {"running_mean": np.zeros(2, np.float32), "running_var": np.ones(2, np.float32)}
    bn = {"momentum": 0.1, "training": True, "track_running_stats": True}
    return [
        ("batch_norm training, eps 0", run(1, "batch_norm", dict(bn, eps=0.0), dict(stats, x=x42),
                                           ("y", "running_mean", "running_var")),
         ("skip", "F.batch_norm refuses the arguments: ValueError: batch_norm eps must be positive during training")),
        ("batch_norm eval untracked (batch statistics), eps 0",
         run(2, "batch_norm", dict(bn, eps=0.0, training=False, track_running_stats=False), {"x": x42}),
         ("skip", "batch_norm eps must be positive during training")),
        ("batch_norm eval, eps 0: no refusal", run(3, "batch_norm", dict(bn, eps=0.0, training=False), dict(stats, x=x42),
                                                   ("y", "running_mean", "running_var")), ("outputs", None)),
        ("batch_norm training, one value per channel",
         run(4, "batch_norm", dict(bn, eps=1e-5), dict(stats, x=x42[:1]), ("y", "running_mean", "running_var")),
         ("skip", "Expected more than 1 value per channel when training")),
        ("instance_norm, one spatial element",
         run(5, "instance_norm", {"eps": 1e-5}, {"x": np.ones((2, 3, 1), np.float32)}),
         ("skip", "F.instance_norm refuses the arguments: ValueError: Expected more than 1 spatial element")),
        ("group_norm, groups do not divide C",
         run(6, "group_norm", {"eps": 1e-5, "num_groups": 3}, {"x": np.ones((2, 4, 5), np.float32)}),
         ("skip", "divisible by num_groups")),
        ("group_norm, one value per group",
         run(7, "group_norm", {"eps": 1e-5, "num_groups": 3}, {"x": np.ones((1, 3), np.float32)}),
         ("skip", "Expected more than 1 value per channel when training")),
        # Not refusals: a RuntimeError inside torch (normalized_shape [4] on rows of 2), an
        # exception in the adapter's own code (no normalized_shape), NaN results.
        ("torch RuntimeError stays an error",
         run(8, "layer_norm", {"eps": 1e-5, "normalized_shape": [4]}, {"x": x42}), ("error", "RuntimeError")),
        ("adapter KeyError stays an error",
         run(9, "layer_norm", {"eps": 1e-5}, {"x": x42}), ("error", "KeyError")),
        ("NaN results are outputs, not skips",
         run(10, "layer_norm", {"eps": 1e-5, "normalized_shape": [2]},
             {"x": np.array([[np.inf, 1], [3.4e38, -3.4e38]], np.float32)}), ("outputs", None)),
        ("an input that is not an f32 value is skipped, not rounded",
         run(11, "layer_norm", {"eps": 1e-5, "normalized_shape": [2], "affine": "gamma"},
             {"x": x42, "gamma": np.array([1.0, 1 + 2.0 ** -30])}),
         ("skip", "torch: gamma in f32: value 1.0000000009313226 at [1] is not a f32 value")),
    ]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        reqs = requests(tmp)
        # gamma above is float64 on purpose: the dtype field says what it is
        reqs[-1][1]["inputs"]["gamma"]["dtype"] = "f64"
        lines = [json.dumps({"type": "hello", "protocol": 1})] + [json.dumps(r) for _, r, _ in reqs]
        p = subprocess.run([sys.executable, ADAPTER], input="\n".join(lines) + "\n", capture_output=True, text=True,
                           timeout=300)
        replies = [json.loads(line) for line in p.stdout.splitlines()]
        check(len(replies) == len(lines), f"one reply per request (got {len(replies)}); stderr: {p.stderr[-2000:]}")
        if replies:
            check(replies[0].get("protocol") == 1 and replies[0].get("name", "").startswith("torch "), f"hello: {replies[0]}")
        for (label, req, (kind, text)), reply in zip(reqs, replies[1:]):
            check(reply.get("id") == req["id"], f"{label}: id")
            if kind == "outputs":
                check("outputs" in reply, f"{label}: wanted outputs, got {reply}")
            else:
                check(kind in reply and text in reply[kind], f"{label}: wanted {kind} containing {text!r}, got {reply}")
    if failures:
        print(f"{len(failures)} checks failed")
        sys.exit(1)
    print("test_torch_backend: all checks passed")


if __name__ == "__main__":
    main()
