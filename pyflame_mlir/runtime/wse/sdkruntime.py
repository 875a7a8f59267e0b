"""A stand-in for the SDK host runtime (`cerebras.sdk.runtime.sdkruntimepybind`).

Same names and call shapes as the SDK (`SdkRuntime`, `MemcpyDataType`,
`MemcpyOrder`), running the compile directory made by `compile.py` on the
simulator. `install_sdk_shim()` puts this module into `sys.modules` under the
SDK's own path when the real SDK is absent, so an SDK host script runs
unchanged; no `cerebras` package is shipped.

memcpy moves data directly to and from PE memory and takes no simulated
time; a streaming memcpy (`streaming=True`, the stream named by its color)
delivers wavelets to, or takes them from, the PEs' cores on that color
(`Simulator.stream_in`/`stream_out`). `launch`/`call` run the device until
every PE has unblocked the command stream (or raise `DeadlockError`). Every
memcpy is counted (`traffic[-1]`: bytes host-to-device and device-to-host by
symbol, or by `<stream color>`, since `count_traffic()`), and
`launch_report()` is the cycle report of the latest launch alone (the
simulator's own report sums every launch of the session).

The host API's corners follow the `cerebras-sdk` client wheel on the package index
(2.10.0: its `sdk_utils` module and its remote `SdkRuntime`, whose calls mirror the
simulator runtime's): a command given `nonblock=True` returns a `Task` (`wait()`,
`done()`), a blocking one None; `launch` takes the numpy scalar of each parameter's exact
type (check_rpc_api), `call` sends each argument's 32-bit word (`cast_uint32`) unchecked;
`sdk_utils` has `cast_uint32`, `input_array_to_u32` (a sentinel other than None, 0 too,
puts the index in the high half), `memcpy_view` (32-, 16- or 8-bit views), `make_u48`,
`sub_ts` and `calculate_cycles`.
"""

from __future__ import annotations

import enum
import importlib.util
import itertools
import json
import sys
import types
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    FunctionType,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute

from ..progress import progress
from .compile import FABRIC_OFFSETS, IR_FILE, META_FILE
from .errors import HostError
from .libs import read_trace
from .machine import CycleModel
from .program import load_module
from .report import CycleReport, PeStats
from .simulator import Simulator
from .values import convert, int_info

SDK_MODULE = "cerebras.sdk.runtime.sdkruntimepybind"
SIM_LOG = "sim.log"  # <simprint>'s output, in the compile directory


class MemcpyDataType(enum.Enum):
    MEMCPY_32BIT = 32
    MEMCPY_16BIT = 16


class MemcpyOrder(enum.Enum):
    ROW_MAJOR = 0
    COL_MAJOR = 1


@dataclass
class HostTraffic:
    """Bytes memcpy moved between the host and the device, by symbol."""

    h2d: dict[str, int] = field(default_factory=dict)
    d2h: dict[str, int] = field(default_factory=dict)

    @property
    def h2d_bytes(self) -> int:
        return sum(self.h2d.values())

    @property
    def d2h_bytes(self) -> int:
        return sum(self.d2h.values())

    def __str__(self) -> str:
        return f"{self.h2d_bytes:,} B in ({len(self.h2d)} symbols), " \
               f"{self.d2h_bytes:,} B out ({len(self.d2h)} symbols)"


def _payload(dt: MemcpyDataType) -> int:
    """Bytes of data per element memcpy moves: 16-bit data is 2 bytes (the host array
    still holds one u32 per element, the value in its low half, as the SDK's API has
    it; what the host link carries per element is not documented: this counts data)."""
    return 2 if dt == MemcpyDataType.MEMCPY_16BIT else 4


def report_delta(before: CycleReport | None, after: CycleReport) -> CycleReport:
    """The report of what ran between two reports of one simulator (its counters only
    grow): per-PE busy, stall, FLOPs..., the launches since, the wavelet hops since."""
    if before is None:
        return after
    old = {(p.x, p.y): p for p in before.pes}
    pes = []
    for p in after.pes:
        q = old.get((p.x, p.y))
        pes.append(p if q is None else PeStats(
            p.x, p.y, p.busy - q.busy, p.stall - q.stall, p.async_cycles - q.async_cycles,
            p.flops - q.flops, p.tasks - q.tasks, p.dsd_ops - q.dsd_ops))
    launches = after.launches[len(before.launches):]
    return replace(after, total_cycles=sum(c for _, c in launches), pes=pes,
                   launches=launches, wavelet_hops=after.wavelet_hops - before.wavelet_hops)


class Task:
    """What a command given ``nonblock=True`` returns (the SDK's ``SdkRuntime.Task``):
    ``wait()`` blocks until it is done, ``done()`` says whether it is. A blocking command
    returns None, as the SDK's does."""

    def __init__(self, runtime: SdkRuntime, op_index: int, what: str):
        self.runtime, self.op_index, self.what = runtime, op_index, what

    def done(self) -> bool:
        return self.runtime.is_task_done(self)

    def wait(self) -> None:
        self.runtime.task_wait(self)

    def __repr__(self) -> str:
        return f"<SdkRuntime.Task {self.op_index}: {self.what}>"


# the CSL type each host scalar stands for in a launch (the SDK's check_rpc_api)
# (np.int_ and np.uint, 64-bit here, stand for i32 and u32 as in check_rpc_api; a
# Python int for an i32 or u32 parameter is what check_rpc_api means to accept: its
# FIXME; each of the three must fit the parameter's range)
_LAUNCH_TYPES = {float: "f32", np.float32: "f32", np.float16: "f16", np.int32: "i32",
                 np.uint32: "u32", np.int16: "i16", np.uint16: "u16", np.int64: "i32",
                 np.uint64: "u32"}
_WIDE_INTS = {"i32": (-2**31, 2**31 - 1), "u32": (0, 2**32 - 1)}


_NP_NAME = {"f32": "float32", "f16": "float16", "i32": "int32", "u32": "uint32",
            "i16": "int16", "u16": "uint16"}


def _csl_type(t: Attribute) -> str:
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, Float16Type):
        return "f16"
    if isinstance(t, IntegerType) and t.width.data in (16, 32):
        return ("u" if t.signedness.data == Signedness.UNSIGNED else "i") + str(t.width.data)
    return str(t)


def _from_word(word: np.uint32, t: Attribute):
    """A launch argument as the PE's function parameter of type `t` reads it: the 32-bit
    word the host sent (`cast_uint32`), a 16-bit parameter in its low half."""
    if isinstance(t, Float32Type):
        return np.array([word], np.uint32).view(np.float32)[0]
    if isinstance(t, Float16Type):
        return np.array([word & 0xFFFF], np.uint16).view(np.float16)[0]
    return convert(int(word) & ((1 << int_info(t)[0]) - 1), t)


_MSG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def _check_kwargs(kwargs: dict) -> None:
    """The keyword arguments the SDK's SdkRuntime documents (besides cmaddr):
    suppress_simfab_trace (bool), simfab_numthreads (int, at most 64), msg_level (DEBUG,
    INFO, WARNING or ERROR); and this stand-in's `model` (a CycleModel). The simulator
    writes no simfab trace and runs in one thread, so the first two change nothing."""
    for key, value in kwargs.items():
        if key == "suppress_simfab_trace":
            ok = isinstance(value, bool)
        elif key == "simfab_numthreads":
            ok = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 64
        elif key == "msg_level":
            ok = value in _MSG_LEVELS
        elif key == "model":
            ok = isinstance(value, CycleModel)
        else:
            raise HostError(f"SdkRuntime() got an unknown keyword argument {key!r} (it takes "
                            "cmaddr, suppress_simfab_trace, simfab_numthreads, msg_level)")
        if not ok:
            raise HostError(f"SdkRuntime({key}={value!r}): suppress_simfab_trace is a bool, "
                            "simfab_numthreads an int of 1-64, msg_level one of "
                            f"{', '.join(_MSG_LEVELS)}, model a CycleModel")


class SdkRuntime:
    """`SdkRuntime(compile_dir, cmaddr=None, **kwargs)`: cmaddr None means "the simulator"
    (see `_check_kwargs` for the keyword arguments)."""

    Task = Task

    instances: list[SdkRuntime] = []  # every runtime made in this process, for `run_host`

    def __init__(self, bindir: str | Path, cmaddr: str | None = None, **kwargs: object):
        if cmaddr:
            raise HostError(f"cmaddr={cmaddr!r}: this stand-in only runs the WSE simulator")
        _check_kwargs(kwargs)
        self.bindir = Path(bindir)
        self.log_dir: Path | None = self.bindir  # where stop() writes sim.log
        meta_path, ir_path = self.bindir / META_FILE, self.bindir / IR_FILE
        if not ir_path.exists():
            raise HostError(f"{ir_path} not found: compile with pyflame_mlir.runtime.wse.compile")
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        model = kwargs.get("model")
        self.sim = Simulator(
            load_module(ir_path),
            meta.get("params", {}),
            str(meta.get("arch", "wse2")),
            model if isinstance(model, CycleModel) else None,
        )
        self._ids: dict[int, str] = {}
        self._handles = itertools.count(1)
        self.loaded = self.running = False
        self.traffic: list[HostTraffic] = [HostTraffic()]  # [-1]: since the last launch
        self._before: CycleReport | None = None
        SdkRuntime.instances.append(self)

    @classmethod
    def for_module(
        cls,
        module: object,
        params: dict | None = None,
        arch: str = "wse2",
        model: CycleModel | None = None,
    ) -> SdkRuntime:
        """A runtime on a fresh simulator of an in-memory `csl` module (no compile dir)."""
        rt = cls.__new__(cls)
        rt.bindir = Path(".")
        rt.log_dir = None  # no compile directory: <simprint>'s lines stay in sim.sim_log
        rt.sim = Simulator(load_module(module), params or {}, arch, model)  # type: ignore[arg-type]
        rt._ids = {}
        rt._handles = itertools.count(1)
        rt.loaded = rt.running = False  # not in `instances`: the caller keeps it
        rt.traffic = [HostTraffic()]
        rt._before = None
        return rt

    # --- life cycle ----------------------------------------------------------------------

    def get_id(self, symbol: str) -> int:
        if not any(symbol in pe.exports for pe in self.sim.pes.values()):
            raise HostError(f"no PE exports symbol '{symbol}'")
        ident = len(self._ids) + 1
        self._ids[ident] = symbol
        return ident

    def load(self) -> None:
        self.loaded = True

    def run(self) -> None:
        if not self.loaded:
            raise HostError("run() before load()")
        self.running = True

    def stop(self) -> None:
        self._require_running()
        self.sim.stop()  # csl15: also reports wavelets nobody read
        self.running = False
        if self.sim.sim_log and self.log_dir is not None:  # <simprint>'s, in cycle order
            lines = [text for _, text in sorted(self.sim.sim_log, key=lambda e: e[0])]
            (self.log_dir / SIM_LOG).write_text("".join(f"{line}\n" for line in lines))

    def _done(self, nonblock: bool, what: str) -> Task | None:
        """The command's return: a `Task` when nonblocking, else None (the simulator has
        already done it either way; `wait()` settles the device)."""
        return Task(self, next(self._handles), what) if nonblock else None

    def _require_running(self) -> None:
        if not self.running:
            raise HostError("the runtime is not running: call load() and run() first")

    def _name(self, symbol: int | str) -> str:
        if isinstance(symbol, str):
            return symbol
        if symbol not in self._ids:
            raise HostError(f"unknown symbol id {symbol}: use get_id()")
        return self._ids[symbol]

    # --- kernel launches ----------------------------------------------------------------------

    def _param_types(self, fname: str) -> list[Attribute]:
        for pe in self.sim.pes.values():
            value, type = pe.exports.get(fname, (None, None))
            if isinstance(type, FunctionType):
                return list(pe.functions[value].function_type.inputs.data)
        raise HostError(f"'{fname}' is not an exported function of any PE")

    def launch(self, fname: str, *args: object, nonblock: bool = False) -> Task | None:
        """Run exported function `fname` on every PE. As the SDK's launch, each argument
        must be the numpy scalar of the parameter's exact type (np.int16 for an i16, a
        float or np.float32 for an f32, ...): anything else is refused, a plain Python
        int too (the SDK's check_rpc_api takes none)."""
        self._require_running()
        params = self._param_types(fname)
        if len(args) != len(params):
            raise HostError(f"launch('{fname}'): it takes {len(params)} arguments, got "
                            f"{len(args)}")
        for k, (a, p) in enumerate(zip(args, params)):
            want, got = _csl_type(p), _LAUNCH_TYPES.get(type(a))
            if type(a) is int and want in _WIDE_INTS:
                got = want
            if got == want and want in _WIDE_INTS and \
                    not _WIDE_INTS[want][0] <= int(a) <= _WIDE_INTS[want][1]:
                raise HostError(f"launch('{fname}'): argument {k} ({a!r}) does not fit the "
                                f"parameter's type {want}")
            if got != want:
                raise HostError(
                    f"launch('{fname}'): argument {k} ({a!r}, {type(a).__name__}) for a "
                    f"parameter of type {want}: the SDK's launch takes the numpy scalar of "
                    f"the parameter's type (np.{_NP_NAME.get(want, want)}(...))")
        return self._start(fname, list(args), nonblock)

    def call(self, fname: str, args: list | tuple = (), nonblock: bool = False
             ) -> Task | None:
        """Run `fname` with arguments sent as 32-bit words (`cast_uint32` of each, as the
        SDK's call does, unchecked): each parameter reads its word's bits as its type."""
        self._require_running()
        params = self._param_types(fname)
        if len(args) != len(params):
            raise HostError(f"call('{fname}'): it takes {len(params)} arguments, got "
                            f"{len(args)}")
        values = [_from_word(cast_uint32(a), p) for a, p in zip(args, params)]
        return self._start(fname, values, nonblock)

    def _start(self, fname: str, args: list, nonblock: bool) -> Task | None:
        self.sim.settle("launch")
        self._before = self.sim.report() if self.sim.windows else None
        self.sim.start(fname, args)
        if not nonblock:  # a status line on a terminal when a big grid runs over a second
            with progress(f"WSE simulator: {fname}() on {len(self.sim.pes)} PEs"):
                self.sim.settle(f"launched function '{fname}'")
        return self._done(nonblock, f"{fname}()")

    def _task(self, task: object, what: str) -> None:
        if not isinstance(task, Task) or task.runtime is not self:
            raise HostError(f"{what} takes a Task this runtime returned for a nonblocking "
                            f"command, got {task!r}")

    def task_wait(self, task: Task) -> None:
        self._task(task, "task_wait()")
        self.sim.settle("task_wait()")

    def is_task_done(self, task: Task) -> bool:
        """The simulator runs a command when it is given: done once the device settles."""
        self._task(task, "is_task_done()")
        self.sim.settle("is_task_done()")
        return True

    # --- memcpy -------------------------------------------------------------------------------

    def _blocks(self, n: int, w: int, h: int, elems: int, order: MemcpyOrder):
        self._require_running()
        if n != w * h * elems:
            raise HostError(
                f"host array has {n} elements, but a {w}x{h} region of {elems} per PE needs "
                f"{w * h * elems}"
            )
        return "F" if order == MemcpyOrder.COL_MAJOR else "C"

    @staticmethod
    def _color(stream: object) -> int:
        if isinstance(stream, bool) or not isinstance(stream, int | np.integer):
            raise HostError(f"a streaming memcpy names its stream by color (an int, the "
                            f"MEMCPYH2D/D2H_DATA_n_ID param), not {stream!r}")
        return int(stream)

    def _device(self, name: str, x: int, y: int, elems: int, dt: MemcpyDataType) -> np.ndarray:
        arr = self.sim.symbol(name, x, y).reshape(-1)
        width = arr.dtype.itemsize * 8
        if (dt == MemcpyDataType.MEMCPY_32BIT) != (width == 32):
            raise HostError(f"'{name}' holds {width}-bit elements; memcpy uses {dt.name}")
        if elems > arr.size:
            raise HostError(
                f"memcpy of {elems} elements per PE overflows '{name}' "
                f"({arr.size} elements) on PE ({x}, {y})"
            )
        return arr

    @staticmethod
    def _words(host: np.ndarray) -> np.ndarray:
        if host.dtype.itemsize != 4:
            raise HostError(f"host arrays hold 32-bit words, got dtype {host.dtype}")
        return host.reshape(-1).view(np.uint32)

    def memcpy_h2d(
        self,
        dest: int | str,
        src: np.ndarray,
        px: int,
        py: int,
        w: int,
        h: int,
        elem_per_pe: int,
        streaming: bool = False,
        data_type: MemcpyDataType = MemcpyDataType.MEMCPY_32BIT,
        order: MemcpyOrder = MemcpyOrder.ROW_MAJOR,
        nonblock: bool = False,
    ) -> Task | None:
        src = np.ascontiguousarray(src)
        fortran = self._blocks(src.size, w, h, elem_per_pe, order)
        self.sim.settle("memcpy_h2d")
        blocks = self._words(src).reshape((h, w, elem_per_pe), order=fortran)
        if streaming:  # dest is the color of a .MEMCPYH2D_n stream
            # whole words travel, 16-bit data too: the high half reaches a data task
            # with two 16-bit arguments (input_array_to_u32's index, the SDK's idiom)
            color = self._color(dest)
            self.sim.stream_in(color, {
                (px + i, py + j): blocks[j, i] for j, i in itertools.product(range(h), range(w))})
            moved = self.traffic[-1].h2d
            moved[f"<stream {color}>"] = moved.get(f"<stream {color}>", 0) \
                + _payload(data_type) * src.size
            if not nonblock:
                self.sim.settle("streaming memcpy_h2d")
            return self._done(nonblock, f"streaming memcpy_h2d on color {color}")
        name = self._name(dest)
        moved = self.traffic[-1].h2d
        moved[name] = moved.get(name, 0) + _payload(data_type) * src.size
        for j, i in itertools.product(range(h), range(w)):
            arr = self._device(name, px + i, py + j, elem_per_pe, data_type)
            bits = arr.view(np.uint32 if arr.dtype.itemsize == 4 else np.uint16)
            bits[:elem_per_pe] = blocks[j, i] if bits.dtype == np.uint32 else blocks[j, i] & 0xFFFF
        return self._done(nonblock, f"memcpy_h2d to '{name}'")

    def memcpy_h2d_rowbcast(self, dest: int | str, src: np.ndarray, px: int, py: int, w: int,
                            h: int, elem_per_pe: int, streaming: bool = False,
                            data_type: MemcpyDataType = MemcpyDataType.MEMCPY_32BIT,
                            order: MemcpyOrder = MemcpyOrder.ROW_MAJOR,
                            nonblock: bool = False) -> Task | None:
        """`memcpy_h2d` of one column of data (h x 1 x elem_per_pe) to every column of
        the w x h region: each row's PEs get that row's block (the SDK's row-col-broadcast
        benchmark). Only the column travels from the host."""
        self._bcast_h2d("rowbcast", dest, src, px, py, w, h, elem_per_pe, streaming,
                        data_type, order)
        return self._done(nonblock, "memcpy_h2d_rowbcast")

    def memcpy_h2d_colbcast(self, dest: int | str, src: np.ndarray, px: int, py: int, w: int,
                            h: int, elem_per_pe: int, streaming: bool = False,
                            data_type: MemcpyDataType = MemcpyDataType.MEMCPY_32BIT,
                            order: MemcpyOrder = MemcpyOrder.ROW_MAJOR,
                            nonblock: bool = False) -> Task | None:
        """`memcpy_h2d` of one row of data (1 x w x elem_per_pe) to every row of the
        w x h region: each column's PEs get that column's block."""
        self._bcast_h2d("colbcast", dest, src, px, py, w, h, elem_per_pe, streaming,
                        data_type, order)
        return self._done(nonblock, "memcpy_h2d_colbcast")

    def _bcast_h2d(self, kind: str, dest: int | str, src: np.ndarray, px: int, py: int,
                   w: int, h: int, elems: int, streaming: bool, data_type: MemcpyDataType,
                   order: MemcpyOrder) -> None:
        if streaming:
            raise HostError(f"memcpy_h2d_{kind} with streaming=True is not modeled (the SDK "
                            "documents the broadcasts for copies to symbols)")
        src = np.ascontiguousarray(src)
        bw, bh = (1, h) if kind == "rowbcast" else (w, 1)
        fortran = self._blocks(src.size, bw, bh, elems, order)
        self.sim.settle(f"memcpy_h2d_{kind}")
        blocks = self._words(src).reshape((bh, bw, elems), order=fortran)
        name = self._name(dest)
        moved = self.traffic[-1].h2d
        moved[name] = moved.get(name, 0) + _payload(data_type) * src.size
        for j, i in itertools.product(range(h), range(w)):
            arr = self._device(name, px + i, py + j, elems, data_type)
            block = blocks[j if kind == "rowbcast" else 0, 0 if kind == "rowbcast" else i]
            bits = arr.view(np.uint32 if arr.dtype.itemsize == 4 else np.uint16)
            bits[:elems] = block if bits.dtype == np.uint32 else block & 0xFFFF

    def memcpy_d2h(
        self,
        dest: np.ndarray,
        src: int | str,
        px: int,
        py: int,
        w: int,
        h: int,
        elem_per_pe: int,
        streaming: bool = False,
        data_type: MemcpyDataType = MemcpyDataType.MEMCPY_32BIT,
        order: MemcpyOrder = MemcpyOrder.ROW_MAJOR,
        nonblock: bool = False,
    ) -> Task | None:
        fortran = self._blocks(dest.size, w, h, elem_per_pe, order)
        if not dest.flags.c_contiguous:
            raise HostError("memcpy_d2h needs a contiguous destination array")
        blocks = np.empty((h, w, elem_per_pe), np.uint32)
        if streaming:  # src is the color of a .MEMCPYD2H_n stream; kernels may be running
            color = self._color(src)
            coords = [(px + i, py + j) for j, i in itertools.product(range(h), range(w))]
            words = self.sim.stream_out_region(color, coords, elem_per_pe)
            for j, i in itertools.product(range(h), range(w)):
                blocks[j, i] = words[(px + i, py + j)]
            self._words(dest)[:] = blocks.reshape(-1, order=fortran)  # the words as sent
            moved = self.traffic[-1].d2h
            moved[f"<stream {color}>"] = moved.get(f"<stream {color}>", 0) \
                + _payload(data_type) * dest.size
            return self._done(nonblock, f"streaming memcpy_d2h on color {color}")
        self.sim.settle("memcpy_d2h")
        name = self._name(src)
        for j, i in itertools.product(range(h), range(w)):
            arr = self._device(name, px + i, py + j, elem_per_pe, data_type)
            bits = arr.view(np.uint32 if arr.dtype.itemsize == 4 else np.uint16)
            blocks[j, i] = bits[:elem_per_pe]
        self._words(dest)[:] = blocks.reshape(-1, order=fortran)
        moved = self.traffic[-1].d2h
        moved[name] = moved.get(name, 0) + _payload(data_type) * dest.size
        return self._done(nonblock, f"memcpy_d2h from '{name}'")

    # --- simulator extras -------------------------------------------------------------------

    @property
    def report(self) -> CycleReport:
        return self.sim.report()

    def count_traffic(self) -> HostTraffic:
        """Start a new count of host traffic (memcpys from now on); returns it."""
        self.traffic.append(HostTraffic())
        return self.traffic[-1]

    def launch_report(self) -> CycleReport:
        """The cycle report of the latest launch alone."""
        self.sim.settle("launch_report()")
        return report_delta(self._before, self.sim.report())


# --- cerebras.sdk.sdk_utils: the host helpers SDK scripts import --------------------------


def cast_uint32(x: object) -> np.uint32:
    """The 32-bit word a host scalar travels as (SDK's sdk_utils.cast_uint32): a 16-bit
    numpy scalar's bits in the low half, a 32-bit one's bits, a Python int as u32, a
    Python float as f32 bits; anything else is refused."""
    if isinstance(x, np.float16 | np.int16 | np.uint16):
        return np.uint32(np.array(x).view(np.uint16))
    if isinstance(x, np.float32 | np.int32 | np.uint32):
        return np.array(x).view(np.uint32)[()]
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise RuntimeError(f"type of x {type(x)} is not supported")
    if isinstance(x, int):
        return np.uint32(x)  # numpy refuses what does not fit
    return np.array(np.float32(x)).view(np.uint32)[()]


def input_array_to_u32(np_arr: np.ndarray, sentinel: int | None, fast_dim_sz: int
                       ) -> np.ndarray:
    """A flat 16-bit array as the u32 words memcpy moves, the value in the low half
    (SDK's sdk_utils.input_array_to_u32): the high half is zero when `sentinel` is None,
    else (any other value, 0 too: the SDK tests `is not None`) the element's index along
    the fast dimension (`i % fast_dim_sz`), which a data task with two 16-bit arguments
    receives as its second. A 32-bit array is returned as a u32 view of its bits; the
    array must be 1-D, as the SDK asserts."""
    arr = np.asarray(np_arr)
    if arr.ndim != 1:
        raise ValueError(f"input_array_to_u32: the array must be flat, but has shape "
                         f"{arr.shape}")
    if arr.dtype.itemsize == 4:
        return arr.view(np.uint32)
    if arr.dtype.itemsize != 2:
        raise TypeError(f"input_array_to_u32 takes a 16-bit (or 32-bit) array, got {arr.dtype}")
    words = arr.view(np.uint16).astype(np.uint32)
    if sentinel is not None:
        if fast_dim_sz <= 0:
            raise ValueError(f"input_array_to_u32: fast_dim_sz must be positive, got {fast_dim_sz}")
        words |= (np.arange(arr.size, dtype=np.uint32) % fast_dim_sz) << 16
    return words


def memcpy_view(arr: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """The u32 words memcpy moves, seen as `dtype` (SDK's sdk_utils.memcpy_view): a
    32-bit type reinterprets the words; a 16- or 8-bit type is the low half or low byte
    of each word ("remove upper 16-bit of each u32"). A view either way, as the SDK's: SDK
    host scripts fill a 16-bit view and send the words under it (the fft-1d-2d
    benchmark's twiddles and input). Other arrays or types raise RuntimeError, as there."""
    dtype = np.dtype(dtype)
    words = np.asarray(arr)
    if words.dtype.itemsize != 4:
        raise RuntimeError(f"memcpy_view takes the u32 words memcpy moved (itemsize 4), got "
                           f"{words.dtype}")
    if dtype.itemsize == 4:
        return words.view(dtype)
    if dtype.itemsize in (1, 2):
        if words.ndim == 0 or words.strides[-1] != 4:
            raise RuntimeError("memcpy_view needs words contiguous in their last axis (a "
                               "view of their low halves)")
        # little-endian words: the low part of word i starts at byte 4 i
        return words.view(dtype)[..., 0::4 // dtype.itemsize]
    raise RuntimeError(f"memcpy_view: {dtype} is not a 1-, 2- or 4-byte type")


def make_u48(words: np.ndarray) -> np.int64:
    """Three u16 words, least significant first, as one 48-bit count (SDK's
    sdk_utils.make_u48; computed in Python integers, no 16-bit overflow)."""
    w = [int(v) & 0xFFFF for v in np.asarray(words).reshape(-1)[:3]]
    return np.int64(w[0] | (w[1] << 16) | (w[2] << 32))


def sub_ts(words: np.ndarray) -> np.int64:
    """Six u16 words, a start and an end timestamp of <time>: the cycles between them
    (SDK's sdk_utils.sub_ts)."""
    flat = np.asarray(words).reshape(-1)
    return np.int64(make_u48(flat[3:6]) - make_u48(flat[0:3]))


def calculate_cycles(timestamp_buf: np.ndarray) -> np.int64:
    """The elapsed cycles in a device's timestamp buffer (SDK's sdk_utils.calculate_cycles):
    its first three f32 words carry, as bits, the six u16 words of a start and an end
    timestamp (each 32-bit word two of them, low half first), which kernels pack with
    @bitcast as the SDK's bandwidth test does."""
    bits = np.asarray(timestamp_buf, np.float32).reshape(-1)[:3].view(np.uint32)
    if bits.size < 3:
        raise ValueError("calculate_cycles needs three 32-bit words (six u16 timestamps)")
    halves = np.stack([bits & 0xFFFF, bits >> 16], axis=1).reshape(-1)
    return sub_ts(halves)


class DebugUtil:
    """`cerebras.sdk.debug.debug_util.debug_util(dir, cmaddr=None)`: reads a finished
    simulation's PE memory, as the SDK's (simulator only), at *fabric* coordinates (the
    kernel's PE (x, y) is (x + 4, y + 1) with cslc's --fabric-offsets=4,1, as the SDK's
    scripts add). The run is the latest `SdkRuntime` of `dir` in this process.
    `read_trace(x, y, key)` decodes a `<debug>` trace buffer; `get_symbol(x, y, name,
    dtype)` reads an exported symbol's bytes, or a trace buffer's
    (`$$csl_debug.<key>.buffer` / `.buffer_index`)."""

    def __init__(self, bindir: str | Path, cmaddr: str | None = None, **kwargs: object):
        if cmaddr:
            raise HostError(f"debug_util(cmaddr={cmaddr!r}): the simulator's state only")
        path = Path(bindir).resolve()
        runs = [rt for rt in SdkRuntime.instances if rt.bindir.resolve() == path]
        if not runs:
            raise HostError(f"debug_util({str(bindir)!r}): no SdkRuntime of that directory "
                            "ran in this process")
        self.runtime = runs[-1]
        meta = self.runtime.bindir / META_FILE
        offsets = json.loads(meta.read_text()).get("fabric_offsets") if meta.exists() \
            else None
        self.offsets = tuple(offsets or FABRIC_OFFSETS)

    def _pe(self, col: int, row: int):
        x, y = col - self.offsets[0], row - self.offsets[1]
        pe = self.runtime.sim.pes.get((x, y))
        if pe is None:
            raise HostError(f"debug_util: fabric PE ({col}, {row}) is kernel PE ({x}, {y}), "
                            f"outside the {self.runtime.sim.width}x{self.runtime.sim.height} "
                            f"rectangle (fabric offsets {self.offsets})")
        return pe

    def _trace(self, col: int, row: int, key: str):
        pe = self._pe(col, row)
        trace = pe.debug_traces.get(key)
        if trace is None:
            raise HostError(f"debug_util: {pe.where} has no <debug> trace with key {key!r} "
                            f"(its keys: {sorted(pe.debug_traces) or 'none'})")
        return trace

    def read_trace(self, col: int, row: int, key: str) -> list:
        trace = self._trace(col, row, key)
        return read_trace(trace.buffer[:trace.index])

    def get_symbol(self, col: int, row: int, symbol: str, dtype: np.dtype | type
                   ) -> np.ndarray:
        dtype = np.dtype(dtype)
        if symbol.startswith("$$csl_debug."):
            key, _, field_name = symbol[len("$$csl_debug."):].rpartition(".")
            trace = self._trace(col, row, key)
            if field_name == "buffer":
                data = trace.buffer
            elif field_name == "buffer_index":
                data = np.array([trace.index], np.uint16)
            else:
                raise HostError(f"debug_util: a <debug> module has no symbol {symbol!r}")
        else:
            pe = self._pe(col, row)
            data = self.runtime.sim.symbol(symbol, pe.x, pe.y)
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        if raw.size % dtype.itemsize:
            raise HostError(f"debug_util.get_symbol: {symbol!r} has {raw.size} bytes, not a "
                            f"whole number of {dtype}")
        return raw.view(dtype).copy()


SDK_UTILS_MODULE = "cerebras.sdk.sdk_utils"
DEBUG_UTIL_MODULE = "cerebras.sdk.debug.debug_util"
SDK_UTILS = ("cast_uint32", "input_array_to_u32", "memcpy_view", "make_u48", "sub_ts",
             "calculate_cycles")


def sdk_available() -> bool:
    """Is the real SDK runtime importable (and not our shim)?"""
    mod = sys.modules.get(SDK_MODULE)
    if mod is not None:
        return not getattr(mod, "__pyflame_shim__", False)
    try:
        return importlib.util.find_spec(SDK_MODULE) is not None
    except ModuleNotFoundError:  # the Cerebras SDK (optional) lacks the parent package
        return False


def install_sdk_shim(force: bool = False) -> bool:
    """Make `from cerebras.sdk.runtime.sdkruntimepybind import ...` give this stand-in.

    Does nothing when the real SDK is importable, unless `force`. Returns whether the
    shim is installed.
    """
    if not force and sdk_available():
        return False
    parts = SDK_MODULE.split(".")
    for k in range(1, len(parts)):
        pkg = ".".join(parts[:k])
        if pkg not in sys.modules or force:
            m = types.ModuleType(pkg, "pyflame-mlir WSE simulator shim package")
            m.__path__ = []
            m.__pyflame_shim__ = True  # type: ignore[attr-defined]
            sys.modules[pkg] = m
    leaf = types.ModuleType(SDK_MODULE, __doc__)
    leaf.__pyflame_shim__ = True  # type: ignore[attr-defined]
    for name in ("SdkRuntime", "MemcpyDataType", "MemcpyOrder"):
        setattr(leaf, name, globals()[name])
    sys.modules[SDK_MODULE] = leaf
    for k in range(1, len(parts)):  # `import cerebras.sdk...` walks attributes
        setattr(sys.modules[".".join(parts[:k])], parts[k], sys.modules[".".join(parts[: k + 1])])
    utils = types.ModuleType(SDK_UTILS_MODULE, "pyflame-mlir stand-in for the SDK's sdk_utils")
    utils.__pyflame_shim__ = True  # type: ignore[attr-defined]
    for name in SDK_UTILS:
        setattr(utils, name, globals()[name])
    sys.modules[SDK_UTILS_MODULE] = utils
    parent, _, leaf_name = SDK_UTILS_MODULE.rpartition(".")
    setattr(sys.modules[parent], leaf_name, utils)  # `from cerebras.sdk import sdk_utils`
    debug_pkg = types.ModuleType("cerebras.sdk.debug", "pyflame-mlir shim package")
    debug_pkg.__path__ = []
    debug_pkg.__pyflame_shim__ = True  # type: ignore[attr-defined]
    debug = types.ModuleType(DEBUG_UTIL_MODULE, "pyflame-mlir stand-in for the SDK's debug_util")
    debug.__pyflame_shim__ = True  # type: ignore[attr-defined]
    debug.debug_util = DebugUtil  # type: ignore[attr-defined]
    sys.modules["cerebras.sdk.debug"] = debug_pkg
    sys.modules[DEBUG_UTIL_MODULE] = debug
    debug_pkg.debug_util = debug  # type: ignore[attr-defined]
    sys.modules["cerebras.sdk"].debug = debug_pkg  # type: ignore[attr-defined]
    return True
