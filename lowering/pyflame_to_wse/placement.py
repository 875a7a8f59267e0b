"""Placements: default layouts, the host-side layout of a value, and the
relayout steps (combine, gather, broadcast, scatter) between two layouts."""

from __future__ import annotations

from collections.abc import Sequence

from ...dialects import wse


def tileable(n: int, g: int) -> bool:
    return n > 1 and wse.can_tile(n, g)


def default_layout(shape: Sequence[int], grid: wse.Grid) -> wse.Layout:
    """Tile every dim that can be (rows over y, columns over x), the rest held at 0."""
    shape = tuple(shape)
    if len(shape) > 2:  # rank >= 3 (data movement only): whole on line 0 (issue #16)
        return _fill_states((wse.NONE,) * len(shape))
    if len(shape) == 2:
        m, n = shape
        for dims in (("y", "x"), ("y", "-"), ("-", "x"), ("x", "-"), ("-", "y"), ("-", "-")):
            if all(d == "-" or tileable(s, grid.size(d)) for s, d in zip(shape, dims)):
                return _fill_states(dims)
    if len(shape) == 1:
        for d in ("x", "y", "-"):
            if d == "-" or tileable(shape[0], grid.size(d)):
                return _fill_states((d,))
    return _fill_states(())


def _fill_states(dims: Sequence[str], state: str = "0") -> wse.Layout:
    dims = tuple(dims)
    st = {a: ("" if a in dims else state) for a in wse.AXES}
    return wse.Layout(dims, st["x"], st["y"])


def host_layout(lay: wse.Layout) -> wse.Layout:
    """Where the host puts an input that is wanted in ``lay``: one PE per element."""
    st = {a: lay.state(a) for a in wse.AXES}
    for a, s in st.items():
        if s == "dim":
            st[a] = ""
        elif not s.isdigit():
            st[a] = "0"
    return wse.Layout(lay.dims, st["x"], st["y"])


def conversion_steps(shape: Sequence[int], src: wse.Layout, dst: wse.Layout,
                     square: bool = False) -> list[tuple] | None:
    """Relayout ``src`` -> ``dst`` as (op, axis[, dim]) steps; None when impossible.
    ``square``: the grid is square (and larger than one PE), so a dim tiled over one
    axis that ``dst`` tiles over the other moves there by ``wse.relayout`` (a tile per
    PE in flight) rather than by gathers on both axes (the whole tensor on every PE)."""
    steps: list[tuple] = []
    cur = src
    try:
        for g in wse.AXES:
            if cur.partial(g):
                steps.append(("combine", g))
                cur = wse.infer_combine(shape, cur, g)[1]
        if square and any(d != wse.NONE and dst.dims[i] not in (d, wse.NONE)
                          for i, d in enumerate(cur.dims)):
            steps.append(("relayout", ""))
            cur = wse.swap_axes(cur)
        for g in wse.AXES:
            i = cur.dim_on(g)
            if i is not None and dst.dim_on(g) != i:
                steps.append(("gather", g))
                cur = wse.infer_gather(shape, cur, g)[1]
        for g in wse.AXES:
            j = dst.dim_on(g)
            if j is not None and cur.dim_on(g) is None:
                if cur.state(g) != "*":
                    steps.append(("broadcast", g))
                    cur = wse.infer_broadcast(shape, cur, g)[1]
                steps.append(("scatter", g, j))
                cur = wse.infer_scatter(shape, cur, g, j)[1]
        for g in wse.AXES:
            want, have = dst.state(g), cur.state(g)
            if want == "dim":
                continue
            if want in wse.PARTIALS:
                return None
            if (want == "*" and have != "*") or (want.isdigit() and have not in ("*", want)):
                steps.append(("broadcast", g))
                cur = wse.infer_broadcast(shape, cur, g)[1]
    except wse.LayoutError:
        return None
    if cur.dims != dst.dims:
        return None
    return steps


def _layout(dims: Sequence[str], states: dict[str, str]) -> wse.Layout | None:
    st = {a: ("" if a in dims else states[a]) for a in wse.AXES}
    try:
        return wse.Layout(tuple(dims), st["x"], st["y"])
    except wse.LayoutError:
        return None


def _operand_layout(result: wse.Layout, rshape: Sequence[int], shape: Sequence[int]
                    ) -> wse.Layout:
    """The layout an operand of ``shape`` needs for an elementwise result in ``result``."""
    off = len(rshape) - len(shape)
    dims = []
    for j, n in enumerate(shape):
        i = j + off
        dims.append(result.dims[i] if n == rshape[i] else "-")
    st = {}
    for a in wse.AXES:
        if a in dims:
            st[a] = ""
        elif a in result.dims:
            st[a] = "*"  # the operand broadcasts along a dim tiled over a
        else:
            st[a] = result.state(a)
    return wse.Layout(tuple(dims), st["x"], st["y"])


