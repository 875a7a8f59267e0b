"""Differential tests of every op on hypothesis-drawn shapes (size-1 and 0-size
dims included), broadcasting pairs, dtypes, dims and operand forms.

Two independent oracles per case: torch on CPU (result dtype and values) and
numpy in float64 (values). Where torch rejects an input, pyflame must reject
it too, at record time (nothing evaluated), except for the few documented
extensions listed in ``EXTENSIONS``.
"""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from _oracles import (
    ALL_DTYPES,
    assert_close,
    broadcast_pair,
    dtypes,
    erf64,
    examples,
    from_torch,
    random_array,
    run_torch,
    seeds,
    shapes,
    to_torch,
    torch_dtype,
    wide,
)
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

SETTINGS = settings(max_examples=examples(40), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
FEW = settings(SETTINGS, max_examples=examples(25))
REJECT = (pf.ShapeError, TypeError, ValueError, IndexError)


def assert_rejected_at_record(fn, what: str = "") -> None:
    """``fn`` records ops only; it must raise before anything is evaluated."""
    before = pf.counters()
    with pytest.raises(REJECT):
        fn()
    after = pf.counters()
    assert after["evaluations"] == before["evaluations"], what
    assert after["compiles"] == before["compiles"], what


def leaf(rng, shape, dt, domain="any"):
    a = random_array(rng, shape, dt, domain)
    return pf.from_numpy(a), a


# ---------------------------------------------------------------- unary ops

_S2 = math.sqrt(2.0)
_S2PI = math.sqrt(2.0 / math.pi)

# name: (pyflame, torch, numpy float64 oracle, input domain)
UNARY = {
    "neg": (pf.neg, torch.neg, np.negative, "any"),
    "abs": (pf.abs, torch.abs, np.abs, "any"),
    "exp": (pf.exp, torch.exp, np.exp, "any"),
    "log": (pf.log, torch.log, np.log, "positive"),
    "log1p": (pf.log1p, torch.log1p, np.log1p, "positive"),
    "sqrt": (pf.sqrt, torch.sqrt, np.sqrt, "positive"),
    "rsqrt": (pf.rsqrt, torch.rsqrt, lambda x: 1.0 / np.sqrt(x), "positive"),
    "sin": (pf.sin, torch.sin, np.sin, "any"),
    "cos": (pf.cos, torch.cos, np.cos, "any"),
    "tanh": (pf.tanh, torch.tanh, np.tanh, "any"),
    "sigmoid": (pf.sigmoid, torch.sigmoid, lambda x: 1.0 / (1.0 + np.exp(-x)), "any"),
    "relu": (pf.relu, torch.relu, lambda x: np.maximum(x, 0.0), "any"),
    "gelu": (pf.gelu, F.gelu, lambda x: 0.5 * x * (1.0 + erf64(x / _S2)), "any"),
    "gelu_tanh": (lambda x: pf.gelu(x, approximate="tanh"),
                  lambda x: F.gelu(x, approximate="tanh"),
                  lambda x: 0.5 * x * (1.0 + np.tanh(_S2PI * (x + 0.044715 * x ** 3))),
                  "any"),
    "square": (pf.square, torch.square, np.square, "any"),
    "reciprocal": (pf.reciprocal, torch.reciprocal, lambda x: 1.0 / x, "nonzero"),
}
# Method spellings (x.exp()) and Python operators (-x, abs(x)).
METHOD = {
    "gelu_tanh": lambda x: x.gelu(approximate="tanh"),
    "neg": operator.neg,
    "abs": abs,
}

# Where torch raises but pyflame deliberately computes: integer input to
# gelu is promoted to the default float, like the other float-only math.
EXTENSIONS = {(op, d) for op in ("gelu", "gelu_tanh")
              for d in ("int32", "int64", "bool", "uint8", "int8", "int16")}


@SETTINGS
@given(name=st.sampled_from(sorted(UNARY)), shape=shapes(), dt=dtypes, seed=seeds,
       form=st.sampled_from(["function", "method"]))
def test_unary(name, shape, dt, seed, form):
    pf_fn, torch_fn, np_fn, domain = UNARY[name]
    if form == "method":
        pf_fn = METHOD.get(name) or (lambda x, n=name: getattr(x, n)())
    rng = np.random.default_rng(seed)
    x, a = leaf(rng, shape, dt, domain)
    expected, err = run_torch(lambda: torch_fn(to_torch(a)))
    if err is not None:
        if (name, dt.name) in EXTENSIONS:
            expected = torch_fn(to_torch(a).float())
        else:
            assert_rejected_at_record(lambda: pf_fn(x), f"{name} {dt.name}: torch: {err}")
            return
    out = pf_fn(x)
    assert_close(out, expected, what=f"{name} {dt.name} vs torch")
    ref = np_fn(wide(a))
    if not out.dtype.is_floating_point or not dt.is_floating_point:
        # (an integer input's float result, e.g. exp of a uint8 255, is float32 in
        # both libraries: the float64 oracle rounds to it, inf included)
        ref = ref.astype(out.dtype.np)
    assert_close(out, ref, what=f"{name} {dt.name} vs numpy")


# --------------------------------------------------------------- binary ops

BINARY = {  # name: (pyflame function, Python operator or None, torch fn, numpy fn)
    "add": (pf.add, operator.add, torch.add, np.add),
    "sub": (pf.sub, operator.sub, torch.sub, np.subtract),
    "mul": (pf.mul, operator.mul, torch.mul, np.multiply),
    "div": (pf.div, operator.truediv, torch.div, np.true_divide),
    "pow": (pf.pow, operator.pow, torch.pow, np.power),
    "maximum": (pf.maximum, None, torch.maximum, np.maximum),
    "minimum": (pf.minimum, None, torch.minimum, np.minimum),
    "eq": (pf.eq, operator.eq, torch.eq, np.equal),
    "ne": (pf.ne, operator.ne, torch.ne, np.not_equal),
    "lt": (pf.lt, operator.lt, torch.lt, np.less),
    "le": (pf.le, operator.le, torch.le, np.less_equal),
    "gt": (pf.gt, operator.gt, torch.gt, np.greater),
    "ge": (pf.ge, operator.ge, torch.ge, np.greater_equal),
}

# Scalars exactly representable in every float dtype (pyflame rounds a Python
# scalar to the tensor's dtype; torch keeps it in its compute type; with these
# values the two agree).
scalars = st.one_of(st.booleans(), st.integers(-3, 3),
                    st.sampled_from([-2.5, -1.0, -0.5, 0.0, 0.25, 1.5, 3.0]))


@st.composite
def operands(draw):
    (sa, sb), _ = draw(broadcast_pair())
    kinds = draw(st.sampled_from(["tt", "tt", "ts", "st"]))
    a = ("t", sa, draw(dtypes)) if kinds[0] == "t" else ("s", draw(scalars))
    b = ("t", sb, draw(dtypes)) if kinds[1] == "t" else ("s", draw(scalars))
    return a, b


def _make(rng, spec, domain="any"):
    if spec[0] == "s":
        return spec[1], spec[1], spec[1]
    _, shape, dt = spec
    arr = random_array(rng, shape, dt, domain)
    return pf.from_numpy(arr), to_torch(arr), arr


def _torch_binary(name, torch_fn, op, ta, tb):
    if op is not None:
        return op(ta, tb)
    if not isinstance(ta, torch.Tensor) or not isinstance(tb, torch.Tensor):
        # torch.maximum takes tensors only: convert the scalar with result_type
        rt = torch.result_type(ta, tb) if isinstance(ta, torch.Tensor) else \
            torch.result_type(tb, ta)
        ta = ta.to(rt) if isinstance(ta, torch.Tensor) else torch.tensor(ta, dtype=rt)
        tb = tb.to(rt) if isinstance(tb, torch.Tensor) else torch.tensor(tb, dtype=rt)
    return torch_fn(ta, tb)


def _np_binary(name, np_fn, a, b, out_dt):
    """float64 oracle on the operands converted to the promoted dtype."""
    def conv(v, other):
        if isinstance(v, np.ndarray):
            return wide(v.astype(out_dt.np) if name not in COMPARE else v)
        if name in COMPARE and type(v) is int and isinstance(other, np.ndarray) \
                and other.dtype.kind in "iu":  # torch compares in the tensor's integer type:
            return float(np.array(v, np.int64).astype(other.dtype))  # a C cast (-1 is 255)
        return float(v)
    x, y = conv(a, b), conv(b, a)
    with np.errstate(all="ignore"):
        r = np_fn(x, y)
        if name == "pow" and not out_dt.is_floating_point and out_dt is not pf.bool:
            r = np.where(np.isfinite(r), np.trunc(r), 0.0)  # torch's integer pow
    r = np.asarray(r)
    if out_dt is pf.bool and name not in COMPARE:
        r = r != 0
    elif out_dt in (pf.uint8, pf.int8, pf.int16) and name not in COMPARE:
        # 8/16-bit results wrap around (torch's integer arithmetic); exact in
        # float64 for these operands, so the wrap of the exact value
        r = np.where(np.isfinite(r), r, 0).astype(np.int64).astype(out_dt.np)
    return r


COMPARE = {"eq", "ne", "lt", "le", "gt", "ge"}


@SETTINGS
@given(name=st.sampled_from(sorted(BINARY)), ops=operands(), seed=seeds,
       form=st.sampled_from(["function", "operator"]))
@example(name="ge", ops=(("s", -1), ("t", (), pf.uint8)), seed=0, form="function")  # CI's find
def test_binary(name, ops, seed, form):
    pf_fn, op, torch_fn, np_fn = BINARY[name]
    spec_a, spec_b = ops
    # torch's pow(bool tensor, bool scalar) is a bool pow; ours (like numpy) refuses bool
    assume(not (name == "pow" and any(s[0] == "s" and isinstance(s[1], bool)
                                      for s in ops)))
    rng = np.random.default_rng(seed)
    xa, ta, na = _make(rng, spec_a)
    xb, tb, nb = _make(rng, spec_b, "positive" if name == "pow" else "any")
    if name == "pow" and spec_b[0] == "t" and spec_b[2] in (pf.int32, pf.int64):
        # include negative integer exponents (torch's integer pow semantics)
        nb = random_array(rng, nb.shape, spec_b[2], low=-3, high=3)
        xb, tb = pf.from_numpy(nb), to_torch(nb)
    expected, err = run_torch(lambda: _torch_binary(name, torch_fn, op, ta, tb))
    use_op = op is not None and form == "operator"

    def run():
        return op(xa, xb) if use_op else pf_fn(xa, xb)

    what = f"{name}({spec_a}, {spec_b}) via {'operator' if use_op else 'function'}"
    if err is not None:
        assert_rejected_at_record(run, f"{what}: torch: {err}")
        return
    out = run()
    assert_close(out, expected, what=what + " vs torch")
    assert_close(out, _np_binary(name, np_fn, na, nb, out.dtype), what=what + " vs numpy")


# --------------------------------------------------------------- where / clamp

@FEW
@given(shapes3=st.data(), seed=seeds, dx=dtypes, dy=dtypes,
       scalar_y=st.booleans())
def test_where(shapes3, seed, dx, dy, scalar_y):
    from hypothesis.extra import numpy as hnp

    (sc, sx, sy), _ = shapes3.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=3, max_dims=3, min_side=0, max_side=3))
    rng = np.random.default_rng(seed)
    c = np.asarray(rng.random(sc) < 0.5)
    x, a = leaf(rng, sx, dx)
    if scalar_y:
        y = b = 1.5 if dy.is_floating_point else 2
        ty = y
    else:
        y, b = leaf(rng, sy, dy)
        ty = to_torch(b)
    expected = torch.where(to_torch(c), to_torch(a), ty)
    out = pf.where(pf.from_numpy(c), x, y)
    assert_close(out, expected, what="where vs torch")
    dt = out.dtype.np
    ref = np.where(c, np.asarray(a).astype(dt), np.asarray(b).astype(dt))
    assert_close(out, ref, what="where vs numpy")


@FEW
@given(shape=shapes(max_dims=3), dt=st.sampled_from([pf.float32, pf.float64, pf.float16,
                                                     pf.bfloat16, pf.int32, pf.int64]),
       seed=seeds, lo=st.sampled_from([None, -1, -1.5, 0]),
       hi=st.sampled_from([None, 2, 0.5, -2]), tensor_bounds=st.booleans())
def test_clamp(shape, dt, seed, lo, hi, tensor_bounds):
    assume(lo is not None or hi is not None)
    rng = np.random.default_rng(seed)
    x, a = leaf(rng, shape, dt)
    if tensor_bounds:  # 0-d tensor bounds of the input's dtype
        plo = None if lo is None else pf.tensor(lo, dtype=dt)
        phi = None if hi is None else pf.tensor(hi, dtype=dt)
        tlo = None if lo is None else torch.tensor(lo, dtype=torch_dtype(dt))
        thi = None if hi is None else torch.tensor(hi, dtype=torch_dtype(dt))
    else:
        plo, phi, tlo, thi = lo, hi, lo, hi
    expected = torch.clamp(to_torch(a), tlo, thi)
    out = pf.clamp(x, plo, phi) if form_is_function(seed) else x.clamp(plo, phi)
    assert_close(out, expected, what=f"clamp {dt.name} [{lo}, {hi}]")
    ref = wide(a)
    if lo is not None:
        ref = np.maximum(ref, float(np.asarray(lo).astype(out.dtype.np)))
    if hi is not None:
        ref = np.minimum(ref, float(np.asarray(hi).astype(out.dtype.np)))
    assert_close(out, ref.astype(out.dtype.np), what="clamp vs numpy")


def form_is_function(seed: int) -> bool:
    return seed % 2 == 0


# --------------------------------------------------------------- reductions

@st.composite
def reduce_case(draw, tuple_ok=True, none_ok=True):
    shape = draw(shapes(max_dims=4, max_side=4))
    nd = len(shape)
    kinds = (["none"] if none_ok else []) + ["int"]
    if tuple_ok:
        kinds.append("tuple")
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        dim = None
    elif kind == "int":
        dim = draw(st.integers(-max(nd, 1), max(nd, 1) - 1))
    else:
        if nd == 0:
            dim = draw(st.sampled_from([(), (0,), (-1,)]))
        else:
            picked = draw(st.lists(st.integers(0, nd - 1), unique=True, min_size=1,
                                   max_size=nd))
            dim = tuple(d - nd if draw(st.booleans()) else d for d in picked)
    return shape, dim, draw(st.booleans())


def _axis(dim, nd):
    if dim is None or dim == ():
        return None
    if isinstance(dim, int):
        return dim % nd if nd else None
    return tuple(d % nd for d in dim) if nd else None


REDUCTIONS = ("sum", "mean", "amax", "amin", "max", "min", "logsumexp")


def _torch_reduce(name, t, dim, keepdim):
    if name in ("max", "min"):
        if dim is None:
            r = getattr(torch, name)(t)
            return torch.reshape(r, (1,) * t.ndim) if keepdim else r
        if isinstance(dim, int):
            return getattr(torch, name)(t, dim, keepdim=keepdim)
        return getattr(torch, "a" + name)(t, dim=dim, keepdim=keepdim)
    if name in ("amax", "amin"):
        return getattr(torch, name)(t, dim=() if dim is None else dim, keepdim=keepdim)
    if name == "logsumexp":
        return torch.logsumexp(t, dim=tuple(range(t.ndim)) if dim is None else dim,
                               keepdim=keepdim)
    return getattr(torch, name)(t, dim=dim, keepdim=keepdim)


_NP_RED = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min, "max": np.max,
           "min": np.min}


def _np_reduce(name, a, dim, keepdim):
    x = wide(a)
    ax = _axis(dim, x.ndim)
    with np.errstate(all="ignore"):
        if name == "logsumexp":
            m = np.max(x, axis=ax, keepdims=True) if x.size else np.zeros(())
            m = np.where(np.isfinite(m), m, 0.0)
            r = np.log(np.sum(np.exp(x - m), axis=ax, keepdims=True)) + m
            return r if keepdim else (np.squeeze(r, axis=ax) if x.ndim else r.reshape(()))
        return np.asarray(_NP_RED[name](x, axis=ax, keepdims=keepdim))


@SETTINGS
@given(name=st.sampled_from(REDUCTIONS), case=reduce_case(), dt=dtypes, seed=seeds,
       form=st.sampled_from(["function", "method"]))
def test_reduction(name, case, dt, seed, form):
    shape, dim, keepdim = case
    if name == "logsumexp" and dim in (None, ()):
        dim = tuple(range(len(shape))) or (0,)  # torch's logsumexp needs dims
    rng = np.random.default_rng(seed)
    x, a = leaf(rng, shape, dt)
    expected, err = run_torch(lambda: _torch_reduce(name, to_torch(a), dim, keepdim))
    fn = getattr(pf, name) if form == "function" else getattr(x, name)
    args = (x,) if form == "function" else ()

    def run():
        if dim is None and name not in ("logsumexp",):
            return fn(*args, keepdim=keepdim) if keepdim else fn(*args)
        return fn(*args, dim, keepdim=keepdim)

    what = f"{name}({dt.name}{list(shape)}, dim={dim}, keepdim={keepdim})"
    if err is not None:
        assert_rejected_at_record(run, f"{what}: torch: {err}")
        return
    out = run()
    n = max(1, int(np.prod(shape)))
    if isinstance(dim, int) and name in ("max", "min"):
        values, indices = out
        assert isinstance(out, pf.ValuesIndices) and out.values is values
        assert_close(values, expected.values, what=what + " values")
        assert_close(indices, expected.indices, what=what + " indices")
        if shape:  # the indices pick the values, and are the first extreme
            ax = dim % len(shape)
            idx = indices.numpy() if keepdim else np.expand_dims(indices.numpy(), ax)
            picked = np.take_along_axis(a, idx, axis=ax).reshape(values.shape)
            assert_close(values, picked, rtol=0, atol=0, what=what + " gather")
            first = getattr(np, "arg" + name)(wide(a), axis=ax, keepdims=keepdim)
            assert_close(indices, first, what=what + " first index")
        return
    assert_close(out, expected, scale=4 * n, what=what + " vs torch")
    ref = _np_reduce(name, a, dim, keepdim)
    if not out.dtype.is_floating_point:
        ref = ref.astype(out.dtype.np)
    assert_close(out, ref, scale=4 * n, what=what + " vs numpy")


@SETTINGS
@given(name=st.sampled_from(["argmax", "argmin"]), case=reduce_case(tuple_ok=False),
       dt=dtypes, seed=seeds, form=st.sampled_from(["function", "method"]))
def test_arg_reduction(name, case, dt, seed, form):
    shape, dim, keepdim = case
    rng = np.random.default_rng(seed)
    x, a = leaf(rng, shape, dt)  # small ints: many ties, first index wins
    expected, err = run_torch(lambda: getattr(torch, name)(to_torch(a), dim=dim,
                                                           keepdim=keepdim))
    fn = getattr(pf, name) if form == "function" else getattr(x, name)
    args = (x,) if form == "function" else ()
    what = f"{name}({dt.name}{list(shape)}, dim={dim}, keepdim={keepdim})"
    if err is not None:
        assert_rejected_at_record(lambda: fn(*args, dim=dim, keepdim=keepdim), what)
        return
    out = fn(*args, dim=dim, keepdim=keepdim)
    assert_close(out, expected, what=what + " vs torch")
    ref = getattr(np, name)(wide(a), axis=_axis(dim, a.ndim), keepdims=keepdim)
    assert_close(out, np.asarray(ref).reshape(out.shape), what=what + " vs numpy")


@SETTINGS
@given(name=st.sampled_from(["softmax", "log_softmax"]), shape=shapes(min_dims=1,
                                                                      max_side=5),
       dt=dtypes, seed=seeds, data=st.data())
def test_softmax_family(name, shape, dt, seed, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(seed)
    x, a = leaf(rng, shape, dt)
    if dt.is_floating_point:
        expected = getattr(torch, name)(to_torch(a), dim)
    else:  # extension: integer input is promoted to the default float
        if a.size:
            assert run_torch(lambda: getattr(torch, name)(to_torch(a), dim))[1] is not None
        expected = getattr(torch, name)(to_torch(a).float(), dim)
    out = getattr(pf, name)(x, dim) if data.draw(st.booleans()) else getattr(x, name)(dim)
    what = f"{name}({dt.name}{list(shape)}, dim={dim})"
    assert_close(out, expected, what=what + " vs torch")
    w = wide(a)
    ax = dim % len(shape)
    e = np.exp(w - (np.max(w, axis=ax, keepdims=True) if w.size else 0))
    s = e / np.sum(e, axis=ax, keepdims=True)
    with np.errstate(all="ignore"):
        ref = s if name == "softmax" else np.log(s)
    assert_close(out, ref, what=what + " vs numpy")


# ------------------------------------------------------------------ matmul

@st.composite
def matmul_shapes(draw):
    kind = draw(st.sampled_from(["1x1", "1x2", "2x1", "2x2", "nx1", "1xn", "nxn", "nxn"]))
    m, k, n = (draw(st.integers(0, 4)) for _ in range(3))
    if kind == "1x1":
        return (k,), (k,)
    if kind == "1x2":
        return (k,), (k, n)
    if kind == "2x1":
        return (m, k), (k,)
    if kind == "2x2":
        return (m, k), (k, n)
    from hypothesis.extra import numpy as hnp
    (ba, bb), _ = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0,
                                                           max_dims=2, max_side=3))
    if kind == "nx1":
        return ba + (m, k), (k,)
    if kind == "1xn":
        return (k,), bb + (k, n)
    return ba + (m, k), bb + (k, n)


@SETTINGS
@given(shp=matmul_shapes(), da=dtypes, db=dtypes, seed=seeds,
       form=st.sampled_from(["operator", "function", "method"]))
def test_matmul(shp, da, db, seed, form):
    sa, sb = shp
    rng = np.random.default_rng(seed)
    xa, a = leaf(rng, sa, da)
    xb, b = leaf(rng, sb, db)
    rt = torch.promote_types(torch_dtype(da), torch_dtype(db))

    def run():
        if form == "operator":
            return xa @ xb
        return pf.matmul(xa, xb) if form == "function" else xa.matmul(xb)

    # torch's matmul does not promote; pyflame promotes (documented): the
    # oracle runs torch on the promoted operands.
    expected, err = run_torch(lambda: torch.matmul(to_torch(a).to(rt), to_torch(b).to(rt)))
    what = f"matmul {da.name}{list(sa)} @ {db.name}{list(sb)}"
    if err is not None or rt == torch.bool:  # (torch lets empty bool matmuls through)
        assert_rejected_at_record(run, f"{what}: torch: {err}")
        return
    out = run()
    k = sa[-1]
    assert_close(out, expected, scale=16 * max(k, 1), what=what + " vs torch")
    ref = np.matmul(wide(a.astype(out.dtype.np)), wide(b.astype(out.dtype.np)))
    assert_close(out, ref.astype(out.dtype.np) if not out.dtype.is_floating_point else ref,
                 scale=16 * max(k, 1), what=what + " vs numpy")


# -------------------------------------------------------------- shape ops

def _both(x, a, pf_fn, torch_fn, np_fn=None, what=""):
    """Run a data-movement op on pyflame and torch (and numpy): exact equality,
    or both reject."""
    expected, err = run_torch(lambda: torch_fn(to_torch(a)))
    if err is not None:
        assert_rejected_at_record(lambda: pf_fn(x), f"{what}: torch: {err}")
        return None
    out = pf_fn(x)
    if isinstance(expected, list | tuple):
        assert isinstance(out, list | tuple) and len(out) == len(expected), what
        for o, e in zip(out, expected):
            assert_close(o, e, rtol=0, atol=0, what=what)
        return out
    assert_close(out, expected, rtol=0, atol=0, what=what)
    if np_fn is not None:
        assert_close(out, np_fn(a), rtol=0, atol=0, what=what + " vs numpy")
    return out


@st.composite
def reshape_target(draw, shape):
    n = int(np.prod(shape))
    cands = [tuple(reversed(shape)), (n,), (-1,), (1,) + tuple(shape), tuple(shape) + (1,)]
    if len(shape) >= 1:
        i = draw(st.integers(0, len(shape) - 1))
        cands.append(tuple(-1 if j == i else d for j, d in enumerate(shape)))
    if len(shape) >= 2:
        cands.append((shape[0] * shape[1],) + tuple(shape[2:]))
        cands.append((-1, shape[-1]))
    cands.append((n + 1,))  # invalid unless ... never valid
    cands.append((0, -1))
    return draw(st.sampled_from(cands))


@SETTINGS
@given(data=st.data(), shape=shapes(max_dims=4, max_side=4), dt=dtypes, seed=seeds)
def test_reshape_view_flatten(data, shape, dt, seed):
    rng = np.random.default_rng(seed)
    x, a = leaf(rng, shape, dt)
    target = data.draw(reshape_target(shape))
    spelled = data.draw(st.sampled_from(["tuple", "varargs", "view", "function"]))

    def pf_fn(t):
        if spelled == "tuple":
            return t.reshape(target)
        if spelled == "varargs":
            return t.reshape(*target)
        return t.view(target) if spelled == "view" else pf.reshape(t, target)
    _both(x, a, pf_fn, lambda t: t.reshape(target), what=f"reshape {shape} -> {target}")
    nd = max(len(shape), 1)
    s = data.draw(st.integers(-nd, nd - 1))
    e = data.draw(st.integers(-nd, nd - 1))
    _both(x, a, lambda t: t.flatten(s, e), lambda t: t.flatten(s, e),
          what=f"flatten {shape} ({s}, {e})")
    _both(x, a, lambda t: pf.flatten(t), lambda t: torch.flatten(t), np.ravel,
          what=f"flatten {shape}")


@SETTINGS
@given(data=st.data(), shape=shapes(max_dims=4, max_side=3), dt=dtypes, seed=seeds)
def test_squeeze_unsqueeze_transpose_permute(data, shape, dt, seed):
    rng = np.random.default_rng(seed)
    x, a = leaf(rng, shape, dt)
    nd = len(shape)
    span = max(nd, 1)
    sq = data.draw(st.one_of(st.none(), st.integers(-span, span - 1),
                             st.lists(st.integers(-span, span - 1), max_size=3)
                             .map(tuple)))
    _both(x, a, lambda t: t.squeeze() if sq is None else t.squeeze(sq),
          lambda t: t.squeeze() if sq is None else t.squeeze(sq),
          what=f"squeeze {shape} {sq}")
    u = data.draw(st.integers(-nd - 1, nd))
    _both(x, a, lambda t: pf.unsqueeze(t, u), lambda t: t.unsqueeze(u),
          lambda v: np.expand_dims(v, u), what=f"unsqueeze {shape} {u}")
    d0, d1 = data.draw(st.integers(-span, span - 1)), data.draw(st.integers(-span, span - 1))
    _both(x, a, lambda t: t.transpose(d0, d1), lambda t: t.transpose(d0, d1),
          what=f"transpose {shape} {d0} {d1}")
    perm = data.draw(st.permutations(range(nd)))
    perm = [p - nd if data.draw(st.booleans()) else p for p in perm]
    # (torch's varargs permute needs at least one dim: 0-d uses the tuple form)
    _both(x, a, lambda t: t.permute(*perm) if perm else t.permute(()),
          lambda t: t.permute(*perm) if perm else t.permute(()),
          lambda v: np.transpose(v, [p % nd for p in perm]) if nd else v,
          what=f"permute {shape} {perm}")
    _both(x, a, lambda t: pf.permute(t, perm), lambda t: t.permute(perm),
          what=f"permute {shape} {perm}")
    # .T reverses all dims (numpy); torch agrees on ndim <= 2 (deprecated above)
    assert_close(x.T, np.transpose(a), rtol=0, atol=0, what=f".T {shape}")
    if nd <= 2:
        assert_close(x.T, to_torch(a).T, rtol=0, atol=0, what=f".T {shape}")


@SETTINGS
@given(data=st.data(), dt=dtypes, seed=seeds)
def test_expand_broadcast_to(data, dt, seed):
    from hypothesis.extra import numpy as hnp

    shape = data.draw(shapes(max_dims=3, max_side=3))
    target = data.draw(hnp.broadcastable_shapes(shape, min_dims=len(shape), max_dims=4,
                                                min_side=0, max_side=3))
    # a target that actually covers `shape`: broadcast of the two
    try:
        target = np.broadcast_shapes(target, shape)
    except ValueError:
        return
    rng = np.random.default_rng(seed)
    x, a = leaf(rng, shape, dt)
    _both(x, a, lambda t: pf.broadcast_to(t, target), lambda t: torch.broadcast_to(t, target),
          lambda v: np.broadcast_to(v, target), what=f"broadcast_to {shape} -> {target}")
    off = len(target) - len(shape)
    sizes = tuple(-1 if i >= off and data.draw(st.booleans()) else d
                  for i, d in enumerate(target))
    _both(x, a, lambda t: t.expand(*sizes) if sizes else t.expand(()),
          lambda t: t.expand(*sizes) if sizes else t.expand(()),
          what=f"expand {shape} -> {sizes}")
    bad = tuple(target[:-1]) + (target[-1] + 2,) if target else (2,)
    _both(x, a, lambda t: t.expand(bad), lambda t: t.expand(bad),
          what=f"expand {shape} -> {bad}")


@SETTINGS
@given(data=st.data(), seed=seeds)
def test_cat_stack(data, seed):
    base = data.draw(shapes(min_dims=1, max_dims=3, max_side=3))
    nd = len(base)
    dim = data.draw(st.integers(-nd, nd - 1))
    count = data.draw(st.integers(1, 4))
    rng = np.random.default_rng(seed)
    arrays = []
    for _ in range(count):
        s = list(base)
        s[dim % nd] = data.draw(st.integers(0, 3))
        arrays.append(random_array(rng, s, data.draw(dtypes)))
    xs = [pf.from_numpy(v) for v in arrays]
    ts = [to_torch(v) for v in arrays]
    what = f"cat {[(v.dtype.name, v.shape) for v in arrays]} dim={dim}"
    expected, err = run_torch(lambda: torch.cat(ts, dim))
    assert err is None, err
    out = pf.cat(xs, dim) if data.draw(st.booleans()) else pf.concat(xs, dim=dim)
    assert_close(out, expected, rtol=0, atol=0, what=what)
    # stack: same shapes, mixed dtypes
    sdim = data.draw(st.integers(-nd - 1, nd))
    same = [random_array(rng, base, data.draw(dtypes)) for _ in range(count)]
    out = pf.stack([pf.from_numpy(v) for v in same], sdim)
    assert_close(out, torch.stack([to_torch(v) for v in same], sdim), rtol=0, atol=0,
                 what=f"stack {base} x{count} dim={sdim}")


@SETTINGS
@given(data=st.data(), shape=shapes(min_dims=1, max_dims=3, max_side=7), dt=dtypes,
       seed=seeds)
def test_split_chunk(data, shape, dt, seed):
    rng = np.random.default_rng(seed)
    x, a = leaf(rng, shape, dt)
    nd = len(shape)
    dim = data.draw(st.integers(-nd, nd - 1))
    size = data.draw(st.integers(1, 8))
    _both(x, a, lambda t: t.split(size, dim), lambda t: t.split(size, dim),
          what=f"split {shape} {size} dim={dim}")
    n = shape[dim % nd]
    parts = data.draw(st.lists(st.integers(0, n), min_size=1, max_size=4))
    if data.draw(st.booleans()) and sum(parts) <= n:
        parts.append(n - sum(parts))  # a valid list of sections
    _both(x, a, lambda t: pf.split(t, parts, dim), lambda t: torch.split(t, parts, dim),
          what=f"split {shape} {parts} dim={dim}")
    chunks = data.draw(st.integers(1, 8))
    _both(x, a, lambda t: pf.chunk(t, chunks, dim), lambda t: torch.chunk(t, chunks, dim),
          what=f"chunk {shape} {chunks} dim={dim}")


# --------------------------------------------------------------- astype

@SETTINGS
@given(shape=shapes(max_dims=3), src=dtypes, dst=dtypes, seed=seeds,
       form=st.sampled_from(["astype", "to", "function"]))
def test_astype(shape, src, dst, seed, form):
    rng = np.random.default_rng(seed)
    a = random_array(rng, shape, src, low=-40, high=40)
    if src.is_floating_point:
        a = np.asarray(a * 16).astype(src.np)  # values with fractions, still in range of int32
    x = pf.from_numpy(a)
    if form == "astype":
        out = x.astype(dst)
    elif form == "to":
        out = x.to(torch_dtype(dst) if seed % 2 else dst.name)
    else:
        out = pf.convert(x, dst)
    expected = to_torch(a).to(torch_dtype(dst))
    assert_close(out, expected, rtol=0, atol=0, what=f"{src.name} -> {dst.name}")
    assert_close(out, from_torch(expected), rtol=0, atol=0)


def test_all_dtypes_listed():
    assert {d.name for d in ALL_DTYPES} == {"float32", "float64", "float16", "bfloat16",
                                             "int32", "int64", "bool", "uint8", "int8",
                                             "int16"}
