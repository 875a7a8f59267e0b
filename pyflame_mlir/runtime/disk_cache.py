"""What the backends' on-disk caches share: where they live, whole-file
writes and per-key locks across processes.

Every backend keeps its compiled artifacts under ``cache_root()/<backend>``
(``PYFLAME_CACHE_DIR``, default ``~/.cache/pyflame``). An entry is written
to a temporary file, fsynced and renamed over the final name, so a reader
sees the old entry, no entry, or the whole new one; a per-key ``flock``
makes concurrent processes compile a missing entry once.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


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
