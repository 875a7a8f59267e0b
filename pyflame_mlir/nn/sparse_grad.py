"""Sparse embedding gradients (``nn.Embedding(sparse=True)``, ``F.embedding``'s
``sparse``, ``scale_grad_by_freq``) with torch's numbers, on dense storage.

torch's sparse gradient of an embedding is ``(indices, rows of the output
gradient)``: its ``to_dense()`` is the dense gradient, and that is the
``.grad`` pf keeps. What a dense ``.grad`` cannot tell is which rows the
sparse one holds (a row looked up whose gradient is zero is in it; a row not
looked up is not), and ``SparseAdam`` updates exactly those rows (its moments
of the others do not decay). So the lookup's backward records the indices it
scattered (``padding_idx`` left out, as torch's ``embedding_sparse_backward``)
on the weight: the rows of its ``.grad`` since the ``.grad`` was last None or
zeroed (``zero_grad``). ``rows_of(p)`` reads them; None means the gradient
is dense (torch's: a parameter used elsewhere too, or not through a sparse
lookup). A ``.grad`` reset by hand (``p.grad.zero_()``) is not seen: use
``zero_grad``.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from .. import indexing as _indexing
from .. import ops as _ops
from ..autograd import Function
from ..core import Tensor
from ..creation import zeros

__all__ = ["clear_rows", "lookup", "rows_of"]


class _Rows:
    """The rows of one weight's sparse gradient: ``committed`` (in ``.grad``)
    and ``pending`` (recorded by the backward pass running now, committed when
    it accumulates into ``.grad``; ``reset`` when that ``.grad`` was None)."""

    __slots__ = ("committed", "pending", "reset")

    def __init__(self) -> None:
        self.committed: list[Tensor] | None = None  # None: no sparse gradient yet
        self.pending: list[Tensor] = []
        self.reset = False


# id(weight) -> (a weak reference to it, its rows); the entry goes with the weight
# (a Tensor's == is elementwise: no WeakKeyDictionary)
_ROWS: dict[int, tuple[weakref.ref, _Rows]] = {}


def _get(p: Tensor) -> _Rows | None:
    entry = _ROWS.get(id(p))
    return entry[1] if entry is not None and entry[0]() is p else None


def _commit(p: Tensor) -> None:
    st = _get(p)
    if st is None or not st.pending:  # a dense contribution only: torch's .grad is dense
        if st is not None:
            st.committed = None
        return
    if st.reset or st.committed is None:
        st.committed = []
    st.committed.extend(st.pending)
    st.pending = []


def _record(weight: Tensor, idx: Tensor) -> None:
    st = _get(weight)
    if st is None:
        st = _Rows()
        key = id(weight)
        _ROWS[key] = (weakref.ref(weight, lambda _, k=key: _ROWS.pop(k, None)), st)
        weight.register_post_accumulate_grad_hook(_commit)
    if not st.pending:  # the first lookup of this backward pass
        st.reset = weight.grad is None
    st.pending.append(idx)


def clear_rows(p: Tensor) -> None:
    """``zero_grad``: torch's zeroed sparse gradient holds no rows."""
    st = _get(p)
    if st is not None and st.committed is not None:
        st.committed = []


def rows_of(p: Tensor) -> np.ndarray | None:
    """The sorted distinct rows of ``p``'s sparse gradient (torch's
    ``grad.coalesce().indices()``), or None where its gradient is dense."""
    st = _get(p)
    if st is None or st.committed is None:
        return None
    parts = [np.asarray(_indexing._host(t), dtype=np.int64).reshape(-1) for t in st.committed]
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)


class _Lookup(Function):
    """``weight[idx]`` whose backward scatters the output gradient into the
    weight's rows (torch's ``embedding_backward``): scaled by 1/count of each
    index with ``scale_grad_by_freq``, the ``padding_idx`` rows left out, and
    with ``sparse`` the rows recorded for ``rows_of``."""

    @staticmethod
    def forward(ctx: Any, weight: Tensor, idx: Tensor, padding_idx: int | None,
                scale_grad_by_freq: bool, sparse: bool) -> Tensor:
        ctx.weight, ctx.idx, ctx.padding_idx = weight, idx, padding_idx
        ctx.scale, ctx.sparse = scale_grad_by_freq, sparse
        return _indexing.embedding(idx, weight)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        weight, n, dim = ctx.weight, ctx.weight.shape[0], ctx.weight.shape[1]
        flat = _ops.reshape(ctx.idx, (-1,))
        g = _ops.reshape(grad, (-1, dim))
        if ctx.padding_idx is not None:
            keep = np.asarray(_indexing._host(flat)) != ctx.padding_idx
            flat_kept = _indexing.index_select(flat, 0, Tensor._leaf(np.flatnonzero(keep)))
            g = _indexing.index_select(g, 0, Tensor._leaf(np.flatnonzero(keep)))
            flat = flat_kept
        if ctx.scale:
            counts = np.bincount(np.asarray(_indexing._host(flat), dtype=np.int64),
                                 minlength=n).astype(weight.dtype.np)
            per = Tensor._leaf(1.0 / counts[np.asarray(_indexing._host(flat), dtype=np.int64)])
            g = g * _ops.reshape(per, (-1, 1))
        if ctx.sparse and weight.is_leaf:
            _record(weight, flat)
        dense = _indexing.index_add(zeros(n, dim, dtype=weight.dtype), 0, flat, g)
        return dense, None, None, None, None


def lookup(idx: Tensor, weight: Tensor, padding_idx: int | None, scale_grad_by_freq: bool,
           sparse: bool) -> Tensor:
    """``F.embedding``'s lookup with ``scale_grad_by_freq`` or ``sparse``."""
    return _Lookup.apply(weight, idx, padding_idx, scale_grad_by_freq, sparse)
