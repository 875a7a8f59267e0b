"""The MAX backend's runtime: compile a ``pyflame`` module with Modular MAX,
keep the compiled model on disk, run it.

``lower_and_compile(module)`` (the backend registry's ``lower``):

0. the ``legalize-for-max`` pass (from the pass registry) unfuses the module
   and rejects an op MAX has no rule for, before anything is built;
1. key = blake2b of the module text, the MAX version, the device, and the
   lowering's version and source (so a changed rule never reuses an old model);
2. the persistent cache ``<cache>/max/mef/<key>.mef`` (``<cache>`` is
   ``PYFLAME_CACHE_DIR``, default ``~/.cache/pyflame``) is checked: an entry is
   a small header (magic, JSON with the payload's size and sha256) and the MEF
   bytes ``CompiledModel.export_mef`` wrote. A valid entry is loaded with
   ``max.engine.read`` in milliseconds; a truncated or corrupted one (bad
   header, size, checksum, or a MEF MAX refuses) is deleted and rebuilt,
   never used;
3. on a miss the module is lowered (``lowering/to_max.py``; an op without a
   rule fails here, before compiling) and compiled with ``InferenceSession``
   (minutes on a small CPU), then written atomically: temp file, fsync,
   ``os.replace``. A per-key ``flock`` makes concurrent processes compile a
   key once; the others wait and load it.

Environment: ``MODULAR_TELEMETRY_ENABLED=0`` and ``MODULAR_CACHE_DIR=<cache>/max/modular``
unless the user set them. Device: ``PYFLAME_MAX_DEVICE`` (``auto`` | ``cpu`` |
``gpu`` | ``gpu:N``) or ``set_device``. ``InferenceSession`` is never given
``num_threads`` (it aborts the process in MAX 26.7).

``STATS`` counts compiles, disk loads/writes and corrupt entries, with the
seconds spent, so tests assert on counters rather than wall time.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import threading
import time
import uuid
import warnings
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..dialects.dtypes import DType
from .disk_cache import atomic_write, cache_root, file_lock, touch
from .progress import progress

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

# what the module goes through before its graph is built (the pass registry's name)
LEGALIZE_PIPELINE = "legalize-for-max"
INSTALL_HINT = "pip install 'pyflame-mlir[max]'  (Modular MAX 26.7.0)"
MAGIC = b"PYFLAME-MEF\x01"
_log = logging.getLogger(__name__)
_HEADER_LIMIT = 1 << 16


# ---- configuration ----

def mef_dir() -> Path:
    return cache_root() / "max" / "mef"


def _configure_environment() -> None:
    os.environ.setdefault("MODULAR_TELEMETRY_ENABLED", "0")
    os.environ.setdefault("MODULAR_CACHE_DIR", str(cache_root() / "max" / "modular"))


_configure_environment()  # before max is imported anywhere through this backend

_device_override: str | None = None


def set_device(spec: str | None) -> None:
    """Run MAX graphs on ``spec`` (``cpu``, ``gpu``, ``gpu:N``, ``auto``);
    ``None`` goes back to ``PYFLAME_MAX_DEVICE``. Fails now if it is unusable."""
    global _device_override
    from ..lowering.to_max import device_spec

    if spec is not None:
        spec = device_spec(spec)
        why = _device_problem(spec)
        if why:
            raise RuntimeError(why)
    _device_override = spec


_symbolic_override: bool | None = None


def set_symbolic_batch(on: bool | None) -> None:
    """Compile batch-polymorphic graphs with a symbolic batch dim (one model
    for every batch size); ``None`` goes back to ``PYFLAME_MAX_SYMBOLIC_BATCH``."""
    global _symbolic_override
    _symbolic_override = on


def symbolic_batch() -> bool:
    if _symbolic_override is not None:
        return _symbolic_override
    from ..lowering.to_max import SYMBOLIC_ENV

    return os.environ.get(SYMBOLIC_ENV, "") not in ("", "0")


def config_token() -> tuple[str, bool]:
    """What the MAX backend's executables depend on besides the graph (the
    device, symbolic batch): for the frontend's in-memory cache key, so that
    ``set_device`` or ``set_symbolic_batch`` mid-process never reuses an
    executable made under the other setting."""
    return current_device(), symbolic_batch()


def current_device() -> str:
    from ..lowering.to_max import device_spec

    return device_spec(_device_override)


def _device_problem(spec: str) -> str | None:
    if spec == "cpu":
        return None
    from max.driver import accelerator_count

    n = accelerator_count()
    idx = int(spec[4:])
    if idx >= n:
        return (f"MAX device {spec} requested but MAX sees {n} accelerator(s); "
                "use PYFLAME_MAX_DEVICE=cpu")
    return None


def max_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("max")
    except PackageNotFoundError:
        import max

        return getattr(max, "__version__", "unknown")


def unavailable_reason() -> str | None:
    """None when the backend can run here, else why not and how to fix it."""
    try:
        import max.driver  # noqa: F401
        import max.engine  # noqa: F401
        import max.graph  # noqa: F401
    except ImportError as e:
        return f"the `max` package is not installed or does not import ({e}); {INSTALL_HINT}"
    try:
        return _device_problem(current_device())
    except (ValueError, RuntimeError) as e:
        return str(e)


# ---- counters ----

@dataclass
class MaxStats:
    """Process-wide counters of the MAX backend (tests assert on these)."""

    graph_builds: int = 0
    compiles: int = 0
    disk_loads: int = 0
    disk_writes: int = 0
    corrupt_entries: int = 0
    memory_hits: int = 0  # symbolic-batch models reused within the process
    symbolic_fallbacks: int = 0  # symbolic batch asked, the graph compiled statically
    graph_build_seconds: float = 0.0
    compile_seconds: float = 0.0
    load_seconds: float = 0.0

    last_fallback: str = ""  # why the last symbolic-batch request compiled statically

    def snapshot(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def reset(self) -> None:
        for f in fields(self):
            setattr(self, f.name, f.default)


STATS = MaxStats()


def stats() -> dict[str, Any]:
    return STATS.snapshot()


# ---- the persistent compiled-model cache ----

class CorruptEntry(Exception):
    pass


class MefStore:
    """Compiled models on disk, one self-checking file per key."""

    def __init__(self, root: Path):
        self.root = root

    def path(self, key: str) -> Path:
        return self.root / f"{key}.mef"

    def lock(self, key: str) -> Any:
        """Exclusive per-key lock across processes (see ``disk_cache.file_lock``)."""
        return file_lock(self.root / f"{key}.lock")

    @staticmethod
    def encode(payload: bytes, meta: dict[str, Any]) -> bytes:
        header = dict(meta, size=len(payload), sha256=hashlib.sha256(payload).hexdigest())
        h = json.dumps(header, sort_keys=True).encode()
        return MAGIC + len(h).to_bytes(4, "little") + h + payload

    @staticmethod
    def decode(blob: bytes) -> tuple[bytes, dict[str, Any]]:
        """The verified payload and header; raises CorruptEntry."""
        if not blob.startswith(MAGIC):
            raise CorruptEntry("bad magic")
        off = len(MAGIC)
        n = int.from_bytes(blob[off:off + 4], "little")
        if n <= 0 or n > _HEADER_LIMIT or off + 4 + n > len(blob):
            raise CorruptEntry("bad header length")
        try:
            header = json.loads(blob[off + 4:off + 4 + n])
            size, digest = int(header["size"]), str(header["sha256"])
        except (ValueError, KeyError, TypeError) as e:
            raise CorruptEntry(f"bad header ({e})") from None
        payload = blob[off + 4 + n:]
        if len(payload) != size:
            raise CorruptEntry(f"truncated: {len(payload)} of {size} bytes")
        if hashlib.sha256(payload).hexdigest() != digest:
            raise CorruptEntry("checksum mismatch")
        return payload, header

    def read(self, key: str) -> bytes | None:
        """The verified MEF bytes of ``key``, or None. A corrupt entry is deleted."""
        found = self.read_entry(key)
        return None if found is None else found[0]

    def read_entry(self, key: str) -> tuple[bytes, int] | None:
        """(verified payload, inode of the file it came from), or None."""
        try:
            with open(self.path(key), "rb") as fh:
                ino = os.fstat(fh.fileno()).st_ino
                blob = fh.read()
        except OSError:  # missing, or a cache directory we cannot use
            return None
        try:
            payload, header = self.decode(blob)
            if header.get("key") != key:
                raise CorruptEntry(f"entry is for key {header.get('key')!r}")
        except CorruptEntry as e:
            _log.warning("MAX cache entry %s is corrupt (%s): removed, it will be rebuilt",
                         self.path(key), e)
            self.discard(key, ino)
            return None
        touch(self.path(key))  # least-recently-used eviction orders by mtime
        return payload, ino

    def discard(self, key: str, ino: int | None = None) -> None:
        """Delete a corrupt entry; with ``ino``, only if a concurrent writer has
        not replaced it with a new file meanwhile."""
        STATS.corrupt_entries += 1
        p = self.path(key)
        try:
            if ino is None or os.stat(p).st_ino == ino:
                p.unlink()
        except FileNotFoundError:
            pass

    def write(self, key: str, payload: bytes, meta: dict[str, Any]) -> Path:
        """Atomically publish ``payload`` as the entry of ``key`` (temp file +
        fsync + rename): readers see the old entry, no entry, or the whole new one."""
        final = self.path(key)
        atomic_write(final, self.encode(payload, dict(meta, key=key)))
        STATS.disk_writes += 1
        self._sweep_temporaries()
        return final

    def _sweep_temporaries(self, older_than: float = 3600.0) -> None:
        """Remove temp files a crashed writer left behind."""
        now = time.time()
        for t in self.root.glob(".*.tmp"):
            try:
                if now - t.stat().st_mtime > older_than:
                    t.unlink()
            except OSError:
                pass


def store() -> MefStore:
    return MefStore(mef_dir())


# ---- keys ----

def _lowering_fingerprint() -> str:
    from ..lowering import to_max

    src = Path(to_max.__file__).read_bytes()
    return to_max.LOWERING_VERSION + ":" + hashlib.blake2b(src, digest_size=8).hexdigest()


def module_text(module: ModuleOp) -> str:
    from xdsl.printer import Printer

    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def cache_key(text: str, device: str) -> str:
    h = hashlib.blake2b(digest_size=20)
    for part in ("pyflame-max", _lowering_fingerprint(), max_version(), device, text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


# ---- sessions and data movement ----

_sessions: dict[str, tuple[Any, Any]] = {}
_sessions_lock = threading.Lock()


def session(device: str) -> tuple[Any, Any]:
    """(InferenceSession, driver Device) for ``device``, one per process."""
    with _sessions_lock:
        if device not in _sessions:
            from max.driver import CPU, Accelerator
            from max.engine import InferenceSession

            dev = CPU() if device == "cpu" else Accelerator(id=int(device[4:]))
            # never num_threads=...: it aborts the process in MAX 26.7
            _sessions[device] = (InferenceSession(devices=[dev]), dev)
        return _sessions[device]


def _to_buffer(a: np.ndarray, d: DType, dev: Any, on_host: bool) -> Any:
    from max.driver import Buffer
    from max.dtype import DType as MaxDType

    if d.name == "bfloat16":  # no DLPack bfloat16 in numpy: move the bits
        buf = Buffer.from_numpy(np.ascontiguousarray(a).view(np.uint16))
        buf = buf.view(MaxDType.bfloat16, a.shape)
    else:
        buf = Buffer.from_numpy(a)
    return buf if on_host else buf.to(dev)


def _to_numpy(buf: Any, d: DType, on_host: bool) -> np.ndarray:
    from max.driver import CPU
    from max.dtype import DType as MaxDType

    if not on_host:
        buf = buf.to(CPU())
    if d.name == "bfloat16":
        return buf.view(MaxDType.uint16, buf.shape).to_numpy().view(d.np)
    if d.name == "bool":
        return buf.view(MaxDType.uint8, buf.shape).to_numpy().view(np.bool_)
    return buf.to_numpy()


# ---- the executable ----

Spec = tuple[tuple[int, ...], DType]


class MaxExecutable:
    """A compiled MAX model with the pyflame signature it implements."""

    def __init__(self, model: Any, arg_specs: list[Spec], result_specs: list[Spec],
                 device: str, key: str, source: str, nbytes: int,
                 arg_sym: list[frozenset[int]] | None = None,
                 result_sym: list[frozenset[int]] | None = None):
        self.model = model
        self.arg_specs = arg_specs
        self.result_specs = result_specs
        # symbolic batch: positions that may take any (one) batch size
        self.arg_sym = arg_sym or [frozenset()] * len(arg_specs)
        self.result_sym = result_sym or [frozenset()] * len(result_specs)
        self.device = device
        self.key = key
        self.source = source  # "compiled", "disk" or "memory" (a symbolic model reused)
        self.nbytes = nbytes
        self._dev = session(device)[1]
        self._on_host = device == "cpu"

    def run(self, args: list[np.ndarray]) -> list[np.ndarray]:
        if len(args) != len(self.arg_specs):
            raise ValueError(f"MAX model takes {len(self.arg_specs)} arguments, "
                             f"got {len(args)}")
        bufs = []
        batch: int | None = None
        for a, (shape, d), sym in zip(args, self.arg_specs, self.arg_sym):
            ok = a.dtype == d.np and len(a.shape) == len(shape) and all(
                i in sym or a.shape[i] == n for i, n in enumerate(shape))
            for i in sorted(sym) if ok else ():  # every batch position: one batch size
                if batch is None:
                    batch = a.shape[i]
                ok = ok and a.shape[i] == batch
            if not ok:
                raise ValueError(f"argument of shape {a.shape} {a.dtype} does not match the "
                                 f"compiled {shape} {d.name}")
            bufs.append(_to_buffer(a, d, self._dev, self._on_host))
        outs = self.model.execute(*bufs)
        results = []
        for buf, (shape, d), sym in zip(outs, self.result_specs, self.result_sym):
            if batch is not None:
                shape = tuple(batch if i in sym else n for i, n in enumerate(shape))
            r = _to_numpy(buf, d, self._on_host)
            if r.shape != shape or r.dtype != d.np:
                raise RuntimeError(f"MAX produced {r.shape} {r.dtype}, expected {shape} "
                                   f"{d.name} (a lowering broke its op's rule)")
            if any(np.may_share_memory(r, a) for a in args):
                r = r.copy()  # results never alias the inputs
            results.append(r)
        return results

    def __repr__(self) -> str:
        return (f"MaxExecutable({self.key[:12]}, device={self.device}, source={self.source}, "
                f"{len(self.arg_specs)} -> {len(self.result_specs)})")


def _signature(module: ModuleOp) -> tuple[list[Spec], list[Spec]]:
    from ..dialects.pyflame import spec_of_type
    from ..lowering.to_max import find_main

    fn = find_main(module)
    ft = fn.function_type
    return ([spec_of_type(t, "argument") for t in ft.inputs.data],
            [spec_of_type(t, "result") for t in ft.outputs.data])


def _model_matches(model: Any, arg_specs: list[Spec],
                   arg_sym: list[frozenset[int]] | None = None) -> bool:
    """The model's inputs are ``arg_specs`` (batch positions of ``arg_sym`` symbolic)."""
    from ..lowering.to_max import max_dtype

    meta = list(model.input_metadata)
    syms = arg_sym or [frozenset()] * len(arg_specs)
    if len(meta) != len(arg_specs):
        return False
    for m, (shape, d), sym in zip(meta, arg_specs, syms):
        dims = list(m.shape)
        if m.dtype != max_dtype(d) or len(dims) != len(shape):
            return False
        for i, (x, n) in enumerate(zip(dims, shape)):
            static = isinstance(x, int) or (isinstance(x, str) and x.isdigit())
            if (i in sym) == static or (static and int(x) != n):
                return False
    return True


def _load(sess: Any, payload: bytes) -> Any:
    from max.engine import read

    return sess.init(read(io.BytesIO(payload)))


_loaded: dict[str, tuple[Any, int]] = {}  # symbolic models of this process: key -> (model, bytes)
_loaded_lock = threading.Lock()


def lower_and_compile(module: ModuleOp, device: str | None = None) -> MaxExecutable:
    """The backend's ``lower``: a runnable model for ``module``, from disk when cached.

    In symbolic-batch mode (``set_symbolic_batch``) a batch-polymorphic module
    is keyed by its text with the batch sizes abstracted, so every batch size
    shares one model (kept in memory for the process, on disk across them); a
    module the analysis refuses compiles statically, as usual."""
    from xdsl.context import Context

    from ..lowering.to_max import (
        MaxLoweringError,
        abstract_text,
        analyze_batch,
        find_main,
        lower_module,
    )
    from ..passes.pipeline import run_pipeline

    # unfuse, decompose what MAX lacks; an op without a rule fails before anything
    run_pipeline(module, LEGALIZE_PIPELINE, Context())
    fn = find_main(module)
    dev = device or current_device()
    arg_specs, result_specs = _signature(module)
    plan = None
    if symbolic_batch():
        try:
            plan = analyze_batch(fn)
        except MaxLoweringError as e:
            STATS.symbolic_fallbacks += 1
            STATS.last_fallback = str(e)
    arg_sym = [plan.of(a) for a in fn.body.block.args] if plan else []
    result_sym = [plan.of(v) for v in fn.body.block.last_op.operands] if plan else []
    text = "symbolic-batch\n" + abstract_text(fn, plan) if plan else module_text(module)
    key = cache_key(text, dev)
    st = store()
    sess = session(dev)[0]

    def executable(model: Any, source: str, nbytes: int) -> MaxExecutable:
        return MaxExecutable(model, arg_specs, result_specs, dev, key, source, nbytes,
                             arg_sym, result_sym)

    if plan is not None:
        with _loaded_lock:
            hit = _loaded.get(key)
        if hit is not None:
            STATS.memory_hits += 1
            return executable(hit[0], "memory", hit[1])

    def try_disk() -> MaxExecutable | None:
        t0 = time.perf_counter()
        found = st.read_entry(key)
        if found is None:
            return None
        payload, ino = found
        try:
            model = _load(sess, payload)
            if not _model_matches(model, arg_specs, arg_sym):
                raise CorruptEntry("signature mismatch")
        except Exception as e:  # whatever MAX raised, the entry is unusable
            _log.warning("MAX refused cache entry %s (%s): removed, it will be rebuilt",
                         st.path(key), e)
            st.discard(key, ino)  # never trust it again
            return None
        STATS.disk_loads += 1
        STATS.load_seconds += time.perf_counter() - t0
        return remember(executable(model, "disk", len(payload)))

    def remember(exe: MaxExecutable) -> MaxExecutable:
        if plan is not None:
            with _loaded_lock:
                _loaded[key] = (exe.model, exe.nbytes)
        return exe

    exe = try_disk()
    if exe is not None:
        return exe
    # a status line on a terminal when this takes over a second (a disk hit never gets here)
    with progress(f"MAX graph {key[:12]} on {dev}", "waiting for another process") as bar, \
            st.lock(key):
        exe = try_disk()  # another process may have compiled it while we waited
        if exe is not None:
            return exe
        t0 = time.perf_counter()
        bar.stage("building the graph")
        lowered = lower_module(module, dev, plan)
        t1 = time.perf_counter()
        STATS.graph_builds += 1
        STATS.graph_build_seconds += t1 - t0
        bar.stage("compiling (about a minute on a small CPU)")
        compiled = sess.compile(lowered.graph)
        STATS.compiles += 1
        STATS.compile_seconds += time.perf_counter() - t1
        try:
            payload = _export(compiled, st.root)
            st.write(key, payload, {"max": max_version(), "device": dev,
                                    "created": time.time()})
        except (OSError, RuntimeError) as e:  # an unwritable cache: the next process compiles
            warnings.warn(f"pyflame MAX backend: could not cache the compiled model in "
                          f"{st.root}: {e}", RuntimeWarning, stacklevel=2)
            payload = b""
        model = sess.init(compiled)
    return remember(executable(model, "compiled", len(payload)))


def _export(compiled: Any, where: Path) -> bytes:
    where.mkdir(parents=True, exist_ok=True)
    tmp = where / f".export.{os.getpid()}.{uuid.uuid4().hex}.tmp"
    try:
        compiled.export_mef(tmp)
        return tmp.read_bytes()
    finally:
        if tmp.exists():
            tmp.unlink()
