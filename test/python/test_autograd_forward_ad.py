"""``pf.autograd.forward_ad`` (dual_level, make_dual, unpack_dual) against
``torch.autograd.forward_ad``: programs written once against the library
module ``L`` and its forward_ad module ``fw``, run with both, lazily and
eagerly; float64, rtol 1e-10."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import pyflame_mlir as pf
import pyflame_mlir.autograd.forward_ad as pfw

X = np.array([0.3, 1.7, 2.5])
T = np.array([1.0, 0.5, -2.0])


def _t(L, a, rg: bool = False):  # noqa: N802
    return L.tensor(np.asarray(a, dtype=np.float64), requires_grad=rg)


def _np(v):
    if v is None:
        return None
    return np.array(v.detach().numpy(), dtype=np.float64)


def agree(prog) -> None:
    want, got = prog(torch, tfw), prog(pf, pfw)
    if not isinstance(want, list):
        want, got = [want], [got]
    assert len(want) == len(got)
    for w, g in zip(want, got):
        w, g = _np(w), _np(g)
        assert (w is None) == (g is None), (w, g)
        if w is not None:
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def elementwise(L, fw):
    with fw.dual_level():
        d = fw.make_dual(_t(L, X), _t(L, T))
        y = (d.sin() * d).exp().sum() + d.pow(3).mean() + (2 / d).sum()
        return fw.unpack_dual(y).tangent


def primal_view(L, fw):
    with fw.dual_level():
        d = fw.make_dual(_t(L, X), _t(L, T))
        p, tg = fw.unpack_dual(d * 3)
        return [p, tg, fw.unpack_dual(p).tangent, fw.unpack_dual(p * d).tangent]


def in_place(L, fw):
    with fw.dual_level():
        d = fw.make_dual(_t(L, X), _t(L, T))
        z = _t(L, [1.0, 1.0, 1.0]).clone()
        z.mul_(d)
        d2 = d.clone()
        d2.mul_(2)
        d2[0] = d[2] * 5
        w = L.zeros(3, dtype=L.float64)
        w[1] = d[0]
        return [fw.unpack_dual(z).tangent, fw.unpack_dual(d2).tangent,
                fw.unpack_dual(w).tangent]


def no_grad_detach_data(L, fw):
    with fw.dual_level():
        d = fw.make_dual(_t(L, X), _t(L, T))
        with L.no_grad():  # forward mode is not affected by no_grad
            y = d * d
            y.sum().item()  # a value looked at does not cut the tangent
        return [fw.unpack_dual(y).tangent, fw.unpack_dual(d.detach()).tangent,
                fw.unpack_dual(d.data * 2).tangent, fw.unpack_dual(d > 1).tangent,
                fw.unpack_dual(L.zeros_like(d)).tangent]


def after_the_level(L, fw):
    with fw.dual_level():
        y = fw.make_dual(_t(L, X), _t(L, T)) * 2
    return fw.unpack_dual(y).tangent


def two_duals(L, fw):
    with fw.dual_level():
        a = fw.make_dual(_t(L, X), _t(L, T))
        b = fw.make_dual(_t(L, X * 2), _t(L, T * 0 + 1))
        return fw.unpack_dual((a * b).sin() + a / b).tangent


def losses(L, fw):
    logits = _t(L, np.arange(12.0).reshape(3, 4) / 7)
    with fw.dual_level():
        d = fw.make_dual(logits, _t(L, np.cos(np.arange(12.0)).reshape(3, 4)))
        F = L.nn.functional  # noqa: N806
        y = F.cross_entropy(d, L.tensor([0, 3, 1])) + F.layer_norm(d, (4,)).pow(2).sum() \
            + L.logsumexp(d, 1).sum()
        return fw.unpack_dual(y).tangent


def special(L, fw):
    with fw.dual_level():
        d = fw.make_dual(_t(L, X), _t(L, T))
        y = L.lgamma(d).sum() + L.special.erfinv(d / 3).sum() + L.special.i0(d).sum()
        return fw.unpack_dual(y).tangent


def module(L, fw):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                             torch.nn.Linear(4, 2)).double()
    m = tm
    if L is pf:
        m = pf.nn.Sequential(pf.nn.Linear(3, 4), pf.nn.Tanh(), pf.nn.Linear(4, 2)).double()
        m.load_state_dict({k: pf.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = _t(L, np.arange(6.0).reshape(2, 3) / 5)
    call = torch.func.functional_call if L is torch else pf.func.functional_call
    with fw.dual_level():
        out1 = fw.unpack_dual(m(fw.make_dual(x, _t(L, np.ones((2, 3)))))).tangent
        duals = {k: fw.make_dual(v, L.ones_like(v) * 0.1) for k, v in m.named_parameters()}
        out2 = fw.unpack_dual(call(m, duals, (x,))).tangent
    return [out1, out2]


def function_jvp(L, fw):
    class Cube(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

        @staticmethod
        def jvp(ctx, tx):
            (x,) = ctx.saved_tensors
            return 3 * x * x * tx

    with fw.dual_level():
        d = fw.make_dual(_t(L, X), _t(L, T))
        y = Cube.apply(d * 2) + d
        with L.no_grad():
            z = Cube.apply(d)
        return [fw.unpack_dual(y).tangent, fw.unpack_dual(z).tangent]


def forward_over_backward(L, fw):
    """A Hessian-vector product: the tangent of a gradient made with create_graph."""
    x = _t(L, X, True)
    with fw.dual_level():
        d = fw.make_dual(x, _t(L, T))
        (g,) = L.autograd.grad((d.sin() * d * d).sum(), x, create_graph=True)
        return [fw.unpack_dual(g).tangent, g]


def backward_through_a_dual(L, fw):
    x = _t(L, X, True)
    with fw.dual_level():
        d = fw.make_dual(x, _t(L, T))
        (d * d).sum().backward()
    return x.grad


def backward_of_a_tangent(L, fw):
    v = _t(L, T, True)
    with fw.dual_level():
        d = fw.make_dual(_t(L, X), v)
        fw.unpack_dual((d.exp() * d).sum()).tangent.backward()
    return v.grad


def leaf_updated_with_a_dual(L, fw):
    """A parameter (a leaf that requires grad) updated in place under no_grad
    with a dual learning rate has a tangent (pf's walk stopped at the leaf)."""
    w = _t(L, X, True)
    with fw.dual_level():
        lr = fw.make_dual(_t(L, 0.1), _t(L, 1.0))
        for _ in range(2):
            (g,) = L.autograd.grad(((w - _t(L, T)) ** 2).sum(), w)
            with L.no_grad():
                w.sub_(lr * g)
        return [w, fw.unpack_dual(w).tangent]


PROGS = [leaf_updated_with_a_dual, elementwise, primal_view, in_place, no_grad_detach_data,
         after_the_level, two_duals,
         losses, special, module, function_jvp, forward_over_backward,
         backward_through_a_dual, backward_of_a_tangent]


@pytest.mark.parametrize("prog", PROGS, ids=lambda p: p.__name__)
def test_forward_ad_gives_torchs_tangents(mode, prog) -> None:
    agree(prog)


def test_forward_ad_refuses_what_torch_refuses() -> None:
    with pytest.raises(RuntimeError, match="no level exists"):
        pfw.make_dual(_t(pf, X), _t(pf, T))
    with pfw.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            pfw.make_dual(_t(pf, X), _t(pf, [1.0, 2.0]))
        with pytest.raises(ValueError, match="floating point"):
            pfw.make_dual(pf.tensor([1, 2]), pf.tensor([1, 2]))
        d = pfw.make_dual(_t(pf, X), _t(pf, T))
        with pytest.raises(RuntimeError, match="already has a forward gradient"):
            pfw.make_dual(d * 2, _t(pf, T))
        with pytest.raises(RuntimeError, match="Nested forward mode AD"):
            with pfw.dual_level():
                pass
    assert pfw.unpack_dual(_t(pf, X)).tangent is None


def test_forward_ad_is_torchs_module_path() -> None:
    assert pf.autograd.forward_ad is pfw
    assert pfw.unpack_dual(_t(pf, X))._fields == ("primal", "tangent")


def test_save_on_cpu_changes_no_number_and_saved_tensors_hooks_are_refused() -> None:
    def run(L):  # noqa: N803
        x = _t(L, X, True)
        with L.autograd.graph.save_on_cpu(pin_memory=False):
            y = (x.sin() * x).exp().sum()
        y.backward()
        return x.grad.numpy()
    np.testing.assert_allclose(run(pf), run(torch), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="saved_tensors_hooks is not supported"):
        with pf.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
    with pf.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with pf.autograd.graph.save_on_cpu():
                pass


# ---- random programs of steps (no_grad, detach, in-place, views) in every mode ----

_STEPS = ("sin", "mul_x", "exp", "nograd_mul", "detach_add", "inplace_mul_x",
          "inplace_nograd_add_x", "view_t_inplace", "setitem_x", "nograd_inplace_mul_c",
          "softmax", "where", "attach_detached", "nograd_view_add")


def _body(L, x, steps):  # noqa: N802
    h = x * 1.0
    for s in steps:
        if s == "sin":
            h = h.sin()
        elif s == "mul_x":
            h = h * x
        elif s == "exp":
            h = (h * 0.3).exp()
        elif s == "nograd_mul":
            with L.no_grad():
                h = h * 2.0
        elif s == "detach_add":
            h = h.detach() + x
        elif s == "where":
            h = L.where(h > 0.2, h * h, -h)
        elif s == "softmax":
            h = h.softmax(0)
        elif s == "attach_detached":  # a detached alias updated with x: x's history
            h = h.detach()
            h.mul_(x)
        else:
            h = h.clone()
            if s == "inplace_mul_x":
                h.mul_(x)
            elif s == "inplace_nograd_add_x":
                with L.no_grad():
                    h.add_(x)
            elif s == "view_t_inplace":
                h.view(2, 3).t()[0].mul_(1.5)
            elif s == "setitem_x":
                h[1] = x[2] * 2
            elif s == "nograd_view_add":
                with L.no_grad():
                    h[2:4].add_(x[0:2])
            else:
                with L.no_grad():
                    h.mul_(1.25)
    return (h * h).sum()


def _modes(L, steps):  # noqa: N802
    fw = tfw if L is torch else pfw
    func = torch.func if L is torch else pf
    x0 = np.array([0.3, 1.1, -0.7, 0.9, 0.2, -1.3])
    t0 = np.array([1.0, -0.5, 0.25, 2.0, 0.0, 1.5])
    with fw.dual_level():
        tg = fw.unpack_dual(_body(L, fw.make_dual(_t(L, x0), _t(L, t0)), steps)).tangent
    f = lambda x: _body(L, x, steps)  # noqa: E731
    return [tg, func.jvp(f, (_t(L, x0),), (_t(L, t0),))[1],
            func.jacrev(func.jacfwd(f))(_t(L, x0)), func.hessian(f)(_t(L, x0))]


@pytest.mark.parametrize("seed", range(16))
def test_random_step_programs_give_torchs_tangents_and_mixed_derivatives(seed) -> None:
    """forward_ad, jvp, jacrev(jacfwd) (a reverse mode over a forward one:
    a no_grad update's tangent keeps its own history, as torch's in-place
    tangent update) and hessian, against torch.autograd.forward_ad and
    torch.func."""
    rng = np.random.default_rng(seed)
    steps = [_STEPS[i] for i in rng.integers(0, len(_STEPS), size=int(rng.integers(2, 6)))]
    for got, want in zip(_modes(pf, steps), _modes(torch, steps), strict=True):
        assert (got is None) == (want is None), steps
        if want is not None:
            np.testing.assert_allclose(_np(got), _np(want), rtol=1e-9, atol=1e-11,
                                       err_msg=str(steps))
