"""Property: random pyflame programs give the same results with and without
the default pipeline on the reference executor, and the optimized program
never has more ops.

Programs are drawn as recipes (a list of steps over a pool of values) and
built twice through the frontend from the same leaf data: once with no
passes, once with the default pipeline. The recipes lean towards what the
passes act on: scalar constants that are identities or absorbing (0, -0.0,
1, NaN, inf), constant-only subexpressions, repeated subexpressions, x op x,
double negations, permutations and reshapes of reshapes, reductions fed by
elementwise chains, matmuls with bias and activation, values used twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

FLOAT_UNARY = ["neg", "abs", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "sin",
               "square", "reciprocal", "gelu", "erf", "sign"]
INT_UNARY = ["neg", "abs", "relu", "square", "sign"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum"]
INT_BINARY = ["add", "sub", "mul", "maximum", "minimum"]
FLOAT_SCALARS = [0.0, -0.0, 1.0, 2.0, 0.5, -1.0, float("nan"), float("inf"), 3.0]
INT_SCALARS = [0, 1, 2, -1, 3]


@dataclass
class Recipe:
    dtype: str
    leaves: list[tuple[int, ...]]
    steps: list[tuple]  # (kind, ...) over indices into the pool of values
    outputs: list[int]


def broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


@st.composite
def recipes(draw: Any) -> Recipe:
    dtype = draw(st.sampled_from(["float32", "float32", "float64", "int64"]))
    is_int = dtype == "int64"
    rank = draw(st.integers(1, 3))
    base = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))

    def variant() -> tuple[int, ...]:
        keep = draw(st.integers(0, len(base)))
        tail = base[len(base) - keep:]
        return tuple(d if draw(st.booleans()) else 1 for d in tail) if keep else ()

    leaves = [base] + [variant() for _ in range(draw(st.integers(0, 2)))]
    shapes = list(leaves)
    steps: list[tuple] = []
    unary = INT_UNARY if is_int else FLOAT_UNARY
    binary = INT_BINARY if is_int else BINARY
    scalars = INT_SCALARS if is_int else FLOAT_SCALARS
    for _ in range(draw(st.integers(1, 14))):
        i = draw(st.integers(0, len(shapes) - 1))
        s = shapes[i]
        kind = draw(st.sampled_from(["unary", "binary", "scalar", "self", "repeat",
                                     "double_neg", "const_expr", "reduce", "permute",
                                     "reshape", "where", "matmul", "binary"]))
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(unary)), i))
        elif kind == "binary":
            partners = [j for j, t in enumerate(shapes) if broadcastable(s, t)]
            j = draw(st.sampled_from(partners))
            steps.append(("binary", draw(st.sampled_from(binary)), i, j))
            s = np.broadcast_shapes(s, shapes[j])
        elif kind == "scalar":
            steps.append(("scalar", draw(st.sampled_from(binary)), i,
                          draw(st.sampled_from(scalars)), draw(st.booleans())))
        elif kind == "self":
            steps.append(("binary", draw(st.sampled_from(binary)), i, i))
        elif kind == "repeat" and steps:  # the same computation again: CSE's food
            steps.append(steps[draw(st.integers(0, len(steps) - 1))])
            s = _shape_of_step(steps[-1], shapes)
        elif kind == "double_neg":
            steps.append(("double_neg", i))
        elif kind == "const_expr":
            steps.append(("const_expr", i, draw(st.sampled_from(binary)),
                          draw(st.sampled_from(scalars)), draw(st.sampled_from(scalars))))
        elif kind == "reduce" and s:
            dims = tuple(sorted(set(draw(st.lists(st.integers(0, len(s) - 1), min_size=1,
                                                  max_size=len(s))))))
            op = draw(st.sampled_from(["sum", "max", "min"] + ([] if is_int else ["mean"])))
            keep = draw(st.booleans())
            steps.append(("reduce", op, i, dims, keep))
            s = tuple(1 if a in dims else d for a, d in enumerate(s) if keep or a not in dims)
        elif kind == "permute" and len(s) >= 2:
            perm = tuple(draw(st.permutations(range(len(s)))))
            perm2 = tuple(draw(st.permutations(range(len(s)))))
            steps.append(("permute", i, perm, perm2))
            s = tuple(s[p] for p in perm)
            s = tuple(s[p] for p in perm2)
        elif kind == "reshape":
            steps.append(("reshape", i))
        elif kind == "where" and not is_int:
            partners = [j for j, t in enumerate(shapes) if broadcastable(s, t)]
            j = draw(st.sampled_from(partners))
            steps.append(("where", i, j))
            s = np.broadcast_shapes(s, shapes[j])
        elif kind == "matmul" and len(s) == 2 and not is_int:
            steps.append(("matmul", i, draw(st.integers(1, 4)),
                          draw(st.sampled_from(["relu", "gelu", "none"]))))
            s = (s[0], steps[-1][2])
        else:
            steps.append(("unary", draw(st.sampled_from(unary)), i))
        shapes.append(tuple(s))
    n_values = len(shapes)
    outputs = sorted({n_values - 1, *draw(st.lists(st.integers(len(leaves), n_values - 1),
                                                   max_size=2))})
    return Recipe(dtype, leaves, steps, outputs)


def _shape_of_step(step: tuple, shapes: list) -> tuple[int, ...]:
    """The shape a repeated step produces (it reads the same pool entries)."""
    kind = step[0]
    if kind in ("unary", "double_neg", "reshape"):
        return shapes[step[-1] if kind != "unary" else step[2]]
    if kind == "scalar" or kind == "const_expr":
        return shapes[step[2] if kind == "scalar" else step[1]]
    if kind in ("binary",):
        return np.broadcast_shapes(shapes[step[2]], shapes[step[3]])
    if kind == "where":
        return np.broadcast_shapes(shapes[step[1]], shapes[step[2]])
    if kind == "reduce":
        _, _, i, dims, keep = step
        s = shapes[i]
        return tuple(1 if a in dims else d for a, d in enumerate(s) if keep or a not in dims)
    if kind == "permute":
        _, i, perm, perm2 = step
        s = tuple(shapes[i][p] for p in perm)
        return tuple(s[p] for p in perm2)
    if kind == "matmul":
        return (shapes[step[1]][0], step[2])
    raise AssertionError(kind)


def leaf_data(recipe: Recipe, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for shape in recipe.leaves:
        if recipe.dtype == "int64":
            out.append(rng.integers(-4, 5, size=shape).astype(np.int64))
            continue
        a = rng.standard_normal(shape) * 2
        special = rng.random(shape) < 0.1
        a = np.where(special, rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0], size=shape), a)
        out.append(np.asarray(a, dtype=recipe.dtype))
    return out


def build(recipe: Recipe, data: list[np.ndarray], seed: int) -> list[pf.Tensor]:
    rng = np.random.default_rng(seed + 1)
    pool: list[pf.Tensor] = [pf.from_numpy(a) for a in data]
    for step in recipe.steps:
        kind = step[0]
        if kind == "unary":
            _, op, i = step
            pool.append(getattr(pf, op)(pool[i]))
        elif kind == "binary":
            _, op, i, j = step
            pool.append(getattr(pf, op)(pool[i], pool[j]))
        elif kind == "scalar":
            _, op, i, c, left = step
            pool.append(getattr(pf, op)(c, pool[i]) if left else getattr(pf, op)(pool[i], c))
        elif kind == "double_neg":
            pool.append(pf.neg(pf.neg(pool[step[1]])))
        elif kind == "const_expr":
            _, i, op, c1, c2 = step
            x = pool[i]
            const = getattr(pf, op)(pf.full(list(x.shape), c1, dtype=x.dtype), c2)
            pool.append(pf.add(x, const) if recipe.dtype != "int64" or op != "div"
                        else x)
        elif kind == "reduce":
            _, op, i, dims, keep = step
            pool.append(getattr(pf, op)(pool[i], dim=list(dims), keepdim=keep)
                        if op in ("sum", "mean") else
                        getattr(pf, "amax" if op == "max" else "amin")(pool[i], dim=list(dims),
                                                                      keepdim=keep))
        elif kind == "permute":
            _, i, perm, perm2 = step
            pool.append(pool[i].permute(*perm).permute(*perm2))
        elif kind == "reshape":
            x = pool[step[1]]
            pool.append(x.reshape(-1).reshape(*x.shape) if x.shape else x.reshape(1).reshape(()))
        elif kind == "where":
            _, i, j = step
            pool.append(pf.where(pool[i] > 0, pool[i], pool[j]))
        elif kind == "matmul":
            _, i, n, act = step
            x = pool[i]
            w = pf.from_numpy(rng.standard_normal((x.shape[1], n)).astype(recipe.dtype))
            b = pf.from_numpy(rng.standard_normal(n).astype(recipe.dtype))
            h = x @ w + b
            pool.append(pf.relu(h) if act == "relu" else pf.gelu(h) if act == "gelu" else h)
        else:
            raise AssertionError(kind)
    return [pool[i] for i in recipe.outputs]


def run(recipe: Recipe, data: list[np.ndarray], seed: int, pipeline: str | None
        ) -> tuple[list[np.ndarray], pf.CompileReport | None]:
    pf.set_pipeline(pipeline)
    try:
        outs = build(recipe, data, seed)
        lazy = [t for t in outs if pf.is_lazy(t)]  # a view of a leaf may be realized
        report = pf.compile_graph(lazy) if lazy else None
        pf.eval(*outs)
        return [t.numpy() for t in outs], report
    finally:
        pf.set_pipeline(None)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recipes(), st.integers(0, 2**16))
def test_default_pipeline_keeps_results_and_never_adds_ops(recipe: Recipe, seed: int):
    data = leaf_data(recipe, seed)
    raw, raw_report = run(recipe, data, seed, "none")
    opt, opt_report = run(recipe, data, seed, None)
    if raw_report is not None and opt_report is not None:
        assert raw_report.ops_before == raw_report.ops_after == opt_report.ops_before
        assert opt_report.ops_after <= opt_report.ops_before, opt_report.pass_statistics
    tol = {"float32": 2e-5, "float64": 1e-12, "int64": 0}[recipe.dtype]
    for a, b in zip(raw, opt):
        assert a.dtype == b.dtype and a.shape == b.shape
        if recipe.dtype == "int64":
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(b, a, rtol=tol, atol=tol, equal_nan=True)
