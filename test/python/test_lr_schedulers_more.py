"""The lead's block of lr schedulers against torch's, lr by lr for every group."""
import math

import pytest
import torch

import pyflame_mlir as pf

LS = pf.optim.lr_scheduler
TLS = torch.optim.lr_scheduler


def _pair(lrs=(0.1, 0.03)):
    pw = [pf.nn.Parameter(pf.zeros(2)) for _ in lrs]
    tw = [torch.nn.Parameter(torch.zeros(2)) for _ in lrs]
    ours = pf.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(pw, lrs)], lr=lrs[0],
                        momentum=0.9)
    theirs = torch.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(tw, lrs)],
                             lr=lrs[0], momentum=0.9)
    return ours, theirs


def _same(o, t):
    ol = [g["lr"] for g in o.param_groups]
    tl = [g["lr"] for g in t.param_groups]
    assert ol == pytest.approx(tl, rel=1e-12, abs=1e-15)


SIMPLE = [
    ("ConstantLR", dict(factor=0.5, total_iters=4)),
    (LS.PolynomialLR.__name__, dict(total_iters=6, power=2.0)),
    (LS.MultiplicativeLR.__name__, dict(lr_lambda=lambda e: 0.9)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts", dict(T_0=4)),
]


@pytest.mark.parametrize("name, kw", SIMPLE, ids=[f"{n}-{i}" for i, (n, _) in
                                                   enumerate(SIMPLE)])
def test_simple_schedulers(name, kw):
    o, t = _pair()
    so, st = getattr(LS, name)(o, **kw), getattr(TLS, name)(t, **kw)
    for _ in range(15):
        _same(o, t)
        assert so.get_last_lr() == pytest.approx(st.get_last_lr())
        o.step()
        t.step()
        so.step()
        st.step()


def test_warm_restarts_fractional_epochs():
    o, t = _pair()
    so = LS.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=3)
    st = TLS.CosineAnnealingWarmRestarts(t, T_0=2, T_mult=3)
    for epoch in [0.0, 0.5, 1.7, 2.0, 3.3, 7.9, 8.0, 12.25, 30.0]:
        so.step(epoch)
        st.step(epoch)
        _same(o, t)


@pytest.mark.filterwarnings("ignore:Detected call of")
def test_sequential_and_chained():
    o, t = _pair()
    so = LS.SequentialLR(o, [LS.LinearLR(o, 0.2, total_iters=3), LS.ExponentialLR(o, 0.8),
                             LS.StepLR(o, 2, 0.5)], milestones=[3, 7])
    st = TLS.SequentialLR(t, [TLS.LinearLR(t, 0.2, total_iters=3), TLS.ExponentialLR(t, 0.8),
                              TLS.StepLR(t, 2, 0.5)], milestones=[3, 7])
    for _ in range(12):
        _same(o, t)
        so.step()
        st.step()
    o, t = _pair()
    so = LS.ChainedScheduler([LS.ConstantLR(o, 0.1, 2), LS.ExponentialLR(o, 0.9)])
    st = TLS.ChainedScheduler([TLS.ConstantLR(t, 0.1, 2), TLS.ExponentialLR(t, 0.9)])
    for _ in range(6):
        _same(o, t)
        so.step()
        st.step()


@pytest.mark.parametrize("kw", [dict(), dict(mode="max", patience=1, cooldown=2),
                                dict(threshold_mode="abs", threshold=0.05, patience=0,
                                     min_lr=[0.01, 0.02], factor=0.5)])
def test_reduce_on_plateau(kw):
    o, t = _pair()
    so, st = LS.ReduceLROnPlateau(o, **kw), TLS.ReduceLROnPlateau(t, **kw)
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.8, 0.85, 0.85, 0.85, 0.84, 0.9, 0.9, 0.9] * 2
    for m in metrics:
        so.step(pf.tensor(m))
        st.step(m)
        _same(o, t)
        assert so.num_bad_epochs == st.num_bad_epochs and so.in_cooldown == st.in_cooldown
    assert math.isclose(so.best, st.best, rel_tol=1e-6)  # ours saw float32 tensors
