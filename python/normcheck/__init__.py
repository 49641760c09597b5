"""normcheck from Python: the exact reference, the bundled cases, the checks and the fuzzer of
the normcheck CLI (the same C++ core, in process), for normalization kernels written and
tested in Python (README "Python").

    import normcheck

    def my_layer_norm(p):                  # p: a normcheck.Problem
        if p.convention["eps_placement"] != "inside_sqrt":
            raise normcheck.Skip("eps outside the sqrt is not implemented")
        return my_kernel(p.x, p.gamma, p.beta, p.eps)     # y; or {"y": y, "mean": ...}

    report = normcheck.check(my_layer_norm, op="layer_norm")
    assert report.passed, report

Functions: check (a function on the cases), cases (the same as pytest items), reference (the
exact result), assert_close (one output against it), fuzz (random problems, shrunk), ops.
A function receives a Problem and returns the primary output (y; dx for a backward problem)
or a dict of outputs; it raises Skip for a problem it does not implement (the case is
SKIPPED, never PASSED). The arrays it gets are read-only views in the case's memory layout
(strided, offset, padded: as a framework would be handed them); bf16 and fp8 inputs arrive
as float32 holding the format's values (p.dtypes names each input's dtype; p.torch(name)
gives a torch tensor in that dtype).
"""

import functools
import json
import os
import re
import traceback

import numpy as np

from . import _arrays, worker

_here = os.path.dirname(os.path.abspath(__file__))
if os.path.isdir(os.path.join(_here, "data", "cases")):
    # The bundled cases of an installed package (the module's process is python, not the CLI).
    os.environ.setdefault("NORMCHECK_DATA_DIR", os.path.join(_here, "data"))

from . import _normcheck  # noqa: E402

__version__ = _normcheck.__version__
Skip = worker.Skip

__all__ = ["Problem", "Report", "Skip", "assert_close", "cases", "check", "fuzz", "ops", "reference"]


def ops():
    """The names of every op normcheck knows (its registry)."""
    return list(_normcheck.ops())


class Problem:
    """One problem handed to a function under test (the worker protocol's request, README
    "External process backends"): op, out_dtype, layout, direction, convention (every key of
    the op), inputs (name -> read-only array view), dtypes (name -> dtype name), outputs (name
    -> {"dtype", "shape", "optional"}). Inputs are attributes too: p.x, p.gamma, p.beta,
    p.dy...; p.eps is convention["eps"]; p.request is the raw request."""

    def __init__(self, request, inputs):
        self.request = request
        self.op = request["op"]
        self.out_dtype = request["out_dtype"]
        self.layout = request.get("layout", "contiguous")
        self.convention = request["convention"]
        self.direction = self.convention.get("direction", "forward")
        self.inputs = inputs
        self.dtypes = {k: v["dtype"] for k, v in request["inputs"].items()}
        self.outputs = request["outputs"]

    @property
    def eps(self):
        return self.convention["eps"]

    @property
    def worker_inputs(self):
        """The inputs as a `cmd:` worker's evaluate(req, inputs) gets them ({name: (array,
        dtype name)}, normcheck_worker.load_inputs): `lambda p: evaluate(p.request,
        p.worker_inputs)` runs a worker's function in process."""
        return {k: (v, self.dtypes[k]) for k, v in self.inputs.items()}

    def __getattr__(self, name):
        inputs = self.__dict__.get("inputs", {})
        if name in inputs:
            return inputs[name]
        if name in ("gamma", "beta", "dy"):
            return None
        raise AttributeError(name)

    def torch(self, name):
        """Input `name` as a torch tensor in its dtype (bf16 included), or None when absent."""
        import torch

        a = self.inputs.get(name)
        if a is None:
            return None
        dt = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "int8": torch.int8}
        return torch.from_numpy(np.array(a)).to(dt[self.dtypes[name]])

    def __repr__(self):
        shapes = {k: tuple(v.shape) for k, v in self.inputs.items()}
        return f"Problem({self.op}, {self.direction}, inputs={shapes}, out_dtype={self.out_dtype}, layout={self.layout})"


@functools.lru_cache(maxsize=None)
def _output_names(op):
    return tuple(_normcheck.output_names(op))


def _outputs_of(result, req):
    """{name: (npy bytes, dtype)} of a function's result: an array (the primary output), or a
    dict of arrays / (array, dtype). Outputs not requested are dropped, as a worker's are."""
    asked = req["outputs"]
    if not isinstance(result, dict):
        primary = "dx" if req["convention"].get("direction") == "backward" else "y"
        result = {primary: result}
    out = {}
    for name, v in result.items():
        if name not in asked and name not in _output_names(req["op"]):
            raise KeyError(f"output {name!r}: {req['op']} has no such output ({', '.join(_output_names(req['op']))})")
        if name not in asked or v is None:
            continue
        if isinstance(v, tuple):
            if len(v) != 2 or not isinstance(v[1], str):
                raise TypeError(f"output {name}: expected an array or (array, dtype name), got a tuple of {len(v)}")
            out[name] = _arrays.encode(v[0], v[1], f"output {name}")
        else:
            out[name] = _arrays.encode(v, asked[name]["dtype"], f"output {name}")
    return out


def _handler(fn):
    """The core's view of `fn`: (request JSON, {name: storage npy}) -> ("outputs", ...) |
    ("skip", reason) | ("error", message)."""

    def handle(req_json, storages):
        try:
            req = json.loads(req_json)
            inputs = {}
            for name, spec in req["inputs"].items():
                storage = _arrays.decode(storages[name])
                inputs[name] = worker.view(storage, spec["shape"], spec["strides"], spec["offset"])
            return ("outputs", _outputs_of(fn(Problem(req, inputs)), req))
        except Skip as s:
            return ("skip", str(s) or "skipped by the function")
        except Exception as e:  # the function failed: the case is ERROR, with the traceback's end
            tb = traceback.format_exc()
            return ("error", f"{type(e).__name__}: {e}\n{tb[-1500:]}")

    return handle


def _name_of(fn, name):
    return name or "python:" + getattr(fn, "__qualname__", getattr(fn, "__name__", type(fn).__name__))


_NO_RERUN = re.compile(r"\n *rerun: normcheck run '<assert_close>'[^\n]*")
_RERUN = re.compile(r"rerun: normcheck run (\S+) --case (\S+) --backend python:(\S+)")


def _python_rerun(text):
    """The CLI's rerun line names a backend the CLI cannot load (python:FN): said in Python."""
    text = _RERUN.sub(r'rerun: normcheck.check(\3, cases="\1", filter="\2")', text)
    return _NO_RERUN.sub("", text)  # assert_close's one problem has no file to rerun


class Report:
    """The report of check(): the same table, failures and JSON as `normcheck run`.
    passed: exit code 0 (at least one case evaluated, none failed or errored, expected
    failures aside). cases: one dict per case (name, status, reason, details, ...)."""

    def __init__(self, d):
        self._d = d
        self.exit_code = d["exit_code"]
        self.passed = self.exit_code == 0
        self.problems = list(d["problems"])
        self.table = d["table"]
        self.details = _python_rerun(d["details"])
        self.json = d["json"]
        self.counts = dict(d["counts"])
        self.cases = [dict(c) for c in d["cases"]]
        for c in self.cases:
            c["details"] = _python_rerun(c["details"])

    @property
    def failures(self):
        """The cases that FAILED or ERRORed and are not expected failures."""
        return [c for c in self.cases if c["status"] in ("FAILED", "ERROR") and not c["expected_failure"]]

    def __bool__(self):
        return self.passed

    def __str__(self):
        return self.table

    def __repr__(self):
        c = self.counts
        return f"<normcheck.Report exit {self.exit_code}: {c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped, {c['errors']} errors>"


def _paths(cases):
    if cases is None or cases == "bundled":
        return []
    if isinstance(cases, (str, os.PathLike)):
        return [os.fspath(cases)]
    paths = [os.fspath(c) for c in cases]
    if not paths:  # a glob that matched nothing must not become the bundled suite
        raise ValueError('cases: an empty list (give paths, or "bundled")')
    return paths


@functools.lru_cache(maxsize=16)
def _suite(paths, tier, filters):
    return _normcheck.Suite(list(paths), tier or "", list(filters), [])


def _select(op, cases, tier, filter, backward):
    """(suite, [case names]) of a selection: the CLI's paths, --tier and --filter, then op."""
    filters = () if filter is None else ((filter,) if isinstance(filter, str) else tuple(filter))
    suite = _suite(tuple(_paths(cases)), tier, filters)
    if op is not None and op not in _normcheck.ops():
        raise ValueError(f"op: unknown op {op!r} ({', '.join(_normcheck.ops())})")
    names = [n for (n, _layer, o, d) in suite.cases() if (op is None or o == op) and (backward or d == "forward")]
    if not names:
        raise ValueError(f"no case selected (op={op!r}, cases={cases!r}, tier={tier!r}, filter={filter!r}, backward={backward})")
    return suite, names


def check(fn, op=None, cases="bundled", tier=None, backward=False, filter=None, expect_failures=None, name=None):
    """Runs the cases on `fn` in this process and returns a Report (the CLI's).

    fn: Problem -> output(s) (module doc). op: keep the cases of this op. cases: "bundled"
    (the bundled suite, with the coverage matrix's quick tier unless `tier` says otherwise),
    a case file or folder, or a list of them. tier: "quick" | "full" (the coverage matrix).
    backward: also run backward cases (fn gets dy and returns dx and the parameters'
    gradients); otherwise they are left out. filter: glob(s) on layer, op or name.
    expect_failures: a TOML file of known failures (README "Expected failures"); its tables
    match `name` (default "python:<fn's qualified name>"). Raises ValueError for a selection
    of nothing or a malformed case file."""
    suite, names = _select(op, cases, tier, filter, backward)
    return Report(suite.run(_handler(fn), _name_of(fn, name), backward, names, os.fspath(expect_failures or "")))


class Case:
    """One case as a pytest parameter (cases()): run it with .check(fn)."""

    def __init__(self, key, name, op, direction, expect_failures):
        self._key, self.name, self.op, self.direction, self._expect = key, name, op, direction, expect_failures

    def __repr__(self):
        return f"normcheck.Case({self.name})"

    def run(self, fn, name=None):
        """This case on fn: a one-case Report."""
        paths, tier, filters = self._key
        return Report(_suite(paths, tier, filters).run(_handler(fn), _name_of(fn, name), self.direction == "backward",
                                                       [self.name], self._expect))

    def check(self, fn, name=None):
        """Runs this case on fn as a pytest test: returns when it PASSED; fails with the CLI's
        failure block when it FAILED or ERRORed; skips when fn skipped it (or the reference
        could not be trusted); an expected failure (expect_failures) is an xfail, and strict:
        when it passes the test fails."""
        import pytest

        self._checked = True
        rep = self.run(fn, name)
        if len(rep.cases) != 1:
            pytest.fail(f"normcheck: case {self.name} ran {len(rep.cases)} times", pytrace=False)
        c = rep.cases[0]
        st = c["status"]
        if c["expected_failure"]:
            if st == "FAILED":
                pytest.xfail(c["expected_failure"])
            if st == "PASSED":
                pytest.fail(f"normcheck: {self.name} is listed as an expected failure but passed: {c['expected_failure']}",
                            pytrace=False)
        if st == "PASSED":
            return rep
        if st == "SKIPPED":
            pytest.skip(c["reason"] or "skipped")
        if st == "MISTRUSTED":
            pytest.skip(f"the reference could not be trusted here: {c['reason']}")
        pytest.fail(c["details"], pytrace=False)


def cases(op=None, cases="bundled", tier=None, backward=False, filter=None, expect_failures=None, argname="nc_case"):
    """A pytest decorator: one test per selected case (ids = case names), the same selection
    as check(). The test takes `nc_case` (a Case) and calls nc_case.check(fn):

        @normcheck.cases("layer_norm")
        def test_my_layer_norm(nc_case):
            nc_case.check(my_layer_norm)

    pytest's -k, -x, xdist and JUnit work per case."""
    import pytest

    suite, names = _select(op, cases, tier, filter, backward)
    filters = () if filter is None else ((filter,) if isinstance(filter, str) else tuple(filter))
    key = (tuple(_paths(cases)), tier, filters)
    dirs = {n: d for (n, _l, _o, d) in suite.cases()}
    ops_of = {n: o for (n, _l, o, _d) in suite.cases()}
    expect = os.fspath(expect_failures or "")
    params = [pytest.param(Case(key, n, ops_of[n], dirs[n], expect), id=n) for n in names]

    def decorate(test):
        @functools.wraps(test)
        def run_case(*args, **kwargs):
            case = kwargs[argname]
            case._checked = False
            result = test(*args, **kwargs)
            if not case._checked:  # the test asserted nothing about the case
                pytest.fail(f"normcheck: {test.__name__} never called {argname}.check(fn) for case {case.name}", pytrace=False)
            return result

        # normcheck_cases: the pytest plugin (normcheck.pytest_plugin) fails a run in which every
        # case of such a test was skipped, as check() does.
        return pytest.mark.parametrize(argname, params)(pytest.mark.normcheck_cases(run_case))

    return decorate


def _problem_args(op, inputs, convention, out_dtype, keys):
    preset = ""
    conv = {}
    if isinstance(convention, str):
        preset = convention
    elif convention is not None:
        conv = dict(convention)
        preset = conv.pop("preset", "")
    conv.update(keys)
    return op, _arrays.encode_named(inputs, "inputs"), preset, json.dumps(conv), out_dtype or ""


class Reference:
    """The exact reference's outputs: outputs (rounded once to each output's dtype; bf16/fp8
    as float32 values), exact (float64: the exact values correctly rounded to binary64),
    condition (the condition magnitudes as the run keeps them, binary32 rounded toward zero
    or whole outside its range, as float64; or None), dtypes, convention (every key)."""

    def __init__(self, d):
        self.outputs, self.exact, self.condition, self.dtypes = {}, {}, {}, {}
        for name, (rounded, exact, cond, dtype) in d["outputs"].items():
            self.outputs[name] = _arrays.decode(rounded)
            self.exact[name] = _arrays.decode(exact)
            self.condition[name] = None if cond is None else _arrays.decode(cond)
            self.dtypes[name] = dtype
        self.convention = json.loads(d["convention"])

    @property
    def y(self):
        return self.outputs.get("y")

    def __repr__(self):
        return f"normcheck.Reference({ {k: v.shape for k, v in self.outputs.items()} })"


def reference(op, inputs, convention=None, out_dtype=None, **keys):
    """The exact result of `op` on `inputs` ({name: array | (array, dtype)}; x at least), under
    `convention` (a preset name like "pytorch.LayerNorm", or a dict of keys, optionally with
    "preset") and keyword convention keys (eps=1e-6, direction="backward", ...).
    normalized_shape defaults to x's last dim; out_dtype to x's dtype. Raises ValueError
    naming the field for an invalid problem."""
    return Reference(_normcheck.reference(*_problem_args(op, inputs, convention, out_dtype, keys)))


def assert_close(actual, op, inputs, convention=None, out_dtype=None, layout=None, name="assert_close", **keys):
    """Checks `actual` (the primary output, or {name: array}) of `op` on `inputs` against the
    exact reference with the default gate (stab, README "Checks, metrics and gates"), as
    `normcheck run` judges a backend; raises AssertionError with the CLI's failure block.
    A drop-in beside torch.testing.assert_close; arguments as reference()."""
    args = _problem_args(op, inputs, convention, out_dtype, keys)
    if not isinstance(actual, dict):
        primary = "dx" if keys.get("direction") == "backward" or (isinstance(convention, dict) and convention.get("direction") == "backward") else "y"
        actual = {primary: actual}
    enc = {}
    for k, v in actual.items():
        if isinstance(v, tuple):
            enc[k] = _arrays.encode(v[0], v[1], f"actual.{k}")
            continue
        # The output's dtype is the problem's (the core checks the values are that dtype's);
        # bf16/fp8 tensors travel as float32 values either way.
        arr, own = _arrays.to_numpy(v)
        wire = own if own in ("bf16", "fp8_e4m3fn", "fp8_e5m2") else None
        enc[k] = (_arrays.encode(arr, wire or own or "f64", f"actual.{k}")[0], wire or "")
    rep = Report(_normcheck.assert_close(*args, layout or "", enc, name))
    if not rep.passed:
        raise AssertionError(rep.details)
    return rep


class FuzzResult:
    """fuzz()'s outcome: draws, evaluated, skipped, skip_reasons, failures (each with the
    drawn and shrunk dimensions, the steps, the message and a ready-to-commit case file).
    passed: at least one draw evaluated and none failed."""

    def __init__(self, d):
        self.__dict__.update({k: v for k, v in d.items()})
        self.failures = [dict(f) for f in d["failures"]]
        self.passed = self.evaluated > 0 and not self.failures

    def __bool__(self):
        return self.passed

    def __str__(self):
        lines = [f"fuzz: {self.draws} draws in {self.seconds:.1f} s: {self.evaluated} evaluated, {self.skipped} skipped, "
                 f"{len(self.failures)} failed"]
        for f in self.failures:
            lines += [f"{f['status']} draw {f['draw']} ({f['op']} {f['drawn']})", f"  {f['message']}",
                      f"  shrunk to {f['shrunk']}: {'; '.join(f['steps'])}", "--- shrunk case file ---", f["case_file"]]
        if self.evaluated == 0:
            lines.append("nothing was evaluated: the function skipped every draw")
        return "\n".join(lines)


def fuzz(fn, op=None, budget=10.0, count=None, seed=1, backward=False, max_width=4097, name=None):
    """Draws random problems over the coverage matrix's dimensions (`normcheck fuzz`), runs
    each on fn and the reference, and shrinks the first failure to a minimal case file.
    op: an op name or a list (default every op); budget: seconds, unless count draws."""
    ops_ = [] if op is None else ([op] if isinstance(op, str) else list(op))
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise ValueError(f"count: a number of draws >= 1, got {count!r}")
    if isinstance(max_width, bool) or not isinstance(max_width, int) or not 1 <= max_width <= 65537:
        raise ValueError(f"max_width: an integer in [1, 65537], got {max_width!r}")
    return FuzzResult(_normcheck.fuzz(_handler(fn), _name_of(fn, name), ops_, int(seed), int(count or 0), float(budget),
                                      bool(backward), int(max_width)))
