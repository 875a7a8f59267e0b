"""The pipeline manager: named pipelines, fixed-point iteration, statistics.

``fixed-point{pipeline="cse,constant-fold,algebraic-simplify,dce" max-iterations=8}``
runs its inner pipeline again and again until one round changes nothing
(every pass reports its changes) or ``max-iterations`` rounds have run. Each
pass costs time linear in the module, so the whole pipeline does too.

``run_pipeline(module, spec)`` runs a pipeline and returns its
``PipelineStatistics`` (ops before/after, time and counters per pass); the
compile driver puts them in ``pf.compile_graph(...)``'s report and
``pyflame-opt --pass-statistics`` prints them.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException

from .common import PipelineStatistics, PyflamePass, collecting, nested, run_pass


class PipelineError(DiagnosticException):
    pass


@functools.lru_cache(maxsize=64)
def parse_pipeline(spec: str) -> PassPipeline:
    """The passes of ``spec`` (a named pipeline or a pass list), parsed once."""
    from . import PASSES, PIPELINES

    try:
        return PassPipeline.parse_spec(PASSES, PIPELINES.get(spec, spec))
    except (Exception, ArgSpecParseError) as e:  # unknown pass, bad option, bad syntax
        raise PipelineError(f"bad pipeline {spec!r}: {e}") from None


def resolve(spec: str | None) -> str:
    """A named pipeline's pass list; a pass list as it is (checked)."""
    from . import PIPELINES

    if not spec:
        return ""
    text = PIPELINES.get(spec, spec)
    parse_pipeline(text)
    return text


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector. IR objects are cyclic (parents,
    use lists), so a big module makes every collection walk it again: with the
    collector on, compile time grows faster than the module."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def run_pipeline(module: ModuleOp, spec: str, ctx: Context,
                 stats: PipelineStatistics | None = None) -> PipelineStatistics:
    """Run ``spec`` on ``module``, collecting per-pass statistics."""
    with gc_paused(), collecting(stats) as collected:
        if spec:
            for p in parse_pipeline(spec).passes:
                run_pass(p, ctx, module)
    return collected


@dataclass(frozen=True)
class FixedPoint(PyflamePass):
    """Run a pipeline until it changes nothing (or max-iterations rounds)."""

    # a loop over whole passes, not xDSL's pattern walker: the passes it runs
    # are module sweeps of their own, and their change counters decide the stop

    name = "fixed-point"

    pipeline: str = "cse,constant-fold,algebraic-simplify,dce"
    """The passes of one round."""

    max_iterations: int = 8
    """At most this many rounds."""

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        passes = parse_pipeline(self.pipeline).passes
        rounds = 0
        changes = 1
        with nested(self.name):
            while changes and rounds < self.max_iterations:
                changes = sum(run_pass(p, ctx, module) for p in passes)
                rounds += 1
        # counters count changes: a round that changed nothing is not one
        return {"rounds_that_changed": rounds - (0 if changes else 1),
                "stopped_at_max_iterations": int(bool(changes))}
