"""``python -m pyflame_mlir cache info|clear|verify`` and the size cap (issue 20),
against a cache holding good, corrupted, outdated and foreign files, and
under concurrent processes."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pyflame_mlir import cache_cli
from pyflame_mlir.runtime import disk_cache, max_backend, mlir_backend

ROOT = Path(__file__).resolve().parents[2]
KEYS = {name: hashlib.sha256(name.encode()).hexdigest()[:32] for name in
        ("max-good", "max-bad", "max-old", "mlir-good", "mlir-bad", "mlir-half", "mlir-old",
         "csl-good", "csl-bad", "csl-old")}


def _mlir_entry(root: Path, key: str, blob: bytes, sha: str | None = None,
                fmt: int | None = mlir_backend.STORE_FORMAT) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{key}.so").write_bytes(blob)
    meta = {"key": key, "size": len(blob), "sha256": sha or hashlib.sha256(blob).hexdigest()}
    if fmt is not None:
        meta["format"] = fmt
    (root / f"{key}.json").write_text(json.dumps(meta))


def _csl_entry(root: Path, key: str) -> Path:
    d = root / key
    (d / "out").mkdir(parents=True)
    (d / "layout.csl").write_text("// layout\n")
    (d / "out" / "bin.elf").write_bytes(b"\x7fELF" + bytes(64))
    return d


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache with one good, one corrupted and one outdated entry per backend
    (mlir: a half-written one), lock files, and foreign files."""
    monkeypatch.setenv("PYFLAME_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(disk_cache.MAX_BYTES_ENV, raising=False)
    mef = max_backend.store()
    mef.write(KEYS["max-good"], b"mef" * 1000, {})
    mef.write(KEYS["max-bad"], b"mef" * 1000, {})
    blob = bytearray(mef.path(KEYS["max-bad"]).read_bytes())
    blob[-10] ^= 1
    mef.path(KEYS["max-bad"]).write_bytes(bytes(blob))
    # an entry of an older format (another magic): must be detected, not trusted
    mef.path(KEYS["max-old"]).write_bytes(b"PYFLAME-MEF\x00" + bytes(100))
    (mef.root / f"{KEYS['max-good']}.lock").touch()
    mlir = tmp_path / "mlir"
    _mlir_entry(mlir, KEYS["mlir-good"], b"\x7fELF library" * 50)
    _mlir_entry(mlir, KEYS["mlir-bad"], b"\x7fELF library" * 50, sha="0" * 64)
    (mlir / f"{KEYS['mlir-half']}.so").write_bytes(b"\x7fELF")  # its .json never written
    _mlir_entry(mlir, KEYS["mlir-old"], b"\x7fELF library" * 50, fmt=None)  # before formats
    csl = tmp_path / "csl"
    disk_cache.write_manifest(_csl_entry(csl, KEYS["csl-good"]))
    disk_cache.write_manifest(_csl_entry(csl, KEYS["csl-bad"]))
    (csl / KEYS["csl-bad"] / "layout.csl").write_text("// edited\n")
    _csl_entry(csl, KEYS["csl-old"])  # written before checksums: no manifest
    for foreign in (mef.root / "notes.txt", mlir / "README", csl / "my-project"):
        foreign.parent.mkdir(parents=True, exist_ok=True)
        foreign.write_text("not the cache's")
    (tmp_path / "max" / "modular").mkdir()
    (tmp_path / "max" / "modular" / "kernel.bin").write_bytes(bytes(4096))
    return tmp_path


def run(*argv: str) -> str:
    out = io.StringIO()
    assert cache_cli.main(list(argv), out) == 0
    return out.getvalue()


def info_json() -> dict[str, dict]:
    return {r["backend"]: r for r in json.loads(run("info", "--json"))["backends"]}


def test_info(cache: Path) -> None:
    rows = info_json()
    assert {b: r["entries"] for b, r in rows.items()} == {"max": 3, "mlir": 4, "csl": 3}
    mef = cache / "max" / "mef"
    assert rows["max"]["bytes"] == sum(p.stat().st_size for p in mef.glob("*.mef"))
    assert rows["max"]["other_bytes"] == 4096  # MAX's own cache, counted apart
    assert rows["max"]["location"] == str(mef)
    assert rows["csl"]["foreign"] == [str(cache / "csl" / "my-project")]
    text = run("info")
    assert f"pyflame cache: {cache}" in text
    for backend, n in (("max", "3"), ("mlir", "4"), ("csl", "3")):
        assert any(line.split()[:2] == [backend, n] for line in text.splitlines())
    assert "foreign file left alone" in text and "toolchain's own cache" in text


def test_verify_removes_exactly_the_bad_entries(cache: Path) -> None:
    text = run("verify")
    bad = {line.split()[4].rstrip(":") for line in text.splitlines()
           if "removed bad entry" in line}
    assert bad == {KEYS[n] for n in ("max-bad", "max-old", "mlir-bad", "mlir-half", "mlir-old",
                                     "csl-bad", "csl-old")}
    assert "checksum mismatch" in text and "bad magic" in text and "no checksum manifest" in text
    assert "format None, expected 1 (outdated entry)" in text
    assert "verified 10 entries: 3 good, 7 bad" in text
    assert {b: r["entries"] for b, r in info_json().items()} == {"max": 1, "mlir": 1, "csl": 1}
    assert max_backend.store().read(KEYS["max-good"]) == b"mef" * 1000
    for foreign in ("max/mef/notes.txt", "mlir/README", "csl/my-project"):
        assert (cache / foreign).exists()
    assert "3 good, 0 bad" in run("verify")


def test_verify_keeps_an_entry_in_use(cache: Path) -> None:
    with disk_cache.file_lock(cache / "mlir" / f"{KEYS['mlir-bad']}.lock"):
        text = run("verify", "--backend", "mlir")
    assert "in use by another process, kept" in text
    assert (cache / "mlir" / f"{KEYS['mlir-bad']}.so").exists()


def test_verify_skips_entries_evicted_since_its_scan(cache: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process evicts entries between verify's scan and its reads
    (CI once saw FileNotFoundError here): gone is not bad, and no error."""
    real_scan = disk_cache.scan

    def scan_then_evict(backend: str, root: Path | None = None) -> disk_cache.Scan:
        found = real_scan(backend, root)
        for e in found.entries:
            disk_cache.remove(e)
        return found

    monkeypatch.setattr(disk_cache, "scan", scan_then_evict)
    assert "verified 0 entries: 0 good, 0 bad" in run("verify")


def test_clear_one_backend_then_all(cache: Path) -> None:
    assert "cleared 4 entries" in run("clear", "--backend", "mlir")
    rows = info_json()
    assert (rows["mlir"]["entries"], rows["max"]["entries"]) == (0, 3)
    assert (cache / "mlir" / "README").exists()  # foreign: left alone
    held = cache / "max" / "mef" / f"{KEYS['max-bad']}.lock"
    with disk_cache.file_lock(held):  # a process compiling max-bad right now
        run("clear")
    rows = info_json()
    assert rows["max"]["entries"] == 1 and rows["csl"]["entries"] == 0  # max-bad: in use
    assert held.exists() and not (cache / "max" / "mef" / f"{KEYS['max-good']}.lock").exists()
    run("clear")
    assert all(r["entries"] == 0 and r["other_bytes"] == 0 for r in info_json().values())
    assert (cache / "max" / "mef" / "notes.txt").exists()


def test_least_recently_used_eviction(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run("verify")  # the three good entries remain
    mef = max_backend.store()
    for i, key in enumerate((KEYS["max-good"], KEYS["mlir-good"], KEYS["csl-good"])):
        for p in (mef.path(key), cache / "mlir" / f"{key}.so", cache / "mlir" / f"{key}.json",
                  cache / "csl" / key):
            if p.exists():
                os.utime(p, (1000 + i, 1000 + i))
    assert mef.read(KEYS["max-good"]) is not None  # a disk hit: now the most recent
    sizes = {b: r["bytes"] for b, r in info_json().items()}
    evicted = disk_cache.evict(limit=sizes["max"] + 1)
    assert [e.backend for e in evicted] == ["mlir", "csl"]  # oldest first; max was used
    assert info_json()["max"]["entries"] == 1
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, "10")
    mef.write("f" * 40, b"new" * 100, {})  # a write over the cap keeps only itself
    assert [e.key for e in disk_cache.scan("max").entries] == ["f" * 40]


WRITER = """
import os, sys
from pyflame_mlir.runtime import max_backend
store = max_backend.store()
tag = sys.argv[1]
for i in range(25):
    key = f"{tag}{i:039x}"
    with store.lock(key):
        store.write(key, bytes([i]) * 3000, {})
    assert store.read(key) in (None, bytes([i]) * 3000)
"""


def test_concurrent_writers_under_a_size_cap(tmp_path: Path) -> None:
    """Two processes fill the cache past its cap while a third verifies: no
    error anywhere, every surviving entry intact, the cap held at the end."""
    env = {**os.environ, "PYFLAME_CACHE_DIR": str(tmp_path),
           disk_cache.MAX_BYTES_ENV: "20000"}
    env.pop("PYFLAME_LOG", None)
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(WRITER), tag], cwd=ROOT,
                              env=env, stderr=subprocess.PIPE, text=True) for tag in "ab"]
    procs.append(subprocess.Popen([sys.executable, "-m", "pyflame_mlir", "cache", "verify"],
                                  cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    entries = disk_cache.scan("max", tmp_path).entries
    assert 0 < sum(e.nbytes for e in entries) <= 20000
    for e in entries:
        assert cache_cli.CHECKS["max"](e) is None
    assert not list((tmp_path / "max" / "mef").glob("*.tmp"))


def test_the_command_line(cache: Path) -> None:
    env = {**os.environ, "PYFLAME_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-m", "pyflame_mlir", "cache", "info"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and f"pyflame cache: {cache}" in done.stdout
    usage = subprocess.run([sys.executable, "-m", "pyflame_mlir"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "cache info" in usage.stderr
