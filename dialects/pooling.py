"""Max pooling: ``max_pool`` and its transpose ``max_pool_grad``.

- ``max_pool(x; kernel, stride, padding, dilation, ceil_mode)`` -> (values,
  int64 offsets): windows over the last ``len(kernel)`` dims of ``x`` (any
  number of leading dims), torch's ``max_pool{1,2,3}d`` window arithmetic
  (symmetric ``padding`` with -inf, ``ceil_mode`` keeps a last partial window
  that starts inside the input or its left padding). Each window's choice is
  torch's: among its elements inside the input, in row-major kernel order,
  the last NaN, else the first maximum; a window whose elements are all -inf
  chooses its first element inside the input. ``values`` is the chosen
  element, ``offsets`` its position in the window (row-major over the kernel).
- ``max_pool_grad(ct, offsets; kernel, stride, padding, dilation, ceil_mode,
  size)``: the input-shaped (spatial ``size``) sum of each ``ct`` element at
  its window's chosen position, added in output order (torch's
  ``max_pool2d_with_indices_backward``, bit for bit).

The kernels run over one strided view of the input per kernel offset (a
running max and compare, no copy to a window layout); the backward writes one
strided view per offset. Backends without the ops run their decompositions
(the windows stacked by strided slices, argmax, gather; pad-and-add).

Plain Python: importing this module must not import xDSL.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import ad, native_kernels
from .dtypes import BOOL, FLOAT, DType, int64
from .elementwise import MAXIMUM_KEEPS_SECOND
from .opdef import OpDef, Shape, ShapeError, define, fmt_shape
from .scan import _isnan

_ATTRS = {"kernel": "ints", "stride": "ints", "padding": "ints", "dilation": "ints",
          "ceil_mode": "bool"}


def pool_out_size(op: str, n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """The number of windows along one dim (torch's pooling arithmetic)."""
    span = d * (k - 1) + 1
    num = n + 2 * p - span
    if num < 0:
        raise ShapeError(op, f"the window (kernel {k}, dilation {d}) is larger than the "
                             f"padded input ({n} + 2*{p})")
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= n + p:  # the last window must start inside
        out -= 1
    return out


def _check_window(op: str, rank: int, kernel, stride, padding, dilation) -> int:
    nsp = len(kernel)
    if not nsp or not len(stride) == len(padding) == len(dilation) == nsp:
        raise ShapeError(op, f"kernel {list(kernel)}, stride {list(stride)}, padding "
                             f"{list(padding)} and dilation {list(dilation)} need one "
                             "entry per pooled dim (at least one)")
    if rank < nsp:
        raise ShapeError(op, f"pools the last {nsp} dims of a rank-{rank} operand")
    if any(v <= 0 for v in (*kernel, *stride, *dilation)) or any(p < 0 for p in padding):
        raise ShapeError(op, "kernel, stride and dilation must be positive, padding "
                             "non-negative")
    if any(2 * p > k for p, k in zip(padding, kernel)):
        raise ShapeError(op, f"padding {list(padding)} must be at most half the kernel "
                             f"{list(kernel)}")
    return nsp


def _out_sizes(op: str, size: Sequence[int], kernel, stride, padding, dilation,
               ceil_mode: bool) -> tuple[int, ...]:
    return tuple(pool_out_size(op, n, k, s, p, d, ceil_mode)
                 for n, k, s, p, d in zip(size, kernel, stride, padding, dilation))


def _max_pool_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (x,), (d,) = shapes, dtypes
    nsp = _check_window("max_pool", len(x), attrs["kernel"], attrs["stride"],
                        attrs["padding"], attrs["dilation"])
    if d.category == BOOL:
        raise ShapeError("max_pool", "is not defined on bool tensors")
    out = x[:len(x) - nsp] + _out_sizes("max_pool", x[len(x) - nsp:], attrs["kernel"],
                                        attrs["stride"], attrs["padding"],
                                        attrs["dilation"], attrs["ceil_mode"])
    return ((out, d), (out, int64))


def _max_pool_grad_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (ct, off), (d, od) = shapes, dtypes
    size = tuple(attrs["size"])
    nsp = _check_window("max_pool_grad", len(ct), attrs["kernel"], attrs["stride"],
                        attrs["padding"], attrs["dilation"])
    if d.category != FLOAT:
        raise ShapeError("max_pool_grad", f"expects a floating-point cotangent, got {d.name}")
    if od is not int64 or off != ct:
        raise ShapeError("max_pool_grad", f"offsets must be int64 of the cotangent's shape "
                                          f"{fmt_shape(ct)}, got {od.name} {fmt_shape(off)}")
    if len(size) != nsp:
        raise ShapeError("max_pool_grad", f"size {list(size)} needs {nsp} entries")
    out = _out_sizes("max_pool_grad", size, attrs["kernel"], attrs["stride"],
                     attrs["padding"], attrs["dilation"], attrs["ceil_mode"])
    if tuple(ct[len(ct) - nsp:]) != out:
        raise ShapeError("max_pool_grad", f"a cotangent of spatial shape "
                                          f"{fmt_shape(ct[len(ct) - nsp:])} does not pool "
                                          f"an input of size {list(size)} (expected "
                                          f"{fmt_shape(out)})")
    return ((ct[:len(ct) - nsp] + size, d),)


# ---- kernels ----

def _geometry(size: Sequence[int], kernel, stride, padding, dilation, ceil_mode: bool
              ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The output sizes and the padding after each dim (left padding plus
    what the last window needs past the input, ceil_mode's partial window)."""
    out = _out_sizes("max_pool", size, kernel, stride, padding, dilation, ceil_mode)
    high = tuple(max((o - 1) * s + d * (k - 1) + 1 - n - p, 0)
                 for o, n, k, s, p, d in zip(out, size, kernel, stride, padding, dilation))
    return out, high


def _views(xp: np.ndarray, kernel, stride, dilation, out) -> list[np.ndarray]:
    """One strided view of the padded input per kernel offset, row-major."""
    lead = (slice(None),) * (xp.ndim - len(kernel))
    return [xp[lead + tuple(slice(i * d, i * d + (o - 1) * s + 1, s)
                            for i, d, o, s in zip(off, dilation, out, stride))]
            for off in np.ndindex(*kernel)]


def _lowest(dtype: np.dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _first_inside(kernel, stride, padding, dilation, out) -> np.ndarray:
    """Per output position, the row-major kernel offset of its first element
    inside the input (torch starts each window's search there)."""
    first = np.zeros(out, np.int64)
    nsp = len(out)
    for i, (k, s, p, d, o) in enumerate(zip(kernel, stride, padding, dilation, out)):
        at = np.arange(o) * s - p
        skip = np.where(at < 0, -(at // d), 0).reshape((o,) + (1,) * (nsp - 1 - i))
        first = first * k + skip
    return first


_MAXIMUM_KEEPS_SECOND = MAXIMUM_KEEPS_SECOND  # np.maximum keeps b on a signed-zero tie


def _select_into(vals: np.ndarray, v: np.ndarray, hit: np.ndarray) -> None:
    """``vals = where(hit, v, vals)`` by the elements' bits (numpy's where
    branches per element)."""
    bits = np.dtype(f"i{vals.itemsize}")
    mask = np.negative(hit.view(np.int8), dtype=bits)
    vb = vals.view(bits)
    np.bitwise_and(np.bitwise_xor(vb, np.ascontiguousarray(v).view(bits)), mask, out=mask)
    np.bitwise_xor(vb, mask, out=vb)


def _native_4d(a: np.ndarray) -> np.ndarray | None:
    """``a`` (2 or more leading dims, pooled H and W last) as a 4-d view for
    the C loops, or None (more than two leading dims that do not merge)."""
    if a.ndim == 4:
        return a
    if a.ndim < 4:
        return a.reshape((1,) * (4 - a.ndim) + a.shape)
    try:  # a view when the leading dims merge; else the numpy body
        return a.view().reshape((-1,) + a.shape[a.ndim - 3:], copy=False)
    except (ValueError, AttributeError, TypeError):
        return None


def _native_geometry(kernel, stride, padding, dilation, size) -> tuple[int, ...]:
    return (*kernel, *stride, *padding, *dilation, *size)


def _max_pool(x: np.ndarray, kernel, stride, padding, dilation, ceil_mode):
    nsp = len(kernel)
    size, lead = x.shape[x.ndim - nsp:], x.shape[:x.ndim - nsp]
    out, high = _geometry(size, kernel, stride, padding, dilation, ceil_mode)
    native = native_kernels.KERNELS
    if native is not None and nsp == 2 and x.dtype == np.float32 and x.ndim >= 3:
        # one C loop nest (_kernels.c: the same choice per window), the results
        # in the input's memory order as below
        order = None if x.flags.c_contiguous else _axis_order(x)
        vals = _in_order(np.empty, lead + out, x.dtype, order)
        idx = _in_order(np.empty, lead + out, np.int64, order)
        views = [_native_4d(a) for a in (x, vals, idx)]
        if all(v is not None for v in views):
            native.max_pool2d_f32(*views, _native_geometry(kernel, stride, padding, dilation,
                                                           size))
            return vals, idx
    count = math.prod(kernel)
    padded = any(padding) or any(high)
    if padded:
        xp = np.full(lead + tuple(n + p + h for n, p, h in zip(size, padding, high)),
                     _lowest(x.dtype), x.dtype)
        xp[(...,) + tuple(slice(p, p + n) for p, n in zip(padding, size))] = x
    else:
        xp = x
    views = _views(xp, kernel, stride, dilation, out)
    shape = lead + out
    if 0 in shape:
        return np.zeros(shape, x.dtype), np.zeros(shape, np.int64)
    small = np.int8 if count <= 127 else np.int64  # the running offsets: 1 byte a step
    if padded:  # padded elements never win: start at -inf and torch's first inside
        vals = np.full(shape, _lowest(x.dtype), x.dtype)
        idx = np.empty(shape, small)  # C order (astype of a broadcast keeps its
        idx[...] = _first_inside(kernel, stride, padding, dilation, out)  # zero strides inner)
        start = 0
    else:
        # the buffers in the input's own memory order: on a batch-innermost input
        # (a conv's (C, H, W, N) result seen as (N, C, H, W)) every pass then runs
        # along N instead of short rows of Wo with a transposed write
        # ((64, 32, 14, 14), 2x2: 1367 -> 180 us; C order unchanged)
        vals, start = views[0].copy(order="K"), 1
        idx = np.zeros_like(vals, dtype=small)
    hit = np.empty_like(vals, dtype=bool)
    step = np.empty_like(idx)
    exact = x.dtype.kind != "f" or _MAXIMUM_KEEPS_SECOND
    for j in range(start, count):
        v = views[j]
        np.greater(v, vals, out=hit)  # strictly: the first maximum stays
        if exact:  # on a tie (+0.0 and -0.0) the earlier element stays, as torch's;
            np.maximum(v, vals, out=vals)  # NaN propagates: found below
        else:
            _select_into(vals, v, hit)
        np.multiply(hit, small(j), out=step)  # j exceeds every earlier offset
        np.maximum(idx, step, out=idx)
    if x.dtype.kind == "f":
        nan = np.isnan(vals)
        if not exact:  # the select never takes a NaN (no compare is true for it)
            for v in views:
                nan |= np.isnan(v)
        if nan.any():  # torch's choice there: the last NaN (rare: a second pass)
            for j in range(count):
                last = nan & np.isnan(views[j])
                idx[last] = j
                vals[last] = views[j][last]
    return vals, idx.astype(np.int64, copy=False)


def _axis_order(a: np.ndarray) -> tuple[int, ...]:
    """``a``'s axes from the largest stride to the smallest (C order for a
    C-contiguous array; size-1 axes, whose stride says nothing, last)."""
    return tuple(sorted(range(a.ndim),
                        key=lambda i: -abs(a.strides[i]) if a.shape[i] > 1 else 1))


def _in_order(make, shape: Sequence[int], dtype, order: tuple[int, ...] | None
              ) -> np.ndarray:
    """``make(shape, dtype)`` laid out with its axes in memory ``order`` (None:
    C order)."""
    if order is None:
        return make(shape, dtype)
    buf = make(tuple(shape[i] for i in order), dtype)
    return buf.transpose(np.argsort(order))


def _max_pool_grad(ct: np.ndarray, offsets: np.ndarray, kernel, stride, padding, dilation,
                   ceil_mode, size):
    nsp = len(kernel)
    lead = ct.shape[:ct.ndim - nsp]
    out, high = _geometry(size, kernel, stride, padding, dilation, ceil_mode)
    count = math.prod(kernel)
    # windows tiling the input exactly (stride = kernel, no dilation or padding):
    # every element is written once, by its own offset's view, so no zero fill
    tiled = not any(padding) and all(
        s == k and d == 1 and o * k == n
        for s, k, d, o, n in zip(stride, kernel, dilation, out, size))
    native = native_kernels.KERNELS
    order = None if offsets.flags.c_contiguous else _axis_order(offsets)
    if native is not None and nsp == 2 and ct.dtype == np.float32 and ct.ndim >= 3 and \
            (order is None or order[-1] == ct.ndim - 1):
        # one C loop (_kernels.c), the cotangents added in the same order; rows
        # along W only (batch-innermost offsets: the numpy passes below measured
        # faster, 285 against 428 us on (64, 32, 14, 14))
        g = _in_order(np.empty if tiled else np.zeros, lead + tuple(size), ct.dtype, order)
        if order is None and not ct.flags.c_contiguous:
            # a batch-innermost cotangent (a conv's input gradient): one transposing
            # copy, then rows (reading it strided: 0.95 against ~0.4 ms, CNN step)
            ct = np.ascontiguousarray(ct)
        views = [_native_4d(a) for a in (ct, offsets, g)]
        if all(v is not None for v in views):
            bad = native.max_pool2d_grad_f32(*views, _native_geometry(
                kernel, stride, padding, dilation, size), tiled)
            if bad >= 0:
                raise IndexError(f"pyflame.max_pool_grad: window offsets must lie in [0, "
                                 f"{count}), got {offsets.reshape(-1)[bad]}")
            return g
    if offsets.size and (offsets.min() < 0 or offsets.max() >= count):
        raise IndexError(f"pyflame.max_pool_grad: window offsets must lie in [0, {count}), "
                         f"got values in [{offsets.min()}, {offsets.max()}]")
    full = tuple(n + p + h for n, p, h in zip(size, padding, high))
    # the gradient and the scratch in the offsets' memory order (the forward
    # input's, see _max_pool), the cotangent copied into it where it differs
    g = _in_order(np.empty if tiled else np.zeros, lead + full, ct.dtype, order)
    if ct.size:
        views = _views(g, kernel, stride, dilation, out)
        hit = _in_order(np.empty, ct.shape, bool, order)
        # a select by bits: ct where chosen, +0.0 elsewhere (ct * mask would turn
        # an inf cotangent into NaN)
        bits = np.dtype(f"i{ct.itemsize}")
        mask = _in_order(np.empty, ct.shape, bits, order)
        if not (ct.flags.c_contiguous if order is None
                else ct.transpose(order).flags.c_contiguous):
            dense = _in_order(np.empty, ct.shape, ct.dtype, order)
            dense[...] = ct
            ct = dense
        ctb = ct.view(bits)
        if count <= 127:  # one narrowing pass, then each compare reads 1 byte, not 8
            offsets = offsets.astype(np.int8)
        # descending offsets: where windows overlap, an input element receives its
        # cotangents in output order (a later window reaches it at a smaller offset)
        for j in range(count - 1, -1, -1):
            np.equal(offsets, j, out=hit)
            np.negative(hit.view(np.int8), out=mask, casting="unsafe")
            np.bitwise_and(mask, ctb, out=mask)
            sel = mask.view(ct.dtype)
            if tiled:  # 0 + ct, as torch's accumulation into zeros (-0.0 -> +0.0)
                np.add(sel, ct.dtype.type(0), out=views[j])
            else:
                np.add(views[j], sel, out=views[j])
    elif tiled:
        g[...] = 0
    if any(padding) or any(high):
        g = np.ascontiguousarray(g[(...,) + tuple(slice(p, p + n)
                                                  for p, n in zip(padding, size))])
    return g


# ---- decompositions (what a backend without the ops runs) ----

def _window_stack(b, xp, kernel, stride, dilation, out):
    """The windows of the (padded) ``xp`` stacked on a new leading dim, one
    strided slice per kernel offset in row-major order."""
    shape = tuple(b.shape(xp))
    lead = len(shape) - len(kernel)
    parts = []
    for off in np.ndindex(*kernel):
        first = [i * d for i, d in zip(off, dilation)]
        v = b.slice(xp, start=(0,) * lead + tuple(first),
                    limit=shape[:lead] + tuple(a + (o - 1) * s + 1
                                               for a, o, s in zip(first, out, stride)),
                    stride=(1,) * lead + tuple(stride))
        parts.append(b.reshape(v, shape=(1, *b.shape(v))))
    return b.concat(*parts, dim=0) if len(parts) > 1 else parts[0]


def _pad_spatial(b, v, padding, high):
    nsp = len(padding)
    lead = len(b.shape(v)) - nsp
    return b.pad(v, low=(0,) * lead + tuple(padding), high=(0,) * lead + tuple(high),
                 interior=(0,) * (lead + nsp))


def _max_pool_decomposition(b, inputs, kernel, stride, padding, dilation, ceil_mode):
    (x,) = inputs
    nsp = len(kernel)
    shape = tuple(b.shape(x))
    size = shape[len(shape) - nsp:]
    out, high = _geometry(size, kernel, stride, padding, dilation, ceil_mode)
    padded = any(padding) or any(high)
    xp = x
    inside = None
    if padded:  # -inf around the input: pad zeros, then select by padded ones
        ones = ad.broadcast(b, b.scalar(1, like=x), shape)
        inside = _pad_spatial(b, ones, padding, high)
        xp = b.where(b.ne(inside, b.scalar(0, like=x)), _pad_spatial(b, x, padding, high),
                     b.scalar(float(_lowest(b.dtype(x).np)), like=x))
    windows = _window_stack(b, xp, kernel, stride, dilation, out)
    count = math.prod(kernel)
    offset = b.argmax(windows, dim=0, keepdim=False)
    if b.dtype(x).category == FLOAT:  # torch's choice: the last NaN, else the first max
        order = b.iota(shape=(count,) + (1,) * (len(shape)), dim=0, dtype=int64)
        nan = _isnan(b, windows)
        last = b.max(b.where(nan, ad.broadcast(b, order, b.shape(windows)),
                             b.scalar(-1, like=offset)), dims=(0,), keepdim=False)
        offset = b.where(b.ge(last, b.scalar(0, like=last)), last, offset)
    values = b.reshape(b.gather(windows, b.reshape(offset, shape=(1, *b.shape(offset))),
                                dim=0), shape=b.shape(offset))
    if inside is not None:  # all -inf: torch's first element inside the input
        first = b.argmax(_window_stack(b, inside, kernel, stride, dilation, out), dim=0,
                         keepdim=False)
        low = b.scalar(float(_lowest(b.dtype(x).np)), like=x)
        offset = b.where(b.eq(values, low), first, offset)
    return [values, offset]


def _max_pool_grad_decomposition(b, inputs, kernel, stride, padding, dilation, ceil_mode,
                                 size):
    ct, offsets = inputs
    nsp = len(kernel)
    shape = tuple(b.shape(ct))
    lead = len(shape) - nsp
    out, high = _geometry(size, kernel, stride, padding, dilation, ceil_mode)
    full = tuple(n + p + h for n, p, h in zip(size, padding, high))
    zero = b.scalar(0, like=ct)
    acc = ad.zeros(b, shape[:lead] + full, ct)
    offs = list(np.ndindex(*kernel))
    for j in range(len(offs) - 1, -1, -1):  # output order where windows overlap
        sel = b.where(b.eq(offsets, b.scalar(j, like=offsets)), ct, zero)
        first = [i * d for i, d in zip(offs[j], dilation)]
        placed = b.pad(sel, low=(0,) * lead + tuple(first),
                       high=(0,) * lead + tuple(n - a - (o - 1) * s - 1 for n, a, o, s in
                                                zip(full, first, out, stride)),
                       interior=(0,) * lead + tuple(s - 1 for s in stride))
        acc = b.add(acc, placed)
    if any(padding) or any(high):
        acc = b.slice(acc, start=(0,) * lead + tuple(padding),
                      limit=shape[:lead] + tuple(p + n for p, n in zip(padding, size)),
                      stride=(1,) * len(shape))
    return [acc]


def window_gather(b, x, offsets, kernel, stride, padding, dilation, ceil_mode):
    """``x`` (input-shaped) read at each window's ``offsets``: the forward's
    ``values`` for a given choice (max_pool's JVP, max_pool_grad's transpose)."""
    nsp = len(kernel)
    shape = tuple(b.shape(x))
    size = shape[len(shape) - nsp:]
    out, high = _geometry(size, kernel, stride, padding, dilation, ceil_mode)
    xp = _pad_spatial(b, x, padding, high) if any(padding) or any(high) else x
    windows = _window_stack(b, xp, kernel, stride, dilation, out)
    picked = b.gather(windows, b.reshape(offsets, shape=(1, *b.shape(offsets))), dim=0)
    return b.reshape(picked, shape=b.shape(offsets))


define(OpDef("max_pool", "nn", _max_pool_rule, _max_pool, 1, dict(_ATTRS), num_results=2,
             decomposition=_max_pool_decomposition,
             doc="max over windows of the last len(kernel) dims -> (values, window offsets)"))
define(OpDef("max_pool_grad", "nn", _max_pool_grad_rule, _max_pool_grad, 2,
             {**_ATTRS, "size": "ints"}, decomposition=_max_pool_grad_decomposition,
             doc="each cotangent added at its window's chosen offset (max_pool's VJP)"))


# ---- derivatives: the cotangent goes to the chosen element ----

def _max_pool_vjp(b, cts, inputs, outputs, **attrs):
    g, (x,), (_, offsets) = cts[0], inputs, outputs
    if g is None:
        return [None]
    size = tuple(b.shape(x))[len(b.shape(x)) - len(attrs["kernel"]):]
    return [b.max_pool_grad(g, offsets, **attrs, size=size)]  # the schema's order


def _max_pool_jvp(b, tangents, inputs, outputs, **attrs):
    (t,), (_, offsets) = tangents, outputs
    return [None if t is None else window_gather(b, t, offsets, **attrs), None]


def _max_pool_grad_vjp(b, cts, inputs, outputs, size, **attrs):
    (g,), (_, offsets) = cts, inputs
    return [window_gather(b, g, offsets, **attrs), None]


def _max_pool_grad_jvp(b, tangents, inputs, outputs, **attrs):
    t = tangents[0]
    return [None if t is None else b.max_pool_grad(t, inputs[1], **attrs)]


ad.defvjp("max_pool", _max_pool_vjp)
ad.defjvp("max_pool", _max_pool_jvp)
ad.defvjp("max_pool_grad", _max_pool_grad_vjp)
ad.defjvp("max_pool_grad", _max_pool_grad_jvp)
