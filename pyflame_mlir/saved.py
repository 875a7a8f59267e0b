"""What PyTorch's backward would read of a recorded op, for autograd's version
check (``autodiff._check_versions``): PyTorch raises when a tensor an op saved
for backward (``derivatives.yaml``: ``self``, ``result``) was modified in place
since. This library keeps every older state, so its gradients stay right; the
check is there to give PyTorch's errors, no more and no fewer.

Two records, both kept only while the tensors they name are alive:

- ``superseded``: an op's result (``old``, the state an in-place update of
  ``t`` replaced): if torch saves that op's result (``ad.SAVES_RESULTS``),
  a backward through the op raises (``y = x.exp(); y.add_(1)``).
- ``composite``: the ops a function recorded for one torch op (``tan`` is
  ``sin / cos`` here, ``exp2`` a ``pow``): their own reads are not checked;
  what torch's op saves (its arguments, its result) is, as one op."""

from __future__ import annotations

import sys
import weakref
from collections.abc import Sequence

from .core import GRAD_MODE, OpNode, Tensor, _next_seq, inputs_as_read, source
from .dialects import ad

# id(old state) -> (old, the tensor updated in place, its version after the update,
# the creation order of the op that made old)
_SUPERSEDED: dict[int, tuple[weakref.ref, weakref.ref, int, int]] = {}


def note_superseded(t: Tensor, old: Tensor) -> None:
    """An in-place update of ``t`` replaced its state ``old`` (call after
    ``core.rebind``): remembered while ``old`` is alive, if an op that PyTorch
    saves the result of made it, or it holds such a result written into a view
    of ``t`` (``t[0].exp_()``: the view's version counter is ``t``'s)."""
    n = source(old)
    if n is None:
        return
    e = _EMBEDDED.get(id(n))
    if e is not None and e[1] == n.seq:
        inner = e[0]()
        if inner is not None:
            _note(t, inner)
    if n.op in ad.SAVES_RESULTS or composite_of(n) is not None:
        _note(t, old)


def _note(t: Tensor, old: Tensor) -> None:
    k = id(old)

    def drop(_: weakref.ref, k: int = k) -> None:
        _SUPERSEDED.pop(k, None)
    _SUPERSEDED[k] = (weakref.ref(old, drop), weakref.ref(t), t._version, source(old).seq)


# id(the op that wrote a view's new state into its root) -> (that state, the op's seq)
_EMBEDDED: dict[int, tuple[weakref.ref, int]] = {}


def note_written_into(root: Tensor, value: Tensor) -> None:
    """An in-place update of a view gave it the state ``value`` and wrote it
    into ``root`` (call after ``core.rebind``): if torch saves the op result
    ``value`` is, it counts as modified when ``root``'s state is replaced."""
    n, m = source(value), source(root)
    if n is None or m is None or (n.op not in ad.SAVES_RESULTS and composite_of(n) is None):
        return
    k = id(m)

    def drop(_: weakref.ref, k: int = k) -> None:
        _EMBEDDED.pop(k, None)
    _EMBEDDED[k] = (weakref.ref(value, drop), m.seq)


def tracked() -> bool:
    """Some composite or view-written result is recorded (``note_superseded``
    has more to look at than the op of the replaced state)."""
    return bool(_COMPOSITES) or bool(_EMBEDDED)


def has_superseded() -> bool:
    return bool(_SUPERSEDED)


def superseded(s: Tensor) -> tuple[int, bool] | None:
    """If the state ``s`` was replaced by an in-place update: the updated
    tensor's version now, and whether that update went through ``.data``
    (which PyTorch does not count); else None."""
    e = _SUPERSEDED.get(id(s))
    if e is None or e[0]() is not s:
        return None
    n = source(s)  # (``t`` itself when its version alone moved on: the same op's state)
    if n is None or n.seq != e[3]:
        return None
    t = e[1]()
    if t is None:
        return e[2], False
    m = t._mut
    while m is not None:
        prev = m.ref()
        if prev is s:
            return t._version, m.untracked
        m = None if prev is None else prev._mut
    return t._version, False


class Composite:
    """The ops one call of a composite function recorded (``nodes``: their
    ids), what torch's op saves of its arguments (``saved``), whether it
    saves its result, and its name (``op``) for the error message."""

    __slots__ = ("node", "nodes", "saved", "result", "op")

    def __init__(self, node: OpNode, nodes: frozenset[int], saved: tuple[Tensor, ...],
                 result: bool, op: str):
        self.node, self.nodes, self.saved, self.result, self.op = \
            node, nodes, saved, result, op


# id(the composite's last node) -> its record, while a tensor holds that node (its
# result, or the tensor an in-place update gave it to): records no tensor reaches
# are dropped whenever the table has doubled (``_prune``)
_COMPOSITES: dict[int, Composite] = {}
_PRUNE_AT = [1024]


def _prune() -> None:
    """Drop the records whose last op only the record itself holds (no tensor
    made by it is alive: no graph can reach it)."""
    for k, rec in list(_COMPOSITES.items()):
        if sys.getrefcount(rec.node) <= 2:  # (the record's own and getrefcount's)
            del _COMPOSITES[k]
    _PRUNE_AT[0] = max(1024, 2 * len(_COMPOSITES))


def start() -> int:
    """A creation order before the ops a composite function records next
    (``composite``'s ``first``)."""
    return _next_seq()


def composite(out: Tensor, first: int, saved: Sequence[Tensor] = (), result: bool = False,
              op: str = "") -> Tensor:
    """Mark the ops recorded since ``first`` (``start()``) that computed
    ``out`` (a composite function's one call) as one torch op that saves
    ``saved`` (some of its arguments) and, if ``result``, ``out``. Returns ``out``."""
    last = source(out)
    if last is None or not last.inputs or last.seq < first or last.nograd or \
            not (last.rg or GRAD_MODE.trace_depth):
        return out  # (no backward goes through it: under no_grad, or nothing requires grad)
    nodes: set[int] = set()
    todo = [last]
    while todo:
        n = todo.pop()
        if id(n) in nodes or not n.inputs:
            continue
        nodes.add(id(n))
        for x in inputs_as_read(n):
            m = source(x)
            if m is not None and m.seq > first and id(m) not in nodes:
                todo.append(m)
    _COMPOSITES[id(last)] = Composite(last, frozenset(nodes), tuple(saved), result, op)
    if len(_COMPOSITES) > _PRUNE_AT[0]:
        _prune()
    return out


def has_composites() -> bool:
    return bool(_COMPOSITES)


def composite_of(n: OpNode) -> Composite | None:
    """The composite record whose last op is ``n``."""
    c = _COMPOSITES.get(id(n))
    return c if c is not None and c.node is n else None
