"""The ``csl`` backend: pyflame -> wse -> csl, run on the WSE simulator or the SDK.

``lower(module)`` (the backend registry's hook) checks and lowers the module
with the registered pass pipeline ``legalize-for-wse,convert-pyflame-to-wse{...},
convert-wse-to-csl{...}`` (``passes/convert_wse_to_csl.py: csl_pipeline``) and returns a
``CslExecutable``; the compile driver caches it under the graph's structural
hash, so a training loop compiles once. ``run(arrays)`` copies the inputs in,
launches the program and copies the outputs out, with the same host code as
the emitted ``run.py`` (``lowering.emit_csl``: its tile helpers):

* with ``cslc`` and ``cs_python`` on PATH (the Cerebras SDK), the program is
  emitted to a directory under the project cache keyed by its hash,
  compiled with ``cslc`` once, and run by ``cs_python run.py`` on the SDK's
  simulator (or a system: ``PYFLAME_CSL_CMADDR``);
* otherwise on the project's WSE simulator, in process, through the SDK host
  API (``SdkRuntime``). ``last_report()`` / ``executable.last_report`` give the
  ``CycleReport`` of the latest run, ``last_traffic()`` its host traffic.

Resident state (issue 16). The simulator and its PE memory persist in the
executable between runs (a ``Session``). The compile driver tells the lowering
which outputs update a leaf in place (parameters and optimizer state after
``opt.step()``); the memory plan writes those into the input's own buffer
(``MemoryPlan.resident``), so the state never leaves PE memory: a run skips the
copy in of a state whose host value is the ``DeviceValue`` the previous run
returned for it, and copies out only the outputs that were asked for (the
loss). Every other output is a ``DeviceValue``: an array that copies itself out
of PE memory when read (``Tensor.numpy()``, ``state_dict()``), and refuses to
once a later launch has overwritten its buffer. A host-side write (a new
array, ``load_state_dict``, ``p.data = ...``, or writing into a value that was
copied out) is copied in at the next run: never a stale value.

Options (``configure(...)`` or the environment): the grid (``"4x4"``;
``PYFLAME_CSL_GRID``; default automatic), ``arch`` (``wse2``/``wse3``;
``PYFLAME_CSL_ARCH``), ``max_pes`` for the automatic grid, and ``mode``
(``auto``, ``simulator``, ``sdk``; ``PYFLAME_CSL_MODE``). Options are read at
run time: an executable compiled under other options lowers again (and keeps
both), so a cached graph never runs with stale placement.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..dialects import wse
from ..lowering.pyflame_to_wse.support import INDEX_EXACT
from .disk_cache import cache_root, write_manifest
from .progress import progress

_LOCK = threading.Lock()
_LAST: list[Any] = [None]


@dataclass(frozen=True)
class CslOptions:
    grid: tuple[int, int] | None = None
    arch: str = "wse2"
    max_pes: int = 1024
    mode: str = "auto"  # auto | simulator | sdk
    matmul: str = "auto"  # auto | local | summa (the matmul algorithm; auto: by cost)
    sdk: int = 2  # the SDK major version whose idioms the emitted CSL uses (1 or 2)
    # state stays in PE memory between runs and unrequested outputs until read; False:
    # every input copied in and every output out at each run (the pre-issue-16 way)
    resident: bool = True
    budget: int | None = None  # bytes of data per PE (None: the cycle model's SRAM figure)
    # a step that does not fit: recompute cheap activations instead of keeping them
    recompute: bool = True


def _env_options() -> CslOptions:
    grid = None
    text = os.environ.get("PYFLAME_CSL_GRID", "").strip().lower()
    if text and text != "auto":
        w, _, h = text.partition("x")
        grid = (int(w), int(h))
    return CslOptions(grid, os.environ.get("PYFLAME_CSL_ARCH", "wse2"),
                      int(os.environ.get("PYFLAME_CSL_MAX_PES", "1024")),
                      os.environ.get("PYFLAME_CSL_MODE", "auto"),
                      sdk=int(os.environ.get("PYFLAME_CSL_SDK", "2")))


_OPTIONS: list[CslOptions] = [_env_options()]


def configure(**changes: Any) -> CslOptions:
    """Set backend options (grid=(w, h) | None, arch, max_pes, mode, matmul, sdk,
    resident, budget, recompute); returns the old ones."""
    old = _OPTIONS[0]
    if "grid" in changes and changes["grid"] is not None:
        changes["grid"] = tuple(int(n) for n in changes["grid"])
    new = replace(old, **changes)
    if new.arch not in ("wse2", "wse3"):
        raise ValueError(f"arch must be wse2 or wse3, not {new.arch!r}")
    if new.matmul not in ("auto", "local", "summa"):
        raise ValueError(f"matmul must be auto, local or summa, not {new.matmul!r}")
    if new.sdk not in (1, 2):
        raise ValueError(f"sdk must be 1 or 2 (the SDK major version), not {new.sdk!r}")
    if new.mode not in ("auto", "simulator", "sdk"):
        raise ValueError(f"mode must be auto, simulator or sdk, not {new.mode!r}")
    _OPTIONS[0] = new
    return old


def options() -> CslOptions:
    return _OPTIONS[0]


def sdk_on_path() -> bool:
    return shutil.which("cslc") is not None and shutil.which("cs_python") is not None


def cache_dir() -> Path:
    return cache_root() / "csl"


def last_report() -> Any:
    """The cycle report of the latest simulator run of any csl executable (or None)."""
    return _LAST[0]


def last_run() -> Any:
    """The ``StepRecord`` of the latest simulator run (cycles, host traffic, program)."""
    return _LAST_RUN[0]


_LAST_RUN: list[Any] = [None]


class DeviceValue(np.ndarray):
    """An output of a run that stays in PE memory until read: ``to_host()`` copies it
    out (once) and returns it as a plain array. Until then it holds NaN and is
    read-only; after a later launch of its program overwrote its buffer it raises."""

    session: Session | None
    generation: int
    symbol: str
    io: int  # the output's index in the program spec
    input: int  # the program input sharing its buffer (resident state), else -1
    copied: np.ndarray | None  # what was copied out (to notice host-side writes)

    def __array_finalize__(self, obj: Any) -> None:
        self.session, self.generation, self.symbol = None, -1, ""
        self.io, self.input, self.copied = -1, -1, None

    def to_host(self) -> np.ndarray:
        if self.copied is None:
            s = self.session
            if s is None:
                raise RuntimeError("csl backend: a slice of a device value cannot be read; "
                                   "read the tensor itself")
            if s.generation != self.generation:
                raise RuntimeError(
                    f"csl backend: the value of output {self.symbol} of launch "
                    f"{self.generation} was overwritten on the device by launch "
                    f"{s.generation} of the same program before it was read; read it "
                    "(or clone it) before the next step")
            data = s.copy_out(self.io)
            self.flags.writeable = True
            np.copyto(self.view(np.ndarray), data)
            self.copied = data
        return self.view(np.ndarray)

    def host_modified(self) -> bool:
        return self.copied is not None and not np.array_equal(
            self.view(np.ndarray), self.copied, equal_nan=True)


@dataclass
class StepRecord:
    """One run on the simulator: its cycle report, host traffic and program."""

    report: Any  # runtime.wse.report.CycleReport of this launch alone
    traffic: Any  # runtime.wse.sdkruntime.HostTraffic
    program: Any  # lowering.to_csl.CslProgram
    resident_bytes: int  # state kept in PE memory (all PEs)
    recomputed: tuple[str, ...] = ()  # activations the plan recomputes instead of keeping


@dataclass
class Compiled:
    """One lowering of the module under one set of options."""

    options: CslOptions
    wse: Any  # lowering.to_wse.WseHost: input sources, output dtypes, placement choices
    program: Any  # lowering.to_csl.CslProgram
    spec: dict
    key: str
    directory: Path | None = None  # the emitted SDK project (sdk mode)
    session: Session | None = None  # the simulator kept between runs (resident state)


class Session:
    """A loaded program on a simulator that persists between runs: the PE memory
    holds the resident state; ``generation`` counts the launches."""

    def __init__(self, c: Compiled):
        from .wse.sdkruntime import SdkRuntime

        self.compiled = c
        self.rt = SdkRuntime.for_module(c.program.module, arch=c.program.arch)
        self.rt.load()
        self.rt.run()
        self.generation = 0
        self.loaded_constants = False

    def copy_in(self, i: int, data: np.ndarray) -> None:
        from ..lowering.emit_csl import write_symbol
        from .wse.sdkruntime import MemcpyDataType, MemcpyOrder

        write_symbol(self.rt, self.compiled.spec["inputs"][i], data, MemcpyOrder.ROW_MAJOR,
                     MemcpyDataType.MEMCPY_32BIT)

    def copy_out(self, k: int) -> np.ndarray:
        from ..lowering.emit_csl import read_symbol
        from .wse.sdkruntime import MemcpyDataType, MemcpyOrder

        out = read_symbol(self.rt, self.compiled.spec["outputs"][k], MemcpyOrder.ROW_MAJOR,
                          MemcpyDataType.MEMCPY_32BIT)
        return out.astype(self.compiled.wse.output_dtypes[k].np, copy=False)

    def on_device(self, i: int, value: Any) -> bool:
        """Does PE memory already hold ``value`` for program input ``i``?"""
        return (isinstance(value, DeviceValue) and value.session is self and value.input == i
                and value.generation == self.generation and not value.host_modified())

    def step(self, c: Compiled, args: list[np.ndarray], requested: int | None
             ) -> list[np.ndarray]:
        """Copy in what PE memory lacks, launch, copy out the requested outputs; the
        others are returned as DeviceValues."""
        rt = self.rt
        traffic = rt.count_traffic()
        for i, (kind, data) in enumerate(c.wse.inputs):
            if kind == "const":
                if not self.loaded_constants:
                    self.copy_in(i, _exact_on_pe(np.asarray(data)))
                continue
            value = args[data]
            if c.options.resident and i in c.program.resident and self.on_device(i, value):
                continue
            self.copy_in(i, _exact_on_pe(np.asarray(_host(value))))
        self.loaded_constants = True
        with np.errstate(all="ignore"):
            rt.launch(c.spec["launch"], nonblock=False)
        self.generation += 1
        report = rt.launch_report()
        state_of = {k: i for i, k in c.program.resident.items()}
        outs: list[np.ndarray] = []
        n = len(c.spec["outputs"])
        for k in range(n):
            io = c.spec["outputs"][k]
            dt = c.wse.output_dtypes[k].np
            eager = requested is None or k < requested or not c.options.resident
            if eager or io["mask"] or dt != np.float32:
                outs.append(self.copy_out(k))
                continue
            v = np.full(tuple(io["shape"]), np.nan, np.float32).view(DeviceValue)
            v.session, v.generation, v.symbol = self, self.generation, io["name"]
            v.io, v.input = k, state_of.get(k, -1)
            v.flags.writeable = False
            outs.append(v)
        resident = sum((2 if io.half else 4) * io.elems * io.region[2] * io.region[3]
                       for i, io in enumerate(c.program.inputs)
                       if c.options.resident and i in c.program.resident)
        record = StepRecord(report, traffic, c.program, resident, tuple(
            line for line in c.wse.choices if line.startswith("recompute ")))
        with _LOCK:
            _LAST[0] = report
            _LAST_RUN[0] = record
        return outs


def _exact_on_pe(a: np.ndarray) -> np.ndarray:
    """``a``, if the PE holds it exactly: integers travel as f32 values (issue
    #16), exact below 2**24 only."""
    if a.dtype.kind in "iu" and a.size and np.abs(a).max() >= INDEX_EXACT:
        raise ValueError(f"csl backend: an integer input holds {np.abs(a).max()}, but "
                         f"integers are f32 values on the PE, exact below {INDEX_EXACT}")
    return a


def _host(value: Any) -> Any:
    return value.to_host() if isinstance(value, DeviceValue) else value


class CslExecutable:
    """What ``lower`` returns: ``run(arrays) -> arrays``, ``nbytes``, ``last_report``."""

    def __init__(self, module: Any):
        self.module = module.clone()
        self.text = str(module)
        self._compiled: dict[CslOptions, Compiled] = {}
        self.last_report: Any = None
        self.compile(options())  # errors (unsupported ops, budget) surface at compile time

    def compile(self, opts: CslOptions) -> Compiled:
        got = self._compiled.get(opts)
        if got is not None:
            return got
        from ..lowering.emit_csl import program_spec
        from ..passes.convert_wse_to_csl import csl_pipeline, lower_module_to_csl

        grid = "x".join(map(str, opts.grid)) if opts.grid else "auto"
        pipeline = csl_pipeline(grid, opts.arch, max_pes=opts.max_pes, matmul=opts.matmul,
                                sdk=opts.sdk, budget=opts.budget, recompute=opts.recompute)
        prog, lowered = lower_module_to_csl(self.module.clone(), pipeline)
        spec = program_spec(prog)
        key = hashlib.sha256((self.text + repr(opts)).encode()).hexdigest()[:24]
        got = self._compiled[opts] = Compiled(opts, lowered, prog, spec, key)
        return got

    @property
    def current(self) -> Compiled:
        return self.compile(options())

    @property
    def nbytes(self) -> int:
        """Device SRAM the program's data takes, over all PEs."""
        c = self.current
        return c.program.memory_bytes * c.program.grid.pes

    @property
    def grid(self) -> wse.Grid:
        return self.current.program.grid

    def inputs_for(self, c: Compiled, args: list[np.ndarray]) -> list[np.ndarray]:
        return [_exact_on_pe(np.asarray(args[data]) if kind == "arg" else np.asarray(data))
                for kind, data in c.wse.inputs]

    def run(self, args: list[np.ndarray], requested: int | None = None) -> list[np.ndarray]:
        """The outputs for leaf arrays ``args``. ``requested``: how many leading outputs
        were asked for (the compile driver's count); the others stay on the device as
        ``DeviceValue``s until read (None: every output is copied out)."""
        c = self.current
        mode = c.options.mode
        if mode == "sdk" or (mode == "auto" and sdk_on_path()):
            ins = self.inputs_for(c, [_host(a) for a in args])
            outs = self._run_sdk(c, ins)
            return [np.asarray(o).astype(d.np, copy=False).reshape(o.shape)
                    for o, d in zip(outs, c.wse.output_dtypes)]
        if c.session is None:
            c.session = Session(c)
        result = c.session.step(c, list(args), requested)
        self.last_report = _LAST[0]
        if not c.program.resident and all(type(o) is not DeviceValue for o in result):
            c.session = None  # nothing lives on the device: no simulator kept
        return result

    def emit(self, directory: str | Path | None = None, inputs: list[np.ndarray] | None = None,
             requested: int | None = None) -> Path:
        """Write the SDK project (default: the cache directory keyed by the program hash);
        ``requested``: the outputs its training loop copies out every step (default all)."""
        from ..lowering.emit_csl import emit

        c = self.current
        out = Path(directory) if directory else cache_dir() / c.key
        with progress(f"writing the CSL project {out.name} ({c.program.grid} grid)"):
            emit(c.program, out, inputs=inputs, requested=requested)
        return out

    def _run_sdk(self, c: Compiled, ins: list[np.ndarray]) -> list[np.ndarray]:
        d = cache_dir() / c.key
        if c.directory is None or not (d / "out").exists():
            self.emit(d)
            w, h = c.program.grid.width, c.program.grid.height
            cmd = ["cslc", "layout.csl", f"--arch={c.program.arch}",
                   f"--fabric-dims={w + 7},{h + 2}", "--fabric-offsets=4,1", "--memcpy",
                   "--channels=1", "-o", "out"]
            with progress(f"cslc {d.name}"):
                subprocess.run(cmd, cwd=d, check=True, capture_output=True)
            write_manifest(d)  # checksums for `python -m pyflame_mlir cache verify`
            c.directory = d
        with tempfile.TemporaryDirectory() as tmp:
            for io, arr in zip(c.spec["inputs"], ins):
                np.save(Path(tmp) / f"{io['name']}.npy", arr)
            cmd = ["cs_python", "run.py", "--name", "out", "--inputs", tmp, "--outputs", tmp]
            if os.environ.get("PYFLAME_CSL_CMADDR"):
                cmd += ["--cmaddr", os.environ["PYFLAME_CSL_CMADDR"]]
            subprocess.run(cmd, cwd=d, check=True, capture_output=True)
            return [np.load(Path(tmp) / f"{io['name']}.npy") for io in c.spec["outputs"]]

    def describe(self) -> str:
        c = self.current
        p = c.program
        lines = [f"csl program on a {p.grid} grid ({p.arch}), {p.memory_bytes} bytes of data "
                 f"per PE, colors {json.dumps(p.colors)}"]
        if p.resident:
            names = ", ".join(f"{p.inputs[i].name} <- {p.outputs[k].name}"
                              for i, k in sorted(p.resident.items()))
            lines.append(f"  resident state (updated in place in PE memory): {names}")
        lines += [f"  {line}" for line in c.wse.choices]
        return "\n".join(lines)


def lower(module: Any) -> CslExecutable:
    """The registry hook: lower (and check) ``module``; errors surface here."""
    return CslExecutable(module)


def unavailable_reason() -> str | None:
    return None  # the simulator always runs; the SDK is used when present


def export_module(module: Any, leaves: list[np.ndarray], out_dir: str | Path | None,
                  grid: tuple[int, int] | None = None, arch: str | None = None,
                  sdk_version: int | None = None, requested: int | None = None
                  ) -> tuple[Path, CslExecutable]:
    """Write the SDK project of an optimized ``pyflame`` module (what the csl
    backend's ``lower`` takes) to ``out_dir``, with ``leaves`` (the values of
    its arguments, in order) as ``in_<i>.npy``; ``out_dir`` None: the csl cache
    directory of the program's key, with its checksum manifest (an entry
    ``python -m pyflame_mlir cache`` lists and verifies). Returns the directory
    and the executable. The runtime half of ``pf.export_csl`` (``compiler.py``), which
    builds the module from lazy tensors. ``requested``: the leading outputs a training
    loop of the emitted ``run.py --steps N`` copies out every step."""
    changes = {k: v for k, v in (("grid", grid), ("arch", arch), ("sdk", sdk_version))
               if v is not None}
    prev = configure(**changes) if changes else None
    try:
        exe = CslExecutable(module)
        path = exe.emit(out_dir, exe.inputs_for(exe.current, leaves), requested)
        if out_dir is None:
            write_manifest(path)
    finally:
        if prev is not None:
            configure(**vars(prev))
    return path, exe
