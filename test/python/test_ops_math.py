"""Issue 14's math, aliases and Tensor API against torch: rounding, division
modes, inverse and hyperbolic trig, activations, special-value tests, bitwise
ops and operators, products, einsum, norms (values over drawn shapes and at
special values, float64 gradients), the creation fixes, and the data-side
Tensor API (``to``, ``size()``, ``device``, DLPack, numpy)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from _oracles import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

SETTINGS = settings(max_examples=examples(8), deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.5, 1e-8,
           -1e-8, 30.0, -30.0, 0.9999, -0.9999, 3.7, -3.7]

_shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)


def _t(a: np.ndarray, grad: bool = False) -> torch.Tensor:
    return torch.from_numpy(np.array(a)).requires_grad_(grad)


def _close(got: Any, want: torch.Tensor, rtol: float = 1e-6, atol: float = 1e-6,
           what: str = "") -> None:
    g = got.numpy() if isinstance(got, pf.Tensor) else np.asarray(got)
    w = want.detach().numpy()
    assert g.dtype == w.dtype and g.shape == w.shape, f"{what}: {g.dtype}{g.shape} vs " \
                                                      f"torch {w.dtype}{w.shape}"
    if w.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w, err_msg=what)
    else:
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


# name: (pf, torch, domain (lo, hi) of the drawn values)
UNARY: dict[str, tuple[Callable, Callable, tuple[float, float]]] = {
    "floor": (pf.floor, torch.floor, (-5, 5)), "ceil": (pf.ceil, torch.ceil, (-5, 5)),
    "round": (pf.round, torch.round, (-5, 5)), "trunc": (pf.trunc, torch.trunc, (-5, 5)),
    "frac": (pf.frac, torch.frac, (-5, 5)),
    "round_decimals": (lambda x: pf.round(x, decimals=2), lambda x: torch.round(x, decimals=2),
                       (-5, 5)),
    "expm1": (pf.expm1, torch.expm1, (-3, 3)), "exp2": (pf.exp2, torch.exp2, (-5, 5)),
    "log2": (pf.log2, torch.log2, (0.1, 9)), "log10": (pf.log10, torch.log10, (0.1, 9)),
    "tan": (pf.tan, torch.tan, (-1.2, 1.2)), "sinh": (pf.sinh, torch.sinh, (-4, 4)),
    "cosh": (pf.cosh, torch.cosh, (-4, 4)), "asinh": (pf.asinh, torch.asinh, (-5, 5)),
    "acosh": (pf.acosh, torch.acosh, (1.1, 9)), "atanh": (pf.atanh, torch.atanh, (-0.9, 0.9)),
    "asin": (pf.asin, torch.asin, (-0.95, 0.95)), "acos": (pf.acos, torch.acos, (-0.95, 0.95)),
    "atan": (pf.atan, torch.atan, (-5, 5)),
    "softplus": (pf.softplus, F.softplus, (-30, 30)),
    "softplus_beta": (lambda x: pf.softplus(x, beta=2, threshold=5),
                      lambda x: F.softplus(x, beta=2, threshold=5), (-5, 5)),
    "mish": (pf.mish, F.mish, (-5, 5)), "silu": (pf.silu, F.silu, (-5, 5)),
    "hardtanh": (pf.hardtanh, F.hardtanh, (-3, 3)), "relu6": (pf.relu6, F.relu6, (-3, 9)),
    "leaky_relu": (lambda x: pf.leaky_relu(x, 0.2), lambda x: F.leaky_relu(x, 0.2), (-3, 3)),
    "elu": (lambda x: pf.elu(x, 1.5), lambda x: F.elu(x, 1.5), (-5, 5)),
    "selu": (pf.selu, F.selu, (-5, 5)), "celu": (lambda x: pf.celu(x, 0.7),
                                                 lambda x: F.celu(x, 0.7), (-5, 5)),
    "hardsigmoid": (pf.hardsigmoid, F.hardsigmoid, (-5, 5)),
    "hardswish": (pf.hardswish, F.hardswish, (-5, 5)),
    "logsigmoid": (pf.logsigmoid, F.logsigmoid, (-30, 30)),
    "logit": (pf.logit, torch.logit, (0.05, 0.95)),
    "logit_eps": (lambda x: pf.logit(x, eps=0.1), lambda x: torch.logit(x, eps=0.1),
                  (0.01, 0.99)),
    "nan_to_num": (pf.nan_to_num, torch.nan_to_num, (-5, 5)),
    "clamp_min": (lambda x: pf.clamp_min(x, 0.3), lambda x: torch.clamp_min(x, 0.3), (-1, 1)),
    "clamp_max": (lambda x: x.clamp_max(0.3), lambda x: x.clamp_max(0.3), (-1, 1)),
}
# piecewise constant: the gradient is zero (PyTorch), not checked by differences
ZERO_GRAD = {"floor", "ceil", "round", "trunc", "round_decimals"}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_unary_at_special_values(name: str, dt: type) -> None:
    fn, tfn, _ = UNARY[name]
    a = np.array(SPECIAL, dt)
    with np.errstate(all="ignore"):
        _close(fn(pf.from_numpy(a)), tfn(_t(a)), 2e-6 if dt == np.float32 else 1e-12,
               1e-6 if dt == np.float32 else 1e-12, f"{name} {dt.__name__}")


@pytest.mark.parametrize("name", sorted(UNARY))
@SETTINGS
@given(shape=_shapes, seed=st.integers(0, 2**16))
def test_unary_values_and_grad_match_torch(name: str, shape: tuple[int, ...], seed: int
                                           ) -> None:
    fn, tfn, (lo, hi) = UNARY[name]
    rng = np.random.default_rng(seed)
    a = rng.uniform(lo, hi, shape)
    ct = rng.standard_normal(shape)
    x = pf.from_numpy(a)
    tx = _t(a, True)
    out, tout = fn(x), tfn(tx)
    _close(out, tout, 1e-10, 1e-12, name)
    g = pf.grad(lambda v: (fn(v) * pf.from_numpy(ct)).sum())(x)
    (tg,) = torch.autograd.grad((tout * _t(ct)).sum(), tx)
    # (torch's float64 celu and hardsigmoid backward use float32 constants: ~5e-8)
    _close(g, tg, 2e-7, 1e-10, f"grad of {name}")
    if name in ZERO_GRAD:
        assert not g.numpy().any()


def test_math_in_eager_and_lazy_mode(mode: str) -> None:
    a = np.array([-2.5, -0.5, 0.25, 1.5, 3.0])
    x = pf.from_numpy(a)
    for name in ("floor", "expm1", "asinh", "softplus", "mish", "logsigmoid"):
        fn, tfn, _ = UNARY[name]
        _close(fn(x), tfn(_t(a)), 1e-12, 1e-12, f"{name} ({mode})")


# ---- binary: division modes, atan2, bitwise ----

_INTS = np.array([-7, -6, -1, 0, 1, 5, 7, 9])
_DIVISORS = np.array([2, -2, 3, -3, 5, -1, 4, -4])


@pytest.mark.parametrize("dt", [np.int32, np.int64, np.float32, np.float64])
def test_division_modes_match_torch(dt: type) -> None:
    a, b = _INTS.astype(dt), _DIVISORS.astype(dt)
    if np.dtype(dt).kind == "f":
        a = a + np.linspace(-0.4, 0.4, a.size).astype(dt)
    x, y, tx, ty = pf.from_numpy(a), pf.from_numpy(b), _t(a), _t(b)
    cases = {
        "fmod": (pf.fmod(x, y), torch.fmod(tx, ty)),
        "remainder": (pf.remainder(x, y), torch.remainder(tx, ty)),
        "floor_divide": (pf.floor_divide(x, y), torch.floor_divide(tx, ty)),
        "div_trunc": (pf.div(x, y, rounding_mode="trunc"), torch.div(tx, ty,
                                                                     rounding_mode="trunc")),
        "div_floor": (x.div(y, rounding_mode="floor"), tx.div(ty, rounding_mode="floor")),
        "div": (pf.divide(x, y), torch.divide(tx, ty)),
        "operators": (x // y + x % y, tx // ty + tx % ty),
        "scalar": (pf.remainder(x, 3), torch.remainder(tx, 3)),
        "rscalar": (7 % y, 7 % ty),
    }
    for name, (got, want) in cases.items():
        _close(got, want, 1e-6, 1e-6, f"{name} {np.dtype(dt).name}")


def test_float_division_special_values_match_torch() -> None:
    a = np.array([1.0, -1.0, 0.0, -0.0, np.inf, np.nan, 5.5, -5.5, 1e30, 0.3])
    b = np.array([0.0, 0.0, 0.0, 1.0, 2.0, 1.0, np.inf, -np.inf, 1e-30, 0.1])
    x, y, tx, ty = pf.from_numpy(a), pf.from_numpy(b), _t(a), _t(b)
    with np.errstate(all="ignore"):
        for fn, tfn in ((pf.fmod, torch.fmod), (pf.remainder, torch.remainder),
                        (pf.floor_divide, torch.floor_divide), (pf.atan2, torch.atan2)):
            _close(fn(x, y), tfn(tx, ty), 1e-12, 0, fn.__name__)


def test_integer_division_by_zero_raises() -> None:
    with pytest.raises(ZeroDivisionError):
        pf.fmod(pf.tensor([1, 2]), pf.tensor([1, 0])).numpy()
    with pytest.raises(ZeroDivisionError):
        (pf.tensor([1, 2]) // pf.tensor([0, 1])).numpy()


@SETTINGS
@given(seed=st.integers(0, 2**16))
def test_binary_grads_match_torch(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.uniform(-3, 3, (3, 4)) + 0.01
    b = rng.uniform(0.5, 2, (4,)) * rng.choice([-1, 1], (4,))
    w = rng.uniform(-0.2, 1.2, (3, 4))
    cases = {
        "atan2": (pf.atan2, torch.atan2), "fmod": (pf.fmod, torch.fmod),
        "remainder": (pf.remainder, torch.remainder),
        "add_alpha": (lambda x, y: pf.add(x, y, alpha=2.5),
                      lambda x, y: torch.add(x, y, alpha=2.5)),
        "sub_alpha": (lambda x, y: x.sub(y, alpha=-0.5), lambda x, y: x.sub(y, alpha=-0.5)),
        "lerp": (lambda x, y: pf.lerp(x, y, pf.from_numpy(w)),
                 lambda x, y: torch.lerp(x, y.expand(3, 4), _t(w))),
        "lerp_scalar": (lambda x, y: pf.lerp(x, y, 0.75), lambda x, y: torch.lerp(
            x, y.expand(3, 4), 0.75)),
        "div_trunc": (lambda x, y: pf.div(x, y, rounding_mode="trunc"),
                      lambda x, y: torch.div(x, y, rounding_mode="trunc")),
    }
    for name, (fn, tfn) in cases.items():
        xs = [pf.from_numpy(a), pf.from_numpy(b)]
        ts = [_t(a, True), _t(b, True)]
        out, tout = fn(*xs), tfn(*ts)
        _close(out, tout, 1e-10, 1e-12, name)
        ct = rng.standard_normal(tout.shape)
        gs = pf.grad(lambda x, y, fn=fn, ct=ct: (fn(x, y) * pf.from_numpy(ct)).sum(),
                     argnums=(0, 1))(*xs)
        tgs = torch.autograd.grad((tout * _t(ct)).sum(), ts)
        for g, tg in zip(gs, tgs):
            _close(g, tg, 1e-8, 1e-10, f"grad of {name}")


@pytest.mark.parametrize("dt", [np.bool_, np.int32, np.int64])
def test_bitwise_ops_and_operators_match_torch(dt: type) -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(-9, 9, (3, 4)).astype(dt)
    b = rng.integers(-9, 9, (4,)).astype(dt)
    x, y, tx, ty = pf.from_numpy(a), pf.from_numpy(b), _t(a), _t(b)
    for got, want in ((pf.bitwise_and(x, y), torch.bitwise_and(tx, ty)),
                      (pf.bitwise_or(x, y), torch.bitwise_or(tx, ty)),
                      (pf.bitwise_xor(x, y), torch.bitwise_xor(tx, ty)),
                      (pf.bitwise_not(x), torch.bitwise_not(tx)),
                      (x & y, tx & ty), (x | y, tx | ty), (x ^ y, tx ^ ty), (~x, ~tx),
                      (pf.logical_xor(x, y), torch.logical_xor(tx, ty))):
        _close(got, want)


def test_bitwise_on_floats_raises_naming_the_op() -> None:
    with pytest.raises(pf.ShapeError, match="bitwise_and"):
        pf.randn(3) & pf.randn(3)
    with pytest.raises(pf.ShapeError, match="bitwise_not"):
        ~pf.randn(3)


def test_special_value_tests_match_torch() -> None:
    a = np.array(SPECIAL + [np.finfo(np.float32).max], np.float32)
    x, tx = pf.from_numpy(a), _t(a)
    for name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf"):
        _close(getattr(pf, name)(x), getattr(torch, name)(tx), what=name)
        i = np.array([1, -2, 3])
        _close(getattr(pf, name)(pf.from_numpy(i)), getattr(torch, name)(_t(i)), what=name)
    _close(pf.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0),
           torch.nan_to_num(tx, nan=1.0, posinf=2.0, neginf=-3.0))


def test_aliases_are_the_torch_functions() -> None:
    a = np.array([-1.5, 0.25, 2.0])
    b = np.array([0.5, 0.25, -1.0])
    x, y, tx, ty = pf.from_numpy(a), pf.from_numpy(b), _t(a), _t(b)
    for name in ("greater", "greater_equal", "less", "less_equal", "not_equal", "multiply",
                 "divide", "true_divide", "subtract"):
        _close(getattr(pf, name)(x, y), getattr(torch, name)(tx, ty), what=name)
        _close(getattr(x, name)(y), getattr(tx, name)(ty), what=f"Tensor.{name}")
    for name in ("absolute", "negative", "arcsinh", "arctan", "fix"):
        _close(getattr(pf, name)(x), getattr(torch, name)(tx), what=name)
    _close(pf.arccos(y), torch.arccos(ty))
    _close(pf.clip(x, -1, 1), torch.clip(tx, -1, 1))
    _close(pf.arctan2(x, y), torch.arctan2(tx, ty))


# ---- products, einsum, norms ----

def test_products_match_torch() -> None:
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    v, w = rng.standard_normal(4), rng.standard_normal(3)
    M, N = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    C = rng.standard_normal((3, 5))
    P = {k: pf.from_numpy(val) for k, val in dict(A=A, B=B, v=v, w=w, M=M, N=N, C=C).items()}
    T = {k: _t(val) for k, val in dict(A=A, B=B, v=v, w=w, M=M, N=N, C=C).items()}
    for name, f in {
        "bmm": lambda m: m["M"].bmm(m["N"]) if isinstance(m["M"], torch.Tensor)
        else pf.bmm(m["M"], m["N"]),
        "mv": lambda m: (pf if isinstance(m["A"], pf.Tensor) else torch).mv(m["A"], m["v"]),
        "dot": lambda m: (pf if isinstance(m["v"], pf.Tensor) else torch).dot(m["v"], m["v"]),
        "outer": lambda m: (pf if isinstance(m["v"], pf.Tensor) else torch).outer(m["w"], m["v"]),
        "addmm": lambda m: (pf if isinstance(m["A"], pf.Tensor) else torch).addmm(
            m["C"], m["A"], m["B"], beta=0.5, alpha=2.0),
        "addmv": lambda m: (pf if isinstance(m["A"], pf.Tensor) else torch).addmv(
            m["w"], m["A"], m["v"], alpha=3),
        "baddbmm": lambda m: (pf if isinstance(m["A"], pf.Tensor) else torch).baddbmm(
            m["C"], m["M"], m["N"], beta=0, alpha=0.5),
    }.items():
        _close(f(P), f(T), 1e-10, 1e-12, name)


def test_products_reject_wrong_ranks() -> None:
    with pytest.raises(pf.ShapeError, match="bmm"):
        pf.bmm(pf.randn(3, 4), pf.randn(4, 5))
    with pytest.raises(pf.ShapeError, match="dot"):
        pf.dot(pf.randn(3, 4), pf.randn(3))


EINSUM = [("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
          ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ii->i", [(4, 4)]), ("ii", [(3, 3)]),
          ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("i,i->", [(5,), (5,)]),
          ("i,j->ij", [(3,), (4,)]), ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
          ("b...,b->...", [(3, 2, 4), (3,)]), ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
          ("ijk,ikl,ilm->ijm", [(2, 3, 4), (2, 4, 5), (2, 5, 2)]), ("iij->j", [(3, 3, 2)]),
          ("ab,ab,ab->a", [(3, 2), (3, 2), (3, 2)]), ("i j , j -> i", [(2, 3), (3,)]),
          ("ba", [(2, 3)]), ("ij,kj", [(2, 3), (4, 3)])]


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum_matches_torch(eq: str, shapes: list[tuple[int, ...]]) -> None:
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) for s in shapes]
    xs = [pf.from_numpy(a) for a in arrays]
    ts = [_t(a, True) for a in arrays]
    out, tout = pf.einsum(eq, *xs), torch.einsum(eq, *ts)
    _close(out, tout, 1e-10, 1e-12, eq)
    _close(pf.einsum(eq, xs), tout, 1e-10, 1e-12, f"{eq} (operands as a list)")
    ct = rng.standard_normal(tout.shape)
    gs = pf.grad(lambda *v: (pf.einsum(eq, *v) * pf.from_numpy(ct)).sum(),
                 argnums=tuple(range(len(xs))))(*xs)
    tgs = torch.autograd.grad((tout * _t(ct)).sum(), ts)
    for g, tg in zip(gs, tgs):
        _close(g, tg, 1e-10, 1e-12, f"grad of {eq}")


def test_einsum_errors_name_the_problem() -> None:
    with pytest.raises(pf.ShapeError, match="einsum"):
        pf.einsum("ij,jk->ik", pf.randn(2, 3), pf.randn(4, 5))
    with pytest.raises(pf.ShapeError, match="einsum"):
        pf.einsum("ijk->i", pf.randn(2, 3))
    with pytest.raises(pf.ShapeError, match="einsum"):
        pf.einsum("ij->ix", pf.randn(2, 3))


NORMS = [("vector_norm", {}), ("vector_norm", {"ord": 1}), ("vector_norm", {"ord": np.inf}),
         ("vector_norm", {"ord": -np.inf}), ("vector_norm", {"ord": 3, "dim": 1}),
         ("vector_norm", {"ord": 0.5, "dim": (0, 2), "keepdim": True}),
         ("vector_norm", {"ord": 0}), ("vector_norm", {"ord": -2, "dim": -1}),
         ("norm", {}), ("norm", {"ord": "fro", "dim": (1, 2)}), ("norm", {"dim": 0}),
         ("norm", {"ord": 1, "dim": (0, 1)}), ("norm", {"ord": -np.inf, "dim": (2, 1)}),
         ("matrix_norm", {}), ("matrix_norm", {"ord": np.inf, "keepdim": True})]


@pytest.mark.parametrize("name,kw", NORMS, ids=[f"{n}-{k}" for n, k in NORMS])
def test_norms_match_torch(name: str, kw: dict) -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4, 2))
    a[0, 0, 0] = 0.0
    x, tx = pf.from_numpy(a), _t(a, True)
    out, tout = getattr(pf.linalg, name)(x, **kw), getattr(torch.linalg, name)(tx, **kw)
    _close(out, tout, 1e-10, 1e-12, f"{name} {kw}")
    g = pf.grad(lambda v: getattr(pf.linalg, name)(v, **kw).sum())(x)
    (tg,) = torch.autograd.grad(tout.sum(), tx, allow_unused=True)  # (ord 0: no path)
    tg = torch.zeros_like(tx) if tg is None else tg
    _close(g, tg, 1e-8, 1e-10, f"grad of {name} {kw}")


def test_torch_norm_and_gradient_at_zero() -> None:
    a = np.zeros((2, 3))
    x, tx = pf.from_numpy(a), _t(a, True)
    for p in ("fro", 2, 1, 3):
        out, tout = pf.norm(x, p), torch.norm(tx, p)
        _close(out, tout)
        (tg,) = torch.autograd.grad(tout, tx)
        _close(pf.grad(lambda v, p=p: pf.norm(v, p))(x), tg, what=f"grad at 0, p={p}")
    _close(x.norm(dim=1), tx.norm(dim=1))
    with pytest.raises(pf.ShapeError, match="nuclear"):
        pf.norm(x, "nuc")


# ---- the creation fixes ----

@pytest.mark.parametrize("args", [(0.5, 5.2, 1.3), (0, 5.5), (1.7,), (-3.2, 4.8, 1.6),
                                  (-3.7, 4.8, 2.5), (0.0, -5.5, -1.5)])
def test_arange_with_an_integer_dtype_casts_the_bounds(args: tuple) -> None:
    _close(pf.arange(*args, dtype=pf.int64), torch.arange(*args, dtype=torch.int64))
    _close(pf.arange(*args, dtype=pf.int32), torch.arange(*args, dtype=torch.int32))


def test_randint_forms() -> None:
    pf.manual_seed(0)
    a = pf.randint(3, (50,))
    b = pf.randint(-2, 2, (4, 5))
    c = pf.randint(5, size=(2,), dtype=pf.int32)
    assert a.shape == (50,) and a.dtype is pf.int64 and 0 <= a.numpy().min() <= a.numpy().max() < 3
    assert b.shape == (4, 5) and -2 <= b.numpy().min() and b.numpy().max() < 2
    assert c.dtype is pf.int32
    with pytest.raises(ValueError, match="randint"):
        pf.randint(3, 3, (2,))


@pytest.mark.parametrize("v", [1.5, -0.25, np.inf, np.nan])
def test_softmax_of_a_0d_tensor_and_its_gradient_match_torch(v: float) -> None:
    for fn, tfn in ((pf.softmax, torch.softmax), (pf.log_softmax, torch.log_softmax)):
        x, tx = pf.tensor(v, dtype=pf.float64, requires_grad=True), _t(np.float64(v), True)
        out, tout = fn(x, 0), tfn(tx, 0)
        out.backward()
        tout.backward()
        _close(out, tout)
        _close(x.grad, tx.grad, what=f"{fn.__name__} grad at {v}")


# ---- the data-side Tensor API ----

def test_tensor_api_around_the_data() -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x, tx = pf.from_numpy(a), torch.from_numpy(a)
    assert x.size() == tx.size() == (3, 4) and isinstance(x.size(), pf.Size)
    assert x.size(1) == 4 and x.size(-1) == 4 and x.size().numel() == 12
    assert x.dim() == x.ndimension() == 2 and x.numel() == x.nelement() == 12
    assert x.element_size() == tx.element_size() == 4
    assert x.contiguous() is x and x.is_contiguous() and x.cpu() is x
    assert x.device == "cpu" and x.device == pf.device("cpu") and str(x.device) == "cpu"
    assert x.to(pf.float64).dtype is pf.float64 and x.to("cpu") is x
    assert x.to("cpu", pf.int32).dtype is pf.int32 and x.to(pf.tensor([1])).dtype is pf.int64
    assert x.to(pf.float32, copy=True) is not x and x.to(pf.float32) is x
    assert x.to(device="cpu", dtype=pf.float16).dtype is pf.float16
    assert x.type() == "torch.FloatTensor" and x.type(pf.float64).dtype is pf.float64
    assert x.bfloat16().dtype is pf.bfloat16
    with pytest.raises(ValueError, match="cuda"):
        x.to("cuda")
    c = x.clone()
    assert c is not x and np.array_equal(c.numpy(), a)
    assert f"{x.sum():.1f}" == f"{tx.sum():.1f}" and f"{x}" == str(x)
    assert len(x) == 3 and [r.shape for r in x] == [(4,)] * 3
    assert float(x[1, 1]) == 5.0 and int(x[2, 0]) == 8 and bool(x[0, 1])


def test_numpy_torch_and_dlpack_interop() -> None:
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    x = pf.from_numpy(a) * 2
    assert np.array_equal(np.asarray(x), a * 2)
    t = torch.as_tensor(x)
    assert t.dtype == torch.float64 and np.array_equal(t.numpy(), a * 2)
    d = torch.from_dlpack(x)
    assert d.shape == (2, 3) and np.array_equal(d.numpy(), a * 2)
    back = pf.from_dlpack(torch.arange(4, dtype=torch.int32))
    assert back.dtype is pf.int32 and back.tolist() == [0, 1, 2, 3]
    assert x.__dlpack_device__() == (1, 0)


def test_clone_passes_gradients() -> None:
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    (x.clone() * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_new_ops_are_refused_by_the_csl_backend_naming_them() -> None:
    with pf.backend("csl"), pytest.raises(Exception, match="floor"):
        pf.floor(pf.randn(4, 4)).numpy()


def test_legacy_constructors_and_type_names_as_torch():
    import torch

    got = {}
    for L in (torch, pf):
        got[L.__name__] = [
            L.Tensor([1, 2]).tolist(), tuple(L.Tensor(2, 3).shape), tuple(L.Tensor().shape),
            str(L.FloatTensor([1, 2]).dtype).split(".")[-1], L.LongTensor([3]).tolist(),
            tuple(L.DoubleTensor(2).shape), isinstance(L.zeros(2), L.FloatTensor),
            isinstance(L.zeros(2), L.LongTensor), L.zeros(2).type(), L.arange(3).type(),
            str(L.zeros(2).type("torch.DoubleTensor").dtype).split(".")[-1],
            str(L.zeros(2).type(L.LongTensor).dtype).split(".")[-1],
            L.Tensor(L.tensor([1.0, 2.0])).tolist()]
    assert got["pyflame_mlir"] == got["torch"]
    with pytest.raises(TypeError, match="expected Float but got Long"):
        pf.Tensor(pf.tensor([1, 2]))
    with pytest.raises(ValueError, match="invalid type"):
        pf.zeros(2).type("torch.cuda.FloatTensor")


@pytest.mark.parametrize("dt", [pf.int32, "float16", np.float64])
def test_view_as_another_dtype_is_refused_by_name(dt):
    with pytest.raises(NotImplementedError, match=r"view\(.*\): reinterpreting the bytes"):
        pf.zeros(2, 3).view(dt)
