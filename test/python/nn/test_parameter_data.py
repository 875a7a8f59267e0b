"""``Parameter.data`` against torch 2.13: a detached alias of the parameter (its
views written in place write the parameter; its in-place methods, setitem and
``p.data = x`` too), reading it is no write, ``p.grad`` and ``requires_grad`` stay
as they are, and ``p._version`` moves where torch's does."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

W = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], np.float32)


def _param(lib):
    p = lib.nn.Parameter(lib.tensor(W.copy()))
    (p * p).sum().backward()  # a .grad (2 W) that writes through .data must leave alone
    return p


def _hf_padding(lib, p):  # Hugging Face's _init_weights: module.weight.data[padding_idx].zero_()
    p.data[1].zero_()


def _transposed_row(lib, p):
    p.data.t()[0].zero_()


def _chained(lib, p):  # an in-place method returns the alias: its views write p too
    p.data.mul_(0.5)[0, 1:].fill_(9.0)


def _copy(lib, p):
    p.data.copy_(lib.tensor(W[::-1].copy()))


def _setitem_no_grad(lib, p):
    with lib.no_grad():
        p.data[:, :2] = 0.0


def _setitem_grad_mode(lib, p):  # with grad mode on: .data does not require grad
    p.data[1, 2] = 7.0


def _iadd(lib, p):  # p.data += 1: the alias's __iadd__, then p.data = that alias
    p.data += 1.0


def _assign(lib, p):
    p.data = lib.tensor(W * 3)


def _assign_other_shape(lib, p):
    p.data = lib.arange(4.0)


def _masked_fill_clamp(lib, p):
    d = p.data
    d.clamp_(-3.0, 3.0)
    d.masked_fill_(d < 0, 0.5)


def _unsqueezed_view(lib, p):
    p.data.unsqueeze(0)[0, :, 0].sub_(10.0)


FORMS = [_hf_padding, _transposed_row, _chained, _copy, _setitem_no_grad, _setitem_grad_mode,
         _iadd, _assign, _assign_other_shape, _masked_fill_clamp, _unsqueezed_view]


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.__name__.strip("_"))
def test_writes_through_data_write_the_parameter_as_torch(form):
    got = {}
    for name, lib in (("torch", torch), ("pf", pf)):
        p = _param(lib)
        v0 = p._version
        form(lib, p)
        assert type(p) is lib.nn.Parameter and p.requires_grad and p.is_leaf
        assert not p.data.requires_grad and p.data.is_leaf
        np.testing.assert_array_equal(np.asarray(p.grad.tolist()), 2 * W)  # untouched
        value = np.asarray(p.detach().tolist(), np.float32)
        p.grad = None
        (p * p).sum().backward()  # the gradient of the new value
        got[name] = (value, p._version - v0, np.asarray(p.grad.tolist(), np.float32))
    (tv, tver, tg), (pv, pver, pg) = got["torch"], got["pf"]
    np.testing.assert_array_equal(pv, tv)
    np.testing.assert_array_equal(pg, tg)
    assert pver == tver == 0


def test_embedding_init_as_hugging_face():
    for lib in (torch, pf):
        lib.manual_seed(0)
        e = lib.nn.Embedding(5, 3, padding_idx=0)
        version = e.weight._version
        e.weight.data.normal_(mean=0.0, std=0.02)
        e.weight.data[e.padding_idx].zero_()
        w = np.asarray(e.weight.tolist())
        assert (w[0] == 0).all() and (w[1:] != 0).all() and np.abs(w).max() < 0.2, lib
        assert e.weight._version == version and e.weight.requires_grad, lib
        out = e(lib.tensor([[0, 2]]))
        out.sum().backward()
        g = np.asarray(e.weight.grad.tolist())
        np.testing.assert_array_equal(g, [[0.0] * 3, [0.0] * 3, [1.0] * 3, [0.0] * 3, [0.0] * 3])


def test_reading_data_is_no_write():
    for lib in (torch, pf):
        p = _param(lib)
        with lib.no_grad():
            p.mul_(1.0)  # version 1
        d = p.data
        _ = p.data.sum(), p.data[0], p.data.t(), p.data.numpy()
        assert p._version == 1 and d._version == 0, lib
        assert not d.requires_grad and d.grad is None and d.is_leaf
        np.testing.assert_array_equal(np.asarray(d.tolist()), W)


def test_an_alias_held_follows_the_parameter_and_its_version_is_its_own():
    # torch: .data shares p's storage, not its version counter
    seen = {}
    for name, lib in (("torch", torch), ("pf", pf)):
        p = lib.nn.Parameter(lib.tensor(W.copy()))
        d = p.data
        d.add_(1.0)  # d's counter moves, p's does not
        with lib.no_grad():
            p.mul_(2.0)  # p's moves, d's does not; d sees the new value
        seen[name] = (d.tolist(), p.tolist(), d._version, p._version)
    assert seen["pf"] == seen["torch"]


@pytest.mark.parametrize("kind", ["parameter", "tensor"])
def test_assigned_data_is_shared_both_ways_as_torch(kind):
    seen = {}
    for name, lib in (("torch", torch), ("pf", pf)):
        p = lib.nn.Parameter(lib.zeros(2, 3)) if kind == "parameter" else lib.zeros(2, 3)
        d_before = p.data
        x = lib.tensor(W.copy())
        p.data = x
        x.add_(1.0)  # p follows x
        a = p.tolist()
        with lib.no_grad():
            p.mul_(2.0)  # x follows p
        b = x.tolist()
        p.data.sub_(1.0)
        seen[name] = (a, b, x.tolist(), p.tolist(), d_before.tolist(), p._version, x._version,
                      p.requires_grad, x.requires_grad)
    assert seen["pf"] == seen["torch"]


@pytest.mark.parametrize("kind", ["a view", "has a view", "requires grad"])
def test_assigned_data_that_other_tensors_see_is_shared_as_torch(kind):
    """``p.data = x`` where ``x`` is a view, has one, or requires grad: the sharing
    is the same (p then is a view of x's storage here; no resident state for it)."""
    seen = {}
    for name, lib in (("torch", torch), ("pf", pf)):
        base = lib.tensor(np.arange(12, dtype=np.float32).reshape(3, 4),
                          requires_grad=kind == "requires grad")
        x = base[1] if kind == "a view" else base
        w = base[0] if kind == "has a view" else None
        p = lib.nn.Parameter(lib.zeros(4))
        p.data = x
        with lib.no_grad():
            p.add_(100.0)
            x.mul_(2.0)
        out = [p.tolist(), x.tolist(), p._version, p.requires_grad, p.is_leaf]
        if w is not None:
            out.append(w.tolist())
        seen[name] = out
    assert seen["pf"] == seen["torch"]


def test_optimizer_and_clip_grad_norm_after_writes_through_data():
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((4, 3)).astype(np.float32) for _ in range(3)]
    init = [rng.standard_normal((2, 3)).astype(np.float32), np.zeros(2, np.float32)]
    losses, weights = {}, {}
    for name, lib in (("torch", torch), ("pf", pf)):
        m = lib.nn.Linear(3, 2)
        m.weight.data = lib.tensor(init[0].copy())
        m.bias.data.copy_(lib.tensor(init[1]))
        m.weight.data[0].mul_(0.5)
        opt = lib.optim.AdamW(m.parameters(), lr=0.1)
        held = m.weight.data  # held across the steps: it follows the parameter
        out = []
        for x in xs:
            opt.zero_grad()
            loss = (m(lib.tensor(x)) ** 2).mean()
            loss.backward()
            lib.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
            opt.step()
            m.weight.data.clamp_(-0.8, 0.8)  # WGAN-style clipping through .data
            out.append(loss.item())
        losses[name] = out
        weights[name] = (np.asarray(m.weight.tolist()), np.asarray(held.tolist()),
                         np.asarray(m.bias.tolist()), m.weight._version)
    np.testing.assert_allclose(losses["pf"], losses["torch"], rtol=1e-5, atol=1e-7)
    for a, b in zip(weights["pf"][:3], weights["torch"][:3]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert weights["pf"][3] == weights["torch"][3]


def test_module_to_keeps_the_parameter_and_an_old_data_alias_as_torch():
    seen = {}
    for name, lib in (("torch", torch), ("pf", pf)):
        m = lib.nn.Linear(3, 2)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(W))
        m(lib.ones(1, 3)).sum().backward()
        p, d = m.weight, m.weight.data
        version = p._version
        m.double()
        assert m.weight is p and type(p) is lib.nn.Parameter
        with lib.no_grad():
            p.mul_(2.0)  # the alias taken before the cast keeps the float32 value
        seen[name] = (str(p.dtype).split(".")[-1], str(d.dtype).split(".")[-1],
                      str(p.grad.dtype).split(".")[-1], p.tolist(), d.tolist(),
                      p._version - version)
    assert seen["pf"] == seen["torch"]


def test_load_state_dict_and_nn_init_through_data():
    seen = {}
    for name, lib in (("torch", torch), ("pf", pf)):
        m = lib.nn.Linear(3, 2)
        d = m.weight.data
        lib.nn.init.constant_(m.weight.data, 0.25)
        lib.nn.init.zeros_(m.bias.data)
        a = (m.weight.tolist(), m.bias.tolist())
        m.load_state_dict({"weight": lib.tensor(W), "bias": lib.tensor([1.0, 2.0])})
        seen[name] = (a, m.weight.tolist(), d.tolist(), m.bias.tolist())
    assert seen["pf"] == seen["torch"]


def test_eager_mode_gives_the_same(monkeypatch):
    monkeypatch.setattr(pf.CONFIG, "eager", True)
    test_writes_through_data_write_the_parameter_as_torch(_transposed_row)
    test_assigned_data_is_shared_both_ways_as_torch("parameter")
    test_optimizer_and_clip_grad_norm_after_writes_through_data()
