"""Logging (issue 20): records for a compile (miss), a hit and a corrupted
disk-cache entry rebuilt; ``PYFLAME_LOG``; no ``print`` in library code."""

from __future__ import annotations

import ast
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import pyflame_mlir as pf
from pyflame_mlir.runtime import disk_cache, max_backend

ROOT = Path(__file__).resolve().parents[2]


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def messages(self, level: int) -> list[str]:
        return [r.getMessage() for r in self.records if r.levelno == level]


@pytest.fixture
def records() -> Iterator[_Collect]:
    """Every record of the ``pyflame_mlir`` logger, at DEBUG (whatever
    PYFLAME_LOG or the root logger say)."""
    logger = logging.getLogger("pyflame_mlir")
    handler, level = _Collect(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_a_miss_then_a_hit(records: _Collect, lazy: None) -> None:
    x = pf.randn([3, 5])
    # a graph no other test builds: the first evaluation misses
    expr = lambda: (pf.tanh(x * 0.123456789) + 7.25).sum()  # noqa: E731
    expr().item()
    miss = [m for m in records.messages(logging.INFO) if m.startswith("cache miss")]
    assert len(miss) == 1 and " on reference in " in miss[0] and ", compiled (" in miss[0]
    key = miss[0].split()[3]
    stats = records.messages(logging.DEBUG)
    assert any(m.startswith(f"pass statistics of graph {key}") for m in stats)
    records.records.clear()
    expr().item()
    assert records.messages(logging.INFO) == []
    assert records.messages(logging.DEBUG) == [f"cache hit: graph {key} on reference"]


def test_a_corrupted_disk_entry_is_logged_and_rebuilt(records: _Collect, tmp_path: Path) -> None:
    store = max_backend.MefStore(tmp_path)
    key = "ab" * 20
    store.write(key, b"MEF" * 100, {"max": "test"})
    assert any("cache write" in m for m in records.messages(logging.INFO))
    path = store.path(key)
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 0xFF  # one flipped bit in the payload
    path.write_bytes(bytes(blob))
    assert store.read(key) is None  # never trusted
    warnings = records.messages(logging.WARNING)
    assert len(warnings) == 1 and "corrupt (checksum mismatch)" in warnings[0]
    assert str(path) in warnings[0] and not path.exists()  # removed: the next compile rebuilds
    store.write(key, b"MEF" * 100, {"max": "test"})
    assert store.read(key) == b"MEF" * 100


def test_an_eviction_is_logged(records: _Collect, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYFLAME_CACHE_DIR", str(tmp_path))
    store = max_backend.store()
    store.write("0" * 40, b"x" * 1000, {})
    os.utime(store.path("0" * 40), (1, 1))  # long unused
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, "1500")
    store.write("1" * 40, b"y" * 1000, {})
    assert not store.path("0" * 40).exists() and store.path("1" * 40).exists()
    assert any(m.startswith("cache evicted max entry " + "0" * 40)
               for m in records.messages(logging.INFO))


def _child(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PYFLAME_LOG")}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, env={**base, **env}, timeout=120)


EVALUATE = "import pyflame_mlir as pf; print((pf.randn([4]) * 3).sum().item())"


def test_pyflame_log_environment_variable() -> None:
    info = _child(EVALUATE, PYFLAME_LOG="info")
    assert info.returncode == 0, info.stderr
    assert "pyflame INFO pyflame_mlir.compiler: cache miss: graph " in info.stderr
    assert "DEBUG" not in info.stderr
    quiet = _child(EVALUATE)  # unset: a compile says nothing
    assert quiet.returncode == 0 and quiet.stderr == ""
    bad = _child(EVALUATE, PYFLAME_LOG="loud")
    assert bad.returncode != 0 and "PYFLAME_LOG='loud'" in bad.stderr


def test_configure_logging_replaces_its_handler() -> None:
    import io

    logger = logging.getLogger("pyflame_mlir")
    level, propagate = logger.level, logger.propagate
    first, second = io.StringIO(), io.StringIO()
    try:
        pf.configure_logging("warning", first)
        pf.configure_logging("debug", second)
        logging.getLogger("pyflame_mlir.test").debug("hello %d", 1)
        assert first.getvalue() == ""
        assert second.getvalue() == "pyflame DEBUG pyflame_mlir.test: hello 1\n"
    finally:
        from pyflame_mlir import logging_util

        if logging_util._handler is not None:
            logger.removeHandler(logging_util._handler)
            logging_util._handler = None
        logger.setLevel(level)
        logger.propagate = propagate


# print() calls that are the user's request or a command line's output
PRINT_ALLOWED = {
    "pyflame_mlir/compiler.py": {"print_graph"},  # pf.print_graph: printing is the point
    # the host-script runner's command line, and run_script's report (quiet=True: none)
    "pyflame_mlir/runtime/wse/run_host.py": {"main", "run_script"},
    "pyflame_mlir/runtime/wse/compile.py": {"main"},  # CLI
    "pyflame_mlir/runtime/mlir_blas.py": {"main"},  # CLI for the lit test
    "pyflame_mlir/jax_compat.py": {"_debug_print"},  # pf.debug.print: printing is the point
}
LIBRARY = ("pyflame_mlir", "dialects", "passes", "lowering")


def test_no_print_in_library_code() -> None:
    bad = []
    for top in LIBRARY:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text(), rel)
            allowed = [range(n.lineno, (n.end_lineno or n.lineno) + 1) for n in ast.walk(tree)
                       if isinstance(n, ast.FunctionDef)
                       and n.name in PRINT_ALLOWED.get(rel, ())]
            bad += [f"{rel}:{n.lineno}" for n in ast.walk(tree)
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id == "print" and not any(n.lineno in r for r in allowed)]
    assert not bad, "print() in library code (log through logging instead): " + ", ".join(bad)


def test_mlir_disk_entry_corrupted_then_rebuilt(records: _Collect, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                lazy: None) -> None:
    """The backend path end to end (with the [mlir] extra): a compile writes
    the library, a corrupted library is a WARNING and compiles again, an
    intact one loads from disk. Lazy-only: it corrupts the one library of one
    recorded graph (eager mode compiles ``x * 2.5`` and its sum apart: two)."""
    from pyflame_mlir.runtime import mlir_backend

    if mlir_backend.unavailable_reason():
        pytest.skip(mlir_backend.unavailable_reason())
    monkeypatch.setenv("PYFLAME_CACHE_DIR", str(tmp_path))
    x = pf.randn([4])

    def evaluate() -> str:
        pf.clear_cache()  # the in-memory cache: each evaluation goes to the backend
        with pf.backend("mlir"):
            (x * 2.5).sum().item()
        return next(m for m in records.messages(logging.INFO) if m.startswith("cache miss"))

    assert ", compiled (" in evaluate()
    (lib,) = (tmp_path / "mlir").glob("*.so")
    lib.write_bytes(lib.read_bytes()[:-8])  # truncated
    records.records.clear()
    assert ", compiled (" in evaluate()
    assert any("was corrupt" in m for m in records.messages(logging.WARNING))
    records.records.clear()
    assert ", loaded from the disk cache (" in evaluate()
