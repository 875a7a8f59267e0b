"""pf.utils.data's ChainDataset, StackDataset and DistributedSampler against
torch.utils.data's (the same samples, and for DistributedSampler the same
indices, shuffled ones included, epoch by epoch)."""
import numpy as np
import pytest
import torch
import torch.utils.data as tud

import pyflame_mlir as pf
from pyflame_mlir.utils import data


class _Range(data.IterableDataset):
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __iter__(self):
        return iter(range(self.lo, self.hi))

    def __len__(self):
        return self.hi - self.lo


class _TRange(tud.IterableDataset):
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __iter__(self):
        return iter(range(self.lo, self.hi))

    def __len__(self):
        return self.hi - self.lo


def test_chain_dataset_as_torch():
    ours = data.ChainDataset([_Range(0, 3), _Range(10, 12)])
    theirs = tud.ChainDataset([_TRange(0, 3), _TRange(10, 12)])
    assert list(ours) == list(theirs) and len(ours) == len(theirs) == 5
    got = [b.numpy().tolist() for b in data.DataLoader(ours, batch_size=2)]
    assert got == [b.tolist() for b in tud.DataLoader(theirs, batch_size=2)]
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        list(data.ChainDataset([data.TensorDataset(pf.ones(2))]))


def test_stack_dataset_as_torch():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = np.arange(4)
    a, b = data.TensorDataset(pf.tensor(x)), data.TensorDataset(pf.tensor(y))
    ta, tb = tud.TensorDataset(torch.tensor(x)), tud.TensorDataset(torch.tensor(y))
    ours, theirs = data.StackDataset(a, b), tud.StackDataset(ta, tb)
    assert len(ours) == len(theirs) == 4
    (oa,), (ob,) = ours[2]
    (tha,), (thb,) = theirs[2]
    np.testing.assert_array_equal(oa.numpy(), tha.numpy())
    assert ob.item() == thb.item()
    named = data.StackDataset(img=a, label=b)
    assert set(named[1]) == {"img", "label"}
    batch = next(iter(data.DataLoader(named, batch_size=3)))
    tbatch = next(iter(tud.DataLoader(tud.StackDataset(img=ta, label=tb), batch_size=3)))
    np.testing.assert_array_equal(batch["img"][0].numpy(), tbatch["img"][0].numpy())
    np.testing.assert_array_equal(batch["label"][0].numpy(), tbatch["label"][0].numpy())
    for bad in (lambda m: m.StackDataset(a, img=b) if m is data else m.StackDataset(ta, img=tb),
                lambda m: m.StackDataset(),
                lambda m: m.StackDataset(a, data.TensorDataset(pf.ones(3))) if m is data
                else m.StackDataset(ta, tud.TensorDataset(torch.ones(3)))):
        with pytest.raises(ValueError) as ours_err:
            bad(data)
        with pytest.raises(ValueError) as torch_err:
            bad(tud)
        assert str(ours_err.value) == str(torch_err.value)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 100, 1001])
@pytest.mark.parametrize("seed", [0, 5, 2**33 + 7])
def test_torch_randperm_is_torchs(n, seed):
    g = torch.Generator()
    g.manual_seed(seed)
    np.testing.assert_array_equal(data.torch_randperm(n, seed),
                                  torch.randperm(n, generator=g).numpy())


@pytest.mark.parametrize("n", [10, 11, 3])
@pytest.mark.parametrize("replicas", [1, 3, 4])
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_indices_are_torchs(n, replicas, shuffle, drop_last):
    ds = list(range(n))
    for rank in range(replicas):
        ours = data.DistributedSampler(ds, num_replicas=replicas, rank=rank, shuffle=shuffle,
                                       seed=3, drop_last=drop_last)
        theirs = tud.DistributedSampler(ds, num_replicas=replicas, rank=rank, shuffle=shuffle,
                                        seed=3, drop_last=drop_last)
        for epoch in range(3):
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs)
            assert len(ours) == len(theirs)


def test_distributed_sampler_checks_and_loader():
    with pytest.raises(ValueError, match="Invalid rank 2"):
        data.DistributedSampler(list(range(4)), num_replicas=2, rank=2)
    x = np.arange(10, dtype=np.float32)
    ours = data.DataLoader(data.TensorDataset(pf.tensor(x)), batch_size=2,
                           sampler=data.DistributedSampler(range(10), 2, 1, seed=1))
    theirs = tud.DataLoader(tud.TensorDataset(torch.tensor(x)), batch_size=2,
                            sampler=tud.DistributedSampler(range(10), 2, 1, seed=1))
    assert [b[0].numpy().tolist() for b in ours] == [b[0].tolist() for b in theirs]
