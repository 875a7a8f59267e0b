"""pf.optim steps under pf.compile are replayed: the per-step scalars (lr,
bias corrections, step counts) are per-call inputs of the compiled program,
so after the step that creates the optimizer state a compiled training step
records nothing, and its losses, parameters and optimizer state equal the
uncompiled loop's step by step (and torch's)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

STEPS = 6


def _make(opt: str, lib):
    """(model params as arrays, optimizer factory, scheduler factory) for pf or torch."""
    def optimizer(params):
        if opt == "SGD":
            return lib.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.01)
        if opt == "Adam":
            return lib.optim.Adam(params, lr=0.01, betas=(0.8, 0.9))
        if opt == "AdamW":
            return lib.optim.AdamW(params, lr=0.01, weight_decay=0.1)
        return lib.optim.RMSprop(params, lr=0.01, momentum=0.5)

    def scheduler(o):
        return lib.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5)
    return optimizer, scheduler


def _init(seed: int) -> list[np.ndarray]:
    r = np.random.default_rng(seed)
    return [r.standard_normal(s).astype(np.float32) * 0.3 for s in ((8, 6), (6,), (6, 3), (3,))]


def _data(seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    r = np.random.default_rng(seed)
    return [(r.standard_normal((4, 8)).astype(np.float32),
             r.standard_normal((4, 3)).astype(np.float32)) for _ in range(STEPS)]


def _pf_run(opt: str, compiled: bool, sched_inside: bool):
    optimizer, scheduler = _make(opt, pf)
    params = [pf.tensor(a, requires_grad=True) for a in _init(0)]
    o = optimizer(params)
    s = scheduler(o)
    w1, b1, w2, b2 = params

    def step(x, y):
        o.zero_grad()
        loss = ((pf.relu(x @ w1 + b1) @ w2 + b2 - y) ** 2).mean()
        loss.backward()
        o.step()
        if sched_inside:
            s.step()
        return loss

    f = pf.compile(step) if compiled else step
    history = []
    for i, (x, y) in enumerate(_data(1)):
        before = pf.COUNTERS.ops_recorded
        loss = f(pf.tensor(x), pf.tensor(y)).item()
        recorded = pf.COUNTERS.ops_recorded - before
        if not sched_inside:
            s.step()
        state = [v.numpy().copy() for st in o.state.values() for v in st.values()
                 if isinstance(v, pf.Tensor)]
        history.append((loss, [p.numpy().copy() for p in params], state,
                        [g["lr"] for g in o.param_groups], recorded, i))
    return history, f, o


def _torch_run(opt: str):
    optimizer, scheduler = _make(opt, torch)
    params = [torch.tensor(a, requires_grad=True) for a in _init(0)]
    o = optimizer(params)
    s = scheduler(o)
    w1, b1, w2, b2 = params
    out = []
    for x, y in _data(1):
        o.zero_grad()
        loss = ((torch.relu(torch.tensor(x) @ w1 + b1) @ w2 + b2 - torch.tensor(y)) ** 2).mean()
        loss.backward()
        o.step()
        s.step()
        out.append((loss.item(), [p.detach().numpy().copy() for p in params]))
    return out


@pytest.mark.parametrize("opt,sched_inside", [("SGD", True), ("Adam", False),
                                              ("AdamW", True), ("RMSprop", False)])
def test_compiled_optimizer_step_replays_and_matches(opt, sched_inside):
    plain, _, _ = _pf_run(opt, False, sched_inside)
    comp, cf, o = _pf_run(opt, True, sched_inside)
    ref = _torch_run(opt)
    for (lp, pp, sp, lrp, _, _), (lc, pc, sc, lrc, recorded, i), (lt, pt) in zip(plain, comp,
                                                                               ref):
        assert lp == lc, f"step {i}"
        assert lrp == lrc
        for a, b in zip(pp + sp, pc + sc):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(lc, lt, rtol=1e-5)
        for a, t in zip(pc, pt):
            np.testing.assert_allclose(a, t, rtol=1e-4, atol=1e-6)
        if i >= 2:  # the first call creates the optimizer state, the second traces
            assert recorded == 0, f"step {i} recorded {recorded} ops"
    st = cf.stats()
    assert st["hits"] == STEPS - 2 and st["python_calls"] == 1, st
    if opt != "SGD":
        assert all(s["step"] == STEPS for s in o.state.values())


def test_changing_a_baked_hyperparameter_retraces():
    p = pf.tensor(np.ones(3, np.float32), requires_grad=True)
    o = pf.optim.SGD([p], lr=0.1, momentum=0.9)

    def step():
        o.zero_grad()
        (p * p).sum().backward()
        o.step()

    cf = pf.compile(step)
    for _ in range(3):
        cf()
    assert cf.stats()["hits"] == 1
    q = torch.ones(3, requires_grad=True)
    to = torch.optim.SGD([q], lr=0.1, momentum=0.9)
    for _ in range(3):
        to.zero_grad()
        (q * q).sum().backward()
        to.step()
    o.param_groups[0]["momentum"] = 0.5  # baked into the program: a guard fails
    to.param_groups[0]["momentum"] = 0.5
    for _ in range(2):
        cf()
        to.zero_grad()
        (q * q).sum().backward()
        to.step()
    assert cf.stats()["retraces"] == 1
    np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-5)
