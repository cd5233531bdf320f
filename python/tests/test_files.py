import os
import shutil
import subprocess

import numpy as np
import pytest
from conftest import random_probe_set, random_t3

import t3k

pytestmark = pytest.mark.skipif(not t3k.has_hdf5, reason="built without HDF5")
h5py = pytest.importorskip("h5py")


def cli():
    """The t3k tool of the same build (build/t3k next to build/python), or $T3K_CLI; None when absent."""
    explicit = os.environ.get("T3K_CLI")
    if explicit:
        return explicit
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(t3k.__file__))))
    for candidate in (os.path.join(build, "t3k"), os.path.join(build, "drivers", "t3k")):
        if os.access(candidate, os.X_OK) and os.path.isfile(candidate):
            return candidate
    return shutil.which("t3k")


def test_save_and_load_keep_every_core_bitwise(rng, tmp_path):
    x, tucker, tt = random_t3(rng, (3, 1, 4), (2, 1, 3), (1, 2, 3, 1))
    t3k.save(tmp_path / "x.h5", x)
    y = t3k.load(tmp_path / "x.h5")
    for a, b in zip(y.tucker_cores + y.tt_cores, tucker + tt):
        np.testing.assert_array_equal(a, b)
    with h5py.File(tmp_path / "x.h5", "r") as f:  # the layout of docs/file-format.md
        assert f.attrs["d"] == 3
        np.testing.assert_array_equal(f["t3/tt_cores/2"][()], tt[2])


def test_a_float32_t3_is_stored_as_float64_and_loads_in_either(rng, tmp_path):
    x, tucker, _ = random_t3(rng, (3, 4), (2, 2), (1, 2, 1), dtype=np.float32)
    t3k.save(str(tmp_path / "x.h5"), x)
    assert t3k.load(tmp_path / "x.h5").dtype == np.float64
    y = t3k.load(tmp_path / "x.h5", dtype="float32")
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.tucker_cores[0], tucker[0])


def test_save_never_replaces_a_file_unless_asked(rng, tmp_path):
    x, _, _ = random_t3(rng, (3, 4), (2, 2), (1, 2, 1))
    path = tmp_path / "mine.h5"
    path.write_text("keep me")
    with pytest.raises(FileExistsError, match="mine.h5"):
        t3k.save(path, x)
    assert path.read_text() == "keep me"
    t3k.save(path, x, overwrite=True)
    assert t3k.load(path).shape == (3, 4)


def test_unreadable_files_are_named(tmp_path):
    missing = tmp_path / "missing.h5"
    for load in (t3k.load, t3k.load_problem):
        with pytest.raises(FileNotFoundError) as caught:
            load(missing)
        assert str(caught.value) == f"t3k.{load.__name__}: no such file: '{missing}'"
    with h5py.File(tmp_path / "no_t3.h5", "w") as f:
        f["probes/w/0"] = np.zeros((2, 3))
    with pytest.raises(OSError, match="no_t3.h5.*/t3"):
        t3k.load(tmp_path / "no_t3.h5")


@pytest.mark.skipif(cli() is None, reason="the t3k command-line tool is not built")
def test_the_cli_reads_what_python_writes(rng, tmp_path):
    shape = (3, 4, 5)
    x, _, _ = random_t3(rng, shape, (2, 3, 2), (1, 2, 3, 1))
    ww, pp = random_probe_set(rng, shape, 7)
    path = tmp_path / "case.h5"
    t3k.save(path, x)
    with h5py.File(path, "a") as f:
        for i in range(3):
            f[f"probes/w/{i}"], f[f"probes/p/{i}"] = ww[i], pp[i]
        f["probes"].attrs["order"] = 2
    subprocess.run([cli(), "jets", "--in", str(path), "--out", str(tmp_path / "jets.h5")], check=True)

    expected = t3k.probe_derivatives(x, ww, pp, 2)
    with h5py.File(tmp_path / "jets.h5", "r") as f:
        for i in range(3):
            np.testing.assert_array_equal(f[f"jets/{i}"][()], expected[i])


def cli_newton_cg(directory, data):
    """Three newton_cg iterations of `t3k fit` on the data problem `data` from x0.h5, both in `directory`, with
    this module's thread count; returns the fitted model."""
    (directory / "run.yaml").write_text(
        f"problem: {{data: {data}}}\n"
        "model: {init: {file: x0.h5}}\n"
        "optimizer: {name: newton_cg, max_iterations: 3}\n"
        "output: {directory: run}\n"
    )
    subprocess.run([cli(), "fit", str(directory / "run.yaml"), "--quiet"], check=True, cwd=directory,
                   env=dict(os.environ, OMP_NUM_THREADS=str(t3k.num_threads())))
    return t3k.load(directory / "run" / "model.h5")


@pytest.mark.skipif(cli() is None, reason="the t3k command-line tool is not built")
def test_the_cli_fits_a_problem_python_saved_as_python_fits_it(tmp_path):
    truth = t3k.TuckerTensorTrain.random((4, 5, 3), (2, 3, 2), (1, 2, 2, 1), seed=3)
    x0 = t3k.TuckerTensorTrain.random((4, 5, 3), (2, 3, 2), (1, 2, 2, 1), seed=8)
    problem = t3k.FittingProblem.planted(truth, n_probes=60, order=1, seed=4)
    weights = np.linspace(0.5, 2.0, problem.n_probes)
    problem = t3k.FittingProblem(problem.ww, problem.pp, problem.targets, weights=weights)
    t3k.save(tmp_path / "x0.h5", x0)
    t3k.save_problem(tmp_path / "data.h5", problem)
    from_cli = cli_newton_cg(tmp_path, "{file: data.h5, weights: /weights}")
    from_python = t3k.fit(problem, x0, "newton_cg", max_iterations=3).x
    # Same build, same threads, same options (the CLI's defaults are fit's): the same iterates, bit for bit.
    for a, b in zip(from_cli.tucker_cores + from_cli.tt_cores, from_python.tucker_cores + from_python.tt_cores):
        np.testing.assert_array_equal(a, b)


@pytest.mark.skipif(cli() is None, reason="the t3k command-line tool is not built")
def test_probes_that_repeat_one_x_over_modes_are_stored_once_and_fitted_alike(rng, tmp_path):
    # A derivative tensor's probes: the same x and direction in the three input modes, y in the output mode.
    u = rng.standard_normal((2, 5))
    truth = t3k.TuckerTensorTrain([u, u, u, rng.standard_normal((2, 3))],
                                  [rng.standard_normal(s) for s in [(1, 2, 2), (2, 2, 2), (2, 2, 2), (2, 2, 1)]])
    x, dx = rng.standard_normal((2, 40, 5))
    y, dy = rng.standard_normal((2, 40, 3))
    ww, pp = [x, x, x, y], [dx, dx, dx, dy]
    problem = t3k.FittingProblem(ww, pp, t3k.probe_derivatives(truth, ww, pp, order=1))
    t3k.save_problem(tmp_path / "data.h5", problem)
    with h5py.File(tmp_path / "data.h5", "r") as f:
        assert sorted(f["probes/w"]) == ["0", "3"] and sorted(f["probes/p"]) == ["0", "3"]
        assert list(f["probes"].attrs["repeat"]) == [0, 0, 0, 3]
    back = t3k.load_problem(tmp_path / "data.h5")
    for a, b in zip(back.ww + back.pp + back.targets, problem.ww + problem.pp + problem.targets):
        np.testing.assert_array_equal(a, b)

    x0 = t3k.TuckerTensorTrain([u + 0.01, u + 0.01, u + 0.01, truth.tucker_cores[3]], list(truth.tt_cores))
    t3k.save(tmp_path / "x0.h5", x0, sharing=[0, 0, 0, 1])
    from_cli = cli_newton_cg(tmp_path, "{file: data.h5}")
    assert t3k.load_sharing(tmp_path / "run" / "model.h5") == [0, 0, 0, 1]  # carried on from x0.h5
    from_python = t3k.fit(problem, x0, "newton_cg", sharing=[0, 0, 0, 1], max_iterations=3).x
    for a, b in zip(from_cli.tucker_cores + from_cli.tt_cores, from_python.tucker_cores + from_python.tt_cores):
        np.testing.assert_array_equal(a, b)


def test_save_problem_and_load_problem_keep_every_array_bitwise(rng, tmp_path):
    truth = t3k.TuckerTensorTrain.random((4, 5, 3), (2, 3, 2), (1, 2, 2, 1), seed=3)
    planted = t3k.FittingProblem.planted(truth, n_probes=9, order=2, seed=4)
    problem = t3k.FittingProblem(planted.ww, planted.pp, planted.targets, weights=rng.uniform(0, 1, 9))
    t3k.save_problem(tmp_path / "data.h5", problem)
    back = t3k.load_problem(tmp_path / "data.h5", weights="/weights")
    assert back.order == 2 and back.n_probes == 9 and back.dtype == np.float64
    for a, b in zip(back.ww + back.pp + back.targets + [back.weights], problem.ww + problem.pp + problem.targets + [problem.weights]):
        np.testing.assert_array_equal(a, b)
    assert t3k.load_problem(tmp_path / "data.h5").weights is None  # weights only when named, as problem.data
    with h5py.File(tmp_path / "data.h5", "r") as f:  # the layout of docs/file-format.md
        assert f["probes"].attrs["order"] == 2 and f.attrs["d"] == 3 and f.attrs["W"] == 9 and f.attrs["K"] == 2
        np.testing.assert_array_equal(f["jets/1"][()], problem.targets[1])

    narrow = t3k.load_problem(tmp_path / "data.h5", dtype="float32")
    assert narrow.dtype == np.float32
    np.testing.assert_array_equal(narrow.targets[0], problem.targets[0].astype(np.float32))
    t3k.save_problem(tmp_path / "narrow.h5", narrow)  # widened on the way
    np.testing.assert_array_equal(t3k.load_problem(tmp_path / "narrow.h5").ww[2], narrow.ww[2].astype(np.float64))

    with pytest.raises(FileExistsError, match="t3k.save_problem: .*data.h5 exists"):
        t3k.save_problem(tmp_path / "data.h5", problem)
    with pytest.raises(OSError, match="data.h5: /nosuch"):
        t3k.load_problem(tmp_path / "data.h5", weights="/nosuch")
    with h5py.File(tmp_path / "data.h5", "a") as f:
        f["bad_weights"] = -np.ones(9)
    with pytest.raises(OSError, match=r"/bad_weights\[0\] is -1.0+; weights must be finite and >= 0"):
        t3k.load_problem(tmp_path / "data.h5", weights="/bad_weights")
    with h5py.File(tmp_path / "no_jets.h5", "w") as f:
        f["probes/w/0"], f["probes/p/0"] = np.zeros((2, 3)), np.zeros((2, 3))
    with pytest.raises(OSError, match="no_jets.h5: /jets"):
        t3k.load_problem(tmp_path / "no_jets.h5")



def test_integer_datasets_are_read_as_the_numbers_they_hold(rng, tmp_path):
    # The same integer values stored as float64 and as integers of several types give the same problem.
    shape = (4, 5, 3)
    ww = [rng.integers(-3, 4, size=(7, n)) for n in shape]
    pp = [rng.integers(0, 3, size=(7, n)) for n in shape]
    targets = [rng.integers(-9, 10, size=(7, 2, n)) for n in shape]
    expected = t3k.FittingProblem([w.astype(float) for w in ww], [p.astype(float) for p in pp],
                                  [y.astype(float) for y in targets])
    for dtype in (np.int32, np.int64, np.int8):
        with h5py.File(tmp_path / "ints.h5", "w") as f:
            for i in range(3):
                f[f"probes/w/{i}"] = ww[i].astype(dtype)
                f[f"probes/p/{i}"] = pp[i].astype(dtype)
                f[f"jets/{i}"] = targets[i].astype(dtype)
        back = t3k.load_problem(tmp_path / "ints.h5")
        for a, b in zip(back.ww + back.pp + back.targets, expected.ww + expected.pp + expected.targets):
            np.testing.assert_array_equal(a, b)
    with h5py.File(tmp_path / "ints.h5", "a") as f:
        big = ww[1].astype(np.int64)
        big[2, 3] = 2**53 + 1  # the first integer float64 cannot hold
        del f["probes/w/1"]
        f["probes/w/1"] = big
    with pytest.raises(OSError, match=r"/probes/w/1\[2, 3\] = 9007199254740993 is past 2\^53"):
        t3k.load_problem(tmp_path / "ints.h5")
