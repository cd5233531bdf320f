"""Arrays from other libraries (DLPack producers, the original toolbox's representation)."""

import numpy as np
import pytest
from conftest import jax_transpose_reference
from dense_reference import t3_dense

import t3k


class DLPackOnly:
    """Exposes an array through DLPack alone (as JAX and PyTorch arrays do), without the buffer protocol."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def cores(rng, dtype):
    tucker = [rng.standard_normal((2, 3)).astype(dtype), rng.standard_normal((3, 4)).astype(dtype)]
    tt = [rng.standard_normal((1, 2, 2)).astype(dtype), rng.standard_normal((2, 3, 1)).astype(dtype)]
    return tucker, tt


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dlpack_arrays_are_held_without_a_copy(rng, dtype):
    if not hasattr(np.ndarray, "__dlpack__"):
        pytest.skip("NumPy without DLPack export")
    tucker, tt = cores(rng, dtype)
    x = t3k.TuckerTensorTrain([DLPackOnly(u) for u in tucker], [DLPackOnly(g) for g in tt], dtype=dtype)
    for held, given in zip(x.tucker_cores + x.tt_cores, tucker + tt):
        assert held.ctypes.data == given.ctypes.data  # the View's memory is the array's
    np.testing.assert_allclose(x.to_dense(), t3_dense(tucker, tt), rtol=1e-5 if dtype == np.float32 else 1e-13)


def test_jax_arrays_go_in(rng):
    jnp = pytest.importorskip("jax.numpy")
    tucker, tt = cores(rng, np.float32)
    x = t3k.TuckerTensorTrain([jnp.asarray(u) for u in tucker], [jnp.asarray(g) for g in tt], dtype="float32")
    np.testing.assert_allclose(x.to_dense(), t3_dense(tucker, tt), rtol=1e-5)


def test_torch_arrays_go_in_without_a_copy(rng):
    torch = pytest.importorskip("torch")
    tucker, tt = cores(rng, np.float64)
    tensors = [torch.from_numpy(a) for a in tucker + tt]
    x = t3k.TuckerTensorTrain(tensors[:2], tensors[2:])
    for held, given in zip(x.tucker_cores + x.tt_cores, tensors):
        assert held.ctypes.data == given.data_ptr()


def test_the_toolbox_representation_goes_both_ways(rng):
    tucker, tt = cores(rng, np.float64)
    x = t3k.from_t3toolbox((tucker, tt))
    assert x.tucker_cores[0].ctypes.data == tucker[0].ctypes.data  # no copy

    class ToolboxT3:  # the toolbox's class holds the pair as `data`
        data = (tuple(tucker), tuple(tt))

    y = t3k.from_t3toolbox(ToolboxT3())
    # NumPy's reference sums in its own order (its BLAS kernel depends on the CPU): equal to rounding.
    np.testing.assert_allclose(y.to_dense(), t3_dense(tucker, tt), rtol=1e-13, atol=1e-15)

    back_tucker, back_tt = t3k.to_t3toolbox(x)
    assert isinstance(back_tucker, tuple) and len(back_tt) == 2
    for a, b in zip(back_tucker + back_tt, tucker + tt):
        np.testing.assert_array_equal(a, b)
        assert a.flags.writeable and a.ctypes.data != b.ctypes.data
    with pytest.raises(ValueError, match="t3k.from_t3toolbox: x must be a pair"):
        t3k.from_t3toolbox(tucker[0])


def test_inner_product_and_t3_svd_match_the_dense_tensor(rng):
    x = t3k.TuckerTensorTrain.random((4, 5, 3), (3, 3, 2), (1, 3, 2, 1), seed=1)
    y = t3k.TuckerTensorTrain.random((4, 5, 3), (2, 2, 2), (1, 2, 2, 1), seed=2)
    dx, dy = x.to_dense(), y.to_dense()
    assert t3k.inner_product(x, y) == pytest.approx(float((dx * dy).sum()), rel=1e-12)

    full, tucker_sv, tt_sv = t3k.t3_svd(x)
    np.testing.assert_allclose(full.to_dense(), dx, atol=1e-12 * np.abs(dx).max())
    # The TT singular values at bond 1 are those of the dense tensor's unfolding (4) x (5 * 3).
    dense_sv = np.linalg.svd(dx.reshape(4, 15), compute_uv=False)
    np.testing.assert_allclose(np.sort(tt_sv[0])[::-1][:3], dense_sv[:3], rtol=1e-10)
    truncated, _, _ = t3k.t3_svd(x, max_tt_ranks=[1, 1, 1, 1])
    assert truncated.tt_ranks == [1, 1, 1, 1]
    with pytest.raises(ValueError, match="t3k.t3_svd"):
        t3k.t3_svd(x, max_tucker_ranks=[1, 1])


def test_jax_linear_transpose_gives_the_same_transpose(rng):
    # An independent J^T: perf/jax_transpose.py writes the forward J in JAX and lets jax.linear_transpose derive
    # its transpose; T3K's J^T must agree with it to rounding.
    pytest.importorskip("jax")
    reference = jax_transpose_reference()

    shape, order, n_probes = (5, 4, 6), 2, 30
    x = t3k.TuckerTensorTrain.random(shape, (3, 2, 3), (1, 2, 3, 1), seed=7)
    frame = t3k.orthogonal_frame(x)
    ww = [rng.standard_normal((n_probes, n)) for n in shape]
    pp = [rng.standard_normal((n_probes, n)) for n in shape]
    residuals = [rng.standard_normal((n_probes, order + 1, n)) for n in shape]
    ours = t3k.probe_derivatives_transpose(frame, ww, pp, residuals)
    jt = reference.make_jt(len(shape), order + 1, 0)
    theirs = jt((frame.up_tucker, frame.left_tt, frame.right_tt, frame.outer_tt), ww, pp, residuals)
    ours_blocks = ([v[0] for v in ours.tucker], [h[0] for h in ours.tt])
    theirs_blocks = ([np.asarray(v) for v in theirs[0]], [np.asarray(h) for h in theirs[1]])
    assert reference.max_relative_difference(ours_blocks, theirs_blocks) < 1e-12


def test_the_toolbox_base_and_variation_layouts_are_taken_as_documented(rng):
    # The shapes of the toolbox's documented base-variation example: a base of up Tucker cores (nU_i, N_i), left,
    # right and outer TT cores, and a variation fitting its holes.
    base = (
        [rng.standard_normal(s) for s in [(10, 14), (11, 15), (12, 16)]],
        [rng.standard_normal(s) for s in [(1, 10, 2), (2, 11, 3), (3, 12, 1)]],
        [rng.standard_normal(s) for s in [(1, 10, 4), (4, 11, 5), (5, 12, 1)]],
        [rng.standard_normal(s) for s in [(1, 9, 4), (2, 8, 5), (3, 7, 1)]],
    )
    variation = (
        [rng.standard_normal(s) for s in [(9, 14), (8, 15), (7, 16)]],
        [rng.standard_normal(s) for s in [(1, 10, 4), (2, 11, 5), (3, 12, 1)]],
    )
    frame = t3k.frame_from_t3toolbox(base)
    assert frame.up_tucker[1].ctypes.data == base[0][1].ctypes.data  # held, not copied
    v = t3k.variation_from_t3toolbox(variation)
    assert [h.shape for h in v.tt] == [(1, 1, 10, 4), (1, 2, 11, 5), (1, 3, 12, 1)]  # T3K's stack axis
    assert v.tucker[2].ctypes.data == variation[0][2].ctypes.data
    # The frame and the variation fit each other as T3K uses them: J v runs and has the jets' shapes.
    ww = [rng.standard_normal((5, n)) for n in (14, 15, 16)]
    jets = t3k.tangent_probe_derivatives(frame, v, ww, ww, 1)
    assert [j.shape for j in jets] == [(1, 5, 2, 14), (1, 5, 2, 15), (1, 5, 2, 16)]

    back = t3k.frame_to_t3toolbox(frame)
    for ours, theirs in zip(back, base):
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(a, b)
    tucker, tt = t3k.variation_to_t3toolbox(v)  # one variation: the toolbox's unstacked cores
    for a, b in zip(tucker + tt, variation[0] + variation[1]):
        np.testing.assert_array_equal(a, b)
    stacked = t3k.variation_from_t3toolbox(([np.stack([a, 2 * a]) for a in variation[0]],
                                            [np.stack([h, 2 * h]) for h in variation[1]]))
    tucker2, _ = t3k.variation_to_t3toolbox(stacked)
    np.testing.assert_array_equal(tucker2[0][1], 2 * variation[0][0])
    with pytest.raises(ValueError, match="t3k.frame_from_t3toolbox: base must be the 4-tuple"):
        t3k.frame_from_t3toolbox(variation)
