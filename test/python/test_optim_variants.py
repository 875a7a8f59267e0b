"""Adamax, NAdam, RAdam, Adadelta, Rprop and ASGD step by step against torch's (losses,
parameters and state), lazily, eagerly and replayed under pf.compile."""
import numpy as np
import pytest
import torch

import pyflame_mlir as pf

CONFIGS = [
    ("Adamax", {}), ("Adamax", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {}), ("NAdam", {"weight_decay": 0.05, "momentum_decay": 0.01}),
    ("NAdam", {"weight_decay": 0.05, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.01}), ("RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("Adadelta", {}), ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.01}),
    ("Rprop", {}), ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.1),
                              "maximize": True}),
    ("ASGD", {"lr": 0.05, "t0": 3}),
    ("ASGD", {"lr": 0.05, "t0": 1, "lambd": 0.1, "alpha": 0.5, "weight_decay": 0.1}),
]


def _models():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    pm = pf.nn.Sequential(pf.nn.Linear(4, 8), pf.nn.Tanh(), pf.nn.Linear(8, 2))
    pm.load_state_dict({k: pf.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return pm, tm


@pytest.mark.parametrize("name, kw", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in
                                                   enumerate(CONFIGS)])
def test_against_torch(name, kw, mode):
    pm, tm = _models()
    po, to = getattr(pf.optim, name)(pm.parameters(), **kw), \
        getattr(torch.optim, name)(tm.parameters(), **kw)
    rng = np.random.default_rng(0)
    for _ in range(8):  # RAdam's rectification starts at step 6
        x = rng.standard_normal((5, 4)).astype(np.float32)
        y = rng.standard_normal((5, 2)).astype(np.float32)
        lp = ((pm(pf.tensor(x)) - pf.tensor(y)) ** 2).mean()
        po.zero_grad()
        lp.backward()
        po.step()
        lt = ((tm(torch.tensor(x)) - torch.tensor(y)) ** 2).mean()
        to.zero_grad()
        lt.backward()
        to.step()
        assert lp.item() == pytest.approx(lt.item(), rel=1e-5, abs=1e-6)
    for p, q in zip(pm.parameters(), tm.parameters()):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)
    for sp, st in zip(po.state_dict()["state"].values(), to.state_dict()["state"].values()):
        for k, v in st.items():
            got = sp[k]
            got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
            np.testing.assert_allclose(got, v.numpy() if hasattr(v, "numpy") else v,
                                       rtol=1e-5, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("name, kw", [("NAdam", {}), ("RAdam", {}), ("Rprop", {}),
                                      ("ASGD", {"t0": 3, "lambd": 0.1})])
def test_replayed_under_compile(name, kw):
    pm, tm = _models()
    po = getattr(pf.optim, name)(pm.parameters(), lr=0.01, **kw)
    to = getattr(torch.optim, name)(tm.parameters(), lr=0.01, **kw)
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)

    @pf.compile
    def step(xb):
        loss = pm(xb).pow(2).mean()
        po.zero_grad()
        loss.backward()
        po.step()
        return loss

    for _ in range(9):
        lp = step(pf.tensor(x))
        lt = tm(torch.tensor(x)).pow(2).mean()
        to.zero_grad()
        lt.backward()
        to.step()
        assert lp.item() == pytest.approx(lt.item(), rel=1e-5)
    assert step.stats()["hits"] >= 6
    for p, q in zip(pm.parameters(), tm.parameters()):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)
