"""Entries and applies (docs/math.md, measurements): their jets, J and J^T against dense NumPy references on tiny
shapes, FittingProblem of every kind, score, t3_from_dense, and planted fits of entries and applies."""

import numpy as np
import pytest
from conftest import SHAPES, random_probe_set, random_t3
from dense_reference import dense_scalar_jets, one_hot, t3_dense, tangent_dense

import t3k


def random_indices(rng, shape, n, dtype=np.int64):
    return np.stack([rng.integers(0, n_i, n) for n_i in shape], axis=1).astype(dtype)


def random_variation(rng, frame, n_stack):
    zeros = t3k.T3Variation.zeros(frame, n_stack)
    tucker = [rng.standard_normal(a.shape) for a in zeros.tucker]
    tt = [rng.standard_normal(a.shape) for a in zeros.tt]
    return t3k.T3Variation(tucker, tt), tucker, tt


def dense_tangent(frame, tucker, tt, t):
    return tangent_dense(frame.up_tucker, frame.left_tt, frame.right_tt, frame.outer_tt,
                         [v[t] for v in tucker], [h[t] for h in tt])


def variation_dot(a, b):
    return sum(float(np.sum(x * y)) for x, y in zip(a.tucker + a.tt, b.tucker + b.tt))


# Tolerances: sums of a few hundred products of O(1) numbers, 1e3 epsilon relative to the largest value.
def assert_close(actual, expected):
    scale = max(1, np.abs(expected).max())
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e3 * np.finfo(float).eps * scale)


@pytest.mark.parametrize("shape,tucker_ranks,tt_ranks", SHAPES)
@pytest.mark.parametrize("index_dtype", [np.int64, np.uint8, np.int16])
def test_entries_and_entry_jets_equal_the_dense_subset_expansion(rng, shape, tucker_ranks, tt_ranks, index_dtype):
    x, tucker, tt = random_t3(rng, shape, tucker_ranks, tt_ranks)
    dense = t3_dense(tucker, tt)
    indices = random_indices(rng, shape, 7, index_dtype)
    _, pp = random_probe_set(rng, shape, 7)
    order = len(shape) + 1  # orders past d are zero

    values = t3k.entries(x, indices)
    jets = t3k.entry_derivatives(x, indices, pp, order)

    assert values.shape == (7,) and jets.shape == (7, order + 1)
    assert_close(values, dense[tuple(indices.astype(np.int64).T)])
    assert_close(jets, dense_scalar_jets(dense, one_hot(indices, shape), pp, order))
    assert_close(t3k.entry_derivatives(x, indices.tolist()), values[:, None])


@pytest.mark.parametrize("shape,tucker_ranks,tt_ranks", SHAPES)
def test_applies_and_apply_jets_equal_the_dense_subset_expansion(rng, shape, tucker_ranks, tt_ranks):
    x, tucker, tt = random_t3(rng, shape, tucker_ranks, tt_ranks)
    dense = t3_dense(tucker, tt)
    ww, pp = random_probe_set(rng, shape, 9)

    values = t3k.applies(x, ww)
    jets = t3k.apply_derivatives(x, ww, pp, order=len(shape) + 1, chunk_size=None)

    reference = dense_scalar_jets(dense, ww, pp, len(shape) + 1)
    assert_close(values, reference[:, 0])
    assert_close(jets, reference)
    assert_close(t3k.apply_derivatives(x, ww, pp, order=2, chunk_size=64), reference[:, :3])


@pytest.mark.parametrize("shape,tucker_ranks,tt_ranks", SHAPES)
@pytest.mark.parametrize("order", [0, 2])
def test_j_of_entries_and_applies_is_the_jets_of_the_dense_tangent_tensor(rng, shape, tucker_ranks, tt_ranks, order):
    x, _, _ = random_t3(rng, shape, tucker_ranks, tt_ranks)
    frame = t3k.orthogonal_frame(x)
    v, tucker, tt = random_variation(rng, frame, 2)
    ww, pp = random_probe_set(rng, shape, 5)
    indices = random_indices(rng, shape, 5)

    jv_entries = t3k.tangent_entry_derivatives(frame, v, indices, pp, order)
    jv_applies = t3k.tangent_apply_derivatives(frame, v, ww, pp, order)

    assert jv_entries.shape == jv_applies.shape == (2, 5, order + 1)
    for t in range(2):
        dense = dense_tangent(frame, tucker, tt, t)
        assert_close(jv_entries[t], dense_scalar_jets(dense, one_hot(indices, shape), pp, order))
        assert_close(jv_applies[t], dense_scalar_jets(dense, ww, pp, order))


@pytest.mark.parametrize("shape,tucker_ranks,tt_ranks", SHAPES)
@pytest.mark.parametrize("order", [0, 1, 3])
def test_transpose_is_the_adjoint_of_j_for_entries_and_applies(rng, shape, tucker_ranks, tt_ranks, order):
    x, _, _ = random_t3(rng, shape, tucker_ranks, tt_ranks)
    frame = t3k.orthogonal_frame(x)
    v, _, _ = random_variation(rng, frame, 1)
    ww, pp = random_probe_set(rng, shape, 11)
    indices = random_indices(rng, shape, 11, np.int32)
    pp_or_none = pp if order > 0 else None
    r = rng.standard_normal((11, order + 1))

    for kind, samples in (("entry", indices), ("apply", ww)):
        forward = getattr(t3k, f"tangent_{kind}_derivatives")
        transpose = getattr(t3k, f"{kind}_derivatives_transpose")
        jv = forward(frame, v, samples, pp_or_none, order)[0]
        gradient = transpose(frame, samples, pp_or_none, r)
        lhs, rhs = float(np.sum(jv * r)), variation_dot(v, gradient)
        assert abs(lhs - rhs) <= 1e-10 * max(1.0, abs(lhs)), (kind, lhs, rhs)


def test_scalar_transpose_per_sample_sums_to_the_summed_gradient_and_chunks_agree_bitwise(rng):
    shape = (4, 5, 3)
    x = t3k.TuckerTensorTrain.random(shape, (2, 3, 2), (1, 2, 2, 1), seed=5)
    frame = t3k.orthogonal_frame(x)
    ww, pp = random_probe_set(rng, shape, 150)
    indices = random_indices(rng, shape, 150)
    stack = rng.standard_normal((2, 150, 2))

    for samples, transpose in ((indices, t3k.entry_derivatives_transpose), (ww, t3k.apply_derivatives_transpose)):
        summed = transpose(frame, samples, pp, stack)
        per_sample = transpose(frame, samples, pp, stack, sum_over_probes=False)
        chunked = transpose(frame, samples, pp, stack, chunk_size=64)
        whole = transpose(frame, samples, pp, stack, chunk_size=None)
        single = transpose(frame, samples, pp, stack[1])
        assert summed.n_stack == 2 and per_sample.n_stack == 300
        for a, b, c, e, s in zip(summed.tucker + summed.tt, per_sample.tucker + per_sample.tt,
                                 chunked.tucker + chunked.tt, whole.tucker + whole.tt, single.tucker + single.tt):
            np.testing.assert_allclose(b.reshape((2, 150) + b.shape[1:]).sum(axis=1), a, atol=1e-11)
            assert np.array_equal(a, c) and np.array_equal(a, e)
            np.testing.assert_array_equal(a[1], s[0])


def test_t3_from_dense_is_exact_without_caps_and_truncates_with_them(rng):
    x, tucker, tt = random_t3(rng, (4, 5, 3, 4), (2, 3, 2, 2), (1, 2, 3, 2, 1))
    dense = t3_dense(tucker, tt)

    exact, tucker_sv, tt_sv = t3k.t3_from_dense(dense)
    capped, _, _ = t3k.t3_from_dense(dense, max_tucker_ranks=[1, 1, 1, 1], max_tt_ranks=[1, 1, 1, 1, 1])
    single, _, _ = t3k.t3_from_dense(dense.astype(np.float32))

    assert exact.shape == (4, 5, 3, 4) and len(tucker_sv) == 4 and len(tt_sv) == 3
    np.testing.assert_allclose(exact.to_dense(), dense, atol=1e-12 * np.abs(dense).max())
    assert capped.tucker_ranks == [1, 1, 1, 1]
    assert np.linalg.norm(capped.to_dense() - dense) < np.linalg.norm(dense)
    assert single.dtype == np.float32
    np.testing.assert_allclose(single.to_dense(), dense, atol=1e-5 * np.abs(dense).max())
    with pytest.raises(ValueError, match=r"dense\[0, 1, 2, 3\] = nan"):
        bad = dense.copy()
        bad[0, 1, 2, 3] = np.nan
        t3k.t3_from_dense(bad)
    with pytest.raises(ValueError, match="dense"):
        t3k.t3_from_dense(np.float64(1.0))


@pytest.mark.parametrize("kind", ["probes", "entries", "applies"])
def test_the_chunk_size_model_takes_every_kind(kind):
    args = ((20, 20, 20), (4, 4, 4), (1, 4, 4, 1), 1, 100000)
    chunk = t3k.estimate_chunk_size(*args, kind=kind)
    within = t3k.max_chunk_size_within(*args, target_bytes=1 << 30, kind=kind)
    assert chunk >= 1 and within >= 1
    if kind == "probes":
        assert chunk == t3k.estimate_chunk_size(*args)
    with pytest.raises(ValueError, match="kind must be 'probes', 'applies' or 'entries', got 'rows'"):
        t3k.estimate_chunk_size(*args, kind="rows")


def test_bad_indices_raise_value_errors_naming_the_index_and_the_mode_size(rng):
    x = t3k.TuckerTensorTrain.random((3, 4, 5), (2, 2, 2), (1, 2, 2, 1), seed=1)
    cases = [
        ([[0, 1, 2], [1, 4, 0]], r"indices\[1, 1\] = 4 is out of range for mode 1 of size 4"),
        (np.array([[0, 0, -1]], dtype=np.int8), r"indices\[0, 2\] = -1 is out of range for mode 2 of size 5"),
        (np.array([[2**40, 0, 0]]), r"indices\[0, 0\] = 1099511627776 is out of range for mode 0 of size 3"),
        (np.array([[0, 0, 2**64 - 1]], dtype=np.uint64), r"indices\[0, 2\] = 18446744073709551615 is out of range"),
        (np.zeros((2, 3)), "indices must be a 2-d array of integers .* dtype float64"),
        (np.zeros((2, 3), dtype=bool), "indices must be a 2-d array of integers"),
        ([["0", "1", "2"]], "indices must be a 2-d array of integers"),
        (np.zeros((2, 2), dtype=int), r"indices has shape \(2, 2\), expected \(W x d\) with d = 3"),
        (np.zeros(3, dtype=int), r"indices has shape \(3,\)"),
    ]
    for indices, message in cases:
        for call in (lambda: t3k.entries(x, indices),
                     lambda: t3k.FittingProblem.entries(indices, np.zeros(len(np.asarray(indices))), x.shape)):
            with pytest.raises(ValueError, match=message):
                call()


def test_scalar_calls_name_the_bad_argument(rng):
    shape = (3, 4, 5)
    x = t3k.TuckerTensorTrain.random(shape, (2, 2, 2), (1, 2, 2, 1), seed=1)
    frame = t3k.orthogonal_frame(x)
    ww, pp = random_probe_set(rng, shape, 4)
    indices = random_indices(rng, shape, 4)
    with pytest.raises(ValueError, match="t3k.apply_derivatives: pp must hold one .* for order >= 1, got None"):
        t3k.apply_derivatives(x, ww, order=1)
    with pytest.raises(ValueError, match=r"t3k.applies: ww\[1\] has shape \[4 x 3\], expected \[4 x 4\]"):
        t3k.applies(x, [ww[0], ww[0], ww[2]])
    with pytest.raises(ValueError, match="t3k.entry_derivatives: got 2 pp probe-vector arrays for a T3 with d = 3"):
        t3k.entry_derivatives(x, indices, pp[:2], 1)
    with pytest.raises(ValueError, match=r"residuals must be a 2-d or 3-d array .* got an array of shape \(4,\)"):
        t3k.entry_derivatives_transpose(frame, indices, None, np.zeros(4))
    with pytest.raises(ValueError, match="residuals"):
        t3k.apply_derivatives_transpose(frame, ww, pp, np.zeros((3, 2)))
    with pytest.raises(ValueError, match="pp must hold one"):
        t3k.apply_derivatives_transpose(frame, ww, None, np.zeros((4, 2)))


def test_fitting_problems_of_entries_and_applies_hold_their_arrays_and_check_them(rng):
    shape = (3, 4, 5)
    ww, pp = random_probe_set(rng, shape, 6)
    indices = random_indices(rng, shape, 6, np.int16)
    values = rng.standard_normal((6, 3))

    entries = t3k.FittingProblem.entries(indices, values, shape, pp=pp, weights=np.ones(6), order_weights=[1, .5, .25])
    applies = t3k.FittingProblem.applies(ww, values[:, 0])
    probes = t3k.FittingProblem(ww, pp, [rng.standard_normal((6, 2, n)) for n in shape], order_weights=[1.0, 0.1])

    assert (entries.kind, applies.kind, probes.kind) == ("entries", "applies", "probes")
    assert entries.indices.dtype == np.int32 and np.array_equal(entries.indices, indices)
    assert np.array_equal(entries.values, values) and entries.targets[0].shape == (6, 3, 1)
    assert entries.order == 2 and applies.order == 0 and entries.shape == applies.shape == shape
    assert np.array_equal(entries.order_weights, [1, .5, .25]) and applies.order_weights is None
    assert applies.values.shape == (6, 1) and applies.indices is None and probes.values is None
    assert entries.ww == [] and len(entries.pp) == 3 and probes.order_weights.shape == (2,)
    bad = values.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"values\[2, 1\] = nan; every entry of values must be finite"):
        t3k.FittingProblem.entries(indices, bad, shape, pp=pp)
    with pytest.raises(ValueError, match="pp must hold one .* for K >= 1"):
        t3k.FittingProblem.entries(indices, values, shape)
    with pytest.raises(ValueError, match="order_weights has 2 entries, expected K \\+ 1 = 3"):
        t3k.FittingProblem.applies(ww, values, pp, order_weights=[1, 1])
    with pytest.raises(ValueError, match="order_weights"):
        t3k.FittingProblem.applies(ww, values, pp, order_weights=[1, -1, 1])
    with pytest.raises(ValueError, match="values must be a 1-d or 2-d array"):
        t3k.FittingProblem.applies(ww, values[None], pp)
    with pytest.raises(ValueError, match=r"values has shape \(4, 3\), expected 6 rows \(W = 6 samples in ww\[0\]\)"):
        t3k.FittingProblem.applies(ww, values[:4], pp)
    with pytest.raises(ValueError, match="validation must be a FittingProblem of the same kind"):
        other = t3k.FittingProblem.entries(indices, values[:, 0], shape)
        t3k.FittingProblem.applies(ww, values[:, :1], validation=other)
    with pytest.raises(ValueError, match="kind must be"):
        t3k.FittingProblem.planted(t3k.TuckerTensorTrain.random(shape, (2, 2, 2), (1, 2, 2, 1)), 5, 0, kind="entry")


@pytest.mark.parametrize("kind", ["probes", "entries", "applies"])
def test_score_and_hold_out_work_for_every_kind(kind):
    shape = (4, 5, 3)
    truth = t3k.TuckerTensorTrain.random(shape, (2, 2, 2), (1, 2, 2, 1), seed=7)
    other = t3k.TuckerTensorTrain.random(shape, (2, 2, 2), (1, 2, 2, 1), seed=8)
    problem = t3k.FittingProblem.planted(truth, 40, 1, seed=9, kind=kind)

    at_truth, at_other = t3k.score(problem, truth), t3k.score(problem, other)
    train = problem.hold_out(fraction=0.25, seed=3)

    assert problem.kind == kind and at_truth["loss"] < 1e-25
    targets = np.concatenate([t.reshape(-1) for t in problem.targets])
    assert at_other["zero_loss"] == pytest.approx(0.5 * np.sum(targets**2), rel=1e-12)
    assert at_other["relative_residual"] == pytest.approx(np.sqrt(at_other["loss"] / at_other["zero_loss"]))
    assert train.kind == train.validation.kind == kind
    assert (train.n_probes, train.validation.n_probes) == (30, 10) and train.shape == shape
    result = t3k.fit(train, other, "gradient_descent", max_iterations=1)
    assert result.history[0]["loss"] == pytest.approx(t3k.score(train, other)["loss"], rel=1e-12)
    assert result.history[0]["validation_relative_residual"] == pytest.approx(
        t3k.score(train.validation, other)["relative_residual"], rel=1e-12)
    with pytest.raises(ValueError, match="t3k.score: x has shape"):
        t3k.score(problem, t3k.TuckerTensorTrain.random((4, 5, 4), (2, 2, 2), (1, 2, 2, 1)))


def test_order_weights_scale_each_order_of_the_loss(rng):
    shape = (4, 3, 5)
    truth = t3k.TuckerTensorTrain.random(shape, (2, 2, 2), (1, 2, 2, 1), seed=1)
    x = t3k.TuckerTensorTrain.random(shape, (2, 2, 2), (1, 2, 2, 1), seed=2)
    planted = t3k.FittingProblem.planted(truth, 20, 2, seed=3, kind="applies")
    weights, omega = rng.uniform(0, 1, 20), np.array([1.0, 0.3, 0.1])

    weighted = t3k.FittingProblem.applies(planted.ww, planted.values, planted.pp, weights=weights, order_weights=omega)

    r = t3k.apply_derivatives(x, planted.ww, planted.pp, 2) - planted.values
    expected = 0.5 * np.sum(weights[:, None] * omega[None, :] ** 2 * r**2)
    assert t3k.score(weighted, x)["loss"] == pytest.approx(expected, rel=1e-12)


def held_out_entry_error(x, truth, problem, rng, n=2000):
    """Relative error of x on n random entries not in the problem."""
    seen = {tuple(i) for i in problem.indices}
    fresh = np.array([i for i in random_indices(rng, truth.shape, 3 * n).tolist() if tuple(i) not in seen][:n])
    want = t3k.entries(truth, fresh)
    return np.linalg.norm(t3k.entries(x, fresh) - want) / np.linalg.norm(want)


def test_a_planted_entries_problem_is_completed_from_a_spectral_start(rng):
    # A 10^4 tensor of ranks 2 from 20% of its entries: the zero-filled entries rescaled by (size / W), an unbiased
    # estimate of the tensor, truncated to ranks 2 by t3_from_dense, then Newton-CG. (From 10% the estimate is too
    # noisy at this size for the start to lie in the basin of the planted tensor.)
    shape = (10, 10, 10, 10)
    truth = t3k.TuckerTensorTrain.random(shape, (2, 2, 2, 2), (1, 2, 2, 2, 1), seed=31)
    problem = t3k.FittingProblem.planted(truth, 2000, 0, seed=32, kind="entries")
    zero_filled = np.zeros(shape)
    np.add.at(zero_filled, tuple(problem.indices.T), problem.values[:, 0] * zero_filled.size / problem.n_probes)
    start, _, _ = t3k.t3_from_dense(zero_filled, max_tucker_ranks=[2] * 4, max_tt_ranks=[1, 2, 2, 2, 1])

    result = t3k.fit(problem, start, "newton_cg", max_iterations=40, tol_relative_residual=1e-12,
                     cg_max_iterations=100)

    assert held_out_entry_error(result.x, truth, problem, rng) < 1e-8, result.reason


def test_a_planted_applies_problem_is_recovered(rng):
    shape = (6, 5, 7, 4)
    truth = t3k.TuckerTensorTrain.random(shape, (2, 2, 3, 2), (1, 2, 3, 2, 1), seed=41)
    x0 = t3k.TuckerTensorTrain([u + 0.1 * rng.standard_normal(u.shape) for u in truth.tucker_cores],
                               [g + 0.1 * rng.standard_normal(g.shape) for g in truth.tt_cores])
    problem = t3k.FittingProblem.planted(truth, 400, 0, seed=42, kind="applies")

    result = t3k.fit(problem, x0, "newton_cg", max_iterations=60, tol_relative_residual=1e-11, cg_max_iterations=100)

    dense = truth.to_dense()
    assert np.linalg.norm(result.x.to_dense() - dense) / np.linalg.norm(dense) < 1e-8, result.reason


def test_an_order_weighted_apply_jet_fit_damps_a_noisy_top_order(rng):
    # Apply jets of order 2 with 3% noise on order 2 alone: weights (1, 0.1, 0.01) let little of it through.
    shape = (6, 5, 7, 4)
    truth = t3k.TuckerTensorTrain.random(shape, (2, 2, 3, 2), (1, 2, 3, 2, 1), seed=41)
    x0 = t3k.TuckerTensorTrain([u + 0.1 * rng.standard_normal(u.shape) for u in truth.tucker_cores],
                               [g + 0.1 * rng.standard_normal(g.shape) for g in truth.tt_cores])
    planted = t3k.FittingProblem.planted(truth, 200, 2, seed=44, kind="applies")
    values = planted.values.copy()
    values[:, 2] += 0.03 * np.sqrt(np.mean(values[:, 2] ** 2)) * rng.standard_normal(200)
    dense = truth.to_dense()

    errors = {}
    for omega in ([1.0, 0.1, 0.01], None):
        problem = t3k.FittingProblem.applies(planted.ww, values, planted.pp, order_weights=omega)
        result = t3k.fit(problem, x0, "newton_cg", max_iterations=30, cg_max_iterations=100)
        errors[omega is None] = np.linalg.norm(result.x.to_dense() - dense) / np.linalg.norm(dense)

    assert errors[False] < 1e-3 and errors[False] < 0.5 * errors[True], errors


def test_float32_scalar_measurements_run_in_float32_and_problems_keep_their_own_indices(rng):
    shape = (3, 4, 5)
    x = t3k.TuckerTensorTrain.random(shape, (2, 2, 2), (1, 2, 2, 1), seed=1, dtype="float32")
    indices = random_indices(rng, shape, 5, np.int32)
    ww, pp = random_probe_set(rng, shape, 5, np.float32)

    values = t3k.entries(x, indices)
    jets = t3k.apply_derivatives(x, ww, pp, 1)
    problem = t3k.FittingProblem.entries(indices, values, shape)
    indices[0, 0] = 99  # the problem holds the indices it checked

    assert values.dtype == jets.dtype == problem.dtype == np.float32
    assert problem.indices[0, 0] != 99 and t3k.score(problem, x)["loss"] == 0
    x64 = t3k.TuckerTensorTrain.random(shape, (2, 2, 2), (1, 2, 2, 1), seed=1)
    with pytest.raises(ValueError, match="t3k.score: the problem is float32 but x is float64"):
        t3k.score(problem, x64)


@pytest.mark.skipif(not t3k.has_hdf5, reason="a build without HDF5")
def test_save_problem_refuses_what_the_file_cannot_hold(tmp_path):
    truth = t3k.TuckerTensorTrain.random((3, 4, 5), (2, 2, 2), (1, 2, 2, 1), seed=1)
    entries = t3k.FittingProblem.planted(truth, 10, 0, kind="entries")
    probes = t3k.FittingProblem.planted(truth, 10, 1)
    weighted = t3k.FittingProblem(probes.ww, probes.pp, probes.targets, order_weights=[1.0, 0.5])

    for problem in (entries, weighted):
        with pytest.raises(ValueError, match="t3k.save_problem: problem must be a problem of probes"):
            t3k.save_problem(tmp_path / "problem.h5", problem)
    assert not (tmp_path / "problem.h5").exists()
