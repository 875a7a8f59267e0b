"""pf.nn.Module and Parameter against torch.nn.Module's behaviour."""

from __future__ import annotations

import copy
from collections import OrderedDict

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


# ---- containers, layers, init, utils ----

class ReLU(nn.Module):
    def forward(self, x: pf.Tensor) -> pf.Tensor:
        return pf.relu(x)


def test_mlp_with_embedding_matches_torch_outputs_and_grads():
    torch.manual_seed(0)
    t = torch.nn.Sequential(torch.nn.Embedding(11, 6, padding_idx=2), torch.nn.Linear(6, 8),
                            torch.nn.ReLU(), torch.nn.Identity(), torch.nn.Linear(8, 4))
    m = nn.Sequential(nn.Embedding(11, 6, padding_idx=2), nn.Linear(6, 8), ReLU(),
                      nn.Identity(), nn.Linear(8, 4))
    assert repr(m).replace("ReLU()", "R") == repr(t).replace("ReLU()", "R")
    m.load_state_dict(t.state_dict())
    idx = np.array([[0, 2, 10, 2], [5, 1, 2, 7]])
    out, ref = m(pf.tensor(idx)), t(torch.tensor(idx))
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    (out.tanh() * pf.tensor(np.arange(4.0, dtype=np.float32))).sum().backward()
    (ref.tanh() * torch.arange(4.0)).sum().backward()
    for (name, p), q in zip(m.named_parameters(), t.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-6,
                                   err_msg=name)
    assert not m[0].weight.grad.numpy()[2].any()  # the padding row gets no gradient
    with pytest.raises(IndexError, match="index 11 is out of bounds for dimension 0 with size 11"):
        m(pf.tensor([[11]]))
    with pytest.raises(TypeError, match="int32 or int64 tensor"):
        m(pf.randn(2))


def test_linear_bilinear_and_embedding_init_like_torch():
    pf.manual_seed(0)
    lin = nn.Linear(64, 32)
    w, b = lin.weight.numpy(), lin.bias.numpy()
    assert not pf.is_lazy(lin.weight)  # initialized on the host: no graph to compute
    bound = 1 / np.sqrt(64)  # kaiming_uniform(a=sqrt(5)) == U(-1/sqrt(fan_in), ...)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.abs(b).max() <= bound and abs(w.mean()) < 0.01
    assert lin.weight.shape == (32, 64) and nn.Linear(3, 2, bias=False).bias is None
    assert nn.Linear(3, 2, dtype=pf.float64).weight.dtype == pf.float64
    emb = nn.Embedding(500, 8, padding_idx=-1)
    assert emb.padding_idx == 499 and not emb.weight.numpy()[499].any()
    assert abs(emb.weight.numpy().std() - 1) < 0.05
    frozen = nn.Embedding.from_pretrained(pf.ones(3, 2))
    assert not frozen.weight.requires_grad
    bil, tbil = nn.Bilinear(3, 4, 5), torch.nn.Bilinear(3, 4, 5)
    assert repr(bil) == repr(tbil)
    bil.load_state_dict(tbil.state_dict())
    x1 = np.random.default_rng(1).standard_normal((2, 6, 3)).astype(np.float32)
    x2 = np.random.default_rng(2).standard_normal((2, 6, 4)).astype(np.float32)
    np.testing.assert_allclose(bil(pf.tensor(x1), pf.tensor(x2)).numpy(),
                               tbil(torch.tensor(x1), torch.tensor(x2)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


def test_containers_like_torch():
    seq = nn.Sequential(OrderedDict([("a", nn.Linear(2, 3)), ("b", ReLU())]))
    assert isinstance(seq[0], nn.Linear) and len(seq[:1]) == 1 and seq.a is seq[0]
    seq.append(nn.Identity())
    seq.insert(0, nn.Identity())
    assert [type(s).__name__ for s in seq] == ["Identity", "Linear", "ReLU", "Identity"]
    del seq[0]
    seq.extend([nn.Identity()])
    seq[-1] = ReLU()
    assert [n for n, _ in seq.named_children()] == ["0", "1", "2", "3"]
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    t_layers = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)])
    layers.append(nn.Identity())
    t_layers.append(torch.nn.Identity())
    assert repr(layers) == repr(t_layers)  # "(0-2): 3 x Linear(...)"
    layers += [ReLU()]
    layers.insert(1, nn.Identity())
    del layers[0]
    assert len(layers) == 5 and isinstance(layers[-1], ReLU) and len(layers[1:3]) == 2
    assert len(list(layers.parameters())) == 4
    md = nn.ModuleDict({"x": nn.Linear(1, 1)})
    md["y"] = nn.Identity()
    md.update([("z", ReLU())])
    assert list(md) == ["x", "y", "z"] and "y" in md and isinstance(md.pop("y"), nn.Identity)
    assert list(md.keys()) == ["x", "z"] and len(list(md.values())) == len(list(md.items()))
    with pytest.raises(IndexError):
        layers[7]
    plist = nn.ParameterList([pf.randn(2, 3), nn.Parameter(pf.ones(4))])
    tlist = torch.nn.ParameterList([torch.randn(2, 3), torch.nn.Parameter(torch.ones(4))])
    assert all(isinstance(p, nn.Parameter) for p in plist)  # plain tensors are wrapped
    assert repr(plist).replace("pyflame.", "torch.") == repr(tlist)
    assert [n for n, _ in plist.named_parameters()] == ["0", "1"]
    pdict = nn.ParameterDict({"a": pf.zeros(2)})
    pdict["b"] = nn.Parameter(pf.ones(1))
    assert list(pdict) == ["a", "b"] and isinstance(pdict["a"], nn.Parameter)
    assert [n for n, _ in pdict.named_parameters()] == ["a", "b"]
    assert pdict.pop("a").shape == (2,) and "a" not in pdict


@pytest.mark.parametrize("shape", [(20, 30), (8, 4, 3, 3)])
def test_init_functions_follow_torchs_formulas(shape):
    tt = torch.empty(shape)
    t = pf.zeros(*shape)
    assert nn.init._calculate_fan_in_and_fan_out(t) == \
        torch.nn.init._calculate_fan_in_and_fan_out(tt)
    for nl, param in [("relu", None), ("leaky_relu", 0.2), ("tanh", None), ("selu", None),
                      ("conv2d", None), ("sigmoid", None)]:
        assert nn.init.calculate_gain(nl, param) == torch.nn.init.calculate_gain(nl, param)
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(tt)
    n = t.numel()

    def spread(x):  # max |x| for uniform, std for normal
        v = x.numpy().astype(np.float64)
        return np.abs(v).max(), v.std()

    bound = np.sqrt(6 / (fan_in + fan_out))
    hi, _ = spread(nn.init.xavier_uniform_(t))
    assert 0.8 * bound < hi <= bound
    _, std = spread(nn.init.xavier_normal_(t, gain=2.0))
    assert abs(std / (2.0 * np.sqrt(2 / (fan_in + fan_out))) - 1) < 6 / np.sqrt(n)
    hi, _ = spread(nn.init.kaiming_uniform_(t, a=0.1, mode="fan_out"))
    kb = torch.nn.init.calculate_gain("leaky_relu", 0.1) * np.sqrt(3 / fan_out)
    assert 0.8 * kb < hi <= kb
    _, std = spread(nn.init.kaiming_normal_(t, nonlinearity="relu"))
    assert abs(std / (np.sqrt(2) / np.sqrt(fan_in)) - 1) < 6 / np.sqrt(n)
    v = nn.init.trunc_normal_(t, mean=1.0, std=2.0, a=0.0, b=3.0).numpy()
    assert v.min() >= 0.0 and v.max() <= 3.0
    assert not nn.init.zeros_(t).numpy().any() and (nn.init.ones_(t).numpy() == 1).all()
    assert (nn.init.constant_(t, 0.5).numpy() == 0.5).all()
    hi, _ = spread(nn.init.uniform_(t, -0.1, 0.1))
    assert hi <= 0.1
    _, std = spread(nn.init.normal_(t, 0.0, 0.1))
    assert abs(std / 0.1 - 1) < 6 / np.sqrt(n)
    q = nn.init.orthogonal_(t, gain=1.5).numpy().reshape(shape[0], -1).astype(np.float64)
    rows, cols = q.shape
    gram = q @ q.T if rows <= cols else q.T @ q
    np.testing.assert_allclose(gram, 2.25 * np.eye(min(rows, cols)), atol=1e-4)
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        nn.init.kaiming_uniform_(t, mode="fan_avg")


def test_init_errors_and_eye():
    np.testing.assert_array_equal(nn.init.eye_(pf.zeros(2, 3)).numpy(), np.eye(2, 3))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(pf.zeros(3))
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        nn.init.calculate_gain("foo")
    with pytest.raises(ValueError, match="not a valid number"):
        nn.init.calculate_gain("leaky_relu", "x")
    p = nn.Parameter(pf.zeros(2, 2))
    nn.init.ones_(p)  # in place under no_grad: still the same leaf
    assert p.is_leaf and p.requires_grad and p.numpy().sum() == 4


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
def test_clip_grad_norm_matches_torch(norm_type, mode):
    rng = np.random.default_rng(3)
    grads = [rng.standard_normal(s).astype(np.float32) * 3 for s in [(3, 4), (5,), (2, 2)]]
    ps = [nn.Parameter(pf.zeros(*g.shape)) for g in grads]
    ts = [torch.nn.Parameter(torch.zeros(g.shape)) for g in grads]
    for p, t, g in zip(ps, ts, grads):
        p.grad, t.grad = pf.tensor(g), torch.tensor(g)
    total = nn.utils.clip_grad_norm_(ps, max_norm=1.5, norm_type=norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(ts, max_norm=1.5, norm_type=norm_type)
    np.testing.assert_allclose(total.item(), ttotal.item(), rtol=1e-5)
    for p, t in zip(ps, ts):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-7)
    nn.utils.clip_grad_value_(ps, 0.05)
    torch.nn.utils.clip_grad_value_(ts, 0.05)
    for p, t in zip(ps, ts):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-6)
    ps[0].grad = pf.full((3, 4), float("nan"))
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    assert nn.utils.clip_grad_norm_([nn.Parameter(pf.zeros(1))], 1.0).item() == 0.0


def test_parameters_to_vector_and_back():
    m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = nn.utils.parameters_to_vector(m.parameters())
    tvec = torch.nn.utils.parameters_to_vector(
        [torch.tensor(p.numpy()) for p in m.parameters()])
    np.testing.assert_array_equal(vec.numpy(), tvec.numpy())
    nn.utils.vector_to_parameters(vec * 2, m.parameters())
    np.testing.assert_array_equal(nn.utils.parameters_to_vector(m.parameters()).numpy(),
                                  tvec.numpy() * 2)
    with pytest.raises(ValueError, match="parameters hold 11 elements"):
        nn.utils.vector_to_parameters(pf.zeros(3), m.parameters())


def _zoo(L):
    nn = L.nn
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(True),
        nn.MaxPool2d(2), nn.Dropout(0.1), nn.Flatten(), nn.Linear(32, 10),
        nn.LayerNorm(10, eps=1e-6), nn.GELU(approximate="tanh"), nn.Embedding(5, 3, padding_idx=0),
        nn.LSTM(3, 4, batch_first=True), nn.MultiheadAttention(8, 2),
        nn.ModuleList([nn.Tanh(), nn.Identity()]), nn.ModuleDict({"a": nn.Softmax(dim=-1)}),
        nn.TransformerEncoderLayer(8, 2, 16), nn.TransformerDecoderLayer(8, 2, 16),
        nn.ConvTranspose2d(4, 2, 3), nn.GroupNorm(2, 4), nn.GroupNorm(2, 4, bias=False),
        nn.AdaptiveAvgPool2d((1, 1)), nn.Upsample(scale_factor=2, mode="nearest"),
        nn.Upsample(size=3), nn.LeakyReLU(0.1), nn.LeakyReLU(0.1, inplace=True), nn.Dropout2d(),
        nn.GRU(3, 3), nn.PReLU(), nn.Softplus(beta=2), nn.Hardtanh(-2, 2), nn.ELU(alpha=0.5),
        nn.AvgPool2d(2, ceil_mode=True), nn.ZeroPad2d(1), nn.Unflatten(1, (2, 5)),
        nn.CrossEntropyLoss(label_smoothing=0.1), nn.RMSNorm(4), nn.Bilinear(2, 3, 4),
        nn.Conv1d(2, 4, 3, groups=2, dilation=2, padding_mode="reflect"),
        nn.InstanceNorm1d(3, affine=True), nn.InstanceNorm2d(3), nn.BatchNorm1d(3, affine=False),
        nn.BatchNorm1d(3, bias=False), nn.LayerNorm(4, bias=False), nn.SiLU(), nn.Mish(),
        nn.ReLU6(), nn.EmbeddingBag(4, 2, mode="sum"))


def test_print_of_a_model_and_its_state_dict_keys_are_torch_s():
    import torch

    tm, pm = _zoo(torch), _zoo(pf)
    assert repr(pm).splitlines() == repr(tm).splitlines()
    assert list(pm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in pm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    pm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})


def test_a_checkpoint_without_num_batches_tracked_loads_strictly_as_torch():
    import torch

    for L in (torch, pf):
        m = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.BatchNorm1d(4))
        sd = {k: v for k, v in m.state_dict().items() if "num_batches_tracked" not in k}
        result = m.load_state_dict(sd)
        assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
        assert int(m[1].num_batches_tracked) == 0
        with pytest.raises(RuntimeError, match="Missing key"):
            m.load_state_dict({k: v for k, v in sd.items() if k != "1.running_mean"})


def test_zero_grad_keeps_the_grad_tensor() -> None:
    """``zero_grad(set_to_none=False)`` zeroes ``.grad`` in place as PyTorch's:
    a reference to it sees zeros, and the next backward sums into it."""
    for lib in (torch, pf):
        lin = lib.nn.Linear(2, 1)
        opt = lib.optim.SGD(lin.parameters(), lr=0.1)
        lin(lib.ones(1, 2)).sum().backward()
        grads = [p.grad for p in lin.parameters()]
        opt.zero_grad(set_to_none=False)
        assert all(np.asarray(g.numpy()).tolist() in ([[0.0, 0.0]], [0.0]) for g in grads)
        lin(lib.full((1, 2), 2.0)).sum().backward()
        np.testing.assert_array_equal(np.asarray(grads[0].numpy()), [[2.0, 2.0]])
        lin.zero_grad(set_to_none=False)
        assert all(a is b for a, b in zip(grads, [p.grad for p in lin.parameters()]))
        np.testing.assert_array_equal(np.asarray(grads[1].numpy()), [0.0])
