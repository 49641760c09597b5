"""Tests of the normcheck Python package (README "Python"): the in-process path judges a
function exactly as `normcheck run` judges a backend, and no path to a pass is reached by
accident (a function that skips everything, errors, returns the wrong shape or dtype)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import normcheck

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")
sys.path.insert(0, EXAMPLES)
from my_norms import faulty_layer_norm, numpy_layer_norm, numpy_rms_norm  # noqa: E402

WORKED = os.path.join(os.path.dirname(os.path.dirname(HERE)), "cases", "layer_norm", "worked_examples.toml")


def test_reference_worked_examples():
    # shared/spec/worked-examples.md: LN [1,2,3] eps 1e-5; RMS [1,2,3] eps 1e-6
    r = normcheck.reference("layer_norm", {"x": np.array([1.0, 2.0, 3.0])}, eps=1e-5, affine="none")
    assert r.dtypes["y"] == "f64"
    np.testing.assert_array_equal(r.exact["y"], [-1.224735685908390169, 0.0, 1.224735685908390169])
    r = normcheck.reference("rms_norm", {"x": np.array([1.0, 2.0, 3.0], dtype=np.float32)}, eps=1e-6, affine="none")
    assert r.y.dtype == np.float32 and r.dtypes["y"] == "f32"
    np.testing.assert_array_equal(r.y, np.float32([0.4629100002887783569, 0.9258200005775567137, 1.388730000866335071]))
    assert r.condition["y"] is not None and r.convention["eps"] == 1e-6


def test_reference_bad_input_names_the_field():
    with pytest.raises(ValueError, match="eps_placement"):
        normcheck.reference("layer_norm", {"x": np.ones(3)}, eps_placement="nowhere")
    with pytest.raises(ValueError, match="unknown op"):
        normcheck.reference("layer_nrom", {"x": np.ones(3)})
    with pytest.raises(ValueError, match="missing input x"):
        normcheck.reference("layer_norm", {"q": np.ones(3)})
    with pytest.raises(ValueError):  # a preset of another op
        normcheck.reference("layer_norm", {"x": np.ones(3)}, convention="pytorch.RMSNorm")


def test_assert_close_passes_the_reference_and_fails_one_ulp_too_far():
    x = {"x": np.array([[1.0, 2.0, 3.0, 4.0], [11.0, 13.0, 5.0, -2.0]], dtype=np.float32)}
    y = normcheck.reference("layer_norm", x, convention="pytorch.LayerNorm", affine="none").y
    normcheck.assert_close(y, "layer_norm", x, convention="pytorch.LayerNorm", affine="none")
    bad = y.copy()
    bad[0, 1] = np.float32(0.5)
    with pytest.raises(AssertionError, match="FAILED"):
        normcheck.assert_close(bad, "layer_norm", x, convention="pytorch.LayerNorm", affine="none")
    with pytest.raises(ValueError, match="no output"):
        normcheck.assert_close({"z": y}, "layer_norm", x, affine="none")
    with pytest.raises(ValueError):  # a float32 value that is no bf16 value, for a bf16 output
        normcheck.assert_close(np.float32([0.1, 0.2]), "layer_norm", {"x": (np.float32([1, 2]), "bf16")}, affine="none")


def test_bf16_arrays_from_ml_dtypes():
    ml = pytest.importorskip("ml_dtypes")
    x = {"x": np.array([1, 2, 3, 4], dtype=ml.bfloat16)}
    r = normcheck.reference("layer_norm", x, affine="none", eps=0)
    assert r.dtypes["y"] == "bf16"  # the data's dtype, taken from the array
    y = np.asarray(r.y).astype(ml.bfloat16)
    normcheck.assert_close(y, "layer_norm", x, affine="none", eps=0)
    y[0] = ml.bfloat16(-1.3)  # -1.296875; exact -1.3416...: stab 11.46 over a limit of 11
    with pytest.raises(AssertionError, match="stab") as e:
        normcheck.assert_close(y, "layer_norm", x, affine="none", eps=0)
    assert "rerun" not in str(e.value)


def test_check_passes_a_correct_function_and_counts_what_it_evaluated():
    rep = normcheck.check(numpy_layer_norm, op="layer_norm", cases=WORKED)
    assert rep.passed, rep.details
    assert rep.counts["evaluated"] > 0 and rep.counts["failed"] == 0
    assert "layer_norm" in rep.table and '"normcheck"' in rep.json
    assert all(c["status"] in ("PASSED", "SKIPPED") for c in rep.cases)


def test_check_fails_a_faulty_function_with_the_cli_failure_block():
    # eps added to the standard deviation: the worked examples have eps = 0 (it passes them);
    # the placement cases separate it
    placement = os.path.join(os.path.dirname(WORKED), "eps_placement.toml")
    rep = normcheck.check(faulty_layer_norm, op="layer_norm", cases=placement)
    assert not rep.passed and rep.exit_code == 1
    f = rep.failures[0]
    assert "FAILED" in f["details"] and "stab" in f["details"]
    assert f'rerun: normcheck.check(faulty_layer_norm, cases="{placement}", filter="{f["name"]}")' in f["details"], f["details"]


def test_a_function_that_skips_everything_does_not_pass():
    def nothing(p):
        raise normcheck.Skip("not implemented")

    rep = normcheck.check(nothing, op="layer_norm", cases=WORKED)
    assert not rep.passed and rep.counts["evaluated"] == 0 and rep.counts["skipped"] > 0
    assert any("evaluated none" in p or "none of" in p for p in rep.problems), rep.problems


def test_errors_and_wrong_outputs_are_never_passes():
    def boom(p):
        raise RuntimeError("kernel crashed")

    rep = normcheck.check(boom, op="layer_norm", cases=WORKED)
    assert rep.exit_code == 3 and "kernel crashed" in rep.cases[0]["reason"]

    def wrong_shape(p):
        return np.zeros(p.x.shape[-1] + 1, dtype=np.float32)

    assert not normcheck.check(wrong_shape, op="layer_norm", cases=WORKED).passed

    def no_output(p):
        return {}

    assert not normcheck.check(no_output, op="layer_norm", cases=WORKED).passed

    def nan_output(p):
        return np.full(p.x.shape, np.nan)

    assert not normcheck.check(nan_output, op="layer_norm", cases=WORKED).passed


def test_views_reach_the_function_as_strided_arrays():
    layouts = set()

    def spy(p):
        layouts.add(p.layout)
        if p.layout != "contiguous":
            assert not p.x.flags["C_CONTIGUOUS"] or p.x.ndim < 2 or p.layout == "offset"
        return numpy_layer_norm(p)

    path = os.path.join(os.path.dirname(WORKED), "memory_layout.toml")
    rep = normcheck.check(spy, op="layer_norm", cases=path)
    assert rep.passed, rep.details
    assert {"offset", "padded", "transposed"} <= layouts


def test_selection_errors():
    with pytest.raises(ValueError, match="no case selected"):
        normcheck.check(numpy_layer_norm, op="rms_norm", cases=WORKED)
    with pytest.raises(ValueError):
        normcheck.check(numpy_layer_norm, op="layer_nrom")
    with pytest.raises(ValueError):
        normcheck.check(numpy_layer_norm, cases="/nonexistent/cases.toml")


def test_fuzz_finds_the_faulty_function_and_passes_the_correct_one():
    ok = normcheck.fuzz(numpy_rms_norm, op="rms_norm", count=60, seed=3)
    assert ok.evaluated > 0 and ok.passed, str(ok)
    bad = normcheck.fuzz(faulty_layer_norm, op="layer_norm", count=200, seed=1)
    assert not bad.passed and bad.failures
    assert "[[case]]" in bad.failures[0]["case_file"]


def _pytest(*args):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=EXAMPLES,
                          capture_output=True, text=True)


def test_pytest_examples_pass_and_the_faulty_one_fails():
    r = _pytest("test_my_norms.py", "-k", "numpy")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and " failed" not in r.stdout
    r = _pytest("test_faulty_norm.py")
    assert r.returncode == 1, r.stdout[-3000:]
    assert "FAILED test_faulty_norm.py::test_faulty_layer_norm[" in r.stdout
    assert "ln_" in r.stdout  # case names are the test ids


def test_outputs_are_never_rounded_truncated_or_misnamed_on_the_way():
    # values that are not of the output's dtype are an ERROR, not cast into it
    quant = os.path.join(os.path.dirname(os.path.dirname(WORKED)), "rms_norm_quant", "worked_examples.toml")

    def reference_outputs(p):
        inputs = {k: (np.array(v), p.dtypes[k]) for k, v in p.inputs.items()}
        return dict(normcheck.reference(p.op, inputs, convention=dict(p.convention), out_dtype=p.out_dtype).outputs)

    assert normcheck.check(reference_outputs, cases=quant).passed

    def not_int8(p):
        out = reference_outputs(p)
        y = out["y"].astype(np.float64)
        out["y"] = np.where(y == 127, 383.0, y + 0.4)  # 383 and 42.4 would cast to 127 and 42
        return out

    rep = normcheck.check(not_int8, cases=quant)
    assert not rep.passed and any("is not an int8 value" in c["reason"] for c in rep.cases), rep.details

    def not_bf16(p):  # one float64 step off bf16 values: float32 would round it back
        return numpy_layer_norm(p).astype(np.float64) * (1 + 2.0**-40)

    rep = normcheck.check(not_bf16, cases=WORKED, filter="ln_123_bf16")
    assert rep.exit_code == 3 and "is not a bf16 value" in rep.cases[0]["reason"], rep.details

    def misspelt(p):
        return {"y": numpy_layer_norm(p), "Mean": np.zeros(p.outputs["mean"]["shape"], np.float32)}

    rep = normcheck.check(misspelt, cases=WORKED, filter="ln_123_f32")
    assert rep.exit_code == 3 and "has no such output" in rep.cases[0]["reason"], rep.details

    def three_tuple(p):
        return {"y": (numpy_layer_norm(p), "f32", "junk")}

    assert normcheck.check(three_tuple, cases=WORKED, filter="ln_123_f32").exit_code == 3


def test_arguments_that_would_check_less_are_refused():
    with pytest.raises(ValueError, match="empty list"):
        normcheck.check(numpy_layer_norm, cases=[])
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError, match="max_width"):
            normcheck.fuzz(numpy_layer_norm, op="layer_norm", count=5, max_width=bad)
    for bad in (0, -3, 2.7):
        with pytest.raises(ValueError, match="count"):
            normcheck.fuzz(numpy_layer_norm, op="layer_norm", count=bad)


def test_the_pytest_decorator_cannot_pass_by_checking_nothing(tmp_path):
    (tmp_path / "test_nothing.py").write_text(f"""
import normcheck
WORKED = {WORKED!r}

def skips_everything(p):
    if p.convention.get("eps_placment") != "inside_sqrt":  # a typo: every case skipped
        raise normcheck.Skip("not implemented")
    return p.x

@normcheck.cases("layer_norm", cases=WORKED)
def test_skips(nc_case):
    nc_case.check(skips_everything)

@normcheck.cases("layer_norm", cases=WORKED)
def test_never_checks(nc_case):
    nc_case.run(skips_everything)
""")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_nothing.py", "-k", "test_skips"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 1, r.stdout[-2000:]
    assert "every selected case was skipped" in r.stdout
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_nothing.py", "-k", "test_never_checks"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 1 and "never called nc_case.check" in r.stdout, r.stdout[-2000:]
