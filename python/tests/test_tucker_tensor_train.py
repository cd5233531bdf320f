import numpy as np
import pytest
from conftest import SHAPES, random_t3
from dense_reference import jacobian_rank, t3_dense

import t3k


@pytest.mark.parametrize("shape,tucker_ranks,tt_ranks", SHAPES)
def test_to_dense_equals_the_product_of_core_matrices(rng, shape, tucker_ranks, tt_ranks):
    x, tucker, tt = random_t3(rng, shape, tucker_ranks, tt_ranks)

    dense = x.to_dense()

    assert dense.shape == shape
    np.testing.assert_allclose(dense, t3_dense(tucker, tt), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape,tucker_ranks,tt_ranks", SHAPES)
def test_norm_equals_the_dense_frobenius_norm(rng, shape, tucker_ranks, tt_ranks):
    x, tucker, tt = random_t3(rng, shape, tucker_ranks, tt_ranks)

    assert x.norm() == pytest.approx(np.linalg.norm(t3_dense(tucker, tt)), rel=1e-12)


def test_properties_describe_the_cores(rng):
    x, tucker, tt = random_t3(rng, (3, 4, 5), (2, 3, 2), (1, 2, 3, 1))

    assert x.shape == (3, 4, 5)
    assert x.tucker_ranks == [2, 3, 2]
    assert x.tt_ranks == [1, 2, 3, 1]
    assert x.n_modes == 3
    assert x.dtype == np.float64
    for held, given in zip(x.tucker_cores + x.tt_cores, tucker + tt):
        np.testing.assert_array_equal(held, given)
        assert not held.flags.writeable
    assert "shape=[3, 4, 5]" in repr(x)


def test_contiguous_cores_are_held_without_a_copy(rng):
    _, tucker, tt = random_t3(rng, (3, 4), (2, 3), (1, 2, 1))
    fortran = np.asfortranarray(tucker[1])

    x = t3k.TuckerTensorTrain([tucker[0], fortran], tt)

    assert np.shares_memory(x.tucker_cores[0], tucker[0])
    assert np.shares_memory(x.tt_cores[1], tt[1])
    assert not np.shares_memory(x.tucker_cores[1], fortran)  # converted once to C order
    np.testing.assert_array_equal(x.tucker_cores[1], fortran)


def test_float32_cores_make_a_float32_t3(rng):
    x, tucker, tt = random_t3(rng, (3, 4, 5), (2, 3, 2), (1, 2, 3, 1), dtype=np.float32)

    assert x.dtype == np.float32
    assert x.to_dense().dtype == np.float32
    reference = t3_dense([u.astype(np.float64) for u in tucker], [g.astype(np.float64) for g in tt])
    # float32 rounding of a few dozen products of O(1) terms: 1e-5 relative to the tensor's scale.
    np.testing.assert_allclose(x.to_dense(), reference, atol=1e-5 * np.abs(reference).max())


def test_random_is_reproducible_and_has_the_requested_shapes():
    a = t3k.TuckerTensorTrain.random([4, 5, 6], [2, 3, 2], [1, 2, 2, 1], seed=7)
    b = t3k.TuckerTensorTrain.random([4, 5, 6], [2, 3, 2], [1, 2, 2, 1], seed=7)
    c = t3k.TuckerTensorTrain.random([4, 5, 6], [2, 3, 2], [1, 2, 2, 1], seed=8)
    f = t3k.TuckerTensorTrain.random([4, 5, 6], [2, 3, 2], [1, 2, 2, 1], seed=7, dtype=np.float32)

    assert a.shape == (4, 5, 6) and a.tucker_ranks == [2, 3, 2] and a.tt_ranks == [1, 2, 2, 1]
    np.testing.assert_array_equal(a.to_dense(), b.to_dense())
    assert not np.array_equal(a.to_dense(), c.to_dense())
    assert f.dtype == np.float32
    np.testing.assert_allclose(a.to_dense(), t3_dense(a.tucker_cores, a.tt_cores), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "shape, tucker_ranks, tt_ranks",
    SHAPES
    + [
        ((3, 4, 3), (4, 3, 2), (1, 2, 4, 1)),  # n_0 > N_0 and r_2 > n_2 r_3: counted at the ranks X can have
        ((3, 4, 3), (2, 2, 2), (2, 2, 3, 3)),  # boundary ranks 2 and 3
        ((5,), (3,), (2, 4)),  # d = 1: every vector
    ],
)
def test_manifold_dimension_is_the_rank_of_the_jacobian(rng, shape, tucker_ranks, tt_ranks):
    x, tucker, tt = random_t3(rng, shape, tucker_ranks, tt_ranks)
    dim = t3k.manifold_dimension(shape, tucker_ranks, tt_ranks)
    assert dim == jacobian_rank(tucker, tt)
    assert x.manifold_dimension == dim


def test_manifold_dimension_of_a_matrix_and_bad_lists():
    assert t3k.manifold_dimension([4, 5], [3, 3], [1, 3, 1]) == 3 * (4 + 5 - 3)
    with pytest.raises(ValueError, match="tt_ranks has 2 entries, expected d \\+ 1 = 3"):
        t3k.manifold_dimension([4, 5], [3, 3], [1, 1])
