"""pf.nn layer modules against torch.nn: each module gets the torch module's
state_dict and must give torch's output, input gradient and parameter
gradients (float64), in train and eval mode where they differ."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

import pyflame_mlir as pf
import pyflame_mlir.nn.layers as L
from pyflame_mlir import nn

RNG = np.random.default_rng(0)


def arr(*shape: int) -> np.ndarray:
    return RNG.uniform(-2, 2, shape)


# name -> (pf class, torch class, constructor args, kwargs, input shapes, extra consts)
CASES: dict[str, tuple] = {
    "LayerNorm": ("LayerNorm", ((4,),), {}, [(2, 3, 4)]),
    "LayerNorm_nobias": ("LayerNorm", ((3, 4),), {"bias": False, "eps": 1e-3}, [(2, 3, 4)]),
    "RMSNorm": ("RMSNorm", ([4],), {}, [(2, 3, 4)]),
    "GroupNorm": ("GroupNorm", (2, 4), {}, [(3, 4, 5)]),
    "BatchNorm1d": ("BatchNorm1d", (3,), {}, [(5, 3)]),
    "BatchNorm1d_3d": ("BatchNorm1d", (3,), {"momentum": 0.2}, [(4, 3, 2)]),
    "BatchNorm2d": ("BatchNorm2d", (3,), {}, [(2, 3, 2, 3)]),
    "BatchNorm2d_noaffine": ("BatchNorm2d", (2,), {"affine": False}, [(3, 2, 2, 2)]),
    "BatchNorm2d_cumulative": ("BatchNorm2d", (2,), {"momentum": None}, [(3, 2, 2, 2)]),
    "Conv1d": ("Conv1d", (3, 4, 3), {"stride": 2, "padding": 1}, [(2, 3, 9)]),
    "Conv2d": ("Conv2d", (2, 4, (3, 2)), {"padding": "same", "groups": 2}, [(2, 2, 5, 4)]),
    "Conv2d_reflect": ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "reflect",
                                             "bias": False}, [(1, 2, 4, 5)]),
    "Conv2d_circular": ("Conv2d", (2, 3, 3), {"padding": (1, 2), "padding_mode": "circular",
                                              "stride": 2}, [(1, 2, 6, 5)]),
    "ConvTranspose2d": ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "groups": 2,
                                                      "output_padding": 1}, [(2, 4, 3, 3)]),
    "ConvTranspose1d": ("ConvTranspose1d", (2, 3, 2), {"padding": 1}, [(2, 2, 5)]),
    "MaxPool2d": ("MaxPool2d", (2,), {}, [(2, 3, 4, 6)]),
    "MaxPool1d": ("MaxPool1d", (3, 2), {"padding": 1}, [(2, 3, 7)]),
    "AvgPool2d": ("AvgPool2d", (3,), {"stride": 2, "padding": 1}, [(2, 3, 5, 6)]),
    "AvgPool1d": ("AvgPool1d", (2,), {}, [(2, 3, 6)]),
    "AdaptiveAvgPool2d": ("AdaptiveAvgPool2d", ((2, 3),), {}, [(2, 3, 5, 7)]),
    "AdaptiveMaxPool2d": ("AdaptiveMaxPool2d", (2,), {}, [(2, 3, 5, 7)]),
    "Flatten": ("Flatten", (), {}, [(2, 3, 4)]),
    "Unflatten": ("Unflatten", (1, (2, 3)), {}, [(2, 6, 4)]),
    "ReLU": ("ReLU", (), {}, [(3, 4)]),
    "ReLU6": ("ReLU6", (), {}, [(3, 4)]),
    "GELU": ("GELU", (), {"approximate": "tanh"}, [(3, 4)]),
    "SiLU": ("SiLU", (), {}, [(3, 4)]),
    "Mish": ("Mish", (), {}, [(3, 4)]),
    "Tanh": ("Tanh", (), {}, [(3, 4)]),
    "Sigmoid": ("Sigmoid", (), {}, [(3, 4)]),
    "Softmax": ("Softmax", (), {"dim": 1}, [(3, 4)]),
    "LogSoftmax": ("LogSoftmax", (0,), {}, [(3, 4)]),
    "LeakyReLU": ("LeakyReLU", (0.1,), {}, [(3, 4)]),
    "ELU": ("ELU", (), {"alpha": 0.7}, [(3, 4)]),
    "Softplus": ("Softplus", (2.0, 1.0), {}, [(3, 4)]),
    "Hardtanh": ("Hardtanh", (-0.5, 0.5), {}, [(3, 4)]),
    "Dropout_eval_only": ("Dropout", (0.3,), {}, [(3, 4)]),
    "MSELoss": ("MSELoss", (), {}, [(3, 4), (3, 4)]),
    "L1Loss": ("L1Loss", (), {"reduction": "sum"}, [(3, 4), (3, 4)]),
    "SmoothL1Loss": ("SmoothL1Loss", (), {"beta": 0.5}, [(3, 4), (3, 4)]),
    "HuberLoss": ("HuberLoss", (), {"delta": 0.5}, [(3, 4), (3, 4)]),
    "KLDivLoss": ("KLDivLoss", (), {"reduction": "batchmean", "log_target": True},
                  [(3, 4), (3, 4)]),
}


def _torch_module(name: str, args: tuple, kwargs: dict) -> torch.nn.Module:
    return getattr(torch.nn, name)(*args, **kwargs).double()


def _pf_module(name: str, args: tuple, kwargs: dict, state: dict) -> nn.Module:
    m = getattr(L, name)(*args, **kwargs).double()
    m.load_state_dict(state)
    return m


def _randomize(tm: torch.nn.Module) -> None:
    """Non-trivial affine parameters and running stats (torch inits them to 1/0)."""
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.tensor(arr(*p.shape)))
        for name, b in tm.named_buffers():
            if b.dtype.is_floating_point:
                b.copy_(torch.tensor(RNG.uniform(0.5, 1.5, b.shape) if "var" in name
                                     else arr(*b.shape)))


def _compare(name: str, pm: nn.Module, tm: torch.nn.Module, shapes: list, mode: str) -> None:
    xs = [arr(*s) for s in shapes]
    txs = [torch.tensor(x, requires_grad=True) for x in xs]
    pxs = [pf.tensor(x, requires_grad=True) for x in xs]
    tout = tm(*txs)
    pout = pm(*pxs)
    np.testing.assert_allclose(pout.numpy(), tout.detach().numpy(), rtol=1e-9, atol=1e-11,
                               err_msg=f"{name} ({mode}): output")
    ct = arr(*tout.shape)
    (tout * torch.tensor(ct)).sum().backward()
    (pout * pf.tensor(ct)).sum().backward()
    for i, (px, tx) in enumerate(zip(pxs, txs)):
        np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-8, atol=1e-10,
                                   err_msg=f"{name} ({mode}): grad of input {i}")
    tparams = dict(tm.named_parameters())
    for k, p in pm.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tparams[k].grad.numpy(), rtol=1e-8,
                                   atol=1e-10, err_msg=f"{name} ({mode}): grad of {k}")
    tbufs = dict(tm.named_buffers())
    for k, b in pm.named_buffers():
        np.testing.assert_allclose(b.numpy(), tbufs[k].numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=f"{name} ({mode}): buffer {k}")


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("train", [True, False])
def test_module_matches_torch_with_its_state_dict(case: str, train: bool, mode: str) -> None:
    name, args, kwargs, shapes = CASES[case]
    if train and case.endswith("eval_only"):
        pytest.skip("random in training: see test_dropout_module")
    tm = _torch_module(name, args, kwargs)
    _randomize(tm)
    pm = _pf_module(name, args, kwargs, tm.state_dict())
    assert sorted(pm.state_dict()) == sorted(tm.state_dict())
    tm.train(train)
    pm.train(train)
    for _ in range(2):  # twice: running statistics update in place between the steps
        for p in (*tm.parameters(), *pm.parameters()):
            p.grad = None
        _compare(case, pm, tm, shapes, f"{'train' if train else 'eval'}, {mode}")


@pytest.mark.parametrize("name,args,kwargs,inputs", [
    ("CrossEntropyLoss", (), {"ignore_index": 1, "label_smoothing": 0.1},
     lambda: [arr(5, 4), RNG.integers(0, 4, 5)]),
    ("CrossEntropyLoss", (), {"reduction": "sum"},
     lambda: [arr(2, 3, 4), RNG.integers(0, 3, (2, 4))]),
    ("NLLLoss", (), {}, lambda: [arr(5, 4), RNG.integers(0, 4, 5)]),
    ("BCELoss", (), {}, lambda: [RNG.uniform(0.1, 0.9, (3, 4)), RNG.uniform(0, 1, (3, 4))]),
    ("BCEWithLogitsLoss", (), {}, lambda: [arr(3, 4), RNG.uniform(0, 1, (3, 4))]),
])
def test_losses_with_weights_match_torch(name: str, args: tuple, kwargs: dict,
                                         inputs: Callable) -> None:
    x, t = inputs()
    weighted = dict(kwargs)
    if name == "BCEWithLogitsLoss":
        weighted["pos_weight"] = RNG.uniform(0.5, 2, 4)
    elif name == "BCELoss":
        weighted["weight"] = RNG.uniform(0.5, 2, 4)
    else:
        weighted["weight"] = RNG.uniform(0.5, 2, x.shape[1])
    for kw in (kwargs, weighted):
        tm = getattr(torch.nn, name)(*args, **{k: torch.tensor(v) if isinstance(v, np.ndarray)
                                               else v for k, v in kw.items()})
        pm = getattr(L, name)(*args, **{k: pf.tensor(v) if isinstance(v, np.ndarray) else v
                                        for k, v in kw.items()})
        tx = torch.tensor(x, requires_grad=True)
        px = pf.tensor(x, requires_grad=True)
        tl, pl = tm(tx, torch.tensor(t)), pm(px, pf.tensor(t))
        np.testing.assert_allclose(pl.numpy(), tl.detach().numpy(), rtol=1e-10)
        tl.sum().backward()
        pl.sum().backward()
        np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("mask", ["none", "causal_bool", "float", "padding"])
def test_multihead_attention_matches_torch(batch_first: bool, mask: str, mode: str) -> None:
    e, h, n, length = 8, 2, 3, 5
    tm = torch.nn.MultiheadAttention(e, h, batch_first=batch_first).double()
    _randomize(tm)
    pm = L.MultiheadAttention(e, h, batch_first=batch_first).double()
    pm.load_state_dict(tm.state_dict())
    shape = (n, length, e) if batch_first else (length, n, e)
    q, k, v = arr(*shape), arr(*shape), arr(*shape)
    kw_t: dict = {}
    kw_p: dict = {}
    if mask == "causal_bool":
        m = np.triu(np.ones((length, length), bool), 1)
        kw_t = {"attn_mask": torch.tensor(m), "is_causal": True}
        kw_p = {"attn_mask": pf.tensor(m), "is_causal": True}
    elif mask == "float":
        m = arr(length, length)
        kw_t, kw_p = {"attn_mask": torch.tensor(m)}, {"attn_mask": pf.tensor(m)}
    elif mask == "padding":
        m = np.zeros((n, length), bool)
        m[0, -2:] = True
        kw_t = {"key_padding_mask": torch.tensor(m), "average_attn_weights": False}
        kw_p = {"key_padding_mask": pf.tensor(m), "average_attn_weights": False}
    tq = torch.tensor(q, requires_grad=True)
    pq = pf.tensor(q, requires_grad=True)
    tout, tw = tm(tq, torch.tensor(k), torch.tensor(v), **kw_t)
    pout, pw = pm(pq, pf.tensor(k), pf.tensor(v), **kw_p)
    np.testing.assert_allclose(pout.numpy(), tout.detach().numpy(), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(pw.numpy(), tw.detach().numpy(), rtol=1e-9, atol=1e-11)
    ct = arr(*tout.shape)
    (tout * torch.tensor(ct)).sum().backward()
    (pout * pf.tensor(ct)).sum().backward()
    np.testing.assert_allclose(pq.grad.numpy(), tq.grad.numpy(), rtol=1e-8, atol=1e-10)
    tparams = dict(tm.named_parameters())
    for name, p in pm.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tparams[name].grad.numpy(), rtol=1e-8,
                                   atol=1e-10, err_msg=name)


@pytest.mark.parametrize("kv_dims", [(None, None), (6, 5)])
@pytest.mark.parametrize("bias_kv,zero_attn", [(False, False), (True, False), (False, True),
                                               (True, True)])
@pytest.mark.parametrize("mask", ["bool", "float", "padding"])
def test_multihead_attention_kdim_bias_kv_zero_attn(kv_dims, bias_kv, zero_attn, mask) -> None:
    e, h, n, lq, lk = 8, 2, 3, 4, 5
    kdim, vdim = kv_dims
    kw = dict(kdim=kdim, vdim=vdim, add_bias_kv=bias_kv, add_zero_attn=zero_attn,
              batch_first=True)
    tm = torch.nn.MultiheadAttention(e, h, **kw).double()
    _randomize(tm)
    pm = L.MultiheadAttention(e, h, **kw).double()
    assert sorted(pm.state_dict()) == sorted(tm.state_dict())
    pm.load_state_dict(tm.state_dict())
    q, k, v = arr(n, lq, e), arr(n, lk, kdim or e), arr(n, lk, vdim or e)
    if mask == "bool":
        m = np.triu(np.ones((lq, lk), bool), 1)
        kt, kp = {"attn_mask": torch.tensor(m)}, {"attn_mask": pf.tensor(m)}
    elif mask == "float":
        m = arr(n * h, lq, lk)
        kt, kp = {"attn_mask": torch.tensor(m)}, {"attn_mask": pf.tensor(m)}
    else:
        m = np.zeros((n, lk), bool)
        m[1, -2:] = True
        kt = {"key_padding_mask": torch.tensor(m), "average_attn_weights": False}
        kp = {"key_padding_mask": pf.tensor(m), "average_attn_weights": False}
    tq, tk = torch.tensor(q, requires_grad=True), torch.tensor(k, requires_grad=True)
    pq, pk = pf.tensor(q, requires_grad=True), pf.tensor(k, requires_grad=True)
    tout, tw = tm(tq, tk, torch.tensor(v), **kt)
    pout, pw = pm(pq, pk, pf.tensor(v), **kp)
    np.testing.assert_allclose(pout.numpy(), tout.detach().numpy(), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(pw.numpy(), tw.detach().numpy(), rtol=1e-9, atol=1e-11)
    ct = arr(*tout.shape)
    (tout * torch.tensor(ct)).sum().backward()
    (pout * pf.tensor(ct)).sum().backward()
    np.testing.assert_allclose(pq.grad.numpy(), tq.grad.numpy(), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(pk.grad.numpy(), tk.grad.numpy(), rtol=1e-8, atol=1e-10)
    tparams = dict(tm.named_parameters())
    for name, p in pm.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tparams[name].grad.numpy(), rtol=1e-8,
                                   atol=1e-10, err_msg=name)


def test_multihead_attention_wrong_kdim_raises() -> None:
    pm = L.MultiheadAttention(8, 2, kdim=6, vdim=6)
    with pytest.raises(Exception, match=r"input \[1, 2, 8\] and weight \[8, 6\]"):
        pm(pf.ones(1, 2, 8), pf.ones(1, 2, 8), pf.ones(1, 2, 6))


def test_multihead_attention_unbatched_and_no_weights() -> None:
    tm = torch.nn.MultiheadAttention(4, 2).double()
    pm = L.MultiheadAttention(4, 2).double()
    pm.load_state_dict(tm.state_dict())
    x = arr(3, 4)
    tout, tw = tm(*(torch.tensor(x),) * 3)
    pout, pw = pm(*(pf.tensor(x),) * 3)
    np.testing.assert_allclose(pout.numpy(), tout.detach().numpy(), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(pw.numpy(), tw.detach().numpy(), rtol=1e-9, atol=1e-11)
    assert pm(*(pf.tensor(x),) * 3, need_weights=False)[1] is None


@pytest.mark.parametrize("name,args", [("Conv2d", (3, 8, 3)), ("Conv1d", (4, 6, 5)),
                                       ("ConvTranspose2d", (6, 4, 3)),
                                       ("LayerNorm", (16,)), ("BatchNorm2d", (5,)),
                                       ("MultiheadAttention", (16, 4))])
def test_parameters_are_initialized_as_torch(name: str, args: tuple) -> None:
    """Same names, shapes and distributions (bounds and spread; values differ)."""
    torch.manual_seed(0)
    pf.manual_seed(0)  # a few-element bias can fall outside the spread by chance: no flakes
    tm = getattr(torch.nn, name)(*args)
    pm = getattr(L, name)(*args)
    tstate, pstate = tm.state_dict(), pm.state_dict()
    assert list(pstate) == list(tstate)
    for k, tv in tstate.items():
        pv = pstate[k].numpy()
        assert pv.shape == tuple(tv.shape), k
        tv = tv.double().numpy()
        if np.all(tv == tv.flat[0]):
            np.testing.assert_array_equal(pv, tv, err_msg=k)  # constants (ones, zeros)
        else:
            bound = np.abs(tv).max()
            assert np.abs(pv).max() <= bound * 1.3 + 1e-6, k
            assert np.std(pv) > 0.4 * np.std(tv), k


def test_dropout_module_train_and_eval() -> None:
    m = L.Dropout(0.25)
    x = pf.ones(100, 40)
    y = m(x).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.03
    m.eval()
    assert m(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        L.Dropout(-0.1)
    y2 = L.Dropout2d(0.5)(pf.ones(4, 8, 3, 3)).numpy()
    assert (y2.min(axis=(2, 3)) == y2.max(axis=(2, 3))).all()


def test_small_cnn_trains_like_torch() -> None:
    """conv-relu-pool-flatten-linear-cross_entropy: three SGD steps from the
    same state dict give torch's losses."""
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4),
                               torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                               torch.nn.Dropout(0.0), torch.nn.Linear(4 * 3 * 3, 3)).double()
    pnet = nn.Sequential(L.Conv2d(1, 4, 3), L.BatchNorm2d(4), L.ReLU(), L.MaxPool2d(2),
                         L.Flatten(), L.Dropout(0.0), nn.Linear(4 * 3 * 3, 3)).double()
    pnet.load_state_dict(tnet.state_dict())
    x, y = arr(6, 1, 8, 8), RNG.integers(0, 3, 6)
    tloss_fn, ploss_fn = torch.nn.CrossEntropyLoss(), L.CrossEntropyLoss()
    for _ in range(3):
        tl = tloss_fn(tnet(torch.tensor(x)), torch.tensor(y))
        pl = ploss_fn(pnet(pf.tensor(x)), pf.tensor(y))
        np.testing.assert_allclose(pl.item(), tl.item(), rtol=1e-9)
        tnet.zero_grad()
        pnet.zero_grad()
        tl.backward()
        pl.backward()
        with torch.no_grad():
            for p in tnet.parameters():
                p -= 0.1 * p.grad
        with pf.no_grad():
            for p in pnet.parameters():
                p -= 0.1 * p.grad
