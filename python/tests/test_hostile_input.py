"""Input the module must refuse before it computes, as the t3k tool does: each case that once got through is a named
test, and a generated run of hostile calls checks that every call succeeds or raises a documented exception naming
its argument."""

import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import random_probe_set

import t3k

SHAPE = (3, 4, 5)


def raises(exception, *fragments):
    """pytest.raises(exception) whose message contains every fragment (literally)."""
    return pytest.raises(exception, match="(?s)" + "".join(f"(?=.*{re.escape(f)})" for f in fragments))


@pytest.fixture
def setting(rng):
    x = t3k.TuckerTensorTrain.random(SHAPE, (2, 3, 2), (1, 2, 3, 1), seed=1)
    ww, pp = random_probe_set(rng, SHAPE, 6)
    targets = t3k.probe_derivatives(x, ww, pp, 1)
    return x, ww, pp, targets


def available_bytes():
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    pytest.skip("no MemAvailable in /proc/meminfo")


# --- sizes against the memory available -------------------------------------------------------------------------


def test_a_per_probe_transpose_larger_than_memory_raises_memory_error_before_allocating(rng):
    shape = (40, 40, 40)
    x = t3k.TuckerTensorTrain.random(shape, (40, 40, 40), (1, 40, 40, 1), seed=2)
    frame = t3k.orthogonal_frame(x)
    per_probe = 8 * (40 * 40 * 40 + 2 * 40 * 40 + 3 * 40 * 40)  # the TT and Tucker blocks of one variation
    w = 2 * available_bytes() // per_probe + 1
    if w * sum(shape) * 8 * 3 > 1 << 30:
        pytest.skip("the inputs that would exceed this machine's memory are too large to build here")
    ww, pp = random_probe_set(rng, shape, w)
    residuals = [np.zeros((w, 1, n)) for n in shape]
    start = time.monotonic()
    with raises(MemoryError, "t3k.probe_derivatives_transpose", "sum_over_probes=False", "residuals", "ww"):
        t3k.probe_derivatives_transpose(frame, ww, pp, residuals, sum_over_probes=False)
    assert time.monotonic() - start < 5  # refused, not computed


def test_a_zero_stack_of_two_to_the_forty_variations_is_refused(setting):
    frame = t3k.orthogonal_frame(setting[0])
    with raises(MemoryError, "t3k.T3Variation.zeros", "n_stack = 1099511627776"):
        t3k.T3Variation.zeros(frame, n_stack=2**40)


def test_sizes_beyond_memory_are_refused_naming_the_argument(setting):
    x, ww, pp, _ = setting
    with raises(MemoryError, "t3k.TuckerTensorTrain.random", "shape"):
        t3k.TuckerTensorTrain.random((2**40, 4), (2, 2), (1, 2, 1))
    with raises(MemoryError, "t3k.FittingProblem.planted", "n_probes = 1099511627776"):
        t3k.FittingProblem.planted(x, 2**40, 1)
    with raises(MemoryError, "t3k.probe_derivatives", "order 1099511627776"):
        t3k.probe_derivatives(x, ww, pp, 2**40)


def test_estimate_chunk_size_names_n_tangent_when_the_model_cannot_count_it():
    with raises(MemoryError, "t3k.estimate_chunk_size", "n_tangent = 4611686018427387904"):
        t3k.estimate_chunk_size(SHAPE, (2, 2, 2), (1, 2, 2, 1), 1, 100, n_tangent=2**62)
    with raises(MemoryError, "t3k.max_chunk_size_within", "n_tangent"):
        t3k.max_chunk_size_within(SHAPE, (2, 2, 2), (1, 2, 2, 1), 1, 100, 1 << 30, n_tangent=2**62)


def test_a_large_broadcast_view_is_refused_and_a_small_one_is_copied(setting):
    x, ww, _, _ = setting
    start = time.monotonic()
    with raises(ValueError, "t3k.probes", "ww[0]", "broadcast view"):
        t3k.probes(x, [np.broadcast_to(np.ones(n), (2**24, n)) for n in SHAPE])
    assert time.monotonic() - start < 5
    small = [np.broadcast_to(w[:1], w.shape) for w in ww]
    expected = t3k.probes(x, [np.ascontiguousarray(s) for s in small])
    for got, want in zip(t3k.probes(x, small), expected):
        np.testing.assert_array_equal(got, want)


# --- values: finite, non-negative weights -----------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("name", ["ww", "pp", "targets"])
def test_non_finite_problem_data_is_refused_naming_the_array_and_the_first_entry(setting, name, bad):
    _, ww, pp, targets = setting
    arrays = {"ww": [a.copy() for a in ww], "pp": [a.copy() for a in pp], "targets": [a.copy() for a in targets]}
    arrays[name][1][3, 1] = bad
    arrays[name][1][4, 0] = bad
    with raises(ValueError, "t3k.FittingProblem", f"{name}[1][3, 1", "finite"):
        t3k.FittingProblem(arrays["ww"], arrays["pp"], arrays["targets"])


@pytest.mark.parametrize("bad", [np.nan, -np.inf])
def test_the_first_non_finite_entry_of_a_large_array_is_named(rng, bad):
    # 40000 entries: past the size below which the module scans an array on the calling thread, so that on a machine
    # with a free core the scan is a parallel reduction, which must still name the first entry.
    ww, pp = random_probe_set(rng, SHAPE, 10000)
    ww[1][9000, 2] = bad
    ww[1][7000, 3] = bad
    ww[1][8000, 0] = bad
    targets = [np.zeros((10000, 2, n)) for n in SHAPE]
    with raises(ValueError, "t3k.FittingProblem", "ww[1][7000, 3]", "finite"):
        t3k.FittingProblem(ww, pp, targets)


@pytest.mark.parametrize("bad", [-1.0, np.nan, np.inf])
def test_negative_or_non_finite_weights_are_refused(setting, bad):
    _, ww, pp, targets = setting
    weights = np.ones(6)
    weights[2] = bad
    with raises(ValueError, "t3k.FittingProblem", "weights[2]", ">= 0"):
        t3k.FittingProblem(ww, pp, targets, weights=weights)


@pytest.mark.parametrize("noise", [float("inf"), float("nan"), -0.5])
def test_planted_noise_must_be_a_finite_number_at_least_zero(setting, noise):
    with raises(ValueError, "t3k.FittingProblem.planted", "noise"):
        t3k.FittingProblem.planted(setting[0], 10, 1, noise=noise)


def test_an_x0_holding_nan_is_refused(setting):
    x, ww, pp, targets = setting
    tucker = [u.copy() for u in x.tucker_cores]
    tucker[2][1, 0] = np.nan
    with raises(ValueError, "t3k.fit", "x0.tucker_cores[2][1, 0]", "finite"):
        t3k.fit(t3k.FittingProblem(ww, pp, targets), t3k.TuckerTensorTrain(tucker, x.tt_cores))


@pytest.mark.parametrize("optimizer", ["newton_cg", "gradient_descent", "adam"])
def test_a_fit_never_reports_convergence_on_a_non_finite_loss(setting, optimizer):
    x, ww, pp, targets = setting
    # Finite float32 cores whose jets overflow: the loss is not finite from the start.
    huge = t3k.TuckerTensorTrain([u * 1e13 for u in x.tucker_cores], [g * 1e13 for g in x.tt_cores], dtype="float32")
    problem = t3k.FittingProblem(ww, pp, targets, dtype="float32")
    try:
        result = t3k.fit(problem, huge, optimizer, max_iterations=3)
    except ValueError as error:  # adam steps on and meets the NaNs in a factorization: refused, not converged
        assert optimizer == "adam" and "non-finite" in str(error)
        return
    assert not np.isfinite(result.history[-1]["loss"])
    assert not result.converged
    assert "finite" in result.reason


# --- types, paths, options, messages ----------------------------------------------------------------------------


def test_strings_booleans_and_structured_arrays_are_not_numbers(setting):
    x, ww, pp, _ = setting
    for bad in (
        np.array([["1", "2", "3"]] * 6),
        [["1.5"] * 3] * 6,
        np.zeros(6, dtype=[("a", "f8"), ("b", "f8"), ("c", "f8")]),
        ww[0] > 0,
        np.array([[object()] * 3] * 6),
    ):
        with raises(ValueError, "t3k.probes", "ww[0]", "real numbers"):
            t3k.probes(x, [bad, ww[1], ww[2]])
    with raises(ValueError, "t3k.TuckerTensorTrain", "tucker_cores[0]", "real numbers"):
        t3k.TuckerTensorTrain([np.array([["a"] * 3] * 2)] + x.tucker_cores[1:], x.tt_cores)
    integers = [np.round(w * 10).astype(np.int64) for w in ww]  # integers are numbers, converted to the dtype
    for got, want in zip(t3k.probes(x, integers), t3k.probes(x, [i.astype(float) for i in integers])):
        np.testing.assert_array_equal(got, want)


@pytest.mark.skipif(not t3k.has_hdf5, reason="a build without HDF5")
def test_a_nul_byte_in_a_path_or_dataset_name_is_refused(setting, tmp_path):
    x, ww, pp, targets = setting
    problem = t3k.FittingProblem(ww, pp, targets)
    bad = str(tmp_path / "model.h5") + "\0.txt"
    with raises(ValueError, "t3k.save", "path", "NUL"):
        t3k.save(bad, x)
    with raises(ValueError, "t3k.save_problem", "path", "NUL"):
        t3k.save_problem(os.fsencode(bad), problem)
    with raises(ValueError, "t3k.load", "path", "NUL"):
        t3k.load(bad)
    with raises(ValueError, "t3k.load_problem", "path", "NUL"):
        t3k.load_problem(bad)
    with raises(ValueError, "t3k.save_problem", "weights", "NUL"):
        t3k.save_problem(tmp_path / "p.h5", problem, weights="/w\0x")
    assert list(tmp_path.iterdir()) == []


def test_a_batch_size_larger_than_the_probes_is_refused(setting):
    x, ww, pp, targets = setting
    problem = t3k.FittingProblem(ww, pp, targets)
    for optimizer in ("mc_sgd", "adam"):
        with raises(ValueError, "t3k.fit", "batch_size", "W = 6", "100"):
            t3k.fit(problem, x, optimizer, batch_size=100, max_iterations=1)
    assert t3k.fit(problem, x, "adam", batch_size=6, max_iterations=1).history  # W itself is in range


def test_an_x0_with_another_number_of_modes_is_named_x0(setting):
    _, ww, pp, targets = setting
    x4 = t3k.TuckerTensorTrain.random(SHAPE + (2,), (2, 2, 2, 2), (1, 2, 2, 2, 1))
    with raises(ValueError, "t3k.fit", "x0 has d = 4 modes (shape [3 x 4 x 5 x 2])", "have 3 (mode sizes [3 x 4 x 5])"):
        t3k.fit(t3k.FittingProblem(ww, pp, targets), x4)


def test_a_callback_returning_an_array_is_named(setting):
    x, ww, pp, targets = setting
    with raises(TypeError, "t3k.fit", "callback", "shape (3,)"):
        t3k.fit(t3k.FittingProblem(ww, pp, targets), x, callback=lambda record: np.ones(3), max_iterations=2)


def test_toolbox_conversions_of_garbage_name_their_argument(setting):
    frame = t3k.orthogonal_frame(setting[0])
    base = t3k.frame_to_t3toolbox(frame)
    with raises(ValueError, "t3k.frame_from_t3toolbox", "base[1] (left_tt)", "sequence of arrays"):
        t3k.frame_from_t3toolbox((base[0], 7, base[2], base[3]))
    with raises(ValueError, "t3k.frame_from_t3toolbox", "base[3] (outer_tt)[0]", "real numbers"):
        t3k.frame_from_t3toolbox((base[0], base[1], base[2], ["abc"] * 3))
    with raises(ValueError, "t3k.frame_from_t3toolbox", "4-tuple"):
        t3k.frame_from_t3toolbox("abcd")
    with raises(ValueError, "t3k.variation_from_t3toolbox", "variation[1] (tt)"):
        t3k.variation_from_t3toolbox(([np.zeros((1, 3))], "xy"))


def test_a_t3_built_from_another_t3s_cores_exits_silently():
    script = (
        "import t3k\n"
        "x = t3k.TuckerTensorTrain.random((3, 4, 5), (2, 2, 2), (1, 2, 2, 1))\n"
        "y = t3k.TuckerTensorTrain(x.tucker_cores, x.tt_cores)\n"
        "f = t3k.OrthogonalFrame(*t3k.frame_to_t3toolbox(t3k.orthogonal_frame(y)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
