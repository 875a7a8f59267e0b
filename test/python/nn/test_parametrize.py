"""pf.nn.utils.parametrize / parametrizations / weight_norm against torch
2.13: state dict keys, modules loaded with torch's state dict, forward
values, float64 gradients and a few SGD steps equal torch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf
from pyflame_mlir.nn.utils import parametrizations as P
from pyflame_mlir.nn.utils import parametrize

RNG = np.random.default_rng(0)


def close(a, e, rtol=1e-10, atol=1e-12):
    a = a.detach().numpy() if isinstance(a, pf.Tensor) else np.asarray(a)
    e = e.detach().numpy() if isinstance(e, torch.Tensor) else np.asarray(e)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


class PSymmetric(pf.nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(-1, -2)

    def right_inverse(self, x):
        return x.triu()


class TSymmetric(torch.nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(-1, -2)

    def right_inverse(self, x):
        return x.triu()


class PScale(pf.nn.Module):
    def forward(self, x):
        return x * 2.0

    def right_inverse(self, x):
        return x / 2.0


class TScale(torch.nn.Module):
    def forward(self, x):
        return x * 2.0

    def right_inverse(self, x):
        return x / 2.0


def _linear_pair(make_pf, make_torch, **kw):
    torch.manual_seed(0)
    tm = torch.nn.Linear(4, 4, dtype=torch.float64, **kw)
    pm = pf.nn.Linear(4, 4, dtype=pf.float64, **kw)
    pm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    make_torch(tm)
    make_pf(pm)
    assert list(pm.state_dict()) == list(tm.state_dict())
    pm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    return pm, tm


def _train_and_compare(pm, tm, steps=3, tol=1e-9):
    x = RNG.normal(size=(5, 4))
    popt = pf.optim.SGD(pm.parameters(), lr=0.1)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1)
    for _ in range(steps):
        pl = (pm(pf.tensor(x)) ** 2).mean()
        tl = (tm(torch.tensor(x)) ** 2).mean()
        close(pl, tl, rtol=tol)
        popt.zero_grad()
        topt.zero_grad()
        pl.backward()
        tl.backward()
        for (name, pp), (tname, tp) in zip(pm.named_parameters(), tm.named_parameters(),
                                           strict=True):
            assert name == tname
            close(pp.grad, tp.grad, rtol=tol, atol=1e-12)
        popt.step()
        topt.step()
    for k, v in tm.state_dict().items():
        close(pm.state_dict()[k], v, rtol=tol, atol=1e-12)


def test_register_parametrization_matches_torch(mode):
    def reg_p(m):
        parametrize.register_parametrization(m, "weight", PSymmetric())
        parametrize.register_parametrization(m, "weight", PScale())

    def reg_t(m):
        torch.nn.utils.parametrize.register_parametrization(m, "weight", TSymmetric())
        torch.nn.utils.parametrize.register_parametrization(m, "weight", TScale())

    pm, tm = _linear_pair(reg_p, reg_t)
    assert parametrize.is_parametrized(pm, "weight") and not parametrize.is_parametrized(
        pm, "bias")
    assert parametrize.type_before_parametrizations(pm) is pf.nn.Linear
    w = pm.weight.numpy()
    np.testing.assert_allclose(w, w.T)
    close(pm.weight, tm.weight)
    _train_and_compare(pm, tm)
    # assignment goes through right_inverse
    value = RNG.normal(size=(4, 4))
    value = value + value.T
    pm.weight = pf.tensor(value)
    with torch.no_grad():
        tm.weight = torch.tensor(value)
    close(pm.weight, tm.weight)
    with parametrize.cached():
        assert pm.weight is pm.weight
    parametrize.remove_parametrizations(pm, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(tm, "weight")
    assert type(pm) is pf.nn.Linear and list(pm.state_dict()) == list(tm.state_dict())
    close(pm.weight, tm.weight)


def test_parametrization_errors():
    m = pf.nn.Linear(3, 4)

    class Shrink(pf.nn.Module):
        def forward(self, x):
            return x[:2]

    with pytest.raises(ValueError, match="shape or dtype"):
        parametrize.register_parametrization(m, "weight", Shrink())
    with pytest.raises(ValueError, match="no_such"):
        parametrize.register_parametrization(m, "no_such", PScale())
    with pytest.raises(ValueError, match="does not have a parametrization"):
        parametrize.remove_parametrizations(m, "weight")


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization_matches_torch(dim):
    pm, tm = _linear_pair(lambda m: P.weight_norm(m, dim=dim),
                          lambda m: torch.nn.utils.parametrizations.weight_norm(m, dim=dim))
    close(pm.weight, tm.weight)
    close(pm.parametrizations.weight.original0, tm.parametrizations.weight.original0)
    _train_and_compare(pm, tm)


def test_weight_norm_registration_values():
    """g and v computed at registration (not loaded): torch's right_inverse."""
    w = RNG.normal(size=(3, 5))
    pm, tm = pf.nn.Linear(5, 3, dtype=pf.float64), torch.nn.Linear(5, 3, dtype=torch.float64)
    pm.load_state_dict({"weight": w, "bias": np.zeros(3)})
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(w))
    P.weight_norm(pm)
    torch.nn.utils.parametrizations.weight_norm(tm)
    close(pm.parametrizations.weight.original0, tm.parametrizations.weight.original0)
    close(pm.weight, w)


def test_spectral_norm_matches_torch():
    pm, tm = _linear_pair(P.spectral_norm, torch.nn.utils.parametrizations.spectral_norm)
    # train mode: one power iteration per forward, on the loaded u and v
    _train_and_compare(pm, tm, steps=3, tol=1e-8)
    close(pm.parametrizations.weight[0]._u, tm.parametrizations.weight[0]._u, rtol=1e-8)
    pm.eval()
    tm.eval()
    close(pm.weight, tm.weight, rtol=1e-8)
    # the estimate converges to the largest singular value
    w = pm.parametrizations.weight.original.numpy()
    for _ in range(30):
        pm.train()
        _ = pm.weight
    pm.eval()
    np.testing.assert_allclose(np.linalg.norm(pm.weight.numpy(), 2), 1.0, rtol=1e-6)
    assert np.linalg.norm(w, 2) > 0


def test_spectral_norm_conv_and_vector():
    torch.manual_seed(1)
    tc = torch.nn.Conv2d(2, 3, 3, dtype=torch.float64)
    pc = pf.nn.Conv2d(2, 3, 3, dtype=pf.float64)
    pc.load_state_dict({k: v.numpy() for k, v in tc.state_dict().items()})
    torch.nn.utils.parametrizations.spectral_norm(tc)
    P.spectral_norm(pc)
    pc.load_state_dict({k: v.detach().numpy() for k, v in tc.state_dict().items()})
    x = RNG.normal(size=(1, 2, 5, 5))
    close(pc(pf.tensor(x)), tc(torch.tensor(x)), rtol=1e-8)


def test_old_weight_norm_matches_torch():
    torch.manual_seed(0)
    tm = torch.nn.utils.weight_norm(torch.nn.Linear(4, 4, dtype=torch.float64))
    pm = pf.nn.utils.weight_norm(pf.nn.Linear(4, 4, dtype=pf.float64))
    assert sorted(pm.state_dict()) == sorted(tm.state_dict())
    pm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    x = RNG.normal(size=(5, 4))
    close(pm(pf.tensor(x)), tm(torch.tensor(x)))
    popt = pf.optim.SGD(pm.parameters(), lr=0.1)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1)
    for _ in range(3):
        pl, tl = (pm(pf.tensor(x)) ** 2).mean(), (tm(torch.tensor(x)) ** 2).mean()
        close(pl, tl, rtol=1e-9)
        popt.zero_grad()
        topt.zero_grad()
        pl.backward()
        tl.backward()
        popt.step()
        topt.step()
    close(pm.weight_g, tm.weight_g, rtol=1e-9)
    with pytest.raises(RuntimeError, match="two weight_norm"):
        pf.nn.utils.weight_norm(pm)
    pf.nn.utils.remove_weight_norm(pm)
    torch.nn.utils.remove_weight_norm(tm)
    assert sorted(pm.state_dict()) == sorted(tm.state_dict())
    close(pm.weight, tm.weight, rtol=1e-9)


def test_old_spectral_norm_matches_torch():
    torch.manual_seed(0)
    tm = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3, dtype=torch.float64))
    pm = pf.nn.utils.spectral_norm(pf.nn.Linear(4, 3, dtype=pf.float64))
    assert sorted(pm.state_dict()) == sorted(tm.state_dict())
    pm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    x = RNG.normal(size=(5, 4))
    popt = pf.optim.SGD(pm.parameters(), lr=0.1)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1)
    for _ in range(3):  # training mode: a power iteration per forward
        pl, tl = (pm(pf.tensor(x)) ** 2).mean(), (tm(torch.tensor(x)) ** 2).mean()
        close(pl, tl, rtol=1e-9)
        popt.zero_grad()
        topt.zero_grad()
        pl.backward()
        tl.backward()
        popt.step()
        topt.step()
    close(pm.weight_u, tm.weight_u, rtol=1e-9)
    pm.eval()
    tm.eval()
    close(pm(pf.tensor(x)), tm(torch.tensor(x)), rtol=1e-9)
    with pytest.raises(RuntimeError, match="two spectral_norm"):
        pf.nn.utils.spectral_norm(pm)
    pf.nn.utils.remove_spectral_norm(pm)
    torch.nn.utils.remove_spectral_norm(tm)
    assert sorted(pm.state_dict()) == sorted(tm.state_dict())
    close(pm.weight, tm.weight, rtol=1e-9)
