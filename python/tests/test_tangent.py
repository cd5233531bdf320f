import numpy as np
import pytest
from conftest import SHAPES, random_probe_set, random_t3
from dense_reference import dense_jets, t3_dense, tangent_dense

import t3k


def random_variation(rng, frame, n_stack, dtype=np.float64):
    zeros = t3k.T3Variation.zeros(frame, n_stack)
    tucker = [rng.standard_normal(a.shape).astype(dtype) for a in zeros.tucker]
    tt = [rng.standard_normal(a.shape).astype(dtype) for a in zeros.tt]
    return t3k.T3Variation(tucker, tt), tucker, tt


def assert_orthonormal_columns(m):
    np.testing.assert_allclose(m.T @ m, np.eye(m.shape[1]), atol=1e-12)


@pytest.mark.parametrize("shape,tucker_ranks,tt_ranks", SHAPES)
def test_frame_is_orthogonal_and_represents_the_t3_at_every_centre(rng, shape, tucker_ranks, tt_ranks):
    x, tucker, tt = random_t3(rng, shape, tucker_ranks, tt_ranks)
    dense = t3_dense(tucker, tt)

    f = t3k.orthogonal_frame(x)

    d = len(shape)
    up, left, right, outer, centre = f.up_tucker, f.left_tt, f.right_tt, f.outer_tt, f.centre_tucker
    assert f.shape == shape and f.n_modes == d
    for i in range(d):
        assert_orthonormal_columns(up[i].T)
        if i + 1 < d:
            assert_orthonormal_columns(left[i].reshape(-1, left[i].shape[2]))
        if i >= 1:
            assert_orthonormal_columns(right[i].reshape(right[i].shape[0], -1).T)
        assert_orthonormal_columns(outer[i].transpose(0, 2, 1).reshape(-1, outer[i].shape[1]))
        centre_core = np.einsum("aob,ou->aub", outer[i], centre[i])
        represented = t3_dense(up, left[:i] + [centre_core] + right[i + 1 :])
        np.testing.assert_allclose(represented, dense, rtol=1e-11, atol=1e-11 * np.abs(dense).max())


@pytest.mark.parametrize("shape,tucker_ranks,tt_ranks", SHAPES)
@pytest.mark.parametrize("order", [0, 2])
def test_j_of_a_variation_is_the_jets_of_its_dense_tangent_tensor(rng, shape, tucker_ranks, tt_ranks, order):
    x, _, _ = random_t3(rng, shape, tucker_ranks, tt_ranks)
    f = t3k.orthogonal_frame(x)
    v, v_tucker, v_tt = random_variation(rng, f, 2)
    ww, pp = random_probe_set(rng, shape, 4)

    jv = t3k.tangent_probe_derivatives(f, v, ww, pp, order)

    for t in range(2):
        tangent = tangent_dense(
            f.up_tucker, f.left_tt, f.right_tt, f.outer_tt, [a[t] for a in v_tucker], [a[t] for a in v_tt]
        )
        reference = dense_jets(tangent, ww, pp, order)
        for i in range(len(shape)):
            assert jv[i].shape == (2, 4, order + 1, shape[i])
            np.testing.assert_allclose(jv[i][t], reference[i], rtol=1e-10, atol=1e-10 * np.abs(reference[i]).max())


def inner(a_list, b_list):
    return sum(float(np.vdot(a, b)) for a, b in zip(a_list, b_list))


@pytest.mark.parametrize("shape,tucker_ranks,tt_ranks", SHAPES)
@pytest.mark.parametrize("order", [0, 1, 3])
def test_transpose_is_the_adjoint_of_j(rng, shape, tucker_ranks, tt_ranks, order):
    x, _, _ = random_t3(rng, shape, tucker_ranks, tt_ranks)
    f = t3k.orthogonal_frame(x)
    v, v_tucker, v_tt = random_variation(rng, f, 1)
    ww, pp = random_probe_set(rng, shape, 7)
    residuals = [rng.standard_normal((7, order + 1, n)) for n in shape]

    jv = t3k.tangent_probe_derivatives(f, v, ww, pp, order)
    g = t3k.probe_derivatives_transpose(f, ww, pp, residuals)

    lhs = inner([a[0] for a in jv], residuals)
    rhs = inner(v_tucker + v_tt, g.tucker + g.tt)
    assert g.n_stack == 1
    assert rhs == pytest.approx(lhs, rel=1e-10, abs=1e-10)


def test_transpose_per_probe_sums_to_the_summed_gradient_and_chunks_agree_bitwise(rng):
    shape = (4, 3, 5)
    x, _, _ = random_t3(rng, shape, (2, 3, 2), (1, 2, 2, 1))
    f = t3k.orthogonal_frame(x)
    ww, pp = random_probe_set(rng, shape, 150)
    residuals = [rng.standard_normal((150, 3, n)) for n in shape]

    summed = t3k.probe_derivatives_transpose(f, ww, pp, residuals)
    per_probe = t3k.probe_derivatives_transpose(f, ww, pp, residuals, sum_over_probes=False)

    assert per_probe.n_stack == 150
    for a, b in zip(summed.tucker + summed.tt, per_probe.tucker + per_probe.tt):
        np.testing.assert_allclose(a[0], b.sum(axis=0), rtol=1e-11, atol=1e-11 * np.abs(a).max())
    for chunk in ["auto", 64, 100]:
        chunked = t3k.probe_derivatives_transpose(f, ww, pp, residuals, chunk_size=chunk)
        for a, b in zip(summed.tucker + summed.tt, chunked.tucker + chunked.tt):
            np.testing.assert_array_equal(a, b)


def test_transpose_of_a_residual_stack_equals_one_call_per_residual(rng):
    shape = (3, 4, 5)
    x, _, _ = random_t3(rng, shape, (2, 3, 2), (1, 2, 3, 1))
    f = t3k.orthogonal_frame(x)
    ww, pp = random_probe_set(rng, shape, 6)
    stack = [rng.standard_normal((2, 6, 2, n)) for n in shape]

    g = t3k.probe_derivatives_transpose(f, ww, pp, stack)

    assert g.n_stack == 2
    for t in range(2):
        single = t3k.probe_derivatives_transpose(f, ww, pp, [r[t] for r in stack])
        for a, b in zip(g.tucker + g.tt, single.tucker + single.tt):
            np.testing.assert_allclose(a[t], b[0], rtol=1e-13, atol=1e-13)


def test_a_frame_rebuilt_from_its_arrays_gives_the_same_transpose(rng):
    shape = (3, 4, 5)
    x, _, _ = random_t3(rng, shape, (2, 3, 2), (1, 2, 3, 1))
    f = t3k.orthogonal_frame(x)
    rebuilt = t3k.OrthogonalFrame(f.up_tucker, f.left_tt, f.right_tt, f.outer_tt)
    ww, pp = random_probe_set(rng, shape, 5)
    residuals = [rng.standard_normal((5, 2, n)) for n in shape]

    a = t3k.probe_derivatives_transpose(f, ww, pp, residuals)
    b = t3k.probe_derivatives_transpose(rebuilt, ww, pp, residuals)

    assert rebuilt.centre_tucker is None
    for p, q in zip(a.tucker + a.tt, b.tucker + b.tt):
        np.testing.assert_array_equal(p, q)


def test_float32_transpose_is_the_adjoint_of_float32_j(rng):
    shape = (3, 4, 5)
    x, _, _ = random_t3(rng, shape, (2, 3, 2), (1, 2, 3, 1), dtype=np.float32)
    f = t3k.orthogonal_frame(x)
    v, v_tucker, v_tt = random_variation(rng, f, 1, dtype=np.float32)
    ww, pp = random_probe_set(rng, shape, 6, dtype=np.float32)
    residuals = [rng.standard_normal((6, 2, n)).astype(np.float32) for n in shape]

    jv = t3k.tangent_probe_derivatives(f, v, ww, pp, 1)
    g = t3k.probe_derivatives_transpose(f, ww, pp, residuals)

    assert f.dtype == np.float32 and g.dtype == np.float32 and jv[0].dtype == np.float32
    lhs = inner([a[0] for a in jv], residuals)
    rhs = inner(v_tucker + v_tt, g.tucker + g.tt)
    # float32: about 1e-6 relative per sum of a few hundred terms; 1e-4 of the terms' scale.
    scale = np.sqrt(inner([a[0] for a in jv], [a[0] for a in jv]) * inner(residuals, residuals))
    assert abs(lhs - rhs) <= 1e-4 * scale
