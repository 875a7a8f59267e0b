"""Advanced indexing, gather/scatter and the indexing functions of
``pyflame_mlir/indexing.py`` against torch: values on hypothesis-drawn shapes
and index tuples, float64 gradients vs torch, duplicate and negative indices,
in-place setters on tensors that require grad, and the error cases."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from _oracles import examples, seeds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

SETTINGS = settings(max_examples=examples(40), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


def tt(a: Any) -> Any:
    """An index or value as torch takes it."""
    if isinstance(a, pf.Tensor):
        return torch.from_numpy(np.array(a.numpy()))
    if isinstance(a, np.ndarray):
        return torch.from_numpy(a.copy())
    if isinstance(a, tuple):
        return tuple(tt(i) for i in a)
    return a


def same(got: pf.Tensor, want: torch.Tensor, what: str = "") -> None:
    g, w = np.asarray(got.numpy()), want.detach().numpy()
    assert g.shape == w.shape, f"{what}: shape {g.shape} vs torch {w.shape}"
    assert g.dtype == w.dtype, f"{what}: dtype {g.dtype} vs torch {w.dtype}"
    np.testing.assert_allclose(g, w, rtol=1e-12, atol=0, err_msg=what)


# ---- hypothesis: random index tuples ----

@st.composite
def index_tuples(draw, shape: tuple[int, ...], lazy: bool = True):
    """Ints, slices, None, Ellipsis, int lists/arrays (negative too; the
    advanced ones broadcast together) and bool masks, anywhere."""
    items: list[Any] = []
    d = 0
    bshape = draw(st.sampled_from([(), (1,), (2,), (3,), (2, 1), (1, 3)]))
    rng = np.random.default_rng(draw(seeds))
    used_ellipsis = False
    while d < len(shape) and draw(st.integers(0, 4)):
        n = shape[d]
        kind = draw(st.sampled_from(["int", "slice", "none", "list", "array", "lazy", "mask",
                                     "ellipsis"]))
        if kind == "int" and n:
            items.append(int(rng.integers(-n, n)))
        elif kind == "slice":
            items.append(slice(draw(st.one_of(st.none(), st.integers(-4, 4))),
                               draw(st.one_of(st.none(), st.integers(-4, 4))),
                               draw(st.one_of(st.none(), st.integers(1, 2)))))
        elif kind == "none":
            items.append(None)
            continue
        elif kind == "ellipsis" and not used_ellipsis:
            items.append(Ellipsis)
            used_ellipsis = True
            d = len(shape) - draw(st.integers(0, len(shape) - d))
            continue
        elif kind in ("list", "array", "lazy") and n:
            a = rng.integers(-n, n, bshape)
            if kind == "list":
                items.append(a.tolist() if a.ndim else [int(a)])
            elif kind == "array" or not lazy:
                items.append(a)
            else:
                items.append(pf.from_numpy(a) * 1)  # a lazy index tensor
        elif kind == "mask":
            k = draw(st.integers(1, min(2, len(shape) - d)))
            items.append(rng.random(shape[d:d + k]) < 0.5)
            d += k
            continue
        else:
            items.append(slice(None))
        d += 1
    return tuple(items)


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple), data=st.data())
def test_getitem_matches_torch(shape, data, mode):
    a = np.random.default_rng(0).standard_normal(shape)
    idx = data.draw(index_tuples(shape))
    t_idx = tt(idx)
    try:
        want = torch.from_numpy(a)[t_idx]
    except IndexError:
        with pytest.raises(IndexError):
            pf.from_numpy(a)[idx].numpy()
        return
    same(pf.from_numpy(a)[idx], want, f"{shape}[{idx!r}]")


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), data=st.data())
def test_setitem_matches_torch(shape, data, mode):
    """``t[idx] = v`` with a scalar or a tensor broadcast to the selection
    (distinct positions: torch leaves duplicates unspecified)."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape)
    idx = data.draw(index_tuples(shape, lazy=data.draw(st.booleans())))
    t_idx = tt(idx)
    try:
        sel = torch.from_numpy(np.arange(a.size).reshape(shape))[t_idx]
    except IndexError:
        return
    if len(np.unique(sel.numpy())) != sel.numel():  # duplicates: a scalar value only
        value: Any = 2.5
    elif data.draw(st.booleans()):
        value = rng.standard_normal(tuple(sel.shape)[data.draw(
            st.integers(0, sel.ndim)):])
    else:
        value = -1.0
    x, y = pf.from_numpy(a.copy()), torch.from_numpy(a.copy())
    x[idx] = pf.from_numpy(value) if isinstance(value, np.ndarray) else value
    y[t_idx] = torch.from_numpy(value) if isinstance(value, np.ndarray) else value
    same(x, y, f"{shape}[{idx!r}] = ...")


# ---- gradients through indexing (float64, vs torch) ----

def grads(pf_fn, torch_fn, *arrays: np.ndarray) -> None:
    """Gradients of ``sum(f(*xs) * c)`` for a fixed random ``c``, vs torch."""
    xs = [pf.from_numpy(a.copy()).requires_grad_() for a in arrays]
    ts = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    out, t_out = pf_fn(*xs), torch_fn(*ts)
    c = np.random.default_rng(3).standard_normal(tuple(t_out.shape))
    (out * pf.from_numpy(c)).sum().backward()
    (t_out * torch.from_numpy(c)).sum().backward()
    same(out, t_out, "forward")
    for i, (x, t) in enumerate(zip(xs, ts)):
        want = t.grad if t.grad is not None else torch.zeros_like(t)
        got = x.grad if x.grad is not None else pf.zeros_like(x)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=f"grad {i}")


A = np.random.default_rng(7).standard_normal((4, 5))
I_DUP = np.array([[0, 3, -1], [2, 0, 0]])  # duplicates and a negative


GRAD_CASES = {
    "getitem dup": (lambda x: x[I_DUP], lambda x: x[torch.from_numpy(I_DUP)]),
    "getitem rows cols": (lambda x: x[[0, 0, 2], [1, -1, 1]],
                          lambda x: x[[0, 0, 2], [1, -1, 1]]),
    "getitem mask": (lambda x: x[A > 0], lambda x: x[torch.from_numpy(A > 0)]),
    "getitem slice adv": (lambda x: x[1:, [4, 0, 4]], lambda x: x[1:, [4, 0, 4]]),
    "gather": (lambda x: pf.gather(x, 1, np.array([[0, 0], [4, 1], [2, 2], [3, 0]])),
               lambda x: torch.gather(x, 1, torch.tensor([[0, 0], [4, 1], [2, 2], [3, 0]]))),
    "index_select": (lambda x: pf.index_select(x, 1, np.array([3, 3, 0])),
                     lambda x: torch.index_select(x, 1, torch.tensor([3, 3, 0]))),
    "take_along_dim": (lambda x: pf.take_along_dim(x, np.array([[1], [0], [4], [4]]), 1),
                       lambda x: torch.take_along_dim(x, torch.tensor([[1], [0], [4], [4]]),
                                                      1)),
    "take": (lambda x: pf.take(x, np.array([[0, -1], [7, 7]])),
             lambda x: torch.take(x, torch.tensor([[0, -1], [7, 7]]))),
    "tril": (lambda x: pf.tril(x, -1), lambda x: torch.tril(x, -1)),
    "triu": (lambda x: x.triu(2), lambda x: x.triu(2)),
    "flip": (lambda x: pf.flip(x, (0, 1)), lambda x: torch.flip(x, (0, 1))),
    "roll": (lambda x: pf.roll(x, (2, -1), (1, 0)), lambda x: torch.roll(x, (2, -1), (1, 0))),
    "roll flat": (lambda x: x.roll(3), lambda x: x.roll(3)),
    "repeat": (lambda x: x.repeat(2, 1, 3), lambda x: x.repeat(2, 1, 3)),
    "tile": (lambda x: pf.tile(x, (2,)), lambda x: torch.tile(x, (2,))),
    "repeat_interleave": (lambda x: pf.repeat_interleave(x, np.array([1, 0, 2, 1]), 0),
                          lambda x: torch.repeat_interleave(x, torch.tensor([1, 0, 2, 1]), 0)),
    "diagonal": (lambda x: pf.diagonal(x, 1), lambda x: torch.diagonal(x, 1)),
    "diagonal neg": (lambda x: x.diagonal(-2, 1, 0), lambda x: x.diagonal(-2, 1, 0)),
    "diag_embed": (lambda x: pf.diag_embed(x, 1, 0, 2), lambda x: torch.diag_embed(x, 1, 0, 2)),
    "diag": (lambda x: pf.diag(x[0], -1), lambda x: torch.diag(x[0], -1)),
    "masked_fill": (lambda x: x.masked_fill(pf.from_numpy(A > 0.5), -2.0),
                    lambda x: x.masked_fill(torch.from_numpy(A > 0.5), -2.0)),
    "masked_select": (lambda x: pf.masked_select(x, pf.from_numpy(A[0] > 0)),
                      lambda x: torch.masked_select(x, torch.from_numpy(A[0] > 0))),
    "scatter_reduce mean": (
        lambda x: x.scatter_reduce(1, np.array([[0, 0, 2]] * 4), x[:, :3] * 2, "mean",
                                   include_self=False),
        lambda x: x.scatter_reduce(1, torch.tensor([[0, 0, 2]] * 4), x[:, :3] * 2, "mean",
                                   include_self=False)),
    "masked_scatter": (lambda x: x.masked_scatter(pf.from_numpy(A[0] > 0), x * 3),
                       lambda x: x.masked_scatter(torch.from_numpy(A[0] > 0), x * 3)),
    "index_put accumulate": (
        lambda x: pf.index_put(x, (np.array([0, 0, 3]),), x[1:4] * 3, accumulate=True),
        lambda x: torch.index_put(x, (torch.tensor([0, 0, 3]),), x[1:4] * 3, accumulate=True)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_match_torch(name, mode):
    pf_fn, torch_fn = GRAD_CASES[name]
    grads(pf_fn, torch_fn, A)


def test_scatter_add_and_scatter_gradients_in_both_inputs():
    idx = np.array([[1, 1, 0], [3, 0, 3]])
    grads(lambda x, s: pf.scatter_add(x, 0, idx, s),
          lambda x, s: torch.scatter_add(x, 0, torch.from_numpy(idx), s), A[:, :3], A[:2, 2:])
    # (distinct positions: with duplicates torch's gradient goes to every duplicate
    # source although one wins; ours goes to the winner, the derivative of our rule)
    grads(lambda x, s: x.scatter(1, np.array([[2, 0], [1, 3]]), s),
          lambda x, s: x.scatter(1, torch.tensor([[2, 0], [1, 3]]), s), A[:2], A[2:, :2])


def test_embedding_padding_idx_gets_no_gradient():
    w = np.random.default_rng(2).standard_normal((6, 3))
    ids = np.array([[0, 2, 5], [2, 2, 1]])
    grads(lambda w: pf.nn.functional.embedding(ids, w, padding_idx=2),
          lambda w: torch.nn.functional.embedding(torch.from_numpy(ids), w, padding_idx=2), w)
    grads(lambda w: pf.nn.functional.embedding(pf.from_numpy(ids) * 1, w),
          lambda w: torch.nn.functional.embedding(torch.from_numpy(ids), w), w)
    # torch.embedding: the weight first, padding_idx -1 for none
    grads(lambda w: pf.embedding(w, ids, 2),
          lambda w: torch.embedding(w, torch.from_numpy(ids), 2), w)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5])
def test_embedding_max_norm_renormalizes_the_rows_looked_up_as_torch(norm_type, mode):
    w0 = np.random.default_rng(3).standard_normal((6, 3)).astype(np.float32) * 2
    ids = [[0, 2, 5], [2, 2, 1]]
    got = []
    for lib in (torch, pf):
        w = lib.nn.Parameter(lib.tensor(w0))
        out = lib.nn.functional.embedding(lib.tensor(ids), w, max_norm=1.0, norm_type=norm_type)
        (out * lib.arange(3.0)).sum().backward()
        got.append([out.detach().numpy(), w.detach().numpy(), w.grad.numpy()])
    for ours, theirs in zip(got[1], got[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    layer = pf.nn.Embedding(6, 3, max_norm=0.5)
    layer(pf.tensor([1, 4]))
    assert np.linalg.norm(layer.weight.detach().numpy()[[1, 4]], axis=1).max() <= 0.5 + 1e-6


def test_setitem_inside_a_differentiated_function_gives_torch_gradient(mode):
    rows = np.array([2, -4, 3])

    def f(x, v):
        y = x.sin()
        y[rows] = v * 2
        y[:, [0, 4]] += 1.5 * v[:1, :2]  # read-modify-write: no accumulation
        return y

    grads(f, f, A, A[:3] * 0.5)
    g = pf.grad(lambda x: (f(x, pf.from_numpy(A[:3])) ** 2).sum())(pf.from_numpy(A))
    xt = torch.from_numpy(A.copy()).requires_grad_()
    (f(xt, torch.from_numpy(A[:3])) ** 2).sum().backward()
    np.testing.assert_allclose(g.numpy(), xt.grad.numpy(), rtol=1e-10)


def test_duplicate_indices():
    """``t[idx] += v`` does not accumulate duplicates (torch), ``index_put_`` with
    ``accumulate=True`` does; plain writes: the last duplicate wins."""
    idx = np.array([1, 1, 3, 1])
    v = np.array([1.0, 2.0, 3.0, 4.0])
    for accumulate in (False, True):
        x, y = pf.zeros(5, dtype=pf.float64), torch.zeros(5, dtype=torch.float64)
        x.index_put_((idx,), pf.from_numpy(v) if accumulate else 7.0, accumulate=accumulate)
        y.index_put_((torch.from_numpy(idx),), torch.from_numpy(v) if accumulate else
                     torch.tensor(7.0, dtype=torch.float64), accumulate=accumulate)
        same(x, y, f"index_put_ accumulate={accumulate}")
    x, y = pf.zeros(5, dtype=pf.float64), torch.zeros(5, dtype=torch.float64)
    x[idx] += 1.0
    y[torch.from_numpy(idx)] += 1.0
    same(x, y, "t[idx] += 1")
    x = pf.zeros(5, dtype=pf.float64)
    x[idx] = pf.from_numpy(v)
    np.testing.assert_array_equal(x.numpy(), [0, 4, 0, 3, 0])  # the last write wins
    s = pf.zeros((2, 3)).scatter(1, np.array([[2, 2], [0, 1]]), pf.tensor([[1., 2.], [3., 4.]]))
    np.testing.assert_array_equal(s.numpy(), [[0, 0, 2], [3, 4, 0]])


def test_inplace_index_setters_match_torch(mode):
    idx = np.array([3, 0])
    src = np.arange(10.0).reshape(2, 5)
    for name, args in {
        "index_add_": (0, idx, src), "index_copy_": (0, idx, src), "index_fill_": (1, idx, -1.0),
        "scatter_": (1, np.array([[4, 0], [1, 2]]), src), "scatter_add_": (0, idx[None], src),
        "tril_": (), "triu_": (1,), "masked_scatter_": (A > 0, src * 2),
    }.items():
        x, y = pf.from_numpy(A.copy()), torch.from_numpy(A.copy())
        assert getattr(x, name)(*args) is x
        getattr(y, name)(*(tt(a) for a in args))
        same(x, y, name)
        assert x._version == 1
    x, y = pf.from_numpy(A.copy()), torch.from_numpy(A.copy())
    x.index_add_(1, idx, pf.ones((4, 2), dtype=pf.float64), alpha=2)
    y.index_add_(1, torch.from_numpy(idx), torch.ones(4, 2, dtype=torch.float64), alpha=2)
    same(x, y, "index_add_ alpha")


def test_inplace_setitem_on_a_leaf_that_requires_grad_raises():
    w = pf.from_numpy(A.copy()).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w[[0, 1]] = 0.0
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w.index_fill_(0, np.array([1]), 0.0)
    with pf.no_grad():
        w[[0, 1]] = 0.0
    assert (w.numpy()[:2] == 0).all()


# ---- the functions without gradients or with int results ----

def test_functions_match_torch():
    x, t = pf.from_numpy(A), torch.from_numpy(A)
    i = np.array([[3, 1, 0], [1, 1, 2]])
    cases = {
        "one_hot": (pf.one_hot(pf.from_numpy(i), 5),
                    torch.nn.functional.one_hot(torch.from_numpy(i), 5)),
        "one_hot inferred": (pf.one_hot(pf.from_numpy(i)),
                             torch.nn.functional.one_hot(torch.from_numpy(i))),
        "nonzero": (pf.nonzero(x > 0), torch.nonzero(t > 0)),
        "argwhere": (pf.argwhere(x[0] > 0), torch.argwhere(t[0] > 0)),
        "where scalars": (pf.where(x > 0, 1.0, 0), torch.where(t > 0, 1.0, 0)),
        "where int scalars": (pf.where(x > 0, 2, -1), torch.where(t > 0, 2, -1)),
        "where scalar tensor": (pf.where(x > 0, x, 0.5), torch.where(t > 0, t, 0.5)),
        "fliplr": (pf.fliplr(x), torch.fliplr(t)), "flipud": (x.flipud(), t.flipud()),
        "narrow": (pf.narrow(x, 1, -3, 2), torch.narrow(t, 1, -3, 2)),
        "movedim": (pf.movedim(x[None], (0, 2), (2, 0)), torch.movedim(t[None], (0, 2), (2, 0))),
        "moveaxis": (pf.moveaxis(x, 0, -1), torch.moveaxis(t, 0, -1)),
        "swapdims": (x.swapdims(0, 1), t.swapdims(0, 1)),
        "repeat_interleave int": (x.repeat_interleave(2), t.repeat_interleave(2)),
        "repeat_interleave dim": (pf.repeat_interleave(x, 3, dim=1),
                                  torch.repeat_interleave(t, 3, dim=1)),
        "diag 2d": (pf.diag(x, 1), torch.diag(t, 1)),
        "index_select int": (pf.index_select(pf.from_numpy(i), 0, [1, 1, 0]),
                             torch.index_select(torch.from_numpy(i), 0, torch.tensor([1, 1, 0]))),
        "gather bool": (pf.gather(x > 0, 1, i), torch.gather(t > 0, 1, torch.from_numpy(i))),
        "scatter value": (x.scatter(0, i, value=9.0), t.scatter(0, torch.from_numpy(i), 9.0)),
        "scatter_reduce sum": (x.scatter_reduce(0, i, x * 2, "sum", include_self=False),
                               t.scatter_reduce(0, torch.from_numpy(i), t * 2, "sum",
                                                include_self=False)),
        "scatter_reduce mean self": (x.scatter_reduce(1, i, x, "mean"),
                                     t.scatter_reduce(1, torch.from_numpy(i), t, "mean")),
        "scatter_add int": (pf.scatter_add(pf.from_numpy(i), 1, i % 3, pf.from_numpy(i)),
                            torch.scatter_add(torch.from_numpy(i), 1, torch.from_numpy(i % 3),
                                              torch.from_numpy(i))),
        "index_fill int": (pf.index_fill(pf.from_numpy(i), 1, np.array([0]), 7),
                           torch.from_numpy(i).index_fill(1, torch.tensor([0]), 7)),
        "getitem int": (pf.from_numpy(i)[[1, 0], 1:], torch.from_numpy(i)[[1, 0], 1:]),
        "getitem empty": (x[np.zeros(0, np.int64)], t[torch.zeros(0, dtype=torch.int64)]),
        "getitem bool of bool": (pf.from_numpy(A > 0)[A < 0.3], torch.from_numpy(A > 0)[
            torch.from_numpy(A < 0.3)]),
        "getitem lazy mask": (x[x > 0.2], t[t > 0.2]),
    }
    for name, (got, want) in cases.items():
        same(got, want, name)
    for k, (a, b) in enumerate(zip(pf.unbind(x, 1), torch.unbind(t, 1))):
        same(a, b, f"unbind {k}")
    for how in ("ij", "xy"):
        for a, b in zip(pf.meshgrid(x[0], x[1, :3], indexing=how),
                        torch.meshgrid(t[0], t[1, :3], indexing=how)):
            same(a, b, f"meshgrid {how}")
    for arg in (3, [1, 4], [-2, 7], (0, 0, 2)):
        got = pf.tensor_split(x, arg, dim=1)
        want = torch.tensor_split(t, arg, dim=1)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            same(a, b, f"tensor_split {arg}")
    for a, b in zip(pf.nonzero(x > 0, as_tuple=True), torch.nonzero(t > 0, as_tuple=True)):
        same(a, b, "nonzero as_tuple")


def test_special_values_pass_through_gathers_and_scatters():
    v = np.array([np.nan, -0.0, np.inf, -np.inf, 1.0])
    x, t = pf.from_numpy(v), torch.from_numpy(v)
    idx = np.array([4, 0, 1, 1, 2, 3])
    got = x[idx].numpy()
    np.testing.assert_array_equal(got, t[torch.from_numpy(idx)].numpy())
    assert np.signbit(got[2])  # -0.0 kept
    got = pf.scatter_add(x, 0, idx[:5], x).numpy()
    np.testing.assert_array_equal(got, torch.scatter_add(t, 0, torch.from_numpy(idx[:5]),
                                                         t).numpy())


# ---- errors ----

def test_index_errors():
    x = pf.from_numpy(A)
    before = pf.counters()["evaluations"]
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        x[[0, 4]]
    with pytest.raises(IndexError, match="index -6 is out of bounds for dimension 1 with size 5"):
        x[:, [-6]]
    with pytest.raises(IndexError, match="long, int or bool"):
        x[np.array([0.5])]
    with pytest.raises(IndexError, match="long, int or bool"):
        x[pf.from_numpy(np.array([1.0]))]
    with pytest.raises(IndexError, match="could not be broadcast"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="too many indices"):
        x[[0], [0], [0]]
    with pytest.raises(TypeError, match="index 1.5"):
        x[[0], 1.5]
    with pytest.raises(TypeError, match="int32 or int64"):
        pf.gather(x, 0, np.array([[0.0]]))
    with pytest.raises(pf.ShapeError, match="gather"):
        pf.gather(x, 0, np.zeros((2, 6), np.int64))  # larger than the input in dim 1
    with pytest.raises(IndexError, match="gather: index 5"):
        pf.gather(x, 1, np.array([[5]]))
    with pytest.raises(IndexError, match="out of bounds"):
        x[[9]] = 1.0
    with pytest.raises(RuntimeError, match="shape mismatch"):
        pf.from_numpy(A.copy())[[0, 1]] = pf.from_numpy(np.ones(3))
    with pytest.raises(RuntimeError, match="reduce argument"):  # prod: test_scatter_reduce
        x.scatter_reduce(0, np.zeros((1, 5), np.int64), x, "max")
    assert pf.counters()["evaluations"] == before, "host index errors come at record time"
    with pytest.raises(IndexError, match="mask"):
        x[pf.from_numpy(A[:3] > 0)]


def test_a_lazy_index_out_of_range_raises_at_evaluation(lazy):
    x = pf.from_numpy(A)
    bad = pf.from_numpy(np.array([0, 2])) * 3  # 6 >= 4: only known when evaluated
    y = x[bad]
    assert pf.is_lazy(y)
    with pytest.raises(IndexError, match="out of bounds"):
        y.numpy()
    with pytest.raises(IndexError, match="out of bounds"):
        pf.one_hot(pf.from_numpy(np.array([1, 7])) * 1, 5).numpy()
    ok = x[pf.from_numpy(np.array([-1, 1])) * 1]
    same(ok, torch.from_numpy(A)[[-1, 1]], "lazy negative index")


def test_repeat_interleave_of_repeats_alone():
    """``torch.repeat_interleave(repeats)``: the positions repeated (the
    segment ids of a ragged batch), in the repeats' dtype."""
    for reps in ([2, 0, 3], [1], []):
        for dt in ("int64", "int32"):
            got = pf.repeat_interleave(pf.tensor(reps, dtype=getattr(pf, dt)))
            want = torch.repeat_interleave(torch.tensor(reps, dtype=getattr(torch, dt)))
            assert got.dtype.name == dt
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    for bad in (pf.tensor([1.5]), pf.tensor(2), pf.tensor([[1]])):
        with pytest.raises(RuntimeError, match="repeats must be a 1-d integer tensor"):
            pf.repeat_interleave(bad)
