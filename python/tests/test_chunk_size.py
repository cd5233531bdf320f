import pytest

import t3k

SHAPE, TUCKER, TT = [64, 64, 64, 64], [8, 8, 8, 8], [1, 8, 8, 8, 1]


def test_estimate_is_a_block_multiple_or_all_probes():
    block = t3k.reduction_block_size
    for n_probes in [1, 10, 1000, 100000]:
        c = t3k.estimate_chunk_size(SHAPE, TUCKER, TT, 2, n_probes)
        assert 1 <= c <= n_probes
        assert c == n_probes or c % block == 0
    assert t3k.estimate_chunk_size(SHAPE, TUCKER, TT, 2, 100000, block_rows=2048) % 2048 == 0


def test_sharding_divides_the_rows_of_the_estimate():
    whole = t3k.estimate_chunk_size(SHAPE, TUCKER, TT, 2, 10, n_shards=1)
    assert whole == 10
    assert t3k.estimate_chunk_size(SHAPE, TUCKER, TT, 2, 10, n_shards=2) == 5


def test_max_chunk_within_grows_with_the_target_and_covers_all_probes_when_it_fits():
    sizes = [t3k.max_chunk_size_within(SHAPE, TUCKER, TT, 2, 100000, target_bytes=t) for t in (2**31, 2**32, 2**40)]
    assert sizes == sorted(sizes)
    assert sizes[-1] == 100000
    assert all(c == 100000 or c % t3k.reduction_block_size == 0 for c in sizes)
    assert t3k.max_chunk_size_within(SHAPE, TUCKER, TT, 2, 100000, 2**31, dtype="float32") >= sizes[0]


def test_a_target_too_small_for_one_block_states_the_bytes_needed():
    with pytest.raises(ValueError, match=r"t3k\.max_chunk_size_within: even the smallest chunk .* bytes"):
        t3k.max_chunk_size_within(SHAPE, TUCKER, TT, 2, 100000, target_bytes=1000)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="n_shards"):
        t3k.estimate_chunk_size(SHAPE, TUCKER, TT, 2, 100, n_shards=0)
    with pytest.raises(ValueError, match="tt_ranks has 4 entries"):
        t3k.estimate_chunk_size(SHAPE, TUCKER, TT[:4], 2, 100)
    with pytest.raises(ValueError, match="n_probes"):
        t3k.estimate_chunk_size(SHAPE, TUCKER, TT, 2, -1)
