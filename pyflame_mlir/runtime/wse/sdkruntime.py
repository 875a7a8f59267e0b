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

from ..progress import progress
from .compile import IR_FILE, META_FILE
from .errors import HostError
from .machine import CycleModel
from .program import load_module
from .report import CycleReport, PeStats
from .simulator import Simulator

SDK_MODULE = "cerebras.sdk.runtime.sdkruntimepybind"


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


class SdkRuntime:
    """`SdkRuntime(compile_dir, cmaddr=None)`: cmaddr None means "the simulator"."""

    instances: list[SdkRuntime] = []  # every runtime made in this process, for `run_host`

    def __init__(self, bindir: str | Path, cmaddr: str | None = None, **kwargs: object):
        if cmaddr:
            raise HostError(f"cmaddr={cmaddr!r}: this stand-in only runs the WSE simulator")
        self.bindir = Path(bindir)
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

    def launch(self, fname: str, *args: object, nonblock: bool = False) -> int:
        self._require_running()
        self.sim.settle("launch")
        self._before = self.sim.report() if self.sim.windows else None
        self.sim.start(fname, list(args))
        if not nonblock:  # a status line on a terminal when a big grid runs over a second
            with progress(f"WSE simulator: {fname}() on {len(self.sim.pes)} PEs"):
                self.sim.settle(f"launched function '{fname}'")
        return next(self._handles)

    def call(self, fname: str, args: list | tuple = (), nonblock: bool = False) -> int:
        """Launch `fname` with scalar arguments converted to its parameter types."""
        return self.launch(fname, *args, nonblock=nonblock)

    def task_wait(self, handle: int) -> None:
        self.sim.settle("task_wait()")

    def is_task_done(self, handle: int) -> bool:
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
    ) -> int:
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
            return next(self._handles)
        name = self._name(dest)
        moved = self.traffic[-1].h2d
        moved[name] = moved.get(name, 0) + _payload(data_type) * src.size
        for j, i in itertools.product(range(h), range(w)):
            arr = self._device(name, px + i, py + j, elem_per_pe, data_type)
            bits = arr.view(np.uint32 if arr.dtype.itemsize == 4 else np.uint16)
            bits[:elem_per_pe] = blocks[j, i] if bits.dtype == np.uint32 else blocks[j, i] & 0xFFFF
        return next(self._handles)

    def memcpy_h2d_rowbcast(self, dest: int | str, src: np.ndarray, px: int, py: int, w: int,
                            h: int, elem_per_pe: int, streaming: bool = False,
                            data_type: MemcpyDataType = MemcpyDataType.MEMCPY_32BIT,
                            order: MemcpyOrder = MemcpyOrder.ROW_MAJOR,
                            nonblock: bool = False) -> int:
        """`memcpy_h2d` of one column of data (h x 1 x elem_per_pe) to every column of
        the w x h region: each row's PEs get that row's block (the SDK's row-col-broadcast
        benchmark). Only the column travels from the host."""
        return self._bcast_h2d("rowbcast", dest, src, px, py, w, h, elem_per_pe, streaming,
                               data_type, order)

    def memcpy_h2d_colbcast(self, dest: int | str, src: np.ndarray, px: int, py: int, w: int,
                            h: int, elem_per_pe: int, streaming: bool = False,
                            data_type: MemcpyDataType = MemcpyDataType.MEMCPY_32BIT,
                            order: MemcpyOrder = MemcpyOrder.ROW_MAJOR,
                            nonblock: bool = False) -> int:
        """`memcpy_h2d` of one row of data (1 x w x elem_per_pe) to every row of the
        w x h region: each column's PEs get that column's block."""
        return self._bcast_h2d("colbcast", dest, src, px, py, w, h, elem_per_pe, streaming,
                               data_type, order)

    def _bcast_h2d(self, kind: str, dest: int | str, src: np.ndarray, px: int, py: int,
                   w: int, h: int, elems: int, streaming: bool, data_type: MemcpyDataType,
                   order: MemcpyOrder) -> int:
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
        return next(self._handles)

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
    ) -> int:
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
            return next(self._handles)
        self.sim.settle("memcpy_d2h")
        name = self._name(src)
        for j, i in itertools.product(range(h), range(w)):
            arr = self._device(name, px + i, py + j, elem_per_pe, data_type)
            bits = arr.view(np.uint32 if arr.dtype.itemsize == 4 else np.uint16)
            blocks[j, i] = bits[:elem_per_pe]
        self._words(dest)[:] = blocks.reshape(-1, order=fortran)
        moved = self.traffic[-1].d2h
        moved[name] = moved.get(name, 0) + _payload(data_type) * dest.size
        return next(self._handles)

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


def input_array_to_u32(np_arr: np.ndarray, sentinel: int | None, fast_dim_sz: int
                       ) -> np.ndarray:
    """A 16-bit array as the u32 words memcpy moves, the value in the low half; the high
    half is zero when `sentinel` is None (or 0, as the SDK's GEMV checkerboard passes it
    for "extend with zero"), else the element's index along the fast dimension
    (`i % fast_dim_sz`), which a data task with two 16-bit arguments receives as its
    second. These readings are the SDK examples' own comments; a 32-bit array is
    returned as its u32 bits."""
    arr = np.ascontiguousarray(np_arr).reshape(-1)
    if arr.dtype.itemsize == 4:
        return arr.view(np.uint32).copy()
    if arr.dtype.itemsize != 2:
        raise TypeError(f"input_array_to_u32 takes a 16-bit (or 32-bit) array, got {arr.dtype}")
    words = arr.view(np.uint16).astype(np.uint32)
    if sentinel:
        if fast_dim_sz <= 0:
            raise ValueError(f"input_array_to_u32: fast_dim_sz must be positive, got {fast_dim_sz}")
        words |= (np.arange(arr.size, dtype=np.uint32) % fast_dim_sz) << 16
    return words


def memcpy_view(arr: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """The u32 words memcpy moves, seen as `dtype`: a 32-bit type reinterprets the
    words; a 16-bit type is the low half of each word ("remove upper 16-bit of each
    u32"). Either way a view, as the SDK's: SDK host scripts fill a 16-bit view and send
    the words under it (the fft-1d-2d benchmark's twiddles and input)."""
    dtype = np.dtype(dtype)
    words = np.asarray(arr)
    if words.dtype.itemsize != 4:
        raise TypeError(f"memcpy_view takes the u32 words memcpy moved, got {words.dtype}")
    if dtype.itemsize == 4:
        return words.view(dtype)
    if dtype.itemsize == 2:
        if words.ndim == 0 or words.strides[-1] != 4:
            raise TypeError("memcpy_view needs words contiguous in their last axis (a view "
                            "of their low halves)")
        # little-endian words: the low half of word i is 16-bit element 2 i
        return words.view(dtype)[..., 0::2]
    raise TypeError(f"memcpy_view: {dtype} is neither a 16-bit nor a 32-bit type")


SDK_UTILS_MODULE = "cerebras.sdk.sdk_utils"


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
    utils.input_array_to_u32 = input_array_to_u32  # type: ignore[attr-defined]
    utils.memcpy_view = memcpy_view  # type: ignore[attr-defined]
    sys.modules[SDK_UTILS_MODULE] = utils
    parent, _, leaf_name = SDK_UTILS_MODULE.rpartition(".")
    setattr(sys.modules[parent], leaf_name, utils)  # `from cerebras.sdk import sdk_utils`
    return True
