"""Matmul candidates: K tiled with partial sums combined along a chain, K local
with operands broadcast, or SUMMA; each priced with its operands' relayouts."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from xdsl.ir import Operation, SSAValue

from ...dialects import wse
from .placement import _layout, tileable
from .support import CslUnsupportedError, _Fresh
from .support import value_spec as _spec
from .windows import _source, whole_layout

if TYPE_CHECKING:
    from .planner import _Planner



class MatmulMixin:
    """The matmul part of the planner."""

    # -- matmul --
    def _matmul(self, op: Operation) -> None:
        a, b = op.operands
        out = op.results[0]
        sa, sb = _spec(a)[0], _spec(b)[0]
        if len(sa) == 3:
            self._batch_matmul(op)
            return
        g = self.grid
        M = sa[0] if len(sa) == 2 else None
        K = sa[-1]
        N = sb[1] if len(sb) == 2 else None
        options: list[tuple[float, str, Callable[[], tuple[SSAValue, wse.Layout]]]] = []
        opts = ("x", "y", "-")
        # M over the rows first: the conventional orientation wins ties
        m_opts = ("y", "x", "-") if M else (None,)
        for ma, ka, na in itertools.product(m_opts, opts, opts if N else (None,)):
            used = [t for t in (ma, ka, na) if t not in (None, "-")]
            if len(used) != len(set(used)):
                continue
            if any(ax not in (None, "-") and not tileable(n, g.size(ax))
                   for ax, n in ((ma, M), (ka, K), (na, N))):
                continue
            free = [ax for ax in wse.AXES if ax not in used]
            for st in ("0", "*") if free else ("",):
                la = _layout([ma, ka] if M else [ka], {ax: ("*" if ax == na else st)
                                                       for ax in wse.AXES})
                lb = _layout([ka, na] if N else [ka], {ax: ("*" if ax == ma else st)
                                                       for ax in wse.AXES})
                if la is None or lb is None:
                    continue
                ta, tb = (wse.tile_shape(s, lay, g) for s, lay in ((sa, la), (sb, lb)))
                mt = ta[0] if M else 1
                kt = ta[-1]
                nt = tb[1] if N else 1
                words = math.prod(ta) + math.prod(tb) + mt * nt
                if words > self.budget_words * 0.9:
                    continue
                c = (self.conv_cost(a, la) + self.conv_cost(b, lb) + self.cost.matmul(mt, kt, nt)
                     + (self.cost.combine(mt * nt, ka) if ka != "-" else 0.0)
                     + self.downstream(out, mt * nt))
                label = (f"matmul M:{ma or '-'} K:{ka} N:{na or '-'}"
                         + (f" (replicated over {','.join(free)})" if st == "*" else ""))
                options.append((c, label, _bind_local(self, a, b, la, lb)))
        local = list(options)
        # SUMMA's panel relays toward line 0: one color with RAMP and a neighbour in
        # (WSE-2), or store-and-forward through the cores on two parity colors where
        # routes take one input direction per color (WSE-3; see wse_to_csl/fabric.py)
        if self.options.matmul != "local" and M and N and g.width == g.height > 1:
            for ax in (("y", "x"), ("x", "y")):
                lay = wse.Layout(ax)
                if not all(tileable(n, g.size(d)) for n, d in ((M, ax[0]), (K, ax[1]))) or \
                        not all(tileable(n, g.size(d)) for n, d in ((K, ax[0]), (N, ax[1]))):
                    continue
                ta = wse.tile_shape(sa, lay, g)
                tb = wse.tile_shape(sb, lay, g)
                mt, kt, nt = ta[0], ta[1], tb[1]
                words = 3 * (math.prod(ta) + math.prod(tb)) + mt * nt  # + 2 panels each
                if words > self.budget_words * 0.9:
                    continue
                c = (self.conv_cost(a, lay) + self.conv_cost(b, lay)
                     + self.cost.summa(mt, kt, nt, g.size(ax[1])) + self.downstream(out, mt * nt))
                options.append((c, f"summa M:{ax[0]} N:{ax[1]}", _bind_summa(self, a, b, lay)))
        if self.options.matmul == "summa" and len(options) > len(local):
            options = options[len(local):]  # forced, where SUMMA applies
        if not options:
            raise CslUnsupportedError(
                f"csl backend: no placement of matmul {list(sa)} x {list(sb)} fits the "
                f"{self.budget_words * 4}-byte SRAM budget of a PE on the {g} grid; use a "
                "larger grid")
        options.sort(key=lambda o: o[0])
        i = self.index.get(op, -1)
        self.candidates[i] = [label for _, label, _ in options]
        want = self.fixed.get(i)
        cost, label, build = next((o for o in options if o[1] == want), options[0])
        self.chosen[i] = label
        w, lay = build()
        self.bind(out, w, lay)
        self.note(op, lay, f"{label} (~{cost:,.0f} cycles)")

    # -- batched matmul: the batch laid over the grid (issue #16) --
    def _flat_view(self, v: SSAValue, shape: tuple) -> _Fresh:
        """The rank-3 value ``v`` as its row-major rank-2 view ``shape``: a reshape of
        the tensor whole on every PE (no copy), bound to a planner key."""
        lay = _source(self, [v], range(3))
        w = self.get(v, lay)
        rs, rl = wse.infer_reshape(_spec(v)[0], lay, shape)
        key = _Fresh(rs, False, _spec(v)[1].name == "float16")
        self.bind(key, self.emit(wse.ReshapeOp(w, wse.wse_type(rs, rl, half=key.half))), rl)
        return key

    def _batch_matmul(self, op: Operation) -> None:
        """``[B, M, K] @ [B, K, N]`` (``legalize-for-wse`` folds wider batch dims into B)
        as ``wse.batch_matmul`` of the rank-2 views ``[B*M, K]`` and ``[B*K, N]``: the
        batch rows over an axis whose size divides B (each PE multiplies its own batch
        elements, no partial sums), N over the other axis or whole; or every batch
        element on one PE (the loop of before) or on all. Priced with the relayouts of
        the operands and of the result back to a whole rank-3 tensor."""
        a, b = op.operands
        out = op.results[0]
        (nb, m, k), n = _spec(a)[0], _spec(b)[0][2]
        g = self.grid
        half = _spec(out)[1].name == "float16"
        va, vb = self._flat_view(a, (nb * m, k)), self._flat_view(b, (nb * k, n))
        sa, sb, sc = (nb * m, k), (nb * k, n), (nb * m, n)
        options = []
        for ra, na in itertools.product(("y", "x", "-"), ("x", "y", "-")):
            if ra != "-" and (g.size(ra) == 1 or nb % g.size(ra)):
                continue
            if na != "-" and (na == ra or not tileable(n, g.size(na))):
                continue
            free = [ax for ax in wse.AXES if ax not in (ra, na)]
            for st in ("0", "*") if free else ("",):
                la = _layout([ra, "-"], {ax: ("*" if ax == na else st) for ax in wse.AXES})
                lb = _layout([ra, na], {ax: st for ax in wse.AXES})
                if la is None or lb is None:
                    continue
                try:
                    _, lc = wse.infer_batch_matmul((sa, la), (sb, lb), nb, g)
                except wse.LayoutError:
                    continue
                tiles = [wse.tile_shape(s, lay, g) for s, lay in ((sa, la), (sb, lb), (sc, lc))]
                if sum(math.prod(t) for t in tiles) > self.budget_words * 0.9:
                    continue
                local = nb // (g.size(ra) if ra != "-" else 1)
                wholes = [whole_layout(lc, (0, 1), s) for s in ("*", "0")]
                back = min(self._steps_cost(sc, lc, self.steps(sc, lc, lay)) for lay in wholes)
                c = (self.conv_cost(va, la) + self.conv_cost(vb, lb) + back
                     + local * self.cost.matmul(tiles[0][0] // local, k, tiles[1][1]))
                label = (f"batch_matmul B:{ra} N:{na}"
                         + (f" (replicated over {','.join(free)})" if st == "*" else ""))
                options.append((c, label, la, lb, lc))
        if not options:
            raise CslUnsupportedError(
                f"csl backend: no placement of the batched matmul {[nb, m, k]} x {[nb, k, n]} "
                f"fits the {self.budget_words * 4}-byte SRAM budget of a PE on the {g} grid; "
                "use a larger grid")
        options.sort(key=lambda o: o[0])
        i = self.index.get(op, -1)
        self.candidates[i] = [o[1] for o in options]
        want = self.fixed.get(i)
        cost, label, la, lb, _ = next((o for o in options if o[1] == want), options[0])
        self.chosen[i] = label
        wa, wb = self.get(va, la), self.get(vb, lb)
        # a value replicated where `la`/`lb` asks for one line serves as it is: the
        # result's states follow the operands the op actually gets
        _, lc = wse.infer_batch_matmul((sa, wa.type.layout), (sb, wb.type.layout), nb, g)
        w = self.emit(wse.BatchMatmulOp(wa, wb, nb, wse.wse_type(sc, lc)))
        vc = _Fresh(sc, False, half)
        self.bind(vc, _rounded(self, w, half), lc)
        whole = min((whole_layout(lc, (0, 1), s) for s in ("*", "0")),
                    key=lambda lay: self.conv_cost(vc, lay))
        w = self.get(vc, whole)
        rs, rl = wse.infer_reshape(sc, whole, _spec(out)[0])
        self.bind(out, self.emit(wse.ReshapeOp(w, wse.wse_type(rs, rl, half=half))), rl)
        self.note(op, rl, f"{label} (~{cost:,.0f} cycles)")


# f16 operands (issue #16): the tile products accumulate into an f32 tile (``@fmachs``:
# f16 multiply, f32 add), the partial sums combine in f32, and the result rounds to f16
# once at the end (``@fs2h``), as the reference's f16 matmul does in one rounding.


def _rounded(p: _Planner, w: SSAValue, half: bool) -> SSAValue:
    t = w.type
    return p.emit(wse.MapOp("copy", [w], wse.wse_type(t.dims, t.layout, half=True))) \
        if half else w


def _bind_local(p: _Planner, a, b, la: wse.Layout, lb: wse.Layout):
    def build() -> tuple[SSAValue, wse.Layout]:
        wa, wb = p.get(a, la), p.get(b, lb)
        rs, rl = wse.infer_matmul((_spec(a)[0], la), (_spec(b)[0], lb))
        w = p.emit(wse.MatmulOp(wa, wb, wse.wse_type(rs, rl)))
        for g in wse.AXES:
            if rl.partial(g):
                rs, rl = wse.infer_combine(rs, rl, g)
                w = p.emit(wse.CombineOp(g, w, wse.wse_type(rs, rl)))
        return _rounded(p, w, wa.type.is_half), rl
    return build


def _bind_summa(p: _Planner, a, b, lay: wse.Layout):
    def build() -> tuple[SSAValue, wse.Layout]:
        wa, wb = p.get(a, lay), p.get(b, lay)
        half = wa.type.is_half
        if half:  # SUMMA's panels are f32 buffers: widen the f16 tiles once (@fh2s)
            wa, wb = (p.emit(wse.MapOp("copy", [w], wse.wse_type(w.type.dims, lay)))
                      for w in (wa, wb))
        rs, rl = wse.infer_summa((_spec(a)[0], lay), (_spec(b)[0], lay), p.grid)
        return _rounded(p, p.emit(wse.SummaOp(wa, wb, wse.wse_type(rs, rl))), half), rl
    return build


