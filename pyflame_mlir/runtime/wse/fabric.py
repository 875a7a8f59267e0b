"""The fabric: per-PE routers with static per-color routes, links and input queues.

A send is a *stream* of 32-bit wavelets (one numpy array): the first leaves
the ramp at `t0`, the rest follow every `gap` cycles. Streams move hop by hop
through the routers on their color; a router forwards to every port of its tx
set (multicast), and each link carries one wavelet per cycle and direction,
so a stream waits for a busy link (cut-through). Delivery to a core appends the
stream to that PE's input queue at once; queues are bounded by the sender
instead: a synchronous send returns only when its receivers have taken all but
what the queues and router buffers on its path hold (``path_room``), so two
PEs that both send more than that before receiving deadlock, as on hardware.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .errors import ArchRuleError, ReservedIdError, RouteError, UnsupportedError
from .machine import RESERVED_IDS, ROUTABLE_COLORS, ArchRules, CycleModel

STEP = {"north": (0, -1), "south": (0, 1), "east": (1, 0), "west": (-1, 0)}
OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east", "ramp": "ramp"}

Coord = tuple[int, int]


@dataclass(frozen=True)
class Route:
    rx: frozenset[str]
    tx: frozenset[str]

    def __str__(self) -> str:
        return f"rx={{{', '.join(sorted(self.rx))}}} tx={{{', '.join(sorted(self.tx))}}}"


@dataclass(frozen=True)
class SwitchSpec:
    """`.switches` of a `@set_color_config`: positions 1-3 as (rx or tx, port) or None,
    the starting position, ring mode and pop mode."""

    positions: tuple[tuple[str, str] | None, ...]
    current: int
    ring: bool
    pop: str


@dataclass
class Switch:
    """A router's switch for one color: positions 1-3 as (rx or tx, port), each replacing
    that side of the position before it (position 0: the route; None: not set), where it
    stands, ring and pop mode.

    Each position inherits the side it does not set from the previous valid one, as the
    SDK's programs rely on: the allreduce library ("pos1 needs to inherit from pos0") and
    the 25-pt stencil's routes, whose `.pos2 = .{ .tx = RAMP }` after `.pos1 = .{ .rx =
    RAMP }` takes the sender's own follow-up control wavelet from RAMP and whose
    `.pos3 = .{ .rx = WEST }` is then a terminal (rx WEST, tx RAMP), not position 0."""

    positions: list[tuple[str, str] | None]
    current: int
    ring: bool
    pop: str

    def route_at(self, base: Route, k: int) -> Route | None:
        if k and self.positions[k - 1] is None:
            return None
        route = base
        for p in self.positions[:k]:
            if p is None:
                continue
            if p[0] == "rx":
                route = Route(frozenset({p[1]}), route.tx)
            else:
                route = Route(route.rx, frozenset({p[1]}))
        return route

    def route(self, base: Route) -> Route | None:
        return self.route_at(base, self.current)

    def could_take(self, base: Route, port: str) -> bool:
        """Some position of the switch takes wavelets from `port`."""
        return any(r is not None and port in r.rx
                   for r in (self.route_at(base, k) for k in range(4)))

    def advance(self, where: str) -> None:
        for k in range(self.current + 1, 4):
            if self.positions[k - 1] is not None:
                self.current = k
                return
        if not self.ring:
            raise UnsupportedError(
                f"{where}: a control wavelet advances the switch past its last position "
                f"({self.current}) without .ring_mode: what the router does then is not "
                "documented; not simulated")
        self.current = 0


@dataclass
class Parked:
    """Wavelets held at a router: its route for their color does not take them from the
    port they come from now (a switch position, or the color torn down), but may later."""

    src: Coord
    chunk: Chunk
    control: bool
    port_in: str
    t: float
    hops: int
    cmd: int  # which of the control wavelet's commands this router reads


# control wavelet payload fields, as the SDK's 25-pt-stencil benchmark encodes them
# (switches.csl, `ctrl`): eight switch commands, one per router on the way (the first for
# the sender's own router), each two bits with a "do not forward to the core" filter bit
# above it; the control task id in bits 16-21
CTRL_CMD_SHIFT, CTRL_FILTER_BIT, CTRL_ENTRY_SHIFT = 22, 24, 16
CTRL_CMD_SHIFTS = (22, 25, 28, 1, 4, 7, 10, 13)
CTRL_FILTER_BITS = (24, 27, 0, 3, 6, 9, 12, 15)
SWITCH_NOP, SWITCH_ADV, SWITCH_TEARDOWN = 0, 1, 3
NO_ENTRYPOINT = 31  # "the hardware's way of saying null color"


def ctrl_command(word: int, k: int) -> tuple[int, bool]:
    """The k-th switch command of a control wavelet and its core filter bit; past the
    eighth, none (a no-op, filtered)."""
    if k >= len(CTRL_CMD_SHIFTS):
        return SWITCH_NOP, True
    return (word >> CTRL_CMD_SHIFTS[k]) & 0b11, bool((word >> CTRL_FILTER_BITS[k]) & 1)


def ctrl_word(cmds: Sequence[int], ce_filter: bool = True, entry: int = NO_ENTRYPOINT) -> int:
    """A control wavelet's payload from up to eight switch commands (`ctrl` of the SDK's
    25-pt-stencil switches.csl and `<memcpy/memcpy_switches>`)."""
    word = (entry & 0x1F) << CTRL_ENTRY_SHIFT
    for k, cmd in enumerate(list(cmds) + [SWITCH_NOP] * (8 - len(cmds))):
        word |= (int(cmd) & 0b11) << CTRL_CMD_SHIFTS[k] | int(ce_filter) << CTRL_FILTER_BITS[k]
    return word


@dataclass
class Chunk:
    """Wavelets in flight or queued: element i arrives at t0 + i * gap."""

    words: np.ndarray  # uint32
    t0: float
    gap: float


@dataclass
class InputQueue:
    """Wavelets of one color delivered to a core and not yet consumed."""

    chunks: deque[Chunk] = field(default_factory=deque)
    count: int = 0
    pushed: int = 0  # words ever delivered / taken: a sender waits on `taken`
    taken: int = 0
    clock: Callable[[], float] | None = None  # the reading core's clock
    take_t: float = 0.0  # the reader's time at its latest take

    def push(self, chunk: Chunk) -> None:
        self.chunks.append(chunk)
        self.count += chunk.words.size
        self.pushed += chunk.words.size

    def head_time(self) -> float:
        return self.chunks[0].t0

    def take(self, n: int) -> tuple[np.ndarray, float, float]:
        """Pop n words; also return the arrival times of the first and the last."""
        if n == 0:  # a zero-length fabin DSD: nothing to wait for
            return np.zeros(0, np.uint32), -np.inf, -np.inf
        parts: list[np.ndarray] = []
        first = last = 0.0
        need = n
        while need:
            c = self.chunks[0]
            k = min(need, c.words.size)
            if not parts:
                first = c.t0
            parts.append(c.words[:k])
            last = c.t0 + (k - 1) * c.gap
            if k == c.words.size:
                self.chunks.popleft()
            else:
                self.chunks[0] = Chunk(c.words[k:], c.t0 + k * c.gap, c.gap)
            need -= k
        self.count -= n
        self.taken += n
        if self.clock is not None:
            self.take_t = self.clock()
        words = parts[0] if len(parts) == 1 else np.concatenate(parts)
        return words, first, last


@dataclass
class HostSink(InputQueue):
    """What one PE streamed on a memcpy D2H color, waiting for the host's
    `memcpy_d2h(..., streaming=True)`: the host is its reader."""

    color: int = -1


def path_room(model: CycleModel, hops: int) -> int:
    """Wavelets a path of `hops` links holds while its receiver does not read: the
    sender's output queue, a buffer per router passed and the receiver's input queue."""
    return (model.output_queue_depth + model.input_queue_depth
            + model.router_buffer_depth * (hops + 1))


def check_color(color: int, what: str) -> None:
    if color in RESERVED_IDS:
        raise ReservedIdError(f"{what} uses color {color}, reserved for memcpy/the runtime")
    if color not in ROUTABLE_COLORS:
        raise RouteError(f"{what} uses color {color}; routable colors are 0-23")


class Fabric:
    """Routers and links. Besides the static routes, per (PE, color): a switch, the
    color's teardown state, and the wavelets parked at the router (`Parked`) until a
    switch move, a runtime route change or the end of a teardown lets them on.

    A stream is routed when it is sent, through the routers' state at that moment: the
    event loop sends in time order, and a router that does not take it now parks it,
    so senders through one switch pass it in the order the switch lets them (the SDK's
    allreduce: each PE's data waits at its own router until its neighbour's control
    wavelet moves the switch). `late` and `teardown` (set by the simulator) receive
    what parked wavelets deliver when let on, and the teardowns routers carry out."""

    def __init__(self, width: int, height: int, model: CycleModel):
        self.width, self.height, self.model = width, height, model
        self.routes: dict[Coord, dict[int, Route]] = {}
        self.switches: dict[Coord, dict[int, Switch]] = {}
        self.torn_down: set[tuple[Coord, int]] = set()
        # colors whose route at a router changes at run time: configured with
        # `.teardown = true` or changed by `<tile_config>`
        self.dynamic: set[tuple[Coord, int]] = set()
        self.parked: dict[tuple[Coord, int], list[Parked]] = {}
        # range filters: which data wavelets (index field = upper 16 bits) reach the core
        self.filters: dict[tuple[Coord, int], tuple[int, int]] = {}
        self.link_free: dict[tuple[int, int, str], float] = {}
        self.wavelet_hops = 0
        self.late: Callable[[Coord, int, Chunk, int, bool], None] | None = None
        self.teardown: Callable[[Coord, int, float], None] | None = None

    def _check_route(self, where: str, color: int, route: Route) -> None:
        if back := (route.rx & route.tx) - {"ramp"}:
            raise RouteError(
                f"{where}: color {color} is routed both ways through the PE ({route}): "
                f"it would send back to {sorted(back)} what it receives from there"
            )
        if "ramp" in route.rx and "ramp" in route.tx and len(route.rx) > 1:
            raise RouteError(
                f"{where}: color {color} carries traffic both into and out of the core ({route}); "
                "use two colors (a checkerboard) for chains"
            )

    def set_route(self, xy: Coord, color: int, rx: tuple[str, ...], tx: tuple[str, ...],
                  switches: SwitchSpec | None = None, teardown: bool = False,
                  filter: tuple[int, int] | None = None) -> None:
        where = f"@set_color_config at PE {xy}"
        check_color(color, where)
        table = self.routes.setdefault(xy, {})
        if color in table:
            raise RouteError(f"{where}: color {color} is configured twice")
        route = Route(frozenset(rx), frozenset(tx))
        self._check_route(where, color, route)
        self.routes[xy][color] = route
        if switches is not None:
            self.switches.setdefault(xy, {})[color] = Switch(
                list(switches.positions), switches.current, switches.ring, switches.pop)
        if filter is not None:  # a range filter: (min, max) of the index field
            if "ramp" not in route.tx:
                raise RouteError(f"{where}: color {color} has a filter but does not go to "
                                 "the core (RAMP): a filter selects what reaches the core")
            self.filters[(xy, color)] = filter
        if teardown:  # `.teardown = true`: the color starts torn down at this router
            self.torn_down.add((xy, color))
            self.dynamic.add((xy, color))

    # --- runtime changes (<tile_config>) -------------------------------------------------

    def _switch(self, xy: Coord, color: int, what: str) -> Switch:
        sw = self.switches.get(xy, {}).get(color)
        if sw is None:
            if color not in self.routes.get(xy, {}):
                raise RouteError(f"{what} at PE {xy}: color {color} has no route there")
            sw = self.switches.setdefault(xy, {})[color] = Switch([None] * 3, 0, False, "no_pop")
        return sw

    def reset_routes(self, xy: Coord, color: int, rx: tuple[str, ...], tx: tuple[str, ...],
                     t: float) -> None:
        where = f"color_config.reset_routes at PE {xy}"
        check_color(color, where)
        route = Route(frozenset(rx), frozenset(tx))
        self._check_route(where, color, route)
        self.routes.setdefault(xy, {})[color] = route
        self.dynamic.add((xy, color))
        self.release(xy, color, t)

    def switch_config(self, xy: Coord, color: int, action: str, port: str | None,
                      t: float) -> None:
        sw = self._switch(xy, color, f"switch_config.{action}")
        if action == "clear_current_position":
            sw.current = 0
        elif action == "set_invalid_for_all_switch_positions":
            sw.positions = [None] * 3
        elif action == "set_rx_switch_pos1":
            sw.positions[0] = ("rx", str(port))
        else:  # the op's verifier names the actions
            raise UnsupportedError(f"switch_config.{action} is not modeled")
        self.release(xy, color, t)

    def teardown_exit(self, xy: Coord, color: int, t: float) -> None:
        """`tile_config.teardown.exit(color)`: the router routes the color again."""
        self.torn_down.discard((xy, color))
        self.release(xy, color, t)

    # --- routing -------------------------------------------------------------------------

    def _route(self, xy: Coord, color: int) -> Route | None:
        """The route of `color` at `xy` now: its switch's current position, if it has one
        (None: no route, or a position that is not set)."""
        base = self.routes.get(xy, {}).get(color)
        sw = self.switches.get(xy, {}).get(color)
        if base is None or sw is None:
            return base
        return sw.route(base)

    def _waits(self, xy: Coord, color: int, port_in: str) -> bool:
        """The router does not take `color` from `port_in` now, but may later: the color
        is torn down there or its route changes at run time (the wavelets wait in the
        link's buffer, as the SDK's allreduce relies on: a column's data may reach a
        router still in its row configuration), or a switch position takes it."""
        if (xy, color) in self.torn_down or (xy, color) in self.dynamic:
            return True
        base = self.routes.get(xy, {}).get(color)
        sw = self.switches.get(xy, {}).get(color)
        return base is not None and sw is not None and sw.could_take(base, port_in)

    def validate(self, rules: ArchRules) -> None:
        """Static checks: no link carries one color in both directions, and no router
        takes one color from more input directions than the arch accepts."""
        for (x, y), table in self.routes.items():
            for color, route in table.items():
                if rules.max_rx_per_color is not None and len(route.rx) > rules.max_rx_per_color:
                    raise ArchRuleError(
                        f"PE {(x, y)} routes color {color} with {route}: {rules.title} accepts "
                        f"at most {rules.max_rx_per_color} input direction(s) per color")
                for port in route.tx - {"ramp"}:
                    dx, dy = STEP[port]
                    other = self.routes.get((x + dx, y + dy), {}).get(color)
                    if other is not None and OPPOSITE[port] in other.tx:
                        raise RouteError(
                            f"color {color} is routed both ways between PE {(x, y)} and "
                            f"PE {(x + dx, y + dy)}: use one color per direction"
                        )

    def send(self, src: Coord, color: int, chunk: Chunk) -> list[tuple[Coord, Chunk]]:
        """Route a stream injected by the core of `src`; return (PE, chunk) deliveries."""
        return [(xy, c) for xy, c, _ in self.deliver(src, color, chunk)]

    def deliver(self, src: Coord, color: int, chunk: Chunk,
                control: bool = False) -> list[tuple[Coord, Chunk, int]]:
        """`send`, with the links each delivery crossed. A `control` chunk is one control
        wavelet: routed like data, it then carries out, at each router it passes, the
        switch command meant for it (see `_command`), and reaches a core only when that
        command's filter bit is off. What a router parks is delivered later (`late`)."""
        out: list[tuple[Coord, Chunk, int]] = []
        self._walk(src, color, chunk, control, [(src, "ramp", chunk.t0, 0, 0)], out)
        return out

    def _walk(self, src: Coord, color: int, chunk: Chunk, control: bool,
              todo: list[tuple[Coord, str, float, int, int]],
              out: list[tuple[Coord, Chunk, int]]) -> None:
        m, n = self.model, chunk.words.size
        seen: set[Coord] = set()
        moved: list[tuple[Coord, float]] = []  # switches this control wavelet advanced
        while todo:
            (x, y), port_in, t, hops, cmd = todo.pop()
            route = self._route((x, y), color)
            if (route is None or port_in not in route.rx
                    or ((x, y), color) in self.torn_down):
                if self._waits((x, y), color, port_in):
                    self._park((x, y), color, Parked(src, chunk, control, port_in, t, hops, cmd))
                    continue
                origin = "its own core" if port_in == "ramp" else port_in.upper()
                raise RouteError(
                    f"a wavelet on color {color} (sent by PE {src}) reaches PE {(x, y)} from "
                    f"{origin}, but that router has "
                    + (f"no route for color {color}" if route is None else f"route {route}")
                )
            if (x, y) in seen:
                raise RouteError(f"color {color} routes in a loop through PE {(x, y)}")
            seen.add((x, y))
            word = int(chunk.words[0]) if control else 0
            nxt = cmd + self._command((x, y), color, word, cmd, t, moved) if control else cmd
            for port in route.tx:
                if port == "ramp":
                    if control and ctrl_command(word, cmd)[1]:
                        continue  # filtered: the router does not hand it to the core
                    filt = None if control else self.filters.get(((x, y), color))
                    if filt is None:
                        out.append(((x, y), Chunk(chunk.words, t + m.ramp_latency, chunk.gap),
                                    hops))
                        continue
                    # a range filter: each run of wavelets it lets through, at its times
                    idx = chunk.words >> 16
                    keep = np.flatnonzero((idx >= filt[0]) & (idx <= filt[1]))
                    for run in np.split(keep, np.flatnonzero(np.diff(keep) != 1) + 1):
                        if run.size:
                            out.append(((x, y), Chunk(chunk.words[run], t + m.ramp_latency
                                                      + int(run[0]) * chunk.gap, chunk.gap), hops))
                    continue
                dx, dy = STEP[port]
                nx, ny = x + dx, y + dy
                if not (0 <= nx < self.width and 0 <= ny < self.height):
                    raise RouteError(
                        f"color {color} leaves the kernel rectangle at PE {(x, y)} going "
                        f"{port.upper()}"
                    )
                key = (x, y, port)
                start = max(t + m.hop_latency, self.link_free.get(key, 0.0))
                self.link_free[key] = start + n * max(chunk.gap, 1 / m.link_wavelets_per_cycle)
                self.wavelet_hops += n
                todo.append(((nx, ny), OPPOSITE[port], start, hops + 1, nxt))
        for xy, t in moved:  # what a moved switch now lets on follows this wavelet
            self.release(xy, color, t)

    def _park(self, xy: Coord, color: int, p: Parked) -> None:
        room = path_room(self.model, p.hops)
        if p.chunk.words.size > room:
            raise UnsupportedError(
                f"{p.chunk.words.size} wavelets on color {color} from PE {p.src} wait at the "
                f"router of PE {xy} (its switch position or a teardown does not let them on), "
                f"more than the {room} its path holds: the sender's stall is not modeled")
        self.parked.setdefault((xy, color), []).append(p)

    def release(self, xy: Coord, color: int, t: float) -> None:
        """The router of `xy` changed its state for `color` at time `t`: let on, in their
        order, the parked wavelets it takes now (behind one it still holds, those from
        the same port wait)."""
        waiting = self.parked.pop((xy, color), [])
        blocked: set[str] = set()
        for p in waiting:
            route = self._route(xy, color)
            if (p.port_in in blocked or route is None or p.port_in not in route.rx
                    or (xy, color) in self.torn_down):
                blocked.add(p.port_in)
                self.parked.setdefault((xy, color), []).append(p)
                continue
            out: list[tuple[Coord, Chunk, int]] = []
            shift = max(t, p.t) - p.chunk.t0
            chunk = Chunk(p.chunk.words, p.chunk.t0 + shift, p.chunk.gap)
            self._walk(p.src, color, chunk, p.control,
                       [(xy, p.port_in, max(t, p.t), p.hops, p.cmd)], out)
            for dst, c, hops in out:
                assert self.late is not None
                self.late(dst, color, c, hops, p.control)

    def _command(self, xy: Coord, color: int, word: int, k: int, t: float,
                 moved: list[tuple[Coord, float]]) -> int:
        """Carry out a control wavelet's k-th command at the router of `xy` (after routing
        it); return 1 when the router pops it (the next router reads the next command).
        No-op (0) and advance (1) as the 25-pt-stencil benchmark encodes them, teardown
        (3) as `<memcpy/memcpy_switches>`'s teardown_cmd_1: the router stops routing the
        color and its core runs the color's teardown handler. A router without
        `.switches` ignores advance and never pops. `.pop_mode`: no_pop keeps the
        command for the next router, always_pop pops it, pop_on_advance only when it
        advanced the switch."""
        cmd, _ = ctrl_command(word, k)
        sw = self.switches.get(xy, {}).get(color)
        pop = sw.pop if sw is not None else "no_pop"
        if cmd == SWITCH_NOP:
            return int(pop == "always_pop")
        if cmd == SWITCH_ADV:
            if sw is None:
                return 0
            sw.advance(f"PE {xy}, color {color}")
            moved.append((xy, t))
            return int(pop in ("always_pop", "pop_on_advance"))
        if cmd == SWITCH_TEARDOWN:
            self.torn_down.add((xy, color))
            if self.teardown is not None:
                self.teardown(xy, color, t)
            return int(pop == "always_pop")
        raise UnsupportedError(f"control wavelet 0x{word:08x} on color {color}: switch "
                               f"command {cmd} (command {k}) is not modeled (0 no-op, "
                               "1 advance, 3 teardown)")
