"""Held-out validation and rank continuation through t3k.fit, against values computed here from the probe jets."""

import math

import numpy as np
import pytest
from test_errors import raises

import t3k

SHAPE, TUCKER_RANKS, TT_RANKS = (4, 5, 3), (2, 3, 2), (1, 2, 2, 1)


def loss_of(problem, x):
    """0.5 sum ||z - y||^2 from the probe jets of x (the unweighted loss of docs/math.md)."""
    z = t3k.probe_derivatives(x, problem.ww, problem.pp, problem.order)
    return 0.5 * sum(float(((zi - yi) ** 2).sum()) for zi, yi in zip(z, problem.targets))


def relative_residual(problem, x):
    zero = 0.5 * sum(float((y**2).sum()) for y in problem.targets)
    return math.sqrt(loss_of(problem, x) / zero)


def rows(problem):
    return {tuple(row) for row in problem.ww[0]}


@pytest.fixture
def noisy():
    truth = t3k.TuckerTensorTrain.random(SHAPE, TUCKER_RANKS, TT_RANKS, seed=3)
    return truth, t3k.FittingProblem.planted(truth, n_probes=80, order=1, noise=0.3, seed=4)


def test_hold_out_splits_the_probes(noisy):
    _, problem = noisy
    train = problem.hold_out(count=20, seed=3)
    assert train.n_probes == 60 and train.validation.n_probes == 20
    assert train.validation.validation is None and problem.validation is None
    held, kept = rows(train.validation), rows(train)
    assert not held & kept and held | kept == rows(problem)
    # Each held-out probe keeps its own direction and targets.
    where = {tuple(row): s for s, row in enumerate(problem.ww[0])}
    for s, row in enumerate(train.validation.ww[0]):
        np.testing.assert_array_equal(train.validation.pp[1][s], problem.pp[1][where[tuple(row)]])
        np.testing.assert_array_equal(train.validation.targets[2][s], problem.targets[2][where[tuple(row)]])
    assert rows(problem.hold_out(count=20, seed=3).validation) == held  # the seed decides
    assert rows(problem.hold_out(count=20, seed=4).validation) != held
    assert rows(problem.hold_out(fraction=0.25, seed=3).validation) == held  # round(0.25 * 80) = 20


def test_a_validation_set_is_given_as_a_problem(noisy):
    truth, problem = noisy
    train = problem.hold_out(count=20, seed=3)
    again = t3k.FittingProblem(train.ww, train.pp, train.targets, validation=train.validation)
    first = t3k.fit(train, truth, max_iterations=2)
    second = t3k.fit(again, truth, max_iterations=2)
    assert [r["validation_relative_residual"] for r in first.history] == [
        r["validation_relative_residual"] for r in second.history
    ]
    assert first.history[0]["validation_relative_residual"] == pytest.approx(
        relative_residual(train.validation, truth), rel=1e-12
    )


def test_validation_patience_returns_the_best_model_on_validation(noisy):
    # 30% noise fitted at larger ranks than the planted ones overfits the training probes: the validation residual
    # passes a minimum, and the fit returns the model at that minimum.
    _, problem = noisy
    train = problem.hold_out(fraction=0.25, seed=3)
    x0 = t3k.TuckerTensorTrain.random(SHAPE, (3, 4, 3), (1, 3, 3, 1), seed=8)
    result = t3k.fit(train, x0, "newton_cg", max_iterations=60, validation_patience=3)

    values = [r["validation_relative_residual"] for r in result.history]
    assert all(math.isfinite(v) for v in values)
    assert result.validation_relative_residual == min(values)
    assert relative_residual(train.validation, result.x) == pytest.approx(min(values), rel=1e-10)
    if result.reason == "validation stopped improving":
        assert values[-1] > min(values) and len(values) - 1 - values.index(min(values)) == 3


def test_rank_continuation_finds_the_planted_ranks():
    truth = t3k.TuckerTensorTrain.random(SHAPE, TUCKER_RANKS, TT_RANKS, seed=3)
    problem = t3k.FittingProblem.planted(truth, n_probes=80, order=1, seed=4)
    x0 = t3k.TuckerTensorTrain.random(SHAPE, (1, 1, 1), (1, 1, 1, 1), seed=5)
    result = t3k.fit(
        problem, x0, max_iterations=200, tol_relative_residual=1e-10, max_tucker_ranks=3, max_tt_ranks=3
    )

    assert result.x.tucker_ranks == list(TUCKER_RANKS) and result.x.tt_ranks == list(TT_RANKS), result.notes
    dense = truth.to_dense()
    assert np.linalg.norm(result.x.to_dense() - dense) <= 1e-8 * np.linalg.norm(dense)
    stages = [r["rank_stage"] for r in result.history]
    assert stages[0] == 0 and stages[-1] >= 2 and stages == sorted(stages)
    assert any("rank step" in note for note in result.notes)


def test_a_rank_continuation_grows_only_what_it_is_allowed_to():
    truth = t3k.TuckerTensorTrain.random(SHAPE, TUCKER_RANKS, TT_RANKS, seed=3)
    problem = t3k.FittingProblem.planted(truth, n_probes=80, order=1, seed=4)
    x0 = t3k.TuckerTensorTrain.random(SHAPE, TUCKER_RANKS, (1, 1, 1, 1), seed=5)
    # Only the TT ranks may grow (the Tucker ranks stay x0's, the planted ones), up to the planted TT ranks.
    result = t3k.fit(problem, x0, max_iterations=100, tol_relative_residual=1e-10, max_tt_ranks=[1, 2, 2, 1])
    assert result.x.tucker_ranks == list(TUCKER_RANKS) and result.x.tt_ranks == list(TT_RANKS), result.notes
    assert result.history[-1]["relative_residual"] <= 1e-10, result.reason


def test_edge_conditioning_finds_the_planted_ranks_and_says_why_it_grew():
    truth = t3k.TuckerTensorTrain.random(SHAPE, TUCKER_RANKS, TT_RANKS, seed=3)
    problem = t3k.FittingProblem.planted(truth, n_probes=80, order=1, seed=4)
    x0 = t3k.TuckerTensorTrain.random(SHAPE, (1, 1, 1), (1, 1, 1, 1), seed=5)
    result = t3k.fit(
        problem,
        x0,
        max_iterations=200,
        tol_relative_residual=1e-10,
        max_tucker_ranks=3,
        max_tt_ranks=3,
        continuation_rule="edge_conditioning",
        condition_ratio=5.0,
    )
    assert result.x.tucker_ranks == list(TUCKER_RANKS) and result.x.tt_ranks == list(TT_RANKS), result.notes
    dense = truth.to_dense()
    assert np.linalg.norm(result.x.to_dense() - dense) <= 1e-8 * np.linalg.norm(dense)
    steps = [note for note in result.notes if note.startswith("rank step at iteration")]
    why = [note for note in result.notes if note.startswith("edge conditioning at iteration")]
    assert steps and len(why) == len(steps), result.notes
    assert all("worst kappa" in note and "(kappa " in note for note in why), why


def test_edge_conditioning_stops_before_too_few_measurements_per_dimension():
    truth = t3k.TuckerTensorTrain.random(SHAPE, TUCKER_RANKS, TT_RANKS, seed=3)
    # 4 probes of order 1 measure 4 x 2 x (12 - 2) = 80 scalars; 4 per dimension allows at most dimension 20.
    problem = t3k.FittingProblem.planted(truth, n_probes=4, order=1, seed=4)
    x0 = t3k.TuckerTensorTrain.random(SHAPE, (1, 1, 1), (1, 1, 1, 1), seed=5)
    result = t3k.fit(
        problem,
        x0,
        max_iterations=100,
        max_tucker_ranks=3,
        max_tt_ranks=3,
        continuation_rule="edge_conditioning",
        min_samples_per_dimension=4.0,
    )
    assert any("below min_samples_per_dimension 4" in note for note in result.notes), result.notes
    assert 4.0 * result.x.manifold_dimension <= 80


def test_the_callback_stops_a_rank_continuation():
    truth = t3k.TuckerTensorTrain.random(SHAPE, TUCKER_RANKS, TT_RANKS, seed=3)
    problem = t3k.FittingProblem.planted(truth, n_probes=80, order=1, seed=4)
    x0 = t3k.TuckerTensorTrain.random(SHAPE, (1, 1, 1), (1, 1, 1, 1), seed=5)
    options = dict(max_iterations=60, max_tucker_ranks=3, max_tt_ranks=3, stage_iterations=4)
    full = t3k.fit(problem, x0, **options)
    first_grown = next(r for r in full.history if r["rank_stage"] == 1)
    at = first_grown["iteration"] + 1

    def stop(record):
        return record["iteration"] == at

    result = t3k.fit(problem, x0, callback=stop, **options)
    assert result.reason == f"stopped by the callback at iteration {at}" and not result.converged
    assert result.history[-1]["rank_stage"] == 1
    assert [r["loss"] for r in result.history] == [r["loss"] for r in full.history[: len(result.history)]]
    assert loss_of(problem, result.x) == pytest.approx(result.history[-1]["loss"], rel=1e-10)


def test_bad_validation_and_continuation_options_are_named(noisy):
    truth, problem = noisy
    with raises("t3k.fit: validation_patience needs a problem with a validation set"):
        t3k.fit(problem, truth, validation_patience=2)
    with raises("t3k.fit: stage_iterations is an option of a rank continuation", "max_tucker_ranks"):
        t3k.fit(problem, truth, stage_iterations=5)
    with raises("t3k.fit: max_tt_ranks must be one integer or 4 of them, got 3"):
        t3k.fit(problem, truth, max_tt_ranks=[1, 2, 1])
    with raises("t3k.fit: rank_rtol must be in [0, 1), got 1.5"):
        t3k.fit(problem, truth, max_tucker_ranks=3, rank_rtol=1.5)
    with raises("t3k.fit: continuation_rule must be one of 'saturation', 'edge_conditioning', got 'widest'"):
        t3k.fit(problem, truth, max_tucker_ranks=3, continuation_rule="widest")
    with raises("t3k.fit: condition_ratio is a control of continuation_rule='edge_conditioning'"):
        t3k.fit(problem, truth, max_tucker_ranks=3, condition_ratio=3.0)
    with raises("t3k.fit: condition_ratio must be"):
        t3k.fit(problem, truth, max_tucker_ranks=3, continuation_rule="edge_conditioning", condition_ratio=0.5)
    with raises("t3k.fit", "has no option 'patience'", "validation_patience", "max_tt_ranks", "rank_step"):
        t3k.fit(problem, truth, patience=2)
    with raises("t3k.FittingProblem.hold_out: give exactly one of fraction and count"):
        problem.hold_out()
    with raises("t3k.FittingProblem.hold_out: fraction must be a number in (0, 1), got 1.0"):
        problem.hold_out(fraction=1.0)
    with raises("t3k.FittingProblem.hold_out: holding out 80 of 80 probes"):
        problem.hold_out(count=80)
    other = t3k.FittingProblem.planted(truth, n_probes=10, order=0, seed=1)
    with raises("t3k.FittingProblem: validation must be a FittingProblem of the same", "K = 1", "K = 0"):
        t3k.FittingProblem(problem.ww, problem.pp, problem.targets, validation=other)


@pytest.mark.parametrize("optimizer", ["newton_cg", "gradient_descent", "mc_sgd", "adam"])
@pytest.mark.parametrize("iterations", [0, 2])
def test_infeasible_ranks_are_clipped_once_and_reported_as_run(noisy, optimizer, iterations):
    # Tucker rank 1 of 9 exceeds N_1 = 5 and r_1 r_2 = 4: the fit runs at, returns and reports 4.
    _, problem = noisy
    x0 = t3k.TuckerTensorTrain.random(SHAPE, (2, 9, 2), TT_RANKS, seed=5)
    result = t3k.fit(problem, x0, optimizer, max_iterations=iterations)

    assert result.x.tucker_ranks == [2, 4, 2]
    assert result.x.tt_ranks == list(TT_RANKS)
    assert result.notes == ["Tucker rank 1 clipped from 9 to 4"]
    if iterations == 0:
        # The clipping drops only zero singular values: the result is x0's tensor.
        dense = x0.to_dense()
        assert np.linalg.norm(result.x.to_dense() - dense) <= 1e-12 * np.linalg.norm(dense)
