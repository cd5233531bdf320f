"""Shared Tucker factors from Python: t3k.fit(..., sharing=labels) and manifold_dimension(..., sharing=labels).

The planted model has three modes of size 6 that use one factor and a fourth of size 4; the references are the
dense planted tensor and counts made here from the dimension formula of docs/math.md."""

import itertools

import numpy as np
import pytest
from dense_reference import jacobian_rank, t3_dense
from test_errors import raises

import t3k

SHAPE, TUCKER_RANKS, TT_RANKS = (6, 6, 6, 4), (3, 3, 3, 2), (1, 3, 3, 2, 1)
SHARING = [0, 0, 0, 1]


@pytest.fixture
def planted(rng):
    """A planted problem whose modes 0-2 share one factor (one array), and an untied start near it: every core,
    each of the three shared factors on its own, perturbed by 1e-2 relative."""
    shared = rng.standard_normal((3, 6))
    tucker = [shared, shared, shared, rng.standard_normal((2, 4))]
    tt = [rng.standard_normal((TT_RANKS[i], TUCKER_RANKS[i], TT_RANKS[i + 1])) for i in range(4)]
    truth = t3k.TuckerTensorTrain(tucker, tt)
    problem = t3k.FittingProblem.planted(truth, n_probes=60, order=1, seed=5)
    x0 = t3k.TuckerTensorTrain(
        [u + 1e-2 * np.abs(u).mean() * rng.standard_normal(u.shape) for u in tucker],
        [g + 1e-2 * np.abs(g).mean() * rng.standard_normal(g.shape) for g in tt],
    )
    return truth, problem, x0


def relative_error(x, truth):
    dense = t3_dense(truth.tucker_cores, truth.tt_cores)
    return np.linalg.norm(x.to_dense() - dense) / np.linalg.norm(dense)


def same_bits(a, b):
    return all(np.array_equal(u, v) for u, v in zip(a.tucker_cores + a.tt_cores, b.tucker_cores + b.tt_cores))


def test_newton_cg_recovers_the_planted_shared_model_with_one_factor(planted):
    truth, problem, x0 = planted
    assert not np.array_equal(x0.tucker_cores[0], x0.tucker_cores[1])

    result = t3k.fit(problem, x0, "newton_cg", sharing=SHARING, max_iterations=40, tol_relative_residual=1e-12,
                     cg_max_iterations=100)

    factors = result.x.tucker_cores
    assert np.array_equal(factors[0], factors[1]) and np.array_equal(factors[0], factors[2])
    assert factors[3].shape == (2, 4)
    assert relative_error(result.x, truth) < 1e-8, result.reason
    # x0's factors were not shared: the fit started from its best shared model and says so.
    assert any("best shared model" in note for note in result.notes), result.notes


@pytest.mark.parametrize("optimizer", ["gradient_descent", "mc_sgd", "adam"])
def test_every_optimizer_keeps_the_factors_shared(planted, optimizer):
    _, problem, x0 = planted
    minibatches = {} if optimizer == "gradient_descent" else {"batch_size": 40}
    result = t3k.fit(problem, x0, optimizer, sharing=SHARING, max_iterations=5, **minibatches)

    factors = result.x.tucker_cores
    assert np.array_equal(factors[0], factors[1]) and np.array_equal(factors[0], factors[2])
    assert result.history[-1]["loss"] < result.history[0]["loss"]


def test_no_sharing_and_a_trivial_sharing_change_no_bit(planted):
    _, problem, x0 = planted
    options = {"max_iterations": 4, "cg_max_iterations": 20}
    before = t3k.fit(problem, x0, "newton_cg", **options)
    none = t3k.fit(problem, x0, "newton_cg", sharing=None, **options)
    trivial = t3k.fit(problem, x0, "newton_cg", sharing=[7, 3, 5, 1], **options)

    for result in (none, trivial):
        assert same_bits(result.x, before.x)
        assert [r["loss"] for r in result.history] == [r["loss"] for r in before.history]
        assert result.notes == before.notes
    # The unshared fit does not tie the factors.
    assert not np.array_equal(before.x.tucker_cores[0], before.x.tucker_cores[1])


def test_a_start_with_equal_factors_starts_where_it_is(planted):
    truth, problem, _ = planted
    result = t3k.fit(problem, truth, "newton_cg", sharing=np.array(SHARING), max_iterations=3)

    assert result.notes == []
    assert result.history[0]["relative_residual"] < 1e-12


@pytest.mark.parametrize(
    "sharing, fragments",
    [
        ([0, 0, 1], ["sharing has 3 labels", "d = 4", "x0"]),
        ([0, 0, 0, 1, 1], ["sharing has 5 labels", "d = 4"]),
        ([0, 0.0, 0, 1], ["sharing[1] must be an integer label", "float"]),
        ([True, True, True, False], ["sharing[0] must be an integer label", "bool"]),
        ([0, None, 0, 1], ["sharing[1] must be an integer label", "NoneType"]),
        ([0, 0, 0, 2**70], ["sharing[3] must be an integer label", "out of the range"]),
        ("0001", ["sharing must be None or a sequence of integer labels", "str"]),
        (0, ["sharing must be None or a sequence of integer labels", "int"]),
        ([0, 0, 0, 0], ["sharing [0, 0, 0, 0] does not fit x0", "modes 0 and 3 share a factor", "sizes 6 and 4"]),
    ],
)
def test_a_bad_sharing_is_refused_naming_it(planted, sharing, fragments):
    _, problem, x0 = planted
    with raises("t3k.fit", *fragments):
        t3k.fit(problem, x0, "newton_cg", sharing=sharing, max_iterations=1)


def test_a_sharing_x0_cannot_carry_is_refused_naming_it(planted):
    _, problem, _ = planted
    x0 = t3k.TuckerTensorTrain.random(SHAPE, (3, 2, 3, 2), TT_RANKS, seed=1)
    with raises("t3k.fit", "sharing [0, 0, 0, 1]", "modes 0 and 1", "Tucker ranks 3 and 2"):
        t3k.fit(problem, x0, "newton_cg", sharing=SHARING)


@pytest.mark.parametrize("rule", ["saturation", "edge_conditioning"])
def test_a_rank_continuation_grows_the_shared_model_from_rank_one(planted, rule):
    truth, problem, _ = planted
    u = np.ones((1, 6)) / np.sqrt(6)
    x0 = t3k.TuckerTensorTrain([u, u, u, np.ones((1, 4)) / 2], [np.ones((1, 1, 1))] * 4)
    result = t3k.fit(problem, x0, "newton_cg", sharing=SHARING, max_tucker_ranks=[3, 3, 3, 2],
                     max_tt_ranks=[1, 3, 3, 2, 1], continuation_rule=rule, stage_iterations=20,
                     max_iterations=300, tol_relative_residual=1e-10)

    factors = result.x.tucker_cores
    assert np.array_equal(factors[0], factors[1]) and np.array_equal(factors[0], factors[2])
    assert result.x.tucker_ranks == [3, 3, 3, 2] and result.x.tt_ranks == [1, 3, 3, 2, 1], result.notes
    assert relative_error(result.x, truth) < 1e-8, (result.reason, result.notes)
    steps = [note for note in result.notes if note.startswith("rank step")]
    assert steps and all("Tucker ranks" in note for note in steps)
    # Every stage grows the group's modes together.
    for note in steps:
        after = note.split("Tucker ranks ")[1].split(" -> ")[1].split(",")[0]
        ranks = [int(v) for v in after.strip("[]").split(" x ")]
        assert ranks[0] == ranks[1] == ranks[2], note
    if rule == "edge_conditioning":
        assert any("Tucker modes 0,1,2" in note for note in result.notes), result.notes


def test_a_continuation_with_unequal_maximum_ranks_in_a_group_is_refused(planted):
    _, problem, x0 = planted
    with raises("t3k.fit", "sharing [0, 0, 0, 1]", "modes 0 and 2", "max_tucker_ranks gives them 3 and 2"):
        t3k.fit(problem, x0, "newton_cg", sharing=SHARING, max_tucker_ranks=[3, 3, 2, 2])


def dimension_count(shape, tucker_ranks, tt_ranks, sharing):
    """The manifold dimension by the formula of docs/math.md, counted here: boundary ranks 1, then every rank lowered
    to its bound until none changes (a group's Tucker rank by min(N_g, sum over its modes of min(N_g, r_i r_{i+1})),
    a TT rank by min(r_{e-1} n_{e-1}, n_e r_{e+1})); then one n_g (N_g - n_g) per group, the TT core entries, less
    r_e^2 per interior bond."""
    d = len(shape)
    n, r = list(tucker_ranks), [1] + list(tt_ranks[1:-1]) + [1]
    groups = {}
    for i, label in enumerate(sharing):
        groups.setdefault(label, []).append(i)
    changed = True
    while changed:
        before = (list(n), list(r))
        for modes in groups.values():
            big = shape[modes[0]]
            ceiling = min(big, sum(min(big, r[i] * r[i + 1]) for i in modes))
            for i in modes:
                n[i] = min(n[i], ceiling)
        for e in range(1, d):
            r[e] = min(r[e], r[e - 1] * n[e - 1], n[e] * r[e + 1])
        changed = (n, r) != before
    tucker = sum(n[m[0]] * (shape[m[0]] - n[m[0]]) for m in groups.values())
    return tucker + sum(r[i] * n[i] * r[i + 1] for i in range(d)) - sum(r[e] ** 2 for e in range(1, d))


def shared_jacobian_rank(rng, shape, tucker_ranks, tt_ranks, sharing):
    """jacobian_rank at random cores whose modes of a group hold one factor."""
    labels = list(dict.fromkeys(sharing))
    factor = {g: rng.standard_normal((tucker_ranks[sharing.index(g)], shape[sharing.index(g)])) for g in labels}
    tucker = [factor[g] for g in sharing]
    tt = [rng.standard_normal((tt_ranks[i], tucker_ranks[i], tt_ranks[i + 1])) for i in range(len(shape))]
    return jacobian_rank(tucker, tt, sharing)


def test_manifold_dimension_with_sharing_counts_each_shared_factor_once():
    unshared = t3k.manifold_dimension(SHAPE, TUCKER_RANKS, TT_RANKS)
    shared = t3k.manifold_dimension(SHAPE, TUCKER_RANKS, TT_RANKS, sharing=SHARING)
    # By hand: factors 3 * 3 * (6 - 3) + 2 * (4 - 2) = 31, TT cores 9 + 27 + 18 + 4 = 58, bonds 9 + 9 + 4 = 22;
    # sharing counts the factor of modes 0-2 once, 9 instead of 27.
    assert unshared == 31 + 58 - 22 == 67
    assert shared == 67 - 2 * 3 * (6 - 3) == 49
    assert shared == dimension_count(SHAPE, TUCKER_RANKS, TT_RANKS, SHARING)
    assert t3k.manifold_dimension(SHAPE, TUCKER_RANKS, TT_RANKS, sharing=None) == unshared
    assert t3k.manifold_dimension(SHAPE, TUCKER_RANKS, TT_RANKS, sharing=[0, 1, 2, 3]) == unshared


@pytest.mark.parametrize(
    "shape, tucker_ranks, tt_ranks, sharing",
    [
        (SHAPE, TUCKER_RANKS, TT_RANKS, SHARING),
        # A 4 x 4 matrix of rank 2 whose row and column spaces lie in one 3-dimensional space: the shared rank 3
        # exceeds r_0 r_1 = 2 of each mode (12 unshared, one less shared).
        ((4, 4), (3, 3), (1, 2, 1), [0, 0]),
        ((3, 4, 3), (2, 2, 2), (1, 2, 2, 1), [5, 1, 5]),
        ((3, 3, 3), (2, 2, 2), (1, 2, 2, 1), [0, 0, 0]),
    ],
)
def test_manifold_dimension_with_sharing_is_the_count_and_the_rank_of_the_jacobian(
    rng, shape, tucker_ranks, tt_ranks, sharing
):
    dim = t3k.manifold_dimension(shape, tucker_ranks, tt_ranks, sharing=sharing)
    assert dim == dimension_count(shape, tucker_ranks, tt_ranks, sharing)
    assert dim == shared_jacobian_rank(rng, shape, tucker_ranks, tt_ranks, sharing)
    assert dim < t3k.manifold_dimension(shape, tucker_ranks, tt_ranks)
    x = t3k.TuckerTensorTrain.random(shape, tucker_ranks, tt_ranks, seed=2)
    assert x.shared_manifold_dimension(sharing) == dim
    assert x.shared_manifold_dimension(None) == x.manifold_dimension


def test_the_4_by_4_example_by_hand():
    assert t3k.manifold_dimension((4, 4), (3, 3), (1, 2, 1)) == 2 * (4 + 4 - 2) == 12
    # One factor 3 (4 - 3) = 3, TT cores 6 + 6, bond 4.
    assert t3k.manifold_dimension((4, 4), (3, 3), (1, 2, 1), sharing=[0, 0]) == 3 + 12 - 4 == 11


def test_manifold_dimension_refuses_a_bad_sharing_naming_it():
    with raises("t3k.manifold_dimension", "sharing has 3 labels", "d = 4", "shape"):
        t3k.manifold_dimension(SHAPE, TUCKER_RANKS, TT_RANKS, sharing=[0, 0, 0])
    with raises("t3k.manifold_dimension", "sharing [0, 0, 0, 0] does not fit shape", "sizes 6 and 4"):
        t3k.manifold_dimension(SHAPE, TUCKER_RANKS, TT_RANKS, sharing=[0, 0, 0, 0])
    with raises("t3k.manifold_dimension", "sharing [0, 0, 0, 1]", "tucker_ranks", "Tucker ranks 3 and 2"):
        t3k.manifold_dimension(SHAPE, (3, 2, 3, 2), TT_RANKS, sharing=SHARING)
    with raises("t3k.manifold_dimension", "sharing[2] must be an integer label", "bool"):
        t3k.manifold_dimension(SHAPE, TUCKER_RANKS, TT_RANKS, sharing=[0, 0, False, 1])
    x = t3k.TuckerTensorTrain.random(SHAPE, TUCKER_RANKS, TT_RANKS, seed=1)
    with raises("t3k.TuckerTensorTrain.shared_manifold_dimension", "sharing [0, 1, 1, 1] does not fit the T3",
                "sizes 6 and 4"):
        x.shared_manifold_dimension([0, 1, 1, 1])


needs_hdf5 = pytest.mark.skipif(not t3k.has_hdf5, reason="this build of t3k has no HDF5")


@needs_hdf5
def test_a_shared_model_saved_with_its_sharing_loads_with_it(planted, tmp_path):
    truth, problem, x0 = planted
    result = t3k.fit(problem, x0, "adam", sharing=SHARING, max_iterations=3)
    path = tmp_path / "model.h5"
    t3k.save(path, result.x, sharing=[7, 7, 7, 2])

    assert t3k.load_sharing(path) == [7, 7, 7, 2]
    assert same_bits(t3k.load(path), result.x)
    # A model saved without a sharing has none, as has a trivial one.
    t3k.save(tmp_path / "plain.h5", result.x)
    t3k.save(tmp_path / "trivial.h5", result.x, sharing=[0, 1, 2, 3])
    assert t3k.load_sharing(tmp_path / "plain.h5") is None
    assert t3k.load_sharing(tmp_path / "trivial.h5") is None


@needs_hdf5
def test_saving_a_sharing_the_model_does_not_have_is_refused_naming_it(planted, tmp_path):
    _, _, x0 = planted  # its three factors differ
    with raises("t3k.save", "modes 0 and 1", "x.tucker_cores[0]", "x.tucker_cores[1]", "differ"):
        t3k.save(tmp_path / "x0.h5", x0, sharing=SHARING)
    with raises("t3k.save", "sharing"):
        t3k.save(tmp_path / "x0.h5", x0, sharing=[0, 0, 1])
    assert not (tmp_path / "x0.h5").exists()


@needs_hdf5
def test_load_sharing_of_a_missing_file_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.h5"):
        t3k.load_sharing(tmp_path / "missing.h5")


def test_symmetric_probes_of_a_symmetric_tensor_give_its_shared_model(rng):
    # sum_r a_r (x) a_r (x) a_r (x) b_r: symmetric in its three input modes (N = 20), output mode M = 6, one factor
    # of rank 3 for the input modes. Probed as derivative tensors are: one x in every input mode.
    big_n, m, r = 20, 6, 3
    a = np.linalg.qr(rng.standard_normal((big_n, r)))[0].T
    diagonal = [np.zeros(s) for s in [(1, r, r), (r, r, r), (r, r, r), (r, r, 1)]]
    for k in range(r):
        diagonal[0][0, k, k] = diagonal[1][k, k, k] = diagonal[2][k, k, k] = diagonal[3][k, k, 0] = 1
    truth = t3k.TuckerTensorTrain([a, a, a, rng.standard_normal((r, m))], diagonal)
    dense = truth.to_dense()
    x, dx = rng.standard_normal((2, 4, big_n))
    y, dy = rng.standard_normal((2, 4, m))
    ww, pp = [x, x, x, y], [dx, dx, dx, dy]
    problem = t3k.FittingProblem(ww, pp, t3k.probe_derivatives(truth, ww, pp, order=1))

    def near_truth(shared):
        perturb = lambda c: c + 1e-2 * np.abs(c).max() * rng.standard_normal(c.shape)
        u = perturb(a)
        tucker = [u, u, u] if shared else [perturb(a) for _ in range(3)]
        return t3k.TuckerTensorTrain(tucker + [perturb(truth.tucker_cores[3])], [perturb(g) for g in diagonal])

    def symmetrized_error(x):
        model = x.to_dense()
        sym = sum(np.transpose(model, list(p) + [3]) for p in itertools.permutations(range(3))) / 6
        return np.linalg.norm(sym - dense) / np.linalg.norm(dense)

    shared = t3k.fit(problem, near_truth(True), "newton_cg", sharing=SHARING, max_iterations=100,
                     tol_relative_residual=1e-12)
    untied = t3k.fit(problem, near_truth(False), "newton_cg", max_iterations=100, tol_relative_residual=1e-12)
    # 4 probes of 2 (3 x 20 + 6) numbers each against 105 shared and 207 untied dimensions. Such probes see only the
    # part symmetric in the input modes, and both models are determined there: the same probes fix either.
    assert truth.shared_manifold_dimension(SHARING) == 105 and truth.manifold_dimension == 207
    assert shared.history[-1]["relative_residual"] <= 1e-10 and symmetrized_error(shared.x) < 1e-8
    assert untied.history[-1]["relative_residual"] <= 1e-10 and symmetrized_error(untied.x) < 1e-8


@needs_hdf5
def test_load_sharing_of_a_label_count_other_than_d_names_the_file(planted, tmp_path):
    h5py = pytest.importorskip("h5py")
    truth, _, _ = planted
    t3k.save(tmp_path / "model.h5", truth, sharing=SHARING)
    with h5py.File(tmp_path / "model.h5", "a") as f:
        f["t3"].attrs["sharing"] = np.array([0, 0, 1], dtype=np.int64)
    with pytest.raises(OSError, match="model.h5: /t3 has 4 modes but its attribute sharing has 3 labels"):
        t3k.load_sharing(tmp_path / "model.h5")
