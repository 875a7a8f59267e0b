"""Rank >= 3 on the 2-D grid (issue #16): batch dims folded or looped.

``legalize-for-wse`` rewrites each op on rank >= 3 tensors into rank-2 ops
between reshapes (``algebraic-simplify`` then merges the back-to-back
reshapes of a chain):

* **elementwise** ops: neighbouring dims that every operand treats alike
  (all full, or all broadcast) merge; when at most two groups remain the op
  runs on the merged rank-2 views, which the planner tiles over the grid
  like any matrix (``[B, T, C]`` runs as ``[B*T, C]``);
* **reductions** likewise, grouping reduced and kept dims;
* **matmul** with a rank-2 right operand: ``[..., M, K] @ [K, N]`` is
  ``[(...)*M, K] @ [K, N]``; with the same batch dims on both sides they fold
  into one, ``[B, M, K] @ [B, K, N]``, which the planner lays over the grid
  (``matmul.py: _batch_matmul``, ``wse.batch_matmul``); with a batch broadcast
  on one side the batch is looped: one rank-2 matmul per batch element, between
  a slice and a concat.

What stays rank >= 3 is data movement (reshape, permute, slice, pad, concat,
constants), which the planner runs on tensors whole on every PE. An op that
does not fold (three groups or more) is left as it is and refused by
``check_supported`` naming its rank.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

# data movement planned on whole tensors (windows.py), at any rank
WHOLE_RANK_OPS = frozenset(("reshape", "permute", "constant", "iota", "slice", "split", "pad",
                            "concat"))
REDUCE_OPS = frozenset(("sum", "mean", "max", "min", "argmax", "argmin"))


def _groups(statuses: list[tuple]) -> list[list[int]] | None:
    """Consecutive dims with equal status tuples (``None`` entries match anything)
    merged; None when more than two groups remain."""
    groups: list[list[int]] = []
    cur: tuple | None = None
    for i, st in enumerate(statuses):
        if groups and all(a is None or b is None or a == b for a, b in zip(st, cur or st)):
            groups[-1].append(i)
            cur = tuple(b if a is None else a for a, b in zip(st, cur or st))
        else:
            groups.append([i])
            cur = st
    return groups if len(groups) <= 2 else None


def _merged(shape: Sequence[int], groups: list[list[int]]) -> tuple[int, ...]:
    return tuple(math.prod(shape[i] for i in g) for g in groups)


def _elementwise(b: Any, name: str, ins: list, out_shape: tuple, attrs: dict) -> Any | None:
    rank = len(out_shape)
    aligned = [(1,) * (rank - len(b.shape(v))) + tuple(b.shape(v)) for v in ins]
    if name == "broadcast_to":
        aligned = aligned[:1]
    statuses = [tuple(None if out_shape[i] == 1 else s[i] == out_shape[i] for s in aligned)
                for i in range(rank)]
    groups = _groups(statuses)
    if groups is None:
        return None
    flat_ins = [b.reshape(v, shape=_merged(s, groups)) for v, s in zip(ins, aligned)]
    if name == "broadcast_to":
        attrs = {"shape": _merged(out_shape, groups)}
    r = b.op(name, *flat_ins, **attrs)
    return b.reshape(r, shape=out_shape)


def _reduction(b: Any, name: str, x: Any, out_shape: tuple, attrs: dict) -> Any | None:
    shape = tuple(b.shape(x))
    if name in ("argmax", "argmin"):
        if attrs["dim"] is None:
            return None
        dims: tuple[int, ...] = (attrs["dim"],)
    else:
        dims = tuple(attrs["dims"])
    statuses = [(None if n == 1 else i in dims,) for i, n in enumerate(shape)]
    groups = _groups(statuses)
    if groups is None:
        return None
    red = [k for k, g in enumerate(groups) if any(i in dims and shape[i] != 1 for i in g)]
    if not red:  # only unit dims reduced
        return b.reshape(x, shape=out_shape) if name not in ("argmax", "argmin") else None
    if name in ("argmax", "argmin"):
        if len(red) != 1 or sum(shape[i] != 1 for i in groups[red[0]]) > 1:
            return None  # the index must be along one dim
        r = b.op(name, b.reshape(x, shape=_merged(shape, groups)), dim=red[0], keepdim=True)
    else:
        extra = {k: v for k, v in attrs.items() if k not in ("dims", "keepdim")}
        r = b.op(name, b.reshape(x, shape=_merged(shape, groups)), dims=tuple(red),
                 keepdim=True, **extra)
    return b.reshape(r, shape=out_shape)


def _matmul(b: Any, x: Any, y: Any, out_shape: tuple) -> Any | None:
    xs, ys = tuple(b.shape(x)), tuple(b.shape(y))
    if len(xs) < 2 or len(ys) < 2:
        return None
    m, k, n = xs[-2], xs[-1], ys[-1]
    if len(ys) == 2:  # batch dims fold into the rows
        r = b.matmul(b.reshape(x, shape=(math.prod(xs[:-1]), k)), y)
        return b.reshape(r, shape=out_shape)
    batch = out_shape[:-2]
    nb = math.prod(batch)
    if LAY_BATCH and xs[:-2] == ys[:-2] == batch:  # the batch over the grid: batch_matmul
        if len(out_shape) == 3:
            return None  # already [B, M, K] @ [B, K, N]: the planner places it
        r = b.matmul(b.reshape(x, shape=(nb, m, k)), b.reshape(y, shape=(nb, k, n)))
        return b.reshape(r, shape=out_shape)
    xb = b.reshape(x, shape=(math.prod(xs[:-2]), m, k))
    yb = b.reshape(y, shape=(math.prod(ys[:-2]), k, n))
    if xs[:-2] not in (batch, (1,) * len(xs[:-2]), ()) or ys[:-2] not in (
            batch, (1,) * len(ys[:-2])):
        return None  # partly broadcast batch dims
    parts = []
    for i in range(nb):
        xi = i if b.shape(xb)[0] == nb else 0
        yi = i if b.shape(yb)[0] == nb else 0
        a2 = b.reshape(b.slice(xb, start=(xi, 0, 0), limit=(xi + 1, m, k), stride=(1, 1, 1)),
                       shape=(m, k))
        b2 = b.reshape(b.slice(yb, start=(yi, 0, 0), limit=(yi + 1, k, n), stride=(1, 1, 1)),
                       shape=(k, n))
        parts.append(b.reshape(b.matmul(a2, b2), shape=(1, m, n)))
    r = b.concat(*parts, dim=0) if nb > 1 else parts[0]
    return b.reshape(r, shape=out_shape)


# False: batched matmuls are looped, one rank-2 matmul per batch element (the way
# before the batch was laid over the grid; bench/csl_batch_matmul.py compares the two)
LAY_BATCH = True


def batch_laid(shapes: Sequence[Sequence[int]]) -> bool:
    """``[B, M, K] @ [B, K, N] -> [B, M, N]`` (the shapes of a matmul's operands and
    result): planned with its batch over the grid (``wse.batch_matmul``)."""
    return LAY_BATCH and len(shapes) == 3 and all(len(s) == 3 for s in shapes) and \
        shapes[0][0] == shapes[1][0] == shapes[2][0]


def flatten_rule(name: str, family: str, shapes: Sequence[Sequence[int]]):
    """The rewrite of an op on rank >= 3 tensors into rank-2 ones, or None when it
    needs none (rank <= 2, data movement) or has none."""
    if max((len(s) for s in shapes), default=0) <= 2 or name in WHOLE_RANK_OPS:
        return None
    if name == "matmul":
        return lambda b, ins, out_shape, attrs: _matmul(b, *ins, out_shape)
    if name in REDUCE_OPS:
        return lambda b, ins, out_shape, attrs: _reduction(b, name, ins[0], out_shape, attrs)
    if family == "elementwise" or name == "broadcast_to":
        return lambda b, ins, out_shape, attrs: _elementwise(b, name, list(ins), out_shape,
                                                             attrs)
    return None
