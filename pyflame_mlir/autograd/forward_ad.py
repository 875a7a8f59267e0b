"""``pf.autograd.forward_ad``: PyTorch's ``torch.autograd.forward_ad``
(``dual_level``, ``make_dual``, ``unpack_dual``) on the forward mode of the
functional transforms (``pf.jvp``'s ``_Forward``).

A dual tensor is an alias (a no-op reshape) of its primal, registered with its
tangent for the level. The graph is recorded as always; ``unpack_dual(t)``
traces ``t``'s history back to the dual tensors it was computed from (through
ops, modules, in-place updates, no_grad blocks and the ``jvp`` of
``pf.autograd.Function``s; not through ``detach()``, ``.data`` or a primal
view) and records the jvp of that function for their tangents. While the level
is open histories are kept (it traces, as a transform does), so a value looked
at in the middle does not cut a tangent. As in torch: one level at a time, the
tangent must have the primal's shape, both floating point; a tensor that has a
tangent cannot be made dual again. Differs: the tangent is converted to the
primal's dtype (torch keeps a float64 tangent of a float32 primal)."""

from __future__ import annotations

from typing import Any, NamedTuple

from ..autodiff import (
    FORWARD_DUALS,
    JVP_OP,
    VJP_OP,
    CustomNode,
    _Forward,
    _seed_like,
    _stopped_forward,
    tracing,
)
from ..core import OpNode, Tensor, inputs_as_read, record, source
from ..dialects import OPS

_ALIAS = OPS["reshape"]


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: ``primal`` (a view without a tangent)
    and ``tangent`` (None when the tensor has none)."""

    primal: Tensor
    tangent: Tensor | None


class _Level:
    def __init__(self) -> None:
        self.trace = tracing()
        # per dual tensor's alias node: (the node, kept alive; its tangent)
        self.duals = FORWARD_DUALS
        self.primals: dict[int, OpNode] = {}  # unpack_dual's views: no tangent


_LEVEL: list[_Level | None] = [None]


def enter_dual_level() -> int:
    """Open the forward-AD level (``dual_level`` is the context manager)."""
    if _LEVEL[0] is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    level = _Level()
    level.trace.__enter__()
    _LEVEL[0] = level
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the level: the tangents are gone (``unpack_dual`` gives None)."""
    cur = _LEVEL[0]
    if cur is None or level not in (None, 0):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one "
                           "that was created. This is not supported.")
    _LEVEL[0] = None
    FORWARD_DUALS.clear()
    cur.trace.__exit__(None, None, None)


class dual_level:  # noqa: N801  (torch's name)
    """``with dual_level():`` the scope in which dual tensors have tangents."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()


def _check_level(level: int | None, what: str) -> _Level:
    cur = _LEVEL[0]
    if cur is None:
        raise RuntimeError(f"Trying to {what} for forward AD but no level exists, make sure "
                           "to enter_dual_level() first.")
    if level not in (None, 0):
        raise RuntimeError(f"forward AD level {level} does not exist (the one open is 0)")
    return cur


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` whose tangent is ``tangent`` (gradients still flow
    back to ``tensor``, as torch's)."""
    cur = _check_level(level, "create a dual Tensor")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual: the primal and the tangent must be tensors")
    if not tensor.dtype.is_floating_point:
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype.name}")
    if not tangent.dtype.is_floating_point:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype.name}")
    if tangent.shape != tensor.shape:
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                           f"that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    if _dual_states(cur, [tensor]):
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           "gradient at the same level 0 is not supported.")
    dual = record(_ALIAS, (tensor,), {"shape": tensor.shape})
    node = source(dual)
    assert node is not None
    cur.duals[id(node)] = (node, _seed_like(dual, tangent))
    return dual


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor``: the tangent its dual inputs give
    it (None without any, or outside a level), and a view of it without one."""
    cur = _LEVEL[0]
    if not isinstance(tensor, Tensor) or cur is None or level not in (None, 0):
        return UnpackedDualTensor(tensor, None)
    tangent = _tangent(cur, tensor)
    primal = record(_ALIAS, (tensor,), {"shape": tensor.shape})
    node = source(primal)
    if node is not None:
        cur.primals[id(node)] = node
    return UnpackedDualTensor(primal, tangent)


def _is_dual(cur: _Level, t: Tensor) -> bool:
    n = source(t)
    return n is not None and id(n) in cur.duals


def _stopped(cur: _Level) -> Any:
    """Where a tangent does not come from: ``_stopped_forward`` (detached
    tensors, leaves; a Function's output goes on through its jvp) and
    ``unpack_dual``'s primal views."""
    def stopped(t: Tensor) -> bool:
        n = source(t)
        return _stopped_forward(t) or (n is not None and id(n) in cur.primals)
    return stopped


def _dual_states(cur: _Level, outs: list[Tensor]) -> list[Tensor]:
    """The tensors (states of dual tensors) ``outs`` are computed from, through
    what a tangent flows through (a Function's inputs included)."""
    stopped = _stopped(cur)
    found: dict[int, Tensor] = {}
    seen: set[int] = set()
    todo = list(outs)
    while todo:
        t = todo.pop()
        ag = t._ag
        if ag is not None and ag.detached:
            continue  # (a detached alias of a dual shares its node)
        if _is_dual(cur, t):
            found[id(t)] = t
            continue
        n = source(t)
        if n is None or id(n) in seen:
            continue
        if n.op is VJP_OP or n.op is JVP_OP:
            nodes = n.attrs["fn"].sub.nodes  # a dual computed inside, and read there
            inside = {id(m) for m in nodes if id(m) in cur.duals}
            if inside and any(id(source(x)) in inside for m in nodes for x in m.inputs
                              if isinstance(x, Tensor) and source(x) is not None):
                raise NotImplementedError(
                    "forward_ad: a dual tensor made inside a function a transform (grad, "
                    "vjp, jvp, jacrev...) traced: its tangent through the transform is not "
                    "supported; make the dual tensor outside the transformed function")
        if type(n) is CustomNode:
            seen.add(id(n))
            todo += [x for x in n.ctx.inputs if isinstance(x, Tensor)]
            continue
        if stopped(t):
            continue
        seen.add(id(n))
        todo += inputs_as_read(n)
    return list(found.values())


def _tangent(cur: _Level, t: Tensor) -> Tensor | None:
    if not t.dtype.is_floating_point:
        return None  # (torch: an integer or bool result has no tangent)
    states = _dual_states(cur, [t])
    if not states:
        return None
    forward = _Forward(states, [t], -1, _stopped(cur))
    return forward.run([cur.duals[id(source(s))][1] for s in states])[0]


__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]
