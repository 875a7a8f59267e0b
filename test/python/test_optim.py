"""pf.optim against torch.optim: each optimizer stepped side by side with
torch's from the same state, schedulers' learning rates, state dicts (also
torch's), and the lazy step: forward + backward + update compile once."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf
from pyflame_mlir import nn, optim
from pyflame_mlir.optim import lr_scheduler


class ReLU(nn.Module):
    def forward(self, x: pf.Tensor) -> pf.Tensor:
        return pf.relu(x)


def models(seed: int = 0) -> tuple[nn.Module, torch.nn.Module]:
    torch.manual_seed(seed)
    t = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 3))
    m = nn.Sequential(nn.Linear(5, 7), ReLU(), nn.Linear(7, 3))
    m.load_state_dict(t.state_dict())
    return m, t


RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 5)).astype(np.float32)
Y = RNG.standard_normal((8, 3)).astype(np.float32)


def loss_of(model, x, y):
    return ((model(x) - y) ** 2).mean()


def train_side_by_side(m, t, opt, topt, steps: int, sched=None, tsched=None) -> None:
    x, y = pf.tensor(X), pf.tensor(Y)
    tx, ty = torch.tensor(X), torch.tensor(Y)
    for step in range(steps):
        loss = loss_of(m, x, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        tloss = loss_of(t, tx, ty)
        tloss.backward()
        topt.step()
        topt.zero_grad()
        if sched is not None:
            sched.step()
            tsched.step()
            assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-12)
        np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-5, atol=1e-6,
                                   err_msg=f"step {step}")
        for (name, p), q in zip(m.named_parameters(), t.parameters()):
            np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} after step {step}")


CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.01, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.03, weight_decay=0.2, amsgrad=True)),
]


@pytest.mark.parametrize(("name", "kwargs"), CONFIGS,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)])
def test_optimizer_steps_match_torch(name, kwargs, mode):
    m, t = models()
    opt = getattr(optim, name)(m.parameters(), **kwargs)
    topt = getattr(torch.optim, name)(t.parameters(), **kwargs)
    train_side_by_side(m, t, opt, topt, 6)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_param_groups_match_torch(name):
    m, t = models(1)

    def groups(model):
        first, second = model[0], model[2]
        return [{"params": first.parameters(), "lr": 0.02, "weight_decay": 0.05},
                {"params": second.parameters()}]

    extra = {"momentum": 0.9} if name == "SGD" else {}
    opt = getattr(optim, name)(groups(m), lr=0.05, **extra)
    topt = getattr(torch.optim, name)(groups(t), lr=0.05, **extra)
    assert [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups] == \
        [{k: v for k, v in g.items() if k != "params"} for g in topt.param_groups]
    train_side_by_side(m, t, opt, topt, 5)


SCHEDULERS = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=4, eta_min=0.001)),
    ("LambdaLR", dict(lr_lambda=lambda e: 1.0 / (1 + e))),
    ("LinearLR", dict(start_factor=0.25, total_iters=4)),
]


@pytest.mark.parametrize(("name", "kwargs"), SCHEDULERS, ids=[n for n, _ in SCHEDULERS])
def test_scheduler_lr_sequences_match_torch(name, kwargs):
    p = nn.Parameter(pf.zeros(2))
    q = torch.nn.Parameter(torch.zeros(2))
    opt = optim.SGD([{"params": [p]}], lr=0.1)
    topt = torch.optim.SGD([{"params": [q]}], lr=0.1)
    sched = getattr(lr_scheduler, name)(opt, **kwargs)
    tsched = getattr(torch.optim.lr_scheduler, name)(topt, **kwargs)
    assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-12)
    for _ in range(12):
        opt.step()
        topt.step()
        sched.step()
        tsched.step()
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-12)
        assert opt.param_groups[0]["lr"] == pytest.approx(topt.param_groups[0]["lr"])
    state = sched.state_dict()
    assert state["last_epoch"] == tsched.state_dict()["last_epoch"] == 12
    assert "optimizer" not in state
    again = getattr(lr_scheduler, name)(optim.SGD([nn.Parameter(pf.zeros(1))], lr=0.1),
                                        **kwargs)
    again.load_state_dict(state)
    assert again.last_epoch == 12 and again.get_last_lr() == sched.get_last_lr()


def test_training_with_a_scheduler_matches_torch():
    m, t = models(2)
    opt, topt = optim.AdamW(m.parameters(), lr=0.02), torch.optim.AdamW(t.parameters(), lr=0.02)
    train_side_by_side(m, t, opt, topt, 6, lr_scheduler.CosineAnnealingLR(opt, 3),
                       torch.optim.lr_scheduler.CosineAnnealingLR(topt, 3))


def _to_torch(obj):
    if isinstance(obj, pf.Tensor):
        return torch.tensor(obj.numpy())
    if isinstance(obj, dict):
        return {k: _to_torch(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_to_torch(v) for v in obj]
    return obj


@pytest.mark.parametrize(("name", "kwargs"), [("SGD", dict(lr=0.1, momentum=0.9)),
                                              ("Adam", dict(lr=0.01, amsgrad=True)),
                                              ("AdamW", dict(lr=0.01))])
def test_state_dicts_round_trip_and_load_torchs(name, kwargs):
    m, t = models(3)
    opt = getattr(optim, name)(m.parameters(), **kwargs)
    topt = getattr(torch.optim, name)(t.parameters(), **kwargs)
    train_side_by_side(m, t, opt, topt, 3)
    ours, theirs = opt.state_dict(), topt.state_dict()
    assert list(ours["state"]) == list(theirs["state"]) == [0, 1, 2, 3]
    assert ours["param_groups"] == theirs["param_groups"]
    for k, s in ours["state"].items():
        assert list(s) == list(theirs["state"][k])
        for key, v in s.items():
            np.testing.assert_allclose(np.asarray(v.numpy(), np.float64),
                                       theirs["state"][k][key].numpy(), rtol=1e-5, atol=1e-7)
    # torch's state dict into a fresh optimizer of ours, and ours into torch's:
    # training goes on in step with the original torch optimizer
    m2, _ = models(3)
    m2.load_state_dict(t.state_dict())
    opt2 = getattr(optim, name)(m2.parameters(), **kwargs)
    opt2.load_state_dict(theirs)
    t2 = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 3))
    t2.load_state_dict(_to_torch(m.state_dict()))
    topt2 = getattr(torch.optim, name)(t2.parameters(), **kwargs)
    topt2.load_state_dict(_to_torch(ours))
    train_side_by_side(m2, t, opt2, topt, 3)
    train_side_by_side(m, t2, opt, topt2, 3)


def test_load_state_dict_mismatches_raise():
    m, _ = models()
    opt = optim.Adam(m.parameters())
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict({"state": {}, "param_groups": [{"params": [0], "lr": 1.0}]})


def test_constructor_errors_like_torch():
    p = nn.Parameter(pf.zeros(2))
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD([p], lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([pf.randn(2, requires_grad=True) * 2], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {p}}], lr=0.1)
    with pytest.raises(NotImplementedError, match="fused=True"):
        optim.Adam([p], fused=True)
    opt = optim.SGD([p], lr=0.1)
    opt.add_param_group({"params": nn.Parameter(pf.zeros(1)), "lr": 0.5})
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert repr(opt).startswith("SGD (\nParameter Group 0\n    dampening: 0\n")


def test_closure_and_zero_grad():
    m, t = models(4)
    opt, topt = optim.SGD(m.parameters(), lr=0.1), torch.optim.SGD(t.parameters(), lr=0.1)
    x, y = pf.tensor(X), pf.tensor(Y)

    def closure():
        opt.zero_grad()
        loss = loss_of(m, x, y)
        loss.backward()
        return loss

    def tclosure():
        topt.zero_grad()
        loss = loss_of(t, torch.tensor(X), torch.tensor(Y))
        loss.backward()
        return loss

    for _ in range(2):
        np.testing.assert_allclose(opt.step(closure).item(), topt.step(tclosure).item(),
                                   rtol=1e-5)
    opt.zero_grad(set_to_none=False)
    assert all(not p.grad.numpy().any() for p in m.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in m.parameters())


@pytest.mark.parametrize("name", ["SGD", "AdamW"])
def test_the_step_is_recorded_lazily_and_compiles_once(name, lazy):
    """forward + backward + update are one graph; from the 3rd step on nothing
    compiles, and a scheduler changing lr every step does not recompile."""
    m, _ = models(5)
    kwargs = {"momentum": 0.9} if name == "SGD" else {}
    opt = getattr(optim, name)(m.parameters(), lr=0.05, **kwargs)
    sched = lr_scheduler.ExponentialLR(opt, gamma=0.9)
    x, y = pf.tensor(X), pf.tensor(Y)
    pf.clear_cache()
    compiles = []
    losses = []
    for _ in range(6):
        before = pf.counters()
        loss = loss_of(m, x, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        sched.step()
        assert pf.counters()["evaluations"] == before["evaluations"]  # step() computed nothing
        assert all(pf.is_lazy(p) for p in m.parameters())
        losses.append(loss.item())  # one evaluation: forward, backward and the update
        after = pf.counters()
        assert after["evaluations"] == before["evaluations"] + 1
        compiles.append(after["compiles"] - before["compiles"])
        assert not any(pf.is_lazy(p) for p in m.parameters())
    assert sum(compiles[2:]) == 0, compiles
    assert pf.cache_stats()["hits"] >= 4
    assert losses[-1] < losses[0]
