import math
import os
import re
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import random_probe_set
from test_errors import raises

import t3k

SHAPE, TUCKER_RANKS, TT_RANKS = (4, 5, 3), (2, 3, 2), (1, 2, 2, 1)


@pytest.fixture
def planted(rng):
    """A planted problem and a start near its truth (cores perturbed by 1e-2 relative)."""
    truth = t3k.TuckerTensorTrain.random(SHAPE, TUCKER_RANKS, TT_RANKS, seed=3)
    problem = t3k.FittingProblem.planted(truth, n_probes=80, order=1, seed=4)
    x0 = t3k.TuckerTensorTrain(
        [u + 1e-2 * np.abs(u).mean() * rng.standard_normal(u.shape) for u in truth.tucker_cores],
        [g + 1e-2 * np.abs(g).mean() * rng.standard_normal(g.shape) for g in truth.tt_cores],
    )
    return truth, problem, x0


def loss_of(problem, x):
    """0.5 sum ||z - y||^2 from the probe jets of x (the unweighted loss of docs/math.md)."""
    z = t3k.probe_derivatives(x, problem.ww, problem.pp, problem.order)
    return 0.5 * sum(float(((zi - yi) ** 2).sum()) for zi, yi in zip(z, problem.targets))


def test_newton_cg_recovers_a_planted_t3(planted):
    truth, problem, x0 = planted
    result = t3k.fit(problem, x0, "newton_cg", max_iterations=30, tol_relative_residual=1e-10)

    assert result.converged, result.reason
    dense = truth.to_dense()
    assert np.linalg.norm(result.x.to_dense() - dense) <= 1e-8 * np.linalg.norm(dense)
    # The history's losses are the problem's loss at x0 and at the result, computed here from the jets.
    assert result.history[0]["iteration"] == 0
    assert result.history[0]["loss"] == pytest.approx(loss_of(problem, x0), rel=1e-10)
    assert result.history[-1]["loss"] == pytest.approx(loss_of(problem, result.x), rel=1e-6, abs=1e-20)
    # The columns of history.csv, without a validation set or a rank continuation.
    assert all(math.isnan(r["validation_relative_residual"]) and r["rank_stage"] == 0 for r in result.history)


def test_a_fit_to_rounding_level_converges_with_the_documented_reason(planted):
    # Tolerances off: only the line search, unable to verify a decrease at rounding level, ends the fit.
    truth, problem, x0 = planted
    result = t3k.fit(problem, x0, "newton_cg", max_iterations=200, tol_gradient=0, cg_max_iterations=200)

    assert result.reason == "line search stalled at rounding level"
    assert result.converged
    assert len(result.history) < 201
    dense = truth.to_dense()
    assert np.linalg.norm(result.x.to_dense() - dense) <= 1e-10 * np.linalg.norm(dense)
    # gradient_descent from there: its first line search has only rounding to find.
    again = t3k.fit(problem, result.x, "gradient_descent", tol_gradient=0)
    assert (again.reason, again.converged) == ("line search stalled at rounding level", True)


def test_a_line_search_that_fails_above_rounding_level_has_not_converged(planted):
    # A first trial step a million times too long and no halving: the decrease promised was real and not found.
    _, problem, x0 = planted
    result = t3k.fit(problem, x0, "gradient_descent", initial_step=1e6, max_backtracks=0)

    assert (result.reason, result.converged) == ("line search failed", False)
    assert len(result.history) == 1


@pytest.mark.parametrize("optimizer", ["gradient_descent", "mc_sgd", "adam"])
def test_every_optimizer_decreases_the_loss(planted, optimizer):
    _, problem, x0 = planted
    minibatches = {} if optimizer == "gradient_descent" else {"batch_size": 40}
    result = t3k.fit(problem, x0, optimizer, max_iterations=8, **minibatches)

    assert len(result.history) >= 2
    assert loss_of(problem, result.x) < loss_of(problem, x0)


def test_a_fit_in_float32_runs_in_float32(planted):
    truth, problem, x0 = planted
    p32 = t3k.FittingProblem(problem.ww, problem.pp, problem.targets, dtype="float32")
    x32 = t3k.TuckerTensorTrain(x0.tucker_cores, x0.tt_cores, dtype="float32")
    result = t3k.fit(p32, x32, max_iterations=5)
    assert result.x.dtype == np.float32
    assert result.history[-1]["loss"] < result.history[0]["loss"]


def test_weights_scale_the_loss(planted):
    _, problem, x0 = planted
    weights = np.full(problem.n_probes, 3.0)
    weighted = t3k.FittingProblem(problem.ww, problem.pp, problem.targets, weights=weights)
    plain = t3k.fit(problem, x0, max_iterations=0)
    heavy = t3k.fit(weighted, x0, max_iterations=0)
    assert heavy.history[0]["loss"] == pytest.approx(3.0 * plain.history[0]["loss"], rel=1e-12)


def test_a_callback_sees_every_iteration_and_stops_the_fit(planted):
    _, problem, x0 = planted
    seen = []

    def stop_at_two(record):
        seen.append(record["iteration"])
        return record["iteration"] == 2

    result = t3k.fit(problem, x0, "gradient_descent", max_iterations=50, tol_gradient=0, callback=stop_at_two)

    assert seen == [0, 1, 2]
    assert [r["iteration"] for r in result.history] == [0, 1, 2]
    assert not result.converged and "callback" in result.reason
    # The returned point is the one of the last record, not x0 and not a later one.
    assert loss_of(problem, result.x) == pytest.approx(result.history[-1]["loss"], rel=1e-10)
    assert loss_of(problem, result.x) < loss_of(problem, x0)


def test_stop_iteration_at_x0_returns_x0(planted):
    _, problem, x0 = planted

    def stop(record):
        raise StopIteration

    result = t3k.fit(problem, x0, "adam", callback=stop)
    assert len(result.history) == 1
    for a, b in zip(result.x.tt_cores + result.x.tucker_cores, x0.tt_cores + x0.tucker_cores):
        np.testing.assert_array_equal(a, b)


def test_an_exception_in_the_callback_propagates(planted):
    _, problem, x0 = planted

    def broken(record):
        raise RuntimeError("from the callback")

    with pytest.raises(RuntimeError, match="from the callback"):
        t3k.fit(problem, x0, callback=broken)
    # The module still works afterwards (no lock left held).
    assert t3k.fit(problem, x0, max_iterations=1).history


def test_ctrl_c_stops_a_fit_between_iterations(tmp_path):
    # A child fits a problem large enough that each iteration takes a while (a tenth of a second or more, some sixty
    # of them before the line search stalls), so that the SIGINT sent once iteration 1 is recorded lands while
    # kernels run: a small problem can finish before the signal arrives.
    script = textwrap.dedent(
        """
        import signal, sys, t3k
        # Python raises KeyboardInterrupt only where SIGINT was not ignored at its start, and a runner in the
        # background (CI) ignores it: install the handler an interactive session has.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        shape, tucker, tt = (30,) * 6, (4,) * 6, (1, 4, 4, 4, 4, 4, 1)
        truth = t3k.TuckerTensorTrain.random(shape, tucker, tt, seed=3)
        x0 = t3k.TuckerTensorTrain.random(shape, tucker, tt, seed=5)
        problem = t3k.FittingProblem.planted(truth, n_probes=10000, order=1, seed=4)
        def started(record):
            if record["iteration"] == 1:
                print("started", flush=True)
        try:
            t3k.fit(problem, x0, "gradient_descent", max_iterations=10**9, tol_gradient=0, callback=started)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(0)
        sys.exit(3)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=dict(os.environ, OMP_NUM_THREADS="1")
    )
    try:
        assert child.stdout.readline().strip() == "started"
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=60)
    finally:
        child.kill()
    assert out.strip() == "interrupted" and child.returncode == 0


def test_bad_options_are_named(planted):
    _, problem, x0 = planted
    with raises("t3k.fit", "newton_cg has no option 'cg_rtl'", "cg_rtol"):
        t3k.fit(problem, x0, cg_rtl=0.5)
    with raises("t3k.fit: cg_rtol must be in (0, 1], got 2.0"):
        t3k.fit(problem, x0, cg_rtol=2.0)
    with raises("t3k.fit: max_iterations must be in [0, ", "got -1"):
        t3k.fit(problem, x0, max_iterations=-1)
    with raises("t3k.fit: levenberg_marquardt must be True or False, got 1"):
        t3k.fit(problem, x0, levenberg_marquardt=1)
    with raises("schedule must be one of 'constant', 'inverse_time', 'cosine', got 'linear'"):
        t3k.fit(problem, x0, "mc_sgd", schedule="linear")
    with raises("gradient_descent has no option 'batch_size'"):
        t3k.fit(problem, x0, "gradient_descent", batch_size=4)
    with raises("optimizer must be one of 'newton_cg', 'gradient_descent', 'mc_sgd', 'adam', got 'lbfgs'"):
        t3k.fit(problem, x0, "lbfgs")


def test_a_problem_that_does_not_fit_the_model_is_named(rng, planted):
    _, problem, x0 = planted
    ww, pp = random_probe_set(rng, SHAPE, 6)
    targets = [np.zeros((6, 2, n)) for n in SHAPE]
    with raises("t3k.FittingProblem", "targets[1]", "expected [6 x 2 x 5]"):
        t3k.FittingProblem(ww, pp, [targets[0], targets[1][:, :, :4], targets[2]])
    with raises("t3k.FittingProblem", "weights"):
        t3k.FittingProblem(ww, pp, targets, weights=np.ones(5))
    other = t3k.TuckerTensorTrain.random((4, 5, 4), TUCKER_RANKS, TT_RANKS)
    with raises("t3k.fit: x0.tucker_cores[2] has shape [2 x 4], expected [2 x 3]", "[4 x 5 x 3]"):
        t3k.fit(problem, other)


def documented_default(text):
    """A default as docs/config.md's tables write it ("0 (off)", "1e-3", "false", "constant")."""
    word = text.split()[0]
    if word in ("true", "false"):
        return word == "true"
    try:
        return float(word)
    except ValueError:
        return word


def test_help_documents_every_option_of_the_configuration_file_with_its_default():
    doc = t3k.fit.__doc__
    config = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "config.md")).read()
    # docs/config.md's optimizer tables: a line naming the optimizer (or "Common keys:"), a blank line, the table.
    names = "newton_cg|gradient_descent|mc_sgd|adam"
    sections = re.split(rf"\n(?=Common keys:|`(?:{names})`[ :(])", config)[1:]
    help_sections = re.split(rf"\n(?=    (?:{names}):\n)", doc)
    checked = 0
    for section in sections:
        name = "" if section.startswith("Common") else section[1 : section.index("`", 1)]
        help_part = help_sections[0] if not name else next(h for h in help_sections if h.startswith(f"    {name}:"))
        table = section.split("\n\n")[1].replace("\\|", "/")  # escaped pipes inside a cell
        for key, default in re.findall(r"^\| `(\w+)` \|[^|]*\| ([^|]*) \|", table, flags=re.M):
            line = re.search(rf"^        {key} \((float|int|bool|str), default (.*?)\): ", help_part, flags=re.M)
            assert line, (name, key)
            shown = eval(line.group(2))  # the repr of the default
            assert shown == documented_default(default), (name, key, shown, default)
            checked += 1
    assert checked == 31  # 6 common keys, newton_cg 6, gradient_descent 3, mc_sgd 9, adam 7


def test_a_requested_chunk_size_is_reported_as_it_runs():
    # 50 is not a whole number of reduction blocks: J^T runs whole blocks (at least one), and the result and its
    # history report that size, the same run as asking for it directly.
    truth = t3k.TuckerTensorTrain.random(SHAPE, TUCKER_RANKS, TT_RANKS, seed=3)
    problem = t3k.FittingProblem.planted(truth, n_probes=150, order=1, seed=4)
    x0 = t3k.TuckerTensorTrain.random(SHAPE, TUCKER_RANKS, TT_RANKS, seed=5)
    block = t3k.reduction_block_size
    expected = min(150, block if 50 < block else 50 - 50 % block)
    asked = t3k.fit(problem, x0, "gradient_descent", max_iterations=2, chunk_size=50)
    direct = t3k.fit(problem, x0, "gradient_descent", max_iterations=2, chunk_size=expected)

    assert asked.chunk_size == expected
    assert [r["chunk_size"] for r in asked.history] == [expected] * len(asked.history)
    assert [r["loss"] for r in asked.history] == [r["loss"] for r in direct.history]


def test_verbose_prints_a_line_per_iteration_with_the_record(planted, capsys):
    _, problem, x0 = planted
    seen = []
    result = t3k.fit(problem, x0, "gradient_descent", max_iterations=3, verbose=True, callback=seen.append)

    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(result.history) == len(seen)
    for line, record in zip(lines, result.history):
        fields = line.split()
        assert fields[:2] == ["iteration", str(record["iteration"])]
        assert float(fields[fields.index("loss") + 1]) == pytest.approx(record["loss"], rel=1e-6)
        assert float(fields[fields.index("relative_residual") + 1]) == pytest.approx(
            record["relative_residual"], rel=1e-6
        )


def test_progress_printer_writes_to_the_file_given(planted, tmp_path):
    _, problem, x0 = planted
    with open(tmp_path / "progress.txt", "w") as out:
        result = t3k.fit(problem, x0, "newton_cg", max_iterations=2, callback=t3k.progress_printer(out))
    lines = (tmp_path / "progress.txt").read_text().splitlines()
    assert [int(line.split()[1]) for line in lines] == [r["iteration"] for r in result.history]


def test_a_misspelt_option_gets_the_nearest_name(planted):
    _, problem, x0 = planted
    with raises("t3k.fit: newton_cg has no option 'max_iteration'", "(did you mean 'max_iterations'?)"):
        t3k.fit(problem, x0, "newton_cg", max_iteration=3)
    with raises("gradient_descent has no option 'zzz'; its options are"):
        t3k.fit(problem, x0, "gradient_descent", zzz=3)


def test_a_callback_waiting_for_a_thread_that_computes_does_not_deadlock(tmp_path):
    # The callback starts a thread that computes probes (taking the kernel lock the fit holds) and lets it run
    # into that lock; the fit's later callbacks need the GIL, which the waiting thread must not hold. A deadlock
    # would hang, so the fit runs in a child process with a time limit.
    script = textwrap.dedent(
        """
        import threading, time
        import numpy as np
        import t3k

        truth = t3k.TuckerTensorTrain.random((4, 5, 3), (2, 3, 2), (1, 2, 2, 1), seed=3)
        problem = t3k.FittingProblem.planted(truth, n_probes=40, order=0, seed=4)
        ww = [np.ascontiguousarray(w) for w in problem.ww]
        expected = t3k.probes(truth, ww)
        got, threads = [], []

        def work():
            got.append(t3k.probes(truth, ww))

        def callback(record):
            if record["iteration"] == 0:
                threads.append(threading.Thread(target=work))
                threads[0].start()
                time.sleep(0.2)  # the thread now waits for the kernel lock

        x0 = t3k.TuckerTensorTrain.random((4, 5, 3), (2, 3, 2), (1, 2, 2, 1), seed=5)
        result = t3k.fit(problem, x0, "gradient_descent", max_iterations=3, tol_gradient=0, callback=callback)
        threads[0].join()
        assert len(result.history) >= 2
        assert all(np.array_equal(a, b) for a, b in zip(got[0], expected))
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("ok")
