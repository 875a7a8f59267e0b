"""pf.vmap: the batching rules (each op's rule against a stack of the op's
own kernel per example), the transform end to end (against torch.func.vmap
and Python loops), its composition with grad/jacrev/jacfwd, and its errors."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from pyflame_mlir.dialects import OPS
from pyflame_mlir.dialects.batching import BATCHING, BatchingBuilder, BValue
from pyflame_mlir.dialects.dtypes import dtype as to_dtype

import pyflame_mlir as pf

SCALE = float(os.environ.get("PYFLAME_TEST_SCALE", "1"))
N = 3  # batch size of the rule table
rng = np.random.default_rng(0)


# ---- every rule against the op's kernel, per example ----

class NumpyBuilder:
    """The builder interface of dialects/ad.py on numpy arrays: each op runs
    its shape rule and its reference kernel (the oracle of the rule table)."""

    def shape(self, v: np.ndarray) -> tuple[int, ...]:
        return tuple(v.shape)

    def dtype(self, v: np.ndarray):
        return to_dtype(v.dtype)

    def op(self, name: str, *inputs: np.ndarray, **attrs):
        opdef = OPS[name]
        specs = opdef.check([v.shape for v in inputs], [self.dtype(v) for v in inputs], attrs)
        out = opdef.kernel(*inputs, **attrs)
        outs = list(out) if isinstance(out, tuple | list) else [out]
        for o, (shape, d) in zip(outs, specs):
            assert o.shape == tuple(shape) and o.dtype == d.np, (name, o.shape, shape)
        return outs[0] if opdef.num_results == 1 else outs

    def scalar(self, value, like):
        return np.asarray(value, dtype=like.dtype)

    def __getattr__(self, name: str):
        if name in OPS:
            return lambda *inputs, **attrs: self.op(name, *inputs, **attrs)
        raise AttributeError(name)


def _f(*shape, lo=-2.0, hi=2.0):
    return lambda: rng.uniform(lo, hi, size=shape).astype(np.float32)


def _i(*shape, lo=-5, hi=5):
    return lambda: rng.integers(lo, hi, size=shape).astype(np.int64)


def _b(*shape):
    return lambda: rng.random(shape) < 0.5


POS = {"log", "sqrt", "rsqrt", "log1p", "reciprocal"}
UNIT = {"asin", "acos"}
INT_OPS = {"bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor"}
BOOL_OPS = {"logical_not", "logical_and", "logical_or"}

# op name -> list of (input makers, attrs); one example's operands
CASES: dict[str, list[tuple[list, dict]]] = {}


def case(name: str, makers: list, **attrs) -> None:
    CASES.setdefault(name, []).append((makers, attrs))


for _name, _op in OPS.items():
    if _op.family != "elementwise" or _name in ("where", "convert", "gelu", "gelu_grad"):
        continue
    if _op.num_inputs == 1:
        mk = (_f(2, 3, lo=0.1) if _name in POS else _f(2, 3, lo=-0.9, hi=0.9)
              if _name in UNIT else _i(2, 3) if _name in INT_OPS else _b(2, 3)
              if _name in BOOL_OPS else _f(2, 3))
        case(_name, [mk])
    else:
        if _name in INT_OPS:
            case(_name, [_i(2, 3), _i(3)])
        elif _name in BOOL_OPS:
            case(_name, [_b(2, 3), _b(3)])
        elif _name in ("pow", "fmod", "floor_divide", "div"):
            case(_name, [_f(2, 3, lo=0.5), _f(3, lo=0.5)])
            case(_name, [_f(lo=0.5), _f(2, 1, lo=0.5)])
        else:
            case(_name, [_f(2, 3), _f(3)])  # broadcasting
            case(_name, [_f(), _f(2, 3)])  # a scalar operand
case("where", [_b(2, 3), _f(3), _f(2, 1)])
case("convert", [_f(2, 3)], dtype=to_dtype(np.int64))
case("gelu", [_f(2, 3)], approximate="tanh")
for _name in ("sum", "mean", "prod"):
    case(_name, [_f(2, 3, 4)], dims=(0, 2), keepdim=False)
    case(_name, [_f(2, 3)], dims=(1,), keepdim=True)
    case(_name, [_f()], dims=(), keepdim=False)
for _name in ("max", "min"):
    case(_name, [_f(2, 3)], dims=(1,), keepdim=False, ties=None)
    case(_name, [_f(2, 3)], dims=(0,), keepdim=True, ties="first")
for _name in ("argmax", "argmin"):
    case(_name, [_f(2, 3)], dim=1, keepdim=False)
    case(_name, [_f(2, 3)], dim=None, keepdim=True)
    case(_name, [_f(2, 3)], dim=None, keepdim=False)
    case(_name, [_f()], dim=None, keepdim=False)
case("logsumexp", [_f(2, 3)], dims=(0, 1), keepdim=True)
for _name in ("softmax", "log_softmax"):
    case(_name, [_f(2, 3)], dim=0)
case("cumsum", [_f(2, 3)], dim=1, reverse=True)
case("logcumsumexp", [_f(2, 3)], dim=0, reverse=False)
case("cumprod", [_f(2, 3)], dim=1)
for _name in ("cummax", "cummin"):
    case(_name, [_f(2, 3)], dim=0)
case("sort", [_f(2, 4)], dim=1, descending=True)
case("split", [_f(2, 5)], sizes=(2, 3), dim=1)
case("concat", [_f(2, 3), _f(1, 3), _f(4, 3)], dim=0)
case("reshape", [_f(2, 3)], shape=(3, 1, 2))
case("permute", [_f(2, 3, 4)], perm=(2, 0, 1))
case("broadcast_to", [_f(3)], shape=(2, 3))
case("broadcast_to", [_f(1, 3)], shape=(4, 2, 3))
case("slice", [_f(4, 5)], start=(1, 0), limit=(4, 5), stride=(2, 2))
case("pad", [_f(2, 3)], low=(1, 0), high=(0, 2), interior=(1, 0))
case("gather", [_f(4, 3), _i(2, 3, lo=0, hi=4)], dim=0)
case("scatter_add", [_f(4, 3), _i(2, 3, lo=0, hi=4), _f(2, 3)], dim=0)
case("select_along", [_f(3, 4), _i(3, 2, lo=0, hi=4)], dim=1)
case("scatter_add_along", [_f(3, 2), _i(3, 2, lo=0, hi=5)], dim=1, size=5)
case("gelu_grad", [_f(2, 3), _f(2, 3), _f(2, 3)])
_WINDOW = {"kernel": (2, 2), "stride": (2, 1), "padding": (1, 0), "dilation": (1, 1),
           "ceil_mode": True}
case("max_pool", [_f(2, 5, 4)], **_WINDOW)
case("max_pool", [_f(4, 3)], kernel=(3,), stride=(2,), padding=(1,), dilation=(1,),
     ceil_mode=False)
case("max_pool_grad", [_f(2, 3, 3), _i(2, 3, 3, lo=0, hi=4)], **_WINDOW, size=(5, 4))
for _sa, _sb in (((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)),
                 ((2, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4))):
    case("matmul", [_f(*_sa), _f(*_sb)])
for _name in ("fused_add_relu", "fused_mul_sigmoid"):
    case(_name, [_f(2, 3), _f(3)])
case("fused_fma", [_f(2, 3), _f(3), _f(2, 3)])
case("fused_matmul_relu", [_f(2, 3), _f(3, 4)])
case("fused_matmul_gelu", [_f(2, 3), _f(3, 4)], approximate="none")
# matrix decompositions and solvers (dialects/decomp.py): well-conditioned inputs


def _spd(n):
    def make():
        x = rng.uniform(-1, 1, (n, n))
        return (x @ x.T + n * np.eye(n)).astype(np.float32)
    return make


for _name, _attrs in (("solve", {}), ("solve_triangular", {"upper": True,
                                                           "unitriangular": False})):
    case(_name, [_spd(3), _f(3, 2)], **_attrs)
for _name, _attrs in (("cholesky", {}), ("slogdet", {}), ("det", {}), ("eigh", {"lower": True})):
    case(_name, [_spd(3)], **_attrs)
case("qr", [_f(4, 3)], complete=False)
case("svd", [_f(3, 4)], full_matrices=False)
case("pinv", [_f(3, 4)], atol=0.0, rtol=1e-6, hermitian=False)
case("pinv", [_spd(3)], atol=0.1, rtol=0.0, hermitian=True)
case("matrix_exp", [_f(3, 3)])
case("lu_factor", [_f(3, 4)])  # issue 14 (s10-surface14)
case("lu_factor", [_f(4, 3)])

NO_INPUTS = {"constant", "iota"}  # never batched: an op without operands is the same for all


def test_every_op_has_a_batching_rule_or_a_decomposition_and_a_case():
    for name, op in OPS.items():
        if name in NO_INPUTS:
            continue
        assert op in BATCHING or op.decomposition is not None, name
        assert name in CASES, f"no table case for {name}"


def _rule_cases():
    for name, cases in CASES.items():
        for k, (makers, attrs) in enumerate(cases):
            for batched in itertools.product([False, True], repeat=len(makers)):
                if any(batched):
                    yield pytest.param(name, makers, attrs, batched,
                                       id=f"{name}-{k}-" + "".join("b" if x else "u"
                                                                   for x in batched))


@pytest.mark.parametrize("name,makers,attrs,batched", list(_rule_cases()))
def test_rule_equals_stack_of_examples(name, makers, attrs, batched):
    b = NumpyBuilder()
    examples = [[mk() for mk in makers] for _ in range(N)]
    values = [np.stack([ex[i] for ex in examples]) if bt else examples[0][i]
              for i, bt in enumerate(batched)]
    for ex in examples:  # unbatched operands are the same for every example
        for i, bt in enumerate(batched):
            if not bt:
                ex[i] = examples[0][i]
    expected = [b.op(name, *ex, **attrs) for ex in examples]
    got = BatchingBuilder(b, N).op(name, *[BValue(v, bt) for v, bt in zip(values, batched)],
                                   **attrs)
    got = got if isinstance(got, list) else [got]
    expected = [e if isinstance(e, list) else [e] for e in expected]
    for r, g in enumerate(got):
        assert g.batched
        want = np.stack([e[r] for e in expected])
        np.testing.assert_allclose(g.value, want, rtol=1e-5, atol=1e-6, err_msg=name)


# ---- the transform end to end ----

def _loop(f, *xs):
    return np.stack([f(*[pf.tensor(x[i]) for x in xs]).numpy() for i in range(len(xs[0]))])


def _r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_vmap_matches_torch_func_vmap_and_a_loop():
    x, w = _r(5, 4), _r(4, 3)

    def f(v):
        return pf.softmax(pf.tanh(v @ pf.tensor(w)), dim=-1).cumsum(0)[1:] * v.sum()

    def tf(v):
        return torch.softmax(torch.tanh(v @ torch.tensor(w)), dim=-1).cumsum(0)[1:] * v.sum()

    got = pf.vmap(f)(pf.tensor(x)).numpy()
    np.testing.assert_allclose(got, torch.func.vmap(tf)(torch.tensor(x)).numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(got, _loop(f, x), rtol=1e-5, atol=1e-6)


def test_in_axes_none_negative_and_pytrees():
    a, b, c = _r(3, 4), _r(4, 5), _r(2, 5)

    def f(tree, s):
        return {"y": tree["p"] * s + tree["q"][0], "z": tree["q"][1].sum()}

    tree = {"p": pf.tensor(b), "q": (pf.tensor(a), pf.tensor(c))}
    out = pf.vmap(f, in_axes=({"p": -1, "q": (None, 1)}, None), out_axes={"y": 1, "z": 0})(
        tree, pf.tensor(np.float32(2.0)))
    tt = {"p": torch.tensor(b), "q": (torch.tensor(a), torch.tensor(c))}

    def tf(tree, s):
        return {"y": tree["p"] * s + tree["q"][0], "z": tree["q"][1].sum()}
    want = torch.func.vmap(tf, in_dims=({"p": -1, "q": (None, 1)}, None),
                           out_dims={"y": 1, "z": 0})(tt, torch.tensor(2.0))
    assert set(out) == {"y", "z"}
    np.testing.assert_allclose(out["y"].numpy(), want["y"].numpy(), rtol=1e-6)
    np.testing.assert_allclose(out["z"].numpy(), want["z"].numpy(), rtol=1e-6)


def test_unbatched_output_is_broadcast_and_out_axes_none():
    x, w = _r(3, 2), _r(2)
    y, z = pf.vmap(lambda v: (pf.tensor(w) * 2, v.sum()))(pf.tensor(x))
    np.testing.assert_allclose(y.numpy(), np.broadcast_to(w * 2, (3, 2)), rtol=1e-6)
    np.testing.assert_allclose(z.numpy(), x.sum(1), rtol=1e-6)
    w2 = pf.vmap(lambda v: pf.tensor(w) + 1, out_axes=None)(pf.tensor(x))
    np.testing.assert_allclose(w2.numpy(), w + 1)
    with pytest.raises(ValueError, match="mapped output.*out_axes is None"):
        pf.vmap(lambda v: v * 2, out_axes=None)(pf.tensor(x))


def test_axis_size_when_no_input_is_mapped():
    w = _r(3)
    out = pf.vmap(lambda v: v * 2, in_axes=None, axis_size=4)(pf.tensor(w))
    np.testing.assert_allclose(out.numpy(), np.broadcast_to(w * 2, (4, 3)), rtol=1e-6)
    with pytest.raises(ValueError, match="at least one non-None"):
        pf.vmap(lambda v: v, in_axes=None)(pf.tensor(w))
    with pytest.raises(ValueError, match="axis_size=5"):
        pf.vmap(lambda v: v, axis_size=5)(pf.tensor(_r(4, 2)))


def test_inconsistent_sizes_and_bad_axes_raise():
    with pytest.raises(ValueError, match="inconsistent sizes.*\n.*shape \\[3, 2\\].*\n.*"
                                         "shape \\[4\\]"):
        pf.vmap(lambda a, b: a.sum() + b)(pf.tensor(_r(3, 2)), pf.tensor(_r(4)))
    with pytest.raises(ValueError, match="out of bounds"):
        pf.vmap(lambda a: a, in_axes=2)(pf.tensor(_r(3, 2)))
    with pytest.raises(ValueError, match="rank should be at least 1"):
        pf.vmap(lambda a: a)(pf.tensor(np.float32(1)))
    with pytest.raises(ValueError, match="len\\(in_axes\\)=1, len\\(args\\)=2"):
        pf.vmap(lambda a, b: a, in_axes=(0,))(pf.tensor(_r(3)), pf.tensor(_r(3)))
    with pytest.raises(TypeError, match="outputs must be tensors"):
        pf.vmap(lambda a: "one")(pf.tensor(_r(3)))  # (a Python number is an array: JAX's)


def test_looking_at_a_mapped_value_raises():
    with pytest.raises(RuntimeError, match="looked at the value"):
        pf.vmap(lambda a: a * 2 if (a.sum() > 0).item() else a)(pf.tensor(_r(3, 2)))
    with pytest.raises(RuntimeError, match="looked at the value"):
        pf.vmap(lambda a: a + float(a[0].item()))(pf.tensor(_r(3, 2)))


def test_an_op_without_a_rule_fails_naming_it(monkeypatch):
    monkeypatch.delitem(BATCHING, OPS["cumprod"])
    with pytest.raises(Exception, match="pyflame.cumprod has no batching rule"):
        pf.vmap(lambda a: pf.cumprod(a, 0))(pf.tensor(_r(3, 2))).numpy()


def test_nested_vmap_is_an_outer_product_of_loops():
    a, b = _r(2, 3), _r(4, 3)
    f = pf.vmap(pf.vmap(lambda u, v: (u * v).sum(), in_axes=(None, 0)), in_axes=(0, None))
    np.testing.assert_allclose(f(pf.tensor(a), pf.tensor(b)).numpy(), a @ b.T, rtol=1e-5)


def test_vmap_moves_axes_both_ways():
    x = _r(2, 3, 4)
    out = pf.vmap(lambda v: v * 2, in_axes=1, out_axes=2)(pf.tensor(x))
    np.testing.assert_allclose(out.numpy(), np.moveaxis(np.moveaxis(x, 1, 0) * 2, 0, 2))


def test_vmap_in_eager_mode(eager):
    x = _r(3, 4)
    np.testing.assert_allclose(pf.vmap(lambda v: pf.exp(v).sum())(pf.tensor(x)).numpy(),
                               np.exp(x).sum(1), rtol=1e-5)


# ---- composition with differentiation ----

def _mlp_params():
    return {"w1": _r(8, 6) * 0.3, "b1": _r(6) * 0.1, "w2": _r(6, 3) * 0.3, "b2": _r(3) * 0.1}


def _mlp_loss(p, x, y):
    h = pf.relu(x @ p["w1"] + p["b1"])
    logits = h @ p["w2"] + p["b2"]
    return -(pf.log_softmax(logits, dim=-1) * y).sum()


def _torch_mlp_loss(p, x, y):
    h = torch.relu(x @ p["w1"] + p["b1"])
    return -(torch.log_softmax(h @ p["w2"] + p["b2"], dim=-1) * y).sum()


def test_per_example_gradients_of_the_mlp_match_a_loop_and_torch_func():
    params = _mlp_params()
    xs, ys = _r(5, 8), np.eye(3, dtype=np.float32)[rng.integers(0, 3, 5)]
    p = {k: pf.tensor(v) for k, v in params.items()}
    per_ex = pf.vmap(pf.grad(_mlp_loss), in_axes=(None, 0, 0))(p, pf.tensor(xs), pf.tensor(ys))
    tp = {k: torch.tensor(v) for k, v in params.items()}
    want = torch.func.vmap(torch.func.grad(_torch_mlp_loss), in_dims=(None, 0, 0))(
        tp, torch.tensor(xs), torch.tensor(ys))
    loop = [pf.grad(_mlp_loss)(p, pf.tensor(xs[i]), pf.tensor(ys[i])) for i in range(5)]
    for k in params:
        assert per_ex[k].shape == (5, *params[k].shape)
        np.testing.assert_allclose(per_ex[k].numpy(), want[k].numpy(), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(per_ex[k].numpy(), np.stack([g[k].numpy() for g in loop]),
                                   rtol=1e-5, atol=1e-6)


def test_grad_of_vmap_matches_torch_func():
    params = _mlp_params()
    xs, ys = _r(4, 8), np.eye(3, dtype=np.float32)[rng.integers(0, 3, 4)]
    p = {k: pf.tensor(v) for k, v in params.items()}

    def batch_loss(p):
        return pf.vmap(_mlp_loss, in_axes=(None, 0, 0))(p, pf.tensor(xs), pf.tensor(ys)).mean()

    def torch_batch_loss(p):
        return torch.func.vmap(_torch_mlp_loss, in_dims=(None, 0, 0))(
            p, torch.tensor(xs), torch.tensor(ys)).mean()
    got = pf.grad(batch_loss)(p)
    want = torch.func.grad(torch_batch_loss)({k: torch.tensor(v) for k, v in params.items()})
    for k in params:
        np.testing.assert_allclose(got[k].numpy(), want[k].numpy(), rtol=1e-4, atol=1e-6)


def test_backward_through_vmap_accumulates_like_torch():
    x, w = _r(4, 3), _r(3, 2)
    pw = pf.tensor(w, requires_grad=True)
    pf.vmap(lambda v: pf.sin(v @ pw).sum())(pf.tensor(x)).sum().backward()
    tw = torch.tensor(w, requires_grad=True)
    torch.sin(torch.tensor(x) @ tw).sum().backward()
    np.testing.assert_allclose(pw.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobians_on_vmap_match_torch_func(jac):
    x, y = _r(3), _r(2, 3)

    def f(a, b):
        return {"s": pf.sin(a) * b, "t": (a * a).sum()}

    def tf(a, b):
        return {"s": torch.sin(a) * b, "t": (a * a).sum()}
    got = getattr(pf, jac)(f, argnums=(0, 1))(pf.tensor(x), pf.tensor(y))
    want = getattr(torch.func, jac)(tf, argnums=(0, 1))(torch.tensor(x), torch.tensor(y))
    for k in ("s", "t"):
        for i in range(2):
            np.testing.assert_allclose(got[k][i].numpy(), want[k][i].numpy(), rtol=1e-5,
                                       atol=1e-6)


def test_vmap_of_jacrev_and_hessian():
    x = _r(4, 3)
    f = lambda v: (pf.tanh(v) * v).sum()  # noqa: E731
    tf = lambda v: (torch.tanh(v) * v).sum()  # noqa: E731
    np.testing.assert_allclose(pf.vmap(pf.jacrev(f))(pf.tensor(x)).numpy(),
                               torch.func.vmap(torch.func.jacrev(tf))(torch.tensor(x)).numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pf.vmap(pf.hessian(f))(pf.tensor(x)).numpy(),
                               torch.func.vmap(torch.func.hessian(tf))(torch.tensor(x)).numpy(),
                               rtol=1e-4, atol=1e-5)


# ---- hypothesis over shapes and axes ----

_EX = max(5, int(25 * SCALE))
_shape = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)


@settings(max_examples=_EX, deadline=None)
@given(_shape, st.integers(1, 3), st.data())
def test_hypothesis_elementwise_and_reductions(shape, n, data):
    axis = data.draw(st.integers(-(len(shape) + 1), len(shape)))
    full = list(shape)
    full.insert(axis % (len(shape) + 1), n)
    x = _r(*full)
    other = _r(*shape[data.draw(st.integers(0, len(shape))):])
    op = data.draw(st.sampled_from(["mul", "sub", "maximum", "sum", "amax", "cumsum"]))
    dim = data.draw(st.integers(0, max(0, len(shape) - 1)))

    def f(v):
        if op in ("mul", "sub", "maximum"):
            return getattr(pf, op)(v, pf.tensor(other))
        if not shape:
            return v * 2
        return getattr(pf, op)(v, dim)

    def tf(v):
        if op in ("mul", "sub", "maximum"):
            return getattr(torch, op)(v, torch.tensor(other))
        if not shape:
            return v * 2
        return getattr(torch, op)(v, dim)
    out_axis = data.draw(st.integers(0, len(tf(torch.tensor(_r(*shape))).shape)))
    got = pf.vmap(f, in_axes=axis, out_axes=out_axis)(pf.tensor(x)).numpy()
    want = torch.func.vmap(tf, in_dims=axis, out_dims=out_axis)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@settings(max_examples=_EX, deadline=None)
@given(st.sampled_from([(3,), (2, 3), (2, 2, 3)]), st.sampled_from([(3,), (3, 2), (2, 3, 2)]),
       st.sampled_from(["bb", "bu", "ub"]), st.integers(1, 3))
def test_hypothesis_matmul(sa, sb, which, n):
    a = _r(n, *sa) if which[0] == "b" else _r(*sa)
    b = _r(n, *sb) if which[1] == "b" else _r(*sb)
    axes = tuple(0 if w == "b" else None for w in which)
    got = pf.vmap(pf.matmul, in_axes=axes)(pf.tensor(a), pf.tensor(b)).numpy()
    want = torch.func.vmap(torch.matmul, in_dims=axes)(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)


def test_shape_and_indexing_ops_end_to_end_match_torch():
    x, idx = _r(4, 3, 5), rng.integers(0, 5, (4, 3, 2))

    def f(v, i):
        y = pf.concat([v[1:], v[:1]], 0).permute(1, 0).reshape(-1, 3)
        g = pf.gather(v, 1, i)
        return pf.nn.functional.pad(y, (1, 0)).sum(0) + g.sum(), pf.sort(v, 1)[0][:, 0]

    def tf(v, i):
        y = torch.cat([v[1:], v[:1]], 0).permute(1, 0).reshape(-1, 3)
        g = torch.gather(v, 1, i)
        return torch.nn.functional.pad(y, (1, 0)).sum(0) + g.sum(), torch.sort(v, 1)[0][:, 0]
    got = pf.vmap(f)(pf.tensor(x), pf.tensor(idx))
    want = torch.func.vmap(tf)(torch.tensor(x), torch.tensor(idx))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)


def test_vmap_ir_and_pass_from_text(lazy):
    y = pf.vmap(lambda v: pf.exp(v).sum())(pf.tensor(_r(3, 2)))
    text = pf.to_mlir(y)
    assert "pyflame.vmap @" in text and "in_axes = array<i64: 0>" in text
