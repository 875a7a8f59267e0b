"""Autodiff rule tables, keyed by the op's ``OpDef`` (JAX's ``ad.py`` in
miniature): rules are registered by name, and a name the op table does not
know fails at import.

Rules are written against a small builder interface, so the same rule can
emit IR (``passes/autodiff.py``) or anything else that implements it:

    b.op(name, *values, **attrs) -> value | list[value]   (record/emit one op)
    b.shape(v), b.dtype(v)                                 (static metadata)
    b.<opname>(*values, **attrs)                           (sugar for b.op)
    b.scalar(number, like=v)                               (0-d constant of v's dtype)

A VJP rule maps output cotangents to input cotangents; a JVP rule maps input
tangents to output tangents. ``None`` stands for a zero (co)tangent. Ops
whose outputs are not floating point (comparisons, argmax, iota...) carry no
(co)tangents and need no rule: they are listed in ``NONDIFF`` so that a
missing rule is an error rather than a silent zero.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .opdef import OpDef, get_op

Value = Any
Builder = Any
VjpRule = Callable[..., "list[Value | None]"]
JvpRule = Callable[..., "list[Value | None]"]

# vjp(b, cts, inputs, outputs, **attrs) -> one cotangent (or None) per input
VJP: dict[OpDef, VjpRule] = {}
# jvp(b, tangents, inputs, outputs, **attrs) -> one tangent (or None) per output
JVP: dict[OpDef, JvpRule] = {}
# ops with no derivative at all (integer/bool outputs, or data without inputs)
NONDIFF: set[OpDef] = set()


def defvjp(name: str, rule: VjpRule) -> None:
    opdef = get_op(name)
    assert opdef not in VJP, name
    VJP[opdef] = rule


def defjvp(name: str, rule: JvpRule) -> None:
    opdef = get_op(name)
    assert opdef not in JVP, name
    JVP[opdef] = rule


def nondiff(*names: str) -> None:
    NONDIFF.update(get_op(n) for n in names)


# ops whose VJP reads no input value (only shapes, and integer indices that
# carry no gradient), or whose PyTorch backward saves none of their inputs
# (its ``derivatives.yaml`` reads only results: a cholesky's L): modifying an
# input in place after them is no error in PyTorch, so autograd's version
# check does not count their reads (PyTorch: ``y[i] += v`` after ``y[i]`` read
# ``y``; the states an op read are kept here, so its gradient stays right)
READS_NO_INPUT_VALUES: set[OpDef] = set()


def reads_no_input_values(*names: str) -> None:
    READS_NO_INPUT_VALUES.update(get_op(n) for n in names)


# ops whose results PyTorch saves for backward (its ``derivatives.yaml`` reads
# ``result``), by output index: an in-place update of one of those outputs
# makes a backward through the op raise, as PyTorch's (``y = x.exp();
# y.add_(1)``); the version check (autodiff) reads this table
SAVES_RESULTS: dict[OpDef, tuple[int, ...]] = {}


def saves_results(*names: str, outputs: tuple[int, ...] = (0,)) -> None:
    for n in names:
        SAVES_RESULTS[get_op(n)] = outputs


def defderiv(name: str, deriv: Callable[..., Value]) -> None:
    """Elementwise unary op with derivative ``deriv(b, x, z, **attrs) = dz/dx``:
    the VJP multiplies the cotangent by it, the JVP the tangent."""
    def vjp(b: Builder, cts, inputs, outputs, **attrs):
        (g,), (x,), (z,) = cts, inputs, outputs
        return [b.mul(g, deriv(b, x, z, **attrs))]

    def jvp(b: Builder, tangents, inputs, outputs, **attrs):
        (t,), (x,), (z,) = tangents, inputs, outputs
        return [b.mul(t, deriv(b, x, z, **attrs))]

    defvjp(name, vjp)
    defjvp(name, jvp)


def deflinear_unary(name: str, transpose: Callable[..., Value]) -> None:
    """A unary op linear in its input: the JVP applies the op to the tangent,
    the VJP applies ``transpose(b, g, x, **attrs)``."""
    def vjp(b: Builder, cts, inputs, outputs, **attrs):
        (g,), (x,) = cts, inputs
        return [transpose(b, g, x, **attrs)]

    def jvp(b: Builder, tangents, inputs, outputs, **attrs):
        return [b.op(name, tangents[0], **attrs)]

    defvjp(name, vjp)
    defjvp(name, jvp)


# ---- helpers shared by rules ----

def sum_to(b: Builder, g: Value, shape: Sequence[int]) -> Value:
    """Reduce a broadcast cotangent back to an operand's shape."""
    gs = tuple(b.shape(g))
    shape = tuple(shape)
    if gs == shape:
        return g
    lead = len(gs) - len(shape)
    dims = list(range(lead)) + [lead + i for i, d in enumerate(shape)
                                if d == 1 and gs[lead + i] != 1]
    if dims:
        g = b.op("sum", g, dims=tuple(dims), keepdim=True)
    return reshape(b, g, shape)


def reshape(b: Builder, v: Value, shape: Sequence[int]) -> Value:
    return v if tuple(b.shape(v)) == tuple(shape) else b.op("reshape", v, shape=tuple(shape))


def broadcast(b: Builder, v: Value, shape: Sequence[int]) -> Value:
    shape = tuple(shape)
    return v if tuple(b.shape(v)) == shape else b.op("broadcast_to", v, shape=shape)


def zeros(b: Builder, shape: Sequence[int], like: Value) -> Value:
    return broadcast(b, b.scalar(0, like=like), shape)


def keep_dims(b: Builder, v: Value, in_shape: Sequence[int], dims: Sequence[int],
              keepdim: bool) -> Value:
    """Give a reduced value back its reduced dims as size 1 (for broadcasting)."""
    if keepdim:
        return v
    kept = tuple(1 if i in dims else d for i, d in enumerate(in_shape))
    return reshape(b, v, kept)


def instantiate(b: Builder, t: Value | None, shape: Sequence[int], like: Value) -> Value:
    """A tangent or cotangent that may be None (zero) as a real value."""
    return zeros(b, shape, like) if t is None else t
