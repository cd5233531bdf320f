"""T3K: Tucker tensor trains, their probe jets, the Jacobian J and its transpose, on NumPy arrays.

The functions and classes are those of the C++ library (docs/python.md lists them); arrays go in and come out as
NumPy arrays, float64 or float32. Kokkos is initialized on import and finalized at interpreter exit.
"""

from ._t3k import _array_address  # noqa: F401 (testing aid, not API)
from ._t3k import (
    OrthogonalFrame,
    T3Variation,
    TuckerTensorTrain,
    __version__,
    estimate_chunk_size,
    max_chunk_size_within,
    num_threads,
    orthogonal_frame,
    probe_derivatives,
    probe_derivatives_transpose,
    probes,
    reduction_block_size,
    tangent_probe_derivatives,
)

__all__ = [
    "OrthogonalFrame",
    "T3Variation",
    "TuckerTensorTrain",
    "__version__",
    "estimate_chunk_size",
    "max_chunk_size_within",
    "num_threads",
    "orthogonal_frame",
    "probe_derivatives",
    "probe_derivatives_transpose",
    "probes",
    "reduction_block_size",
    "tangent_probe_derivatives",
]
