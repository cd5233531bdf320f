"""A GPU build of the module (t3k.device "cuda" or "rocm"): GPU arrays in and out through DLPack, checked against
NumPy references on the host. JAX on that GPU is the DLPack producer and consumer. Skipped in host builds, which
the other files test; scripts/run_gpu.sh runs this file on a GPU machine."""

import numpy as np
import pytest
from conftest import jax_transpose_reference
from dense_reference import t3_dense

import t3k

pytestmark = pytest.mark.skipif(t3k.device == "cpu", reason="a host build: its arrays are NumPy arrays")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

DLPACK_DEVICE = {"cuda": 2, "rocm": 10}


def on_gpu(a):
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        pytest.skip("JAX sees no GPU")
    return jax.device_put(jnp.asarray(a), gpus[0])


def to_host(a):
    """A GPU result of t3k, read through DLPack by JAX and copied to NumPy."""
    assert a.__dlpack_device__()[0] == DLPACK_DEVICE[t3k.device]
    return np.asarray(jnp.from_dlpack(a))


def test_results_are_gpu_arrays_equal_to_the_host_reference(rng):
    shape = (4, 5, 3)
    tucker = [rng.standard_normal((2, n)) for n in shape]
    tt = [rng.standard_normal(s) for s in [(1, 2, 3), (3, 2, 2), (2, 2, 1)]]
    x = t3k.TuckerTensorTrain(tucker, tt)  # host arrays: uploaded once
    np.testing.assert_allclose(to_host(x.to_dense()), t3_dense(tucker, tt), rtol=1e-12, atol=1e-12)
    for held, given in zip(x.tucker_cores, tucker):
        np.testing.assert_array_equal(to_host(held), given)


def test_gpu_arrays_go_in_without_a_copy(rng):
    shape = (4, 5, 3)
    tucker = [rng.standard_normal((2, n)) for n in shape]
    tt = [rng.standard_normal(s) for s in [(1, 2, 3), (3, 2, 2), (2, 2, 1)]]
    gpu_tucker, gpu_tt = [on_gpu(u) for u in tucker], [on_gpu(g) for g in tt]
    x = t3k.TuckerTensorTrain(gpu_tucker, gpu_tt)
    for a in gpu_tucker + gpu_tt:
        assert t3k._array_address(a, "float64", a.ndim) == a.unsafe_buffer_pointer()  # used in place
    ww = [rng.standard_normal((7, n)) for n in shape]
    pp = [rng.standard_normal((7, n)) for n in shape]
    from_gpu = t3k.probe_derivatives(x, [on_gpu(w) for w in ww], [on_gpu(p) for p in pp], 2)
    from_host = t3k.probe_derivatives(t3k.TuckerTensorTrain(tucker, tt), ww, pp, 2)
    for a, b in zip(from_gpu, from_host):
        np.testing.assert_array_equal(to_host(a), to_host(b))
    with pytest.raises(ValueError, match="another dtype"):
        t3k.TuckerTensorTrain([u.astype(jnp.float32) for u in gpu_tucker], gpu_tt, dtype="float64")


def test_the_transpose_on_the_gpu_matches_jax_linear_transpose(rng):
    reference = jax_transpose_reference()
    shape, order, n_probes = (5, 4, 6), 2, 300
    x = t3k.TuckerTensorTrain.random(shape, (3, 2, 3), (1, 2, 3, 1), seed=7)
    frame = t3k.orthogonal_frame(x)
    ww = [rng.standard_normal((n_probes, n)) for n in shape]
    pp = [rng.standard_normal((n_probes, n)) for n in shape]
    residuals = [on_gpu(rng.standard_normal((n_probes, order + 1, n))) for n in shape]
    ours = t3k.probe_derivatives_transpose(frame, [on_gpu(w) for w in ww], [on_gpu(p) for p in pp], residuals)
    cores = tuple([jnp.from_dlpack(a) for a in cores] for cores in (frame.up_tucker, frame.left_tt, frame.right_tt,
                                                                     frame.outer_tt))
    theirs = reference.make_jt(len(shape), order + 1, 0)(cores, ww, pp, residuals)
    ours_blocks = ([to_host(v)[0] for v in ours.tucker], [to_host(h)[0] for h in ours.tt])
    theirs_blocks = ([np.asarray(v) for v in theirs[0]], [np.asarray(h) for h in theirs[1]])
    assert reference.max_relative_difference(ours_blocks, theirs_blocks) < 1e-12
