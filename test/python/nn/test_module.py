"""pf.nn.Module and Parameter against torch.nn.Module's behaviour."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import pyflame_mlir as pf
from pyflame_mlir import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(pf.randn(3, 2))
        self.register_buffer("running", pf.zeros(2))
        self.register_buffer("scratch", pf.ones(2), persistent=False)
        self.sub = nn.Module()
        self.sub.v = nn.Parameter(pf.randn(2))

    def forward(self, x: pf.Tensor) -> pf.Tensor:
        return x @ self.w + self.sub.v + self.running


class TorchNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(3, 2))
        self.register_buffer("running", torch.zeros(2))
        self.register_buffer("scratch", torch.ones(2), persistent=False)
        self.sub = torch.nn.Module()
        self.sub.v = torch.nn.Parameter(torch.randn(2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.w + self.sub.v + self.running


def test_registration_and_traversal_match_torch():
    m, t = Net(), TorchNet()
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in m.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert list(m.state_dict()) == list(t.state_dict())
    assert [n for n, _ in m.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in m.named_children()] == [n for n, _ in t.named_children()]
    assert [n for n, _ in m.named_parameters(prefix="p", recurse=False)] == \
        [n for n, _ in t.named_parameters(prefix="p", recurse=False)]
    assert isinstance(m.w, nn.Parameter) and isinstance(m.w, pf.Tensor)
    assert m.w.requires_grad and m.w.is_leaf
    assert "w" in dir(m) and "sub" in dir(m) and "running" in dir(m)
    assert m.get_parameter("sub.v") is m.sub.v and m.get_buffer("running") is m.running
    m.register_module("extra", nn.Module())
    assert m.get_submodule("extra") is m.extra
    del m.w
    assert [n for n, _ in m.named_parameters()] == ["sub.v"]
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'w'"):
        _ = m.w


def test_assignment_rules_match_torch():
    m = Net()
    with pytest.raises(TypeError, match="cannot assign .* as parameter 'w'"):
        m.w = pf.randn(3, 2)  # a plain tensor over a parameter
    m.w = None
    assert dict(m.named_parameters()).keys() == {"sub.v"}
    m.running = pf.ones(2)  # a buffer takes a tensor
    with pytest.raises(TypeError, match="as buffer 'running'"):
        m.running = 3
    with pytest.raises(KeyError, match="attribute 'sub' already exists"):
        m.register_buffer("sub", pf.zeros(1))
    with pytest.raises(KeyError, match=r'contain "\."'):
        m.register_parameter("a.b", None)
    with pytest.raises(TypeError, match="cannot assign .* as child module 'sub'"):
        m.sub = 1
    with pytest.raises(AttributeError, match="before Module.__init__"):
        class Bad(nn.Module):
            def __init__(self):
                self.p = nn.Parameter(pf.zeros(1))
        Bad()


def test_weight_tying_by_assignment_dedups():
    emb, head = nn.Module(), nn.Module()
    emb.weight = nn.Parameter(pf.randn(4, 3))
    head.weight = emb.weight
    root = nn.Module()
    root.emb, root.head = emb, head
    assert [n for n, _ in root.named_parameters()] == ["emb.weight"]
    assert [n for n, _ in root.named_parameters(remove_duplicate=False)] == \
        ["emb.weight", "head.weight"]
    assert list(root.state_dict()) == ["emb.weight", "head.weight"]
    assert root.head.weight is root.emb.weight


def test_forward_outputs_and_grads_from_a_torch_state_dict():
    t = TorchNet()
    t.running.fill_(0.5)
    m = Net()
    assert repr(m.load_state_dict(t.state_dict())) == "<All keys matched successfully>"
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    out, ref = m(pf.tensor(x)), t(torch.tensor(x))
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    (out ** 2).sum().backward()
    (ref ** 2).sum().backward()
    np.testing.assert_allclose(m.w.grad.numpy(), t.w.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(m.sub.v.grad.numpy(), t.sub.v.grad.numpy(), rtol=1e-5)
    m.zero_grad()
    assert m.w.grad is None
    (m(pf.tensor(x)) ** 2).sum().backward()
    m.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(m.w.grad.numpy(), np.zeros((3, 2), np.float32))


def test_load_state_dict_errors_and_non_strict():
    m = Net()
    sd = m.state_dict()
    sd["extra"] = pf.zeros(1)
    del sd["sub.v"]
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(sd)
    assert str(e.value) == ('Error(s) in loading state_dict for Net:\n\tMissing key(s) in '
                            'state_dict: "sub.v". \n\tUnexpected key(s) in state_dict: '
                            '"extra". ')
    result = m.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["sub.v"] and result.unexpected_keys == ["extra"]
    with pytest.raises(RuntimeError, match=r"size mismatch for w: copying a param with shape "
                       r"torch.Size\(\[2, 2\]\) from checkpoint, the shape in current model "
                       r"is torch.Size\(\[3, 2\]\)."):
        m.load_state_dict({"w": pf.zeros(2, 2)}, strict=False)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m.load_state_dict([1, 2])


def test_state_dict_detached_copies_keep_vars_and_params_stay_the_same_objects():
    m = Net()
    w = m.w
    sd = m.state_dict()
    assert not sd["w"].requires_grad and not isinstance(sd["w"], nn.Parameter)
    assert m.state_dict(keep_vars=True)["w"] is w
    new = np.arange(6, dtype=np.float32).reshape(3, 2)
    m.load_state_dict({**sd, "w": pf.tensor(new)})
    assert m.w is w and m.w.requires_grad
    np.testing.assert_array_equal(m.w.numpy(), new)
    m.load_state_dict({**sd, "w": pf.tensor(new * 2)}, assign=True)
    assert m.w is not w and isinstance(m.w, nn.Parameter)
    np.testing.assert_array_equal(m.w.numpy(), new * 2)


def test_train_eval_apply_requires_grad_and_dtype():
    m = Net()
    assert m.training and m.sub.training
    m.eval()
    assert not m.training and not m.sub.training
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Module", "Net"]  # children first, as torch
    m.requires_grad_(False)
    assert not m.w.requires_grad
    w = m.w
    m.double()
    assert m.w is w and m.w.dtype == pf.float64 and m.running.dtype == pf.float64
    m.to(pf.float32)
    assert m.w.dtype == pf.float32
    with pytest.raises(RuntimeError, match="device 'cuda' is not supported"):
        m.to("cuda")
    with pytest.raises(ValueError, match="boolean"):
        m.train(1)


def test_hooks_like_torch():
    m = Net()
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    h2 = m.register_forward_hook(lambda mod, args, out: out + 1)
    h3 = m.register_forward_hook(lambda mod, args, out: calls.append("first"), prepend=True)
    x = pf.ones(1, 3)
    with pf.no_grad():
        expected = (x * 2) @ m.w + m.sub.v + 1
    np.testing.assert_allclose(m(x).numpy(), expected.numpy(), rtol=1e-6)
    assert calls == ["first"]
    for h in (h1, h2, h3):
        h.remove()
    np.testing.assert_allclose(m(x).numpy(), (x @ m.w + m.sub.v).numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(x)


def test_repr_like_torch():
    class Leaf(nn.Module):
        def extra_repr(self) -> str:
            return "in=1, out=2"

    class TLeaf(torch.nn.Module):
        def extra_repr(self) -> str:
            return "in=1, out=2"

    m, t = nn.Module(), torch.nn.Module()
    m.a, t.a = Leaf(), TLeaf()
    m.b, t.b = nn.Module(), torch.nn.Module()
    m.b.c, t.b.c = Leaf(), TLeaf()
    assert repr(m).replace("Leaf", "X") == repr(t).replace("TLeaf", "X")
    p = nn.Parameter(pf.tensor([1.0, 2.0]))
    assert repr(p).startswith("Parameter containing:\ntensor([1., 2.]")


def test_parameter_in_place_updates_and_data():
    p = nn.Parameter(pf.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        p.mul_(2)
    with pf.no_grad():
        p.mul_(2)
    assert isinstance(p, nn.Parameter) and p.requires_grad and p.is_leaf
    p.data.add_(1)  # in place through .data, grad mode on: updates the parameter
    np.testing.assert_array_equal(p.numpy(), [3.0, 5.0])
    p.data = pf.tensor([7.0, 8.0, 9.0])
    assert p.shape == (3,) and p.requires_grad
    np.testing.assert_array_equal(p.numpy(), [7.0, 8.0, 9.0])
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(pf.tensor([1, 2]))
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q is not p
    np.testing.assert_array_equal(q.numpy(), p.numpy())
    # a parameter made from a tensor that requires grad is a new leaf
    a = pf.randn(2, requires_grad=True)
    r = nn.Parameter(a * 2)
    assert r.is_leaf
    (r * 3).sum().backward()
    np.testing.assert_array_equal(r.grad.numpy(), [3.0, 3.0])
    assert a.grad is None


def test_deepcopy_of_a_module():
    m = Net()
    c = copy.deepcopy(m)
    assert c.w is not m.w
    np.testing.assert_array_equal(c.w.numpy(), m.w.numpy())
    with pf.no_grad():
        c.w.mul_(0)
    assert np.abs(m.w.numpy()).sum() > 0
