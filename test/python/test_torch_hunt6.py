"""Session 15's torch hunt, round 6: what round 5 left (``.shape`` a Size,
optimizer steps as tensors, torch's RNG names, legacy constructors, jit) and
the programs users paste (BERT/GPT-2 blocks, LoRA, checkpointing), vs torch."""
import pickle

import torch

import pyflame_mlir as pf


def test_shape_is_size_as_torch():
    x = pf.randn(2, 3, 4)
    tx = torch.randn(2, 3, 4)
    for s, ts in ((x.shape, tx.shape), ((x * 2).sum(0).shape, (tx * 2).sum(0).shape),
                  (pf.tensor([1.0, 2.0]).shape, torch.tensor([1.0, 2.0]).shape),
                  (x.max(0)[0].shape, tx.max(0)[0].shape)):
        assert type(s) is pf.Size and s == tuple(ts) and hash(s) == hash(tuple(ts))
    s, ts = x.shape, tx.shape
    for f in (lambda a: a[1:], lambda a: a[:0], lambda a: a + (5,), lambda a: (5,) + a,
              lambda a: a * 2):
        assert type(f(s)) is pf.Size and tuple(f(s)) == tuple(f(ts)), f
    assert type(s[0]) is int and s.numel() == ts.numel() == 24
    assert repr(s) == "pyflame.Size([2, 3, 4])" and repr(s[1:]) == "pyflame.Size([3, 4])"
    assert type(pickle.loads(pickle.dumps(s))) is pf.Size
    assert x.size() == s and type(x.size()) is pf.Size
    assert x.view(s[0], -1).shape == (2, 12) and x.reshape(s).shape == s
