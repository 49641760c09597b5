"""normcheck in pytest (README "Python"): one test per bundled case. The NumPy LayerNorm and
RMSNorm pass (binary64 data skipped); PyTorch's CPU LayerNorm and RMSNorm pass too where
torch is installed, their known findings (README "Findings") as strict xfails."""

import os

import pytest

import normcheck
from my_norms import numpy_layer_norm, numpy_rms_norm, torch_norm

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TORCH_FINDINGS = os.path.join(REPO, "tools", "adapters", "pytorch_expected_failures.toml")


@normcheck.cases("layer_norm")
def test_numpy_layer_norm(nc_case):
    nc_case.check(numpy_layer_norm)


@normcheck.cases("rms_norm")
def test_numpy_rms_norm(nc_case):
    nc_case.check(numpy_rms_norm)


try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _torch_name():
    # the name the findings file's tables match ("torch * cpu")
    return f"torch {torch.__version__} cpu"


@needs_torch
@normcheck.cases("layer_norm", expect_failures=TORCH_FINDINGS)
def test_torch_layer_norm(nc_case):
    nc_case.check(torch_norm, name=_torch_name())


@needs_torch
@normcheck.cases("rms_norm", expect_failures=TORCH_FINDINGS)
def test_torch_rms_norm(nc_case):
    nc_case.check(torch_norm, name=_torch_name())
