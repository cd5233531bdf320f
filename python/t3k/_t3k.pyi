"""
T3K: Tucker tensor trains, their probe jets, the Jacobian J and its transpose, on NumPy arrays.

Kokkos is initialized on import (its host backend, OpenMP where built with it; OMP_NUM_THREADS sets the
threads) and finalized at interpreter exit. Calls release the GIL and run one at a time.
"""

from collections.abc import Sequence
import os

import numpy
import numpy.typing


reduction_block_size: int = 64

device: str = 'cpu'

class TuckerTensorTrain:
    """
    A Tucker tensor train: Tucker cores U_i of shape (n_i, N_i) and TT cores G_i of shape (r_i, n_i, r_{i+1}),
    X[j_0, .., j_{d-1}] = 1^T M_0(j_0) .. M_{d-1}(j_{d-1}) 1 with M_i(j)[a, b] = sum_u G_i[a, u, b] U_i[u, j].

    The cores are held as given when they are C-contiguous arrays of the T3's dtype (no copy: changing them
    changes the T3), else as converted copies. The properties return read-only views of them.
    """

    def __init__(self, tucker_cores: Sequence[numpy.typing.ArrayLike], tt_cores: Sequence[numpy.typing.ArrayLike], dtype: numpy.typing.DTypeLike = None) -> None:
        """
        Builds a T3 from d Tucker cores (n_i, N_i) and d TT cores (r_i, n_i, r_{i+1}).

        dtype: float32 or float64; by default float32 when tucker_cores[0] is float32, else float64.
        Raises ValueError naming the core and both shapes when the cores do not fit together.
        """

    @staticmethod
    def random(shape: Sequence[int], tucker_ranks: Sequence[int], tt_ranks: Sequence[int], seed: int = 0, dtype: numpy.typing.DTypeLike = 'float64') -> TuckerTensorTrain:
        """
        A T3 with i.i.d. normal cores (Tucker cores scaled by 1/sqrt(N_i), TT cores by 1/sqrt(r_i n_i)),
        the same for a seed on every backend. tt_ranks has d + 1 entries r_0..r_d (usually r_0 = r_d = 1).
        """

    def to_dense(self) -> numpy.ndarray:
        """The dense tensor, shape (N_0, .., N_{d-1}) (for small tensors)."""

    def norm(self) -> float:
        """The Frobenius norm ||X||, computed from the cores."""

    @property
    def tucker_cores(self) -> list[numpy.ndarray]:
        """U_0..U_{d-1}, read-only views (n_i, N_i)."""

    @property
    def tt_cores(self) -> list[numpy.ndarray]:
        """G_0..G_{d-1}, read-only views (r_i, n_i, r_{i+1})."""

    @property
    def shape(self) -> tuple[int, ...]:
        """(N_0, .., N_{d-1})."""

    @property
    def tucker_ranks(self) -> list[int]:
        """[n_0, .., n_{d-1}]."""

    @property
    def tt_ranks(self) -> list[int]:
        """[r_0, .., r_d] (d + 1 entries)."""

    @property
    def manifold_dimension(self) -> int:
        """
        The dimension of the manifold of T3s of this T3's shape and ranks: its degrees of freedom
        (t3k.manifold_dimension).
        """

    def shared_manifold_dimension(self, sharing: Sequence[int] | None) -> int:
        """
        manifold_dimension with shared Tucker factors: sharing gives one integer label per mode, modes with
        equal labels use one factor, which counts once (t3k.manifold_dimension(..., sharing=...)). None: the
        manifold_dimension property. Raises ValueError naming sharing when it does not fit this T3.
        """

    @property
    def n_modes(self) -> int:
        """d, the number of modes."""

    @property
    def dtype(self) -> numpy.dtype:
        """float32 or float64."""

    def __repr__(self) -> str: ...

def inner_product(x: TuckerTensorTrain, y: TuckerTensorTrain) -> float:
    """
    <X, Y>, the Frobenius inner product of two T3s of the same shape, from their cores.
    """

def t3_svd(x: TuckerTensorTrain, max_tucker_ranks: Sequence[int] | None = None, max_tt_ranks: Sequence[int] | None = None, rtol: float = 0.0) -> tuple[TuckerTensorTrain, list[numpy.ndarray], list[numpy.ndarray]]:
    """
    T3-SVD: truncates X by sequential SVDs to at most max_tucker_ranks (d entries) and max_tt_ranks (d + 1
    entries, boundary entries ignored), keeping singular values above rtol * the largest of each unfolding.
    Returns (the truncated T3, the Tucker singular values per mode, the TT singular values per interior bond),
    every singular value computed, before truncation. None: no cap.
    """

def manifold_dimension(shape: Sequence[int], tucker_ranks: Sequence[int], tt_ranks: Sequence[int], sharing: Sequence[int] | None = None) -> int:
    """
    The dimension of the manifold of T3s of this shape and these ranks, the model's degrees of freedom:
    sum_i n_i (N_i - n_i) + sum_i r_i n_i r_{i+1} - sum_{e=1..d-1} r_e^2, counted at the ranks such T3s
    actually have (boundary ranks 1, every rank lowered to what its neighbours allow; docs/math.md).
    sharing: one integer label per mode; modes with equal labels share one Tucker factor (equal sizes and
    Tucker ranks), which counts once, n_g (N_g - n_g), and a group's rank is bounded by its modes together
    (docs/math.md, "Shared Tucker factors"). None: no sharing.
    Nothing runs. Raises ValueError for inconsistent lists.
    """

def t3_from_dense(dense: numpy.typing.ArrayLike, max_tucker_ranks: Sequence[int] | None = None, max_tt_ranks: Sequence[int] | None = None, rtol: float = 0.0, dtype: numpy.typing.DTypeLike = None) -> tuple[TuckerTensorTrain, list[numpy.ndarray], list[numpy.ndarray]]:
    """
    The T3 of a dense d-dimensional array (its shape is the T3's): HOSVD Tucker factors, an exact train of
    the projected core, then t3_svd with these caps and tolerance (none: exact to rounding). Returns as
    t3_svd. dtype: by default float32 for a float32 array, else float64. Runs on the host (LAPACK); meant
    for tensors of up to some millions of entries. Raises ValueError for a NaN or an infinity in dense.
    """

class OrthogonalFrame:
    """
    The orthogonal frame of a T3 (docs/math.md): up Tucker factors U_i (nU_i, N_i), left-orthogonal L_i
    (rL_i, nU_i, rL_{i+1}), right-orthogonal R_i (rR_i, nU_i, rR_{i+1}) and outer O_i (rL_i, nO_i, rR_{i+1})
    TT cores, and, for a frame built from a T3, the centre factors S_i (nO_i, nU_i).
    """

    def __init__(self, up_tucker: Sequence[numpy.typing.ArrayLike], left_tt: Sequence[numpy.typing.ArrayLike], right_tt: Sequence[numpy.typing.ArrayLike], outer_tt: Sequence[numpy.typing.ArrayLike], centre_tucker: Sequence[numpy.typing.ArrayLike] | None = None, dtype: numpy.typing.DTypeLike = None) -> None:
        """
        A frame from its cores (e.g. read from a file). Raises ValueError when the cores do not fit together.
        """

    @property
    def up_tucker(self) -> list[numpy.ndarray]:
        """U_i (nU_i, N_i), orthonormal rows."""

    @property
    def left_tt(self) -> list[numpy.ndarray]:
        """L_i (rL_i, nU_i, rL_{i+1})."""

    @property
    def right_tt(self) -> list[numpy.ndarray]:
        """R_i (rR_i, nU_i, rR_{i+1})."""

    @property
    def outer_tt(self) -> list[numpy.ndarray]:
        """O_i (rL_i, nO_i, rR_{i+1})."""

    @property
    def centre_tucker(self) -> list[numpy.ndarray] | None:
        """
        S_i (nO_i, nU_i) with C_i[a, u, b] = sum_o O_i[a, o, b] S_i[o, u], or None.
        """

    @property
    def shape(self) -> tuple[int, ...]:
        """(N_0, .., N_{d-1})."""

    @property
    def n_modes(self) -> int:
        """d, the number of modes."""

    @property
    def dtype(self) -> numpy.dtype:
        """float32 or float64."""

class T3Variation:
    """
    A stack of variations (tangent vectors in frame coordinates, docs/math.md): Tucker blocks V_i of shape
    (n_stack, nO_i, N_i) and TT blocks H_i of shape (n_stack, rL_i, nU_i, rR_{i+1}).
    """

    def __init__(self, tucker: Sequence[numpy.typing.ArrayLike], tt: Sequence[numpy.typing.ArrayLike], dtype: numpy.typing.DTypeLike = None) -> None:
        """
        A variation stack from its blocks (held without a copy where the layout allows, as T3 cores).
        """

    @staticmethod
    def zeros(frame: OrthogonalFrame, n_stack: int = 1) -> T3Variation:
        """A zero stack of n_stack variations with the frame's shapes."""

    @property
    def tucker(self) -> list[numpy.ndarray]:
        """V_i (n_stack, nO_i, N_i), read-only views."""

    @property
    def tt(self) -> list[numpy.ndarray]:
        """H_i (n_stack, rL_i, nU_i, rR_{i+1}), read-only views."""

    @property
    def n_stack(self) -> int:
        """The length of the stack axis."""

    @property
    def n_modes(self) -> int:
        """d, the number of modes."""

    @property
    def dtype(self) -> numpy.dtype:
        """float32 or float64."""

def orthogonal_frame(x: TuckerTensorTrain) -> OrthogonalFrame:
    """
    The orthogonal frame of X by QR sweeps, with its centre factors (docs/math.md).
    """

def tangent_probe_derivatives(frame: OrthogonalFrame, v: T3Variation, ww: Sequence[numpy.typing.ArrayLike], pp: Sequence[numpy.typing.ArrayLike], order: int, chunk_size: int | str | None = 'auto') -> list[numpy.ndarray]:
    """
    The Jacobian J applied to a stack of variations: the probe jets of the tangent tensors T(v_t), one
    (n_stack, W, order + 1, N_i) array per mode. J acts on all variations, gauged or not.
    """

def probe_derivatives_transpose(frame: OrthogonalFrame, ww: Sequence[numpy.typing.ArrayLike], pp: Sequence[numpy.typing.ArrayLike], residuals: Sequence[numpy.typing.ArrayLike], sum_over_probes: bool = True, chunk_size: int | str | None = 'auto') -> T3Variation:
    """
    J^T: residual jets back-projected into a variation, so that for every v
    sum(J(v) * r) over probes, modes, orders and entries = sum_i <V_i, V~_i> + <H_i, H~_i>.

    residuals: one (W, K+1, N_i) array per mode, or (n_t, W, K+1, N_i) for a stack of n_t.
    sum_over_probes: True gives n_t variations (the gradients J^T r); False gives n_t * W, index t * W + s.
    chunk_size: probes per pass ('auto': the memory model's choice, None: all at once, or an integer, rounded
    down to a multiple of reduction_block_size); every chunk size gives the same result bit for bit.
    The result is not gauged.
    """

def probes(x: TuckerTensorTrain, ww: Sequence[numpy.typing.ArrayLike]) -> list[numpy.ndarray]:
    """
    Order-0 probes z_i = X contracted with ww[m] in every mode m != i: one (W, N_i) array per mode.

    ww: one (W, N_i) array per mode. Raises ValueError naming the array and both shapes.
    """

def probe_derivatives(x: TuckerTensorTrain, ww: Sequence[numpy.typing.ArrayLike], pp: Sequence[numpy.typing.ArrayLike], order: int, chunk_size: int | str | None = 'auto') -> list[numpy.ndarray]:
    """
    Probe jets of X: one (W, order + 1, N_i) array per mode holding the Taylor coefficients z_i^(k) of
    z_i(t) = X contracted with ww[m] + t pp[m] in every mode m != i (coefficients, not derivatives: no k!).
    Orders k >= d are zero.

    ww, pp: one (W, N_i) array per mode. chunk_size: probes per pass ('auto', None for all at once, or an
    integer); the result does not depend on it. Raises ValueError naming the array and both shapes.
    """

def estimate_chunk_size(shape: Sequence[int], tucker_ranks: Sequence[int], tt_ranks: Sequence[int], order: int, n_probes: int, n_tangent: int = 1, n_shards: int = 1, dtype: numpy.typing.DTypeLike = 'float64', block_rows: int = 64, kind: str = 'probes') -> int:
    """
    The balance chunk size of J^T for these T3 shapes: the largest chunk whose workspace stays within the
    bytes of the sample data itself; a multiple of block_rows, or all samples. kind: the measurements J^T
    runs on, 'probes', 'entries' or 'applies' (n_probes: their number W). Nothing runs.
    """

def max_chunk_size_within(shape: Sequence[int], tucker_ranks: Sequence[int], tt_ranks: Sequence[int], order: int, n_probes: int, target_bytes: int, n_tangent: int = 1, n_shards: int = 1, dtype: numpy.typing.DTypeLike = 'float64', block_rows: int = 64, kind: str = 'probes') -> int:
    """
    The largest J^T chunk whose peak memory (inputs, workspace, gradients) stays within target_bytes, for
    measurements of kind ('probes', 'entries' or 'applies').
    Raises ValueError stating the bytes needed when even one block does not fit.
    """

def entries(x: TuckerTensorTrain, indices: numpy.typing.ArrayLike) -> numpy.ndarray:
    """
    The entries X[indices[s, 0], .., indices[s, d-1]]: a (W,) array.

    indices: (W, d) integers of any dtype, 0-based, 0 <= indices[s, i] < N_i (a multi-index may repeat).
    Raises ValueError naming the first index out of range and its mode's size.
    """

def applies(x: TuckerTensorTrain, ww: Sequence[numpy.typing.ArrayLike]) -> numpy.ndarray:
    """
    The applies X(ww[0][s], .., ww[d-1][s]) (X contracted with ww[m][s] in every mode m): a (W,) array.

    ww: one (W, N_i) array per mode. Raises ValueError naming the array and both shapes.
    """

def entry_derivatives(x: TuckerTensorTrain, indices: numpy.typing.ArrayLike, pp: Sequence[numpy.typing.ArrayLike] | None = None, order: int = 0, chunk_size: int | str | None = 'auto') -> numpy.ndarray:
    """
    Jets of entries: a (W, order + 1) array of the Taylor coefficients a^(k) of
    a(t) = X(e_{indices[s, 0]} + t pp[0][s], .., e_{indices[s, d-1]} + t pp[d-1][s]) (e_j one-hot; orders k > d
    are zero). pp: one (W, N_i) direction per mode, required for order >= 1. chunk_size: samples per pass
    ('auto', None for all at once, or an integer); the result does not depend on it.
    """

def apply_derivatives(x: TuckerTensorTrain, ww: Sequence[numpy.typing.ArrayLike], pp: Sequence[numpy.typing.ArrayLike] | None = None, order: int = 0, chunk_size: int | str | None = 'auto') -> numpy.ndarray:
    """
    Jets of applies: a (W, order + 1) array of the Taylor coefficients a^(k) of
    a(t) = X(ww[0][s] + t pp[0][s], .., ww[d-1][s] + t pp[d-1][s]) (orders k > d are zero).
    pp: required for order >= 1. chunk_size: as entry_derivatives.
    """

def tangent_entry_derivatives(frame: OrthogonalFrame, v: T3Variation, indices: numpy.typing.ArrayLike, pp: Sequence[numpy.typing.ArrayLike] | None = None, order: int = 0, chunk_size: int | str | None = 'auto') -> numpy.ndarray:
    """
    J v for entries: the entry jets of the tangent tensors T(v_t), an (n_stack, W, order + 1) array.
    """

def tangent_apply_derivatives(frame: OrthogonalFrame, v: T3Variation, ww: Sequence[numpy.typing.ArrayLike], pp: Sequence[numpy.typing.ArrayLike] | None = None, order: int = 0, chunk_size: int | str | None = 'auto') -> numpy.ndarray:
    """
    J v for applies: the apply jets of the tangent tensors T(v_t), an (n_stack, W, order + 1) array.
    """

def entry_derivatives_transpose(frame: OrthogonalFrame, indices: numpy.typing.ArrayLike, pp: Sequence[numpy.typing.ArrayLike] | None, residuals: numpy.typing.ArrayLike, sum_over_probes: bool = True, chunk_size: int | str | None = 'auto') -> T3Variation:
    """
    J^T for entries: residual jets (W, K+1), or (n_t, W, K+1) for a stack, back-projected into variations, so
    that sum(tangent_entry_derivatives(frame, v, indices, pp, K) * r) = sum_i <V_i, V~_i> + <H_i, H~_i>.
    pp: None for K = 0. sum_over_probes and chunk_size: as probe_derivatives_transpose (every chunk size
    gives the same result bit for bit; False gives n_t * W variations, index t * W + s). Not gauged.
    """

def apply_derivatives_transpose(frame: OrthogonalFrame, ww: Sequence[numpy.typing.ArrayLike], pp: Sequence[numpy.typing.ArrayLike] | None, residuals: numpy.typing.ArrayLike, sum_over_probes: bool = True, chunk_size: int | str | None = 'auto') -> T3Variation:
    """
    J^T for applies: as entry_derivatives_transpose, with one (W, N_i) vector per mode instead of indices.
    """

class FittingProblem:
    """
    The data of a fit (docs/math.md): W samples of one measurement kind with target jets of order K.
    - probes (FittingProblem(...)): vectors ww[i] and directions pp[i] (W, N_i), targets[i] (W, K+1, N_i);
    - entries (FittingProblem.entries): multi-indices (W, d), values (W, K+1), pp[i] for K >= 1;
    - applies (FittingProblem.applies): vectors ww[i] (W, N_i), values (W, K+1), pp[i] for K >= 1.
    Optional per-sample weights c_s (W) and per-order weights omega_k (K+1). The loss is
    0.5 sum_s c_s sum_k omega_k^2 ||measurement_s^(k)(X) - target_s^(k)||^2. Arrays are held as T3 cores are.
    """

    def __init__(self, ww: Sequence[numpy.typing.ArrayLike], pp: Sequence[numpy.typing.ArrayLike], targets: Sequence[numpy.typing.ArrayLike], weights: numpy.typing.ArrayLike | None = None, dtype: numpy.typing.DTypeLike = None, validation: FittingProblem | None = None, order_weights: numpy.typing.ArrayLike | None = None) -> None:
        """
        A problem of probes from its arrays; K is targets[0].shape[1] - 1. dtype: by default float32 when
        ww[0] is float32, else float64. validation: held-out samples of the same kind, dtype, mode sizes and
        order (as validation.file of `t3k fit`), whose relative residual fit records and validation_patience
        stops on. order_weights: omega_0..omega_K (each finite and >= 0). Raises ValueError naming the array
        and both shapes when they do not fit, or the first entry that is not finite.
        """

    @staticmethod
    def entries(indices: numpy.typing.ArrayLike, values: numpy.typing.ArrayLike, shape: Sequence[int], pp: Sequence[numpy.typing.ArrayLike] | None = None, weights: numpy.typing.ArrayLike | None = None, order_weights: numpy.typing.ArrayLike | None = None, dtype: numpy.typing.DTypeLike = None, validation: FittingProblem | None = None) -> FittingProblem:
        """
        A problem of entries (tensor completion): indices (W, d) integers of any dtype, 0 <= indices[s, i] <
        shape[i]; values (W) or (W, K+1): the entries, or their jets along pp (one (W, N_i) direction per mode,
        required for K >= 1). shape: the mode sizes N_0..N_{d-1}. dtype: by default float32 when values is
        float32, else float64. Raises ValueError naming the first index out of range and its mode's size.
        """

    @staticmethod
    def applies(ww: Sequence[numpy.typing.ArrayLike], values: numpy.typing.ArrayLike, pp: Sequence[numpy.typing.ArrayLike] | None = None, weights: numpy.typing.ArrayLike | None = None, order_weights: numpy.typing.ArrayLike | None = None, dtype: numpy.typing.DTypeLike = None, validation: FittingProblem | None = None) -> FittingProblem:
        """
        A problem of applies: vectors ww[i] (W, N_i); values (W) or (W, K+1): X(ww[0][s], .., ww[d-1][s]) or
        its jets along pp (required for K >= 1). dtype: as FittingProblem's.
        """

    def hold_out(self, fraction: float | None = None, count: int | None = None, seed: int = 0) -> FittingProblem:
        """
        A new problem without `count` samples (or round(fraction * W)), drawn by seed, which become its
        validation set: the same samples as validation.fraction / validation.count of `t3k fit` with that
        seed. Give exactly one of fraction and count.
        """

    @property
    def validation(self) -> FittingProblem | None:
        """The validation set (a FittingProblem sharing its arrays), or None."""

    @staticmethod
    def planted(truth: TuckerTensorTrain, n_probes: int, order: int, noise: float = 0.0, seed: int = 0, kind: str = 'probes') -> FittingProblem:
        """
        A synthetic problem with a known answer (the planted problems of `t3k fit`): n_probes samples of
        `kind` ('probes', 'entries' or 'applies'; entries distinct, drawn by seed), random directions for
        order >= 1, targets the jets of truth plus noise * rms(jets) * normal noise.
        """

    @property
    def kind(self) -> str:
        """'probes', 'entries' or 'applies'."""

    @property
    def ww(self) -> list[numpy.ndarray]:
        """(W, N_i) per mode, read-only views (empty for entries)."""

    @property
    def pp(self) -> list[numpy.ndarray]:
        """
        (W, N_i) per mode, read-only views (empty for entries and applies of order 0 given without pp).
        """

    @property
    def indices(self) -> numpy.ndarray | None:
        """
        The multi-indices of entries, (W, d) int32, or None for the other kinds.
        """

    @property
    def targets(self) -> list[numpy.ndarray]:
        """
        (W, K+1, N_i) per mode for probes; one (W, K+1, 1) array for entries and applies. Read-only views.
        """

    @property
    def values(self) -> numpy.ndarray | None:
        """
        The target jets of entries and applies, (W, K+1), a read-only view; None for probes.
        """

    @property
    def weights(self) -> numpy.ndarray | None:
        """(W,) or None (all ones)."""

    @property
    def order_weights(self) -> numpy.ndarray | None:
        """omega_0..omega_K, (K+1,), or None (all ones)."""

    @property
    def shape(self) -> tuple[int, ...]:
        """(N_0, .., N_{d-1})."""

    @property
    def order(self) -> int:
        """K, the jet order."""

    @property
    def n_probes(self) -> int:
        """W, the number of samples."""

    @property
    def dtype(self) -> numpy.dtype:
        """float32 or float64."""

def score(problem: FittingProblem, x: TuckerTensorTrain) -> dict[str, float]:
    """
    The loss of x on problem, without an optimizer: {'loss': 0.5 sum_s c_s sum_k omega_k^2 ||r_s^(k)||^2,
    'zero_loss': the loss of X = 0, 'relative_residual': sqrt(loss / zero_loss)} (as fit records them).
    Raises ValueError when x's dtype or shape does not fit the problem or its cores are not finite.
    """

def save(path: str | os.PathLike, x: TuckerTensorTrain, overwrite: bool = False, sharing: Sequence[int] | None = None) -> None:
    """
    Writes X as /t3 (docs/file-format.md, float64) with the root attribute d, the layout `t3k fit` writes
    model.h5 in and `t3k jets` and model.init.file read. Atomic: a temporary file renamed onto path.
    sharing: the labels of a model with shared Tucker factors, stored as the attribute sharing of /t3 (as
    `t3k fit` stores it; a fit started from the file goes on with it); x's factors must be equal within
    every group. Raises FileExistsError when path exists and overwrite is False; ValueError naming sharing
    or the differing factors; OSError when it cannot be written.
    """

def load_sharing(path: str | os.PathLike) -> list[int] | None:
    """
    The sharing labels stored with /t3 of an HDF5 file (the attribute sharing that `t3k fit` and
    t3k.save(..., sharing=...) write), or None when the model has none. Raises FileNotFoundError naming the
    file when there is none; OSError naming the file when /t3 or the attribute is unreadable.
    """

def load(path: str | os.PathLike, dtype: numpy.typing.DTypeLike = 'float64') -> TuckerTensorTrain:
    """
    Reads /t3 of an HDF5 file (docs/file-format.md), e.g. the model.h5 of `t3k fit`. Raises
    FileNotFoundError naming the file when there is none; OSError naming the file and the dataset when it is
    unreadable or of the wrong shape.
    """

def save_problem(path: str | os.PathLike, problem: FittingProblem, overwrite: bool = False, weights: str = '/weights') -> None:
    """
    Writes the problem as the input of a `t3k fit` data problem (docs/file-format.md, float64): /probes with
    the order attribute K (modes whose probe vectors and directions are equal, such as a derivative tensor's
    input modes probed at one x, stored once with the attribute repeat), the target jets /jets, the weights
    (when the problem has them) as the dataset `weights` (problem.data.weights of the configuration), and the
    root attributes d, W and K. The validation set is not written (save it as a file of its own:
    validation.file). Atomic, as save; raises FileExistsError when path exists and overwrite is False.
    """

def load_problem(path: str | os.PathLike, weights: str | None = None, dtype: numpy.typing.DTypeLike = 'float64') -> FittingProblem:
    """
    Reads the input of a `t3k fit` data problem: /probes, /jets and, when `weights` names one, that dataset
    of per-probe weights (each finite and >= 0), checked as `t3k fit` checks problem.data. Raises
    FileNotFoundError naming the file when there is none; OSError naming the file and the dataset when one
    is missing, unreadable or of the wrong shape.
    """

has_hdf5: bool = True

def num_threads() -> int:
    """Threads of the host execution space Kokkos was initialized with."""
