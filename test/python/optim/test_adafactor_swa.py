"""``optim.Adafactor`` and ``optim.swa_utils`` step by step against torch's
(losses, parameters, optimizer state, lazily and eagerly; a replay under
pf.compile; state dict round trips in both directions)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


def _models(double: bool = False):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    pm = pf.nn.Sequential(pf.nn.Linear(4, 8), pf.nn.Tanh(), pf.nn.Linear(8, 2))
    if double:
        tm = tm.double()
    pm.load_state_dict({k: pf.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return pm, tm


def _compare_state(po, to, rtol):
    for sp, st in zip(po.state_dict()["state"].values(), to.state_dict()["state"].values()):
        assert set(sp) == set(st)
        for k, v in st.items():
            got = sp[k]
            got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
            np.testing.assert_allclose(got, v.numpy(), rtol=rtol, atol=1e-9, err_msg=k)


ADAFACTOR = [{}, {"lr": 0.05, "weight_decay": 0.1}, {"maximize": True, "d": 2.0},
             {"eps": (1e-20, 1e-2), "beta2_decay": -0.5}]


@pytest.mark.parametrize("kw", ADAFACTOR)
def test_adafactor_against_torch(kw, mode):
    pm, tm = _models(double=True)
    for p in pm.parameters():
        p.data = p.data.double()
    po, to = pf.optim.Adafactor(pm.parameters(), **kw), torch.optim.Adafactor(tm.parameters(),
                                                                              **kw)
    rng = np.random.default_rng(0)
    for _ in range(6):
        x, y = rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
        lp = ((pm(pf.tensor(x)) - pf.tensor(y)) ** 2).mean()
        po.zero_grad()
        lp.backward()
        po.step()
        lt = ((tm(torch.tensor(x)) - torch.tensor(y)) ** 2).mean()
        to.zero_grad()
        lt.backward()
        to.step()
        assert lp.item() == pytest.approx(lt.item(), rel=1e-10)
    for p, q in zip(pm.parameters(), tm.parameters()):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12)
    _compare_state(po, to, 1e-10)


def test_adafactor_3d_parameter_and_state_dict_round_trip():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((2, 3, 4))
    pw, tw = pf.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    po, to = pf.optim.Adafactor([pw], lr=0.1), torch.optim.Adafactor([tw], lr=0.1)
    for i in range(3):
        g = rng.standard_normal(w.shape)
        if i == 2:  # continue from each other's state dicts
            po2 = pf.optim.Adafactor([pw], lr=0.1)
            po2.load_state_dict(to.state_dict())
            to2 = torch.optim.Adafactor([tw], lr=0.1)
            to2.load_state_dict({"state": {0: {k: torch.tensor(np.asarray(
                v.numpy() if hasattr(v, "numpy") else v)) for k, v in
                po.state_dict()["state"][0].items()}},
                "param_groups": to.state_dict()["param_groups"]})
            po, to = po2, to2
        pw.grad, tw.grad = pf.tensor(g), torch.tensor(g)
        po.step()
        to.step()
        np.testing.assert_allclose(pw.numpy(), tw.detach().numpy(), rtol=1e-10)
    _compare_state(po, to, 1e-10)
    assert po.state_dict()["state"][0]["row_var"].shape == (2, 3, 1)
    with pytest.raises(ValueError, match="beta2_decay"):
        pf.optim.Adafactor([pw], beta2_decay=0.5)
    with pytest.raises(ValueError, match="Clipping threshold"):
        pf.optim.Adafactor([pw], d=0.5)


def test_adafactor_replayed_under_compile():
    pm, tm = _models()
    po, to = pf.optim.Adafactor(pm.parameters()), torch.optim.Adafactor(tm.parameters())
    x = np.random.default_rng(2).standard_normal((5, 4)).astype(np.float32)

    @pf.compile
    def step(xb):
        loss = pm(xb).pow(2).mean()
        po.zero_grad()
        loss.backward()
        po.step()
        return loss

    for _ in range(6):
        lp = step(pf.tensor(x))
        lt = tm(torch.tensor(x)).pow(2).mean()
        to.zero_grad()
        lt.backward()
        to.step()
        assert lp.item() == pytest.approx(lt.item(), rel=1e-5)
    assert step.stats()["hits"] >= 4
    for p, q in zip(pm.parameters(), tm.parameters()):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)


# ---- swa_utils ----

@pytest.mark.parametrize("avg", ["swa", "ema_multi", "ema", "swa_fn", "buffers"])
def test_averaged_model_against_torch(avg):
    def build(lib):
        torch.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))

    tm = build(torch).double()
    pm = pf.nn.Sequential(pf.nn.Linear(3, 4, dtype=pf.float64),
                          pf.nn.BatchNorm1d(4, dtype=pf.float64),
                          pf.nn.Linear(4, 2, dtype=pf.float64))
    pm.load_state_dict({k: pf.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    kw_t, kw_p = {}, {}
    tsu, psu = torch.optim.swa_utils, pf.optim.swa_utils
    if avg == "ema_multi":
        kw_t["multi_avg_fn"], kw_p["multi_avg_fn"] = (tsu.get_ema_multi_avg_fn(0.9),
                                                      psu.get_ema_multi_avg_fn(0.9))
    elif avg == "ema":
        kw_t["avg_fn"], kw_p["avg_fn"] = tsu.get_ema_avg_fn(0.8), psu.get_ema_avg_fn(0.8)
    elif avg == "swa_fn":
        kw_t["avg_fn"], kw_p["avg_fn"] = tsu.get_swa_avg_fn(), psu.get_swa_avg_fn()
    elif avg == "buffers":
        kw_t["use_buffers"] = kw_p["use_buffers"] = True
        kw_t["multi_avg_fn"], kw_p["multi_avg_fn"] = (tsu.get_ema_multi_avg_fn(0.5),
                                                      psu.get_ema_multi_avg_fn(0.5))
    ta, pa = tsu.AveragedModel(tm, **kw_t), psu.AveragedModel(pm, **kw_p)
    to = torch.optim.SGD(tm.parameters(), lr=0.1)
    po = pf.optim.SGD(pm.parameters(), lr=0.1)
    rng = np.random.default_rng(3)
    for _ in range(4):
        x = rng.standard_normal((6, 3))
        lt = tm(torch.tensor(x)).pow(2).sum()
        to.zero_grad()
        lt.backward()
        to.step()
        lp = pm(pf.tensor(x)).pow(2).sum()
        po.zero_grad()
        lp.backward()
        po.step()
        ta.update_parameters(tm)
        pa.update_parameters(pm)
    theirs, ours = ta.state_dict(), pa.state_dict()
    assert list(ours) == list(theirs)
    for k, v in theirs.items():
        np.testing.assert_allclose(ours[k].numpy(), v.numpy(), rtol=1e-10, err_msg=k)
    x = rng.standard_normal((5, 3))
    ta.eval()
    pa.eval()
    np.testing.assert_allclose(pa(pf.tensor(x)).numpy(), ta(torch.tensor(x)).detach().numpy(),
                               rtol=1e-10)
    fresh = psu.AveragedModel(pm)
    fresh.load_state_dict(ours)
    assert int(fresh.n_averaged.item()) == 4


def test_update_bn_against_torch():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).double()
    pm = pf.nn.Sequential(pf.nn.Linear(3, 4, dtype=pf.float64),
                          pf.nn.BatchNorm1d(4, dtype=pf.float64))
    pm.load_state_dict({k: pf.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    data = [np.random.default_rng(i).standard_normal((5, 3)) for i in range(3)]
    tm.eval()
    pm.eval()
    torch.optim.swa_utils.update_bn([(torch.tensor(d), 0) for d in data], tm)
    pf.optim.swa_utils.update_bn([(pf.tensor(d), 0) for d in data], pm)
    assert not pm.training and pm[1].momentum == 0.1
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(pm.state_dict()[k].numpy(), v.numpy(), rtol=1e-10, err_msg=k)


@pytest.mark.parametrize("kw", [{"swa_lr": 0.05}, {"swa_lr": 0.5, "anneal_epochs": 3,
                                                   "anneal_strategy": "linear"},
                                {"swa_lr": 0.01, "anneal_epochs": 0}])
def test_swalr_against_torch(kw):
    tp, pp = torch.zeros(2, requires_grad=True), pf.zeros(2, requires_grad=True)
    to, po = torch.optim.SGD([tp], lr=0.2), pf.optim.SGD([pp], lr=0.2)
    ts = torch.optim.swa_utils.SWALR(to, **kw)
    ps = pf.optim.swa_utils.SWALR(po, **kw)
    for _ in range(14):
        assert ps.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-12)
        to.step()
        ts.step()
        ps.step()
    state = ps.state_dict()
    ps2 = pf.optim.swa_utils.SWALR(po, **kw)
    ps2.load_state_dict(state)
    assert ps2.last_epoch == ts.last_epoch
    with pytest.raises(ValueError, match="anneal_strategy"):
        pf.optim.swa_utils.SWALR(po, 0.1, anneal_strategy="exp")


# ---- Muon ----

def test_newton_schulz_matches_torch_bf16():
    from torch.optim._muon import _zeropower_via_newtonschulz as theirs

    from pyflame_mlir.optim.muon import zeropower_via_newtonschulz as ours

    for shape in ((6, 4), (4, 9), (16, 16)):
        g = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
        got = ours(pf.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7)
        want = theirs(torch.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7)
        assert got.dtype == pf.bfloat16
        np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), atol=2e-3)


@pytest.mark.parametrize("kw", [{}, {"lr": 0.02, "nesterov": False, "weight_decay": 0.0},
                                {"adjust_lr_fn": "match_rms_adamw", "momentum": 0.9}])
def test_muon_against_torch(kw, mode):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 8, bias=False), torch.nn.Tanh(),
                             torch.nn.Linear(8, 2, bias=False))
    pm = pf.nn.Sequential(pf.nn.Linear(4, 8, bias=False), pf.nn.Tanh(),
                          pf.nn.Linear(8, 2, bias=False))
    pm.load_state_dict({k: pf.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    po, to = pf.optim.Muon(pm.parameters(), **kw), torch.optim.Muon(tm.parameters(), **kw)
    rng = np.random.default_rng(0)
    for _ in range(4):
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
        assert lp.item() == pytest.approx(lt.item(), rel=1e-3)
    lr = kw.get("lr", 1e-3) * 2.0  # an update is bf16: compare to its size
    for p, q in zip(pm.parameters(), tm.parameters()):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), atol=lr * 2e-2)
    _compare_state(po, to, 1e-4)
    with pytest.raises(ValueError, match="only supports 2D parameters"):
        pf.optim.Muon([pf.zeros(3, requires_grad=True)])
