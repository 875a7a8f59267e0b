"""Fabric: channels (colors, queues) per grid axis, their per-PE color values,
and the layout module with the static routes.

Channels per grid axis: a two-color *chain* toward index 0 (``wse.combine``),
a *bcast* color from index 0 outward and a *relay* color toward index 0 that
any PE may inject into, and ``|d| + 1`` colors per shift distance. Colors come
from 0 upward around the arch's reserved ids; queues from the arch's user
queues (see ``dialects/wse_target.py: ArchRules``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, csl
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue

from ...dialects import csl_ext, wse
from ...dialects.wse_target import ARCH, ArchRules
from .builder import Emit, _i, _i_op, _pick
from .host import PROGRAM_FILE, ColorBudgetError, CslLoweringError

DIRS = {"x": ("west", "east"), "y": ("north", "south")}  # (toward index 0, away)


@dataclass
class Channel:
    kind: str  # chain | bcast | relay | shift
    axis: str
    colors: list[int]
    distance: int = 0
    qin: int = 0
    qout: int = 0
    # per-PE color values (module level), filled while lowering
    send: SSAValue | None = None
    recv: SSAValue | None = None


def _channel_key(op: Operation) -> list[tuple]:
    if isinstance(op, wse.CombineOp):
        return [("chain", op.axis.data, 0)]
    if isinstance(op, wse.BroadcastOp):
        k = op.input.type.layout.held_at(op.axis.data)
        return [("bcast", op.axis.data, 0)] + ([("relay", op.axis.data, 0)] if k else [])
    if isinstance(op, wse.GatherOp):
        return [("bcast", op.axis.data, 0), ("relay", op.axis.data, 0)]
    if isinstance(op, wse.SummaOp):
        a, b = op.result.type.layout.dims
        # A's panels travel along b (its K axis), B's along a
        return [(k, ax, 0) for ax in (b, a) for k in ("bcast", "relay")]
    if isinstance(op, wse.ShiftOp):
        return [("shift", op.axis.data, op.distance.value.data)]
    if isinstance(op, wse.RelayoutOp):  # broadcasts from any root along both axes
        return [(k, ax, 0) for ax in wse.AXES for k in ("bcast", "relay")]
    return []


_NCOLORS = {"chain": 2, "bcast": 1, "relay": 1}


def _ncolors(kind: str, d: int, rules: ArchRules) -> int:
    """Colors a channel takes. A relay is one color that every PE may inject into
    while it passes farther PEs' data on (RAMP and a neighbour in): where routes take
    one input direction per color (WSE-3) it is a store-and-forward chain instead,
    two colors alternating by parity like ``chain``."""
    if kind == "relay" and rules.max_rx_per_color == 1:
        return 2
    return _NCOLORS.get(kind, abs(d) + 1)


def store_and_forward(ch: Channel, rules: ArchRules) -> bool:
    """The channel passes data PE to PE through the cores (two parity colors)."""
    return ch.kind == "chain" or (ch.kind == "relay" and rules.max_rx_per_color == 1)


def _channel_name(key: tuple) -> str:
    kind, axis, d = key
    return f"{kind} along {axis}" + (f" by {d}" if kind == "shift" else "")



class FabricMixin:
    """The channel and layout-module half of ``_Lowerer``."""

    # -- colors --
    # A sweep over the whole program: colors are a budget shared by all its channels.
    def allocate_channels(self) -> None:
        wanted: list[tuple] = []
        for op in self.program.body.block.ops:
            for key in _channel_key(op):
                kind, axis, d = key
                if self.grid.size(axis) > 1 and key not in wanted:
                    wanted.append(key)
        rules = ARCH[self.arch]
        routable = rules.routable_colors
        need = sum(_ncolors(k, d, rules) for k, _, d in wanted)
        if need > len(routable):
            detail = ", ".join(f"{k} along {a}" + (f" by {d}" if k == "shift" else "") +
                               f" ({_ncolors(k, d, rules)})" for k, a, d in wanted)
            raise ColorBudgetError(
                f"csl backend: the program needs {need} colors ({detail}) but only "
                f"{len(routable)} are routable (0-23 without the reserved "
                f"{sorted(c for c in rules.reserved_ids if c < 24)})")
        self._allocate_queues(wanted, rules)
        free = iter(routable)
        for kind, axis, d in wanted:
            ch = self.channels[(kind, axis, d)]
            ch.colors = [next(free) for _ in range(_ncolors(kind, d, rules))]
        used = {c for ch in self.channels.values() for c in ch.colors}
        # where a data task id is a color (WSE-2), local task ids never double as colors
        self.free_task_ids = [t for t in rules.local_task_ids
                              if rules.data_task_from != "color" or t not in used]
        self.task_id = self.free_task_ids.pop(0)

    def _allocate_queues(self, wanted: list[tuple], rules: ArchRules) -> None:
        """Input and output queue per channel. A channel reaches every PE of its axis,
        so channels never share an input queue, nor an output queue where queues are
        bound to colors (``rules.queue_per_color``). Elsewhere (WSE-2: a fabout DSD
        names its color) channels that no op uses together share output queues: an op
        finishes its sends before the next op starts."""
        ins = [q for q in rules.input_queues if q not in rules.reserved_queues]
        outs = [q for q in rules.output_queues if q not in rules.reserved_queues]
        together: dict[tuple, set[tuple]] = {k: set() for k in wanted}
        for op in self.program.body.block.ops:
            keys = [k for k in _channel_key(op) if k in together]
            for k in keys:
                together[k].update(keys)
        out_of: dict[tuple, int] = {}
        for i, key in enumerate(wanted):
            if rules.queue_per_color:
                taken = set(out_of.values())
            else:
                taken = {out_of[k] for k in together[key] if k in out_of}
            free_out = [q for q in outs if q not in taken]
            if i >= len(ins) or not free_out:
                raise CslLoweringError(
                    f"csl backend: the program needs {len(wanted)} fabric channels "
                    f"({', '.join(map(_channel_name, wanted))}) but {rules.title} "
                    f"has {len(ins)} input and {len(outs)} output queues for user channels "
                    f"(input {', '.join(map(str, ins))}; output {', '.join(map(str, outs))}; "
                    f"memcpy owns {', '.join(map(str, sorted(rules.reserved_queues)))}), and "
                    "two channels a PE uses at once cannot share a queue")
            out_of[key] = free_out[0]
            self.channels[key] = Channel(key[0], key[1], [], key[2], ins[i], free_out[0])

    def channel(self, kind: str, axis: str, d: int = 0) -> Channel:
        return self.channels[(kind, axis, d)]


    def _channel_values(self, m: Emit) -> None:
        """Per-PE colors of each channel, and (WSE-3) queue bindings."""
        for ch in self.channels.values():
            q = self.coord(ch.axis)
            cols = [m.add(csl.GetColorOp(_i_op(m, c))) for c in ch.colors]
            if store_and_forward(ch, ARCH[self.arch]):
                even = m.icmp("eq", m.add(arith.RemSIOp(q, m.i16(2))), 0)
                ch.send = m.select(even, cols[0], cols[1])
                ch.recv = m.select(even, cols[1], cols[0])
            elif ch.kind == "shift":
                n = len(cols)
                d = ch.distance
                own = m.add(arith.RemSIOp(q, m.i16(n)))
                src = m.add(arith.RemSIOp(m.iadd(q, (n - d % n) % n if d > 0 else -d), m.i16(n)))
                ch.send = _pick(m, own, cols)
                ch.recv = _pick(m, src, cols)
            else:
                ch.send = ch.recv = cols[0]
            ch.send.name_hint = f"{ch.kind}_{ch.axis}_send"
            if ch.recv is not ch.send:
                ch.recv.name_hint = f"{ch.kind}_{ch.axis}_recv"
            m.add(csl_ext.InitializeQueueOp(ch.recv, ch.qin))
            if ARCH[self.arch].queue_per_color:  # elsewhere output queues may be shared
                m.add(csl_ext.InitializeQueueOp(ch.send, ch.qout, output=True))


    # ---- the layout module ----
    def _layout_module(self) -> csl.CslModuleOp:
        block = Block()
        m = Emit(block, self)
        W, H = self.grid.width, self.grid.height
        w = m.add(_i(W))
        h = m.add(_i(H))
        w.name_hint, h.name_hint = "width", "height"
        init = m.add(csl.ConstStructOp(("width", w), ("height", h)))
        init.name_hint = "memcpy_init"
        memcpy = m.add(csl.ImportModuleConstOp("<memcpy/get_params>", init))
        memcpy.name_hint = "memcpy"
        body = Block()
        lb = Emit(body, self)
        lb.add(csl.SetRectangleOp.build(operands=[w, h]))
        with lb.loop(0, w) as (px, bx):
            px.name_hint = "px"
            mp = bx.add(csl.MemberCallOp("get_params", csl.ComptimeStructType(), memcpy, [px]))
            mp.name_hint = "memcpy_params"
            with bx.loop(0, h) as (py, by):
                py.name_hint = "py"
                params = by.add(csl.ConstStructOp(("memcpy_params", mp), ("px", px), ("py", py)))
                params.name_hint = "tile_params"
                by.add(csl.SetTileCodeOp(f"{PROGRAM_FILE}.csl", px, py, params))
                for ch in self.channels.values():
                    self._routes(by, ch, px if ch.axis == "x" else py, px, py)
        m.add(csl.LayoutOp(Region(body)))
        return csl.CslModuleOp(regions=[Region(block)], properties={
            "kind": csl.ModuleKindAttr(csl.ModuleKind.LAYOUT), "sym_name": StringAttr("layout")})

    def _routes(self, e: Emit, ch: Channel, q: SSAValue, px: SSAValue, py: SSAValue) -> None:
        g = self.grid.size(ch.axis)
        near, far = DIRS[ch.axis]  # toward index 0, away from it

        def route(h: Emit, color: SSAValue, rx: list[str], tx: list[str]) -> None:
            h.add(csl_ext.SetColorConfigOp(px, py, color, rx, tx))

        cols = [e.add(csl.GetColorOp(_i_op(e, c))) for c in ch.colors]
        last = g - 1
        if store_and_forward(ch, ARCH[self.arch]):  # toward index 0, through the cores
            even = e.icmp("eq", e.add(arith.RemSIOp(q, e.i16(2))), 0)
            send = e.select(even, cols[0], cols[1])
            recv = e.select(even, cols[1], cols[0])
            send.name_hint = f"{ch.kind}_{ch.axis}_send"
            recv.name_hint = f"{ch.kind}_{ch.axis}_recv"
            with e.when(e.icmp("sgt", q, 0)) as h:
                route(h, send, ["ramp"], [near])
            with e.when(e.icmp("slt", q, last)) as h:
                route(h, recv, [far], ["ramp"])
        elif ch.kind == "bcast":  # from index 0 outward
            with e.branch(e.icmp("eq", q, 0)) as (first, rest):
                route(first, cols[0], ["ramp"], [far])
                with rest.branch(rest.icmp("eq", q, last)) as (end, mid):
                    route(end, cols[0], [near], ["ramp"])
                    route(mid, cols[0], [near], ["ramp", far])
        elif ch.kind == "relay":  # any PE toward index 0
            with e.branch(e.icmp("eq", q, 0)) as (first, rest):
                route(first, cols[0], [far], ["ramp"])
                with rest.branch(rest.icmp("eq", q, last)) as (end, mid):
                    route(end, cols[0], ["ramp"], [near])
                    route(mid, cols[0], [far, "ramp"], [near])
        else:  # shift: explicit roles per coordinate
            d = ch.distance
            out_dir = far if d > 0 else near
            in_dir = near if d > 0 else far
            nc = len(cols)
            for p in range(g):
                roles = _shift_roles(p, d, g, nc)
                if not roles:
                    continue
                with e.when(e.icmp("eq", q, p)) as h:
                    for c, role in roles.items():
                        if role == "send":
                            route(h, cols[c], ["ramp"], [out_dir])
                        elif role == "recv":
                            route(h, cols[c], [in_dir], ["ramp"])
                        else:
                            route(h, cols[c], [in_dir], [out_dir])



def _shift_roles(p: int, d: int, g: int, nc: int) -> dict[int, str]:
    """Color index -> send/recv/pass at coordinate p for a shift by d (d+1 colors)."""
    step = 1 if d > 0 else -1
    roles: dict[int, str] = {}
    for src in range(g):
        dst = src + d
        if not 0 <= dst < g:
            continue
        c = src % nc
        if src == p:
            roles[c] = "send"
        elif dst == p:
            roles[c] = "recv"
        elif min(src, dst) < p < max(src, dst):
            roles[c] = "pass"
    del step
    return roles


