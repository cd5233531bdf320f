"""Brute-force dense references for the tests: every quantity formed from the dense tensor by its definition in
docs/math.md, with NumPy only (no T3K code)."""

import itertools

import numpy as np


def t3_dense(tucker, tt):
    """X[j_0, .., j_{d-1}] = 1^T M_0(j_0) .. M_{d-1}(j_{d-1}) 1 with M_i(j)[a, b] = sum_u G_i[a, u, b] U_i[u, j]."""
    partial = np.ones((1, tt[0].shape[0]))  # (entries so far, bond)
    shape = []
    for u, g in zip(tucker, tt):
        m = np.einsum("aub,uj->ajb", g, u)
        partial = np.einsum("Ia,ajb->Ijb", partial, m).reshape(-1, m.shape[2])
        shape.append(u.shape[1])
    return partial.sum(axis=1).reshape(shape)


def contract_all_but(x, vectors, keep):
    """x contracted with vectors[m] in every mode m != keep (a vector of length x.shape[keep])."""
    out = x
    for m in sorted(range(x.ndim), reverse=True):  # from the last axis, so that axis numbers stay valid
        if m != keep:
            out = np.tensordot(out, vectors[m], axes=([m], [0]))
    return out


def dense_jets(x, ww, pp, order):
    """Jets by the subset expansion: z_i^(k) = sum over sets S of k modes other than i of x contracted with pp[m]
    for m in S and ww[m] otherwise; zero for k >= d."""
    d = x.ndim
    n_probes = ww[0].shape[0]
    jets = [np.zeros((n_probes, order + 1, x.shape[i])) for i in range(d)]
    for i in range(d):
        others = [m for m in range(d) if m != i]
        for k in range(min(order, d - 1) + 1):
            for subset in itertools.combinations(others, k):
                for s in range(n_probes):
                    vectors = [pp[m][s] if m in subset else ww[m][s] for m in range(d)]
                    jets[i][s, k] += contract_all_but(x, vectors, i)
    return jets


def tangent_dense(up, left, right, outer, v_tucker, v_tt):
    """T(v) = sum_i [centre i with H_i as centre core] + [centre i with O_i, and V_i in place of U_i]."""
    d = len(up)
    total = 0.0
    for i in range(d):
        total = total + t3_dense(up, left[:i] + [v_tt[i]] + right[i + 1 :])
        tucker = up[:i] + [v_tucker[i]] + up[i + 1 :]
        total = total + t3_dense(tucker, left[:i] + [outer[i]] + right[i + 1 :])
    return total


def contract_all(x, vectors):
    """x contracted with vectors[m] in every mode m (a scalar)."""
    out = x
    for m in reversed(range(x.ndim)):
        out = np.tensordot(out, vectors[m], axes=([m], [0]))
    return float(out)


def dense_scalar_jets(x, ww, pp, order):
    """Jets of applies by the subset expansion: a^(k) = sum over sets S of k modes of x contracted with pp[m] for m in
    S and ww[m] otherwise; zero for k > d. Entries are applies of one-hot vectors (one_hot)."""
    d = x.ndim
    n_samples = ww[0].shape[0]
    jets = np.zeros((n_samples, order + 1))
    for k in range(min(order, d) + 1):
        for subset in itertools.combinations(range(d), k):
            for s in range(n_samples):
                jets[s, k] += contract_all(x, [pp[m][s] if m in subset else ww[m][s] for m in range(d)])
    return jets


def one_hot(indices, shape):
    """The one-hot vectors of multi-indices (W, d): one (W, N_i) array per mode."""
    indices = np.asarray(indices)
    return [np.eye(n)[indices[:, i]] for i, n in enumerate(shape)]


def jacobian_rank(tucker, tt, sharing=None):
    """Numerical rank of the map from the model's parameters to the dense tensor at the given cores: the tensor is
    linear in each core, so the column of one entry is the dense tensor with that core replaced by the entry's unit
    core. With a sharing (one label per mode) a group's factor is one parameter block: an entry of it moves every
    mode of the group, so its column sums the replacements over the group (the modes of a group must hold one
    factor)."""
    sharing = list(range(len(tucker))) if sharing is None else list(sharing)
    columns = []
    for g in dict.fromkeys(sharing):
        modes = [i for i, label in enumerate(sharing) if label == g]
        shape = tucker[modes[0]].shape
        for e in range(tucker[modes[0]].size):
            unit = np.zeros(tucker[modes[0]].size)
            unit[e] = 1.0
            column = 0
            for i in modes:
                replaced = list(tucker)
                replaced[i] = unit.reshape(shape)
                column = column + t3_dense(replaced, tt)
            columns.append(column.ravel())
    for i, core in enumerate(tt):
        for e in range(core.size):
            unit = np.zeros(core.size)
            unit[e] = 1.0
            replaced = list(tt)
            replaced[i] = unit.reshape(core.shape)
            columns.append(t3_dense(tucker, replaced).ravel())
    sigma = np.linalg.svd(np.array(columns).T, compute_uv=False)
    return int(np.sum(sigma > 1e-9 * sigma[0]))
