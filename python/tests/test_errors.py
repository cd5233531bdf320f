import re

import numpy as np
import pytest
from conftest import random_probe_set, random_t3

import t3k

SHAPE = (3, 4, 5)


@pytest.fixture
def problem(rng):
    x, tucker, tt = random_t3(rng, SHAPE, (2, 3, 2), (1, 2, 3, 1))
    ww, pp = random_probe_set(rng, SHAPE, 6)
    return x, tucker, tt, ww, pp


def raises(*fragments):
    """pytest.raises(ValueError) whose message contains every fragment (literally)."""
    return pytest.raises(ValueError, match="(?s)" + "".join(f"(?=.*{re.escape(f)})" for f in fragments))


def test_a_probe_array_of_the_wrong_width_is_named_with_both_shapes(problem):
    x, _, _, ww, pp = problem
    with raises("t3k.probe_derivatives", "ww[1]", "[6 x 3]", "expected [6 x 4]"):
        t3k.probe_derivatives(x, [ww[0], ww[1][:, :3], ww[2]], pp, 1)


def test_too_few_probe_arrays_are_refused(problem):
    x, _, _, ww, pp = problem
    with raises("pp", "d = 3"):
        t3k.probe_derivatives(x, ww, pp[:2], 1)


def test_a_probe_array_of_the_wrong_rank_is_named(problem):
    x, _, _, ww, pp = problem
    with raises("pp[0]", "2-d", "(W x N_i)", "(3,)"):
        t3k.probe_derivatives(x, ww, [pp[0][0], pp[1], pp[2]], 1)


def test_probe_counts_must_agree(problem):
    x, _, _, ww, pp = problem
    with raises("ww has 6 probes but pp has 5"):
        t3k.probe_derivatives(x, ww, [p[:5] for p in pp], 1)


def test_non_numeric_and_complex_inputs_are_refused(problem):
    x, _, _, ww, pp = problem
    with raises("ww[0]", "real numbers", "str"):
        t3k.probes(x, ["abc", ww[1], ww[2]])
    with raises("ww[2]", "real numbers", "complex"):
        t3k.probes(x, [ww[0], ww[1], ww[2] + 1j])
    with raises("ww", "sequence of arrays"):
        t3k.probes(x, 3.0)


def test_bad_orders_and_chunk_sizes_are_named(problem):
    x, _, _, ww, pp = problem
    with raises("order", ">= 0", "-1"):
        t3k.probe_derivatives(x, ww, pp, -1)
    with raises("chunk_size", ">= 1", "0"):
        t3k.probe_derivatives(x, ww, pp, 1, chunk_size=0)
    with raises("chunk_size", "'auto'", "'big'"):
        t3k.probe_derivatives(x, ww, pp, 1, chunk_size="big")


def test_cores_that_do_not_fit_together_are_named(problem):
    _, tucker, tt, _, _ = problem
    with raises("t3k.TuckerTensorTrain", "TT core 1", "[2 x 2 x 3]", "expected [2 x 3 x 3]"):
        t3k.TuckerTensorTrain(tucker, [tt[0], tt[1][:, :2, :], tt[2]])
    with raises("tucker_cores[0]", "2-d"):
        t3k.TuckerTensorTrain([tucker[0][0], tucker[1], tucker[2]], tt)
    with raises("2 Tucker cores and 3 TT cores"):
        t3k.TuckerTensorTrain(tucker[:2], tt)


def test_random_shape_lists_are_checked():
    with raises("t3k.random_t3", "tt_ranks has 3 entries", "d + 1 = 4"):
        t3k.TuckerTensorTrain.random([3, 4, 5], [2, 2, 2], [1, 2, 1])
    with raises("shape[1]", ">= 0", "-4"):
        t3k.TuckerTensorTrain.random([3, -4, 5], [2, 2, 2], [1, 2, 2, 1])
    with raises("dtype", "float32 or float64", "int32"):
        t3k.TuckerTensorTrain.random([3, 4, 5], [2, 2, 2], [1, 2, 2, 1], dtype=np.int32)


def test_residuals_of_the_wrong_shape_are_named(problem, rng):
    x, _, _, ww, pp = problem
    f = t3k.orthogonal_frame(x)
    residuals = [rng.standard_normal((6, 2, n)) for n in SHAPE]
    with raises("t3k.probe_derivatives_transpose", "residuals[2]", "[6 x 2 x 4]", "expected [6 x 2 x 5]"):
        t3k.probe_derivatives_transpose(f, ww, pp, [residuals[0], residuals[1], residuals[2][:, :, :4]])
    with raises("residuals[1]", "(1, 6, 2, 4)", "a 3-d array like residuals[0]"):
        t3k.probe_derivatives_transpose(f, ww, pp, [residuals[0], residuals[1][None], residuals[2]])
    with raises("residuals[0]", "3-d"):
        t3k.probe_derivatives_transpose(f, ww, pp, [r[0] for r in residuals])


def test_variations_that_do_not_fit_the_frame_are_named(problem, rng):
    x, _, _, ww, pp = problem
    f = t3k.orthogonal_frame(x)
    zeros = t3k.T3Variation.zeros(f, 1)
    wrong = t3k.T3Variation([np.zeros((1, 1, 3))] + zeros.tucker[1:], zeros.tt)
    with raises("t3k.tangent_probe_derivatives", "Tucker variation 0"):
        t3k.tangent_probe_derivatives(f, wrong, ww, pp, 1)
    with raises("t3k.T3Variation", "stack"):
        t3k.T3Variation([np.zeros((2,) + a.shape[1:]) for a in zeros.tucker], zeros.tt)
