"""argmax / argmin on the grid (issue #16).

Indices live on the PE as exact f32 values (``support.INDEX_DTYPES``). For
``argmax(x, dim)``: the row maximum ``m`` (a reduction, combined along the axis
the dim is tiled over), broadcast back against ``x``; the candidates are the
positions where ``x == m`` or ``x`` is NaN (so a NaN row answers its first
NaN, as numpy and torch do); each candidate keeps its index along ``dim`` (an
``iota`` the host supplies), the others ``n``; the answer is the smallest,
a min-reduction (``-max(-v)``), which picks the first of tied maxima.
``argmin(x)`` is ``argmax(-x)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.ir import Operation

from ...dialects import wse
from .support import _Fresh, _unsupported, row_lookup_index, value_spec
from .windows import whole_sources as _source

if TYPE_CHECKING:
    from .planner import _Planner


def reduce_value(p: _Planner, x: Any, dims: tuple[int, ...], keepdim: bool, kind: str,
                 negate: bool = False) -> Any:
    """A reduction of the pyflame-level value ``x`` (a value or a planner key),
    combined along the axes it leaves partial; returns a fresh key.
    ``negate``: ``-kind(-x)`` (min from max)."""
    w, rs, rl = p.reduce_emit(x, dims, keepdim, kind, negate)
    key = _Fresh(rs, False)
    p.bind(key, w, rl)  # type: ignore[arg-type]
    return key


def _iota_along(p: _Planner, shape: tuple[int, ...], dim: int) -> Any:
    """0..n-1 along ``dim`` (unit dims elsewhere), a constant the host supplies."""
    ishape = tuple(n if i == dim else 1 for i, n in enumerate(shape))
    key = _Fresh(ishape, False)
    p.pending[key] = ("const",  # type: ignore[index]
                      np.arange(shape[dim], dtype=np.float32).reshape(ishape))
    return key


def lower_arg_reduce(p: _Planner, op: Operation, attrs: dict, smallest: bool) -> None:
    x, out = op.operands[0], op.results[0]
    shape = value_spec(x)[0]
    dim, keepdim = attrs["dim"], attrs["keepdim"]
    if dim is None:
        raise _unsupported(op.name.removeprefix("pyflame."),
                           "over the flattened tensor: give a dim")
    v: Any = x
    if smallest:
        v = p._map_value("neg", [x], shape, False, None)
    m = reduce_value(p, v, (dim,), True, "max")
    hit = p._map_value("or", [p._map_value("eq", [v, m], shape, True, None),
                              p._map_value("ne", [v, v], shape, True, None)], shape, True, None)
    big = p._splat_of(float(shape[dim]), x)
    cand = p._map_value("select", [hit, _iota_along(p, shape, dim), big], shape, False, None)
    r = reduce_value(p, cand, (dim,), keepdim, "max", negate=True)
    (lay, w), = p.placed[r]
    p.bind(out, w, lay)
    p.note(op, lay, f"{op.OPDEF.name} over dim {dim}")  # type: ignore[attr-defined]


def _row_operands(p: _Planner, values: list) -> list:
    """The values whole on every PE that holds them (gathered through the fabric)."""
    lay = _source(p, values, None)
    return [p.get(v, lay) for v in values]


def lower_gather(p: _Planner, op: Operation, attrs: dict) -> None:
    """Embedding: rows of a table resident in PE memory, picked by index."""
    out = op.results[0]
    table, idx = _row_operands(p, [op.operands[0], row_lookup_index(op)])
    rs, rl = wse.infer_take_rows(_wspec(table), _wspec(idx))
    w = p.emit(wse.TakeRowsOp(table, idx, wse.wse_type(rs, rl, half=table.type.is_half)))
    p.bind(out, w, rl)
    p.note(op, rl, "row lookup")


def lower_scatter_add(p: _Planner, op: Operation, attrs: dict) -> None:
    """The embedding VJP: source rows added into the base at the indexed rows."""
    out = op.results[0]
    base, idx, src = _row_operands(p, [op.operands[0], row_lookup_index(op), op.operands[2]])
    rs, rl = wse.infer_add_rows(_wspec(base), _wspec(idx), _wspec(src))
    w = p.emit(wse.AddRowsOp(base, idx, src, wse.wse_type(rs, rl)))
    p.bind(out, w, rl)
    p.note(op, rl, "row scatter-add")


def _wspec(w) -> tuple:
    return w.type.dims, w.type.layout


def _arg(smallest: bool):
    return lambda p, op, attrs: lower_arg_reduce(p, op, attrs, smallest)


# pyflame op name -> how it is planned (registered in planner.py's _LOWER)
INDEX_LOWERINGS = {"argmax": _arg(False), "argmin": _arg(True), "gather": lower_gather,
                   "scatter_add": lower_scatter_add}
