"""The progress line (issue 20): on a terminal after the delay, never on a pipe,
never for work shorter than the delay; the hooks in the backends show it.

A pseudo-terminal (``os.openpty``) stands in for the user's terminal: the
child process writes its stderr to the pty's slave end and the test reads the
master end."""

from __future__ import annotations

import fcntl
import importlib.util
import os
import select
import struct
import subprocess
import sys
import termios
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SLOW_WORK = """
import time
from pyflame_mlir.runtime.progress import progress
with progress("compiling graph abc", "stage one", delay=0.05) as p:
    time.sleep(0.3)
    p.stage("stage two")
    time.sleep(0.3)
"""

QUICK_WORK = """
from pyflame_mlir.runtime.progress import progress
with progress("compiling graph abc", delay=5.0):
    pass
"""

# a csl-backend evaluation: the WSE simulator's launch has the hook
CSL_RUN = """
import pyflame_mlir as pf
pf.set_backend("csl")
pf.manual_seed(0)
print((pf.randn([8, 4]) * 2).sum().item())
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYFLAME_PROGRESS", "PYFLAME_LOG"))}
    env.update(extra)
    return env


def run_on_pty(code: str, **env: str) -> bytes:
    """Run ``code`` in a child whose stderr is a terminal; what it wrote there."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # rows, cols
    try:
        proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=slave, env=_env(**env))
    finally:
        os.close(slave)
    out = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
        proc.wait(timeout=60)
    assert proc.returncode == 0, out.decode(errors="replace")
    return out


def run_on_pipe(code: str, **env: str) -> bytes:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                          capture_output=True, env=_env(**env), timeout=60)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stderr


def test_plain_line_on_a_terminal() -> None:
    out = run_on_pty(SLOW_WORK, PYFLAME_PROGRESS="plain")
    assert b"\rpyflame: compiling graph abc [stage one]" in out
    assert b"[stage two]" in out  # the stage is redrawn in place
    assert b"compiling graph abc done in" in out and out.endswith(b"\r\n")  # tty newline


def test_nothing_on_a_pipe() -> None:
    assert run_on_pipe(SLOW_WORK, PYFLAME_PROGRESS="plain") == b""
    assert run_on_pipe(SLOW_WORK) == b""


def test_nothing_for_work_shorter_than_the_delay() -> None:
    assert run_on_pty(QUICK_WORK, PYFLAME_PROGRESS="plain") == b""


def test_switches() -> None:
    assert run_on_pty(SLOW_WORK, PYFLAME_PROGRESS="0") == b""  # off, even on a terminal
    forced = run_on_pipe(SLOW_WORK, PYFLAME_PROGRESS="1")  # on, even on a pipe
    assert b"compiling graph abc done in" in forced


@pytest.mark.skipif(importlib.util.find_spec("tqdm") is None,
                    reason="tqdm (the `progress` extra) is not installed")
def test_tqdm_line_on_a_terminal_not_on_a_pipe() -> None:
    out = run_on_pty(SLOW_WORK)
    assert b"pyflame: compiling graph abc" in out and b"stage two" in out
    assert b"compiling graph abc done in" in out
    assert run_on_pipe(SLOW_WORK) == b""


def test_failed_work_says_so() -> None:
    code = """
    import time
    from pyflame_mlir.runtime.progress import progress
    try:
        with progress("compiling graph abc", delay=0.05):
            time.sleep(0.3)
            raise KeyError("boom")
    except KeyError:
        pass
    """
    assert b"compiling graph abc failed after" in run_on_pty(code, PYFLAME_PROGRESS="plain")


def test_the_wse_simulator_hook_shows_its_run() -> None:
    """The csl backend's simulator run reports on a terminal (delay 0 here, one
    second for users; on a pipe nothing, as test_nothing_on_a_pipe checks)."""
    out = run_on_pty(CSL_RUN, PYFLAME_PROGRESS="plain", PYFLAME_PROGRESS_DELAY="0")
    assert b"pyflame: WSE simulator: " in out and b"PEs done in" in out


def test_a_reference_evaluation_shows_nothing() -> None:
    code = """
    import pyflame_mlir as pf
    print((pf.randn([8, 4]) * 2).sum().item())
    """
    assert run_on_pty(code, PYFLAME_PROGRESS="plain", PYFLAME_PROGRESS_DELAY="0") == b""


def test_a_log_record_gets_its_own_row() -> None:
    """PYFLAME_LOG's handler blanks the line before writing; the line comes back."""
    code = """
    import logging, time
    import pyflame_mlir as pf
    from pyflame_mlir.runtime.progress import progress
    with progress("compiling graph abc", "one", delay=0.05) as p:
        time.sleep(0.3)
        logging.getLogger("pyflame_mlir.test").info("a record")
        p.stage("two")
        time.sleep(0.3)
    """
    out = run_on_pty(code, PYFLAME_LOG="info", PYFLAME_PROGRESS="plain")
    before, _, after = out.partition(b"pyflame INFO pyflame_mlir.test: a record\r\n")
    assert b"[one]" in before and before.endswith(b"\r")  # blanked, back to column 0
    assert b"[two]" in after and b"done in" in after
