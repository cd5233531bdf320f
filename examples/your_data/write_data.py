#!/usr/bin/env python3
"""Writes a `data` problem for `t3k fit`: probe pairs and the target probe jets of your tensor, in HDF5.

The tensor here is X[j0, j1, j2, j3] = sin(x0 + x1 + x2 + x3) on a 10^4 grid (x = j / 9), small enough to hold
densely, so its probe jets are computed below straight from the definition. Replace `my_tensor` (or the whole jet
computation, if your application produces the jets itself) with your own data.

    python3 examples/your_data/write_data.py            # writes examples/your_data/data.h5
    python3 examples/your_data/write_data.py OUT.h5
"""
import itertools
import pathlib
import sys

import h5py
import numpy as np

D, N, K, W = 4, 10, 2, 200  # modes, mode size, jet order, probe pairs


def my_tensor():
    x = np.linspace(0.0, 1.0, N)
    grids = np.meshgrid(*([x] * D), indexing="ij")
    return np.sin(sum(grids))


def probe_jets(tensor, w, p, order):
    """z[i] of shape (W, order+1, N_i): coefficient k of t^k in X contracted with w[m] + t p[m] in every mode m != i.

    Brute force: the coefficient of t^k sums, over every set S of k modes other than i, X contracted with p[m]
    for m in S and with w[m] for the other modes m != i.
    """
    d = tensor.ndim
    n_probes = w[0].shape[0]
    z = [np.zeros((n_probes, order + 1, tensor.shape[i])) for i in range(d)]
    for i in range(d):
        others = [m for m in range(d) if m != i]
        for k in range(min(order, d - 1) + 1):
            for subset in itertools.combinations(others, k):
                # Contract the highest modes first so that the lower axes keep their numbers; axis 0 is the probe.
                t = np.broadcast_to(tensor, (n_probes,) + tensor.shape)
                for m in sorted(others, reverse=True):
                    v = p[m] if m in subset else w[m]
                    t = np.einsum("s...j,sj->s...", np.moveaxis(t, m + 1, -1), v)
                z[i][:, k, :] += t
    return z


def main():
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).with_name("data.h5")
    rng = np.random.default_rng(0)
    tensor = my_tensor()
    # Probe pairs: any vectors work; unit-scale random ones keep every probe equally informative.
    w = [rng.standard_normal((W, N)) / np.sqrt(N) for _ in range(D)]
    p = [rng.standard_normal((W, N)) / np.sqrt(N) for _ in range(D)]
    jets = probe_jets(tensor, w, p, K)

    with h5py.File(out, "w") as f:
        for i in range(D):
            f[f"probes/w/{i}"] = w[i]  # (W, N_i) float64
            f[f"probes/p/{i}"] = p[i]  # (W, N_i) float64
            f[f"jets/{i}"] = jets[i]  # (W, K+1, N_i) float64: the targets
        f["probes"].attrs["order"] = np.int64(K)  # optional; must agree with the jets
        f["weights"] = np.ones(W)  # optional per-probe weights >= 0 (problem.data.weights: /weights)
    np.save(out.with_suffix(".tensor.npy"), tensor)  # the truth, for read_model.py to compare against
    print(f"wrote {out}: d = {D}, N = {N}, K = {K}, W = {W}")


if __name__ == "__main__":
    main()
