"""Planning slice, split, pad and concat on the grid (issue #16).

Each becomes a local ``wse.slice`` / ``wse.pad`` / ``wse.concat`` on every PE.
The dims the op cuts, pads or joins must be whole on every PE: the planner
gathers them through the fabric first (``wse.gather``, priced by the cycle
model like any relayout) and keeps the tiling of the other dims, so a slice
of the columns of a row-tiled matrix moves nothing. The result is left in
that layout (replicated over the gathered axes); its consumers scatter it
back (a local copy) when they want it tiled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from xdsl.ir import Operation, SSAValue

from ...dialects import wse
from .support import value_spec

if TYPE_CHECKING:
    from .planner import _Planner


def whole_layout(lay: wse.Layout, whole: Sequence[int], state: str = "*") -> wse.Layout:
    """``lay`` with the dims ``whole`` made whole on every PE (their axes in
    ``state``: ``*`` as ``wse.gather`` leaves them, or ``0``, held by line 0) and
    partial results combined (held by line 0, as ``wse.combine`` leaves them)."""
    dims = list(lay.dims)
    st = {a: ("0" if lay.partial(a) else getattr(lay, a)) for a in wse.AXES}
    for i in whole:
        if dims[i] != wse.NONE:
            st[dims[i]] = state
            dims[i] = wse.NONE
    return wse.Layout(tuple(dims), st["x"], st["y"])


def _source(p: _Planner, values: Sequence[SSAValue], whole: Sequence[int]) -> wse.Layout:
    """The layout, with ``whole`` whole on every PE, that the values reach most
    cheaply (a tiled value gathers; a host input is placed whole on line 0)."""
    cands = [whole_layout(lay, whole, st) for v in values for lay in p.current(v)
             for st in ("*", "0")]
    return min(dict.fromkeys(cands), key=lambda lay: sum(p.conv_cost(v, lay) for v in values))


def whole_sources(p: _Planner, values: Sequence[SSAValue], whole: Sequence[int] | None
                  ) -> wse.Layout:
    """The layout with the dims ``whole`` (None: every dim) whole on every PE that
    the values (of one rank) reach most cheaply."""
    rank = len(value_spec(values[0])[0])
    return _source(p, values, range(rank) if whole is None else whole)


def _elt(v: SSAValue) -> dict[str, bool]:
    """``wse_type``'s element-type flags of a pyflame value (f16 data moves as f16)."""
    name = value_spec(v)[1].name
    return {"mask": name == "bool", "half": name == "float16"}


def _emit_slice(p: _Planner, w: SSAValue, shape: tuple, lay: wse.Layout, start: Sequence[int],
                limit: Sequence[int], stride: Sequence[int], elt: dict[str, bool]) -> tuple:
    rs, rl = wse.infer_slice(shape, lay, start, limit, stride)
    return p.emit(wse.SliceOp(w, start, limit, stride, wse.wse_type(rs, rl, **elt))), rl


def lower_slice(p: _Planner, op: Operation, attrs: dict) -> None:
    x, out = op.operands[0], op.results[0]
    shape = value_spec(x)[0]
    start, limit, stride = attrs["start"], attrs["limit"], attrs["stride"]
    cut = [i for i, (n, a, b, k) in enumerate(zip(shape, start, limit, stride))
           if (a, b, k) != (0, n, 1)]
    w = p.get(x, _source(p, [x], cut))  # (replicated where held was asked: take it)
    w, rl = _emit_slice(p, w, shape, w.type.layout, start, limit, stride, _elt(x))
    p.bind(out, w, rl)
    p.note(op, rl, f"slice of dims {cut}")


def lower_split(p: _Planner, op: Operation, attrs: dict) -> None:
    x = op.operands[0]
    shape = value_spec(x)[0]
    dim, at = attrs["dim"], 0
    w = p.get(x, _source(p, [x], [dim]))
    lay = w.type.layout
    for size, out in zip(attrs["sizes"], op.results):
        start = tuple(at if i == dim else 0 for i in range(len(shape)))
        limit = tuple(at + size if i == dim else n for i, n in enumerate(shape))
        s, rl = _emit_slice(p, w, shape, lay, start, limit, (1,) * len(shape), _elt(x))
        p.bind(out, s, rl)
        at += size
    p.note(op, lay, f"split along dim {dim}")


def lower_pad(p: _Planner, op: Operation, attrs: dict) -> None:
    x, out = op.operands[0], op.results[0]
    shape = value_spec(x)[0]
    low, high, interior = attrs["low"], attrs["high"], attrs["interior"]
    padded = [i for i, t in enumerate(zip(low, high, interior)) if any(t)]
    w = p.get(x, _source(p, [x], padded))
    rs, rl = wse.infer_pad(shape, w.type.layout, low, high, interior)
    w = p.emit(wse.PadOp(w, low, high, interior, wse.wse_type(rs, rl, **_elt(x))))
    p.bind(out, w, rl)
    p.note(op, rl, f"pad of dims {padded}")


def lower_concat(p: _Planner, op: Operation, attrs: dict) -> None:
    xs, out, dim = list(op.operands), op.results[0], attrs["dim"]
    lay = _source(p, xs, [dim])
    ws = [p.get(x, lay) for x in xs]
    rs, rl = wse.infer_concat([(value_spec(x)[0], w.type.layout) for x, w in zip(xs, ws)],
                              dim)
    w = p.emit(wse.ConcatOp(ws, dim, wse.wse_type(rs, rl, **_elt(out))))
    p.bind(out, w, rl)
    p.note(op, rl, f"concat along dim {dim}")


def lower_general_reshape(p: _Planner, op: Operation, new_shape: Sequence[int]) -> None:
    """A reshape that moves elements between dims: on a tensor whole on every PE
    (gathered first), where the tile is the row-major tensor and nothing moves."""
    x, out = op.operands[0], op.results[0]
    shape = value_spec(x)[0]
    w = p.get(x, _source(p, [x], range(len(shape))))
    rs, rl = wse.infer_reshape(shape, w.type.layout, new_shape)
    w = p.emit(wse.ReshapeOp(w, wse.wse_type(rs, rl, **_elt(x))))
    p.bind(out, w, rl)
    p.note(op, rl, "reshape of the whole tensor")


def lower_permute_whole(p: _Planner, op: Operation, perm: Sequence[int]) -> None:
    """A permute of rank >= 3: on the tensor whole on every PE (gathered first)."""
    x, out = op.operands[0], op.results[0]
    shape = value_spec(x)[0]
    w = p.get(x, _source(p, [x], range(len(shape))))
    rs, rl = wse.infer_permute(shape, w.type.layout, perm)
    w = p.emit(wse.PermuteOp(w, perm, wse.wse_type(rs, rl, **_elt(x))))
    p.bind(out, w, rl)
    p.note(op, rl, "permute of the whole tensor")


Handler = Callable[["_Planner", Operation, dict], None]

# pyflame op name -> how it is planned (registered in planner.py's _LOWER)
WINDOW_LOWERINGS: dict[str, Handler] = {
    "slice": lower_slice,
    "split": lower_split,
    "pad": lower_pad,
    "concat": lower_concat,
}
