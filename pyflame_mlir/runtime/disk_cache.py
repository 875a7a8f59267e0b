"""What the backends' on-disk caches share: where they live, whole-file
writes and per-key locks across processes.

Every backend keeps its compiled artifacts under ``cache_root()/<backend>``
(``PYFLAME_CACHE_DIR``, default ``~/.cache/pyflame``). An entry is written
to a temporary file, fsynced and renamed over the final name, so a reader
sees the old entry, no entry, or the whole new one; a per-key ``flock``
makes concurrent processes compile a missing entry once.

Each entry carries a checksum (MAX: in the MEF file's header; mlir: the
``.json`` beside the library; csl: a ``pyflame-cache.json`` manifest in the
project directory) that the backend checks before use and ``python -m
pyflame_mlir cache verify`` checks on demand. ``LAYOUTS`` says which files
make up an entry of each backend; ``scan`` lists them, and ``evict`` keeps
the whole cache under ``PYFLAME_CACHE_MAX_BYTES`` by deleting the least
recently used entries (a disk hit ``touch``es its entry) after every write.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

_log = logging.getLogger(__name__)


def cache_root() -> Path:
    """The project's cache directory: ``PYFLAME_CACHE_DIR`` or ``~/.cache/pyflame``."""
    env = os.environ.get("PYFLAME_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "pyflame"


def atomic_write(final: Path, data: bytes) -> None:
    """Write ``data`` to ``final`` whole or not at all (temp file, fsync, rename)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{final.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
    finally:
        if tmp.exists():
            tmp.unlink()
    _log.info("cache write %s (%d bytes)", final, len(data))
    if max_bytes() is not None:
        evict(keep=(final,))


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` across processes; a no-op where flock is
    missing or the directory is not writable (atomic writes still keep
    entries whole, at worst two processes compile the same entry)."""
    try:
        import fcntl  # POSIX only

        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(path, "a+b")  # noqa: SIM115
    except (ImportError, OSError):
        yield
        return
    with fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# ---- what is in the cache: entries per backend, for the cache command and eviction ----

MAX_BYTES_ENV = "PYFLAME_CACHE_MAX_BYTES"
MANIFEST = "pyflame-cache.json"  # the checksums of a directory entry (csl projects)
MANIFEST_FORMAT = 1  # a manifest of another format is an outdated entry: rebuilt
TEMP_AGE = 3600.0  # seconds after which a crashed writer's temporary file is garbage


@dataclass(frozen=True)
class Layout:
    """How one backend keeps its entries under ``cache_root()/<subdir>``: files
    named ``<key><suffix>`` for each of ``suffixes`` (one entry per key), or one
    directory per key (``suffixes`` empty). ``extra`` are directories the
    backend's toolchain fills itself (counted, cleared, never verified)."""

    backend: str
    subdir: str
    suffixes: tuple[str, ...]
    extra: tuple[str, ...] = ()


LAYOUTS: dict[str, Layout] = {layout.backend: layout for layout in (
    Layout("max", "max/mef", (".mef",), extra=("max/modular",)),  # max_backend.MefStore
    Layout("mlir", "mlir", (".so", ".json")),  # mlir_backend.Store: library + its checksum
    Layout("csl", "csl", ()),  # csl_backend: one emitted SDK project per key
)}


@dataclass(frozen=True)
class Entry:
    """One cached artifact: every file (or the directory) of one key."""

    backend: str
    key: str
    paths: tuple[Path, ...]
    nbytes: int
    last_used: float  # mtime; a disk hit touches it (``touch``), so this orders LRU

    @property
    def lock_path(self) -> Path:
        return self.paths[0].parent / f"{self.key}.lock"


@dataclass
class Scan:
    """What ``scan`` found in one backend's directory."""

    layout: Layout
    root: Path
    entries: list[Entry] = field(default_factory=list)
    locks: list[Path] = field(default_factory=list)
    temporaries: list[Path] = field(default_factory=list)
    foreign: list[Path] = field(default_factory=list)  # not ours: reported, never deleted
    extra_bytes: int = 0  # in the layout's ``extra`` directories


def max_bytes() -> int | None:
    """The cache's size cap, ``PYFLAME_CACHE_MAX_BYTES`` (None: no cap)."""
    text = os.environ.get(MAX_BYTES_ENV, "").strip()
    if not text:
        return None
    try:
        n = int(text)
    except ValueError:
        raise ValueError(f"{MAX_BYTES_ENV}={text!r} is not a number of bytes") from None
    if n < 0:
        raise ValueError(f"{MAX_BYTES_ENV}={n} is negative")
    return n


def tree_bytes(path: Path) -> int:
    """The bytes of a file, or of every file under a directory."""
    try:
        if not path.is_dir():
            return path.stat().st_size
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    except OSError:  # removed meanwhile
        return 0


def _is_key(stem: str) -> bool:
    return len(stem) >= 8 and all(c in "0123456789abcdef" for c in stem)


def scan(backend: str, root: Path | None = None) -> Scan:
    """The entries, locks, temporaries and foreign files of ``backend``'s cache."""
    layout = LAYOUTS[backend]
    base = root if root is not None else cache_root()
    found = Scan(layout, base / layout.subdir)
    found.extra_bytes = sum(tree_bytes(base / d) for d in layout.extra if (base / d).exists())
    try:
        children = sorted(found.root.iterdir())
    except OSError:  # no cache yet
        return found
    groups: dict[str, list[Path]] = {}
    for p in children:
        name = p.name
        stem, dot, suffix = name.partition(".")
        if name.endswith(".tmp") or (p.is_dir() and name.startswith("tmp")):
            found.temporaries.append(p)  # atomic_write's and the mlir linker's scratch
        elif suffix == "lock" and _is_key(stem):
            found.locks.append(p)
        elif not layout.suffixes and p.is_dir() and _is_key(name):
            groups.setdefault(name, []).append(p)
        elif layout.suffixes and dot and "." + suffix in layout.suffixes and _is_key(stem) \
                and p.is_file():
            groups.setdefault(stem, []).append(p)
        else:
            found.foreign.append(p)
    for key, paths in groups.items():
        try:
            used = max(p.stat().st_mtime for p in paths)
        except OSError:
            continue
        found.entries.append(Entry(backend, key, tuple(paths),
                                   sum(tree_bytes(p) for p in paths), used))
    return found


def touch(*paths: Path) -> None:
    """Mark an entry as just used (least-recently-used eviction reads mtimes)."""
    for p in paths:
        try:
            os.utime(p)
        except OSError:
            pass


@contextmanager
def try_lock(path: Path) -> Iterator[bool]:
    """``file_lock`` without waiting: yields whether the lock was taken (True
    where flock is missing: nothing then tells an entry in use)."""
    try:
        import fcntl  # POSIX only

        fh = open(path, "a+b")  # noqa: SIM115
    except (ImportError, OSError):
        yield True
        return
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def remove(entry: Entry) -> None:
    """Delete an entry's files (already gone is fine)."""
    for p in entry.paths:
        try:
            if p.is_dir():
                shutil.rmtree(p)
            else:
                p.unlink()
        except FileNotFoundError:
            pass


def remove_if_unused(entry: Entry) -> bool:
    """Delete ``entry`` unless a process holds its key's lock (compiling,
    loading or writing it); whether it was deleted."""
    with try_lock(entry.lock_path) as free:
        if free:
            remove(entry)
        return free


def evict(limit: int | None = None, root: Path | None = None,
          keep: tuple[Path, ...] = ()) -> list[Entry]:
    """Delete least-recently-used entries of every backend until the cache
    holds at most ``limit`` bytes (default ``PYFLAME_CACHE_MAX_BYTES``; no cap,
    nothing). Entries in ``keep`` and entries whose key another process holds
    locked are skipped. One process evicts at a time (a lock beside the cache);
    a reader whose entry disappears meanwhile sees a miss and compiles."""
    limit = max_bytes() if limit is None else limit
    if limit is None:
        return []
    base = root if root is not None else cache_root()
    evicted: list[Entry] = []
    with file_lock(base / ".evict.lock"):
        entries = [e for b in LAYOUTS for e in scan(b, base).entries]
        total = sum(e.nbytes for e in entries)
        for e in sorted(entries, key=lambda e: e.last_used):
            if total <= limit:
                break
            if any(p in keep for p in e.paths) or not remove_if_unused(e):
                continue
            total -= e.nbytes
            evicted.append(e)
            _log.info("cache evicted %s entry %s (%d bytes, least recently used; cap %s=%d)",
                      e.backend, e.key, e.nbytes, MAX_BYTES_ENV, limit)
    return evicted


def write_manifest(directory: Path) -> Path:
    """Record the size and sha256 of every file under ``directory`` (a
    directory entry), written last and atomically: an entry without one is
    incomplete or older than the checksums."""
    files = {}
    for p in sorted(directory.rglob("*")):
        if p.is_file() and p.name != MANIFEST:
            data = p.read_bytes()
            files[p.relative_to(directory).as_posix()] = {
                "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    blob = json.dumps({"format": MANIFEST_FORMAT, "files": files}, indent=1, sort_keys=True)
    atomic_write(directory / MANIFEST, blob.encode())
    return directory / MANIFEST


def check_manifest(directory: Path) -> str | None:
    """None when every file ``directory``'s manifest lists is intact, else what is wrong."""
    try:
        info = json.loads((directory / MANIFEST).read_text())
    except FileNotFoundError:
        return "no checksum manifest (incomplete, or written before checksums)"
    except (OSError, ValueError) as e:
        return f"unreadable manifest ({e})"
    if not isinstance(info, dict) or info.get("format") != MANIFEST_FORMAT:
        got = info.get("format") if isinstance(info, dict) else None
        return f"manifest format {got!r}, expected {MANIFEST_FORMAT} (outdated entry)"
    for rel, want in dict(info.get("files") or {}).items():
        try:
            data = (directory / rel).read_bytes()
        except OSError:
            return f"{rel} is missing"
        if len(data) != want.get("size") or hashlib.sha256(data).hexdigest() != want.get(
                "sha256"):
            return f"{rel}: checksum mismatch"
    return None
