"""Fit the second and third derivative tensors of a PDE parameter-to-observable map from symmetric probes.

The map q: R^32 -> R^8 solves a 1-D diffusion problem -(kappa u')' = 1 on (0, 1), u(0) = u(1) = 0, on 32 cells,
with the conductivity kappa = exp(S m) of a parameter field m smoothed by a heat flow S, and observes u at 8 nodes.
Its derivative tensors at a point m0, D^2 q (32 x 32 x 8) and D^3 q (32 x 32 x 32 x 8), are symmetric in their
input modes. The example

1. measures them only as their users can, through JAX: symmetric probe jets, the same x in every input mode and a
   vector y in the output mode, moving along h and g, computed by nested jvp (the output-mode probes D^k q[x, .., x])
   and a vjp of nested jvp (the input-mode probes, y . D^k q[., x, .., x]), never forming a tensor;
2. fits each with t3k.fit at fixed ranks with one Tucker factor shared by the input modes (sharing=[0, .., 0, 1]),
   a fifth of the probes held out;
3. reports what symmetric probes determine: the residual on the held-out probes and the error of the model
   symmetrized over the input modes against the dense tensor (formed here by JAX only to check; the model's part
   that is antisymmetric in the input modes is invisible to such probes and left as the fit found it);
4. evaluates the Taylor surrogate q(m0) + J d + D^2 q[d, d] / 2 + D^3 q[d, d, d] / 6 with the fitted T3s (the
   output-mode probes of t3k.probes) against the same surrogate from the dense tensors and against q(m0 + d), at
   three step sizes.

Run: python examples/python/derivative_tensors.py (with t3k and JAX importable). About half a minute on two cores.
Exits 1 on a failed check.
"""

import itertools
import math
import sys
import time

import numpy as np

import jax
import jax.numpy as jnp

import t3k

jax.config.update("jax_enable_x64", True)

N, M = 32, 8  # parameters (cells), observations
h = 1.0 / N
laplacian = (np.diag(-2.0 * np.ones(N)) + np.diag(np.ones(N - 1), 1) + np.diag(np.ones(N - 1), -1)) / h**2
laplacian[0, 0] = laplacian[-1, -1] = -1.0 / h**2  # insulated ends: a constant field passes unsmoothed
eigenvalues, eigenvectors = np.linalg.eigh(laplacian)
smooth = jnp.asarray(eigenvectors @ np.diag(np.exp(0.01 * eigenvalues)) @ eigenvectors.T)  # exp(0.01 laplacian)
observed = np.linspace(3, N - 4, M).astype(int)


def q(m):
    """Observations of the solution u at `observed` for the conductivity exp(smooth m) per cell."""
    kappa = jnp.exp(smooth @ m)
    off = -kappa[1:-1] / h**2
    stiffness = jnp.diag((kappa[:-1] + kappa[1:]) / h**2) + jnp.diag(off, 1) + jnp.diag(off, -1)
    return jnp.linalg.solve(stiffness, jnp.ones(N - 1))[observed]


m0 = 0.5 * jnp.sin(2 * jnp.pi * (np.arange(N) + 0.5) / N)


def directional(f, m, directions):
    """D^k f(m)[v_1, .., v_k] by nested forward-mode derivatives."""
    if not directions:
        return f(m)
    return jax.jvp(lambda mm: directional(f, mm, directions[1:]), (m,), (directions[0],))[1]


def probe_jets(k, order, x, dx, y, dy):
    """Jets of one symmetric probe of T = D^k q(m0) (input modes 0..k-1, output mode k), with w = (x, .., x, y)
    and p = (dx, .., dx, dy): the coefficient of t^j of each mode's probe at w + t p (docs/math.md, probes and
    jets), by the symmetry of T in its input modes. Returns the (order+1, N) input-mode and (order+1, M)
    output-mode jets."""
    inputs, output = [], []
    for j in range(order + 1):
        # Output mode: T[x + t dx, .., x + t dx, .]: j of the k input vectors are dx.
        output.append(math.comb(k, j) * directional(q, m0, [dx] * j + [x] * (k - j)) if j <= k else jnp.zeros(M))
        # Input mode 0: T[., x + t dx, .., y + t dy]: j of the other k - 1 inputs and the output, with dy or not.
        z = jnp.zeros(N)
        if j <= k - 1:
            z += math.comb(k - 1, j) * jax.grad(lambda m: y @ directional(q, m, [dx] * j + [x] * (k - 1 - j)))(m0)
        if 1 <= j <= k:
            z += math.comb(k - 1, j - 1) * jax.grad(lambda m: dy @ directional(q, m, [dx] * (j - 1) + [x] * (k - j)))(m0)
        inputs.append(z)
    return jnp.stack(inputs), jnp.stack(output)


def fit_derivative_tensor(k, n_probes, tucker_rank, tt_ranks, max_iterations, rng):
    """Symmetric probes of D^k q(m0), a shared fit at fixed ranks, and its report against the dense tensor."""
    order = 1
    x, dx = rng.standard_normal((2, n_probes, N)) / np.sqrt(N)
    y, dy = rng.standard_normal((2, n_probes, M)) / np.sqrt(M)
    jets = jax.jit(jax.vmap(lambda *v: probe_jets(k, order, *v)))
    input_jets, output_jets = (np.asarray(a) for a in jets(x, dx, y, dy))

    # Only to check: the dense tensor (input modes first) and the probes it gives.
    dense_fn = q
    for _ in range(k):
        dense_fn = jax.jacfwd(dense_fn)
    dense = np.moveaxis(np.asarray(dense_fn(m0)), 0, -1)
    letters = "abcd"[:k]
    dense_output = np.einsum(f"{letters}o," + ",".join(f"s{c}" for c in letters) + "->so", dense, *[x] * k)
    dense_input = np.einsum(f"{letters}o," + ",".join(f"s{c}" for c in letters[1:]) + ",so->sa", dense,
                            *[x] * (k - 1), y)
    jet_error = max(np.abs(output_jets[:, 0] - dense_output).max() / np.abs(dense_output).max(),
                    np.abs(input_jets[:, 0] - dense_input).max() / np.abs(dense_input).max())

    sharing = [0] * k + [1]
    problem = t3k.FittingProblem([x] * k + [y], [dx] * k + [dy], [input_jets] * k + [output_jets])
    train = problem.hold_out(fraction=0.2, seed=1)
    start = t3k.TuckerTensorTrain.random(dense.shape, [tucker_rank] * k + [M], tt_ranks, seed=k)
    # One factor for the input modes; the start is scaled well below the data, as a tensor of unknown size.
    scale = 1e-4 / start.norm()
    x0 = t3k.TuckerTensorTrain([start.tucker_cores[0]] * k + [start.tucker_cores[k]],
                               [start.tt_cores[0] * scale] + list(start.tt_cores[1:]))
    began = time.perf_counter()
    result = t3k.fit(train, x0, "newton_cg", sharing=sharing, max_iterations=max_iterations,
                     tol_relative_residual=1e-10)
    seconds = time.perf_counter() - began
    model = result.x.to_dense()
    symmetrized = sum(np.transpose(model, list(p) + [k]) for p in itertools.permutations(range(k)))
    symmetrized /= math.factorial(k)
    report = {
        "k": k,
        "probes": n_probes,
        "held_out": problem.n_probes - train.n_probes,
        "ranks": f"Tucker {result.x.tucker_ranks}, TT {result.x.tt_ranks}",
        "dimension": result.x.shared_manifold_dimension(sharing),
        "untied dimension": result.x.manifold_dimension,
        "iterations": len(result.history) - 1,
        "seconds": seconds,
        "training residual": result.history[-1]["relative_residual"],
        "held-out residual": t3k.score(train.validation, result.x)["relative_residual"],
        "symmetrized error": np.linalg.norm(symmetrized - dense) / np.linalg.norm(dense),
        "jet error": jet_error,
    }
    return result.x, dense, report


def output_probe(x, d):
    """T[d, .., d, .] of a T3 whose last mode is the output: its output-mode probe."""
    vectors = [d[None, :]] * (len(x.shape) - 1) + [np.zeros((1, x.shape[-1]))]
    return t3k.probes(x, vectors)[-1][0]


def main():
    rng = np.random.default_rng(0)
    # Ranks near the numerical ranks of the dense tensors at relative accuracy 1e-6 (D^2) and 1e-3 (D^3).
    fit2, dense2, report2 = fit_derivative_tensor(2, 100, 11, [1, 11, M, 1], 60, rng)
    fit3, dense3, report3 = fit_derivative_tensor(3, 300, 8, [1, 8, 23, M, 1], 100, rng)
    ok = True
    for report, limit in ((report2, 1e-4), (report3, 1e-2)):
        print(f"D^{report['k']} q: {report['probes']} symmetric probes ({report['held_out']} held out), "
              f"{report['ranks']}, manifold dimension {report['dimension']} shared ({report['untied dimension']} "
              f"untied), {report['iterations']} iterations in {report['seconds']:.1f} s")
        print(f"  probe jets from JAX against the dense tensor: {report['jet error']:.1e}; relative residual "
              f"training {report['training residual']:.1e}, held out {report['held-out residual']:.1e}; "
              f"symmetrized model against the dense tensor {report['symmetrized error']:.1e}")
        ok &= report["jet error"] < 1e-10 and report["symmetrized error"] < limit
        ok &= report["held-out residual"] < 2 * limit

    q0 = np.asarray(q(m0))
    direction = rng.standard_normal(N)
    direction *= np.linalg.norm(np.asarray(m0)) / np.linalg.norm(direction)
    print("\n| step | true map - linear | true map - Taylor (dense) | true map - Taylor (fitted T3s) "
          "| Taylor (fitted) - Taylor (dense) |")
    print("|---|---|---|---|---|")
    taylor_errors = []
    for step in (1.0, 0.3, 0.1):
        d = step * direction
        linear = q0 + np.asarray(jax.jvp(q, (m0,), (jnp.asarray(d),))[1])
        dense_taylor = (linear + np.einsum("abo,a,b->o", dense2, d, d) / 2
                        + np.einsum("abco,a,b,c->o", dense3, d, d, d) / 6)
        fitted_taylor = linear + output_probe(fit2, d) / 2 + output_probe(fit3, d) / 6
        truth = np.asarray(q(m0 + d))
        scale = np.linalg.norm(truth - q0)
        errors = [np.linalg.norm(a - b) / scale for a, b in
                  ((truth, linear), (truth, dense_taylor), (truth, fitted_taylor), (fitted_taylor, dense_taylor))]
        taylor_errors.append(errors[1])
        print(f"| {step} | " + " | ".join(f"{e:.1e}" for e in errors) + " |")
        # The fitted second and third terms are the dense ones to within 1% of what they add to the linear model.
        ok &= errors[3] < 1e-2 * errors[0]
    # A fourth-order remainder against a first-order scale: a step 3.3x shorter cuts the ratio by about 3.3^3 = 37.
    ok &= all(a > 15 * b for a, b in zip(taylor_errors, taylor_errors[1:]))
    print("(errors relative to |q(m0 + d) - q(m0)|; d = step * |m0| in a random direction)")
    if not ok:
        print("FAILED: a check above is out of bounds", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
