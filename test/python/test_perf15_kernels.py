"""Speed paths of the reference kernels added by the fifth GPT/CNN pass
(issue 14, docs/PERFORMANCE.md "fifth pass"): each must give torch's values.

- ``gather`` / ``scatter_add`` with an index that names whole rows (constant
  across every axis but ``dim``: an embedding's or index_select's broadcast
  index) take rows and sum runs of sorted rows instead of one coordinate at
  a time (``dialects/indexing.py: _whole_rows``).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from pyflame_mlir.dialects.opdef import OPS

import pyflame_mlir as pf


@pytest.mark.parametrize("dim,x_shape,index_shape", [
    (0, (7, 5), (20, 5)), (0, (7, 5), (20, 3)), (1, (4, 6, 3), (3, 9, 2)),
    (2, (2, 3, 5), (2, 2, 8)), (0, (3, 4), (0, 4)), (0, (5, 1, 2), (6, 1, 2))])
@pytest.mark.parametrize("broadcast", [True, False])
def test_whole_row_gather_and_scatter_add_match_torch(dim, x_shape, index_shape,
                                                      broadcast) -> None:
    rng = np.random.default_rng(sum(index_shape) + dim)
    x = rng.standard_normal(x_shape).astype(np.float32)
    positions = rng.integers(0, x_shape[dim], index_shape[dim])
    positions[:2] = x_shape[dim] - 1  # a repeated row
    view = [1] * len(x_shape)
    view[dim] = index_shape[dim]
    index = np.broadcast_to(positions.reshape(view), index_shape)
    if not broadcast:  # the same positions materialized: found by comparing
        index = np.ascontiguousarray(index)
    src = rng.standard_normal(index_shape).astype(np.float32)
    tx, ti, ts = torch.tensor(x), torch.tensor(np.ascontiguousarray(index)), torch.tensor(src)
    got = OPS["scatter_add"].kernel(x, index, src, dim=dim)
    np.testing.assert_allclose(got, torch.scatter_add(tx, dim, ti, ts).numpy(),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(OPS["gather"].kernel(x, index, dim=dim),
                                  torch.gather(tx, dim, ti).numpy())


def test_rows_that_differ_take_the_general_path() -> None:
    x = np.zeros((3, 2), np.float32)
    index = np.array([[0, 1], [0, 2], [2, 2]])  # row 1 names two different rows
    src = np.arange(6, dtype=np.float32).reshape(3, 2)
    want = torch.scatter_add(torch.tensor(x), 0, torch.tensor(index), torch.tensor(src))
    np.testing.assert_array_equal(OPS["scatter_add"].kernel(x, index, src, dim=0), want.numpy())
    np.testing.assert_array_equal(OPS["gather"].kernel(src, index, dim=0),
                                  torch.gather(torch.tensor(src), 0, torch.tensor(index)).numpy())


def test_whole_row_index_out_of_range_raises() -> None:
    index = np.broadcast_to(np.array([[0], [3]]), (2, 2))
    with pytest.raises(IndexError, match="scatter_add.*index 3 is out of bounds"):
        OPS["scatter_add"].kernel(np.zeros((3, 2), np.float32), index,
                                  np.ones((2, 2), np.float32), dim=0)


def test_embedding_gradient_matches_torch(mode) -> None:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((11, 4)).astype(np.float32)
    ids = rng.integers(0, 11, (3, 5))
    ids[0, :3] = 7  # repeats
    pw = pf.tensor(w, requires_grad=True)
    (pf.nn.functional.embedding(pf.tensor(ids), pw) ** 2).sum().backward()
    tw = torch.tensor(w, requires_grad=True)
    (torch.nn.functional.embedding(torch.tensor(ids), tw) ** 2).sum().backward()
    np.testing.assert_allclose(pw.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
