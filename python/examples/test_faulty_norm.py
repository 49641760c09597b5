"""A deliberately wrong LayerNorm (eps added to the standard deviation): normcheck must fail
it, naming the cases (README "Python"; python/tests checks that this file fails)."""

import normcheck
from my_norms import faulty_layer_norm


@normcheck.cases("layer_norm")
def test_faulty_layer_norm(nc_case):
    nc_case.check(faulty_layer_norm)
