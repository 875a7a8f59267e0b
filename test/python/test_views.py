"""Views alias their base (issue 13): in-place updates of views and of bases
with live views, PyTorch's semantics, against torch as the oracle; lazy and
eager mode (the ``mode`` fixture); values, versions and gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _oracles import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf
from pyflame_mlir.core import collect

BASE = np.arange(1.0, 13.0).reshape(3, 4) / 4 - 1.2  # no zeros, mixed signs

# view op -> fn(x) for pyflame and torch alike (same method names)
VIEWS = {
    "int": lambda x: x[1],
    "slice": lambda x: x[:, 1:3],
    "step": lambda x: x[::2, 1:],
    "none_ellipsis": lambda x: x[None, ..., 2],
    "view": lambda x: x.view(-1),
    "view_split": lambda x: x.view(3, 2, 2),
    "reshape": lambda x: x.reshape(4, 3),
    "t": lambda x: x.t(),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "transpose": lambda x: x.transpose(0, 1),
    "permute": lambda x: x.permute(1, 0),
    "movedim": lambda x: x.movedim(0, 1),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(1, 2),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "squeeze": lambda x: x.unsqueeze(1).squeeze(1),
    "flatten": lambda x: x.flatten(),
    "diagonal": lambda x: x.diagonal(),
    "diagonal_offset": lambda x: x.diagonal(1),
    "unbind": lambda x: x.unbind(1)[2],
    "split": lambda x: x.split(2, 1)[1],
    "chunk": lambda x: x.chunk(3, 0)[1],
    "detach": lambda x: x.detach(),
    "data": lambda x: x.data,
    "t_then_slice": lambda x: x.t()[1:3],
    "slice_then_t": lambda x: x[1:, ::2].t(),
    "view_of_view_of_view": lambda x: x.view(-1)[2:10].view(2, 4)[:, 1],
}


def _full(lib, shape, v):
    return lib.full(tuple(shape), v, dtype=lib.float64)


# in-place op -> fn(lib, v) updating the view v
IN_PLACE = {
    "add_": lambda lib, v: v.add_(2.0),
    "sub_tensor": lambda lib, v: v.sub_(_full(lib, v.shape, 0.5)),
    "mul_": lambda lib, v: v.mul_(-1.5),
    "div_": lambda lib, v: v.div_(4.0),
    "zero_": lambda lib, v: v.zero_(),
    "fill_": lambda lib, v: v.fill_(3.0),
    "copy_broadcast": lambda lib, v: v.copy_(_full(lib, v.shape[-1:], 7.0)),
    "clamp_": lambda lib, v: v.clamp_(-0.5, 0.5),
    "masked_fill_": lambda lib, v: v.masked_fill_(v > 0, -9.0),
    "setitem": lambda lib, v: v.__setitem__(..., 4.0),
    "iadd": lambda lib, v: v.__iadd__(1.0),
}


def _both(fn):
    """``fn(lib, x)`` with pyflame and torch on a fresh base; the results."""
    ours = fn(pf, pf.tensor(BASE.copy()))
    theirs = fn(torch, torch.tensor(BASE.copy()))
    return ours, theirs


def _check(ours, theirs):
    for a, b in zip(ours, theirs, strict=True):
        if isinstance(b, torch.Tensor):
            assert a.shape == tuple(b.shape)
            np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-12)
        else:
            assert a == b


@pytest.mark.parametrize("view", VIEWS)
def test_in_place_on_a_view_updates_its_base_and_every_live_view(mode, view):
    """Every in-place op of the table on the view (a fresh base each)."""
    def run(lib, _):
        out = []
        for update in IN_PLACE.values():
            x = lib.tensor(BASE.copy())
            before = x[0]  # taken earlier: sees the update
            reader = x * 2  # recorded earlier: reads the old value
            v = VIEWS[view](x)
            update(lib, v)
            out += [x, v, before, reader, x._version, v._version, before._version]
        if lib is pf:
            pf.eval(*[t for t in out if isinstance(t, pf.Tensor)])  # one graph
        return out
    _check(*_both(run))


@pytest.mark.parametrize("view", VIEWS)
def test_a_view_sees_later_in_place_updates_of_its_base(mode, view):
    def run(lib, x):
        v = VIEWS[view](x)
        x.add_(1.0)
        x[1].mul_(3.0)  # through another view
        x.t()[0] = -1.0
        return x, v, x._version, v._version
    _check(*_both(run))


def test_rows_of_a_loop_write_back(mode):
    def run(lib, x):
        for i, row in enumerate(x):
            row.mul_(i + 2)
        for col in x.unbind(1):
            col.sub_(col.sum())
        return (x,)
    _check(*_both(run))


def test_squeeze_and_t_in_place_on_a_view(mode):
    def run(lib, x):
        u = x.unsqueeze(0)
        u.squeeze_()
        u.add_(1.0)
        w = x[1:]
        w.t_()
        w[0].mul_(3.0)
        y = x.unsqueeze(0)
        y.unsqueeze_(2)
        y.transpose_(0, 3)
        y.sub_(0.25)
        return x, u, w, y, x._version, w._version
    _check(*_both(run))


def test_data_and_detach_share_storage_not_history(mode):
    def run(lib, x):
        d = x.detach()
        d.add_(1.0)  # seen by x; shares x's version counter
        e = x.data
        e.mul_(2.0)  # seen by x; its own version counter (PyTorch's .data)
        y = x * 0 + 5
        x.data = y  # x shares y's storage from now on, its own counter
        y.add_(1.0)
        z = x[0]
        x.mul_(2.0)
        return x, d, e, y, z, x._version, d._version, e._version, y._version, z._version
    _check(*_both(run))


def test_a_view_is_a_view_of_the_tensor_it_came_from():
    x = pf.tensor(BASE)
    v = x[1:]
    assert v._base is x and v.view(-1)._base is x and x._base is None
    assert x.mT.shape == (4, 3)


MULTI_OUTPUT = ("unbind", "split", "chunk")  # autograd forbids in-place on their outputs


@pytest.mark.parametrize("view", [v for v in VIEWS
                                  if v not in ("detach", "data", *MULTI_OUTPUT)])
def test_gradients_through_in_place_updates_of_views(mode, view):
    """PyTorch's CopySlices: ``x = a.clone(); view(x).op_(b)`` differentiates
    in ``a`` and ``b``, with the base, the view and an older view all used."""
    ops = [lambda v, b: v.mul_(b), lambda v, b: v.add_(b * b),
           lambda v, b: v.copy_(b.expand(v.shape) * 3)]

    def run(lib, a, b):
        loss = 0
        out = []
        for op in ops:
            x = a.clone()
            older = x[2]
            v = VIEWS[view](x)
            op(v, b)
            w = lib.tensor(np.linspace(-1, 2, 12).reshape(3, 4))
            loss = loss + (x * w).sum() + (v * v).sum() + (older ** 3).sum()
            out += [x, v]
        loss.backward()
        return [a.grad, b.grad, *out]

    ours = run(pf, pf.tensor(BASE, requires_grad=True),
               pf.tensor(np.array([0.7]), requires_grad=True))
    theirs = run(torch, torch.tensor(BASE, requires_grad=True),
                 torch.tensor([0.7], dtype=torch.float64, requires_grad=True))
    _check(ours, theirs)


def test_clone_then_update_a_row_matches_torch_grads(mode):
    def run(lib, a, b):
        x = a.clone()
        x[0].mul_(b)
        x.sum().backward()
        return a.grad, b.grad

    ours = run(pf, pf.tensor(BASE, requires_grad=True),
               pf.tensor(np.float64(2.5), requires_grad=True))
    theirs = run(torch, torch.tensor(BASE, requires_grad=True),
                 torch.tensor(2.5, dtype=torch.float64, requires_grad=True))
    _check(ours, theirs)


def test_functional_grad_through_view_updates_matches_torch_func(mode):
    def f(lib):
        def fn(a):
            x = a * 1.0
            x[1:, ::2].mul_(a[0, :2])
            x.t()[0].add_(a[:, 3] ** 2)
            return (x ** 2).sum()
        return fn
    ours = pf.grad(f(pf))(pf.tensor(BASE))
    theirs = torch.func.grad(f(torch))(torch.tensor(BASE))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


@pytest.mark.parametrize("view", MULTI_OUTPUT)
def test_in_place_on_an_output_of_a_multi_view_function_raises_as_torch(mode, view):
    for lib in (pf, torch):
        x = lib.tensor(BASE, requires_grad=True).clone()
        with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
            VIEWS[view](x).mul_(2.0)
    def run(lib, x):  # without autograd it is allowed
        VIEWS[view](x).mul_(2.0)
        return (x,)
    _check(*_both(run))


def test_in_place_on_an_expanded_view_raises_as_torch():
    x = pf.tensor([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        x.expand(2, 3).add_(1.0)
    with pytest.raises(RuntimeError, match="more than one element"):
        torch.tensor([1.0, 2.0, 3.0]).expand(2, 3).add_(1.0)
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0, 3.0])


def test_view_of_a_non_contiguous_tensor_raises_and_reshape_copies(mode):
    x = pf.tensor(BASE.copy())
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.t().view(-1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        torch.tensor(BASE).t().view(-1)

    def run(lib, x):
        y = x.t().reshape(-1)  # a copy in PyTorch: updating it leaves x alone
        y.add_(1.0)
        z = x.t().reshape(2, 2, 3)  # splits only the first dim: still a view
        return x, y, z

    _check(*_both(run))


def test_a_view_of_a_leaf_that_requires_grad_raises_outside_no_grad(mode):
    p = pf.tensor(BASE, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        p[0].add_(1.0)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        torch.tensor(BASE, requires_grad=True)[0].add_(1.0)
    with pf.no_grad():
        p[0].zero_()
        p.data.mul_(2.0)
        p.detach()[1].add_(1.0)
    tp = torch.tensor(BASE, requires_grad=True)
    with torch.no_grad():
        tp[0].zero_()
        tp.data.mul_(2.0)
        tp.detach()[1].add_(1.0)
    np.testing.assert_allclose(p.numpy(), tp.detach().numpy())
    assert p.is_leaf and p.requires_grad
    p.data[2].fill_(0.5)  # .data: no grad tracking, allowed with grad enabled
    tp.data[2].fill_(0.5)
    (p * p).sum().backward()
    (tp * tp).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy())


def test_a_value_saved_for_backward_modified_through_a_view_raises(mode):
    for lib in (pf, torch):
        a = lib.tensor(BASE, requires_grad=True)
        x = a * 1.0
        v = x[0]
        y = (v * v).sum()  # mul saved v
        x.add_(1.0)  # v shares x's version counter
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


def _slice_strategy(n: int):
    return st.tuples(st.integers(0, n), st.integers(0, n), st.integers(1, 3)).map(
        lambda t: slice(min(t[0], t[1]), max(t[0], t[1]), t[2]))


@st.composite
def _view_chain(draw):
    """A chain of 2-3 view ops for a (3, 4, 2) base: (name, args) steps."""
    shape = [3, 4, 2]
    steps = []
    for _ in range(draw(st.integers(2, 3))):
        kind = draw(st.sampled_from(["slice", "select", "transpose", "unsqueeze", "flatten"]))
        if not shape or (kind == "select" and min(shape) == 0):
            kind = "unsqueeze"
        if kind == "slice":
            d = draw(st.integers(0, len(shape) - 1))
            sl = draw(_slice_strategy(shape[d]))
            steps.append(("slice", d, sl))
            shape[d] = len(range(*sl.indices(shape[d])))
        elif kind == "select":
            d = draw(st.integers(0, len(shape) - 1))
            i = draw(st.integers(0, shape[d] - 1))
            steps.append(("select", d, i))
            del shape[d]
        elif kind == "transpose" and len(shape) >= 2:
            a, b = draw(st.permutations(range(len(shape))))[:2]
            steps.append(("transpose", a, b))
            shape[a], shape[b] = shape[b], shape[a]
        elif kind == "flatten":
            steps.append(("flatten",))  # a view or a copy, as PyTorch decides
            shape = [int(np.prod(shape))]
        else:
            d = draw(st.integers(0, len(shape)))
            steps.append(("unsqueeze", d))
            shape.insert(d, 1)
    return steps


def _apply(x, step):
    kind = step[0]
    if kind == "slice":
        return x[(slice(None),) * step[1] + (step[2],)]
    if kind == "select":
        return x.select(step[1], step[2])
    if kind == "transpose":
        return x.transpose(step[1], step[2])
    if kind == "unsqueeze":
        return x.unsqueeze(step[1])
    return x.reshape(-1)


@settings(max_examples=examples(40), deadline=None)
@given(chain=_view_chain(), update=st.sampled_from(["add_", "mul_", "fill_", "setitem"]),
       eager=st.booleans())
def test_random_view_chains_write_back_as_torch(chain, update, eager):
    base = np.arange(24.0).reshape(3, 4, 2) - 7.5
    prev = pf.CONFIG.eager
    pf.CONFIG.eager = eager
    try:
        def run(lib, x):
            first = x[1]  # a live view taken before
            v = x
            for step in chain:
                v = _apply(v, step)
            IN_PLACE[update](lib, v)
            return x, v, first, x._version, first._version
        _check(run(pf, pf.tensor(base.copy())), run(torch, torch.tensor(base.copy())))
    finally:
        pf.CONFIG.eager = prev


def test_training_loop_with_views_compiles_once_and_matches_torch(mode):
    """Parameters updated through views (a row at a time, and ``.data``) in
    the in-place idiom: the step's graph is the same every step (cache hits,
    a stable structural key)."""
    rng = np.random.default_rng(0)
    w0, xn = rng.standard_normal((4, 3)) * 0.3, rng.standard_normal((5, 4))

    def train(lib, steps):
        w = lib.tensor(w0.copy(), requires_grad=True)
        x = lib.tensor(xn)
        losses, keys = [], []
        for _ in range(steps):
            loss = (lib.tanh(x @ w) ** 2).mean()
            loss.backward()
            with lib.no_grad():
                for row, g in zip(w, w.grad):
                    row.sub_(0.5 * g)
                w.data.mul_(0.99)
                w.grad = None
            if lib is pf and loss.is_lazy:  # the step's graph, as evaluate will key it
                keys.append(collect([loss]).key(()))
            losses.append(loss.item())
        if keys:
            assert all(k == keys[1] for k in keys[1:])  # the first step has no update yet
        return losses, w

    pf.clear_cache()
    ours, w = train(pf, 8)
    theirs, tw = train(torch, 8)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-10)
    assert w.is_leaf and w.requires_grad
    if mode == "lazy":
        stats = pf.cache_stats()
        assert stats["misses"] <= 4 and stats["hits"] >= 8 - 4


def test_contiguous_copies_a_non_contiguous_view(mode):
    def run(lib, x):
        y = x.t()
        c = y.contiguous()  # a copy: updating it leaves x alone
        c.add_(1.0)
        d = x[1:].contiguous()  # contiguous already: the view itself
        d.mul_(2.0)
        return x, c, d, y.is_contiguous(), c.is_contiguous(), x[:, 1].is_contiguous()
    _check(*_both(run))
