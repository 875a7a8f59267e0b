"""``pf.utils.data``'s samplers (session 11) against torch's semantics:
orders, counts, replacement, weights, batching, and DataLoader with
``sampler=``/``batch_sampler=``; draws reproducible from a ``pf.Generator``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

D = pf.utils.data


def test_sequential_and_random():
    data = list(range(10))
    assert list(D.SequentialSampler(data)) == list(torch.utils.data.SequentialSampler(data))
    perm = list(D.RandomSampler(data, generator=pf.Generator().manual_seed(0)))
    assert sorted(perm) == data and perm == list(
        D.RandomSampler(data, generator=pf.Generator().manual_seed(0)))
    more = list(D.RandomSampler(data, num_samples=25))
    assert len(more) == 25 and sorted(more[:10]) == data and sorted(more[10:20]) == data
    rep = list(D.RandomSampler(data, replacement=True, num_samples=200))
    assert len(rep) == 200 and set(rep) <= set(data) and len(set(rep)) > 5
    assert len(D.RandomSampler(data, num_samples=7)) == 7
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        D.RandomSampler(data, num_samples=0)


def test_subset_weighted_and_batch():
    sub = list(D.SubsetRandomSampler([3, 5, 7, 9]))
    assert sorted(sub) == [3, 5, 7, 9]
    pf.manual_seed(1)
    w = [0.0, 1.0, 3.0, 0.0]
    draws = np.array(list(D.WeightedRandomSampler(w, 4000)))
    assert set(draws.tolist()) <= {1, 2} and abs((draws == 2).mean() - 0.75) < 0.03
    once = list(D.WeightedRandomSampler(pf.tensor([1.0, 1.0, 1.0]), 3, replacement=False))
    assert sorted(once) == [0, 1, 2]
    with pytest.raises(RuntimeError, match="without replacement"):
        D.WeightedRandomSampler(w, 3, replacement=False)
    for drop in (False, True):
        ours = list(D.BatchSampler(D.SequentialSampler(range(10)), 3, drop))
        theirs = list(torch.utils.data.BatchSampler(
            torch.utils.data.SequentialSampler(range(10)), 3, drop))
        assert ours == theirs
        assert len(D.BatchSampler(range(10), 3, drop)) == len(theirs)
    assert D.get_worker_info() is None


def test_data_loader_with_samplers():
    ds = D.TensorDataset(pf.arange(10.0), pf.arange(10) * 2)
    loader = D.DataLoader(ds, batch_size=4, sampler=D.SubsetRandomSampler([1, 4, 6, 8, 9]))
    seen = [int(v) for x, _ in loader for v in x.numpy()]
    assert sorted(seen) == [1, 4, 6, 8, 9]
    batches = D.DataLoader(ds, batch_sampler=D.BatchSampler(D.SequentialSampler(ds), 3, True))
    assert [x.numpy().tolist() for x, _ in batches] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
