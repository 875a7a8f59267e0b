"""Models of the SDK library modules a program may `@import_module`.

Only their interface is modeled: memcpy's data movement is done by the host
stand-in (`sdkruntime.py`) directly on PE memory, not by simulated routing
through the halo of memcpy PEs. Streaming memcpy's colors (`.MEMCPYH2D_1`,
`.MEMCPYD2H_1`, ... given to `<memcpy/get_params>`) reach each PE's
`sys_mod.MEMCPYH2D_1`; the simulator delivers a streaming `memcpy_h2d` as
wavelets on that color into the PEs' input queues and takes a streaming
`memcpy_d2h` from what the PEs send on theirs (`Simulator.stream_colors`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import ProgramError, RouteError, UnsupportedError
from .fabric import (
    CTRL_CMD_SHIFT,
    CTRL_ENTRY_SHIFT,
    CTRL_FILTER_BIT,
    NO_ENTRYPOINT,
    SWITCH_ADV,
    SWITCH_TEARDOWN,
    check_color,
    ctrl_word,
)
from .modules import FnRef

if TYPE_CHECKING:
    from .pe import PE


class Library:
    name = "?"
    fields: dict[str, Any]

    def access(self, field: str):
        if field not in self.fields:
            if callable(getattr(self, f"fn_{field}", None)):
                # a function as a value: `.f_callback = sys_mod.unblock_cmd_stream`
                return FnRef(field, self)
            raise ProgramError(f"{self.name} has no member '{field}' in the simulator's model")
        return self.fields[field]

    def call(self, field: str, args: list):
        fn = getattr(self, f"fn_{field}", None)
        if fn is None:
            modeled = sorted(k[3:] for k in dir(self) if k.startswith("fn_"))
            raise UnsupportedError(f"{self.name}.{field}() is not modeled by the WSE simulator"
                                   f" (modeled: {', '.join(modeled) or 'none'})")
        return fn(*args)


# a streaming channel's color: MEMCPYH2D_1, MEMCPYD2H_2, ... (one per --channels)
STREAM_FIELD = re.compile(r"MEMCPY(H2D|D2H)_[1-9][0-9]*")


def _passed_on(fields: dict) -> dict:
    """The fields of `<memcpy/get_params>` that its `get_params(x)` hands to each PE: the
    launch color and the streaming colors."""
    return {k: v for k, v in fields.items() if k == "LAUNCH" or STREAM_FIELD.fullmatch(k)}


class MemcpyParams(Library):
    """`<memcpy/get_params>` in the layout: `get_params(x)` gives each column its params."""

    name = "<memcpy/get_params>"

    def __init__(self, params: dict | None):
        self.fields = dict(params or {})
        for k, v in _passed_on(self.fields).items():
            if k != "LAUNCH":
                check_color(int(v), f"{self.name} .{k}")

    def fn_get_params(self, x: int) -> dict:
        return {"memcpy_column": x, **_passed_on(self.fields)}


class Memcpy(Library):
    """`<memcpy/memcpy>` on a PE: the command stream, the launch color and the
    streaming colors (`sys_mod.MEMCPYH2D_1`, ...), which it registers with the
    simulator: memcpy owns their routes."""

    name = "<memcpy/memcpy>"

    def __init__(self, pe: PE, params: dict | None):
        self.pe = pe
        self.fields = _passed_on(params or {})
        for k, v in self.fields.items():
            if k != "LAUNCH":
                pe.sim.stream_color(k, int(v))

    def fn_unblock_cmd_stream(self) -> None:
        self.pe.unblock_cmd_stream()


class LayoutInfo(Library):
    """`<layout>`: the PE's own coordinates at run time."""

    name = "<layout>"

    def __init__(self, pe: PE):
        self.pe, self.fields = pe, {}

    def fn_get_x_coord(self) -> int:
        return self.pe.x

    def fn_get_y_coord(self) -> int:
        return self.pe.y


class MathLib(Library):
    """`<math>` on a PE: scalar elementary functions. The `_f32` names take and return
    f32 (`math_lib.exp_f32(x)`, ...); the generic `sqrt`, `abs` and `inv` (1 / x) that
    the SDK's conjugate-gradient, BiCGStab and power-method benchmarks call work in their
    argument's float type (f16 or f32).

    Which functions the SDK's library has and their exact names are unverified beyond
    these (CSL_NOTES), so only they are modeled. Each call costs
    `CycleModel.math_call_cycles` (an estimate) and is computed by numpy in the type.
    """

    name = "<math>"
    FUNCTIONS = {
        "exp_f32": np.exp, "log_f32": np.log, "sqrt_f32": np.sqrt, "tanh_f32": np.tanh,
        "sin_f32": np.sin, "cos_f32": np.cos,
        # the SDK's cholesky benchmark scales each pivot column by math.invsqrt_f32(pivot)
        "invsqrt_f32": lambda x: np.float32(1) / np.sqrt(x),
    }
    GENERIC = {"sqrt": np.sqrt, "abs": np.abs, "inv": lambda x: x.dtype.type(1) / x}

    def __init__(self, pe: PE):
        self.pe, self.fields = pe, {}

    def call(self, field: str, args: list):
        fn = self.FUNCTIONS.get(field)
        generic = self.GENERIC.get(field)
        if fn is None and generic is None:
            raise UnsupportedError(
                f"math_lib.{field}() is not modeled by the WSE simulator "
                f"(modeled: {', '.join(sorted({*self.FUNCTIONS, *self.GENERIC}))})"
            )
        (x,) = args
        self.pe.t += max(0.0, self.pe.sim.model.math_call_cycles - self.pe.op_cycles)
        if fn is not None:
            return np.float32(fn(np.float32(x)))
        if not isinstance(x, np.float16 | np.float32):
            raise ProgramError(f"{self.pe.where}: math_lib.{field}() takes an f16 or f32, "
                               f"got {x!r} ({type(x).__name__})")
        with np.errstate(divide="ignore", invalid="ignore"):  # IEEE results, as hardware
            return x.dtype.type(generic(x))


class TimeLib(Library):
    """`<time>` on a PE: the timestamp counter. `tsc_size_words` (3) u16 words hold a
    48-bit cycle count, least significant word first (the SDK examples' host scripts
    decode them so); `enable_tsc()` starts the counter, `get_timestamp(&buf)` writes it.

    The simulator's counter is its global cycle clock, so every PE's timestamps are
    mutually consistent (on hardware each PE's counter starts on its own, which is why
    the SDK's bandwidth test first samples a reference clock). Reading it before
    `enable_tsc()` is refused: what a stopped counter holds is not documented. Host
    memcpy is not timed by the simulator, so timestamps around a memcpy measure the
    launches only."""

    name = "<time>"
    WORDS = 3

    def __init__(self, pe: PE):
        self.pe, self.fields = pe, {"tsc_size_words": self.WORDS}

    def fn_enable_tsc(self) -> None:
        self.pe.tsc_enabled = True

    def fn_disable_tsc(self) -> None:
        self.pe.tsc_enabled = False

    def fn_get_timestamp(self, buf: np.ndarray) -> None:
        pe = self.pe
        if not pe.tsc_enabled:
            raise ProgramError(f"{pe.where}: <time>.get_timestamp() before enable_tsc(): the "
                               "timestamp counter is not running")
        flat = buf.reshape(-1) if isinstance(buf, np.ndarray) else None
        if flat is None or flat.dtype.itemsize != 2 or flat.size < self.WORDS:
            raise ProgramError(f"{pe.where}: <time>.get_timestamp() needs a pointer to "
                               f"{self.WORDS} u16 words (tsc_size_words), got "
                               + (f"{flat.size} of {flat.dtype}" if flat is not None
                                  else type(buf).__name__))
        t = int(pe.t) & ((1 << 48) - 1)
        words = np.array([(t >> (16 * i)) & 0xFFFF for i in range(self.WORDS)], np.uint16)
        target = flat.view(np.uint16)
        if pe.watching:  # running async ops may read the buffer
            pe.core_write(target, slice(0, self.WORDS), words, pe.t)
        else:
            target[:self.WORDS] = words


class DebugLib(Library):
    """`<debug>` on a PE (imported with `.key` and `.buffer_size`): a trace buffer of
    `buffer_size` u16 words in the PE's SRAM, filled by `trace_string("...")`,
    `trace_i16(v)`, `trace_u32(v)` and `trace_timestamp()` (the functions the SDK's
    examples call: others are refused by name) and read after the run by the host with
    `cerebras.sdk.debug.debug_util.debug_util(dir).read_trace(x, y, key)`.

    Each entry is what that reader decodes (the `cerebras-sdk` wheel's debug_util): a u16
    tag word, its low byte the type ('h' i16, 'I' u32, 's' a string whose byte count,
    even, padded with NUL, is the high byte, 't' a 48-bit timestamp), then the value's
    little-endian words. A timestamp is the simulator's cycle clock (the library reads
    the counter itself: the SDK's tutorial enables no <time>). What the library does when
    the buffer is full is not documented: refused. Each traced word costs one cycle (an
    estimate: a store)."""

    name = "<debug>"
    MAX_STRING = 254  # bytes: the reader keeps a string's length in one byte, even

    def __init__(self, pe: PE, params: dict | None):
        params = dict(params or {})
        key, size = params.get("key"), params.get("buffer_size")
        if not isinstance(key, str) or not key:
            raise ProgramError(f"{pe.where}: {self.name} needs .key, a string naming its "
                               "trace buffer for the host's read_trace")
        if isinstance(size, bool) or not isinstance(size, int | np.integer) or size <= 0:
            raise ProgramError(f"{pe.where}: {self.name} (key {key!r}) needs .buffer_size, "
                               f"a positive number of u16 words, got {size!r}")
        if key in pe.debug_traces:
            raise ProgramError(f"{pe.where}: two {self.name} imports with key {key!r}: their "
                               "buffers would be one symbol")
        self.pe, self.key, self.fields = pe, key, {}
        self.buffer = pe.alloc(f"$$csl_debug.{key}.buffer", np.uint16, (int(size),), True)
        self.index = 0
        pe.debug_traces[key] = self

    def _put(self, what: str, words: list[int]) -> None:
        end = self.index + len(words)
        if end > self.buffer.size:
            raise ProgramError(
                f"{self.pe.where}: {self.name} {what} needs {len(words)} more u16 words in "
                f"trace buffer {self.key!r}, which has {self.buffer.size - self.index} of "
                f"{self.buffer.size} left (.buffer_size): what the library does when it is "
                "full is not documented")
        self.buffer[self.index:end] = words
        self.index = end
        self.pe.t += len(words)

    @staticmethod
    def _int(v: object, what: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int | np.integer):
            raise ProgramError(f"<debug>.{what} takes an integer, got {v!r}")
        return int(v)

    def fn_trace_i16(self, v) -> None:
        self._put("trace_i16", [ord("h"), self._int(v, "trace_i16") & 0xFFFF])

    def fn_trace_u32(self, v) -> None:
        w = self._int(v, "trace_u32") & 0xFFFFFFFF
        self._put("trace_u32", [ord("I"), w & 0xFFFF, w >> 16])

    def fn_trace_timestamp(self) -> None:
        t = int(self.pe.t) & ((1 << 48) - 1)
        self._put("trace_timestamp", [ord("t"), *((t >> (16 * i)) & 0xFFFF for i in range(3))])

    def fn_trace_string(self, s) -> None:
        if not isinstance(s, str):
            raise ProgramError(f"<debug>.trace_string takes a comptime string, got {s!r}")
        data = s.encode("utf-8")
        data += b"\0" * (len(data) % 2)
        if len(data) > self.MAX_STRING:
            raise ProgramError(f"{self.pe.where}: <debug>.trace_string of {len(data)} bytes: "
                               f"the trace keeps at most {self.MAX_STRING}")
        words = np.frombuffer(data, np.uint16).tolist() if data else []
        self._put("trace_string", [ord("s") | (len(data) << 8), *words])


class SimPrint(Library):
    """`<simprint>` on a PE: `print_string("...")`, `print_u16_decimal(v)`,
    `print_u32_decimal(v)` (the functions the SDK's examples call; others are refused by
    name) append to the PE's line, which goes to the simulator log when a newline is
    printed, as the SDK documents (topic 13): one line "@<cycle> <text>" per newline, the
    cycle the PE's clock at that print. `SdkRuntime.stop()` writes the log, in cycle
    order, to `sim.log` in the compile directory (the SDK's simulator writes it where it
    runs). Printing costs no simulated time (a simulator facility)."""

    name = "<simprint>"

    def __init__(self, pe: PE):
        self.pe, self.fields, self.line = pe, {}, ""

    def _print(self, text: str) -> None:
        *done, self.line = (self.line + text).split("\n")
        self.pe.sim.sim_log.extend((self.pe.t, f"@{int(self.pe.t)} {line}") for line in done)

    def fn_print_string(self, s) -> None:
        if not isinstance(s, str):
            raise ProgramError(f"<simprint>.print_string takes a comptime string, got {s!r}")
        self._print(s)

    def fn_print_u16_decimal(self, v) -> None:
        self._print(str(DebugLib._int(v, "print_u16_decimal") & 0xFFFF))

    def fn_print_u32_decimal(self, v) -> None:
        self._print(str(DebugLib._int(v, "print_u32_decimal") & 0xFFFFFFFF))


def read_trace(words: np.ndarray) -> list:
    """Decode a `<debug>` trace buffer's used words (the format `DebugLib` writes)."""
    raw = np.ascontiguousarray(words, np.uint16).tobytes()
    out: list = []
    i = 0
    while i < len(raw):
        tag, high = chr(raw[i]), raw[i + 1]
        i += 2
        if tag == "s":
            out.append(raw[i:i + high].split(b"\0")[0].decode("utf-8"))
            i += high
        elif tag == "t":
            out.append(int.from_bytes(raw[i:i + 6], "little"))
            i += 6
        elif tag == "h":
            out.append(int(np.frombuffer(raw[i:i + 2], "<i2")[0]))
            i += 2
        elif tag == "I":
            out.append(int(np.frombuffer(raw[i:i + 4], "<u4")[0]))
            i += 4
        else:
            raise ProgramError(f"trace buffer: unknown entry tag {tag!r} at byte {i - 2}")
    return out


class Collectives2dParams(Library):
    """`<collectives_2d/params>` in the layout: `get_params(x, y, .{ .x_colors,
    .x_entrypoints, .y_colors, .y_entrypoints })` gives each PE its row's (`.x`) and
    column's (`.y`) parameters: two colors and two local task ids per dimension, which
    the library owns on every PE of the rectangle."""

    name = "<collectives_2d/params>"

    def __init__(self, params: dict | None):
        self.fields = dict(params or {})

    def fn_get_params(self, x: int, y: int, cfg: dict) -> dict:
        def dim(axis: str, coord: int, line: int) -> dict:
            colors, entries = cfg.get(f"{axis}_colors"), cfg.get(f"{axis}_entrypoints")
            if not isinstance(colors, dict) or not isinstance(entries, dict) or \
                    len(colors) != 2 or len(entries) != 2:
                raise ProgramError(f"{self.name}.get_params needs .{axis}_colors and "
                                   f".{axis}_entrypoints, two of each")
            return {"axis": axis, "pe_id": int(coord), "line": int(line),
                    "colors": tuple(int(c) for c in colors.values()),
                    "entrypoints": tuple(int(e) for e in entries.values())}

        return {"x": dim("x", x, y), "y": dim("y", y, x)}


@dataclass(eq=False)
class CollectiveCall:
    pe: PE
    lib: Collectives2d
    op: str
    root: int
    args: tuple
    count: int
    callback: int
    t: float


class Collectives2d(Library):
    """`<collectives_2d/pe>` on a PE: MPI-like collectives along its row (`.x` dim
    params) or column (`.y`). Modeled at the level of the library: every PE of the
    line calls the same collective (in the same order), the data moves when the last
    of them has called, and each PE's callback task is activated when its part is
    done. The library's resources are checked against the arch and the program: its
    two colors (routable, not memcpy's, routed by no one else), its two queues when
    the program gives them (existing, not memcpy's; each used for output and input),
    its two entrypoint task ids (legal local ids that the program binds to no task of
    its own).

    Timing (estimates, from the fabric figures: wavelet streams pipelined over a
    chain of hops): a broadcast or a reduction of n words over a line of L PEs ends
    n + (L - 1) * (hop latency + 1) cycles after the last call; a scatter or gather
    of chunks of c words moves (L - 1) * c words through the root's link. Wavelet
    hops and the reduction's additions are counted in the report."""

    name = "<collectives_2d/pe>"
    OPS = ("broadcast", "reduce_fadds", "scatter", "gather")

    def __init__(self, pe: PE, params: dict | None):
        params = dict(params or {})
        dim = params.get("dim_params")
        if not isinstance(dim, dict) or "axis" not in dim:
            raise ProgramError(f"{pe.where}: {self.name} needs .dim_params from "
                               "<collectives_2d/params>.get_params(...).x or .y")
        self.pe, self.dim = pe, dim
        # .queues is optional (the SDK's gemv-collectives_2d benchmark passes none): the
        # library then picks its own, which are not documented, so there is nothing to check
        queues = params.get("queues", ())
        self.queues = tuple(int(q) for q in queues.values()) if isinstance(queues, dict) \
            else tuple(queues)
        if "queues" in params and len(self.queues) != 2:
            raise ProgramError(f"{pe.where}: {self.name}'s .queues must be two queue ids, "
                               f"got {len(self.queues)}")
        self.ready = False
        self.fields = {"pe_id": dim["pe_id"]}

    def _claim(self) -> None:
        pe, sim = self.pe, self.pe.sim
        what = f"{self.name} ({self.dim['axis']} dim)"
        for color in self.dim["colors"]:
            check_color(color, f"{pe.where}: {what}")
            routed = sim.fabric.routes.get((pe.x, pe.y), {})
            if color in routed:
                raise RouteError(f"{pe.where}: color {color} belongs to {what}, but the layout "
                                 f"routes it ({routed[color]})")
        for q in self.queues:
            pe._check_queue(q, True, what)
            pe._check_queue(q, False, what)
        for e in self.dim["entrypoints"]:
            pe._check_id("local", e, f"{what} entrypoint")
            if ("local", e) in pe.tasks:
                raise ProgramError(f"{pe.where}: local task id {e} is an entrypoint of {what}, "
                                   f"but the program binds {pe.tasks[('local', e)]} to it")

    def fn_init(self) -> None:
        self._claim()
        self.ready = True

    def _call(self, op: str, root: int, args: tuple, count: int, callback: int) -> None:
        if not self.ready:
            raise ProgramError(f"{self.pe.where}: {self.name}.{op}() before init()")
        self.pe._task("local", int(callback), f"{self.name}.{op} callback")
        self.pe.sim.collective(CollectiveCall(self.pe, self, op, int(root), args, int(count),
                                              int(callback), self.pe.t))

    def fn_broadcast(self, root, buf, count, callback) -> None:
        self._call("broadcast", root, (buf,), count, callback)

    def fn_reduce_fadds(self, root, send, recv, count, callback) -> None:
        self._call("reduce_fadds", root, (send, recv), count, callback)

    def fn_scatter(self, root, send, recv, chunk, callback) -> None:
        self._call("scatter", root, (send, recv), chunk, callback)

    def fn_gather(self, root, send, recv, chunk, callback) -> None:
        self._call("gather", root, (send, recv), chunk, callback)


def run_collective(calls: list[CollectiveCall], model: Any) -> tuple[list[float], int]:
    """Move the data of one collective whose calls (one per PE, in line order) have all
    been made; return each PE's completion time and the wavelet hops it took."""
    first = calls[0]
    op, root, n, size = first.op, first.root, first.count, len(calls)
    for c in calls:
        if (c.op, c.root, c.count) != (op, root, n):
            raise ProgramError(
                f"{c.pe.where}: collectives along a line must match: {c.lib.name}.{c.op}"
                f"(root {c.root}, {c.count}) meets {first.pe.where}'s {op}(root {root}, {n})")
    if not 0 <= root < size:
        raise ProgramError(f"{first.pe.where}: {op} root {root} is outside the line of {size}")

    def words(buf: np.ndarray, k: int, what: str) -> np.ndarray:
        flat = buf.reshape(-1)
        if flat.size < k or flat.dtype.itemsize != 4:
            raise ProgramError(f"{op}: {what} needs {k} 32-bit words, has {flat.size} of "
                               f"{flat.dtype}")
        return flat.view(np.uint32)

    t0 = max(c.t for c in calls)
    hop = model.hop_latency + 1
    dist = [abs(i - root) for i in range(size)]
    if op == "broadcast":
        src = words(calls[root].args[0], n, "the root's buffer")[:n].copy()
        for i, c in enumerate(calls):
            if i != root:
                words(c.args[0], n, "a receive buffer")[:n] = src
        done = [t0 + n + d * hop for d in dist]
        hops = n * (size - 1)
    elif op == "reduce_fadds":
        vals = [words(c.args[0], n, "a send buffer")[:n].view(np.float32) for c in calls]
        acc = vals[root].copy()
        for side in (range(size - 1, root, -1), range(0, root)):  # each chain toward the root
            part = None
            for i in side:
                part = vals[i].copy() if part is None else (vals[i] + part).astype(np.float32)
            if part is not None:
                acc = (acc + part).astype(np.float32)
        words(calls[root].args[1], n, "the root's receive buffer")[:n] = acc.view(np.uint32)
        for i, c in enumerate(calls):
            if dist[i] != max(dist):  # every PE but the chains' far ends adds once
                c.pe.flops += n
        done = [t0 + n + max(dist) * hop] * size
        hops = n * (size - 1)
    elif op == "scatter":
        src = words(calls[root].args[0], n * size, "the root's send buffer")
        for i, c in enumerate(calls):
            words(c.args[1], n, "a receive buffer")[:n] = src[i * n:(i + 1) * n]
        done = [t0 + n * (size - 1) + d * hop for d in dist]
        hops = n * sum(dist)
    else:  # gather
        dst = words(calls[root].args[1], n * size, "the root's receive buffer")
        for i, c in enumerate(calls):
            dst[i * n:(i + 1) * n] = words(c.args[0], n, "a send buffer")[:n]
        done = [t0 + n * (size - 1) + max(dist) * hop] * size
        hops = n * sum(dist)
    return done, hops


class ControlOpcodes(Library):
    """`<control>`'s `opcode`: the switch commands a control wavelet carries. Only
    SWITCH_ADV (1, as the SDK's 25-pt-stencil benchmark encodes "advance") is modeled."""

    name = "<control>.opcode"

    def __init__(self):
        self.fields = {"SWITCH_ADV": SWITCH_ADV}


class ControlLib(Library):
    """`<control>` on a PE: `encode_single_payload(opcode, ce_filter, entrypoint, data)`
    builds a control wavelet's payload: the command for the router it passes, whether
    that router keeps it from the core (`ce_filter`), the control task it activates
    there (`{}`: none) and its 16-bit data (SDK tutorials topic-06/07-switches). The
    field positions are those the 25-pt-stencil benchmark writes by hand (fabric.py);
    the simulator reads the payload back from them."""

    name = "<control>"

    def __init__(self):
        self.fields = {"opcode": ControlOpcodes()}

    def fn_encode_single_payload(self, opcode: int, ce_filter, entrypoint, data: int) -> int:
        entry = NO_ENTRYPOINT if entrypoint is None else int(entrypoint)
        if not 0 <= entry < 64:
            raise ProgramError(f"<control>.encode_single_payload: entrypoint {entry} is not a "
                               "control task id 0-63")
        return ((int(opcode) & 0b11) << CTRL_CMD_SHIFT | int(bool(ce_filter)) << CTRL_FILTER_BIT
                | entry << CTRL_ENTRY_SHIFT | int(data) & 0xFFFF)


class MemcpySwitches(Library):
    """`<memcpy/memcpy_switches>`: switch command lists and `ctrl(cmds)`, the payload of a
    control wavelet carrying them, one command per router on its way, each filtered
    from the cores, no control task (the SDK's allreduce library). switch_cmd_11
    advances the switches of the sender's router and the next one; teardown_cmd_1 tears
    the color down (its first command; a router that does not pop hands it on:
    0x9df9249, the payload the allreduce library's comments quote)."""

    name = "<memcpy/memcpy_switches>"
    fields: dict[str, Any] = {}

    def fn_switch_cmd_11(self) -> tuple[int, ...]:
        return (SWITCH_ADV, SWITCH_ADV)

    def fn_teardown_cmd_1(self) -> tuple[int, ...]:
        return (SWITCH_TEARDOWN,)

    def fn_ctrl(self, cmds) -> int:
        if not isinstance(cmds, tuple):
            raise ProgramError(f"{self.name}.ctrl takes a command list (switch_cmd_11(), "
                               f"...), not {cmds!r}")
        return ctrl_word(cmds)


class TileConfig(Library):
    """`<tile_config>`: its calls on this PE's router are `csl_ext.tile_config` ops."""

    name = "<tile_config>"
    fields: dict[str, Any] = {}


def import_library(name: str, params: dict | None, pe: PE | None) -> Library:
    if pe is None:
        if name == "<memcpy/get_params>":
            return MemcpyParams(params)
        if name == "<collectives_2d/params>":
            return Collectives2dParams(params)
    elif name == "<memcpy/memcpy>":
        return Memcpy(pe, params)
    elif name == "<layout>":
        return LayoutInfo(pe)
    elif name == "<math>":
        return MathLib(pe)
    elif name == "<time>":
        return TimeLib(pe)
    elif name == "<collectives_2d/pe>":
        return Collectives2d(pe, params)
    elif name == "<debug>":
        return DebugLib(pe, params)
    elif name == "<simprint>":
        return SimPrint(pe)
    elif name == "<control>":
        return ControlLib()
    elif name == "<memcpy/memcpy_switches>":
        return MemcpySwitches()
    elif name == "<tile_config>":
        return TileConfig()
    where = "a layout" if pe is None else "a PE program"
    raise UnsupportedError(f"@import_module(\"{name}\") in {where} is not modeled by the simulator")
