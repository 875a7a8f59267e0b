"""Speed paths of the reference kernels added by the fifth GPT/CNN pass
(issue 14, docs/PERFORMANCE.md "fifth pass"): each must give torch's values.

- ``gather`` / ``scatter_add`` with an index that names whole rows (constant
  across every axis but ``dim``: an embedding's or index_select's broadcast
  index) take rows and sum runs of sorted rows instead of one coordinate at
  a time (``dialects/indexing.py: _whole_rows``); with an index that picks
  one element along ``dim`` everywhere (max pooling's choice of offset),
  one flat take / read-add-write (``_one_pick``);
- ``argmax`` / ``argmin`` along a short axis of a large array run over
  whole-array slices (``dialects/reduction.py: _arg_over_short_axis``);
- a ``reshape`` copy that merges a short last axis of large stride copies
  one slice of it at a time (``dialects/shape_ops.py: _reshape``).
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


@pytest.mark.parametrize("dim,shape", [(0, (4, 8, 9, 70)), (1, (8, 3, 9, 70)),
                                       (3, (8, 9, 70, 5)), (1, (2, 3, 4, 5))])
def test_one_pick_gather_and_scatter_add_match_torch(dim, shape) -> None:
    rng = np.random.default_rng(dim)
    x = rng.standard_normal(shape).astype(np.float32)
    index_shape = shape[:dim] + (1,) + shape[dim + 1:]
    index = rng.integers(0, shape[dim], index_shape)
    src = rng.standard_normal(index_shape).astype(np.float32)
    tx, ti, ts = torch.tensor(x), torch.tensor(index), torch.tensor(src)
    np.testing.assert_array_equal(OPS["gather"].kernel(x, index, dim=dim),
                                  torch.gather(tx, dim, ti).numpy())
    np.testing.assert_array_equal(OPS["scatter_add"].kernel(x, index, src, dim=dim),
                                  torch.scatter_add(tx, dim, ti, ts).numpy())
    # a broadcast (non-contiguous) input reads the same values
    xb = np.broadcast_to(x[:1], shape) if dim else np.broadcast_to(x[..., :1], shape)
    np.testing.assert_array_equal(OPS["gather"].kernel(xb, index, dim=dim),
                                  torch.gather(torch.tensor(np.array(xb)), dim, ti).numpy())
    xt = np.asfortranarray(x)  # another memory order: the same sums
    np.testing.assert_array_equal(OPS["scatter_add"].kernel(xt, index, src, dim=dim),
                                  torch.scatter_add(tx, dim, ti, ts).numpy())
    zeros = np.broadcast_to(np.float32(0.5), shape)  # one value broadcast: filled
    np.testing.assert_array_equal(OPS["scatter_add"].kernel(zeros, index, src, dim=dim),
                                  torch.scatter_add(torch.full(shape, 0.5), dim, ti, ts).numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8])
@pytest.mark.parametrize("dim", [0, 2, 4])
@pytest.mark.parametrize("keepdim", [False, True])
def test_short_axis_argmax_argmin_match_numpy(dtype, dim, keepdim) -> None:
    rng = np.random.default_rng(dim)
    x = (rng.standard_normal((4, 6, 3, 5, 8)) * 2).astype(dtype)
    x = np.concatenate([x, x], axis=dim)  # ties: the first one wins
    if dtype in (np.float32, np.float64):
        for value in (np.nan, np.inf, -np.inf, -0.0):
            x.flat[rng.integers(0, x.size, 60)] = value
    for name, ref in (("argmax", np.argmax), ("argmin", np.argmin)):
        got = OPS[name].kernel(x, dim=dim, keepdim=keepdim)
        want = ref(x, axis=dim, keepdims=keepdim)
        assert got.dtype == np.int64 and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("perm,shape", [
    ((2, 3, 4, 0, 5, 1), (8, 3, 20, 20)),  # max pooling's backward
    ((2, 3, 4, 0, 5, 1), (480, 10, 2)),  # the last axis kept whole
    ((2, 3, 4, 0, 5, 1), (-1,)), ((0, 1, 2, 3, 4, 5), (8, 3, 20, 20)),
    ((2, 3, 5, 0, 4, 1), (8, 3, 20, 20))])
def test_reshape_copies_match_torch(perm, shape) -> None:
    x = np.random.default_rng(0).standard_normal((2, 2, 8, 3, 10, 10)).astype(np.float32)
    view = x.transpose(perm)
    target = (view.size,) if shape == (-1,) else shape
    got = OPS["reshape"].kernel(view, shape=target)
    np.testing.assert_array_equal(got, torch.tensor(x).permute(perm).reshape(target).numpy())
