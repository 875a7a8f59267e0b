"""``python -m pyflame_mlir cache info|clear|verify``: the backends' disk caches.

    python -m pyflame_mlir cache info [--json]     # per backend: entries, bytes, oldest, where
    python -m pyflame_mlir cache clear [--backend max|mlir|csl]
    python -m pyflame_mlir cache verify            # check every checksum, remove bad entries

The cache lives in ``PYFLAME_CACHE_DIR`` (default ``~/.cache/pyflame``);
``runtime/disk_cache.py`` says which files make up an entry of each backend.
Files there that are no entry of ours (foreign files) are reported and never
deleted, so a cache directory pointed at the wrong place loses nothing.
``clear`` and ``verify`` skip an entry another process holds locked (it is
being compiled or loaded right now) and say so.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import time
from collections.abc import Callable
from typing import TextIO

from .runtime import disk_cache, mlir_backend
from .runtime.disk_cache import LAYOUTS, Entry, Scan
from .runtime.max_backend import CorruptEntry, MefStore


def _check_max(entry: Entry) -> str | None:
    """The MEF header's size and sha256 (``MefStore.decode``), and its key."""
    try:
        _, header = MefStore.decode(entry.paths[0].read_bytes())
    except CorruptEntry as e:
        return str(e)
    if header.get("key") != entry.key:
        return f"the header names key {header.get('key')!r}"
    return None


def _check_mlir(entry: Entry) -> str | None:
    """What ``mlir_backend.Store.load`` checks before loading: the library
    and its ``.json`` (key, size, sha256), both present."""
    files = {p.suffix: p for p in entry.paths}
    if set(files) != {".so", ".json"}:
        missing = ({".so", ".json"} - set(files)).pop()
        return f"incomplete: no {entry.key}{missing}"
    try:
        info = json.loads(files[".json"].read_text())
    except (OSError, ValueError) as e:
        return f"unreadable {entry.key}.json ({e})"
    blob = files[".so"].read_bytes()
    if not isinstance(info, dict) or info.get("key") != entry.key:
        return "the .json names another key"
    if info.get("format") != mlir_backend.STORE_FORMAT:
        return (f"format {info.get('format')!r}, expected {mlir_backend.STORE_FORMAT} "
                "(outdated entry)")
    if info.get("size") != len(blob):
        return f"truncated: {len(blob)} of {info.get('size')} bytes"
    if info.get("sha256") != hashlib.sha256(blob).hexdigest():
        return "checksum mismatch"
    return None


def _check_csl(entry: Entry) -> str | None:
    return disk_cache.check_manifest(entry.paths[0])


CHECKS: dict[str, Callable[[Entry], str | None]] = {
    "max": _check_max, "mlir": _check_mlir, "csl": _check_csl}


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t)) if t else "-"


def _scans(backend: str | None) -> list[Scan]:
    return [disk_cache.scan(b) for b in ([backend] if backend else LAYOUTS)]


def info(out: TextIO, as_json: bool = False) -> int:
    scans = _scans(None)
    cap = disk_cache.max_bytes()
    rows = []
    for s in scans:
        used = [e.last_used for e in s.entries]
        rows.append({
            "backend": s.layout.backend, "entries": len(s.entries),
            "bytes": sum(e.nbytes for e in s.entries), "other_bytes": s.extra_bytes,
            "oldest": min(used, default=None), "newest": max(used, default=None),
            "location": str(s.root), "foreign": [str(p) for p in s.foreign],
            "temporaries": len(s.temporaries)})
    if as_json:
        json.dump({"root": str(disk_cache.cache_root()), "max_bytes": cap, "backends": rows},
                  out, indent=1)
        out.write("\n")
        return 0
    out.write(f"pyflame cache: {disk_cache.cache_root()}  (PYFLAME_CACHE_DIR; size cap "
              f"{_size(cap) if cap is not None else 'none'}, {disk_cache.MAX_BYTES_ENV})\n")
    out.write(f"{'backend':8} {'entries':>7} {'bytes':>10}  {'oldest':16}  {'last used':16}  "
              "location\n")
    for r in rows:
        out.write(f"{r['backend']:8} {r['entries']:>7} {_size(r['bytes']):>10}  "
                  f"{_when(r['oldest']):16}  {_when(r['newest']):16}  {r['location']}\n")
    total = sum(r["bytes"] for r in rows)
    out.write(f"{'total':8} {sum(r['entries'] for r in rows):>7} {_size(total):>10}\n")
    for r in rows:
        if r["other_bytes"]:
            extra = ", ".join(LAYOUTS[r["backend"]].extra)
            out.write(f"{r['backend']}: the toolchain's own cache ({extra}) holds "
                      f"{_size(r['other_bytes'])}\n")
        for p in r["foreign"]:
            out.write(f"{r['backend']}: foreign file left alone: {p}\n")
    return 0


def clear(out: TextIO, backend: str | None = None) -> int:
    removed = busy = 0
    freed = 0
    for s in _scans(backend):
        for e in s.entries:
            if disk_cache.remove_if_unused(e):
                removed += 1
                freed += e.nbytes
            else:
                busy += 1
                out.write(f"{e.backend}: {e.key} is in use by another process, kept\n")
        for d in s.layout.extra:  # the toolchain's own cache (MODULAR_CACHE_DIR)
            p = disk_cache.cache_root() / d
            freed += disk_cache.tree_bytes(p)
            shutil.rmtree(p, ignore_errors=True)
        now = time.time()
        for t in s.temporaries:  # only a crashed writer's: a live one is still writing
            try:
                if now - t.stat().st_mtime > disk_cache.TEMP_AGE:
                    disk_cache.remove(Entry(s.layout.backend, t.name, (t,), 0, 0.0))
            except OSError:
                pass
        for lock in s.locks:  # a held lock belongs to a process compiling that key
            with disk_cache.try_lock(lock) as free:
                if free:
                    lock.unlink(missing_ok=True)
        for p in s.foreign:
            out.write(f"{s.layout.backend}: foreign file left alone: {p}\n")
    which = backend or "all backends"
    out.write(f"cleared {removed} entries ({_size(freed)}) of {which}"
              + (f"; {busy} in use, kept" if busy else "") + "\n")
    return 0


def verify(out: TextIO, backend: str | None = None) -> int:
    good = bad = busy = 0
    for s in _scans(backend):
        for e in s.entries:
            # Checked under the key's lock, so a concurrent eviction cannot
            # delete the files mid-read; one evicted since the scan is gone,
            # which is no fault of the cache.
            with disk_cache.try_lock(e.lock_path) as free:
                if not free:
                    busy += 1
                    out.write(f"{e.backend}: {e.key} is in use by another process, kept "
                              "(not checked)\n")
                    continue
                if not all(p.exists() for p in e.paths):
                    continue
                why = CHECKS[e.backend](e)
                if why is None:
                    good += 1
                    continue
                bad += 1
                disk_cache.remove(e)
            out.write(f"{e.backend}: removed bad entry {e.key}: {why}\n")
        for p in s.foreign:
            out.write(f"{s.layout.backend}: foreign file left alone: {p}\n")
    out.write(f"verified {good + bad} entries: {good} good, {bad} bad"
              + (f"; {busy} in use, not checked" if busy else "") + "\n")
    return 0


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pyflame_mlir cache",
                                 description="The backends' disk caches (PYFLAME_CACHE_DIR).")
    sub = ap.add_subparsers(dest="command", required=True)
    p_info = sub.add_parser("info", help="per backend: entries, bytes, oldest, location")
    p_info.add_argument("--json", action="store_true", help="machine-readable output")
    for name, text in (("clear", "delete cached entries"),
                       ("verify", "check every checksum, remove bad entries, report them")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--backend", choices=sorted(LAYOUTS), help="only this backend")
    args = ap.parse_args(argv)
    stream = out if out is not None else sys.stdout
    if args.command == "info":
        return info(stream, args.json)
    if args.command == "clear":
        return clear(stream, args.backend)
    return verify(stream, args.backend)
