#!/usr/bin/env python3
"""Reads the T3 that `t3k fit examples/your_data/fit.yaml` wrote and compares it with the tensor it was fitted to.

    python3 examples/your_data/read_model.py [MODEL.h5 [TENSOR.npy]]

Exits 1 when the fitted tensor differs from the truth by more than 1e-6 (relative, Frobenius).
"""
import pathlib
import sys

import h5py
import numpy as np

here = pathlib.Path(__file__).parent
model_path = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else here / "runs/fit/model.h5"
truth_path = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else here / "data.tensor.npy"

with h5py.File(model_path, "r") as f:
    d = int(f.attrs["d"])
    tucker = [f[f"t3/tucker_cores/{i}"][()] for i in range(d)]  # U_i: (n_i, N_i)
    tt = [f[f"t3/tt_cores/{i}"][()] for i in range(d)]  # G_i: (r_i, n_i, r_{i+1})
    print(f"{model_path}: d = {d}, W = {int(f.attrs['W'])}, K = {int(f.attrs['K'])}")

# The dense tensor: X[j0..] = sum over a, u of prod_i G_i[a_i, u_i, a_{i+1}] U_i[u_i, j_i], boundary bonds summed.
x = np.ones((1,))  # shape (j_0, ..., j_{i-1}, a_i) as we go
for u, g in zip(tucker, tt):
    core = np.einsum("aub,uj->ajb", g, u)  # the TT core with its Tucker factor applied: (r_i, N_i, r_{i+1})
    if x.ndim == 1:
        x = core.sum(axis=0)  # boundary bond a_0 summed with weight 1
    else:
        x = np.tensordot(x, core, axes=([-1], [0]))
x = x.sum(axis=-1)  # boundary bond a_d

truth = np.load(truth_path)
error = np.linalg.norm(x - truth) / np.linalg.norm(truth)
print(f"ranks: tucker {[u.shape[0] for u in tucker]}, tt {[g.shape[0] for g in tt] + [tt[-1].shape[2]]}")
print(f"relative error of the fitted tensor: {error:.2e}")
sys.exit(0 if error < 1e-6 else 1)
