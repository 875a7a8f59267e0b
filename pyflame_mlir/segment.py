"""``jax.ops``' segment reductions: ``segment_sum``, ``segment_max``,
``segment_min`` and ``segment_prod`` (``pf.ops.segment_sum``, as
``jax.ops.segment_sum``), with JAX's values, dtypes and gradients.

``out[s]`` reduces the rows ``data[i]`` whose ``segment_ids[i] == s``, for
``s`` in ``[0, num_segments)``; an id outside that range is dropped (JAX's
default ``mode``) or clamped into it (``mode="clip"``); an empty segment
holds the reduction's identity (0, 1, -inf/+inf or the integer type's
minimum/maximum, as JAX's). ``indices_are_sorted``, ``unique_indices`` and
``bucket_size`` are hints that change nothing here.

``segment_sum`` is one ``scatter_add``: its ids may be lazy (under ``vmap``,
``grad`` or ``pf.compile`` they are not read). The max, min and product
read the ids on the host (as torch's ``scatter_reduce`` here): the rows of
each segment are gathered into a padded table (rows bucketed by their count
rounded up to a power of two, so padding at most doubles the work) and
reduced by the ``max``/``min``/``prod`` op itself, so NaN propagation and
gradients are that op's: ties share a max's gradient equally, as JAX's
scatter-max derivative does.

Built on ``core.record`` and the op table only: ``ops`` (one layer up)
imports these names for ``pf.ops``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .core import Tensor, record
from .dialects import OPS
from .dialects.dtypes import bool_, int64
from .dialects.reduction import reduce_identity
from .jax_config import config

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]

_MODES = (None, "drop", "fill", "promise_in_bounds", "clip")


def _op(name: str, *inputs: Tensor, **attrs: Any) -> Tensor:
    return record(OPS[name], inputs, attrs)  # type: ignore[return-value]


def _const(value: Any, dt: Any) -> Tensor:
    return Tensor._leaf(np.asarray(value, dtype=dt.np), dt)


def _array(x: Any) -> Tensor:
    """A tensor of ``x``; host data as JAX makes it (float64/int64 are
    float32/int32 without 64-bit mode)."""
    if isinstance(x, Tensor):
        return x
    a = np.asarray(x)
    if not config.jax_enable_x64 and a.dtype in (np.float64, np.int64):
        a = a.astype(np.float32 if a.dtype == np.float64 else np.int32)
    return Tensor._leaf(a)


def _args(what: str, data: Any, segment_ids: Any, num_segments: Any, mode: Any
          ) -> tuple[Tensor, Any, int]:
    x = _array(data)
    if mode not in _MODES:
        raise ValueError(f"{what}: mode must be one of {_MODES[1:]} or None, got {mode!r}")
    ids = segment_ids if isinstance(segment_ids, Tensor) else np.asarray(segment_ids)
    kind = ids.dtype.name if isinstance(ids, Tensor) else ids.dtype.kind
    if kind not in ("int32", "int64", "uint8", "int8", "int16", "i", "u"):
        raise TypeError(f"{what}: segment_ids must be integers, got {ids.dtype}")
    if x.ndim == 0 or tuple(ids.shape) != (x.shape[0],):
        raise ValueError(f"{what}: segment_ids of shape {list(ids.shape)} must be 1-d and "
                         f"as long as data's leading axis (data has shape {list(x.shape)})")
    if num_segments is None:  # JAX's: max(segment_ids) + 1 (the ids are read)
        host = ids.numpy() if isinstance(ids, Tensor) else ids
        num_segments = int(host.max()) + 1 if host.size else 0
    if isinstance(num_segments, Tensor):
        num_segments = num_segments.item()
    s = int(num_segments)
    if s != num_segments or s < 0:
        raise ValueError(f"{what}: num_segments must be a non-negative int, got "
                         f"{num_segments!r}")
    return x, ids, s


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: str | None = None) -> Tensor:
    """``out[s] = sum(data[i] for i with segment_ids[i] == s)`` (JAX's)."""
    del indices_are_sorted, unique_indices, bucket_size  # (hints)
    x, ids, s = _args("segment_sum", data, segment_ids, num_segments, mode)
    n, rest = x.shape[0], tuple(x.shape[1:])
    if isinstance(ids, Tensor):
        k = _op("convert", ids, dtype=int64)
        if mode == "clip":
            k = _op("minimum", _op("maximum", k, _const(0, int64)), _const(max(s - 1, 0), int64))
        else:  # out of range: the extra row s, dropped below
            inside = _op("logical_and", _op("ge", k, _const(0, int64)),
                         _op("lt", k, _const(s, int64)))
            k = _op("where", inside, k, _const(s, int64))
    else:
        k = ids.astype(np.int64)
        k = np.clip(k, 0, max(s - 1, 0)) if mode == "clip" else \
            np.where((k >= 0) & (k < s), k, s)
        k = Tensor._leaf(k)
    if mode == "clip" and s == 0:
        k = _const(np.full(n, s), int64)  # (nothing to clamp into: all dropped)
    index = _op("broadcast_to", _op("reshape", k, shape=(n,) + (1,) * len(rest)),
                shape=tuple(x.shape))
    zeros = _op("broadcast_to", _const(0, x.dtype), shape=(s + 1,) + rest)
    out = _op("scatter_add", zeros, index, x, dim=0)
    return _op("slice", out, start=(0,) * x.ndim, limit=(s,) + rest, stride=(1,) * x.ndim)


def _segment_reduce(what: str, reduce: str, data: Any, segment_ids: Any, num_segments: Any,
                    mode: Any) -> Tensor:
    x, ids, s = _args(what, data, segment_ids, num_segments, mode)
    if x.dtype is bool_:
        raise NotImplementedError(f"{what} of bool data is not supported (cast to int32)")
    n, rest = x.shape[0], tuple(x.shape[1:])
    f = math.prod(rest)
    k = (ids.numpy() if isinstance(ids, Tensor) else ids).astype(np.int64)
    rows = np.arange(n)
    if mode == "clip" and s:
        k = np.clip(k, 0, s - 1)
    else:
        keep = (k >= 0) & (k < s)
        k, rows = k[keep], rows[keep]
    order = np.argsort(k, kind="stable")
    counts = np.bincount(k, minlength=s)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    ident = _const(np.full((1, f), reduce_identity(reduce, x.dtype)), x.dtype)
    table_src = _op("concat", _op("reshape", x, shape=(n, f)), ident, dim=0)  # row n: identity
    width = np.maximum(1, 2 ** np.ceil(np.log2(np.maximum(counts, 1))).astype(np.int64))
    parts, placed = [], []
    for w in np.unique(width):
        segs = np.nonzero(width == w)[0]
        slot = np.arange(w)
        pick = np.minimum(starts[segs, None] + slot, max(len(order) - 1, 0))
        table = np.where(slot < counts[segs, None],
                         rows[order[pick]] if len(order) else n, n).astype(np.int64)
        index = np.broadcast_to(table.reshape(-1, 1), (table.size, f))
        block = _op("reshape", _op("gather", table_src, Tensor._leaf(index), dim=0),
                    shape=(len(segs), int(w), f))
        part = _op(reduce, block, dims=(1,), keepdim=False)
        if part.dtype is not x.dtype:  # (an integer product is int64, as torch's)
            part = _op("convert", part, dtype=x.dtype)
        parts.append(part)
        placed.append(segs)
    out = parts[0] if len(parts) == 1 else _op("concat", *parts, dim=0)
    where_from = np.concatenate(placed) if placed else np.zeros(0, np.int64)
    if len(parts) > 1 or not np.array_equal(where_from, np.arange(len(where_from))):
        back = np.empty_like(where_from)
        back[where_from] = np.arange(len(where_from))
        out = _op("gather", out, Tensor._leaf(np.broadcast_to(back.reshape(-1, 1), (s, f))),
                  dim=0)
    return _op("reshape", out, shape=(s,) + rest)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: str | None = None) -> Tensor:
    """``out[s] = max(data[i] for i with segment_ids[i] == s)``; -inf (or
    the integer minimum) for an empty segment (JAX's)."""
    del indices_are_sorted, unique_indices, bucket_size  # (hints)
    return _segment_reduce("segment_max", "max", data, segment_ids, num_segments, mode)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: str | None = None) -> Tensor:
    """``out[s] = min(data[i] for i with segment_ids[i] == s)``; +inf (or
    the integer maximum) for an empty segment (JAX's)."""
    del indices_are_sorted, unique_indices, bucket_size  # (hints)
    return _segment_reduce("segment_min", "min", data, segment_ids, num_segments, mode)


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None,
                 indices_are_sorted: bool = False, unique_indices: bool = False,
                 bucket_size: int | None = None, mode: str | None = None) -> Tensor:
    """``out[s] = prod(data[i] for i with segment_ids[i] == s)``; 1 for an
    empty segment (JAX's)."""
    del indices_are_sorted, unique_indices, bucket_size  # (hints)
    return _segment_reduce("segment_prod", "prod", data, segment_ids, num_segments, mode)
