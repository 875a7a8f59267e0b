"""The ``mlir`` backend: whole graphs compiled by upstream MLIR and LLVM for the CPU.

On a cache miss: the optimized ``pyflame`` module goes through
``convert-pyflame-to-linalg`` (xDSL), is printed as generic text, parsed by
the MLIR Python bindings, fused and bufferized (one-shot, function
boundaries, results turned into out-parameters the caller allocates:
``BUFFERIZE_PIPELINE``), its f32/f64 matmuls handed to numpy's OpenBLAS
(``mlir_blas.delegate_matmuls``), lowered to loops and LLVM
(``LOWER_PIPELINE``), and JIT-compiled by ``ExecutionEngine`` (linked
against OpenBLAS). The
executable calls the packed entry point ``_mlir_main(void **args)`` through
ctypes with one pointer per argument and result (bare-pointer memrefs: every
shape is static), so a run costs one foreign call and the output allocations.

Disk cache: the compiled code is also linked into a shared library under
``PYFLAME_CACHE_DIR/mlir`` (``<key>.so`` plus ``<key>.json`` holding its
size and sha256, written last: temp file + fsync + rename each). Another
process with the same module, pipeline and toolchain loads it with ctypes
without running MLIR; an entry whose checksum does not match is deleted and
rebuilt. The key hashes the linalg module text, the pipeline, the lowering
version, the MLIR package version and the BLAS library used (if any).

Function arguments are marked ``bufferization.writable = false``: the
caller's arrays are never written.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import logging
import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from importlib import metadata
from io import StringIO
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .disk_cache import atomic_write, cache_root, file_lock, touch
from .openblas import warm_sgemm
from .progress import progress

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from ..dialects.dtypes import DType

ENTRY = "main"
# bufferize -> out-params -> fuse; then (``mlir_blas``) matmuls to BLAS calls;
# then loops -> LLVM. The fused elementwise loop nests are vectorized by
# LLVM's loop vectorizer (opt level 3).
BUFFERIZE_PIPELINE = (
    "builtin.module("
    "linalg-fuse-elementwise-ops,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "buffer-results-to-out-params{hoist-static-allocs modify-public-functions},"
    "buffer-deallocation-pipeline)"
)
LOWER_PIPELINE = (
    "builtin.module("
    "convert-linalg-to-loops,convert-scf-to-cf,expand-strided-metadata,lower-affine,"
    "finalize-memref-to-llvm,convert-math-to-funcs,convert-math-to-llvm,convert-math-to-libm,convert-arith-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},convert-cf-to-llvm,"
    "reconcile-unrealized-casts)"
)
PIPELINE = f"{BUFFERIZE_PIPELINE} | mlir_blas | {LOWER_PIPELINE}"
OPT_LEVEL = 3
CACHE_VERSION = "1"


def unavailable_reason() -> str | None:
    """None when the bindings import, else why not (for ``BACKENDS``)."""
    try:
        import mlir.execution_engine  # noqa: F401
        import mlir.ir  # noqa: F401
        import mlir.passmanager  # noqa: F401
    except ImportError as e:
        return (f"the upstream MLIR Python bindings are missing ({e}); install the extra: "
                "pip install 'pyflame-mlir[mlir]'")
    return None


def mlir_version() -> str:
    try:
        return metadata.version("xtc-mlir-python-bindings")
    except metadata.PackageNotFoundError:
        return "unknown"


def _blas_token() -> str:
    from .mlir_blas import blas_library

    blas = blas_library()
    return "no-blas" if blas is None else f"{Path(blas.path).name}:{blas.sgemm}:{blas.dgemm}"


_TOKEN = (CACHE_VERSION, hashlib.sha256(f"{PIPELINE}|{OPT_LEVEL}".encode()).hexdigest()[:12])


def config_token() -> tuple[str, str]:
    """What executables depend on besides the graph: in the in-memory cache
    key. Asked at every evaluation, so a constant (no xDSL, no hashing)."""
    return _TOKEN


def runtime_library() -> str | None:
    """``libmlir_c_runner_utils`` (``memrefCopy`` for strided copies), if shipped."""
    import mlir

    for base in mlir.__path__:
        p = Path(base) / "lib" / "libmlir_c_runner_utils.so"
        if p.exists():
            return str(p)
    return None


# ---- statistics (tests and benchmarks read them) ----

@dataclass
class Stats:
    compiles: int = 0  # MLIR pipelines + JIT runs
    disk_hits: int = 0
    disk_writes: int = 0
    corrupt_entries: int = 0
    blas_matmuls: int = 0  # contractions delegated to BLAS by the compiles

    def reset(self) -> None:
        self.compiles = self.disk_hits = self.disk_writes = self.corrupt_entries = 0
        self.blas_matmuls = 0


STATS = Stats()


# ---- the executable ----

def _np_dtype(d: DType) -> np.dtype:
    return np.dtype(d.np)


class MlirExecutable:
    """Calls ``_mlir_main(void **)``: arguments, then one out-buffer per result."""

    def __init__(self, entry: int, keepalive: Any, arg_specs: list[tuple[tuple[int, ...], Any]],
                 result_specs: list[tuple[tuple[int, ...], Any]], source: str):
        warm_sgemm()  # the programs call numpy's OpenBLAS: see runtime/openblas.py
        self._fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(entry)
        self._keepalive = keepalive  # the ExecutionEngine or the loaded library
        self._arg_specs = [(tuple(s), np.dtype(d)) for s, d in arg_specs]
        self._result_specs = [(tuple(s), np.dtype(d)) for s, d in result_specs]
        n = len(arg_specs) + len(result_specs)
        # one pointer per memref (bare-pointer convention); _mlir_main reads
        # them through ``_packed``, the array of their addresses (built once)
        self._pointers = (ctypes.c_void_p * max(n, 1))()
        base, size = ctypes.addressof(self._pointers), ctypes.sizeof(ctypes.c_void_p)
        self._packed = (ctypes.c_void_p * max(n, 1))(*[base + i * size for i in range(n)])
        self._lock = threading.Lock()  # the pointers belong to one call at a time
        self.source = source  # "jit" or the shared library's path
        self.nbytes = 0

    def run(self, args: list[np.ndarray]) -> list[np.ndarray]:
        if len(args) != len(self._arg_specs):
            raise ValueError(f"expected {len(self._arg_specs)} arguments, got {len(args)}")
        ins = []
        for a, (shape, d) in zip(args, self._arg_specs):
            if a.shape != shape or a.dtype != d:
                raise ValueError(f"argument of shape {a.shape} {a.dtype} does not match the "
                                 f"compiled {shape} {d}")
            ins.append(a if a.flags.c_contiguous else np.ascontiguousarray(a))
        outs = [np.empty(shape, d) for shape, d in self._result_specs]
        with self._lock:
            pointers = self._pointers
            for i, a in enumerate(ins):
                pointers[i] = _address(a)
            for i, a in enumerate(outs, len(ins)):
                pointers[i] = _address(a)
            self._fn(self._packed)
        return outs


def _address(a: np.ndarray) -> int:
    """The data pointer of ``a``. Through the buffer protocol when writable:
    about 3x cheaper than ``a.ctypes.data`` (measured in docs/PERFORMANCE.md)."""
    if a.flags.writeable and a.nbytes:
        try:
            return ctypes.addressof(ctypes.c_char.from_buffer(a))
        except ValueError:  # a dtype the buffer protocol cannot express (bfloat16)
            pass
    return a.ctypes.data


# ---- compile ----

def _signature(module: ModuleOp) -> tuple[list, list]:
    from xdsl.dialects import func

    from ..dialects.pyflame import spec_of_type

    for op in module.body.block.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == ENTRY:
            ins = [spec_of_type(t, "argument") for t in op.function_type.inputs.data]
            outs = [spec_of_type(t, "result") for t in op.function_type.outputs.data]
            return ([(s, _np_dtype(d)) for s, d in ins], [(s, _np_dtype(d)) for s, d in outs])
    raise ValueError(f"the module has no func.func @{ENTRY}")


def linalg_text(module: ModuleOp) -> str:
    """``module`` (pyflame, left untouched) lowered to linalg, as generic MLIR text."""
    from xdsl.context import Context
    from xdsl.printer import Printer

    from ..passes.to_linalg import ConvertPyflameToLinalg

    clone = module.clone()
    ConvertPyflameToLinalg(bool_bits=8, rational_tanh=True).apply(Context(), clone)
    out = StringIO()
    Printer(stream=out, print_generic_format=True).print_op(clone)
    return out.getvalue()


def cache_key(text: str) -> str:
    from ..lowering.to_linalg import LOWERING_VERSION

    h = hashlib.sha256()
    for part in (CACHE_VERSION, LOWERING_VERSION, mlir_version(), PIPELINE, str(OPT_LEVEL),
                 _blas_token(), text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def shared_libraries() -> list[str]:
    """What the JITed code links against: the MLIR C runner utils and numpy's OpenBLAS."""
    from .mlir_blas import blas_library

    libs = [runtime_library(), getattr(blas_library(), "path", None)]
    return [lib for lib in libs if lib]


def compile_text(text: str, blas: bool = True) -> tuple[Any, Any]:
    """Parse generic text, bufferize, delegate matmuls to BLAS (unless
    ``blas`` is false), lower to LLVM and JIT it: (engine, ir context).
    The arguments of ``@main`` are made read-only for bufferization."""
    from mlir import ir, passmanager
    from mlir.execution_engine import ExecutionEngine

    from .mlir_blas import delegate_matmuls

    ctx = ir.Context()
    with ctx, ir.Location.unknown():
        mod = ir.Module.parse(text)
        for op in mod.body.operations:
            if op.operation.name == "func.func" and \
                    ir.StringAttr(op.attributes["sym_name"]).value == ENTRY:
                n = len(ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
                        .inputs)
                ro = ir.DictAttr.get({"bufferization.writable": ir.BoolAttr.get(False)})
                op.attributes["arg_attrs"] = ir.ArrayAttr.get([ro] * n)
        passmanager.PassManager.parse(BUFFERIZE_PIPELINE).run(mod.operation)
        if blas:
            STATS.blas_matmuls += delegate_matmuls(mod)
        passmanager.PassManager.parse(LOWER_PIPELINE).run(mod.operation)
        engine = ExecutionEngine(mod, opt_level=OPT_LEVEL, shared_libs=shared_libraries())
    STATS.compiles += 1
    return engine, ctx


def lower_and_compile(module: ModuleOp) -> MlirExecutable | _Repeated:
    """The ``BACKENDS`` entry: a ready executable for ``module`` (disk cache first).
    A value ``@main`` returns more than once (``pf.eval(x + 1, x + 1)`` after
    CSE) is returned once by the compiled function and copied after the run:
    two out-buffers of one bufferized value crashed the JIT'd code."""
    order = _return_each_value_once(module)
    exe = _lower_and_compile(module)
    return exe if order is None else _Repeated(exe, order)


class _Repeated:
    """An executable whose results are repeated into the positions ``order`` names."""

    def __init__(self, exe: MlirExecutable, order: list[int]):
        self.exe, self.order = exe, order
        self.source = exe.source

    def run(self, args: list[np.ndarray]) -> list[np.ndarray]:
        outs = self.exe.run(args)
        used: set[int] = set()
        result = []
        for k in self.order:
            result.append(outs[k] if k not in used else outs[k].copy())
            used.add(k)
        return result


def _return_each_value_once(module: ModuleOp) -> list[int] | None:
    """Make ``@main`` return each value once; the position of each original
    result among the new ones, or None if nothing was repeated."""
    from xdsl.dialects import func

    for fn in module.body.block.ops:
        if isinstance(fn, func.FuncOp) and fn.sym_name.data == ENTRY:
            ret = fn.body.block.last_op
            assert isinstance(ret, func.ReturnOp)
            values = list(ret.operands)
            unique = list(dict.fromkeys(values))
            if len(unique) == len(values):
                return None
            ret.operands = unique
            fn.function_type = func.FunctionType.from_lists(
                list(fn.function_type.inputs.data), [v.type for v in unique])
            return [unique.index(v) for v in values]
    return None


def _lower_and_compile(module: ModuleOp) -> MlirExecutable:
    arg_specs, result_specs = _signature(module)
    text = linalg_text(module)
    key = cache_key(text)
    store = Store(cache_dir())
    with store.lock(key):
        corrupt = STATS.corrupt_entries
        lib = store.load(key)
        if lib is not None:
            STATS.disk_hits += 1
            touch(store.so(key), store.meta(key))  # for least-recently-used eviction
            return MlirExecutable(ctypes.cast(getattr(lib, "_mlir_" + ENTRY), ctypes.c_void_p)
                                  .value or 0, lib, arg_specs, result_specs, str(store.so(key)))
        if STATS.corrupt_entries > corrupt:
            logging.getLogger(__name__).warning(
                "mlir cache entry %s was corrupt: removed, rebuilding", store.so(key))
        with progress(f"mlir graph {key[:12]}", "MLIR passes, LLVM JIT") as bar:
            engine, ctx = compile_text(text)
            bar.stage("linking the cached library")
            store.save(key, engine)
    addr = engine.raw_lookup(ENTRY)  # the packed wrapper _mlir_main
    if not addr:
        raise RuntimeError(f"MLIR JIT: no entry point {ENTRY!r}")
    return MlirExecutable(addr, (engine, ctx), arg_specs, result_specs, "jit")


# ---- disk cache ----

def cache_dir() -> Path:
    return cache_root() / "mlir"


def _linker() -> str | None:
    return shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")


# The calling convention of a stored library (argument packing, result order):
# an entry of another format is outdated and rebuilt, never called.
STORE_FORMAT = 1


class Store:
    """Shared libraries on disk: ``<key>.so`` and its ``<key>.json`` (size, sha256)."""

    def __init__(self, root: Path):
        self.root = root

    def so(self, key: str) -> Path:
        return self.root / f"{key}.so"

    def meta(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def lock(self, key: str) -> Any:
        """Exclusive per-key lock across processes (no-op when impossible)."""
        return file_lock(self.root / f"{key}.lock")

    def load(self, key: str) -> ctypes.CDLL | None:
        """The verified library of ``key``, or None; a corrupt entry is deleted."""
        so, meta = self.so(key), self.meta(key)
        try:
            info = json.loads(meta.read_text())
            blob = so.read_bytes()
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            self.discard(key)
            return None
        if not isinstance(info, dict) or info.get("key") != key \
                or info.get("format") != STORE_FORMAT or info.get("size") != len(blob) \
                or info.get("sha256") != hashlib.sha256(blob).hexdigest():
            self.discard(key)
            return None
        try:
            return ctypes.CDLL(str(so))
        except OSError:
            self.discard(key)
            return None

    def discard(self, key: str) -> None:
        STATS.corrupt_entries += 1
        for p in (self.meta(key), self.so(key)):
            try:
                p.unlink()
            except FileNotFoundError:
                pass

    def save(self, key: str, engine: Any) -> None:
        """Link the engine's object code into ``<key>.so``; best effort (no
        linker, read-only cache: the JIT still runs, nothing is written)."""
        cc = _linker()
        if cc is None:
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=self.root) as tmp:
                obj, so = Path(tmp) / "k.o", Path(tmp) / "k.so"
                engine.dump_to_object_file(str(obj))
                cmd = [cc, "-shared", "-o", str(so), str(obj), "-lm", "-Wl,-z,notext"]
                for lib in shared_libraries():
                    cmd += [lib, f"-Wl,-rpath,{Path(lib).parent}"]
                subprocess.run(cmd, check=True, capture_output=True)
                blob = so.read_bytes()
                atomic_write(self.so(key), blob)
                meta = {"key": key, "format": STORE_FORMAT, "size": len(blob),
                        "sha256": hashlib.sha256(blob).hexdigest(),
                        "mlir": mlir_version(), "created": time.time()}
                atomic_write(self.meta(key), json.dumps(meta).encode())
            STATS.disk_writes += 1
        except (OSError, subprocess.CalledProcessError):
            pass
