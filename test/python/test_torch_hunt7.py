"""Session 16's torch hunt (round 7): whole programs users paste, compared with
torch 2.13; each test here failed before its fix."""
import numpy as np
import torch

import pyflame_mlir as pf


def _desc(x):
    """A structural description: container types, tensor shapes/dtypes/values."""
    if isinstance(x, list | tuple):
        return (type(x).__name__, [_desc(v) for v in x])
    if isinstance(x, dict):
        return {k: _desc(v) for k, v in x.items()}
    if isinstance(x, torch.Tensor | pf.Tensor):
        return ("T", tuple(x.shape), str(x.dtype).split(".")[-1], np.asarray(x.numpy()).tolist())
    return (type(x).__name__, x)


def test_default_collate_types_as_torch():
    # Python floats collate to float64 (float32 before: a silent dtype change),
    # a batch of tuples to a list, strings left as zip gives them (a tuple)
    cases = [[1.5, 2.5], [(1, "a"), (2, "b")], [(np.float32(1.0), 2.0, True)] * 3,
             [{"w": 0.5, "n": "x", "m": [1, 2]}, {"w": 1.0, "n": "y", "m": [3, 4]}]]
    for batch in cases:
        assert _desc(pf.utils.data.default_collate(batch)) == \
            _desc(torch.utils.data.default_collate(batch)), batch


def test_dataloader_batches_as_torch():
    class DS:
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return np.arange(2, dtype=np.float32) + i, i, float(i) / 2

    ds = DS()
    for kw in ({"batch_size": 2}, {"batch_size": None}):
        t = [_desc(b) for b in torch.utils.data.DataLoader(ds, **kw)]
        p = [_desc(b) for b in pf.utils.data.DataLoader(ds, **kw)]
        assert p == t, kw
    # TensorDataset batches are lists in torch (default_collate of tuples)
    x = np.arange(6, dtype=np.float32)
    t = [_desc(b) for b in torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.tensor(x), torch.arange(6)), batch_size=4)]
    p = [_desc(b) for b in pf.utils.data.DataLoader(
        pf.utils.data.TensorDataset(pf.tensor(x), pf.arange(6)), batch_size=4)]
    assert p == t
