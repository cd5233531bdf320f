"""T3K: Tucker tensor trains, their measurements (entries, applies, probes) and jets, the Jacobian J and its
transpose, and fits to them, on NumPy arrays.

The functions and classes are those of the C++ library (docs/python.md lists them); arrays go in and come out as
NumPy arrays, float64 or float32. Kokkos is initialized on import and finalized at interpreter exit. Unless
OMP_WAIT_POLICY or GOMP_SPINCOUNT is set, the import sets OMP_WAIT_POLICY=passive first, so that idle OpenMP threads
sleep instead of spinning on cores other work needs (docs/performance.md, "Running beside other work"); where
NumPy is not loaded yet and OPENBLAS_THREAD_TIMEOUT is not set, it sets that to 4 for NumPy's OpenBLAS alike.
Where NumPy is not loaded yet, the import loads it while Kokkos' threads start, so that the threads of NumPy's BLAS
start on the same core.
"""

import difflib
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union


def _library_loaded(name: str) -> bool:
    """Whether a shared library whose file name contains `name` is mapped into this process (Linux; False where
    /proc/self/maps cannot be read)."""
    try:
        with open("/proc/self/maps") as maps:
            return name in maps.read()
    except OSError:
        return False


def _apply_default_wait_policy() -> str:
    """Sets OMP_WAIT_POLICY=passive (idle threads sleep at once) for the OpenMP runtime the extension loads, as the
    `t3k` tool does (docs/performance.md, "Running beside other work"). libgomp reads its environment when it is
    loaded, so this must run before the extension is imported. Returns what happened: "set", "environment" (the
    user set OMP_WAIT_POLICY or GOMP_SPINCOUNT: kept) or "already loaded" (another module loaded libgomp first and
    it keeps what it read then; the environment is left alone)."""
    if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        return "environment"
    if _library_loaded("/libgomp.so"):
        return "already loaded"
    os.environ["OMP_WAIT_POLICY"] = "passive"  # as drivers/wait_policy.hpp
    return "set"


def _apply_default_blas_wait() -> str:
    """The same for NumPy's OpenBLAS (the pip wheels' build, on threads of its own): its idle threads spin 2^28
    cycles (about 0.1 s) after they start and after each threaded call before they sleep, unless
    OPENBLAS_THREAD_TIMEOUT (the exponent, 4 to 30) says otherwise; it reads the variable when NumPy loads it. Sets
    4 where NumPy and OpenBLAS are not loaded yet. Returns "set", "environment" (OPENBLAS_THREAD_TIMEOUT or
    GOTO_THREAD_TIMEOUT set: kept) or "already loaded" (the environment is left alone)."""
    if "OPENBLAS_THREAD_TIMEOUT" in os.environ or "GOTO_THREAD_TIMEOUT" in os.environ:
        return "environment"
    if "numpy" in sys.modules or _library_loaded("openblas"):
        return "already loaded"
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = "4"
    return "set"


_wait_policy = _apply_default_wait_policy()
_blas_wait_policy = _apply_default_blas_wait()

from . import _t3k  # noqa: E402 (after the waiting policy: it loads the OpenMP runtime)
from ._t3k import _array_address  # noqa: F401 (testing aid, not API)
from ._t3k import (
    FittingProblem,
    OrthogonalFrame,
    T3Variation,
    TuckerTensorTrain,
    __version__,
    applies,
    apply_derivatives,
    apply_derivatives_transpose,
    device,
    entries,
    entry_derivatives,
    entry_derivatives_transpose,
    estimate_chunk_size,
    has_hdf5,
    inner_product,
    manifold_dimension,
    max_chunk_size_within,
    num_threads,
    orthogonal_frame,
    probe_derivatives,
    probe_derivatives_transpose,
    probes,
    reduction_block_size,
    score,
    t3_from_dense,
    t3_svd,
    tangent_apply_derivatives,
    tangent_entry_derivatives,
    tangent_probe_derivatives,
)

if has_hdf5:
    from ._t3k import load, load_problem, load_sharing, save, save_problem
else:  # pragma: no cover (a build without HDF5)

    def load(path, dtype="float64"):
        """Unavailable: this build of t3k has no HDF5 (T3K_PYTHON_HDF5=OFF)."""
        raise RuntimeError("t3k.load: this build of t3k has no HDF5 (configure with T3K_PYTHON_HDF5=ON)")

    def save(path, x, overwrite=False, sharing=None):
        """Unavailable: this build of t3k has no HDF5 (T3K_PYTHON_HDF5=OFF)."""
        raise RuntimeError("t3k.save: this build of t3k has no HDF5 (configure with T3K_PYTHON_HDF5=ON)")

    def load_sharing(path):
        """Unavailable: this build of t3k has no HDF5 (T3K_PYTHON_HDF5=OFF)."""
        raise RuntimeError("t3k.load_sharing: this build of t3k has no HDF5 (configure with T3K_PYTHON_HDF5=ON)")

    def load_problem(path, weights=None, dtype="float64"):
        """Unavailable: this build of t3k has no HDF5 (T3K_PYTHON_HDF5=OFF)."""
        raise RuntimeError("t3k.load_problem: this build of t3k has no HDF5 (configure with T3K_PYTHON_HDF5=ON)")

    def save_problem(path, problem, overwrite=False, weights="/weights"):
        """Unavailable: this build of t3k has no HDF5 (T3K_PYTHON_HDF5=OFF)."""
        raise RuntimeError("t3k.save_problem: this build of t3k has no HDF5 (configure with T3K_PYTHON_HDF5=ON)")


@dataclass
class FitResult:
    """The outcome of t3k.fit.

    x: the fitted TuckerTensorTrain. history: one dict per iteration (iteration 0 is x0) with the keys iteration,
    loss, relative_residual, gradient_norm, step, elapsed_seconds, chunk_size, minibatch_loss (NaN for the
    full-batch optimizers), validation_relative_residual (NaN without a validation set) and rank_stage (0 without
    a rank continuation). converged: whether the fit stopped at a tolerance or at rounding level (reason 'line
    search stalled at rounding level'), not at max_iterations, on request or at a failure (reason 'line search
    failed' and others). reason: why the fit stopped, as summary.yaml of t3k fit gives it. chunk_size: probes
    per J^T pass (of the last stage). notes: e.g. ranks of x0 clipped to what the fixed-rank manifold holds, rank
    steps. validation_relative_residual: of x on the validation set (NaN without one).
    """

    x: TuckerTensorTrain
    history: List[Dict[str, Any]] = field(default_factory=list)
    converged: bool = False
    reason: str = ""
    chunk_size: int = 0
    notes: List[str] = field(default_factory=list)
    validation_relative_residual: float = float("nan")


def progress_printer(file: Any = None) -> Callable[[Dict[str, Any]], None]:
    """A fit callback that prints one line per iteration, as `t3k fit` does when its output is not a terminal:
    iteration, loss, relative residual, gradient norm, step, elapsed time and chunk size (then the validation
    residual and the rank stage where there are some). file: where to write (default sys.stdout at each call),
    flushed after every line. t3k.fit(..., verbose=True) uses it."""

    def show(record: Dict[str, Any]) -> None:
        line = (
            f"iteration {record['iteration']} loss {record['loss']:.6e} "
            f"relative_residual {record['relative_residual']:.6e} gradient_norm {record['gradient_norm']:.6e} "
            f"step {record['step']:.6e} elapsed {record['elapsed_seconds']:.3f} s chunk {record['chunk_size']}"
        )
        validation = record.get("validation_relative_residual", float("nan"))
        if validation == validation:  # not NaN
            line += f" validation_relative_residual {validation:.6e}"
        if record.get("rank_stage", 0) > 0:
            line += f" rank_stage {record['rank_stage']}"
        out = sys.stdout if file is None else file
        print(line, file=out, flush=True)

    return show


def _check_option_names(optimizer: str, options: Dict[str, Any]) -> None:
    """Refuses a misspelt option with the nearest known name, as `t3k fit` does for a configuration key. An unknown
    optimizer (or one that is no str) is left to the extension, which names the optimizers."""
    keys = _t3k._optimizer_keys()
    if not isinstance(optimizer, str) or optimizer not in keys or not optimizer:
        return
    known = [k[0] for k in keys[""]] + [k[0] for k in keys[optimizer]]
    known += ["validation_patience", "max_tucker_ranks", "max_tt_ranks"] + [k[0] for k in keys["continuation"]]
    for key in options:
        if key in known:
            continue
        close = difflib.get_close_matches(key, known, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise ValueError(f"t3k.fit: {optimizer} has no option '{key}'{hint}; its options are {', '.join(known)}")


def fit(
    problem: FittingProblem,
    x0: TuckerTensorTrain,
    optimizer: str = "newton_cg",
    *,
    chunk_size: Union[int, str, None] = "auto",
    callback: Optional[Callable[[Dict[str, Any]], Any]] = None,
    verbose: bool = False,
    sharing: Optional[Sequence[int]] = None,
    **options: Any,
) -> FitResult:
    # The docstring is assembled below from the optimizers' key tables.
    _check_option_names(optimizer, options)
    if verbose:
        printer = progress_printer()
        if callback is None:
            callback = printer
        else:
            user_callback = callback

            def callback(record: Dict[str, Any]) -> Any:
                printer(record)
                return user_callback(record)

    return FitResult(**_t3k._fit(problem, x0, optimizer, chunk_size, callback, sharing, options))


def _fit_doc() -> str:
    keys = _t3k._optimizer_keys()
    continuation = keys.pop("continuation")

    def table(entries):
        return "\n".join(
            f"        {key} ({kind}, default {default!r}): {allowed}" for key, kind, default, allowed in entries
        )

    sections = [
        f"    {name}:\n{table(entries)}" for name, entries in keys.items() if name  # the common keys come first
    ]
    return (
        "Fits a T3 of x0's ranks to problem with one of the optimizers of `t3k fit` (docs/math.md, docs/config.md).\n\n"
        "problem: a FittingProblem of any kind (probes, entries, applies). x0: the starting TuckerTensorTrain (same\n"
        "    dtype and mode sizes).\n"
        f"optimizer: one of {', '.join(repr(n) for n in keys if n)}.\n"
        "chunk_size: samples per J^T pass: 'auto' (estimated once from x0's shapes), None (all at once) or an\n"
        "    integer; as chunk_size of the configuration file.\n"
        "callback: called after every iteration (iteration 0 is x0) with that iteration's record (a dict as in\n"
        "    FitResult.history). Returning True, or raising StopIteration, stops the fit there: fit returns that\n"
        "    point with reason 'stopped by the callback at iteration N'. Other exceptions propagate.\n"
        "verbose: print one line per iteration, as `t3k fit` does (t3k.progress_printer(), called before callback).\n"
        "sharing: shared Tucker factors (docs/math.md, \"Shared Tucker factors\"): one integer label per mode of x0;\n"
        "    modes with equal labels (of equal sizes and Tucker ranks) use one factor throughout the fit, so the\n"
        "    result's factors of a group are equal. An x0 whose factors of a group differ starts from its best\n"
        "    shared model (noted in FitResult.notes). Not with a rank continuation. None (default): every mode has\n"
        "    its own factor.\n"
        "Ctrl-C (KeyboardInterrupt) stops the fit between iterations: the kernels of the current iteration finish,\n"
        "    then KeyboardInterrupt is raised out of fit. The GIL is released while the kernels run.\n\n"
        "**options: the optimizer keys of the configuration file, with the same names, defaults and ranges.\n"
        "    Every optimizer takes:\n"
        f"{table(keys[''])}\n"
        "    Each optimizer takes its own as well:\n" + "\n".join(sections) + "\n\n"
        "Held-out validation (the validation section of the configuration file): give the problem a validation\n"
        "    set (problem.hold_out(fraction=...) or FittingProblem(..., validation=...)); its relative residual is\n"
        "    recorded whenever the loss is evaluated.\n"
        "        validation_patience (int, default 0): stop after this many evaluations without a new best\n"
        "            validation residual and return the best model on validation; 0: off.\n"
        "Rank continuation (model ranks {start, max} of the configuration file): the fit starts at x0's ranks and\n"
        "    grows them stage by stage, keeping the ranks the data supports (docs/math.md, rank continuation).\n"
        "        max_tucker_ranks (int or d ints, default None: off): the largest Tucker ranks.\n"
        "        max_tt_ranks (int or d+1 ints, default None: off): the largest TT ranks (an int: every interior\n"
        "            bond). Giving one of the two keeps the other at x0's ranks.\n"
        f"{table(continuation)}\n\n"
        "Returns a FitResult (x, history, converged, reason, chunk_size, notes). Raises ValueError naming the\n"
        "option and the values it allows, or the array and both shapes, on bad input."
    )


fit.__doc__ = _fit_doc()


def from_t3toolbox(x: Any, dtype: Any = None) -> TuckerTensorTrain:
    """A TuckerTensorTrain from the original Python toolbox's representation (T3Toolbox).

    x: the pair (tucker_cores, tt_cores) of sequences of arrays, Tucker cores (n_i, N_i) and TT cores
    (r_i, n_i, r_{i+1}) -- the toolbox's layout is T3K's -- or an object holding that pair as its `data`
    attribute (the toolbox's TuckerTensorTrain class). Arrays may be NumPy, JAX or anything numpy.asarray
    reads; stacked T3s (leading stack axes) are not supported. The cores are held without a copy where the layout
    allows. dtype: as TuckerTensorTrain's.
    """
    pair = getattr(x, "data", x)
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise ValueError(
            "t3k.from_t3toolbox: x must be a pair (tucker_cores, tt_cores) or hold one as x.data, got "
            + type(x).__name__
        )
    tucker_cores, tt_cores = pair
    return TuckerTensorTrain(list(tucker_cores), list(tt_cores), dtype)


def to_t3toolbox(x: TuckerTensorTrain) -> Tuple[Tuple[Any, ...], Tuple[Any, ...]]:
    """X in the original Python toolbox's representation: the pair (tucker_cores, tt_cores) of tuples of NumPy
    arrays, Tucker cores (n_i, N_i) and TT cores (r_i, n_i, r_{i+1}). The arrays are copies (writable)."""
    return tuple(u.copy() for u in x.tucker_cores), tuple(g.copy() for g in x.tt_cores)


def _toolbox_tuple(x: Any, size: int, where: str, what: str, names: Sequence[str]) -> Tuple[Any, ...]:
    cores = getattr(x, "data", x)
    if not isinstance(cores, (tuple, list)) or len(cores) != size:
        raise ValueError(f"t3k.{where}: {what}, or an object holding it as .data, got {type(x).__name__}")
    argument = where.split("_from_")[0] if where.startswith("frame") else "variation"
    argument = "base" if argument == "frame" else argument
    for k, (part, name) in enumerate(zip(cores, names)):
        # A str is a sequence too, but never one of arrays.
        if isinstance(part, (str, bytes)) or not hasattr(part, "__len__") or not hasattr(part, "__getitem__"):
            raise ValueError(
                f"t3k.{where}: {argument}[{k}] ({name}) must be a sequence of arrays, one per mode, got "
                f"{type(part).__name__}"
            )
    return tuple(cores)


def _renamed(error: ValueError, where: str, argument: str, names: Sequence[str], into: str) -> ValueError:
    """The constructor's ValueError with its own argument names replaced by the toolbox's: `argument[k]`."""
    text = str(error).replace(f"t3k.{into}:", f"t3k.{where}:")
    for k, name in enumerate(names):
        text = text.replace(f" {name}[", f" {argument}[{k}] ({name})[").replace(f" {name} ", f" {argument}[{k}] ({name}) ")
    return ValueError(text)


def frame_from_t3toolbox(base: Any, dtype: Any = None) -> OrthogonalFrame:
    """An OrthogonalFrame from the toolbox's base of the base-variation representation: the 4-tuple
    (up_tucker_cores, left_tt_cores, right_tt_cores, outer_tt_cores) of sequences of arrays, (nU_i, N_i),
    (rL_i, nU_i, rL_{i+1}), (rR_i, nU_i, rR_{i+1}) and (rL_i, nO_i, rR_{i+1}) -- T3K's frame layout -- or an object
    holding it as `data`. Held without a copy where the layout allows; dtype as OrthogonalFrame's."""
    names = ("up_tucker", "left_tt", "right_tt", "outer_tt")
    up, left, right, outer = _toolbox_tuple(
        base, 4, "frame_from_t3toolbox", "base must be the 4-tuple (up_tucker_cores, left_tt_cores, right_tt_cores, "
        "outer_tt_cores)", names
    )
    try:
        return OrthogonalFrame(list(up), list(left), list(right), list(outer), dtype=dtype)
    except ValueError as error:
        raise _renamed(error, "frame_from_t3toolbox", "base", names, "OrthogonalFrame") from None


def variation_from_t3toolbox(variation: Any, dtype: Any = None) -> T3Variation:
    """A T3Variation from the toolbox's variation: the pair (tucker_variations, tt_variations), V_i (nO_i, N_i) and
    H_i (rL_i, nU_i, rR_{i+1}), or stacked with one leading axis (n, ...) as the toolbox stacks them; or an object
    holding the pair as `data`. T3K's variations carry that stack axis always: unstacked cores get one of length 1
    (a view, no copy)."""
    names = ("tucker", "tt")
    tucker, tt = _toolbox_tuple(
        variation, 2, "variation_from_t3toolbox", "variation must be the pair (tucker_variations, tt_variations)",
        names,
    )
    if len(tucker) > 0 and len(getattr(tucker[0], "shape", ())) == 2:
        import numpy as np

        tucker = [np.asarray(v)[None] for v in tucker]
        tt = [np.asarray(h)[None] for h in tt]
    try:
        return T3Variation(list(tucker), list(tt), dtype=dtype)
    except ValueError as error:
        raise _renamed(error, "variation_from_t3toolbox", "variation", names, "T3Variation") from None


def frame_to_t3toolbox(frame: OrthogonalFrame) -> Tuple[Tuple[Any, ...], ...]:
    """The frame as the toolbox's base (up_tucker_cores, left_tt_cores, right_tt_cores, outer_tt_cores): tuples of
    NumPy arrays (copies). The centre factors, which the toolbox's base does not hold, are left out."""
    return tuple(tuple(a.copy() for a in cores) for cores in (frame.up_tucker, frame.left_tt, frame.right_tt,
                                                              frame.outer_tt))


def variation_to_t3toolbox(v: T3Variation) -> Tuple[Tuple[Any, ...], Tuple[Any, ...]]:
    """The variation as the toolbox's pair (tucker_variations, tt_variations) of tuples of NumPy arrays (copies):
    without T3K's stack axis when the stack holds one variation, else with it as the toolbox's leading stack axis."""
    single = len(v.tucker) > 0 and v.tucker[0].shape[0] == 1
    pick = (lambda a: a[0].copy()) if single else (lambda a: a.copy())
    return tuple(pick(a) for a in v.tucker), tuple(pick(a) for a in v.tt)


__all__ = [
    "FitResult",
    "FittingProblem",
    "OrthogonalFrame",
    "T3Variation",
    "TuckerTensorTrain",
    "__version__",
    "applies",
    "apply_derivatives",
    "apply_derivatives_transpose",
    "device",
    "entries",
    "entry_derivatives",
    "entry_derivatives_transpose",
    "estimate_chunk_size",
    "fit",
    "frame_from_t3toolbox",
    "frame_to_t3toolbox",
    "from_t3toolbox",
    "has_hdf5",
    "inner_product",
    "load",
    "load_problem",
    "load_sharing",
    "manifold_dimension",
    "max_chunk_size_within",
    "num_threads",
    "orthogonal_frame",
    "probe_derivatives",
    "probe_derivatives_transpose",
    "probes",
    "progress_printer",
    "reduction_block_size",
    "save",
    "save_problem",
    "score",
    "t3_from_dense",
    "t3_svd",
    "tangent_apply_derivatives",
    "tangent_entry_derivatives",
    "tangent_probe_derivatives",
    "to_t3toolbox",
    "variation_from_t3toolbox",
    "variation_to_t3toolbox",
]
