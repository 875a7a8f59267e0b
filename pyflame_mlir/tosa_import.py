"""``tosa`` ops, as ``pf.load_mlir`` runs them: ``pyflame`` ops.

The TOSA ops xDSL 0.74 parses, as ``mlir-opt`` accepts them: ``tosa.const``,
``add``/``sub`` (equal ranks, unit dimensions broadcast: the pyflame ops'
rule), ``mul`` with a zero ``shift``, ``sin``/``cos``/``reciprocal``,
``matmul`` of batched ``[N, H, C] x [N, C, W]`` with zero points 0,
``clamp`` and ``reduce_max``/``reduce_min`` propagating NaN (TOSA's default
``nan_mode``), ``reduce_sum``/``reduce_product``/``reduce_all``/``reduce_any``
(the reduced axis kept as 1) and ``concat``. Anything else of ``tosa``
(``rescale``, pooling, ``cond_if``, a non-zero shift or zero point, the
``IGNORE`` NaN mode) is refused (``TosaError``, located by the caller).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["TosaError", "legalize_tosa"]


class TosaError(ValueError):
    def __init__(self, op: Any, message: str):
        super().__init__(message)
        self.op = op
        self.reason = message


_SAME = {"tosa.add": "add", "tosa.sub": "sub", "tosa.sin": "sin", "tosa.cos": "cos",
         "tosa.reciprocal": "reciprocal"}
_REDUCE = {"tosa.reduce_sum": "sum", "tosa.reduce_product": "prod", "tosa.reduce_max": "max",
           "tosa.reduce_min": "min", "tosa.reduce_all": "min", "tosa.reduce_any": "max"}


def _zero(v: Any, what: str, op: Any) -> None:
    from .passes.common import constant_array

    arr = constant_array(v)
    if arr is None or np.any(arr):
        raise TosaError(op, f"with a {what} that is not a constant 0 is not supported")


def _nan_mode(op: Any) -> None:
    mode = op.properties.get("nan_mode") or op.attributes.get("nan_mode")
    if mode is not None and "PROPAGATE" not in str(mode):
        raise TosaError(op, f"with nan_mode {mode} is not supported (only PROPAGATE, "
                            "which the pyflame ops follow)")


def _rule(b: Any, op: Any) -> Any:
    from .dialects.pyflame import spec_of_type

    name = op.name
    if name == "tosa.const":
        from .dialects.pyflame import OP_CLASSES

        new = OP_CLASSES["constant"].create(attributes={"value": op.properties["values"]},
                                            result_types=[op.results[0].type])
        b.emit(new)
        return new.results[0]
    if name in _SAME:
        return b.op(_SAME[name], *op.operands)
    if name == "tosa.mul":
        x, y, shift = op.operands
        _zero(shift, "shift", op)
        return b.mul(x, y)
    if name == "tosa.matmul":
        a, c, a_zp, c_zp = op.operands
        _zero(a_zp, "zero point", op)
        _zero(c_zp, "zero point", op)
        return b.matmul(a, c)
    if name == "tosa.clamp":
        _nan_mode(op)
        x = op.operands[0]
        d = b.dtype(x)
        lo, hi = (op.properties[k].value.data for k in ("min_val", "max_val"))
        bound = [b.op("constant", value=_scalar(v, d)) for v in (lo, hi)]
        return b.minimum(b.maximum(x, bound[0]), bound[1])
    if name in _REDUCE:
        if name in ("tosa.reduce_max", "tosa.reduce_min"):
            _nan_mode(op)
        x = op.operands[0]
        axis = op.properties["axis"].value.data
        rank = len(spec_of_type(x.type, "operand")[0])
        if not 0 <= axis < rank:
            raise TosaError(op, f"axis {axis} is out of range for rank {rank}")
        kind = _REDUCE[name]
        attrs: dict[str, Any] = {"dims": (axis,), "keepdim": True}
        if kind in ("max", "min"):
            attrs["ties"] = None
        r = b.op(kind, x, **attrs)
        return r if b.dtype(r) is b.dtype(x) else b.convert(r, dtype=b.dtype(x))
    if name == "tosa.concat":
        return b.concat(*op.operands, dim=op.properties["axis"].value.data)
    raise TosaError(op, "is not supported by load_mlir (no pyflame op computes it)")


def _scalar(v: float | int, d: Any) -> Any:
    from .dialects.data import DenseValue

    return DenseValue(np.asarray(v).astype(d.np).reshape(()), (), d)


def legalize_tosa(module: Any) -> None:
    """Replace every ``tosa`` op of ``module`` by pyflame ops, in program order."""
    from xdsl.utils.exceptions import VerifyException

    from .dialects.opdef import ShapeError
    from .passes.common import IRBuilder

    for op in [op for op in module.walk() if op.dialect_name() == "tosa"]:
        if len(op.results) != 1 or op.regions:
            raise TosaError(op, "is not supported by load_mlir (no pyflame op computes it)")
        new: list[Any] = []
        b = IRBuilder(new.append)
        try:
            value = _rule(b, op)
        except (ShapeError, VerifyException) as e:
            raise TosaError(op, f"cannot be converted: {e}") from None
        if value.type != op.results[0].type:
            raise TosaError(op, f"declares the result type {op.results[0].type}, but its "
                                f"operands give {value.type}")
        for n in new:
            n.location = op.location
            op.parent.insert_op_before(n, op)
        op.results[0].replace_all_uses_with(value)
        op.parent.erase_op(op)
