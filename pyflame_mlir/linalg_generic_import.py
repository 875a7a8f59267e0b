"""``linalg.generic`` on tensors, as ``pf.load_mlir`` runs it: ``pyflame`` ops.

What ``mlir-opt --convert-elementwise-to-linalg``, ``tosa-to-linalg`` and
torch-mlir print: indexing maps that are projected permutations, ``parallel``
and ``reduction`` iterators, a body of scalar ``arith``/``math`` ops. Each
input is laid out over the iteration space (``permute`` to the loop order,
``reshape`` with unit dimensions where its map omits a loop, which the
elementwise ops broadcast); each body op becomes its ``pyflame`` op on those
tensors (``mlir_import._UPSTREAM_ELEMENTWISE``, comparisons, selects, casts);
an output whose map omits loops is a reduction: the body must yield
``combine(value, out)`` (``addf``/``mulf``/``maximumf``/``minimumf`` and their
integer forms), which is that ``sum``/``prod``/``max``/``min`` over the
omitted loops, combined with the output's initial value. Anything else is
refused (``GenericError``, located by the caller): no loop is run in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["GenericError", "as_generic", "legalize_generic"]


class GenericError(ValueError):
    def __init__(self, op: Any, message: str):
        super().__init__(message)
        self.op = op
        self.reason = message


# arith.cmpf predicates as pyflame comparisons: ordered ones are numpy's (false on
# NaN) but one; unordered ones are the negation of the opposite ordered one
_CMPF = {"oeq": ("eq", False), "ogt": ("gt", False), "oge": ("ge", False),
         "olt": ("lt", False), "ole": ("le", False), "une": ("ne", False),
         "ugt": ("le", True), "uge": ("lt", True), "ult": ("ge", True), "ule": ("gt", True)}
_CMPI = {"eq": "eq", "ne": "ne", "slt": "lt", "sle": "le", "sgt": "gt", "sge": "ge"}
_CASTS = ("arith.extf", "arith.truncf", "arith.sitofp", "arith.fptosi", "arith.extsi",
          "arith.trunci", "arith.extui", "arith.uitofp", "arith.fptoui")
# the body's combining op -> (reduction, combining pyflame op)
_COMBINE = {"arith.addf": ("sum", "add"), "arith.addi": ("sum", "add"),
            "arith.mulf": ("prod", "mul"), "arith.muli": ("prod", "mul"),
            "arith.maximumf": ("max", "maximum"), "arith.minimumf": ("min", "minimum"),
            "arith.maxsi": ("max", "maximum"), "arith.minsi": ("min", "minimum")}


def _loops(op: Any) -> tuple[list[tuple[int, ...]], list[str], list[int]]:
    """Each operand's map as the loops its dimensions index, the iterator
    kinds, and each loop's extent; refused unless every map is a projected
    permutation and the operands agree on the extents."""
    from xdsl.dialects.builtin import TensorType
    from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr

    from .dialects.pyflame import spec_of_type

    kinds = [str(t.data) for t in op.iterator_types.data]
    maps = [m.data for m in op.indexing_maps.data]
    operands = [*op.inputs, *op.outputs]
    if len(maps) != len(operands):
        raise GenericError(op, f"has {len(maps)} indexing maps for {len(operands)} operands")
    extent: list[int | None] = [None] * len(kinds)
    dims: list[tuple[int, ...]] = []
    for i, (m, v) in enumerate(zip(maps, operands)):
        if not isinstance(v.type, TensorType) and not m.results:  # a scalar, as -> ()
            dims.append(())
            continue
        try:
            shape, _ = spec_of_type(v.type, f"operand {i}")
        except Exception as e:  # noqa: BLE001  (VerifyException: not a static tensor)
            raise GenericError(op, str(e)) from None
        # a loop, or the constant 0 indexing a unit dimension (tosa-to-linalg's broadcasts)
        if m.num_dims != len(kinds) or m.num_symbols or len(m.results) != len(shape) or \
                not all(isinstance(e, AffineDimExpr) or (isinstance(e, AffineConstantExpr)
                                                         and e.value == 0 and n == 1)
                        for e, n in zip(m.results, shape)):
            raise GenericError(op, f"indexing map {i} ({m}) is not a projected permutation "
                                   f"of the {len(kinds)} loops (constant 0 on unit "
                                   f"dimensions) for {v.type}: only those are supported")
        d = tuple(e.position if isinstance(e, AffineDimExpr) else -1 for e in m.results)
        loops = [x for x in d if x >= 0]
        if len(set(loops)) != len(loops):
            raise GenericError(op, f"indexing map {i} ({m}) reads a loop twice (a diagonal)")
        for loop, n in zip(d, shape):
            if loop < 0:
                continue
            if extent[loop] not in (None, n):
                raise GenericError(op, f"loop d{loop} runs over {extent[loop]} and {n} "
                                       "elements (operand shapes disagree)")
            extent[loop] = n
        dims.append(d)
    if any(n is None for n in extent):
        raise GenericError(op, "a loop indexes no operand (its extent is unknown)")
    return dims, kinds, [int(n) for n in extent]  # type: ignore[arg-type]


def _lift(b: Any, v: Any, d: Sequence[int], n_loops: int) -> Any:
    """``v`` indexed by loops ``d``, as a tensor over the loops in order (unit
    dimensions for the loops it does not depend on)."""
    if -1 in d:  # unit dimensions indexed by the constant 0
        kept = tuple(n for n, loop in zip(b.shape(v), d) if loop >= 0)
        v, d = b.reshape(v, shape=kept), [loop for loop in d if loop >= 0]
    order = sorted(range(len(d)), key=lambda i: d[i])
    if order != list(range(len(d))):
        v = b.permute(v, perm=tuple(order))
    shape = list(b.shape(v))
    full = [1] * n_loops
    for i, loop in enumerate(sorted(d)):
        full[loop] = shape[i]
    return v if tuple(full) == tuple(shape) else b.reshape(v, shape=tuple(full))


def legalize_generic(op: Any, upstream_as_pyflame: Any) -> None:
    """Replace the ``linalg.generic`` ``op`` by pyflame ops (inserted before it)."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import FloatAttr, IntegerAttr, TensorType
    from xdsl.dialects.linalg.ops import IndexOp, YieldOp
    from xdsl.ir import BlockArgument
    from xdsl.utils.exceptions import VerifyException

    from .dialects.data import DenseValue
    from .dialects.opdef import ShapeError
    from .dialects.pyflame import dtype_of_element
    from .passes.common import IRBuilder

    dims, kinds, extent = _loops(op)
    n_in = len(op.inputs)
    out_dims = dims[n_in:]
    if any(k not in ("parallel", "reduction") for k in kinds):
        raise GenericError(op, f"iterator types {kinds}: only parallel and reduction")
    reduced = [i for i, k in enumerate(kinds) if k == "reduction"]
    for i, d in enumerate(out_dims):
        if sorted(set(range(len(kinds))) - set(d)) != reduced:
            raise GenericError(op, f"output {i} is not indexed by exactly the parallel loops")
    new: list[Any] = []
    b = IRBuilder(new.append)
    block = op.body.block
    env: dict[Any, Any] = {}
    try:
        def value(v: Any) -> Any:
            if v in env:
                got = env[v]
                if isinstance(got, tuple):  # an operand not yet laid out
                    got = env[v] = _lift(b, got[0], got[1], len(kinds))
                return got
            owner = v.owner
            if isinstance(owner, arith.ConstantOp) and isinstance(
                    owner.properties.get("value"), IntegerAttr | FloatAttr):
                d = dtype_of_element(v.type)
                scalar = owner.properties["value"].value.data
                with np.errstate(all="ignore"):  # a signless int's bits (200 : i8)
                    arr = np.asarray(scalar).astype(d.np)
                return b.op("constant", value=DenseValue(arr.reshape(()), (), d))
            if isinstance(v, BlockArgument) or owner is None:
                raise GenericError(op, f"its body reads {v.type} values from outside that "
                                       "are not arith.constant scalars")
            raise GenericError(op, f"its body reads a value of '{owner.name}' from outside")

        for arg, v, d in zip(block.args, [*op.inputs, *op.outputs], dims):
            if isinstance(v.type, TensorType):
                env[arg] = (v, d)  # laid out when read: an unread output is not
            else:  # a scalar operand: an arith.constant
                env[arg] = value(v)
        yields: list[Any] = []
        for inner in block.ops:
            if isinstance(inner, YieldOp):
                yields = list(inner.operands)
                break
            if isinstance(inner, arith.ConstantOp):
                env[inner.results[0]] = value(inner.results[0])
                continue
            if isinstance(inner, IndexOp):
                raise GenericError(op, "linalg.index in its body is not supported (an index "
                                       "is no pyflame element type)")
            env[inner.results[0]] = _body_op(b, inner, [value(v) for v in inner.operands],
                                             op, upstream_as_pyflame)
        results = []
        for k, (y, d) in enumerate(zip(yields, out_dims)):
            out_arg = block.args[n_in + k]
            n = len(kinds)
            # over the loops, in order: the reduced ones kept as unit dimensions
            target = tuple(1 if i in reduced else extent[i] for i in range(n))
            every = None
            if not reduced:  # (the output's element, if read, is one more input)
                r = value(y)
            else:
                r, x = _reduction(b, op, y, out_arg, value, reduced)
                every = _every_negative_zero(b, op, y, x, reduced, op.outputs[k])
            if b.shape(r) != target:  # loops the value does not depend on
                r = b.broadcast_to(r, shape=target)

            def layout(v: Any, d: tuple[int, ...] = d) -> Any:
                """From the loop order to the output's (its map ``d``)."""
                if len(b.shape(v)) != len(d):
                    v = b.reshape(v, shape=tuple(extent[i] for i in sorted(d)))
                order = sorted(range(len(d)), key=lambda i: d[i])
                inverse = [order.index(i) for i in range(len(d))]
                return v if inverse == list(range(len(d))) else b.permute(
                    v, perm=tuple(inverse))

            r = layout(r)
            if reduced:
                r = _combine_init(b, y, r, op.outputs[k], None if every is None else layout(
                    every if b.shape(every) == target else b.broadcast_to(every,
                                                                          shape=target)))
            results.append(r)
    except (ShapeError, VerifyException) as e:
        raise GenericError(op, f"cannot be converted: {e}") from None
    for r, want in zip(results, op.results, strict=True):
        if r.type != want.type:
            raise GenericError(op, f"declares the result type {want.type}, but its body "
                                   f"gives {r.type}")
    parent = op.parent
    for n in new:
        n.location = op.location
        parent.insert_op_before(n, op)
    for old, r in zip(op.results, results):
        old.replace_all_uses_with(r)
    parent.erase_op(op)


def _reads(v: Any, target: Any) -> bool:
    """Whether the body value ``v`` depends on ``target``."""
    todo, seen = [v], set()
    while todo:
        cur = todo.pop()
        if cur is target:
            return True
        owner = getattr(cur, "owner", None)
        if owner is None or id(owner) in seen or not hasattr(owner, "operands"):
            continue
        seen.add(id(owner))
        todo.extend(owner.operands)
    return False


def _reduction(b: Any, op: Any, y: Any, out_arg: Any, value: Any, reduced: list[int]
               ) -> tuple[Any, Any]:
    """``y = combine(x, out)`` with ``x`` independent of ``out``: the reduction
    of ``x`` over the reduced loops (keeping them as unit dimensions)."""
    owner = y.owner
    name = getattr(owner, "name", None)
    if name not in _COMBINE or list(owner.operands).count(out_arg) != 1:
        raise GenericError(op, "a reduction whose body does not yield addf/addi, mulf/muli, "
                               "maximumf/minimumf or maxsi/minsi of a value and the output's "
                               "element is not supported")
    if sum(1 for _ in out_arg.uses) != 1:
        raise GenericError(op, "its body reads the output's element more than once")
    x = owner.operands[1] if owner.operands[0] is out_arg else owner.operands[0]
    if _reads(x, out_arg):
        raise GenericError(op, "its reduction's value depends on the output's element")
    reduction, _ = _COMBINE[name]
    v = value(x)
    if any(b.shape(v)[i] == 1 for i in reduced):  # it must span the loops it counts
        raise GenericError(op, "a reduction of a value that does not depend on a reduced "
                               "loop is not supported")
    attrs: dict[str, Any] = {"dims": tuple(reduced), "keepdim": True}
    if reduction in ("max", "min"):
        attrs["ties"] = None
    r = b.op(reduction, v, **attrs)
    dt = b.dtype(v)
    if b.dtype(r) is not dt:  # integer sums count in int64: the same bits, wrapped
        r = b.convert(r, dtype=dt)
    return r, v


def _every_negative_zero(b: Any, op: Any, y: Any, x: Any, reduced: list[int], init: Any
                         ) -> Any:
    """For a float sum into an init that may be -0.0: where every element
    summed is -0.0 (1 / x is -inf), over the loops (reduced ones kept); else None."""
    from .dialects.dtypes import FLOAT

    _, combine = _COMBINE[y.owner.name]
    arr = _constant_through_broadcasts(init)
    if combine != "add" or b.dtype(x).category != FLOAT or (
            arr is not None and not np.signbit(arr).any()):
        return None
    others = b.ne(b.reciprocal(x), b.scalar(-np.inf, like=x))
    return b.logical_not(b.max(others, dims=tuple(reduced), keepdim=True, ties=None))


def _combine_init(b: Any, y: Any, r: Any, init: Any, every: Any) -> Any:
    """The reduction ``r`` folded into the output's initial value. A sum folds
    from +0.0 (numpy's identity): into an init of +0.0 it is that fold; else
    the fold is init + sum, except where every element is -0.0 (``every``),
    where the fold leaves init as it is (-0.0 too)."""
    _, combine = _COMBINE[y.owner.name]
    arr = _constant_through_broadcasts(init)
    if combine == "add" and arr is not None and not np.any(arr) and not np.signbit(arr).any():
        return r
    out = b.op(combine, r, init)
    return out if every is None else b.where(every, init, out)


def _constant_through_broadcasts(v: Any) -> np.ndarray | None:
    """The data of ``v`` if it is a pyflame constant, broadcast or reshaped."""
    from .passes.common import constant_array

    while getattr(v.owner, "name", None) in ("pyflame.broadcast_to", "pyflame.reshape"):
        v = v.owner.operands[0]
    return constant_array(v)


def _body_op(b: Any, inner: Any, operands: list[Any], op: Any, upstream_as_pyflame: Any
             ) -> Any:
    """A scalar ``arith``/``math`` op of the body, on the laid-out tensors."""
    from .dialects.pyflame import dtype_of_element

    name = inner.name
    if name == "arith.select":
        return b.where(*operands)
    if name in ("arith.cmpf", "arith.cmpi"):
        from xdsl.dialects.arith import CMPF_COMPARISON_OPERATIONS, CMPI_COMPARISON_OPERATIONS

        table = _CMPF if name == "arith.cmpf" else _CMPI
        names = CMPF_COMPARISON_OPERATIONS if name == "arith.cmpf" else \
            CMPI_COMPARISON_OPERATIONS
        key = names[inner.properties["predicate"].value.data]
        if key not in table:
            raise GenericError(op, f"'{name}' with predicate {key} is not supported")
        target = table[key]
        if name == "arith.cmpf":
            cmp, negate = target
            r = b.op(cmp, *operands)
            return b.logical_not(r) if negate else r
        return b.op(target, *operands)
    if name in _CASTS:
        src = b.dtype(operands[0])
        dst = dtype_of_element(inner.results[0].type)
        unsigned = name in ("arith.uitofp", "arith.fptoui")
        if unsigned or (name == "arith.extui" and src.name != "bool"):
            raise GenericError(op, f"'{name}' (an unsigned reading of signless bits) is not "
                                   "supported")
        return b.convert(operands[0], dtype=dst)
    target = upstream_as_pyflame(inner)
    if target is None:
        raise GenericError(op, f"'{name}' in its body is not supported (no pyflame op, or "
                               "fast-math flags)")
    return b.op(target, *operands)


def as_generic(op: Any) -> Any:
    """A ``linalg.reduce`` as the ``linalg.generic`` it is (the input over all
    loops, the init over the ones not reduced), put in its place."""
    from xdsl.dialects.builtin import AffineMapAttr
    from xdsl.dialects.linalg.attrs import IteratorTypeAttr
    from xdsl.dialects.linalg.ops import GenericOp
    from xdsl.ir.affine import AffineMap

    rank = len(op.input.type.get_shape())
    dims = set(op.dimensions.get_values())
    if any(not 0 <= d < rank for d in dims):
        raise GenericError(op, f"dimensions {sorted(dims)} are not dimensions of "
                               f"{op.input.type}")
    maps = [AffineMapAttr(AffineMap.identity(rank)),
             AffineMapAttr(AffineMap.identity(rank).drop_results(
                 [i in dims for i in range(rank)]))]
    kinds = [IteratorTypeAttr.reduction() if i in dims else IteratorTypeAttr.parallel()
             for i in range(rank)]
    body = op.region.clone()
    generic = GenericOp([op.input], [op.init], body, maps, kinds,
                        [r.type for r in op.results])
    generic.location = op.location
    op.parent.insert_op_before(generic, op)
    for old, new in zip(op.results, generic.results):
        old.replace_all_uses_with(new)
    op.parent.erase_op(op)
    return generic
