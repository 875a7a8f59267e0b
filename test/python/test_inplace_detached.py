"""In-place updates through ``.detach()`` / ``.data`` of a non-leaf that
requires grad (issue 13), lazy states read after several in-place updates,
and the saved-tensor check, against torch (imperative) and torch.func
(functional); lazy and eager mode (the ``mode`` fixture)."""

from __future__ import annotations

import gc
import itertools

import numpy as np
import pytest
import torch
from _oracles import examples
from hypothesis import example, given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

BASE = np.arange(6.0).reshape(2, 3) / 3 - 0.4


def _run_alias(lib, alias: str, saved: bool, look: bool, chain: bool, nograd: bool) -> list:
    """x = 2a (a non-leaf); an earlier reader (saving x or not); an update
    through x's detached alias (or a view of it); a later reader; backward."""
    a = lib.tensor(BASE, requires_grad=True)
    x = a * 2.0
    y = (x * x).sum() if saved else (x * 3.0).sum()
    if look:
        float(y)
    d = x.detach() if alias == "detach" else x.data
    if chain:
        d = d.t()[1:]
    if nograd:
        with lib.no_grad():
            d.add_(1.5)
    else:
        d.mul_(1.5)
    z = (x ** 2).sum() + y
    out = [np.array(x.detach().numpy()), x.grad_fn.name(), x.requires_grad, x.is_leaf,
           x._version, d._version, float(y), float(z)]
    try:
        z.backward()
        out.append(np.array(a.grad.numpy()))
    except RuntimeError as e:
        out.append("inplace error" if "modified by an inplace operation" in str(e) else str(e))
    return out


CASES = list(itertools.product(["detach", "data"], [False, True], [False, True],
                               [False, True], [False, True]))


@pytest.mark.parametrize(("alias", "saved", "look", "chain", "nograd"), CASES)
def test_update_through_a_detached_alias_matches_torch(mode, alias, saved, look, chain,
                                                       nograd):
    ours = _run_alias(pf, alias, saved, look, chain, nograd)
    theirs = _run_alias(torch, alias, saved, look, chain, nograd)
    if alias == "data" and saved:
        # PyTorch does not see the update (x.data shares no version counter)
        # and differentiates the saved x with its new value; we raise instead
        # of differentiating anything else
        assert isinstance(ours[-1], str) and "through .data" in ours[-1]
        ours, theirs = ours[:-1], theirs[:-1]
    assert len(ours) == len(theirs)
    for p, q in zip(ours, theirs):
        if isinstance(q, np.ndarray):
            np.testing.assert_allclose(p, q, rtol=1e-12)
        elif isinstance(q, float):
            assert p == pytest.approx(q, rel=1e-12)
        else:
            assert p == q


def test_detached_update_in_a_functional_transform_keeps_the_history(mode):
    """grad of a function writing its intermediate through ``.detach()``."""
    def f(lib):
        def fn(a):
            x = a * a
            with lib.no_grad():
                x.detach()[0].mul_(3.0)
            print(x.sum())  # a value looked at in the middle
            return (x * a).sum()
        return fn
    ours = pf.grad(f(pf))(pf.tensor(BASE))
    theirs = torch.func.grad(f(torch))(torch.tensor(BASE))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_a_value_saved_then_modified_through_data_raises_naming_data():
    a = pf.tensor(BASE, requires_grad=True)
    x = a * 2.0
    d = x.data  # taken before the reader: the reader snapshots x
    y = (x * x).sum()
    d.add_(1.0)
    with pytest.raises(RuntimeError, match="through .data"):
        y.backward()


def test_multiplying_by_a_number_saves_nothing_of_the_tensor(mode):
    """``x * 2`` keeps only the 2 for backward (PyTorch): updating x in place
    afterwards is no error, in backward() and in grad()."""
    def f(lib):
        def fn(a):
            x = a * 1.0
            r = x * 2
            for i in range(3):
                x[i % 2].mul_(1.5)
                if i == 1:
                    float(x.sum())
            return (r * x).sum()
        return fn
    ours = pf.grad(f(pf))(pf.tensor(BASE))
    theirs = torch.func.grad(f(torch))(torch.tensor(BASE))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    a, ta = pf.tensor(BASE, requires_grad=True), torch.tensor(BASE, requires_grad=True)
    f(pf)(a).backward()
    f(torch)(ta).backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("functional", [False, True])
def test_a_square_read_before_a_fill_is_an_error_as_in_torch(functional):
    """``x * x`` saves x; ``x.fill_(c)`` then makes x a constant, which must
    not pass for the ``x * 2`` case that saves nothing (CI's hypothesis)."""
    def fn(lib):
        def f(a):
            x = a * 1.0
            total = (x * x).sum()
            x.fill_(0.5)
            return total + (x * a).sum()
        return f
    for lib in (torch, pf):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            if functional:
                g = (torch.func.grad if lib is torch else pf.grad)(fn(lib))(lib.tensor(BASE))
                g.numpy()
            else:
                a = lib.tensor(BASE, requires_grad=True)
                fn(lib)(a).backward()


# ---- several in-place updates of one base's views, reads in between ----

_VIEW_OPS = {
    "row0": lambda x: x[0],
    "row1": lambda x: x[1],
    "col": lambda x: x[:, 1],
    "t": lambda x: x.t(),
    "t_row": lambda x: x.t()[2],
    "flat": lambda x: x.view(-1)[1:5],
    "whole": lambda x: x,
}
_UPDATES = {
    "add_": lambda v, a: v.add_(a[0, 0]),
    "mul_": lambda v, a: v.mul_(1.5),
    "sub_": lambda v, a: v.sub_(0.25),
    "copy_": lambda v, a: v.copy_(v * 0 + a[1, 2]),
    "fill_": lambda v, a: v.fill_(0.5),
}
_READS = {
    "sum": lambda x, v: (x * x).sum(),
    "view": lambda x, v: (v ** 2).sum(),
    "exp": lambda x, v: x.exp().mean(),
}


@st.composite
def _program(draw):
    steps = []
    for _ in range(draw(st.integers(2, 4))):
        steps.append((draw(st.sampled_from(sorted(_VIEW_OPS))),
                      draw(st.sampled_from(sorted(_UPDATES))),
                      draw(st.sampled_from(sorted(_READS))),
                      draw(st.booleans())))  # look at a value after the step
    return steps


def _run_program(lib, steps, functional: bool):
    def fn(a):
        x = a * 1.0
        total = (x * x).sum() * 0.5  # a reader before any update
        for view, update, read, look in steps:
            v = _VIEW_OPS[view](x)
            _UPDATES[update](v, a)
            total = total + _READS[read](x, v)
            if look:
                float(total)
                gc.collect()  # states no one holds are gone
        return total + (x * a).sum()
    if functional:
        g = torch.func.grad(fn) if lib is torch else pf.grad(fn)
        return [g(lib.tensor(BASE))]
    a = lib.tensor(BASE, requires_grad=True)
    out = fn(a)
    out.backward()
    return [out, a.grad]


def test_a_reader_of_the_first_state_evaluates_after_updates_and_looks():
    """An op reading a tensor before its first update stays lazy while the
    tensor is updated (through views) and evaluated in between."""
    def run(lib):
        x = lib.tensor(BASE.copy())
        r = x * 2
        for i in range(3):
            x[i % 2].add_(1.0)
            x.numpy()
            gc.collect()
        return r, x
    for p, q in zip(run(pf), run(torch), strict=True):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-12)


@settings(max_examples=examples(12), deadline=None)
@given(steps=_program(), eager=st.booleans(), functional=st.booleans())
# the state x * x read is not the one walked back to when the states between
# were freed (found by CI's hypothesis): the check reads the op's own cell
@example(steps=[("col", "fill_", "view", False), ("whole", "fill_", "exp", False),
                ("col", "add_", "exp", False)], eager=False, functional=False)
@example(steps=[("whole", "fill_", "exp", False), ("col", "fill_", "exp", False)],
         eager=False, functional=False)
def test_reads_between_updates_of_views_see_their_state_as_torch(steps, eager, functional):
    prev = pf.CONFIG.eager
    pf.CONFIG.eager = eager
    try:
        try:
            theirs = _run_program(torch, steps, functional)
        except RuntimeError as e:  # torch's saved-tensor check: ours must raise too
            assert "modified by an inplace operation" in str(e)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                [t.numpy() for t in _run_program(pf, steps, functional)]
            return
        ours = _run_program(pf, steps, functional)
        for p, q in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-10)
    finally:
        pf.CONFIG.eager = prev


# ---- a detached tensor updated in place with a value that requires grad ----
# PyTorch: it takes the value's history (a non-leaf, gradients flow to what the
# value was computed from, not into the detached tensor's past). Where the root
# it shares storage with would need a history of its own, we refuse clearly.

def _attach_mul(L, x):
    y = (x * x).detach()
    y.mul_(x)
    return y.sum()


def _attach_then_add(L, x):
    h = x * 2
    y = h.detach()
    y.mul_(x)
    y.add_(1)
    return (y * y).sum() + (h * h).sum()


def _attach_twice(L, x):
    h = x * 2
    y = h.detach()
    y.mul_(x)
    y.mul_(x)
    return (y * y).sum() + (h * h).sum()


def _attach_then_view(L, x):
    h = x * 2
    y = h.detach()
    y.mul_(x)
    z = y[1:] * 3
    return (z * z).sum() + (h * h).sum()


def _attach_augmented(L, x):
    h = x * 2
    y = h.detach()
    y += x
    return (y * y).sum() + (h * h).sum()


def _attach_to_function_output(L, x):
    y = L.digamma(x).detach()
    y.mul_(x)
    return y.sum()


def _constant_update_then_root(L, x):
    h = x * 2
    y = h.detach()
    y.mul_(2)  # no gradient: the alias stays detached, h's update reaches it
    h.add_(1)
    return (y * y).sum() + (h * h).sum()


ATTACH = [_attach_mul, _attach_then_add, _attach_twice, _attach_then_view, _attach_augmented,
          _attach_to_function_output, _constant_update_then_root]


@pytest.mark.parametrize("prog", ATTACH, ids=[p.__name__ for p in ATTACH])
@pytest.mark.parametrize("api", ["backward", "grad"])
def test_a_detached_tensor_takes_the_history_of_its_in_place_value(mode, prog, api) -> None:
    xs = np.array([0.3, 1.7, 2.5])
    if api == "grad":
        got = pf.grad(lambda x: prog(pf, x))(pf.tensor(xs)).numpy()
        want = torch.func.grad(lambda x: prog(torch, x))(torch.tensor(xs)).numpy()
    else:
        x, tx = pf.tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
        prog(pf, x).backward()
        prog(torch, tx).backward()
        got, want = x.grad.numpy(), tx.grad.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)


def _view_of_detached(L, x):
    h = x * 2
    y = h.detach()
    y[0].mul_(x[1])
    return (y * y).sum()


def _root_updated_after_attach(L, x):
    h = x * 2
    y = h.detach()
    y.mul_(x)
    h.add_(1)
    return (y * y).sum()


def _copy_into_alias_of_arg(L, x):
    y = x.detach()
    y.copy_(x * 3)
    return (y * x).sum()


def _arg_updated(L, x):
    x.mul_(2)
    return (x * x).sum()


@pytest.mark.parametrize("prog,match", [
    (_view_of_detached, "view of a detached tensor"),
    (_root_updated_after_attach, "detached alias"),
    (_copy_into_alias_of_arg, "argument of a function being transformed"),
    (_arg_updated, "argument of a function being transformed"),
], ids=["view_of_detached", "root_after_attach", "copy_into_alias_of_arg", "arg_updated"])
def test_updates_whose_gradient_we_cannot_model_raise(prog, match) -> None:
    """(torch gives a number for the first three; ours would drop a gradient)"""
    with pytest.raises(RuntimeError, match=match):
        pf.grad(lambda x: prog(pf, x))(pf.tensor([0.3, 1.7, 2.5]))


def test_an_argument_of_vmap_updated_in_place_raises() -> None:
    def f(x):
        x.mul_(2)  # (gave the sums of the un-doubled rows)
        return x.sum()
    with pytest.raises(RuntimeError, match="argument of a function being transformed"):
        pf.vmap(f)(pf.tensor(np.arange(6.0).reshape(2, 3)))

    def g(x):
        y = x.clone()
        y[0] = 7.0
        return y * x
    xs = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(pf.vmap(g)(pf.tensor(xs)).numpy(),
                               torch.func.vmap(g)(torch.tensor(xs)).numpy())


def test_an_argument_is_updatable_after_the_trace_and_as_a_copy_inside() -> None:
    x = pf.tensor([0.3, 1.7, 2.5])

    def f(x):
        x = x.clone()
        x[0] = x[1] * 5
        return (x * x).sum()
    np.testing.assert_allclose(pf.grad(f)(x).numpy(), [0.0, 88.4, 5.0])
    g = pf.grad(lambda x: (x * x).sum())
    x2 = pf.tensor([1.0, 2.0])
    g(x2)
    x2.mul_(2)  # the trace is over: a plain tensor again
    np.testing.assert_allclose(x2.numpy(), [2.0, 4.0])
