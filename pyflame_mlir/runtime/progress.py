"""A status line on stderr for work that may take more than a second.

    with progress("compiling MAX graph 3f2a9c1b", stage="building the graph") as p:
        graph = build()
        p.stage("compiling")
        model = compile(graph)

Shown only when stderr is a terminal and the work is still running after
``delay`` seconds (one by default), so a cache hit or a quick compile prints
nothing, and a pipe or a log file never receives control characters. While it
runs, the line says what is happening, the stage and the elapsed seconds,
redrawn in place (``\\r``) a few times a second by a daemon thread; when the
work ends it is replaced by one final line (``... done in 23.4 s``) that stays.

With ``tqdm`` installed (the ``progress`` extra) the line is a tqdm bar
without a total; otherwise a plain ``\\r`` line of our own.
``PYFLAME_PROGRESS=0`` turns it off, ``=1`` shows it on any stream (for
logs that want it), ``=plain`` uses the plain line even when tqdm is there;
``PYFLAME_PROGRESS_DELAY`` changes the one second of silence.

This module sits in the runtime layer (the backends and the WSE simulator
call it) and imports only the standard library, tqdm when present.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

ENV = "PYFLAME_PROGRESS"
DELAY_ENV = "PYFLAME_PROGRESS_DELAY"
DELAY = 1.0  # seconds of silence before the line appears
INTERVAL = 0.25  # seconds between redraws


def enabled(stream: TextIO) -> bool:
    """Whether a progress line goes to ``stream``: a terminal, unless
    ``PYFLAME_PROGRESS`` says otherwise."""
    setting = os.environ.get(ENV, "").strip().lower()
    if setting in ("0", "off", "no", "false"):
        return False
    if setting in ("1", "on", "yes", "true"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _tqdm() -> Any:
    if os.environ.get(ENV, "").strip().lower() == "plain":
        return None
    try:
        from tqdm import tqdm  # optional: the `progress` extra
    except ImportError:
        return None
    return tqdm


class Progress:
    """The status line of one piece of work (see the module docstring)."""

    def __init__(self, what: str, stage: str = "", stream: TextIO | None = None,
                 delay: float | None = None, interval: float = INTERVAL):
        self.what = what
        self._stage = stage
        self._stream = stream if stream is not None else sys.stderr
        self._delay = delay if delay is not None else float(os.environ.get(DELAY_ENV, DELAY))
        self._interval = interval
        self._start = time.perf_counter()
        self._done = threading.Event()
        self._lock = threading.Lock()  # the drawing thread and stage()/finish()
        self._thread: threading.Thread | None = None
        self._bar: Any = None
        self._tqdm: Any = None
        self._width = 0
        self.shown = False  # whether anything was written

    def stage(self, name: str) -> None:
        """Name the step now running (shown on the next redraw)."""
        self._stage = name

    def elapsed(self) -> float:
        return time.perf_counter() - self._start

    def start(self) -> Progress:
        if enabled(self._stream):
            self._tqdm = _tqdm()  # imported here, once: not racing the work in the thread
            ACTIVE.add(self)
            self._thread = threading.Thread(target=self._run, name="pyflame-progress",
                                            daemon=True)
            self._thread.start()
        return self

    def _label(self) -> str:
        stage = f" [{self._stage}]" if self._stage else ""
        return f"pyflame: {self.what}{stage}"

    def _clear_locked(self) -> None:
        """Blank the line (the caller holds ``_lock``); the next redraw brings it back."""
        if not self.shown or self._done.is_set():
            return
        if self._bar is not None:
            self._bar.clear()
        else:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()

    def _draw(self) -> None:
        with self._lock:
            if self._done.is_set():
                return
            self.shown = True
            if self._bar is not None:
                self._bar.set_description_str(self._label(), refresh=False)
                self._bar.refresh()
                return
            line = f"{self._label()} {self.elapsed():.1f} s"
            pad = " " * max(0, self._width - len(line))
            self._width = len(line)
            self._stream.write("\r" + line + pad)
            self._stream.flush()

    def _run(self) -> None:
        if self._done.wait(self._delay):
            return
        if self._tqdm is not None:
            tqdm = self._tqdm
            with self._lock:
                if self._done.is_set():
                    return
                self.shown = True  # tqdm draws the bar as it is made
                self._bar = tqdm(total=None, desc=self._label(), file=self._stream,
                                 bar_format="{desc} {elapsed}", leave=False,
                                 dynamic_ncols=True)
        while not self._done.is_set():
            self._draw()
            self._done.wait(self._interval)

    def finish(self, failed: bool = False) -> None:
        """Stop redrawing; if the line was shown, leave one final line."""
        with self._lock:
            self._done.set()
        ACTIVE.discard(self)
        if self._thread is not None:
            self._thread.join()
        if not self.shown:
            return
        if self._bar is not None:
            self._bar.close()
        end = "failed after" if failed else "done in"
        line = f"pyflame: {self.what} {end} {self.elapsed():.1f} s"
        pad = " " * max(0, self._width - len(line))
        self._stream.write("\r" + line + pad + "\n")
        self._stream.flush()


ACTIVE: set[Progress] = set()  # lines being drawn now (logging_util blanks them to write)


@contextmanager
def lines_cleared(stream: TextIO) -> Iterator[None]:
    """Blank every progress line on ``stream`` and keep them blank (their drawing
    threads wait) while the caller writes there, e.g. a log record."""
    held = [p for p in list(ACTIVE) if p._stream is stream]
    for p in held:
        p._lock.acquire()
    try:
        for p in held:
            p._clear_locked()
        yield
    finally:
        for p in reversed(held):
            p._lock.release()


class _Silent:
    """What ``progress`` yields when no line can be shown: nothing to start or draw."""

    def stage(self, name: str) -> None:
        pass


@contextmanager
def progress(what: str, stage: str = "", stream: TextIO | None = None,
             delay: float | None = None) -> Iterator[Progress | _Silent]:
    """A ``Progress`` for the duration of the ``with`` block (on a stream
    that shows none, a stand-in that costs nothing: no thread, no lock)."""
    out = stream if stream is not None else sys.stderr
    if not enabled(out):
        yield _Silent()
        return
    p = Progress(what, stage, out, delay).start()
    try:
        yield p
    except BaseException:
        p.finish(failed=True)
        raise
    p.finish()
