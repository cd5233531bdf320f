import numpy as np
import pytest
from conftest import SHAPES, random_probe_set, random_t3
from dense_reference import contract_all_but, dense_jets, t3_dense

import t3k


@pytest.mark.parametrize("shape,tucker_ranks,tt_ranks", SHAPES)
def test_probes_contract_every_other_mode(rng, shape, tucker_ranks, tt_ranks):
    x, tucker, tt = random_t3(rng, shape, tucker_ranks, tt_ranks)
    ww, _ = random_probe_set(rng, shape, 5)
    dense = t3_dense(tucker, tt)

    z = t3k.probes(x, ww)

    for i in range(len(shape)):
        reference = np.array([contract_all_but(dense, [w[s] for w in ww], i) for s in range(5)])
        np.testing.assert_allclose(z[i], reference, rtol=1e-11, atol=1e-11 * np.abs(reference).max())


@pytest.mark.parametrize("shape,tucker_ranks,tt_ranks", SHAPES)
@pytest.mark.parametrize("order", [0, 1, 2, 4])
def test_probe_jets_equal_the_subset_expansion(rng, shape, tucker_ranks, tt_ranks, order):
    x, tucker, tt = random_t3(rng, shape, tucker_ranks, tt_ranks)
    ww, pp = random_probe_set(rng, shape, 4)

    z = t3k.probe_derivatives(x, ww, pp, order)

    reference = dense_jets(t3_dense(tucker, tt), ww, pp, order)
    for i in range(len(shape)):
        assert z[i].shape == (4, order + 1, shape[i])
        # Sums of a few hundred O(1) products: 1e-11 of the largest entry.
        np.testing.assert_allclose(z[i], reference[i], rtol=1e-11, atol=1e-11 * np.abs(reference[i]).max())


def test_probe_jets_in_float32_match_the_float64_reference(rng):
    shape = (3, 4, 5)
    x, tucker, tt = random_t3(rng, shape, (2, 3, 2), (1, 2, 3, 1), dtype=np.float32)
    ww, pp = random_probe_set(rng, shape, 6, dtype=np.float32)

    z = t3k.probe_derivatives(x, ww, pp, 2)

    dense = t3_dense([u.astype(np.float64) for u in tucker], [g.astype(np.float64) for g in tt])
    reference = dense_jets(dense, [w.astype(np.float64) for w in ww], [p.astype(np.float64) for p in pp], 2)
    for i in range(3):
        assert z[i].dtype == np.float32
        # float32 epsilon (1.2e-7) times the terms summed (~100), relative to the largest entry.
        np.testing.assert_allclose(z[i], reference[i], atol=2e-5 * np.abs(reference[i]).max())


def test_probe_jets_do_not_depend_on_the_chunk_size(rng):
    shape = (4, 3, 5)
    x, _, _ = random_t3(rng, shape, (2, 3, 2), (1, 2, 2, 1))
    ww, pp = random_probe_set(rng, shape, 150)

    whole = t3k.probe_derivatives(x, ww, pp, 2, chunk_size=None)
    for chunk in ["auto", 64, 100, 1]:
        chunked = t3k.probe_derivatives(x, ww, pp, 2, chunk_size=chunk)
        for a, b in zip(whole, chunked):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


def test_contiguous_probe_arrays_are_read_in_place(rng):
    w = rng.standard_normal((6, 4))
    readonly = w.copy()
    readonly.setflags(write=False)

    assert t3k._array_address(w, "float64", 2) == w.ctypes.data
    assert t3k._array_address(memoryview(w), "float64", 2) == w.ctypes.data  # buffer protocol
    assert t3k._array_address(readonly, "float64", 2) == readonly.ctypes.data
    assert t3k._array_address(w[:, ::2], "float64", 2) != w.ctypes.data  # strided: converted
    assert t3k._array_address(w, "float32", 2) != w.ctypes.data  # another dtype: converted


def test_strided_and_foreign_inputs_give_the_same_jets(rng):
    shape = (3, 4, 5)
    x, _, _ = random_t3(rng, shape, (2, 3, 2), (1, 2, 3, 1))
    ww, pp = random_probe_set(rng, shape, 5)
    wide = [np.repeat(w, 2, axis=0) for w in ww]  # rows 0, 2, 4, .. are ww's

    direct = t3k.probe_derivatives(x, ww, pp, 1)
    strided = t3k.probe_derivatives(x, [w[::2] for w in wide], [p.tolist() for p in pp], 1)

    for a, b in zip(direct, strided):
        np.testing.assert_array_equal(a, b)
