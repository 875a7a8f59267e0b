"""``pickle`` and ``copy.deepcopy`` of tensors, modules and optimizers
(issue 14), side by side with torch 2.13's behaviour: values kept (a lazy
tensor is computed), ``requires_grad`` kept, ``.grad`` kept by deepcopy but
not by pickle, a non-leaf that requires grad refuses deepcopy, tied weights
stay tied, and a copied model/optimizer trains independently of the original."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


def test_tensor_pickle_round_trips_like_torch(mode: str) -> None:
    for dt, tdt in ((pf.float32, torch.float32), (pf.bfloat16, torch.bfloat16),
                    (pf.int64, torch.int64), (pf.bool, torch.bool)):
        x = (pf.arange(6).reshape(2, 3) * 3 - 2).to(dt)  # lazy in lazy mode
        t = (torch.arange(6).reshape(2, 3) * 3 - 2).to(tdt)
        y = pickle.loads(pickle.dumps(x))
        ty = pickle.loads(pickle.dumps(t))
        assert y.dtype == dt and list(y.shape) == list(ty.shape)
        np.testing.assert_array_equal(y.float().numpy(), ty.float().numpy())
    empty = pickle.loads(pickle.dumps(pf.zeros(0, 3)))
    assert list(empty.shape) == [0, 3]


def test_requires_grad_and_grad_as_torch() -> None:
    w, tw = pf.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    (w * 3).sum().backward()
    (tw * 3).sum().backward()
    for copier in (lambda v: pickle.loads(pickle.dumps(v)), copy.deepcopy):
        c, tc = copier(w), copier(tw)
        assert (c.requires_grad, c.is_leaf) == (tc.requires_grad, tc.is_leaf)
        assert (c.grad is None) == (tc.grad is None)
        if tc.grad is not None:
            np.testing.assert_array_equal(c.grad.numpy(), tc.grad.numpy())
    y, ty = w * 2, tw * 2  # non-leaf: torch pickles it as a leaf, refuses deepcopy
    c, tc = pickle.loads(pickle.dumps(y)), pickle.loads(pickle.dumps(ty))
    assert (c.requires_grad, c.is_leaf) == (tc.requires_grad, tc.is_leaf)
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(ty)
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(y)


def test_deepcopy_is_independent_of_later_in_place_updates(mode: str) -> None:
    x = pf.ones(3) * 2
    c = copy.deepcopy(x)
    x.add_(1)
    np.testing.assert_array_equal(c.numpy(), [2, 2, 2])
    np.testing.assert_array_equal(x.numpy(), [3, 3, 3])


def test_module_and_optimizer_pickle_and_deepcopy() -> None:
    pf.manual_seed(0)
    model = pf.nn.Sequential(pf.nn.Linear(3, 4), pf.nn.ReLU(), pf.nn.Linear(4, 2))
    model[2].weight = model[2].weight  # (assignment keeps the Parameter)
    opt = pf.optim.Adam(model.parameters(), lr=0.1)
    x = pf.randn(5, 3)
    model(x).square().sum().backward()
    opt.step()
    for clone_model in (lambda m: pickle.loads(pickle.dumps(m)), copy.deepcopy):
        m2 = clone_model(model)
        assert type(m2) is type(model)
        for (n1, p1), (n2, p2) in zip(model.named_parameters(), m2.named_parameters()):
            assert n1 == n2 and isinstance(p2, pf.nn.Parameter) and p2 is not p1
            np.testing.assert_array_equal(p1.numpy(), p2.numpy())
        np.testing.assert_allclose(m2(x).numpy(), model(x).numpy())
    o2 = copy.deepcopy(opt)
    o3 = pickle.loads(pickle.dumps(opt))
    for o in (o2, o3):
        assert o.state_dict()["param_groups"][0]["lr"] == 0.1
        s1, s2 = opt.state_dict()["state"], o.state_dict()["state"]
        assert s1.keys() == s2.keys()
        for k in s1:
            np.testing.assert_array_equal(s1[k]["exp_avg"].numpy(), s2[k]["exp_avg"].numpy())
    # the copy trains on its own: the original's parameters do not move
    m2 = copy.deepcopy(model)
    before = [p.numpy().copy() for p in model.parameters()]
    o4 = pf.optim.SGD(m2.parameters(), lr=1.0)
    m2(x).sum().backward()
    o4.step()
    for p, b in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.numpy(), b)


def test_tied_weights_stay_tied_through_pickle() -> None:
    emb = pf.nn.Embedding(5, 3)
    head = pf.nn.Linear(3, 5, bias=False)
    head.weight = emb.weight
    both = pickle.loads(pickle.dumps([emb, head]))
    assert both[0].weight is both[1].weight


def test_pf_save_of_a_module_says_to_save_its_state_dict(tmp_path) -> None:
    with pytest.raises(TypeError, match=r"state_dict\(\)"):
        pf.save(pf.nn.Linear(2, 2), tmp_path / "m.safetensors")
