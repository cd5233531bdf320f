"""Generated hostile calls (fixed seed): every call succeeds or raises one of the exceptions docs/python.md documents,
with a message naming the argument that was spoiled; none crashes, hangs or touches a file it was not asked to
write."""

import os
import time

import numpy as np
import pytest

import t3k

SHAPE = (3, 4, 5)
W = 6
DOCUMENTED = (ValueError, TypeError, MemoryError, OSError)


def hostile_values(rng, good):
    """Values to put in place of a good argument `good`: wrong types, shapes, dtypes and sizes, non-finite
    numbers, huge and negative integers, broadcast views, strings and structured arrays."""
    values = [
        None,
        "abc",
        b"\0",
        -1,
        2**40,
        2**63,
        float("nan"),
        float("inf"),
        1j,
        object(),
        [],
        [None],
        np.zeros(0),
        np.zeros((2, 0, 3)),
        np.array([["1", "2"]]),
        np.zeros(3, dtype=[("a", "f8")]),
        np.ones((2, 2), dtype=bool),
        np.ones((2, 2), dtype=complex),
        np.broadcast_to(np.ones(3), (2**23, 3)),
    ]
    if isinstance(good, list) and good and isinstance(good[0], np.ndarray):
        spoiled = [a.copy() for a in good]
        k = int(rng.integers(len(spoiled)))
        a = spoiled[k]
        values += [
            spoiled[:-1],
            spoiled + spoiled[:1],
            [a.astype(np.float32) for a in good],
            [a.T for a in good],
            [a[..., :1] for a in good],
            [a.astype(str) for a in good],
            [a.tolist() for a in good],
        ]
        for bad in (np.nan, np.inf, -1e300):
            b = [c.copy() for c in good]
            b[k].flat[int(rng.integers(b[k].size))] = bad
            values.append(b)
        b = [c.copy() for c in good]
        b[k] = np.broadcast_to(b[k][:1], (2**22,) + b[k].shape[1:])
        values.append(b)
    if isinstance(good, np.ndarray) and good.ndim >= 1 and good.size > 0:  # one array: indices, values, residuals
        values += [good.astype(np.float32), good.T, good[:1], good[..., :1], good[None], good.astype(str),
                   good.tolist(), good.astype(np.uint8), np.broadcast_to(good[:1], (2**22,) + good.shape[1:])]
        for bad in (np.nan, np.inf, -1, 2**31, -1e300):
            b = good.astype(np.float64 if isinstance(bad, float) else np.int64, copy=True)
            b.flat[int(rng.integers(b.size))] = bad
            values.append(b)
    return values


def build(rng):
    """The calls: (name, function, good keyword arguments, argument name -> where the message names it)."""
    x = t3k.TuckerTensorTrain.random(SHAPE, (2, 3, 2), (1, 2, 3, 1), seed=3)
    frame = t3k.orthogonal_frame(x)
    ww = [rng.standard_normal((W, n)) for n in SHAPE]
    pp = [rng.standard_normal((W, n)) for n in SHAPE]
    targets = t3k.probe_derivatives(x, ww, pp, 1)
    problem = t3k.FittingProblem(ww, pp, targets)
    v = t3k.T3Variation.zeros(frame, 2)
    indices = np.stack([rng.integers(0, n, W) for n in SHAPE], axis=1)
    values = t3k.entry_derivatives(x, indices, pp, 1)
    scalar_residuals = rng.standard_normal((W, 2))
    calls = [
        ("TuckerTensorTrain", t3k.TuckerTensorTrain, dict(tucker_cores=list(x.tucker_cores), tt_cores=list(x.tt_cores))),
        ("TuckerTensorTrain.random", t3k.TuckerTensorTrain.random,
         dict(shape=list(SHAPE), tucker_ranks=[2, 3, 2], tt_ranks=[1, 2, 3, 1], seed=0)),
        ("probes", t3k.probes, dict(x=x, ww=ww)),
        ("probe_derivatives", t3k.probe_derivatives, dict(x=x, ww=ww, pp=pp, order=1, chunk_size="auto")),
        ("tangent_probe_derivatives", t3k.tangent_probe_derivatives,
         dict(frame=frame, v=v, ww=ww, pp=pp, order=1, chunk_size=None)),
        ("probe_derivatives_transpose", t3k.probe_derivatives_transpose,
         dict(frame=frame, ww=ww, pp=pp, residuals=targets, sum_over_probes=False, chunk_size=64)),
        ("T3Variation.zeros", t3k.T3Variation.zeros, dict(frame=frame, n_stack=2)),
        ("T3Variation", t3k.T3Variation, dict(tucker=list(v.tucker), tt=list(v.tt))),
        ("OrthogonalFrame", t3k.OrthogonalFrame,
         dict(up_tucker=frame.up_tucker, left_tt=frame.left_tt, right_tt=frame.right_tt, outer_tt=frame.outer_tt)),
        ("FittingProblem", t3k.FittingProblem, dict(ww=ww, pp=pp, targets=targets, weights=np.ones(W))),
        ("FittingProblem.planted", t3k.FittingProblem.planted, dict(truth=x, n_probes=8, order=1, noise=0.1, seed=1)),
        ("estimate_chunk_size", t3k.estimate_chunk_size,
         dict(shape=SHAPE, tucker_ranks=(2, 3, 2), tt_ranks=(1, 2, 3, 1), order=1, n_probes=100, n_tangent=1)),
        ("t3_svd", t3k.t3_svd, dict(x=x, max_tucker_ranks=[2, 2, 2], rtol=0.0)),
        ("fit", t3k.fit, dict(problem=problem, x0=x, optimizer="gradient_descent", max_iterations=2, chunk_size="auto")),
        ("from_t3toolbox", t3k.from_t3toolbox, dict(x=t3k.to_t3toolbox(x))),
        ("entries", t3k.entries, dict(x=x, indices=indices)),
        ("applies", t3k.applies, dict(x=x, ww=ww)),
        ("entry_derivatives", t3k.entry_derivatives, dict(x=x, indices=indices, pp=pp, order=1, chunk_size="auto")),
        ("apply_derivatives", t3k.apply_derivatives, dict(x=x, ww=ww, pp=pp, order=1, chunk_size=None)),
        ("tangent_entry_derivatives", t3k.tangent_entry_derivatives,
         dict(frame=frame, v=v, indices=indices, pp=pp, order=1)),
        ("tangent_apply_derivatives", t3k.tangent_apply_derivatives, dict(frame=frame, v=v, ww=ww, pp=pp, order=1)),
        ("entry_derivatives_transpose", t3k.entry_derivatives_transpose,
         dict(frame=frame, indices=indices, pp=pp, residuals=scalar_residuals, sum_over_probes=False, chunk_size=64)),
        ("apply_derivatives_transpose", t3k.apply_derivatives_transpose,
         dict(frame=frame, ww=ww, pp=pp, residuals=scalar_residuals, sum_over_probes=True, chunk_size="auto")),
        ("FittingProblem.entries", t3k.FittingProblem.entries,
         dict(indices=indices, values=values, shape=SHAPE, pp=pp, weights=np.ones(W), order_weights=np.ones(2))),
        ("FittingProblem.applies", t3k.FittingProblem.applies,
         dict(ww=ww, values=values, pp=pp, weights=np.ones(W), order_weights=np.ones(2))),
        ("FittingProblem.planted kinds", t3k.FittingProblem.planted,
         dict(truth=x, n_probes=8, order=1, noise=0.1, seed=1, kind="entries")),
        ("score", t3k.score, dict(problem=problem, x=x)),
        ("t3_from_dense", t3k.t3_from_dense, dict(dense=x.to_dense(), max_tucker_ranks=[2, 2, 2], rtol=0.0)),
        ("max_chunk_size_within", t3k.max_chunk_size_within,
         dict(shape=SHAPE, tucker_ranks=(2, 3, 2), tt_ranks=(1, 2, 3, 1), order=1, n_probes=100,
              target_bytes=1 << 30, kind="applies")),
        ("frame_from_t3toolbox", t3k.frame_from_t3toolbox, dict(base=t3k.frame_to_t3toolbox(frame))),
    ]
    if t3k.has_hdf5:
        calls += [
            ("save", t3k.save, dict(path="FILE", x=x, overwrite=True)),
            ("load", t3k.load, dict(path="SAVED", dtype="float64")),
            ("save_problem", t3k.save_problem, dict(path="FILE", problem=problem, overwrite=True, weights="/w")),
            ("load_problem", t3k.load_problem, dict(path="SAVED_PROBLEM", weights=None)),
        ]
    return calls, x, problem


def snapshot(folder):
    return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


def test_generated_hostile_calls_succeed_or_raise_a_documented_error_naming_the_argument(tmp_path):
    rng = np.random.default_rng(371)
    calls, x, problem = build(rng)
    if t3k.has_hdf5:
        t3k.save(tmp_path / "saved.h5", x)
        t3k.save_problem(tmp_path / "saved_problem.h5", problem)
    paths = {"FILE": tmp_path / "out.h5", "SAVED": tmp_path / "saved.h5", "SAVED_PROBLEM": tmp_path / "saved_problem.h5"}
    outcomes = {"ok": 0, "refused": 0}
    start = time.monotonic()
    for case in range(1200):
        name, function, good = calls[int(rng.integers(len(calls)))]
        kwargs = {k: paths.get(v, v) if isinstance(v, str) else v for k, v in good.items()}
        argument = list(kwargs)[int(rng.integers(len(kwargs)))]
        values = hostile_values(rng, kwargs[argument])
        kwargs[argument] = values[int(rng.integers(len(values)))]
        allowed = {tmp_path / "out.h5"} if name.startswith("save") and argument != "path" else set()
        before = snapshot(tmp_path)
        began = time.monotonic()
        try:
            function(**kwargs)
            outcomes["ok"] += 1
        except DOCUMENTED as error:
            outcomes["refused"] += 1
            text = str(error)
            # nanobind's TypeError for an argument of the wrong type lists the signature, which names it too.
            named = argument in text or (argument == "x" and "t3k.from_t3toolbox" in text)
            # A file that cannot be read is named by its path and the dataset, as `t3k fit` names it.
            named = named or (isinstance(error, OSError) and str(kwargs.get("path")) in text)
            assert named, f"call {case}: t3k.{name} with a spoiled {argument}: {type(error).__name__}: {text}"
        assert time.monotonic() - began < 10, f"call {case}: t3k.{name} with a spoiled {argument} took too long"
        after = snapshot(tmp_path)
        changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
        assert changed <= allowed, f"call {case}: t3k.{name} with a spoiled {argument} changed {changed}"
    assert outcomes["refused"] > 300 and outcomes["ok"] > 30, outcomes
    assert time.monotonic() - start < 240
