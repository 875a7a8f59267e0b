"""pf.utils.data against torch.utils.data: the same batches in the same order
for the deterministic cases; shuffling covers each sample once per epoch."""
import numpy as np
import pytest
import torch
import torch.utils.data as tud

import pyflame_mlir as pf
from pyflame_mlir.utils import data


def _arrays():
    rng = np.random.default_rng(0)
    return rng.standard_normal((10, 3)).astype(np.float32), np.arange(10)


@pytest.mark.parametrize("batch_size, drop_last", [(3, False), (3, True), (5, False),
                                                   (1, False), (None, False)])
def test_tensor_dataset_batches_as_torch(batch_size, drop_last):
    x, y = _arrays()
    ours = data.DataLoader(data.TensorDataset(pf.tensor(x), pf.tensor(y)),
                           batch_size=batch_size, drop_last=drop_last)
    theirs = tud.DataLoader(tud.TensorDataset(torch.tensor(x), torch.tensor(y)),
                            batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    got, want = list(ours), list(theirs)
    assert len(got) == len(want)
    for (a, b), (ta, tb) in zip(got, want):
        np.testing.assert_array_equal(a.numpy(), ta.numpy())
        np.testing.assert_array_equal(b.numpy(), tb.numpy())


class Pairs(data.Dataset):
    def __len__(self):
        return 7

    def __getitem__(self, i):
        return {"x": pf.full((2,), float(i)), "n": i, "arr": np.ones(3) * i}


def test_map_dataset_default_collate():
    batches = list(data.DataLoader(Pairs(), batch_size=4))
    assert [b["x"].shape for b in batches] == [(4, 2), (3, 2)]
    assert batches[1]["n"].tolist() == [4, 5, 6]
    assert batches[0]["arr"].shape == (4, 3)


def test_shuffle_is_a_permutation_and_seeded():
    x, y = _arrays()
    ds = data.TensorDataset(pf.tensor(x), pf.tensor(y))
    pf.manual_seed(3)
    first = np.concatenate([b[1].numpy() for b in data.DataLoader(ds, 4, shuffle=True)])
    assert sorted(first.tolist()) == list(range(10)) and first.tolist() != list(range(10))
    pf.manual_seed(3)
    again = np.concatenate([b[1].numpy() for b in data.DataLoader(ds, 4, shuffle=True)])
    np.testing.assert_array_equal(first, again)


def test_random_split_subset_concat():
    x, y = _arrays()
    ds = data.TensorDataset(pf.tensor(x), pf.tensor(y))
    a, b = data.random_split(ds, [0.7, 0.3])
    assert (len(a), len(b)) == (7, 3)
    seen = sorted(int(a[i][1]) for i in range(len(a))) + sorted(int(b[i][1]) for i in range(3))
    assert sorted(seen) == list(range(10))
    both = a + b
    assert len(both) == 10 and int(both[8][1]) == int(b[1][1])
    with pytest.raises(ValueError, match="Sum of input lengths"):
        data.random_split(ds, [3, 3])
    with pytest.raises(ValueError, match="Size mismatch"):
        data.TensorDataset(pf.ones(3), pf.ones(4))


def test_training_loop_compiles_once():
    x, y = _arrays()
    loader = data.DataLoader(data.TensorDataset(pf.tensor(x), pf.tensor(y % 3)), batch_size=5)
    model = pf.nn.Linear(3, 3)
    opt = pf.optim.SGD(model.parameters(), lr=0.1)
    misses = []
    for _ in range(3):
        for xb, yb in loader:
            loss = pf.nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            before = pf.cache_stats()["misses"]
            loss.item()
            misses.append(pf.cache_stats()["misses"] - before)
    assert sum(misses[2:]) == 0, misses  # after warm-up every step is a cache hit


def test_samplers_iterable_datasets_and_collation_as_torch():
    def run(L):
        D = L.utils.data
        ds = D.TensorDataset(L.tensor(np.arange(20.0).reshape(10, 2)), L.tensor(np.arange(10)))
        out = [len(list(D.BatchSampler(D.SequentialSampler(ds), 3, drop_last=True))),
               list(D.BatchSampler(range(7), 3, drop_last=False)),
               [b[1].tolist() for b in D.DataLoader(ds, batch_sampler=D.BatchSampler(
                   D.SequentialSampler(ds), 4, False))],
               sorted(D.SubsetRandomSampler([2, 4, 6])), len(D.RandomSampler(ds)),
               sorted(D.RandomSampler(ds)), len(list(D.RandomSampler(ds, True, 25))),
               list(D.WeightedRandomSampler([0.0, 1.0, 0.0], 3)),
               sorted(D.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False)),
               D.get_worker_info()]

        class Stream(D.IterableDataset):
            def __iter__(self):
                return iter(range(7))

        out.append([b.tolist() for b in D.DataLoader(Stream(), batch_size=3)])
        out.append([b.tolist() for b in D.DataLoader(Stream(), batch_size=3, drop_last=True)])
        out.append([int(b) for b in D.DataLoader(Stream(), batch_size=None)])
        out.append(sorted(i for b in D.DataLoader(ds, sampler=D.RandomSampler(ds), batch_size=4)
                          for i in b[1].tolist()))
        return out

    assert run(pf) == run(torch)
    with pytest.raises(ValueError, match="IterableDataset"):
        pf.utils.data.DataLoader(pf.utils.data.IterableDataset(), shuffle=True)
