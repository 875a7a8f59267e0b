"""CyclicLR and OneCycleLR against torch's, step by step: the lr and the
momentum (SGD's ``momentum``, Adam's beta1) of every param group."""

from __future__ import annotations

import pytest
import torch

import pyflame_mlir as pf
from pyflame_mlir import nn, optim
from pyflame_mlir.optim import lr_scheduler

CASES = [
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3)),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=2,
                      step_size_down=5, mode="triangular2")),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4, mode="exp_range", gamma=0.9,
                      base_momentum=[0.7, 0.75], max_momentum=0.95)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, cycle_momentum=False)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=lambda x: 0.5 ** x,
                      scale_mode="iterations")),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=20)),
    ("OneCycleLR", dict(max_lr=[0.5, 0.2], epochs=4, steps_per_epoch=5, pct_start=0.25,
                        anneal_strategy="linear")),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=20, three_phase=True, div_factor=10.0,
                        final_div_factor=100.0, base_momentum=0.8, max_momentum=[0.9, 0.99])),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=20, cycle_momentum=False)),
]


def _groups(values: list) -> list[dict]:
    return [{"params": [v]} for v in values]


def _hyper(groups: list[dict]) -> list[float]:
    """lr and momentum (or beta1) of every group, flat (-1 where absent)."""
    return [v for g in groups for v in (g["lr"], g.get("momentum", -1.0),
                                         g.get("betas", (-1.0,))[0])]


@pytest.mark.parametrize("adam", [False, True], ids=["sgd", "adam"])
@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}{i}" for i, (n, _) in
                                                          enumerate(CASES)])
def test_cyclic_schedulers_match_torch_step_by_step(name, kwargs, adam):
    ps = [nn.Parameter(pf.zeros(2)), nn.Parameter(pf.zeros(3))]
    qs = [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(3))]
    if adam:
        opt, topt = optim.Adam(_groups(ps), lr=0.1), torch.optim.Adam(_groups(qs), lr=0.1)
    else:
        opt = optim.SGD(_groups(ps), lr=0.1, momentum=0.9)
        topt = torch.optim.SGD(_groups(qs), lr=0.1, momentum=0.9)
    sched = getattr(lr_scheduler, name)(opt, **kwargs)
    tsched = getattr(torch.optim.lr_scheduler, name)(topt, **kwargs)
    assert _hyper(opt.param_groups) == pytest.approx(_hyper(topt.param_groups), rel=1e-12)
    for _ in range(19):
        opt.step()
        topt.step()
        sched.step()
        tsched.step()
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-12)
        assert _hyper(opt.param_groups) == pytest.approx(_hyper(topt.param_groups), rel=1e-12)
    # the state dict has torch's entries and resumes the schedule
    state, tstate = sched.state_dict(), tsched.state_dict()
    assert state["last_epoch"] == tstate["last_epoch"] == 19
    assert set(state) <= set(tstate) | {"_momentum_key"}
    fresh = [nn.Parameter(pf.zeros(2)), nn.Parameter(pf.zeros(3))]
    again_opt = (optim.Adam(_groups(fresh), lr=0.1) if adam
                 else optim.SGD(_groups(fresh), lr=0.1, momentum=0.9))
    again = getattr(lr_scheduler, name)(again_opt, **kwargs)
    again.load_state_dict(state)
    assert again.last_epoch == 19 and again.get_last_lr() == sched.get_last_lr()


def test_one_cycle_past_total_steps_and_bad_arguments_raise_like_torch():
    opt = optim.SGD([nn.Parameter(pf.zeros(2))], lr=0.1, momentum=0.9)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        sched.step()
    with pytest.raises(ValueError, match="total_steps OR"):
        lr_scheduler.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="anneal_strategy"):
        lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=5, anneal_strategy="exp")
    with pytest.raises(ValueError, match="mode is invalid"):
        lr_scheduler.CyclicLR(opt, 0.1, 1.0, mode="sawtooth")
    with pytest.raises(ValueError, match="max_lr must have the same length"):
        lr_scheduler.CyclicLR(opt, 0.1, [1.0, 2.0])
    no_momentum = optim.SGD([nn.Parameter(pf.zeros(2))], lr=0.1)
    lr_scheduler.CyclicLR(no_momentum, 0.1, 1.0)  # SGD has a momentum entry (0): allowed
