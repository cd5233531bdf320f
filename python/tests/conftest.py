import numpy as np
import pytest

import t3k


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


def random_probe_set(rng, shape, n_probes, dtype=np.float64):
    ww = [rng.standard_normal((n_probes, n)).astype(dtype) for n in shape]
    pp = [rng.standard_normal((n_probes, n)).astype(dtype) for n in shape]
    return ww, pp


def random_t3(rng, shape, tucker_ranks, tt_ranks, dtype=np.float64):
    """A T3 from NumPy cores (not the library's generator, so that construction from arrays is what is tested)."""
    tucker = [rng.standard_normal((n, big_n)).astype(dtype) for n, big_n in zip(tucker_ranks, shape)]
    tt = [
        rng.standard_normal((tt_ranks[i], tucker_ranks[i], tt_ranks[i + 1])).astype(dtype)
        for i in range(len(shape))
    ]
    return t3k.TuckerTensorTrain(tucker, tt), tucker, tt


# Shapes with rank-1 bonds, uneven ranks, a size-1 mode, n_i > N_i and boundary ranks other than 1.
SHAPES = [
    ((5,), (2,), (1, 1)),
    ((3, 4), (2, 3), (1, 2, 1)),
    ((3, 4, 5), (2, 3, 2), (1, 2, 3, 1)),
    ((2, 1, 3, 4), (3, 1, 2, 2), (2, 1, 2, 3, 2)),
]


def jax_transpose_reference():
    """perf/jax_transpose.py as a module: its JAX J^T (jax.linear_transpose of a forward J written in JAX) is an
    independent reference for T3K's J^T. Needs jax."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "perf" / "jax_transpose.py"
    spec = importlib.util.spec_from_file_location("jax_transpose", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
