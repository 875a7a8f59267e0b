"""The ``pyflame_mlir`` logger and its ``PYFLAME_LOG`` switch.

Library code never prints: it logs through ``logging`` under the
``pyflame_mlir`` logger (``logging.getLogger("pyflame_mlir.<module>")``), so
an application routes our records with its own logging configuration. What
is logged, and at which level:

* INFO: every compile (structural key, backend, milliseconds, whether the
  executable was compiled or loaded from the backend's disk cache), disk
  cache writes and least-recently-used evictions;
* DEBUG: in-memory cache hits, the pass statistics of every compile;
* WARNING: a corrupted or outdated disk-cache entry that is removed and
  rebuilt, a cache that cannot be written.

``PYFLAME_LOG=debug|info|warning|error`` (read at ``import pyflame_mlir``, or
by ``configure()``) attaches a stderr handler to the ``pyflame_mlir`` logger
at that level; unset, nothing is attached and Python's defaults apply (an
unconfigured program still sees WARNING records on stderr).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TextIO

PROGRESS_MODULE = "pyflame_mlir.runtime.progress"

LOGGER_NAME = "pyflame_mlir"
ENV = "PYFLAME_LOG"
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
          "error": logging.ERROR}
FORMAT = "pyflame %(levelname)s %(name)s: %(message)s"

_handler: logging.Handler | None = None


class _Handler(logging.StreamHandler):
    """A stderr handler that blanks a progress line before writing a record
    (the line is redrawn under it), so the two never share a row."""

    def emit(self, record: logging.LogRecord) -> None:
        # looked up, not imported: `import pyflame_mlir` loads no runtime module,
        # and no line can be active if the progress module never loaded
        progress = sys.modules.get(PROGRESS_MODULE)
        if progress is None:
            super().emit(record)
            return
        with progress.lines_cleared(self.stream):  # no redraw between blanking and writing
            super().emit(record)


def configure(level: str | None = None, stream: TextIO | None = None) -> logging.Logger:
    """Send the ``pyflame_mlir`` records at ``level`` and above to ``stream``
    (stderr); ``level`` defaults to ``PYFLAME_LOG``, and with neither set
    the logger is left as it is. Calling it again replaces the handler."""
    global _handler
    logger = logging.getLogger(LOGGER_NAME)
    name = (level if level is not None else os.environ.get(ENV, "")).strip().lower()
    if not name:
        return logger
    if name not in LEVELS:
        raise ValueError(f"{ENV}={name!r}: expected one of {', '.join(LEVELS)}")
    if _handler is not None:
        logger.removeHandler(_handler)
    _handler = _Handler(stream if stream is not None else sys.stderr)
    _handler.setFormatter(logging.Formatter(FORMAT))
    logger.addHandler(_handler)
    logger.setLevel(LEVELS[name])
    logger.propagate = False  # one copy of each record even when the root logs too
    return logger
