#!/usr/bin/env python3
"""Import the ONNX LayerNormalization / RMSNormalization node tests as normcheck cases.

Why the output is committed: the generated files under cases/onnx/ are checked
into git, like golden/. CI and users then get these conformance cases without
network access and without depending on whichever onnx version happens to be
installed (the test data move between onnx releases, and onnx >= 1.23 wheels no
longer ship backend/test/data/node at all). This importer is rerun only on
explicit request, e.g. to pick up new upstream tests; review the diff of
cases/onnx/ like any other change. Each generated file records the command, the
onnx and numpy versions and the date it was made.

Source: <onnx package>/backend/test/data/node/test_layer_normalization_*/ and
test_rms_normalization_*/ (RMSNormalization exists from opset 23, onnx >= 1.18),
each holding model.onnx and test_data_set_N/{input,output}_K.pb. Use an onnx
release that ships them (1.22.0 does, 1.23.x does not) or pass --onnx-data with
the onnx/backend/test/data/node folder of an onnx source checkout.

Mapping onto the case schema (cases/layer_norm/worked_examples.toml, src/cases/parser.cpp):
  op            LayerNormalization -> layer_norm, RMSNormalization -> rms_norm
  axis          (default -1, may be negative) -> convention.normalized_shape = X.shape[axis:]
  epsilon       a float32 attribute (default 1e-5) -> convention.eps = the exact binary64
                value of that float32, e.g. 1e-5 -> 9.999999747378752e-06
  eps_placement inside_sqrt; variance biased (both fixed by the ONNX definitions)
  stash_type    (default 1) -> convention.acc_dtype: 1 f32, 11 f64, 10 f16, 16 bf16
  Scale, B      -> inputs.gamma, inputs.beta; affine = gamma_beta with B, else gamma.
                A Scale/B whose shape is broadcastable to, but not equal to,
                normalized_shape is broadcast explicitly with numpy (said in the note);
                one that varies along a non-normalized axis cannot be expressed: skipped.
  dtypes        float32 f32, float16 f16, bfloat16 bf16, float64 f64; others skipped.
  output Y      -> [case.recorded.onnx-expected.y] (the stored expected output as a
                recorded pseudo-backend "onnx-expected"); Mean and InvStdDev are ignored.
Every value is written as repr(float(v)) of its exact value (round-trip exact for a
binary64, and every f32/f16/bf16 value is one), with nan/inf/-inf as TOML literals.
The importer reloads what it wrote (tomllib) and checks every value bit for bit.

_expanded tests (the same test run through the function-expanded graph, opset 17
and 18 for LayerNormalization) are skipped when their inputs and Y are identical to
those of the non-expanded test, which the importer checks and lists in a comment in
the generated file; an _expanded test whose data differ is skipped with a message,
since its convention cannot be read off a single node.

Usage (from the repository root):
  python3 tools/import_onnx.py [--out cases/onnx] [--force] [--onnx-data DIR]
Existing files are left alone when only the header date would change; any other
change needs --force. Files are written atomically (temporary file + rename).
"""
from __future__ import annotations

import argparse
import datetime
import glob
import os
import re
import shlex
import sys
import tempfile

try:
    import tomllib
except ImportError:  # Python < 3.11: verification is skipped
    tomllib = None

import numpy as np
import onnx
from onnx import helper, numpy_helper

OPS = {
    # ONNX op_type: (folder prefix, normcheck op, layer, file name, has bias input)
    "LayerNormalization": ("test_layer_normalization_", "layer_norm", "onnx/layer_normalization",
                           "layer_normalization.toml", True),
    "RMSNormalization": ("test_rms_normalization_", "rms_norm", "onnx/rms_normalization",
                         "rms_normalization.toml", False),
}
STASH_TYPES = {1: "f32", 11: "f64", 10: "f16", 16: "bf16"}  # onnx.TensorProto enum values
DEFAULT_EPS = 1e-5
VALUES_PER_LINE = 6


class Skip(Exception):
    """A test that cannot be expressed as a normcheck case."""


def dtype_name(a: np.ndarray) -> str:
    dt = a.dtype
    if dt == np.float32:
        return "f32"
    if dt == np.float16:
        return "f16"
    if dt == np.float64:
        return "f64"
    if dt.name == "bfloat16":  # ml_dtypes.bfloat16, as returned by onnx.numpy_helper
        return "bf16"
    raise Skip(f"dtype {dt.name} is not supported (f64 | f32 | f16 | bf16)")


def as_doubles(a: np.ndarray) -> list[float]:
    # Every f16/bf16/f32 value is exactly a binary64 value: the cast is exact.
    return [float(v) for v in a.astype(np.float64).ravel()]


def fmt_num(v: float) -> str:
    r = repr(v)  # shortest round-trip string; 'nan', 'inf', '-inf' are TOML literals too
    assert r in ("nan", "inf", "-inf") or float(r) == v
    return r


def toml_str(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_shape(shape) -> str:
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


def tensor_lines(header: str, a: np.ndarray, dtype: str | None) -> list[str]:
    lines = [header]
    if dtype is not None:
        lines.append(f"dtype = {toml_str(dtype)}")
    lines.append(f"shape = {toml_shape(a.shape)}")
    vals = [fmt_num(v) for v in as_doubles(a)]
    lines.append("values = [")
    for i in range(0, len(vals), VALUES_PER_LINE):
        lines.append("  " + ", ".join(vals[i:i + VALUES_PER_LINE]) + ",")
    lines.append("]")
    return lines


def load_test(folder: str):
    """model, its single node (or None), and the data sets as [(inputs by name, outputs by name)]."""
    model = onnx.load(os.path.join(folder, "model.onnx"))
    g = model.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    feed = [i.name for i in g.input if i.name not in inits]
    sets = []
    for ds in sorted(glob.glob(os.path.join(folder, "test_data_set_*")),
                     key=lambda p: int(p.rsplit("_", 1)[1])):
        ins = sorted(glob.glob(os.path.join(ds, "input_*.pb")), key=lambda p: int(p[:-3].rsplit("_", 1)[1]))
        outs = sorted(glob.glob(os.path.join(ds, "output_*.pb")), key=lambda p: int(p[:-3].rsplit("_", 1)[1]))
        if len(ins) != len(feed):
            raise Skip(f"{os.path.basename(ds)}: {len(ins)} input files for {len(feed)} graph inputs")
        values = dict(inits)
        for name, p in zip(feed, ins):
            values[name] = numpy_helper.to_array(onnx.load_tensor(p))
        outputs = {o.name: numpy_helper.to_array(onnx.load_tensor(p)) for o, p in zip(g.output, outs)}
        sets.append((os.path.basename(ds), values, outputs))
    return model, sets


def same_data(a_sets, b_sets) -> bool:
    """Same inputs (by position) and same first output Y, bit for bit, dtype included."""
    if len(a_sets) != len(b_sets):
        return False
    for (_, ai, ao), (_, bi, bo) in zip(a_sets, b_sets):
        al, bl = list(ai.values()), list(bi.values())
        if len(al) != len(bl):
            return False
        for x, y in list(zip(al, bl)) + [(next(iter(ao.values())), next(iter(bo.values())))]:
            if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
                return False
    return True


def affine_param(name: str, a: np.ndarray, x_shape, axis: int, notes: list[str]) -> np.ndarray:
    """Scale/B as an array of shape normalized_shape = x_shape[axis:]."""
    ns = tuple(x_shape[axis:])
    if tuple(a.shape) == ns:
        return a
    rank = len(x_shape)
    try:
        full = np.broadcast_shapes(a.shape, x_shape)
    except ValueError:
        raise Skip(f"{name} shape {list(a.shape)} does not broadcast to X {list(x_shape)}")
    if tuple(full) != tuple(x_shape):
        raise Skip(f"{name} shape {list(a.shape)} would broadcast X {list(x_shape)} to {list(full)}")
    r = a.reshape((1,) * (rank - a.ndim) + tuple(a.shape))
    if any(d != 1 for d in r.shape[:axis]):
        raise Skip(f"{name} shape {list(a.shape)} varies along non-normalized axes of X {list(x_shape)} "
                   f"(axis = {axis}): no per-row gamma/beta in the case schema")
    b = np.ascontiguousarray(np.broadcast_to(r[(0,) * axis], ns))
    notes.append(f"{name} stored with shape {list(a.shape)}, broadcast to normalized_shape {list(ns)} by the importer")
    return b


def make_case(test: str, model, node, ds_name: str, values: dict, outputs: dict, nsets: int,
              onnx_version: str) -> tuple[str, list[str], dict]:
    prefix, op, layer, _, has_bias = OPS[node.op_type]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    unknown = set(attrs) - {"axis", "epsilon", "stash_type"}
    if unknown:
        raise Skip(f"unknown attributes {sorted(unknown)}")
    ins = list(node.input) + [""] * 3
    x = values[ins[0]]
    scale = values.get(ins[1]) if ins[1] else None
    bias = values.get(ins[2]) if (has_bias and ins[2]) else None
    if scale is None:
        raise Skip("no Scale input")
    y_name = node.output[0]
    if y_name not in outputs:
        raise Skip("no stored Y output")
    y = outputs[y_name]
    dt_x, dt_y = dtype_name(x), dtype_name(y)
    dt_g = dtype_name(scale)
    dt_b = dtype_name(bias) if bias is not None else None
    if x.ndim == 0:
        raise Skip("scalar X")
    if tuple(y.shape) != tuple(x.shape):
        raise Skip(f"Y shape {list(y.shape)} differs from X {list(x.shape)}")
    axis = int(attrs.get("axis", -1))
    if not -x.ndim <= axis < x.ndim:
        raise Skip(f"axis {axis} out of range for rank {x.ndim}")
    axis %= x.ndim
    ns = list(x.shape[axis:])
    eps32 = np.float32(attrs.get("epsilon", DEFAULT_EPS))
    eps = float(eps32)
    stash = int(attrs.get("stash_type", 1))
    if stash not in STASH_TYPES:
        raise Skip(f"stash_type {stash} has no accumulation dtype here")
    notes: list[str] = []
    gamma = affine_param("Scale", scale, x.shape, axis, notes)
    beta = affine_param("B", bias, x.shape, axis, notes) if bias is not None else None

    name = test if nsets == 1 else f"{test}_{ds_name}"
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
    attr_txt = ", ".join([f"axis={attrs.get('axis', -1)}",
                          f"epsilon={'default ' if 'epsilon' not in attrs else ''}{str(eps32)} (f32, exactly {fmt_num(eps)})",
                          f"stash_type={stash}{'' if 'stash_type' in attrs else ' (default)'}"])
    note = (f"onnx {onnx_version}: onnx/backend/test/data/node/{test}/{ds_name} "
            f"({node.op_type}, opset {opset}, {attr_txt})")
    if notes:
        note += "; " + "; ".join(notes)

    lines = ["[[case]]",
             f"name = {toml_str(name)}",
             f"layer = {toml_str(layer)}",
             f"op = {toml_str(op)}",
             f"dtype = {toml_str(dt_x)}"]
    if dt_y != dt_x:
        lines.append(f"out_dtype = {toml_str(dt_y)}")
    lines.append(f"note = {toml_str(note)}")
    lines += ["[case.convention]",
              f"eps = {fmt_num(eps)}",
              'eps_placement = "inside_sqrt"',
              'variance = "biased"',
              f"affine = {toml_str('gamma_beta' if beta is not None else 'gamma')}",
              f"normalized_shape = {toml_shape(ns)}",
              f"acc_dtype = {toml_str(STASH_TYPES[stash])}"]
    lines += tensor_lines("[case.inputs.x]", x, None)
    lines += tensor_lines("[case.inputs.gamma]", gamma, dt_g if dt_g != dt_x else None)
    if beta is not None:
        lines += tensor_lines("[case.inputs.beta]", beta, dt_b if dt_b != dt_x else None)
    lines += tensor_lines("[case.recorded.onnx-expected.y]", y, dt_y)
    expect = {"x": x, "gamma": gamma, "beta": beta, "y": y, "eps": eps, "ns": ns}
    return name, lines, expect


def verify(path_text: str, expected: dict[str, dict]) -> None:
    """Reload the generated TOML and compare every number bit for bit."""
    if tomllib is None:
        print("note: tomllib unavailable (Python < 3.11), round-trip check skipped", file=sys.stderr)
        return
    doc = tomllib.loads(path_text)
    got = {c["name"]: c for c in doc["case"]}
    assert set(got) == set(expected), "case names differ after reload"

    def same(vals, a):
        # Bit for bit except NaN payloads (a NaN is written as the literal nan).
        want = np.asarray(a, dtype=np.float64).ravel()
        have = np.asarray(vals, dtype=np.float64)
        if have.shape != want.shape or not np.array_equal(np.isnan(have), np.isnan(want)):
            return False
        ok = ~np.isnan(want)
        return have[ok].tobytes() == want[ok].tobytes()

    for name, e in expected.items():
        c = got[name]
        assert c["convention"]["eps"] == e["eps"] and c["convention"]["normalized_shape"] == e["ns"], name
        for key, a in (("x", e["x"]), ("gamma", e["gamma"]), ("beta", e["beta"])):
            if a is None:
                assert key not in c["inputs"], (name, key)
                continue
            t = c["inputs"][key]
            assert t["shape"] == list(a.shape) and same(t["values"], a), (name, key)
        t = c["recorded"]["onnx-expected"]["y"]
        assert t["shape"] == list(e["y"].shape) and same(t["values"], e["y"]), (name, "y")


def strip_date(text: str) -> str:
    return re.sub(r"^# date: .*$", "# date:", text, count=1, flags=re.M)


def write_atomic(path: str, text: str, force: bool) -> str:
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            old = f.read()
        if strip_date(old) == strip_date(text):
            return "unchanged"
        if not force:
            raise FileExistsError(f"{path} exists and its content would change: rerun with --force")
    d = os.path.dirname(path) or "."
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".import_onnx.", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return "written"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="cases/onnx", help="output folder (default: cases/onnx)")
    ap.add_argument("--force", action="store_true", help="overwrite files whose content would change")
    ap.add_argument("--onnx-data", help="folder with the node tests (default: the installed onnx package's "
                                        "backend/test/data/node)")
    args = ap.parse_args(argv)

    data = args.onnx_data or os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    if not os.path.isdir(data) and args.onnx_data:
        print(f"error: --onnx-data {data}: no such folder", file=sys.stderr)
        return 2
    if not os.path.isdir(data):
        print(f"error: {data}: no such folder. onnx {onnx.__version__} does not ship the node test data "
              "(onnx >= 1.23 wheels omit it): install onnx==1.22.0, or pass --onnx-data "
              "<onnx source checkout>/onnx/backend/test/data/node", file=sys.stderr)
        return 2

    # The options that shape the output (--force does not, so that a rerun compares equal).
    opts = (["--out", args.out] if args.out != "cases/onnx" else []) + \
           (["--onnx-data", args.onnx_data] if args.onnx_data else [])
    cmd = " ".join(["python3", "tools/import_onnx.py"] + [shlex.quote(a) for a in opts])
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    n_imported = n_skipped = 0
    rc = 0
    for op_type, (prefix, op, layer, fname, _) in OPS.items():
        folders = sorted(p for p in glob.glob(os.path.join(data, prefix + "*")) if os.path.isdir(p))
        if not folders:
            print(f"{op_type}: no {prefix}* tests in {data} (onnx {onnx.__version__}); nothing written for it")
            continue
        base_tests = [p for p in folders if "_expanded" not in os.path.basename(p)]
        loaded = {}
        blocks: list[list[str]] = []
        expected: dict[str, dict] = {}
        skipped: list[tuple[str, str]] = []
        for folder in base_tests:
            test = os.path.basename(folder)
            try:
                model, sets = load_test(folder)
                loaded[test] = sets
                nodes = list(model.graph.node)
                if len(nodes) != 1 or nodes[0].op_type != op_type or nodes[0].domain not in ("", "ai.onnx"):
                    raise Skip(f"graph is not a single {op_type} node")
                if not sets:
                    raise Skip("no test_data_set_*")
                for ds_name, values, outputs in sets:
                    name, lines, exp = make_case(test, model, nodes[0], ds_name, values, outputs, len(sets),
                                                 onnx.__version__)
                    blocks.append(lines)
                    expected[name] = exp
            except Skip as e:
                skipped.append((test, str(e)))
        dup_expanded = []
        for folder in folders:
            test = os.path.basename(folder)
            if "_expanded" not in test:
                continue
            base = test.split("_expanded")[0]
            try:
                _, sets = load_test(folder)
            except Skip as e:
                skipped.append((test, f"_expanded test: {e}"))
                continue
            if base in loaded and same_data(sets, loaded[base]):
                dup_expanded.append(test)
            else:
                skipped.append((test, f"_expanded test whose data differ from {base} (or {base} is missing): "
                                      "its convention cannot be read off a single node"))

        for test, why in skipped:
            print(f"skip {test}: {why}")
        n_skipped += len(skipped) + len(dup_expanded)
        n_imported += len(blocks)
        print(f"{op_type}: {len(blocks)} cases imported, {len(dup_expanded)} _expanded duplicates skipped, "
              f"{len(skipped)} other tests skipped")
        if not blocks:
            continue

        head = [
            f"# ONNX {op_type} node tests imported as normcheck cases.",
            "# do not edit: regenerate with tools/import_onnx.py",
            f"# generator: {cmd}",
            f"# onnx {onnx.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}",
            f"# date: {today}",
            f"# source: onnx/backend/test/data/node/{prefix}*",
            "# Y (output_0.pb) is kept as the recorded source 'onnx-expected'; Mean/InvStdDev are ignored.",
            "# Values are the exact stored values (repr of the binary64 value of each element).",
        ]
        if dup_expanded:
            head.append("# Skipped: _expanded tests whose inputs and Y are bit-identical to the non-expanded test:")
            head += [f"#   {t}" for t in dup_expanded]
        if skipped:
            head.append("# Skipped, cannot be expressed:")
            head += [f"#   {t}: {why}" for t, why in skipped]
        text = "\n".join(head) + "\n" + "".join("\n" + "\n".join(b) + "\n" for b in blocks)
        verify(text, expected)
        path = os.path.join(args.out, fname)
        try:
            status = write_atomic(path, text, args.force)
        except FileExistsError as e:
            print(f"error: {e}", file=sys.stderr)
            rc = 1
            continue
        print(f"{path}: {status} ({len(blocks)} cases)")
    print(f"total: {n_imported} cases imported, {n_skipped} tests skipped")
    return rc


if __name__ == "__main__":
    sys.exit(main())
