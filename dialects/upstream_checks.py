"""Checks upstream MLIR's verifiers make and xDSL's (0.74) do not, on the
upstream ops ``pyflame-opt`` and ``pf.load_mlir`` read: without them a
``tensor.extract_slice`` running out of its source, or a ``collapse_shape``
whose groups do not multiply to the result, was accepted (mlir-opt rejects
both) and ``load_mlir`` turned it into a wrong ``reshape``/``slice``.
``upstream_error(op)`` gives mlir-opt's message, or None."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

__all__ = ["upstream_error"]


def _static(t: object) -> tuple[int, ...] | None:
    if not isinstance(t, TensorType):
        return None
    shape = tuple(t.get_shape())
    return None if any(d < 0 for d in shape) else shape


def _reassociation(op: Operation) -> list[list[int]]:
    return [[int(getattr(i, "data", getattr(getattr(i, "value", None), "data", i)))
             for i in group] for group in op.properties["reassociation"]]  # type: ignore[union-attr]


def _reshape_error(op: Operation, collapsed: tuple[int, ...], expanded: tuple[int, ...],
                   groups: list[list[int]]) -> str | None:
    if len(groups) != len(collapsed) or sorted(i for g in groups for i in g) != list(
            range(len(expanded))):
        return (f"'{op.name}' op reassociation {groups} does not group the {len(expanded)} "
                f"dimensions of the expanded type into the {len(collapsed)} of the collapsed "
                "type")
    for i, g in enumerate(groups):
        want = math.prod(expanded[j] for j in g)
        if collapsed[i] != want:
            return (f"'{op.name}' op expected dimension {i} of collapsed type to be static "
                    f"value of {want}")
    return None


def upstream_error(op: Operation) -> str | None:
    """mlir-opt's verifier message for ``op`` where xDSL's verifier is silent."""
    if op.name in ("tensor.collapse_shape", "tensor.expand_shape"):
        src, res = _static(op.operands[0].type), _static(op.results[0].type)
        if src is None or res is None:
            return None
        collapsed, expanded = (res, src) if op.name == "tensor.collapse_shape" else (src, res)
        return _reshape_error(op, collapsed, expanded, _reassociation(op))
    if op.name == "linalg.fill" and len(op.operands) == 2:
        value, out = op.operands[0].type, op.operands[1].type
        el = out.get_element_type() if isinstance(out, TensorType) else out
        if value != el:
            return (f"'{op.name}' op expected fill value type ('{value}') to match output "
                    f"element type ('{el}')")
    if op.name == "tensor.extract_slice" and not op.operands[1:]:
        src = _static(op.operands[0].type)
        if src is None:
            return None
        offsets = op.properties["static_offsets"].get_values()  # type: ignore[union-attr]
        sizes = op.properties["static_sizes"].get_values()  # type: ignore[union-attr]
        strides = op.properties["static_strides"].get_values()  # type: ignore[union-attr]
        for dim, (o, n, st, d) in enumerate(zip(offsets, sizes, strides, src)):
            if o < 0 or n < 0 or st < 1:
                return (f"'{op.name}' op offsets, sizes and strides must be non-negative "
                        f"(strides positive), got {o}, {n}, {st} along dimension {dim}")
            last = o + (n - 1) * st if n else o - 1  # the last index read
            if last >= d:
                return (f"'{op.name}' op slice along dimension {dim} runs out-of-bounds: "
                        f"{last} >= {d}")
    return None
