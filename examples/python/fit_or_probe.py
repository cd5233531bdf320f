"""Probe a Tucker tensor train from NumPy arrays, take one Gauss-Newton step with J and J^T, then fit with t3k.fit.

1. Builds a T3 X from NumPy cores and evaluates its probe jets; checks them against the dense tensor.
2. Plants a nearby T3 (X with perturbed cores) as the truth and asks for the tangent step v that best explains
   the jet residual r = jets(truth) - jets(X): the Gauss-Newton normal equations J^T J v = J^T r, solved by
   conjugate gradients in NumPy, with J and J^T from t3k. The linearized residual ||r - J v|| must fall far
   below ||r||: what is left is of second order in the perturbation.
3. Fits end to end with t3k.fit: a FittingProblem of NumPy arrays (probe pairs and the truth's jets), Riemannian
   Gauss-Newton from X, a callback printing the progress; the fit must recover the truth. With HDF5, the fitted
   T3 is saved in the layout `t3k fit` writes model.h5 in and loaded back, and handed to the original toolbox's
   representation (the pair of core lists) and back.

Run: python examples/python/fit_or_probe.py (with t3k importable; see docs/python.md). Exits 1 on a failed check.
"""

import os
import sys
import tempfile

import numpy as np

import t3k

rng = np.random.default_rng(1)
shape, tucker_ranks, tt_ranks = (6, 7, 8), (3, 3, 3), (1, 3, 3, 1)
n_probes, order = 300, 1

# 1. A T3 from NumPy arrays: Tucker cores U_i (n_i, N_i), TT cores G_i (r_i, n_i, r_{i+1}).
tucker = [rng.standard_normal((n, big_n)) / np.sqrt(big_n) for n, big_n in zip(tucker_ranks, shape)]
tt = [rng.standard_normal((tt_ranks[i], tucker_ranks[i], tt_ranks[i + 1])) for i in range(len(shape))]
x = t3k.TuckerTensorTrain(tucker, tt)
ww = [rng.standard_normal((n_probes, n)) for n in shape]
pp = [rng.standard_normal((n_probes, n)) for n in shape]
jets = t3k.probe_derivatives(x, ww, pp, order)  # one (W, K+1, N_i) array per mode

dense = x.to_dense()
z0 = np.einsum("abc,sb,sc->sa", dense, ww[1], ww[2])  # mode-0 probes, order 0
z1 = np.einsum("abc,sb,sc->sa", dense, pp[1], ww[2]) + np.einsum("abc,sb,sc->sa", dense, ww[1], pp[2])
probe_error = max(np.abs(jets[0][:, 0] - z0).max(), np.abs(jets[0][:, 1] - z1).max()) / np.abs(z0).max()
print(f"{x}\nprobe jets {[j.shape for j in jets]}, relative error against the dense tensor {probe_error:.1e}")

# 2. One Gauss-Newton step towards a planted truth near X.
eps = 1e-4
truth = t3k.TuckerTensorTrain(
    [u + eps * rng.standard_normal(u.shape) for u in tucker], [g + eps * rng.standard_normal(g.shape) for g in tt]
)
target = t3k.probe_derivatives(truth, ww, pp, order)
residual = [t - j for t, j in zip(target, jets)]
frame = t3k.orthogonal_frame(x)


def jacobian(blocks):
    v = t3k.T3Variation([b[None] for b in blocks[: len(shape)]], [b[None] for b in blocks[len(shape) :]])
    return [z[0] for z in t3k.tangent_probe_derivatives(frame, v, ww, pp, order)]


def jacobian_transpose(r):
    g = t3k.probe_derivatives_transpose(frame, ww, pp, r, chunk_size="auto")
    return [a[0] for a in g.tucker] + [a[0] for a in g.tt]


def dot(a, b):
    return sum(float(np.vdot(p, q)) for p, q in zip(a, b))


# Conjugate gradients on J^T J v = J^T r, from v = 0.
rhs = jacobian_transpose(residual)
v = [np.zeros_like(b) for b in rhs]
res, direction = [b.copy() for b in rhs], [b.copy() for b in rhs]
for iteration in range(60):
    q = jacobian_transpose(jacobian(direction))
    alpha = dot(res, res) / dot(direction, q)
    v = [a + alpha * b for a, b in zip(v, direction)]
    new_res = [a - alpha * b for a, b in zip(res, q)]
    if np.sqrt(dot(new_res, new_res)) < 1e-12 * np.sqrt(dot(rhs, rhs)):
        break
    beta = dot(new_res, new_res) / dot(res, res)
    res, direction = new_res, [a + beta * b for a, b in zip(new_res, direction)]

left = [r - jv for r, jv in zip(residual, jacobian(v))]
ratio = np.sqrt(dot(left, left) / dot(residual, residual))
print(f"Gauss-Newton step: {iteration + 1} CG iterations, ||r - J v|| / ||r|| = {ratio:.1e} (perturbation {eps})")

# 3. t3k.fit on the same probes: the targets are the truth's jets; the callback prints every fifth iteration.
problem = t3k.FittingProblem(ww, pp, target)


def progress(record):
    if record["iteration"] % 5 == 0:
        print(f"  iteration {record['iteration']:2d}: relative residual {record['relative_residual']:.2e}")


result = t3k.fit(problem, x, "newton_cg", callback=progress, max_iterations=30, tol_relative_residual=1e-10)
fit_error = np.linalg.norm(result.x.to_dense() - truth.to_dense()) / np.linalg.norm(truth.to_dense())
iterations = len(result.history) - 1
print(f"t3k.fit: {result.reason} after {iterations} iterations, ||X - truth|| / ||truth|| = {fit_error:.1e}")

round_trip = 0.0
if t3k.has_hdf5:
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "model.h5")
        t3k.save(path, result.x)  # `t3k jets --in model.h5` or model.init.file of `t3k fit` read it
        loaded = t3k.from_t3toolbox(t3k.to_t3toolbox(t3k.load(path)))
        round_trip = np.abs(loaded.to_dense() - result.x.to_dense()).max()
    print(f"saved, loaded and through the toolbox's representation: max change {round_trip:.1e}")

ok = probe_error < 1e-10 and ratio < 1e-2 and fit_error < 1e-8 and round_trip == 0.0
print("fit_or_probe: OK" if ok else "fit_or_probe: FAILED")
sys.exit(0 if ok else 1)
