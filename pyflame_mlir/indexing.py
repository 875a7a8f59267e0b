"""Indexing with torch's API and semantics, written over two primitives
(``dialects/indexing.py``: ``gather`` and ``scatter_add``) and the shape ops.

Advanced indexing (``x[idx]`` with int lists, int tensors, bool masks mixed
with ints, slices, None and Ellipsis) follows torch: ints, slices and None are
applied first (basic indexing); the advanced indices left broadcast together;
their result dims replace them in place when they are adjacent, else they go
first. The selected elements are then one ``gather`` from the flattened
input at flat positions:

- host indices (Python lists, numpy arrays, realized tensors): the positions
  are computed with numpy when recording; negative indices wrap and an
  out-of-range one raises ``IndexError`` naming the dim and its size at once;
- lazy int index tensors stay lazy: the flat position is computed in the
  graph, and an out-of-range index makes it invalid, so the ``gather`` raises
  ``IndexError`` at evaluation (the reference kernel itself; on the other
  backends the ``check-indices`` pass counts bad indices in the graph and the
  compile driver raises), never a silent wrong read;
- bool masks have a data-dependent shape: the mask is evaluated (looking at a
  value never changes a gradient) and becomes host indices.

Setting (``t[idx] = v``, ``index_put_``, ``index_copy_``, ``scatter``) writes
host positions: a lazy index is evaluated first. Duplicate positions are
nondeterministic in torch; here the **last** write in row-major order of the
index wins (numpy's rule), and only that value receives a gradient.
Accumulating setters (``index_put_(accumulate=True)``, ``index_add_``,
``scatter_add``) sum duplicates and keep lazy indices lazy.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import saved
from .core import (
    REALIZE_GUARDS,
    Tensor,
    as_view,
    detach,
    geometry,
    mark_multi_output,
    record,
    requires_grad,
    untracked_views,
)
from .dialects import OPS
from .dialects.dtypes import bool_, int64
from .dialects.opdef import ShapeError, fmt_shape, normalize_dim
from .dialects.reduction import reduce_identity
from .ops import (
    _cast,
    amax,
    amin,
    as_tensor_arg,
    broadcast_to,
    cat,
    clamp,
    clone,
    convert,
    eq,
    ge,
    logical_and,
    logical_or,
    lt,
    ne,
    permute,
    reshape,
    split,
)
from .ops import (
    getitem as _basic_getitem,
)
from .ops import (
    sum as _sum,
)
from .ops import (
    where as _where,
)

_GATHER, _SCATTER_ADD, _SORT = OPS["gather"], OPS["scatter_add"], OPS["sort"]

TensorLike = Any


# ---- the primitives, with torch's signatures ----

def _int_index(op: str, index: TensorLike) -> Tensor:
    t = as_tensor_arg(np.asarray(index) if isinstance(index, list | tuple) else index)
    if t.dtype.name not in ("int32", "int64"):
        raise TypeError(f"{op}(): index must be an int32 or int64 tensor, got {t.dtype.name}")
    return t


def gather(input: TensorLike, dim: int, index: TensorLike, *,  # noqa: A002
           sparse_grad: bool = False) -> Tensor:
    """``out[i][j][k] = input[index[i][j][k]][j][k]`` for ``dim=0`` (torch.gather)."""
    if sparse_grad:
        raise NotImplementedError("gather(): sparse_grad=True (a sparse gradient) is not "
                                  "supported")
    x, idx = as_tensor_arg(input), _int_index("gather", index)
    d = normalize_dim("gather", dim, x.ndim) if x.ndim else 0
    if idx.ndim == 0 and x.ndim == 1:  # torch: a 0-d index is a 1-element 1-d one
        out = gather(x, d, reshape(idx, (1,)))
        return reshape(out, ())
    _check_host_range("gather", idx, x.shape[d] if x.ndim else 1, d, wrap=False)
    return record(_GATHER, (x, idx), {"dim": d})


def _same_dtype(op: str, x: Tensor, src: Any) -> None:
    """PyTorch's rule for ops that write a source tensor into ``x``: the same
    dtype, no implicit cast (a Python number or a value to fill is cast)."""
    if isinstance(src, Tensor) and src.dtype is not x.dtype:
        raise RuntimeError(f"{op}(): expected self and source to have the same dtype, got "
                           f"{x.dtype.name} for self and {src.dtype.name} for the source")


def _scatter_args(op: str, input: TensorLike, dim: int, index: TensorLike, src: TensorLike
                  ) -> tuple[Tensor, int, Tensor, Tensor]:
    x, idx = as_tensor_arg(input), _int_index(op, index)
    d = normalize_dim(op, dim, x.ndim) if x.ndim else 0
    if idx.ndim == 0 and x.ndim == 1:
        # torch takes a 0-d index (and source) as 1-element 1-d ones: the datasets
        # tutorial's one-hot ``zeros(10).scatter_(0, torch.tensor(y), value=1)``
        idx = reshape(idx, (1,))
        if isinstance(src, Tensor | np.ndarray) and np.ndim(src) == 0:
            src = reshape(as_tensor_arg(src), (1,))
    if x.ndim and idx.ndim != x.ndim:
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as "
                           f"self tensor (index {fmt_shape(idx.shape)}, self "
                           f"{fmt_shape(x.shape)})")
    if isinstance(src, Tensor | np.ndarray):
        _same_dtype(op, x, src)
        s = _cast(as_tensor_arg(src), x.dtype)
        if s.ndim != idx.ndim or builtins.any(k > n for k, n in zip(idx.shape, s.shape)):
            raise ShapeError(op, f"index {fmt_shape(idx.shape)} must not be larger than src "
                                 f"{fmt_shape(s.shape)} in any dimension")
        if s.shape != idx.shape:
            s = _basic_getitem(s, tuple(slice(0, k) for k in idx.shape))
    else:  # a scalar value
        s = broadcast_to(_cast(src, x.dtype), idx.shape)
    _check_host_range(op, idx, x.shape[d] if x.ndim else 1, d, wrap=False)
    return x, d, idx, s


def scatter_add(input: TensorLike, dim: int, index: TensorLike, src: TensorLike  # noqa: A002
                ) -> Tensor:
    """``out = input; out[index[i][j]][j] += src[i][j]`` for ``dim=0`` (duplicates sum)."""
    x, d, idx, s = _scatter_args("scatter_add", input, dim, index, src)
    return record(_SCATTER_ADD, (x, idx, s), {"dim": d})


def scatter(input: TensorLike, dim: int, index: TensorLike, src: TensorLike = None,  # noqa: A002
            value: TensorLike = None, *, reduce: str | None = None) -> Tensor:
    """torch.scatter: ``src`` (a tensor) or ``value`` (a scalar) written at
    ``index`` along ``dim``; ``reduce="add"`` sums, ``"multiply"`` multiplies.
    Duplicate positions without ``reduce``: the last in row-major order of
    ``index`` wins."""
    if (src is None) == (value is None):
        raise TypeError("scatter(): give exactly one of src and value")
    x, d, idx, s = _scatter_args("scatter", input, dim, index, src if value is None else value)
    if reduce == "add":
        return record(_SCATTER_ADD, (x, idx, s), {"dim": d})
    if reduce == "multiply":  # torch's: the products with the input's values kept
        return _scatter_extreme_or_prod(x, d, idx, s, "prod", True)
    if reduce is not None:
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
    return _put(x, _flat_positions(x.shape, _host(idx), d), s)


def scatter_reduce(input: TensorLike, dim: int, index: TensorLike, src: TensorLike,  # noqa: A002
                   reduce: str, *, include_self: bool = True) -> Tensor:
    """torch.scatter_reduce: ``src`` reduced into ``input`` at ``index`` along
    ``dim`` with ``reduce`` "sum", "mean" (floating point), "prod", "amax" or
    "amin"; ``include_self=False`` leaves the input's own values out at the
    positions written (the others keep them). Gradients are torch's: amax/amin
    share among the tied elements, prod is exact with zeros."""
    if reduce not in ("sum", "mean", "prod", "amax", "amin"):
        raise RuntimeError(f"scatter_reduce(): reduce argument must be either sum, prod, "
                           f"mean, amax or amin, got {reduce}")
    x, d, idx, s = _scatter_args("scatter_reduce", input, dim, index, src)
    first = saved.start()  # (PyTorch saves the input, src and the result, for every reduce)
    return saved.composite(_scatter_reduce(x, d, idx, s, reduce, include_self), first, (x, s),
                           True, "scatter_reduce")


def _scatter_reduce(x: Tensor, d: int, idx: Tensor, s: Tensor, reduce: str,
                    include_self: bool) -> Tensor:
    if reduce in ("prod", "amax", "amin"):
        return _scatter_extreme_or_prod(x, d, idx, s, reduce, include_self)
    touched = None
    if not include_self or reduce == "mean":
        ones = broadcast_to(_cast(1, int64), idx.shape)
        count = record(_SCATTER_ADD, (broadcast_to(_cast(0, int64), x.shape), idx, ones),
                       {"dim": d})
        touched = count > 0
    base = x if include_self else _where(touched, _cast(0, x.dtype), x)
    total = record(_SCATTER_ADD, (base, idx, s), {"dim": d})
    if reduce == "sum":
        return total
    if not x.dtype.is_floating_point:
        raise NotImplementedError("scatter_reduce(): 'mean' of an integer tensor is not "
                                  "supported yet")
    n = convert(count, x.dtype) + (1 if include_self else 0)
    return _where(touched, total / _where(n > 0, n, _cast(1, x.dtype)), x)


def _scatter_extreme_or_prod(x: Tensor, dim: int, idx: Tensor, s: Tensor, reduce: str,
                             include_self: bool) -> Tensor:
    """prod/amax/amin: the index is evaluated (its values fix which elements
    meet), the src elements of each written position are gathered into rows,
    padded with the reduction's identity, and reduced along the row by the
    reduction op itself, so values, NaN propagation and gradients (amax/amin
    share among ties, prod exact with zeros) are that op's, as torch's. Rows
    are bucketed by their count rounded up to a power of two, so the padding
    at most doubles the work: O(numel(src)) whatever the duplicates."""
    if x.dtype == bool_:
        raise NotImplementedError(f"scatter_reduce(): reduce={reduce!r} of a bool tensor is "
                                  "not supported")
    pos = _flat_positions(x.shape, _host(idx), dim).reshape(-1)
    if not pos.size:
        return x
    order = np.argsort(pos, kind="stable")
    targets, starts, counts = np.unique(pos[order], return_index=True, return_counts=True)
    fill = _cast(reduce_identity(reduce, x.dtype), x.dtype)
    src_ext = cat([reshape(s, (-1,)), reshape(fill, (1,))], 0)  # the last slot: the identity
    x_flat = reshape(x, (-1,))
    width = np.maximum(1, 2 ** np.ceil(np.log2(counts)).astype(np.int64))
    written, values = [], []
    for k in np.unique(width):
        rows = np.nonzero(width == k)[0]
        slot = np.arange(k)
        table = np.where(slot < counts[rows, None], order[np.minimum(
            starts[rows, None] + slot, len(order) - 1)], pos.size)
        block = reshape(gather(src_ext, 0, Tensor._leaf(table.reshape(-1))), table.shape)
        own = reshape(gather(x_flat, 0, Tensor._leaf(targets[rows].astype(np.int64))),
                      (len(rows), 1))
        if include_self:
            block = cat([own, block], 1)
        elif reduce != "prod":
            # torch's backward counts the input's own element among the ties when it
            # equals the result even then (its share is dropped): a constant column
            # holding it there, the identity elsewhere, reproduces that
            best = detach(amax(block, 1, keepdim=True) if reduce == "amax"
                          else amin(block, 1, keepdim=True))
            block = cat([block, detach(_where(own == best, own, fill))], 1)
        if reduce == "amax":
            values.append(amax(block, 1))
        elif reduce == "amin":
            values.append(amin(block, 1))
        else:
            values.append(_cast(record(OPS["prod"], (block,), {"dims": (1,), "keepdim": False}),
                                x.dtype))
        written.append(targets[rows])
    return _put(x, np.concatenate(written), cat(values, 0) if len(values) > 1 else values[0])


def index_select(input: TensorLike, dim: int, index: TensorLike) -> Tensor:  # noqa: A002
    x, idx = as_tensor_arg(input), _int_index("index_select", index)
    if idx.ndim > 1:
        raise ShapeError("gather", f"index_select(): index must be 0-d or 1-d, got "
                                   f"{fmt_shape(idx.shape)}")
    d = normalize_dim("index_select", dim, x.ndim) if x.ndim else 0
    if x.ndim == 0:
        return gather(x, 0, reshape(idx, ()))
    k = idx.numel()
    full = broadcast_to(reshape(idx, (1,) * d + (k,) + (1,) * (x.ndim - d - 1)),
                        x.shape[:d] + (k,) + x.shape[d + 1:])
    return gather(x, d, full)


def take_along_dim(input: TensorLike, indices: TensorLike, dim: int | None = None  # noqa: A002
                   ) -> Tensor:
    x, idx = as_tensor_arg(input), _int_index("take_along_dim", indices)
    if dim is None:
        return gather(reshape(x, (-1,)), 0, reshape(idx, (-1,)))
    if x.ndim != idx.ndim:
        raise ShapeError("gather", f"take_along_dim(): input {fmt_shape(x.shape)} and indices "
                                   f"{fmt_shape(idx.shape)} must have the same rank")
    d = normalize_dim("take_along_dim", dim, x.ndim)
    shape = [builtins.max(a, b) for a, b in zip(x.shape, idx.shape)]
    xs, ixs = list(shape), list(shape)
    xs[d], ixs[d] = x.shape[d], idx.shape[d]
    return gather(broadcast_to(x, tuple(xs)), d, broadcast_to(idx, tuple(ixs)))


def take(input: TensorLike, index: TensorLike) -> Tensor:  # noqa: A002
    """Elements of the flattened input (negative indices wrap), in ``index``'s shape."""
    x, idx = as_tensor_arg(input), _int_index("take", index)
    return getitem(reshape(x, (-1,)), idx)


def put(input: TensorLike, index: TensorLike, source: TensorLike,  # noqa: A002
        accumulate: bool = False) -> Tensor:
    """``torch.put``: ``source`` written (or added, ``accumulate``) at the
    flat positions ``index`` of the input (negative indices wrap)."""
    x, idx, src = as_tensor_arg(input), _int_index("put", index), as_tensor_arg(source)
    _same_dtype("put", x, src)
    if idx.numel() != src.numel():
        raise RuntimeError(f"put: expected source to have as many elements as index "
                           f"({idx.numel()}), got {src.numel()}")
    flat = index_put(reshape(x, (-1,)), (reshape(idx, (-1,)),), reshape(src, (-1,)),
                     accumulate=accumulate)
    return reshape(flat, x.shape)


# ---- advanced indexing: x[idx] ----

def is_advanced(index: Any) -> bool:
    """Whether ``index`` holds an advanced index (a list, array or tensor)."""
    items = index if isinstance(index, tuple) else (index,)
    return builtins.any(isinstance(it, Tensor | np.ndarray | list | tuple | range) for it in items)


def _host(t: Tensor) -> np.ndarray:
    """An index's values (evaluating a lazy one: looking at values has no gradient)."""
    return np.asarray(t.numpy())


def _check_host_range(op: str, idx: Tensor, size: int, dim: int, wrap: bool) -> None:
    if idx._node is None and idx.numel():
        v = idx._value
        lo, hi = int(v.min()), int(v.max())
        if hi >= size or lo < (-size if wrap else 0):
            bad = hi if hi >= size else lo
            raise IndexError(f"{op}: index {bad} is out of bounds for dimension {dim} with "
                             f"size {size}")


def _parse(x: Tensor, index: Any) -> tuple[list[Any], list[tuple[int, Any]]]:
    """Split an index into its basic part (advanced items replaced by full
    slices) and the advanced items as (position in the basic result, int index
    as a host array or lazy int tensor). Bool masks become host int arrays."""
    items = list(index) if isinstance(index, tuple) else [index]
    expanded: list[Any] = []
    for it in items:
        if isinstance(it, range):  # torch: a sequence of ints (``x[range(n), target]``)
            it = np.arange(it.start, it.stop, it.step, dtype=np.int64)
        if isinstance(it, list | tuple):
            it = np.asarray(it)
            if it.dtype == object or (it.size == 0 and it.dtype != np.bool_):
                it = it.astype(np.int64) if it.size == 0 else it
        if isinstance(it, np.ndarray) and it.dtype != np.bool_:
            if it.dtype.kind not in "iu":
                raise IndexError(f"tensors used as indices must be long, int or bool; got an "
                                 f"array of {it.dtype}")
            it = it.astype(np.int64)
        if isinstance(it, Tensor):
            if it.dtype is bool_:
                it = _host(it)
            elif it.dtype.name not in ("int32", "int64"):
                raise IndexError(f"tensors used as indices must be long, int or bool; got "
                                 f"{it.dtype.name}")
            elif it._node is None and not REALIZE_GUARDS:
                # realized: its values on the host. Not while a transform or
                # pf.compile traces: then it stays a tensor (a gather), so a
                # replay follows the index instead of baking this call's in
                it = np.asarray(it._value, dtype=np.int64)
        # (a lazy 0-d int tensor stays a tensor: an advanced index of shape (),
        # which selects as an int would, by a gather, without reading its value:
        # under vmap, grad or pf.compile the value may not be known or may change)
        if isinstance(it, np.ndarray) and it.ndim == 0 and it.dtype.kind in "iu":
            it = int(it)
        if isinstance(it, bool | np.bool_) or not (
                it is None or it is Ellipsis or isinstance(it, slice | int | np.integer
                                                            | np.ndarray | Tensor)):
            raise TypeError(f"index {it!r}: only ints, slices, None, Ellipsis and int or "
                            "bool tensors, arrays or lists are supported")
        expanded.append(it)
    # dims each item consumes; a k-dim mask consumes k
    n_used = builtins.sum(
        (it.ndim if isinstance(it, np.ndarray) and it.dtype == np.bool_ else 1)
        for it in expanded if it is not None and it is not Ellipsis)
    if builtins.sum(1 for it in expanded if it is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_used > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    if Ellipsis in [it for it in expanded if not isinstance(it, np.ndarray | Tensor)]:
        i = next(k for k, it in enumerate(expanded) if it is Ellipsis)
        expanded = expanded[:i] + [slice(None)] * (x.ndim - n_used) + expanded[i + 1:]
    basic: list[Any] = []
    adv: list[tuple[int, Any]] = []
    in_dim = out_dim = 0
    for it in expanded:
        if it is None:
            basic.append(None)
            out_dim += 1
        elif isinstance(it, slice | int | np.integer):
            basic.append(it)
            in_dim += 1
            out_dim += 0 if isinstance(it, int | np.integer) else 1
        elif isinstance(it, np.ndarray) and it.dtype == np.bool_:
            k = it.ndim
            want = x.shape[in_dim:in_dim + k]
            if it.shape != want:
                raise IndexError(f"the shape of the mask {list(it.shape)} at index {in_dim} "
                                 f"does not match the shape of the indexed tensor "
                                 f"{list(x.shape)}")
            for j, nz in enumerate(np.nonzero(it) if k else [np.zeros(int(it), np.int64)]):
                adv.append((out_dim + j, nz.astype(np.int64)))
            if k == 0:  # a 0-d mask adds a dim (of size 1 or 0)
                basic.append(None)
                out_dim += 1
                continue
            basic.extend([slice(None)] * k)
            in_dim += k
            out_dim += k
        else:
            size = x.shape[in_dim]
            if isinstance(it, np.ndarray):
                if it.size and (it.max() >= size or it.min() < -size):
                    bad = int(it.max()) if it.max() >= size else int(it.min())
                    raise IndexError(f"index {bad} is out of bounds for dimension {in_dim} "
                                     f"with size {size}")
                it = np.where(it < 0, it + size, it)
            adv.append((out_dim, it))
            basic.append(slice(None))
            in_dim += 1
            out_dim += 1
    return basic, adv


def _broadcast_index_shapes(adv: list[tuple[int, Any]]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*[tuple(v.shape) for _, v in adv]))
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         "with shapes " + ", ".join(str(list(v.shape)) for _, v in adv)
                         ) from None


def _positions(x: Tensor, index: Any) -> tuple[Any, Any]:
    """Flat positions in ``x`` of the elements ``x[index]`` selects (a host
    int64 array, or a lazy int64 tensor if an index is lazy), and the result
    shape; for an index with nothing advanced left, ``(None, basic index)``."""
    basic, adv = _parse(x, index)
    if not adv:
        return None, tuple(basic)
    base = np.arange(x.numel(), dtype=np.int64).reshape(x.shape)[tuple(basic)]
    bshape = _broadcast_index_shapes(adv)
    dims = [p for p, _ in adv]
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    if all(isinstance(v, np.ndarray) for _, v in adv):
        # with no ints left, numpy's rule for where the index dims go is torch's
        full: list[Any] = [slice(None)] * base.ndim
        for p, v in adv:
            full[p] = v
        pos = base[tuple(full)]
        return pos, pos.shape
    # a lazy index: flat position in the gathered ``base`` computed in the graph
    rest = [i for i in range(base.ndim) if i not in dims]
    moved = np.transpose(base, dims + rest)
    sizes = [base.shape[p] for p in dims]
    n_adv = int(np.prod(sizes))
    n_rest = int(np.prod([base.shape[i] for i in rest]))
    table = Tensor._leaf(np.ascontiguousarray(moved.reshape(n_adv, n_rest)))
    flat: Tensor | None = None
    bad: Tensor | None = None
    stride = n_adv
    for (_, v), n in zip(adv, sizes):
        stride //= n
        t = convert(as_tensor_arg(v), int64)
        t = _where(lt(t, 0), t + n, t)  # negative indices wrap
        oob = logical_or(lt(t, 0), ge(t, n))
        bad = oob if bad is None else logical_or(bad, oob)
        term = broadcast_to(t * stride, bshape)
        flat = term if flat is None else flat + term
    assert flat is not None and bad is not None
    flat = _where(bad, _cast(-1, int64), flat)  # out of range: the gather raises
    m = int(np.prod(bshape))
    rows = broadcast_to(reshape(flat, (m, 1)), (m, n_rest))
    pos = gather(table, 0, rows)  # (m, n_rest) positions in x
    rest_shape = tuple(base.shape[i] for i in rest)
    pos = reshape(pos, bshape + rest_shape)
    if adjacent and dims[0] != 0:
        nb, p0 = len(bshape), dims[0]
        perm = (list(range(nb, nb + p0)) + list(range(nb))
                + list(range(nb + p0, nb + len(rest_shape))))
        pos = permute(pos, tuple(perm))
    return pos, tuple(pos.shape)


def _is_mask(it: Any) -> bool:
    if isinstance(it, Tensor):
        return it.dtype is bool_
    if isinstance(it, np.ndarray | list | tuple):
        return np.asarray(it).dtype == np.bool_
    return isinstance(it, bool | np.bool_)


def _without_negative_steps(x: Tensor, index: Any) -> tuple[Tensor, Any] | None:
    """``(x', index')`` with ``x'[index'] == x[index]`` and no slice of a
    negative step in ``index'`` (numpy's and JAX's ``x[::-1]``, ``x[5:1:-1]``;
    torch refuses them): each such dim of ``x`` is first cut to the elements
    the slice takes (a positive-step slice) and flipped, and its slice becomes
    ``:``. None when ``index`` has no negative step."""
    items = index if isinstance(index, tuple) else (index,)
    if not builtins.any(isinstance(it, slice) and it.step is not None and it.step < 0
                        for it in items):
        return None
    def used(it: Any) -> int:
        if it is None or it is Ellipsis:
            return 0
        if _is_mask(it):
            return int(np.ndim(it) if not isinstance(it, Tensor) else it.ndim)
        return 1
    n_used = builtins.sum(used(it) for it in items)
    cut: list[Any] = [slice(None)] * x.ndim
    flips: list[int] = []
    out: list[Any] = []
    d = 0
    for it in items:
        if it is Ellipsis:
            d += x.ndim - n_used
        elif isinstance(it, slice) and it.step is not None and it.step < 0:
            if d >= x.ndim:
                raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
            a, b, k = it.indices(x.shape[d])
            m = len(range(a, b, k))
            if m:
                cut[d] = slice(a + (m - 1) * k, a + 1, -k)
                if m > 1:
                    flips.append(d)
            else:
                cut[d] = slice(0, 0)
            it = slice(None)
        out.append(it)
        d += used(it)
    y = _basic_getitem(x, tuple(cut))
    for d in flips:  # a view of x, as numpy's (negative strides): in-place updates of
        # it reach x, and it sees x's (a copy dropped the update of x[::-1].mul_(2))
        sizes, strides, offset = geometry(y)
        strides = tuple(-s if i == d else s for i, s in enumerate(strides))
        y = as_view(y, flip(y, d), lambda p, d=d: flip(p, d), sizes,
                    strides, offset + (sizes[d] - 1) * -strides[d])
    return y, tuple(out)


def getitem(x: Tensor, index: Any) -> Tensor:
    """``x[index]`` with torch's basic and advanced indexing (and numpy's
    negative slice steps, which torch refuses)."""
    rewritten = _without_negative_steps(x, index)
    if rewritten is not None:
        x, index = rewritten
    pos, shape = _positions(x, index)
    if pos is None:
        return _basic_getitem(x, shape)
    flat = reshape(x, (-1,))
    p = Tensor._leaf(pos.reshape(-1)) if isinstance(pos, np.ndarray) else reshape(pos, (-1,))
    return reshape(record(_GATHER, (flat, p), {"dim": 0}), shape)


# ---- writing at positions ----

def _last_writes(pos: np.ndarray) -> np.ndarray:
    """Indices into ``pos`` (flattened) of the last occurrence of each position."""
    rev = pos[::-1]
    _, first_in_rev = np.unique(rev, return_index=True)
    return np.sort(len(pos) - 1 - first_in_rev)


def _put(x: Tensor, pos: np.ndarray, values: TensorLike) -> Tensor:
    """``x`` with ``values`` (broadcast to ``pos``'s shape) written at flat
    positions ``pos``; the last write of a duplicate position wins."""
    v = _cast(as_tensor_arg(values), x.dtype)
    if v.shape != pos.shape:
        try:
            v = broadcast_to(v, pos.shape)
        except ShapeError:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(v.shape)} cannot "
                               f"be broadcast to indexing result of shape "
                               f"{list(pos.shape)}") from None
    flat_pos = pos.reshape(-1)
    if not flat_pos.size:  # nothing written; the values stay in the graph (read, never
        # selected: torch gives them a zero, here empty, gradient rather than none)
        return _where(False, _sum(v), x) if requires_grad(v) else x
    keep = _last_writes(flat_pos)
    vf = reshape(v, (-1,))
    if len(keep) != len(flat_pos):
        vf = record(_GATHER, (vf, Tensor._leaf(keep.astype(np.int64))), {"dim": 0})
    targets = flat_pos[keep]
    n = x.numel()
    written = np.zeros(n, dtype=bool)
    written[targets] = True
    zeros = broadcast_to(_cast(0, x.dtype), (n,))
    placed = record(_SCATTER_ADD, (zeros, Tensor._leaf(targets), vf), {"dim": 0})
    return reshape(_where(Tensor._leaf(written), placed, reshape(x, (-1,))), x.shape)


def _flat_positions(shape: tuple[int, ...], index: np.ndarray, dim: int) -> np.ndarray:
    """Flat positions in ``shape`` of the elements a torch scatter ``index`` names."""
    if not len(shape):
        return np.zeros(index.shape, dtype=np.int64)
    size = shape[dim]
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = int(index.min()) if index.min() < 0 else int(index.max())
        raise IndexError(f"scatter: index {bad} is out of bounds for dimension {dim} with "
                         f"size {size}")
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return np.ravel_multi_index(tuple(np.broadcast_arrays(*grid)), shape).astype(np.int64)


def index_put(input: TensorLike, indices: Sequence[TensorLike], values: TensorLike,  # noqa: A002
              accumulate: bool = False) -> Tensor:
    """``input`` with ``input[indices] = values`` (or ``+=`` that sums duplicates
    with ``accumulate=True``), out of place."""
    x = as_tensor_arg(input)
    _same_dtype("index_put", x, values)
    pos, shape = _positions(x, tuple(indices))
    if pos is None:
        raise IndexError("index_put(): indices must hold at least one index tensor")
    if not accumulate:
        return _put(x, _host(pos) if isinstance(pos, Tensor) else pos, values)
    v = _cast(as_tensor_arg(values), x.dtype)
    v = reshape(broadcast_to(v, shape), (-1,))
    p = Tensor._leaf(pos.reshape(-1)) if isinstance(pos, np.ndarray) else reshape(pos, (-1,))
    out = record(_SCATTER_ADD, (reshape(x, (-1,)), p, v), {"dim": 0})
    return reshape(out, x.shape)


def setitem_value(x: Tensor, index: Any, value: TensorLike) -> Tensor:
    """The new value of ``x`` after ``x[index] = value`` for an advanced index
    (``inplace.setitem`` handles the basic ones)."""
    pos, basic = _positions(x, index)
    if pos is None:  # only 0-d int tensors, which index as ints
        pos = np.arange(x.numel(), dtype=np.int64).reshape(x.shape)[basic]
    return _put(x, _host(pos) if isinstance(pos, Tensor) else pos, value)


def _dim_index(x: Tensor, dim: int, index: TensorLike) -> tuple[Any, ...]:
    d = normalize_dim("index", dim, x.ndim) if x.ndim else 0
    idx = _int_index("index", index)
    if idx.ndim > 1:
        raise IndexError(f"index must be 0-d or 1-d, got {fmt_shape(idx.shape)}")
    return (slice(None),) * d + (reshape(idx, (-1,)),)


def index_add(input: TensorLike, dim: int, index: TensorLike, source: TensorLike, *,  # noqa: A002
              alpha: Any = 1) -> Tensor:
    x = as_tensor_arg(input)
    src = as_tensor_arg(source)
    _same_dtype("index_add", x, src)
    return index_put(x, _dim_index(x, dim, index), src if alpha == 1 else src * alpha,
                     accumulate=True)


def index_copy(input: TensorLike, dim: int, index: TensorLike, source: TensorLike  # noqa: A002
               ) -> Tensor:
    x = as_tensor_arg(input)
    _same_dtype("index_copy", x, source)
    return index_put(x, _dim_index(x, dim, index), source)


def index_fill(input: TensorLike, dim: int, index: TensorLike, value: TensorLike  # noqa: A002
               ) -> Tensor:
    x = as_tensor_arg(input)
    return index_put(x, _dim_index(x, dim, index), _cast(value, x.dtype))  # (a value: cast)


def masked_fill(input: TensorLike, mask: TensorLike, value: TensorLike) -> Tensor:  # noqa: A002
    x, m = as_tensor_arg(input), as_tensor_arg(mask)
    if m.dtype is not bool_:
        raise TypeError(f"masked_fill(): mask must be a bool tensor, got {m.dtype.name}")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError("masked_fill(): value must be a 0-d tensor or a number, got shape "
                           f"{list(value.shape)}")
    return broadcast_to(_where(m, _cast(value, x.dtype), x), x.shape)


def masked_select(input: TensorLike, mask: TensorLike) -> Tensor:  # noqa: A002
    x, m = as_tensor_arg(input), as_tensor_arg(mask)
    if m.dtype is not bool_:
        raise TypeError(f"masked_select(): mask must be a bool tensor, got {m.dtype.name}")
    shape = tuple(np.broadcast_shapes(x.shape, m.shape))
    return getitem(broadcast_to(x, shape), np.broadcast_to(_host(m), shape))


def masked_scatter(input: TensorLike, mask: TensorLike, source: TensorLike  # noqa: A002
                   ) -> Tensor:
    """``input`` with its elements where ``mask`` (broadcast) is True replaced,
    in row-major order, by the leading elements of ``source`` (evaluates the mask)."""
    x, m, src = as_tensor_arg(input), as_tensor_arg(mask), as_tensor_arg(source)
    if m.dtype is not bool_:
        raise TypeError(f"masked_scatter(): mask must be a bool tensor, got {m.dtype.name}")
    _same_dtype("masked_scatter", x, src)
    try:
        where_true = np.flatnonzero(np.broadcast_to(_host(m), x.shape))
    except ValueError:
        raise RuntimeError(f"masked_scatter(): mask {list(m.shape)} cannot be broadcast to the "
                           f"input {list(x.shape)}") from None
    k = where_true.size
    if k > src.numel():
        raise RuntimeError(f"masked_scatter(): the mask selects {k} elements but source has "
                           f"only {src.numel()}")
    values = _basic_getitem(reshape(src, (-1,)), slice(0, k))
    if k == 0 and src.numel():  # nothing written: torch's backward still gives source
        # a (zero) gradient, so it stays in the graph (read, never selected)
        return _where(False, _basic_getitem(reshape(src, (-1,)), slice(0, 1)), x)
    return _put(x, where_true.astype(np.int64), values)


# ---- selections computed on the host ----

def nonzero(input: TensorLike, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:  # noqa: A002
    """Evaluates ``input`` (the result's shape depends on its values)."""
    a = _host(as_tensor_arg(input))
    if as_tuple:
        if a.ndim == 0:
            return (Tensor._leaf(np.zeros(int(bool(a)), np.int64)),)
        return tuple(Tensor._leaf(i.astype(np.int64)) for i in np.nonzero(a))
    return Tensor._leaf(np.argwhere(a).astype(np.int64))


def argwhere(input: TensorLike) -> Tensor:  # noqa: A002
    return nonzero(input)  # type: ignore[return-value]


def where(condition: TensorLike, input: TensorLike | None = None,  # noqa: A002
          other: TensorLike | None = None) -> Tensor | tuple[Tensor, ...]:
    """``pf.where(cond, x, y)`` (``ops.where``), or with the condition alone
    ``nonzero(cond, as_tuple=True)``, as torch's one-argument form."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() takes a condition alone or a condition, input and other")
    return _where(condition, input, other)


def _tri(x: Tensor, diagonal: int, lower: bool, op: str) -> Tensor:
    if x.ndim < 2:
        raise ShapeError(op, f"input must have at least 2 dimensions, got {fmt_shape(x.shape)}")
    n, m = x.shape[-2:]
    keep = np.tri(n, m, diagonal, dtype=bool) if lower else \
        ~np.tri(n, m, diagonal - 1, dtype=bool)
    return _where(Tensor._leaf(keep), x, _cast(0, x.dtype))


def tril(input: TensorLike, diagonal: int = 0) -> Tensor:  # noqa: A002
    return _tri(as_tensor_arg(input), diagonal, True, "tril")


def triu(input: TensorLike, diagonal: int = 0) -> Tensor:  # noqa: A002
    return _tri(as_tensor_arg(input), diagonal, False, "triu")


def one_hot(tensor: TensorLike, num_classes: int = -1) -> Tensor:
    """torch.nn.functional.one_hot: int64, a new last dim of ``num_classes``
    (-1: the largest value + 1, which evaluates ``tensor``). Values outside
    ``[0, num_classes)`` raise (at evaluation for a lazy tensor)."""
    t = as_tensor_arg(tensor)
    if t.dtype is not int64:
        raise TypeError(f"one_hot(): tensor must be int64, got {t.dtype.name}")
    if num_classes == -1:
        a = _host(t)
        if not a.size:
            raise RuntimeError("one_hot(): cannot infer the number of classes of an empty "
                               "tensor")
        num_classes = int(a.max()) + 1
    n = t.numel()
    _check_host_range("one_hot", t, num_classes, t.ndim, wrap=False)
    zeros = broadcast_to(_cast(0, int64), (n, num_classes))
    ones = broadcast_to(_cast(1, int64), (n, 1))
    hot = record(_SCATTER_ADD, (zeros, reshape(t, (n, 1)), ones), {"dim": 1})
    return reshape(hot, t.shape + (num_classes,))


# ---- rearrangements ----

def _dims_arg(dims: Any) -> tuple[int, ...]:
    return (int(dims),) if isinstance(dims, int | np.integer) else tuple(int(d) for d in dims)


def flip(input: TensorLike, dims: Any) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    out = x
    seen: set[int] = set()
    for d in _dims_arg(dims):
        d = normalize_dim("flip", d, x.ndim)
        if d in seen:
            raise ShapeError("flip", f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
        if x.shape[d] > 1:
            out = index_select(out, d, Tensor._leaf(np.arange(x.shape[d] - 1, -1, -1)))
    return clone(x) if out is x else out  # a new tensor, as PyTorch's (never x itself)


def fliplr(input: TensorLike) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    if x.ndim < 2:
        raise ShapeError("flip", "fliplr(): input must be at least 2-d")
    return flip(x, (1,))


def flipud(input: TensorLike) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    if x.ndim < 1:
        raise ShapeError("flip", "flipud(): input must be at least 1-d")
    return flip(x, (0,))


def roll(input: TensorLike, shifts: Any, dims: Any = None) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    if dims is None:
        if not isinstance(shifts, int | np.integer) and len(shifts) != 1:
            raise ShapeError("roll", "shifts must be one int when dims is not given")
        s = int(shifts) if isinstance(shifts, int | np.integer) else int(shifts[0])
        return reshape(roll(reshape(x, (-1,)), s, 0), x.shape)
    shifts_t, dims_t = _dims_arg(shifts), _dims_arg(dims)
    if len(shifts_t) != len(dims_t):
        raise ShapeError("roll", f"shifts {list(shifts_t)} and dims {list(dims_t)} must have "
                                 "the same length")
    out = x
    for s, d in zip(shifts_t, dims_t):
        d = normalize_dim("roll", d, x.ndim)
        n = x.shape[d]
        if n == 0 or s % n == 0:
            continue
        k = n - s % n
        lead: tuple[Any, ...] = (slice(None),) * d
        out = cat([_basic_getitem(out, lead + (slice(k, None),)),
                   _basic_getitem(out, lead + (slice(0, k),))], d)
    return clone(x) if out is x else out  # a new tensor, as PyTorch's (never x itself)


def repeat(input: TensorLike, *sizes: Any) -> Tensor:  # noqa: A002
    """torch's ``Tensor.repeat``: tile the data ``sizes[i]`` times along dim i."""
    x = as_tensor_arg(input)
    reps = _dims_arg(sizes[0] if len(sizes) == 1 and not isinstance(sizes[0], int | np.integer)
                     else sizes)
    if len(reps) < x.ndim:
        raise ShapeError("broadcast_to", f"repeat(): number of repeat dims {len(reps)} can "
                                         f"not be smaller than the tensor's {x.ndim}")
    if builtins.any(r < 0 for r in reps):
        raise ShapeError("broadcast_to", f"repeat(): negative repeats {list(reps)}")
    shape = (1,) * (len(reps) - x.ndim) + x.shape
    if builtins.all(r == 1 for r in reps):  # a copy, as PyTorch's (not a view of x)
        return clone(reshape(x, shape))
    y = reshape(x, tuple(v for s in shape for v in (1, s)))
    y = broadcast_to(y, tuple(v for r, s in zip(reps, shape) for v in (r, s)))
    return reshape(y, tuple(r * s for r, s in zip(reps, shape)))


def tile(input: TensorLike, dims: Any) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    reps = _dims_arg(dims)
    return repeat(x, (1,) * (x.ndim - len(reps)) + reps)


def repeat_interleave(input: TensorLike, repeats: Any = None, dim: int | None = None, *,  # noqa: A002
                      output_size: int | None = None) -> Tensor:
    """``torch.repeat_interleave``; with ``input`` alone, ``input`` holds the
    repeats and the result repeats their positions (``[2, 1]`` -> ``[0, 0, 1]``)."""
    if repeats is None:
        reps = as_tensor_arg(input)
        if reps.ndim != 1 or reps.dtype.is_floating_point or reps.dtype == bool_:
            raise RuntimeError(f"repeat_interleave(repeats): repeats must be a 1-d integer "
                               f"tensor, got {reps.dtype.name} of shape {list(reps.shape)}")
        positions = Tensor._leaf(np.arange(reps.shape[0], dtype=reps.dtype.np))
        return repeat_interleave(positions, reps, 0, output_size=output_size)
    x = as_tensor_arg(input)
    if dim is None:
        x, dim = reshape(x, (-1,)), 0
    d = normalize_dim("repeat_interleave", dim, x.ndim)
    n = x.shape[d]
    if isinstance(repeats, int | np.integer):
        reps = np.full(n, int(repeats), np.int64)
    else:
        reps = np.asarray(_host(repeats) if isinstance(repeats, Tensor) else repeats,
                          dtype=np.int64).reshape(-1)
        if reps.size == 1:
            reps = np.full(n, int(reps[0]), np.int64)
    if reps.shape != (n,) or (reps < 0).any():
        raise RuntimeError(f"repeat_interleave(): repeats must be non-negative and have "
                           f"the size of dimension {d} ({n}), got {list(reps)}")
    idx = np.repeat(np.arange(n, dtype=np.int64), reps)
    if output_size is not None and output_size != idx.size:
        raise RuntimeError(f"repeat_interleave(): output_size {output_size} does not match "
                           f"the repeats' sum {idx.size}")
    return index_select(x, d, Tensor._leaf(idx))


def narrow(input: TensorLike, dim: int, start: int, length: int) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    d = normalize_dim("narrow", dim, x.ndim)
    n = x.shape[d]
    s = int(start)
    if not -n <= s <= n:
        raise IndexError(f"narrow(): start {s} is out of range for dimension {d} of size {n}")
    s %= n if n else 1
    if length < 0 or s + length > n:
        raise ShapeError("slice", f"narrow(): start ({s}) + length ({length}) exceeds "
                                  f"dimension {d} of size {n}")
    return _basic_getitem(x, (slice(None),) * d + (slice(s, s + length),))


def unbind(input: TensorLike, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    x = as_tensor_arg(input)
    d = normalize_dim("unbind", dim, x.ndim)
    return tuple(mark_multi_output([_basic_getitem(x, (slice(None),) * d + (i,))
                                    for i in range(x.shape[d])], "Unbind"))


def movedim(input: TensorLike, source: Any, destination: Any) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    src = [normalize_dim("movedim", d, x.ndim) for d in _dims_arg(source)]
    dst = [normalize_dim("movedim", d, x.ndim) for d in _dims_arg(destination)]
    if len(src) != len(dst):
        raise ShapeError("permute", f"movedim(): source {list(src)} and destination "
                                    f"{list(dst)} must have the same length")
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ShapeError("permute", "movedim(): repeated dim in source or destination")
    perm: list[int | None] = [None] * x.ndim
    for s, t in zip(src, dst):
        perm[t] = s
    rest = iter(d for d in range(x.ndim) if d not in src)
    return permute(x, tuple(p if p is not None else next(rest) for p in perm))


moveaxis = movedim


def swapdims(input: TensorLike, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    return movedim(x, (dim0, dim1), (dim1, dim0)) if x.ndim else x


def diagonal(input: TensorLike, offset: int = 0, dim1: int = 0, dim2: int = 1  # noqa: A002
             ) -> Tensor:
    x = as_tensor_arg(input)
    a, b = normalize_dim("diagonal", dim1, x.ndim), normalize_dim("diagonal", dim2, x.ndim)
    if a == b:
        raise ShapeError("diagonal", f"dim1 and dim2 cannot be the same dimension ({a})")
    with untracked_views():
        out = _diagonal(x, offset, a, b)
    sizes, strides, start = geometry(x)
    start += offset * strides[b] if offset >= 0 else -offset * strides[a]
    keep = [d for d in range(x.ndim) if d not in (a, b)]
    return as_view(x, out, lambda p: _diagonal(p, offset, a, b),
                   tuple(sizes[d] for d in keep) + (out.shape[-1],),
                   tuple(strides[d] for d in keep) + (strides[a] + strides[b],), start)


def _diagonal(x: Tensor, offset: int, a: int, b: int) -> Tensor:
    y = movedim(x, (a, b), (-2, -1))
    n, m = y.shape[-2:]
    rows = np.arange(builtins.max(0, -offset), n)
    rows = rows[rows + offset < m]
    flat = reshape(y, y.shape[:-2] + (n * m,))
    return index_select(flat, -1, Tensor._leaf((rows * m + rows + offset).astype(np.int64)))


def t(input: TensorLike) -> Tensor:  # noqa: A002
    """The transpose of a matrix (0-d and 1-d: itself), a view (PyTorch's ``t``)."""
    x = as_tensor_arg(input)
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return permute(x, (1, 0)) if x.ndim == 2 else x


def select(input: TensorLike, dim: int, index: int) -> Tensor:  # noqa: A002
    """``input[..., index, ...]`` at dimension ``dim``: a view (PyTorch's ``select``)."""
    x = as_tensor_arg(input)
    d = normalize_dim("select", dim, x.ndim)
    return _basic_getitem(x, (slice(None),) * d + (int(index),))


def diag_embed(input: TensorLike, offset: int = 0, dim1: int = -2, dim2: int = -1  # noqa: A002
               ) -> Tensor:
    x = as_tensor_arg(input)
    if x.ndim == 0:
        raise ShapeError("diag_embed", "input must be at least 1-d")
    k = x.shape[-1]
    m = k + builtins.abs(offset)
    rows = np.arange(k) + builtins.max(0, -offset)
    pos = (rows * m + rows + offset).astype(np.int64)
    lead = x.shape[:-1]
    idx = broadcast_to(Tensor._leaf(pos.reshape((1,) * len(lead) + (k,))), x.shape)
    zeros = broadcast_to(_cast(0, x.dtype), lead + (m * m,))
    out = reshape(record(_SCATTER_ADD, (zeros, idx, x), {"dim": len(lead)}), lead + (m, m))
    a = normalize_dim("diag_embed", dim1, out.ndim)
    b = normalize_dim("diag_embed", dim2, out.ndim)
    if a == b:
        raise ShapeError("diag_embed", f"dim1 and dim2 cannot be the same dimension ({a})")
    return movedim(out, (-2, -1), (a, b))


def diag(input: TensorLike, diagonal: int = 0) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    if x.ndim == 1:
        return diag_embed(x, diagonal)
    if x.ndim == 2:
        return globals()["diagonal"](x, diagonal)
    raise ShapeError("diagonal", f"diag(): input must be 1-d or 2-d, got {fmt_shape(x.shape)}")


def embedding(input: TensorLike, weight: TensorLike, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """torch.nn.functional.embedding: rows of ``weight``; the ``padding_idx``
    row gets no gradient."""
    idx, w = _int_index("embedding", input), as_tensor_arg(weight)
    if max_norm is not None:
        raise NotImplementedError(f"embedding(): max_norm={max_norm} (renormalizing weight "
                                  f"rows in place, norm_type={norm_type}) is not supported")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding(): scale_grad_by_freq and sparse gradients are "
                                  "not supported")
    if w.ndim != 2:
        raise ShapeError("gather", f"embedding(): weight must be 2-d, got {fmt_shape(w.shape)}")
    n, dim = w.shape
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise ShapeError("gather", f"embedding(): padding_idx {padding_idx} must be within "
                                       f"the {n} embeddings")
        padding_idx %= n
    _check_host_range("embedding", idx, n, 0, wrap=False)
    k = idx.numel()
    rows = broadcast_to(reshape(idx, (k, 1)), (k, dim))
    out = gather(w, 0, rows)
    if padding_idx is not None:
        pad = reshape(eq(idx, padding_idx), (k, 1))
        out = _where(pad, out.detach(), out)
    return reshape(out, idx.shape + (dim,))


def meshgrid(*tensors: TensorLike, indexing: str = "ij") -> tuple[Tensor, ...]:
    ts = [as_tensor_arg(t) for t in (tensors[0] if len(tensors) == 1 and isinstance(
        tensors[0], list | tuple) else tensors)]
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid(): indexing must be 'ij' or 'xy', got {indexing!r}")
    for t in ts:
        if t.ndim > 1:
            raise ShapeError("reshape", "meshgrid(): expects 0-d or 1-d tensors")
    sizes = [t.numel() for t in ts]
    if indexing == "xy" and len(ts) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, t in enumerate(ts):
        pos = i
        if indexing == "xy" and len(ts) >= 2 and i < 2:
            pos = 1 - i
        shape = [1] * len(ts)
        shape[pos] = t.numel()
        out.append(broadcast_to(reshape(t, tuple(shape)), tuple(sizes)))
    return tuple(out)


def tensor_split(input: TensorLike, indices_or_sections: Any, dim: int = 0  # noqa: A002
                 ) -> tuple[Tensor, ...]:
    x = as_tensor_arg(input)
    d = normalize_dim("split", dim, x.ndim)
    n = x.shape[d]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = _host(indices_or_sections).tolist()
    if isinstance(indices_or_sections, int | np.integer):
        k = int(indices_or_sections)
        if k <= 0:
            raise ShapeError("split", f"tensor_split(): number of sections must be positive, "
                                      f"got {k}")
        sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
    else:
        bounds = [0] + [builtins.min(builtins.max(int(i) + (n if i < 0 else 0), 0), n)
                        for i in indices_or_sections] + [n]
        sizes = [builtins.max(b - a, 0) for a, b in zip(bounds, bounds[1:])]
        starts = bounds[:-1]
        lead: tuple[Any, ...] = (slice(None),) * d
        return tuple(_basic_getitem(x, lead + (slice(s, s + k),))
                     for s, k in zip(starts, sizes))
    return tuple(mark_multi_output(split(x, sizes, d), None)) if len(sizes) > 1 else (x,)


# ---- JAX's functional updates: x.at[idx].set(v), .add(v), ... ----

class _AtIndex:
    """``x.at``: ``x.at[idx]`` names the elements an update writes."""

    __slots__ = ("_x",)

    def __init__(self, x: Tensor):
        self._x = x

    def __getitem__(self, index: Any) -> _AtUpdate:
        return _AtUpdate(self._x, index)


_AT_MODES = (None, "promise_in_bounds", "clip", "drop", "fill")


def _fill_value(dtype: Any, fill: Any) -> Any:
    """JAX's default fill of ``get(mode="fill")``: NaN for floats, the
    smallest value of a signed integer type, the largest of an unsigned one,
    True for bool."""
    if fill is not None:
        return fill
    if dtype.is_floating_point:
        return float("nan")
    if dtype is bool_:
        return True
    info = np.iinfo(dtype.np)
    return int(info.min if info.min < 0 else info.max)


class _AtUpdate:
    """JAX's ``x.at[idx]`` methods, out of place: a new tensor, ``x`` is kept.
    Repeated positions combine as JAX's scatters do: ``add``/``multiply``/
    ``min``/``max`` apply every update, ``set`` keeps the last one.

    Out-of-bounds integer indices follow JAX (after negative indices count
    from the end): ``get`` clamps them by default (``mode="clip"``, also
    ``"promise_in_bounds"``) or gives ``fill_value`` (``mode="fill"``/
    ``"drop"``: NaN, the integer minimum or True by default); the updates
    drop them by default (``mode="drop"``/``"fill"``) or clamp them
    (``mode="clip"``/``"promise_in_bounds"``)."""

    __slots__ = ("_x", "_index")

    def __init__(self, x: Tensor, index: Any):
        self._x, self._index = x, index

    def _bounded(self, mode: str, fill: Any = None) -> tuple[Tensor, Any, list[int]]:
        """``(x', index', padded dims)``: every integer index in bounds, an
        out-of-bounds one clamped (``mode="clip"``) or sent to one more
        element appended along its dimension (filled with ``fill``), which
        an update's result drops."""
        x = self._x
        index = self._index if isinstance(self._index, tuple) else (self._index,)
        consumed = builtins.sum(1 for i in index if i is not None and i is not Ellipsis
                                and not (isinstance(i, np.ndarray | Tensor)
                                         and i.dtype in (np.bool_, bool_)))
        if builtins.any(isinstance(i, np.ndarray | Tensor) and i.dtype in (np.bool_, bool_)
                        for i in index):
            return x, self._index, []  # (a mask is in bounds or raises for its shape)
        out: list[Any] = []
        padded: list[int] = []
        d = 0
        for i in index:
            if i is None:
                out.append(i)
                continue
            if i is Ellipsis:
                out.append(i)
                d += x.ndim - consumed
                continue
            if isinstance(i, slice):
                out.append(i)
                d += 1
                continue
            if d >= x.ndim:
                raise IndexError(f"x.at[...]: too many indices for a tensor of rank {x.ndim}")
            n = x.shape[d]
            if isinstance(i, Tensor):
                k = convert(i, int64)
                k = _where(lt(k, 0), k + n, k)
                inside = logical_and(ge(k, 0), lt(k, n))
                if mode == "clip":
                    k = clamp(k, 0, builtins.max(n - 1, 0))
                else:
                    k = _where(inside, k, _cast(n, int64))
            else:
                k = np.asarray(i)
                if k.dtype.kind not in "iu":
                    out.append(i)
                    d += 1
                    continue
                k = np.where(k < 0, k + n, k).astype(np.int64)
                if mode == "clip":
                    k = np.clip(k, 0, builtins.max(n - 1, 0))
                else:
                    k = np.where((k >= 0) & (k < n), k, n)
            if mode != "clip" and d not in padded:
                pad_shape = list(x.shape)
                pad_shape[d] = 1
                slot = reshape(_cast(_fill_value(x.dtype, fill), x.dtype), (1,) * x.ndim)
                x = cat([x, broadcast_to(slot, tuple(pad_shape))], d)
                padded.append(d)
            out.append(k)
            d += 1
        return x, tuple(out), padded

    def _unpadded(self, out: Tensor, padded: list[int]) -> Tensor:
        for d in padded:
            out = out.narrow(d, 0, self._x.shape[d])
        return out

    def get(self, *, mode: str | None = None, fill_value: Any = None,
            indices_are_sorted: bool = False, unique_indices: bool = False) -> Tensor:
        del indices_are_sorted, unique_indices  # (hints: the result is the same)
        _check_mode(mode)
        if mode in ("fill", "drop"):
            x, index, _ = self._bounded("fill", fill_value)
            return getitem(x, index)
        x, index, _ = self._bounded("clip")
        value = getitem(x, index)
        if not self._may_be_out():
            return value
        # JAX's derivative of a clamped gather drops the out-of-bounds
        # elements (its transpose is a scatter that drops them): the
        # gradient flows through the in-bounds ones only
        x0, index0, _ = self._bounded("fill", 0)
        ones = broadcast_to(reshape(_cast(True, bool_), (1,) * self._x.ndim), self._x.shape)
        m, index_m, _ = _AtUpdate(ones, self._index)._bounded("fill", False)
        return _where(getitem(m, index_m), getitem(x0, index0), detach(value))

    def _may_be_out(self) -> bool:
        """Whether an integer index may be out of bounds (a lazy one may)."""
        index = self._index if isinstance(self._index, tuple) else (self._index,)
        if builtins.any(i is Ellipsis or i is None for i in index):
            return builtins.any(isinstance(i, Tensor) for i in index) or \
                builtins.any(not isinstance(i, slice) and i is not Ellipsis and i is not None
                             for i in index)
        for d, i in enumerate(index):
            if isinstance(i, Tensor):
                return True
            if isinstance(i, slice) or d >= self._x.ndim:
                continue
            k = np.asarray(i)
            n = self._x.shape[d]
            if k.dtype.kind in "iu" and ((k < -n) | (k >= n)).any():
                return True
        return False

    def _flat(self) -> Any:
        pos, rest = _positions(self._x, self._index)
        if pos is None:  # basic indexing only: the positions are known on the host
            pos = np.arange(self._x.numel(), dtype=np.int64).reshape(self._x.shape)[rest]
        return pos

    def _update(self, hints: dict[str, Any], apply: Any) -> Tensor:
        _check_hints(hints)
        mode = hints.get("mode")
        x, index, padded = self._bounded("clip" if mode in ("clip", "promise_in_bounds")
                                         else "drop", 0)
        return self._unpadded(apply(_AtUpdate(x, index)), padded)

    def set(self, values: TensorLike, **hints: Any) -> Tensor:
        return self._update(hints, lambda u: u._set(values))

    def _set(self, values: TensorLike) -> Tensor:
        if not is_advanced(self._index):
            return _put(self._x, self._flat(), values)
        pos, _ = _positions(self._x, self._index)
        if isinstance(pos, Tensor):  # a lazy index: its values are not read
            return _put_lazy(self._x, pos, values)
        return setitem_value(self._x, self._index, values)

    def _scatter(self, values: TensorLike, reduce: str) -> Tensor:
        x = self._x
        pos = self._flat()
        shape = tuple(pos.shape)
        v = _cast(as_tensor_arg(values), x.dtype)
        if v.shape != shape:
            v = broadcast_to(v, shape)
        p = Tensor._leaf(np.ascontiguousarray(pos).reshape(-1)) \
            if isinstance(pos, np.ndarray) else reshape(pos, (-1,))
        flat = reshape(x, (-1,))
        out = scatter_add(flat, 0, p, reshape(v, (-1,))) if reduce == "sum" else \
            scatter_reduce(flat, 0, p, reshape(v, (-1,)), reduce)
        return reshape(out, x.shape)

    def add(self, values: TensorLike, **hints: Any) -> Tensor:
        return self._update(hints, lambda u: u._scatter(values, "sum"))

    def subtract(self, values: TensorLike, **hints: Any) -> Tensor:
        return self._update(hints, lambda u: u._scatter(-as_tensor_arg(values), "sum"))

    def multiply(self, values: TensorLike, **hints: Any) -> Tensor:
        return self._update(hints, lambda u: u._scatter(values, "prod"))

    mul = multiply  # (JAX's alias)

    def divide(self, values: TensorLike, **hints: Any) -> Tensor:
        if not self._x.dtype.is_floating_point:  # (1 / v cast to an integer type is 0)
            raise TypeError(f"x.at[...].divide: {self._x.dtype.name} is not a floating-point "
                            "dtype; divide a float tensor")
        return self._update(hints, lambda u: u._scatter(1.0 / as_tensor_arg(values), "prod"))

    def power(self, values: TensorLike, **hints: Any) -> Tensor:
        """``x.at[idx].power(v)``: ``x[idx] ** v`` (JAX's; a repeated index
        raises, as the result would depend on the order). A lazy index
        (computed, or under ``vmap``/``pf.compile``) selecting one element
        cannot repeat; one selecting more raises, its repeats unknown."""
        return self._elementwise(lambda v: v ** as_tensor_arg(values), "power", hints)

    def apply(self, func: Any, **hints: Any) -> Tensor:
        """``x.at[idx].apply(f)``: ``f`` (elementwise) on ``x[idx]`` (JAX's; a
        repeated index, which JAX's applies ``f`` to as often, raises, as
        ``power``)."""
        return self._elementwise(func, "apply", hints)

    def _elementwise(self, func: Any, what: str, hints: dict[str, Any]) -> Tensor:
        def apply(u: _AtUpdate) -> Tensor:
            pos = u._flat()
            if isinstance(pos, Tensor):
                parts = u._index if isinstance(u._index, tuple) else (u._index,)
                if pos.numel() != 1 and any(
                        (p.numel() if isinstance(p, Tensor) else np.size(p)) != 1
                        for p in parts if isinstance(p, Tensor | np.ndarray | list)):
                    raise NotImplementedError(
                        f"x.at[...].{what} with a lazy index array of more than one element "
                        "(its repeats, whose result depends on the order, cannot be "
                        "checked): index with scalars and slices, or give the index as a "
                        "host array")
                picked = index_select(reshape(u._x, (-1,)), 0, reshape(pos, (-1,)))
                return _put_lazy(u._x, pos, func(reshape(picked, tuple(pos.shape))))
            if np.unique(pos).size != pos.size:
                raise NotImplementedError(f"x.at[...].{what} with repeated indices is not "
                                          "supported")
            return u._set(func(getitem(u._x, u._index)))
        return self._update(hints, apply)

    def min(self, values: TensorLike, **hints: Any) -> Tensor:
        return self._update(hints, lambda u: u._scatter(values, "amin"))

    def max(self, values: TensorLike, **hints: Any) -> Tensor:
        return self._update(hints, lambda u: u._scatter(values, "amax"))


def _put_lazy(x: Tensor, pos: Tensor, values: TensorLike) -> Tensor:
    """``_put`` at lazy flat positions (under ``vmap`` or ``pf.compile`` an
    index's values are not read on the host). The last write of a duplicate
    position wins, as ``_put``: a stable sort of the positions marks each
    update that no later update overwrites, and only those are scattered."""
    v = _cast(as_tensor_arg(values), x.dtype)
    shape = tuple(pos.shape)
    if v.shape != shape:
        try:
            v = broadcast_to(v, shape)
        except ShapeError:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(v.shape)} cannot "
                               f"be broadcast to indexing result of shape {list(shape)}"
                               ) from None
    k = int(np.prod(shape, dtype=np.int64))
    if not k:
        return x
    n = x.numel()
    p = reshape(pos, (-1,))
    ordered, perm = record(_SORT, (p,), {"dim": 0, "descending": False})  # stable
    # in sorted order an update is the last of its position when the next differs
    last = cat([convert(ne(ordered[1:], ordered[:-1]), int64), _cast(1, int64).reshape(1)])
    is_last = ge(record(_SCATTER_ADD, (broadcast_to(_cast(0, int64), (k,)), perm, last),
                        {"dim": 0}), 1)
    vf = _where(is_last, reshape(v, (-1,)), _cast(0, x.dtype))
    placed = record(_SCATTER_ADD, (broadcast_to(_cast(0, x.dtype), (n,)), p, vf), {"dim": 0})
    count = record(_SCATTER_ADD, (broadcast_to(_cast(0, int64), (n,)), p,
                                  broadcast_to(_cast(1, int64), (k,))), {"dim": 0})
    return reshape(_where(ge(count, 1), placed, reshape(x, (-1,))), x.shape)


def _check_mode(mode: Any) -> None:
    if mode not in _AT_MODES:
        raise ValueError(f"x.at[...]: mode must be one of {_AT_MODES[1:]} or None, got "
                         f"{mode!r}")


def _check_hints(hints: dict[str, Any]) -> None:
    """JAX's scatter keywords: ``indices_are_sorted``/``unique_indices`` are
    hints (the result is the same); ``mode`` how out-of-bounds indices go."""
    unknown = set(hints) - {"indices_are_sorted", "unique_indices", "mode"}
    if unknown:
        raise TypeError(f"x.at[...]: unexpected keyword arguments {sorted(unknown)}")
    _check_mode(hints.get("mode"))


def _at(self: Tensor) -> _AtIndex:
    """``x.at[idx].set(v)`` and JAX's other functional updates."""
    return _AtIndex(self)


# ---- Tensor methods ----

INDEXING_METHODS = (
    "gather scatter scatter_add scatter_reduce index_select take_along_dim take put index_put "
    "index_add index_copy index_fill masked_fill masked_select masked_scatter nonzero argwhere "
    "tril triu flip fliplr flipud roll repeat tile repeat_interleave narrow unbind movedim "
    "moveaxis swapdims diagonal diag diag_embed tensor_split select t").split()


def _set_tensor_methods() -> None:
    api = globals()
    for name in INDEXING_METHODS:
        setattr(Tensor, name, api[name])
    setattr(Tensor, "__getitem__", getitem)  # noqa: B010  (replaces ops' basic one)
    Tensor.mT = property(_matrix_transposed)  # type: ignore[attr-defined]
    Tensor.at = property(_at)  # type: ignore[attr-defined]


def _matrix_transposed(self: Tensor) -> Tensor:
    """``x.mT``: the last two dimensions swapped (a view)."""
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor.")
    return swapdims(self, -2, -1)


_set_tensor_methods()

__all__ = [*INDEXING_METHODS, "getitem", "one_hot", "embedding", "meshgrid"]
