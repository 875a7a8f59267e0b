"""Module backward hooks (``register_full_backward_hook``,
``register_full_backward_pre_hook``) against PyTorch: what the hooks see,
replacing gradients, removal, modules whose inputs need no gradient."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


class TwoIn(torch.nn.Module):
    def __init__(self, lib):
        super().__init__()
        self.lin = lib.nn.Linear(3, 3)

    def forward(self, a, b, scale=1.0):
        return self.lin(a) * b * scale, a - b


class PfTwoIn(pf.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = pf.nn.Linear(3, 3)

    def forward(self, a, b, scale=1.0):
        return self.lin(a) * b * scale, a - b


def _pair():
    torch.manual_seed(0)
    tm = TwoIn(torch)
    pm = PfTwoIn()
    pm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    return tm, pm


def _np(t):
    return None if t is None else t.detach().numpy().copy()  # torch reuses the buffer for .grad


def _run(lib, m, a_rg: bool, b_rg: bool, hook_kind: str):
    seen = []

    def full(mod, gin, gout):
        seen.append(("full", [_np(g) for g in gin], [_np(g) for g in gout]))
        if hook_kind == "replace" and gin[0] is not None:
            return (gin[0] * 3, *gin[1:])
        return None

    def pre(mod, gout):
        seen.append(("pre", [_np(g) for g in gout]))
        if hook_kind == "replace":
            return tuple(None if g is None else g * 2 for g in gout)
        return None

    m.register_full_backward_pre_hook(pre)
    h = m.register_full_backward_hook(full)
    data = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    a = lib.tensor(data, requires_grad=a_rg)
    b = lib.tensor(data[::-1].copy() + 0.5, requires_grad=b_rg)
    x, y = m(a, b, scale=2.0)
    (x.sum() + (y * y).sum()).backward()
    h.remove()
    m(a, b)[0].sum().backward()  # only the pre-hook is left
    grads = [_np(a.grad), _np(b.grad), _np(m.lin.weight.grad)]
    return seen, grads


def _same(u, v):
    if isinstance(u, list | tuple):
        assert len(u) == len(v)
        for p, q in zip(u, v):
            _same(p, q)
    elif u is None or isinstance(u, str):
        assert u == v
    else:
        np.testing.assert_allclose(v, u, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("a_rg,b_rg,hook_kind", [
    (True, True, "observe"), (True, False, "observe"), (False, False, "observe"),
    (True, True, "replace"), (True, False, "replace"), (False, False, "replace")])
def test_full_backward_hooks_match_torch(a_rg, b_rg, hook_kind):
    tm, pm = _pair()
    want = _run(torch, tm, a_rg, b_rg, hook_kind)
    got = _run(pf, pm, a_rg, b_rg, hook_kind)
    _same(want, got)


def test_hook_on_a_layer_inside_a_model_sees_module_gradients():
    torch.manual_seed(1)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    pm = pf.nn.Sequential(pf.nn.Linear(4, 5), pf.nn.Tanh(), pf.nn.Linear(5, 2))
    pm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    out = {}
    for lib, m in (("torch", tm), ("pf", pm)):
        seen: list = []
        m[1].register_full_backward_hook(
            lambda mod, gi, go, seen=seen: seen.append((_np(gi[0]), _np(go[0]))))
        L = torch if lib == "torch" else pf
        x = L.tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))
        m(x).pow(2).sum().backward()
        out[lib] = (seen, _np(m[0].weight.grad))
    _same(out["torch"], out["pf"])


def test_hooks_are_not_called_under_no_grad_and_bad_returns_raise():
    m = pf.nn.Linear(3, 2)
    calls = []
    m.register_full_backward_hook(lambda mod, gi, go: calls.append(1))
    with pf.no_grad():
        m(pf.ones(1, 3))
    assert calls == []
    m2 = pf.nn.Linear(3, 2)
    m2.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    x = pf.ones(1, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="returned 2 gradients, expected 1"):
        m2(x).sum().backward()
    with pytest.raises(RuntimeError, match="register_full_backward_hook"):
        m.register_backward_hook(lambda *a: None)
