"""The ``csl`` backend: pyflame -> wse -> csl, run on the WSE simulator or the SDK.

``lower(module)`` (the backend registry's hook) checks and lowers the module
with the registered pass pipeline ``legalize-for-wse,convert-pyflame-to-wse{...},
convert-wse-to-csl{...}`` (``passes/convert_wse_to_csl.py: csl_pipeline``) and returns a
``CslExecutable``; the compile driver caches it under the graph's structural
hash, so a training loop compiles once. ``run(arrays)`` copies the inputs in,
launches the program and copies the outputs out, with the same host code as
the emitted ``run.py`` (``lowering.emit_csl.run_program``):

* with ``cslc`` and ``cs_python`` on PATH (the Cerebras SDK), the program is
  emitted to a directory under the project cache keyed by its hash,
  compiled with ``cslc`` once, and run by ``cs_python run.py`` on the SDK's
  simulator (or a system: ``PYFLAME_CSL_CMADDR``);
* otherwise on the project's WSE simulator, in process: a fresh simulator per
  run, the SDK host API through ``SdkRuntime``. ``last_report()`` /
  ``executable.last_report`` give the ``CycleReport`` of the latest run.

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
    """Set backend options (grid=(w, h) | None, arch, max_pes, mode, matmul, sdk); returns
    the old ones."""
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


@dataclass
class Compiled:
    """One lowering of the module under one set of options."""

    options: CslOptions
    wse: Any  # lowering.to_wse.WseHost: input sources, output dtypes, placement choices
    program: Any  # lowering.to_csl.CslProgram
    spec: dict
    key: str
    directory: Path | None = None  # the emitted SDK project (sdk mode)


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
                                sdk=opts.sdk)
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
        out = []
        for kind, data in c.wse.inputs:
            out.append(np.asarray(args[data]) if kind == "arg" else np.asarray(data))
        for a in out:  # integers travel as f32 values (issue #16): exact below 2**24 only
            if a.dtype.kind in "iu" and a.size and np.abs(a).max() >= INDEX_EXACT:
                raise ValueError(f"csl backend: an integer input holds {np.abs(a).max()}, "
                                 f"but integers are f32 values on the PE, exact below "
                                 f"{INDEX_EXACT}")
        return out

    def run(self, args: list[np.ndarray]) -> list[np.ndarray]:
        c = self.current
        ins = self.inputs_for(c, list(args))
        mode = c.options.mode
        if mode == "sdk" or (mode == "auto" and sdk_on_path()):
            outs = self._run_sdk(c, ins)
        else:
            outs = self._run_simulator(c, ins)
        result = []
        for o, d in zip(outs, c.wse.output_dtypes):
            result.append(np.asarray(o).astype(d.np, copy=False).reshape(o.shape))
        return result

    def _run_simulator(self, c: Compiled, ins: list[np.ndarray]) -> list[np.ndarray]:
        from ..lowering.emit_csl import run_program
        from .wse.sdkruntime import MemcpyDataType, MemcpyOrder, SdkRuntime

        rt = SdkRuntime.for_module(c.program.module, arch=c.program.arch)
        rt.load()
        rt.run()
        with np.errstate(all="ignore"):
            outs = run_program(rt, c.spec, ins, MemcpyOrder.ROW_MAJOR,
                               MemcpyDataType.MEMCPY_32BIT)
        rt.stop()
        self.last_report = rt.report
        with _LOCK:
            _LAST[0] = self.last_report
        return outs

    def emit(self, directory: str | Path | None = None, inputs: list[np.ndarray] | None = None
             ) -> Path:
        """Write the SDK project (default: the cache directory keyed by the program hash)."""
        from ..lowering.emit_csl import emit

        c = self.current
        out = Path(directory) if directory else cache_dir() / c.key
        with progress(f"writing the CSL project {out.name} ({c.program.grid} grid)"):
            emit(c.program, out, inputs=inputs)
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
        lines += [f"  {line}" for line in c.wse.choices]
        return "\n".join(lines)


def lower(module: Any) -> CslExecutable:
    """The registry hook: lower (and check) ``module``; errors surface here."""
    return CslExecutable(module)


def unavailable_reason() -> str | None:
    return None  # the simulator always runs; the SDK is used when present


def export_module(module: Any, leaves: list[np.ndarray], out_dir: str | Path | None,
                  grid: tuple[int, int] | None = None, arch: str | None = None,
                  sdk_version: int | None = None) -> tuple[Path, CslExecutable]:
    """Write the SDK project of an optimized ``pyflame`` module (what the csl
    backend's ``lower`` takes) to ``out_dir``, with ``leaves`` (the values of
    its arguments, in order) as ``in_<i>.npy``; ``out_dir`` None: the csl cache
    directory of the program's key, with its checksum manifest (an entry
    ``python -m pyflame_mlir cache`` lists and verifies). Returns the directory
    and the executable. The runtime half of ``pf.export_csl`` (``compiler.py``), which
    builds the module from lazy tensors."""
    changes = {k: v for k, v in (("grid", grid), ("arch", arch), ("sdk", sdk_version))
               if v is not None}
    prev = configure(**changes) if changes else None
    try:
        exe = CslExecutable(module)
        path = exe.emit(out_dir, exe.inputs_for(exe.current, leaves))
        if out_dir is None:
            write_manifest(path)
    finally:
        if prev is not None:
            configure(**vars(prev))
    return path, exe
