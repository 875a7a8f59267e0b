"""Elementwise ops: unary math, binary arithmetic with numpy broadcasting,
comparisons, logical ops, ``where`` and ``convert``.

In the IR, operands of a binary op share one element type: the frontend has
already applied PyTorch's type promotion and inserted ``convert`` ops, so
backends never guess. Broadcasting stays implicit (numpy rules).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from .dtypes import BOOL, FLOAT, DType, bool_
from .opdef import OpDef, Shape, ShapeError, broadcast_shapes, define, same_dtype

_SQRT_HALF = 1.0 / math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_erf_object = np.frompyfunc(math.erf, 1, 1)


def _compute_dtype(x: np.ndarray) -> np.dtype:
    """Half-precision math is computed in float32 and rounded once (as PyTorch's CPU does)."""
    return np.dtype(np.float32) if x.dtype.itemsize < 4 else x.dtype


def _erf(x: np.ndarray) -> np.ndarray:
    # numpy has no erf; math.erf is correctly rounded in double precision.
    wide = np.asarray(x, dtype=np.float64)
    return np.asarray(_erf_object(wide), dtype=np.float64).astype(x.dtype, copy=False)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # exp(-|x|) never overflows; both branches are accurate in the tails.
    xc = x.astype(_compute_dtype(x), copy=False)
    e = np.exp(-np.abs(xc))
    r = np.where(xc >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return r.astype(x.dtype, copy=False)


def _gelu(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    xc = x.astype(_compute_dtype(x), copy=False)
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (xc + 0.044715 * xc * xc * xc)
        r = 0.5 * xc * (1.0 + np.tanh(inner))
    else:
        r = 0.5 * xc * (1.0 + _erf(xc * _SQRT_HALF))
    return r.astype(x.dtype, copy=False)


def _rsqrt(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    r = np.sqrt(x, out=out)
    return np.divide(1, r, out=r)


def _relu(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    return np.maximum(x, x.dtype.type(0), out=out)


def _reciprocal(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    return np.divide(x.dtype.type(1), x, out=out)


def _sign(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    return np.sign(x, out=out)


def _convert(x: np.ndarray, dtype: DType) -> np.ndarray:
    return x.astype(dtype.np)


# ---- rules ----

def _unary_rule(kind: str) -> Callable:
    """kind: 'float' (floating only), 'numeric' (not bool), 'any', 'to_bool'."""
    def infer(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
        (s,), (d,) = shapes, dtypes
        if kind == "float" and d.category != FLOAT:
            raise ShapeError(infer.op, f"expects a floating-point operand, got {d.name} "
                                       "(convert it first)")
        if kind == "numeric" and d.category == BOOL:
            raise ShapeError(infer.op, "is not defined on bool tensors")
        return ((s, bool_ if kind == "to_bool" else d),)
    return infer


def _binary_rule(kind: str) -> Callable:
    """kind: 'arith' (bool allowed), 'numeric' (no bool), 'float', 'compare', 'logical'."""
    def infer(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
        op = infer.op
        shape = broadcast_shapes(op, shapes)
        if kind == "logical":
            return ((shape, bool_),)
        d = same_dtype(op, dtypes)
        if kind == "numeric" and d.category == BOOL:
            raise ShapeError(op, "is not defined on bool tensors")
        if kind == "float" and d.category != FLOAT:
            raise ShapeError(op, f"expects floating-point operands, got {d.name}")
        return ((shape, bool_ if kind == "compare" else d),)
    return infer


def _where_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    if dtypes[0] is not bool_:
        raise ShapeError("where", f"condition must be bool, got {dtypes[0].name}")
    d = same_dtype("where", dtypes[1:])
    return ((broadcast_shapes("where", shapes), d),)


def _convert_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    return ((shapes[0], attrs["dtype"]),)


def _define(name: str, infer: Callable, kernel: Callable, n: int, ufunc: bool,
            attrs: dict | None = None, doc: str = "") -> OpDef:
    infer.op = name  # type: ignore[attr-defined]
    return define(OpDef(name, "elementwise", infer, kernel, n, attrs or {}, ufunc=ufunc,
                        elementwise=True, doc=doc))


# name: (rule kind, kernel, kernel accepts out=)
UNARY: dict[str, tuple[str, Callable, bool]] = {
    "neg": ("numeric", np.negative, True),
    "abs": ("numeric", np.abs, True),
    "sign": ("numeric", _sign, True),
    "square": ("numeric", np.square, True),
    "relu": ("numeric", _relu, True),
    "exp": ("float", np.exp, True),
    "log": ("float", np.log, True),
    "sqrt": ("float", np.sqrt, True),
    "rsqrt": ("float", _rsqrt, True),
    "sin": ("float", np.sin, True),
    "cos": ("float", np.cos, True),
    "tanh": ("float", np.tanh, True),
    "reciprocal": ("float", _reciprocal, True),
    "sigmoid": ("float", _sigmoid, False),
    "erf": ("float", _erf, False),
    "logical_not": ("to_bool", np.logical_not, True),
}
BINARY: dict[str, tuple[str, Callable]] = {
    "add": ("arith", np.add),
    "mul": ("arith", np.multiply),
    "maximum": ("arith", np.maximum),
    "minimum": ("arith", np.minimum),
    "sub": ("numeric", np.subtract),
    "pow": ("numeric", np.power),
    "div": ("float", np.true_divide),
    "eq": ("compare", np.equal),
    "ne": ("compare", np.not_equal),
    "lt": ("compare", np.less),
    "le": ("compare", np.less_equal),
    "gt": ("compare", np.greater),
    "ge": ("compare", np.greater_equal),
    "logical_and": ("logical", np.logical_and),
    "logical_or": ("logical", np.logical_or),
}

for _name, (_kind, _kernel, _uf) in UNARY.items():
    _define(_name, _unary_rule(_kind), _kernel, 1, _uf)


def _gelu_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    if attrs["approximate"] not in ("none", "tanh"):
        raise ShapeError("gelu", f"approximate must be 'none' or 'tanh', "
                                 f"got {attrs['approximate']!r}")
    return _float_unary(shapes, dtypes, attrs)


_float_unary = _unary_rule("float")
_float_unary.op = "gelu"  # type: ignore[attr-defined]
_define("gelu", _gelu_rule, _gelu, 1, False, {"approximate": "str"},
        doc="GELU; approximate is 'none' (erf form) or 'tanh'")
for _name, (_kind, _kernel) in BINARY.items():
    _define(_name, _binary_rule(_kind), _kernel, 2, True)
_define("where", _where_rule, np.where, 3, False, doc="select(cond, x, y)")
_define("convert", _convert_rule, _convert, 1, False, {"dtype": "dtype"},
        doc="element type conversion (astype)")
