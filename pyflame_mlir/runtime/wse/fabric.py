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
from collections.abc import Callable
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
    """A router's switch for one color: its routes per position (None: not set) and
    where it stands. `sources`: the PEs whose wavelets have passed it."""

    routes: list[Route | None]
    current: int
    ring: bool
    pop: str
    sources: set[Coord] = field(default_factory=set)

    def advance(self, where: str) -> None:
        for k in range(self.current + 1, 4):
            if self.routes[k] is not None:
                self.current = k
                return
        if not self.ring:
            raise UnsupportedError(
                f"{where}: a control wavelet advances the switch past its last position "
                f"({self.current}) without .ring_mode: what the router does then is not "
                "documented; not simulated")
        self.current = 0


# control wavelet payload fields, as the SDK's 25-pt-stencil benchmark encodes them
# (switches.csl, `ctrl`): the first router's switch command in bits 22-23, its
# "do not forward to the core" filter in bit 24, the control task id in bits 16-21
CTRL_CMD_SHIFT, CTRL_FILTER_BIT, CTRL_ENTRY_SHIFT = 22, 24, 16
SWITCH_NOP, SWITCH_ADV = 0, 1
NO_ENTRYPOINT = 31  # "the hardware's way of saying null color"


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
    def __init__(self, width: int, height: int, model: CycleModel):
        self.width, self.height, self.model = width, height, model
        self.routes: dict[Coord, dict[int, Route]] = {}
        self.switches: dict[Coord, dict[int, Switch]] = {}
        self.link_free: dict[tuple[int, int, str], float] = {}
        self.wavelet_hops = 0

    def set_route(self, xy: Coord, color: int, rx: tuple[str, ...], tx: tuple[str, ...],
                  switches: SwitchSpec | None = None) -> None:
        where = f"@set_color_config at PE {xy}"
        check_color(color, where)
        table = self.routes.setdefault(xy, {})
        if color in table:
            raise RouteError(f"{where}: color {color} is configured twice")
        route = Route(frozenset(rx), frozenset(tx))
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
        self.routes[xy][color] = route
        if switches is not None:
            routes: list[Route | None] = [route]
            for p in switches.positions:
                if p is None:
                    routes.append(None)
                elif p[0] == "rx":
                    routes.append(Route(frozenset({p[1]}), route.tx))
                else:
                    routes.append(Route(route.rx, frozenset({p[1]})))
            self.switches.setdefault(xy, {})[color] = Switch(
                routes, switches.current, switches.ring, switches.pop)

    def _route(self, xy: Coord, color: int, src: Coord) -> Route | None:
        """The route of `color` at `xy` now: its switch's current position, if it has one.
        A stream is routed when it is sent, so switches are exact while one PE sends
        through them (its data and control wavelets keep their order); the order in which
        several senders' wavelets would meet a switch is not modeled, and refused."""
        sw = self.switches.get(xy, {}).get(color)
        if sw is None:
            return self.routes.get(xy, {}).get(color)
        sw.sources.add(src)
        if len(sw.sources) > 1:
            raise UnsupportedError(
                f"the switch of color {color} at PE {xy} is passed by wavelets of several "
                f"senders ({sorted(sw.sources)}): in which order their data and control "
                "wavelets meet it is not modeled")
        return sw.routes[sw.current]

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
        wavelet: routed like data, it then carries out its switch command at the router
        it passed (see `_control`), and reaches a core only when its filter bit is off."""
        m, n = self.model, chunk.words.size
        out: list[tuple[Coord, Chunk, int]] = []
        todo = [(src, "ramp", chunk.t0, 0)]
        seen: set[Coord] = set()
        while todo:
            (x, y), port_in, t, hops = todo.pop()
            route = self._route((x, y), color, src)
            if route is None or port_in not in route.rx:
                origin = "its own core" if port_in == "ramp" else port_in.upper()
                raise RouteError(
                    f"a wavelet on color {color} (sent by PE {src}) reaches PE {(x, y)} from "
                    f"{origin}, but that router has "
                    + (f"no route for color {color}" if route is None else f"route {route}")
                )
            if (x, y) in seen:
                raise RouteError(f"color {color} routes in a loop through PE {(x, y)}")
            seen.add((x, y))
            for port in route.tx:
                if port == "ramp":
                    if control and (int(chunk.words[0]) >> CTRL_FILTER_BIT) & 1:
                        continue  # filtered: the router does not hand it to the core
                    out.append(((x, y), Chunk(chunk.words, t + m.ramp_latency, chunk.gap), hops))
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
                todo.append(((nx, ny), OPPOSITE[port], start, hops + 1))
        if control:
            self._control(color, int(chunk.words[0]), seen)
        return out

    def _control(self, color: int, word: int, passed: set[Coord]) -> None:
        """A control wavelet's switch command, carried out by the routers it passed
        (after routing it: SDK tutorial topic-06-switches). Modeled: no command, or
        advance, at a single switching router; popping the command list at each hop
        (`.pop_mode`) and other commands are refused."""
        cmd = (word >> CTRL_CMD_SHIFT) & 0b11
        switching = sorted(xy for xy in passed if color in self.switches.get(xy, {}))
        if cmd == SWITCH_NOP or not switching:
            return
        if cmd != SWITCH_ADV:
            raise UnsupportedError(f"control wavelet 0x{word:08x} on color {color}: switch "
                                   f"command {cmd} is not modeled (only advance, 1)")
        if len(switching) > 1:
            raise UnsupportedError(
                f"a control wavelet on color {color} passes several switching routers "
                f"({switching}): per-hop switch commands are not modeled")
        (xy,) = switching
        sw = self.switches[xy][color]
        if sw.pop != "no_pop":
            raise UnsupportedError(f"switch of color {color} at PE {xy}: .pop_mode "
                                   f"{sw.pop} is not modeled")
        sw.advance(f"PE {xy}, color {color}")
