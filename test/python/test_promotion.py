"""PyTorch type promotion, exhaustively over our dtypes: tensors with
dimensions, 0-d tensors, Python scalars (bool, int, float), numpy arrays and
numpy scalars, for binary ops, comparisons, where, clamp, cat/stack and
reductions. Result dtypes are known at record time; they must equal what
torch produces, and the evaluated values must agree too."""

from __future__ import annotations

import itertools
import operator

import numpy as np
import pytest
import torch
from _oracles import ALL_DTYPES, assert_close, run_torch, to_torch, torch_dtype, torch_name

import pyflame_mlir as pf

VALUES = np.array([1.5, -2.0, 3.0])


def _operands():
    """(label, pyflame operand, torch operand) for every kind of operand."""
    out = []
    for d in ALL_DTYPES:
        arr = np.abs(VALUES).astype(d.np) if d is not pf.bool else VALUES > 0
        out.append((f"{d.name}[3]", pf.from_numpy(arr), to_torch(arr)))
        z = np.asarray(arr[0])
        out.append((f"{d.name}[]", pf.from_numpy(z), to_torch(z)))
    for s in (True, 2, 2.5):
        out.append((f"py:{s!r}", s, s))
    return out


OPERANDS = _operands()
PAIRS = [(a, b) for a, b in itertools.product(OPERANDS, OPERANDS)
         if not (isinstance(a[1], bool | int | float) and isinstance(b[1], bool | int | float))]

BINARY = {
    "add": (operator.add, operator.add),
    "sub": (operator.sub, operator.sub),
    "mul": (operator.mul, operator.mul),
    "div": (operator.truediv, operator.truediv),
    "pow": (operator.pow, operator.pow),
    "eq": (operator.eq, operator.eq),
    "lt": (operator.lt, operator.lt),
    "maximum": (pf.maximum, None),
}


def _torch_maximum(a, b):
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return torch.maximum(a, b)
    rt = torch.result_type(a, b) if isinstance(a, torch.Tensor) else torch.result_type(b, a)
    a = a.to(rt) if isinstance(a, torch.Tensor) else torch.tensor(a, dtype=rt)
    b = b.to(rt) if isinstance(b, torch.Tensor) else torch.tensor(b, dtype=rt)
    return torch.maximum(a, b)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_promotion_table(name, lazy):
    ours_fn, torch_fn = BINARY[name]
    torch_fn = torch_fn or _torch_maximum
    lazy = []
    for (la, xa, ta), (lb, xb, tb) in PAIRS:
        what = f"{name}({la}, {lb})"
        expected, err = run_torch(torch_fn, ta, tb)
        if name == "pow" and lb == "py:True" and la.startswith("bool"):
            # torch's bool ** True stays bool (a quirk); like numpy, we refuse bool pow
            assert err is None and expected.dtype == torch.bool
            err = "documented difference"
        if err is not None:
            with pytest.raises((pf.ShapeError, TypeError), match=r"pyflame\.\w+|bool"):
                ours_fn(xa, xb)
            continue
        out = ours_fn(xa, xb)
        assert out.dtype.name == torch_name(expected.dtype), what  # known before evaluation
        assert pf.is_lazy(out) and out.shape == tuple(expected.shape), what
        lazy.append((out, expected, what))
    pf.eval(*[o for o, _, _ in lazy])  # one compiled graph for the whole table
    for out, expected, what in lazy:
        assert_close(out, expected, what=what)


def test_result_type_matches_torch_result_type():
    """The record-time dtype equals torch.result_type for every pair of operands."""
    for (la, xa, ta), (lb, xb, tb) in PAIRS:
        if not isinstance(ta, torch.Tensor):
            continue  # torch.result_type wants a tensor first
        assert (xa * xb).dtype.name == torch_name(torch.result_type(ta, tb)), (la, lb)


@pytest.mark.parametrize("d", ALL_DTYPES, ids=lambda d: d.name)
def test_numpy_operands(d):
    """numpy arrays act as tensors of their dtype; numpy scalars are weak like
    Python scalars (torch does the same)."""
    x = pf.ones(3, dtype=d)
    tx = torch.ones(3, dtype=torch_dtype(d))
    for other in (np.ones(3, np.float64), np.ones(3, np.int32), np.ones((), np.float64),
                  np.float64(2.0), np.int64(3), np.bool_(True)):
        t_other = torch.from_numpy(np.array(other)) if isinstance(other, np.ndarray) else \
            other.item()
        expected, err = run_torch(operator.mul, tx, t_other)
        assert err is None, err
        assert (x * other).dtype.name == torch_name(expected.dtype), (d, repr(other))
        assert (other * x).dtype.name == torch_name(expected.dtype), (d, repr(other))


@pytest.mark.parametrize("d", ALL_DTYPES, ids=lambda d: d.name)
def test_where_promotion(d):
    cond = np.array([True, False, True])
    arr = np.array([1, 0, 2]).astype(d.np)
    c, tc = pf.from_numpy(cond), to_torch(cond)
    x, tx = pf.from_numpy(arr), to_torch(arr)
    for (lb, xb, tb) in OPERANDS:
        for args, targs in (((x, xb), (tx, tb)), ((xb, x), (tb, tx))):
            expected = torch.where(tc, *targs)
            out = pf.where(c, *args)
            assert out.dtype.name == torch_name(expected.dtype), (d.name, lb)
            assert_close(out, expected)
    for s1, s2 in ((1, 2), (1, 2.5), (True, 2), (1.5, False)):
        assert_close(pf.where(c, s1, s2), torch.where(tc, s1, s2))


@pytest.mark.parametrize("d", ALL_DTYPES, ids=lambda d: d.name)
def test_clamp_promotion(d):
    arr = np.array([0, 1, 3, 5]).astype(d.np)
    x, tx = pf.from_numpy(arr), to_torch(arr)
    for lo, hi in ((1, 4), (0.5, 2.5), (None, 2), (1.5, None), (True, None)):
        expected, err = run_torch(torch.clamp, tx, lo, hi)
        if err is not None:
            # torch has no bool kernel for clamp with a Python bool bound, but
            # accepts the same bound as a 0-d tensor; we compute it either way
            assert d is pf.bool and isinstance(lo, bool), err
            expected = torch.clamp(tx, min=torch.tensor(lo))
        assert_close(pf.clamp(x, lo, hi), expected, what=f"clamp {d.name} {lo} {hi}")
    for lo_d in ALL_DTYPES:  # 0-d tensor bounds of another dtype
        lo = np.asarray(np.array(1).astype(lo_d.np))
        expected, err = run_torch(torch.clamp, tx, min=to_torch(lo))
        if err is None:
            assert_close(pf.clamp(x, min=pf.from_numpy(lo)), expected,
                         what=f"clamp {d.name} min {lo_d.name}")


def test_cat_and_stack_promote():
    for da, db in itertools.product(ALL_DTYPES, repeat=2):
        a = np.ones((2, 1), da.np)
        b = np.zeros((2, 2), db.np)
        assert_close(pf.cat([pf.from_numpy(a), pf.from_numpy(b)], 1),
                     torch.cat([to_torch(a), to_torch(b)], 1))
        assert_close(pf.stack([pf.from_numpy(a), pf.from_numpy(b[:, :1])]),
                     torch.stack([to_torch(a), to_torch(b[:, :1])]))


@pytest.mark.parametrize("d", ALL_DTYPES, ids=lambda d: d.name)
def test_reduction_and_unary_result_dtypes(d):
    arr = np.array([[1, 0, 2], [3, 1, 0]]).astype(d.np)
    x, t = pf.from_numpy(arr), to_torch(arr)
    checks = {
        "sum": (lambda v: v.sum(), lambda v: v.sum()),
        "sum_dim": (lambda v: v.sum(1), lambda v: v.sum(1)),
        "amax": (lambda v: pf.amax(v, 0), lambda v: torch.amax(v, 0)),
        "argmax": (lambda v: v.argmax(), lambda v: v.argmax()),
        "mean": (lambda v: v.mean(), lambda v: v.mean()),
        "exp": (pf.exp, torch.exp),
        "sqrt": (pf.sqrt, torch.sqrt),
        "sigmoid": (pf.sigmoid, torch.sigmoid),
        "reciprocal": (pf.reciprocal, torch.reciprocal),
        "neg": (pf.neg, torch.neg),
        "abs": (pf.abs, torch.abs),
        "relu": (pf.relu, torch.relu),
        "square": (pf.square, torch.square),
        "logsumexp": (lambda v: pf.logsumexp(v, 1), lambda v: torch.logsumexp(v, 1)),
        "div_int": (lambda v: v / 2, lambda v: v / 2),
        "matmul": (lambda v: v @ v.T, lambda v: v @ v.T),
    }
    for name, (f, g) in checks.items():
        expected, err = run_torch(g, t)
        if err is not None:
            with pytest.raises(pf.ShapeError):
                f(x)
            continue
        out = f(x)
        assert out.dtype.name == torch_name(expected.dtype), (name, d.name)
        assert_close(out, expected, what=f"{name} {d.name}")


def test_scalars_are_weak_and_constants_take_the_tensor_dtype():
    h = pf.ones(2, dtype=pf.float16)
    assert (h + 1e4).dtype is pf.float16 and (h * 3).dtype is pf.float16
    i = pf.ones(2, dtype=pf.int32)
    assert (i + 2**20).dtype is pf.int32 and (i + 1.0).dtype is pf.float32
    assert (i + True).dtype is pf.int32
    b = pf.tensor([True, False])
    assert (b + 1).dtype is pf.int64 and (b * 1.5).dtype is pf.float32
    assert (b + True).dtype is pf.bool and (b & True).dtype is pf.bool
    assert (pf.tensor(1.0, dtype=pf.float64) + i).dtype is pf.float64  # 0-d: higher category
    assert (pf.tensor(1, dtype=pf.int64) + i).dtype is pf.int32  # 0-d: same category
    assert (pf.ones(2, dtype=pf.bfloat16) + pf.ones(2, dtype=pf.float16)).dtype is pf.float32
