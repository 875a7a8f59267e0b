"""The simulator: a rectangle of PEs on a fabric, driven by a global event queue.

Events are "PE p may make progress at time t". Each step runs one task until
it finishes or stalls, so task starts across PEs happen in time order; data
moves functionally when sent and carries arrival times, so a consumer that
runs early still completes no earlier than its data arrives.

Host commands (`launch`, `call`, memcpy) act between kernel runs: a command
first lets the device run until no event is left; if a PE has still not
unblocked the command stream, that is a deadlock and is reported.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np
from xdsl.dialects.builtin import FunctionType, ModuleOp

from .errors import (
    DeadlockError,
    HostError,
    ProgramError,
    ReservedIdError,
    RouteError,
    StaleWaveletError,
    WseError,
)
from .fabric import Chunk, HostSink, path_room
from .impl import plan_module
from .interpreter import Drain
from .layout import evaluate_layout, split_modules
from .libs import CollectiveCall, run_collective
from .machine import ARCH, ARCHS, RESERVED_IDS, CycleModel
from .pe import PE
from .report import CycleReport, PeStats
from .values import convert


class Simulator:
    def __init__(
        self,
        module: ModuleOp,
        params: dict[str, Any] | None = None,
        arch: str = "wse2",
        model: CycleModel | None = None,
        max_cycles: float = 1e9,
    ):
        if arch not in ARCHS:
            raise ValueError(f"arch must be one of {ARCHS}, not {arch!r}")
        self.arch, self.model = arch, model or CycleModel()
        self.max_cycles = max_cycles  # guards against programs that never go quiet
        _, programs = split_modules(module)
        for m in module.body.ops:  # the layout, the programs and the modules they import
            plan_module(m)  # an op the simulator does not model fails here, before any runs
        layout = evaluate_layout(module, dict(params or {}), self.model)
        self.width, self.height, self.fabric = layout.width, layout.height, layout.fabric
        self.params = layout.params
        self.launch_colors: set[int] = set()
        # streaming memcpy: color -> its <memcpy/get_params> field (MEMCPYH2D_1, ...);
        # what the PEs send on a D2H color waits in `d2h_sinks` for the host to read it,
        # what the host streams in sits in the PEs' input queues (`h2d_pending`: the
        # streams a host command has not yet seen read)
        self.stream_colors: dict[int, str] = {}
        self.sim_log: list[tuple[float, str]] = []  # <simprint> lines: (cycle, text)
        self.d2h_sinks: dict[tuple[int, tuple[int, int]], HostSink] = {}
        self.h2d_pending: list[tuple[int, tuple[int, int], Any, int]] = []
        self.heap: list[tuple[float, int, PE]] = []
        self.draining: list[tuple[PE, Drain]] = []  # senders blocked on full queues
        self.stepping: PE | None = None  # the PE whose core runs now
        self.seq = 0
        self.now = self.host_t = 0.0
        self.windows: list[tuple[str, float, float]] = []
        # <collectives_2d>: per (axis, line index), each PE's calls not yet matched
        self.collective_calls: dict[tuple[str, int], dict[int, list[CollectiveCall]]] = {}
        self.pes: dict[tuple[int, int], PE] = {}
        for (x, y), tile in sorted(layout.tiles.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            pe = PE(self, x, y, tile.program, tile.params)
            pe.load(programs[tile.program])
            self.pes[(x, y)] = pe
        self.fabric.validate(ARCH[arch])
        self.fabric.late, self.fabric.teardown = self._late, self._teardown
        for color, field in self.stream_colors.items():
            used = [xy for xy, t in self.fabric.routes.items() if color in t]
            if used:
                raise RouteError(
                    f"color {color} is memcpy's streaming color .{field}, whose routes memcpy "
                    f"sets, but @set_color_config routes it at PE {used[0]}")
        for color in self.launch_colors:
            if color in RESERVED_IDS:
                raise ReservedIdError(f"launch color {color} is reserved for memcpy/the runtime")
            used = [xy for xy, t in self.fabric.routes.items() if color in t]
            if used:
                raise ReservedIdError(
                    f"color {color} is memcpy's launch color but PE {used[0]} routes it"
                )

    # --- event loop --------------------------------------------------------------------

    def poke(self, pe: PE, t: float) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, pe))

    def stream_color(self, field: str, color: int) -> None:
        """A PE's `<memcpy/memcpy>` names streaming color `color` as `.field`."""
        known = self.stream_colors.setdefault(color, field)
        if known != field:
            raise ProgramError(f"color {color} is both memcpy's .{known} and .{field}")

    def stream_room(self, x: int) -> int:
        """Wavelets the memcpy path between column `x` and the host holds while the far
        end does not read (the kernel's west edge, then memcpy's halo: an estimate)."""
        return path_room(self.model, x + 1)

    def send(self, pe: PE, color: int, chunk: Chunk, control: bool = False
             ) -> tuple[list, list]:
        """Deliver a stream; return its targets ((x, y), input queue, the queue's `taken`
        count at which the sender's last wavelet has left) and its receivers (input
        queue, words pushed to it before this stream). Control wavelets go one by one
        (each may move switches on the way of the next)."""
        if control:
            return self._send_control(pe, color, chunk)
        field = self.stream_colors.get(color)
        if field is not None:
            if not field.startswith("MEMCPYD2H"):
                raise ProgramError(f"{pe.where} sends on color {color}, memcpy's host-to-device "
                                   f"stream .{field}: only the host sends on it")
            sink = self.d2h_sinks.setdefault(
                (color, (pe.x, pe.y)), HostSink(clock=lambda: self.host_t, color=color))
            before = sink.pushed
            sink.push(Chunk(chunk.words, chunk.t0 + self.model.ramp_latency, chunk.gap))
            return ([((pe.x, pe.y), sink, sink.pushed - self.stream_room(pe.x))],
                    [(sink, before)])
        targets, receivers = [], []
        for xy, delivered, hops in self.fabric.deliver((pe.x, pe.y), color, chunk):
            dst = self.pes[xy]
            q = dst.queues[color]
            receivers.append((q, q.pushed))
            q.push(delivered)
            targets.append((xy, q, q.pushed - path_room(self.model, hops)))
            dst.try_async()
            self.poke(dst, delivered.t0)
        return targets, receivers

    def _late(self, xy: tuple[int, int], color: int, chunk: Chunk, hops: int,
              control: bool) -> None:
        """Wavelets a router parked reach a core now that it let them on."""
        dst = self.pes[xy]
        if control:
            dst.control_wavelet(color, int(chunk.words[0]), chunk.t0)
            return
        dst.queues[color].push(chunk)
        dst.try_async()
        self.poke(dst, chunk.t0)

    def _teardown(self, xy: tuple[int, int], color: int, t: float) -> None:
        self.pes[xy].teardown(color, t)

    def _send_control(self, pe: PE, color: int, chunk: Chunk) -> tuple[list, list]:
        if color in self.stream_colors:
            raise ProgramError(f"{pe.where} sends control wavelets on memcpy's color {color}")
        for i, word in enumerate(chunk.words):
            one = Chunk(chunk.words[i:i + 1], chunk.t0 + i * chunk.gap, chunk.gap)
            for xy, delivered, _ in self.fabric.deliver((pe.x, pe.y), color, one, control=True):
                self.pes[xy].control_wavelet(color, int(word), delivered.t0)
        return [], []

    def collective(self, call: CollectiveCall) -> None:
        """A PE calls a `<collectives_2d>` collective: once every PE of its line has
        made its next call, the data moves and each PE's callback task is activated."""
        dim = call.lib.dim
        size = self.width if dim["axis"] == "x" else self.height
        line = self.collective_calls.setdefault((dim["axis"], dim["line"]), {})
        line.setdefault(dim["pe_id"], []).append(call)
        if len(line) < size or not all(line.get(i) for i in range(size)):
            return
        calls = [line[i].pop(0) for i in range(size)]
        done, hops = run_collective(calls, self.model)
        self.fabric.wavelet_hops += hops
        for c, t in zip(calls, done):
            c.pe.end_t = max(c.pe.end_t, t)
            c.pe.activate("local", c.callback, at=t)

    def _wake_senders(self) -> None:
        """Resume the senders whose receivers have now made room: when the last of
        them took its wavelets."""
        still = []
        for pe, drain in self.draining:
            if drain.done():
                drain.ready_t = max(q.take_t for _, q, _ in drain.targets)
                if drain.op is not None:  # an async send: it completes now
                    pe.async_sent(drain.op, drain.ready_t)
                else:
                    self.poke(pe, max(drain.ready_t, pe.t))
            else:
                still.append((pe, drain))
        self.draining = still

    def run(self) -> None:
        """Run until no PE can make progress."""
        with np.errstate(all="ignore"):
            while self.heap:
                t, _, pe = heapq.heappop(self.heap)
                self.now = max(self.now, t)
                if t > self.max_cycles:
                    raise WseError(
                        f"the device is still busy after {self.max_cycles:,.0f} cycles "
                        f"({pe.where} at work): a livelock, or raise max_cycles"
                    )
                self.stepping = pe
                pe.step(t)
                self.stepping = None
                if self.draining:
                    self._wake_senders()

    def settle(self, what: str) -> None:
        """Run the device; raise DeadlockError if the host would wait forever."""
        self.run()
        if self.h2d_pending:
            self._check_streams_in()
        stuck = [pe for pe in self.pes.values() if pe.cmd_blocked]
        if stuck:
            raise DeadlockError(self._deadlock_report(what, stuck))
        end = max([self.now] + [pe.end_t for pe in self.pes.values()])
        if self.windows and self.windows[-1][2] < 0:
            name, start, _ = self.windows[-1]
            self.windows[-1] = (name, start, end)
        self.host_t = max(self.host_t, end)

    def stop(self) -> None:
        """The host's `stop()`: the device goes quiet, with no wavelet left unread.

        An asynchronous receive still waiting for wavelets then is allowed: a pipeline
        stage re-arms its receive after each packet (the SDK's mandelbrot benchmark) and
        the device simply stops with it pending (its queue is empty: unread wavelets
        are reported). Any other unfinished work (a task stalled mid-way, a send held
        back, a collective some PEs never joined) is a deadlock."""
        self.settle("stop()")
        waiting = {c.pe for line in self.collective_calls.values()
                   for calls in line.values() for c in calls}
        stuck = [pe for pe in self.pes.values()
                 if pe.running is not None or pe.held or pe in waiting
                 or any(not a.needs for a in pe.pending)]
        if stuck:  # the command stream is free, but work never finished: no progress
            lines = [f"deadlock at stop(): {len(stuck)} of {len(self.pes)} PEs have work "
                     "that can never finish"]
            lines += [f"  {pe.where} ('{pe.program}'): {d}" for pe in stuck[:8]
                      for d in pe.describe()]
            raise DeadlockError("\n".join(lines))
        self.check_stale("stop()")
        unread = [f"{c} from PE {xy}: {q.count}" for (c, xy), q in self.d2h_sinks.items()
                  if q.count]
        if unread:
            raise StaleWaveletError(
                "at stop(): PEs streamed wavelets to the host that no memcpy_d2h read "
                f"(color {', '.join(unread[:8])})")

    def check_stale(self, when: str) -> None:
        """Wavelets queued for a core that nothing read by the end of a launch are a
        bug of the program (on hardware they would feed the next launch's receives):
        raise naming each color and the PEs holding them."""
        left: dict[int, list[str]] = {}
        for pe in self.pes.values():
            for color, q in sorted(pe.queues.items()):
                if q.count:
                    left.setdefault(color, []).append(f"{pe.where}: {q.count}")
        for color, items in self._parked_report().items():
            left.setdefault(color, []).extend(f"held at the router of PE {xy}: {why}"
                                              for xy, why in items)
        if left:
            lines = [f"{len(v)} PE(s) hold unread "
                     + (f"wavelets on color {c}" if c >= 0 else f"elements in FIFO {-c}")
                     + f" ({', '.join(v[:8])}"
                     + (", ..." if len(v) > 8 else "") + ")" for c, v in sorted(left.items())]
            raise StaleWaveletError(
                f"at {when}: wavelets were sent that no PE read: " + "; ".join(lines))

    def _deadlock_report(self, what: str, stuck: list[PE]) -> str:
        colors = sorted({c for pe in stuck for c, q in pe.queues.items() if q.count}
                        | {pe.wait.color for pe in stuck if pe.wait}
                        | {c for pe in stuck for a in pe.pending for c in a.needs}
                        | {a.drain.color for pe in stuck for a in pe.held})  # fmt: skip
        lines = [
            f"deadlock: the host waits for {what}, but {len(stuck)} of {len(self.pes)} PEs "
            f"never unblock the command stream and nothing can run "
            f"(colors involved: {colors or 'none'})"
        ]
        for pe in stuck[:8]:
            lines += [f"  {pe.where} ('{pe.program}'): {d}" for d in pe.describe()]
        if len(stuck) > 8:
            lines.append(f"  ... and {len(stuck) - 8} more PEs")
        lines += [f"  wavelets on color {c} wait at the router of PE {xy}: {why}"
                  for c, items in self._parked_report().items() for xy, why in items[:4]]
        return "\n".join(lines)

    def _parked_report(self) -> dict[int, list[tuple[tuple[int, int], str]]]:
        """Per color: the routers holding parked wavelets, and why they hold them."""
        out: dict[int, list[tuple[tuple[int, int], str]]] = {}
        for (xy, color), parked in sorted(self.fabric.parked.items()):
            route = self.fabric.routes.get(xy, {}).get(color)
            why = ("the color is torn down there" if (xy, color) in self.fabric.torn_down
                   else f"its route ({route}) and switch positions do not take them from "
                   + ", ".join(sorted({p.port_in.upper() for p in parked})))
            srcs = sorted({p.src for p in parked})
            out.setdefault(color, []).append(
                (xy, f"{len(parked)} stream(s) from PE(s) {srcs}, as {why}"))
        return out

    # --- host side ----------------------------------------------------------------------

    def start(self, fn: str, args: list | tuple = ()) -> None:
        """Launch exported function `fn` on every PE (does not wait)."""
        self.settle("the previous command")
        self.check_stale(f"the launch of '{fn}'")
        for pe in self.pes.values():
            value, type = pe.exports.get(fn, (None, None))
            if not isinstance(type, FunctionType):
                raise HostError(f"'{fn}' is not an exported function on {pe.where}")
            params = pe.functions[value].function_type.inputs.data
            if len(args) != len(params):
                raise HostError(f"'{fn}' takes {len(params)} arguments, got {len(args)}")
            t0 = self.host_t + self.model.launch_latency
            pe.launches.append((value, [convert(a, p) for a, p in zip(args, params)], t0))
            pe.cmd_blocked = True
            self.poke(pe, t0)
        self.windows.append((fn, self.host_t, -1.0))

    def launch(self, fn: str, args: list | tuple = ()) -> None:
        self.start(fn, args)
        self.settle(f"launched function '{fn}'")

    def _stream(self, color: int, direction: str, x: int, y: int) -> PE:
        field = self.stream_colors.get(color)
        if field is None or not field.startswith(f"MEMCPY{direction}"):
            streams = ", ".join(f".{f} = {c}" for c, f in sorted(self.stream_colors.items()))
            raise HostError(
                f"streaming memcpy_{direction.lower()} on color {color}: the layout's "
                f"<memcpy/get_params> gives no .MEMCPY{direction}_n that color "
                f"(its streams: {streams or 'none'})")
        pe = self.pes.get((x, y))
        if pe is None:
            raise HostError(f"PE ({x}, {y}) is outside the {self.width}x{self.height} rectangle")
        return pe

    def stream_in(self, color: int, blocks: dict[tuple[int, int], np.ndarray]) -> None:
        """A streaming `memcpy_h2d`: each PE's words arrive on `color` at its core, one
        per cycle, as memcpy's routes bring them. The host command is done when every PE
        has read all but what the path holds: checked at the next command (`settle`)."""
        start = max(self.host_t, self.now)
        t0 = start + self.model.launch_latency
        for (x, y), words in blocks.items():
            pe = self._stream(color, "H2D", x, y)
            q = pe.queues[color]
            q.push(Chunk(np.array(words, np.uint32), t0,
                         1 / self.model.link_wavelets_per_cycle))
            self.h2d_pending.append((color, (x, y), q, q.pushed - self.stream_room(x)))
            pe.try_async()
            self.poke(pe, t0)
        self.run()
        self._stream_window(f"memcpy_h2d stream on color {color}", start)

    def stream_out_region(self, color: int, coords: list[tuple[int, int]],
                          n: int) -> dict[tuple[int, int], np.ndarray]:
        """A streaming `memcpy_d2h`: the next `n` words each PE of `coords` sends on
        `color`, read from all of them as they come (memcpy drains the region's PEs side
        by side, not one after the other). Reading makes room for senders held back on
        full paths; the device runs until the words are there, or raises DeadlockError
        when no PE can send more."""
        pes = [self._stream(color, "D2H", x, y) for x, y in coords]
        self.run()
        if self.h2d_pending:  # host commands run in order: a streaming H2D finishes first
            self._check_streams_in()
        sinks = [self.d2h_sinks.setdefault((color, xy),
                                           HostSink(clock=lambda: self.host_t, color=color))
                 for xy in coords]
        parts: list[list[np.ndarray]] = [[] for _ in coords]
        need = [n] * len(coords)
        start = max(self.host_t, self.now)
        while True:
            self.run()
            took = 0
            for i, sink in enumerate(sinks):
                if k := min(need[i], sink.count):
                    parts[i].append(sink.take(k)[0])
                    need[i] -= k
                    took += k
            if took:
                self.host_t = max(self.host_t, self.now)
                self._wake_senders()
            if not any(need):
                break
            if not took:  # the device is quiet (run() returned) and sent none
                i = next(i for i, k in enumerate(need) if k)
                raise DeadlockError(
                    f"deadlock: streaming memcpy_d2h on color {color} waits for {n} wavelets "
                    f"from {pes[i].where}, which sent {n - need[i]} and can send no more:\n  "
                    + "\n  ".join(pes[i].describe()))
        self._stream_window(f"memcpy_d2h stream on color {color}", start)
        return {xy: np.concatenate(p) if p else np.zeros(0, np.uint32)
                for xy, p in zip(coords, parts)}

    def _stream_window(self, what: str, start: float) -> None:
        """A streaming memcpy ran the device from `start` until it went quiet: a window
        of the cycle report, like a launch."""
        end = max([self.now] + [pe.end_t for pe in self.pes.values()])
        if end > start:
            self.windows.append((what, start, end))
        self.host_t = max(self.host_t, end)

    def _check_streams_in(self) -> None:
        """A streaming memcpy_h2d is done once its PEs read all but what the path holds;
        the host's next command waits for that. An async op that streams what it reads
        straight out (pipeline-01's @add16 from the H2D stream to the D2H stream) runs
        here in one step, but on hardware it stops reading when its output path is full:
        so the wavelets it still has to send beyond that path's room count as unread
        (the tutorial's "large size can stall": the D2H that would drain it waits for
        this H2D to finish)."""
        left = []
        for c, xy, q, need in self.h2d_pending:
            behind = sum(max(0, want - out.taken) for a in self.pes[xy].held
                         if c in a.needs and a.drain is not None
                         for _, out, want in a.drain.targets)
            if q.taken - behind < need:
                left.append((c, xy, q, need, behind))
        if left:
            c, xy, q, need, behind = left[0]
            held = (f"; an async op that read them still holds {behind} to send on a full "
                    "path, so on hardware it stopped reading") if behind else ""
            raise DeadlockError(
                f"deadlock: a streaming memcpy_h2d on color {c} never finishes: PE {xy} read "
                f"{q.taken - behind} of its {q.pushed} wavelets and reads no more, and the "
                f"path holds only {q.pushed - need}{held} ({len(left)} PE(s) in all)\n  "
                + "\n  ".join(self.pes[xy].describe()))
        self.h2d_pending.clear()

    def symbol(self, name: str, x: int, y: int) -> np.ndarray:
        pe = self.pes.get((x, y))
        if pe is None:
            raise HostError(f"PE ({x}, {y}) is outside the {self.width}x{self.height} rectangle")
        value, type = pe.exports.get(name, (None, None))
        if value is None:
            raise HostError(f"symbol '{name}' is not exported by {pe.where}")
        if isinstance(type, FunctionType):
            raise HostError(f"symbol '{name}' is a function, not data")
        return value

    def report(self) -> CycleReport:
        total = sum(end - start for _, start, end in self.windows if end >= 0)
        stats = [
            PeStats(pe.x, pe.y, pe.busy, pe.stall, pe.async_cycles, pe.flops, pe.tasks_run,
                    pe.dsd_ops)  # fmt: skip
            for pe in self.pes.values()
        ]
        return CycleReport(
            self.arch, self.width, self.height, total, stats, self.model,
            [(n, e - s) for n, s, e in self.windows if e >= 0], self.fabric.wavelet_hops,
        )  # fmt: skip
