"""Session 15's torch hunt, round 6: what round 5 left (``.shape`` a Size,
optimizer steps as tensors, torch's RNG names, legacy constructors, jit) and
the programs users paste (BERT/GPT-2 blocks, LoRA, checkpointing), vs torch."""
import pickle

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


def test_shape_is_size_as_torch():
    x = pf.randn(2, 3, 4)
    tx = torch.randn(2, 3, 4)
    for s, ts in ((x.shape, tx.shape), ((x * 2).sum(0).shape, (tx * 2).sum(0).shape),
                  (pf.tensor([1.0, 2.0]).shape, torch.tensor([1.0, 2.0]).shape),
                  (x.max(0)[0].shape, tx.max(0)[0].shape)):
        assert type(s) is pf.Size and s == tuple(ts) and hash(s) == hash(tuple(ts))
    s, ts = x.shape, tx.shape
    for f in (lambda a: a[1:], lambda a: a[:0], lambda a: a + (5,), lambda a: (5,) + a,
              lambda a: a * 2):
        assert type(f(s)) is pf.Size and tuple(f(s)) == tuple(f(ts)), f
    assert type(s[0]) is int and s.numel() == ts.numel() == 24
    assert repr(s) == "pyflame.Size([2, 3, 4])" and repr(s[1:]) == "pyflame.Size([3, 4])"
    assert type(pickle.loads(pickle.dumps(s))) is pf.Size
    assert x.size() == s and type(x.size()) is pf.Size
    assert x.view(s[0], -1).shape == (2, 12) and x.reshape(s).shape == s


def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.GELU(), lib.nn.Linear(8, 3))


def test_jit_script_trace_compile_compute_as_torch():
    tm = _mlp(torch)
    m = _mlp(pf)
    m.load_state_dict({k: pf.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    want = tm(torch.tensor(x)).detach().numpy()
    for wrapped in (pf.jit.script(m), pf.jit.trace(m, pf.tensor(x[:2])),
                    pf.jit.trace(m, (pf.tensor(x[:2]),)), pf.compile(m),
                    pf.compile(m, mode="reduce-overhead", fullgraph=True, dynamic=False),
                    pf.compile(m, disable=True)):
        np.testing.assert_allclose(wrapped(pf.tensor(x)).numpy(), want, rtol=1e-5, atol=1e-6)
        assert len(list(wrapped.parameters())) == 4
    c = pf.compile(m)
    assert c._orig_mod is m and c.training
    c.eval()
    assert not m.training

    def f(a, b):
        return (a * b).sum(1)
    traced = pf.jit.trace(f, (pf.ones(2, 3), pf.ones(2, 3)))
    a, b = pf.tensor(x), pf.tensor(x * 2)
    np.testing.assert_allclose(traced(a, b).numpy(), (x * x * 2).sum(1), rtol=1e-6)
    assert pf.jit.script(f) is f and not pf.jit.is_scripting() and not pf.jit.is_tracing()
    assert type(pf.trace(lambda v: v * 2, pf.ones(2))).__name__ == "TracedProgram"
    with pytest.raises(NotImplementedError, match="TorchScript"):
        pf.jit.save(pf.jit.script(m), "m.pt")
    with pytest.raises(NotImplementedError, match="TorchScript"):
        pf.jit.load("m.pt")
    with pytest.raises(ValueError, match="backend='tensorrt'"):
        pf.compile(m, backend="tensorrt")


def test_cuda_legacy_types_as_torch_without_cuda():
    for name in ("FloatTensor", "LongTensor", "DoubleTensor", "HalfTensor", "BoolTensor"):
        ours, theirs = getattr(pf.cuda, name), getattr(torch.cuda, name)
        assert not isinstance(pf.ones(2), ours) and not isinstance(torch.ones(2), theirs)
        with pytest.raises(TypeError, match=f"torch.cuda.{name} not available"):
            ours(2, 3)
        with pytest.raises(TypeError, match=f"torch.cuda.{name} not available"):
            theirs(2, 3)
    dtype = pf.cuda.FloatTensor if pf.cuda.is_available() else pf.FloatTensor
    assert dtype(2, 3).shape == (2, 3) and pf.LongTensor([1, 2]).dtype is pf.int64


@pytest.mark.parametrize("name", ["Adam", "AdamW", "NAdam", "RAdam", "RMSprop", "Rprop",
                                  "ASGD", "Adagrad", "Adadelta", "Adamax"])
def test_optimizer_step_is_a_float32_tensor_as_torch(name, tmp_path):
    tp = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))
    p = pf.nn.Parameter(pf.tensor([1.0, -2.0, 3.0]))
    topt, opt = getattr(torch.optim, name)([tp], lr=0.1), getattr(pf.optim, name)([p], lr=0.1)

    def run(k):
        for _ in range(k):
            topt.zero_grad()
            (tp * tp * tp).sum().backward()
            topt.step()
            opt.zero_grad()
            (p * p * p).sum().backward()
            opt.step()
    run(2)
    step, tstep = opt.state[p]["step"], topt.state[tp]["step"]
    assert isinstance(step, pf.Tensor) and step.dtype is pf.float32 and step.shape == ()
    assert step.item() == tstep.item() == 2.0 and type(step.item()) is float
    sd = opt.state_dict()["state"][0]["step"]
    assert isinstance(sd, pf.Tensor) and sd.item() == 2.0
    pf.save(opt.state_dict(), tmp_path / "opt.pt")
    p2 = pf.nn.Parameter(p.detach().clone())
    opt2 = getattr(pf.optim, name)([p2], lr=0.1)
    opt2.load_state_dict(pf.load(tmp_path / "opt.pt"))
    assert isinstance(opt2.state[p2]["step"], pf.Tensor) and opt2.state[p2]["step"].item() == 2
    # torch's state dict loads too; then both continue as torch does
    opt.load_state_dict(topt.state_dict())
    assert opt.state[p]["step"].item() == 2.0
    run(3)
    assert opt.state[p]["step"].item() == topt.state[tp]["step"].item() == 5.0
    np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6)
    opt2.zero_grad()
    (p2 * p2 * p2).sum().backward()
    opt2.step()
    assert opt2.state[p2]["step"].item() == 3.0


def test_parameter_data_views_write_the_parameter_as_torch():
    # HF-style init: m.weight.data[m.padding_idx].zero_() after normal_
    for lib in (torch, pf):
        e = lib.nn.Embedding(5, 3, padding_idx=0)
        e.weight.data.normal_(mean=0.0, std=0.02)
        e.weight.data[e.padding_idx].zero_()
        assert e.weight[0].abs().sum().item() == 0 and e.weight[1].abs().sum().item() > 0
        w = lib.nn.Parameter(lib.ones(3, 2))
        d = w.data
        d.mul_(2)
        d.t()[0].zero_()
        d[1:, 1] = 7.0
        assert w.tolist() == [[0.0, 2.0], [0.0, 7.0], [0.0, 7.0]], lib
        assert not d.requires_grad and w.requires_grad and type(w) is lib.nn.Parameter
        w.data = lib.zeros(4)
        assert type(w) is lib.nn.Parameter and w.requires_grad and tuple(w.shape) == (4,)


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_low_precision_linear_rounds_once_as_torch_addmm(dt):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    w = rng.standard_normal((6, 8)).astype(np.float32)
    # a bias near minus the product: the sum cancels, where rounding twice loses ulps
    b = -(x[0, 0] @ w.T) + rng.standard_normal(6).astype(np.float32) * 0.01
    tl = torch.nn.Linear(8, 6)
    with torch.no_grad():
        tl.weight.copy_(torch.tensor(w))
        tl.bias.copy_(torch.tensor(b))
    pl = pf.nn.Linear(8, 6)
    pl.load_state_dict({k: pf.tensor(v.numpy()) for k, v in tl.state_dict().items()})
    tl, pl = tl.to(getattr(torch, dt)), pl.to(getattr(pf, dt))
    tx = torch.tensor(x).to(getattr(torch, dt)).requires_grad_()
    px = pf.tensor(x).to(getattr(pf, dt)).requires_grad_()
    tout, pout = tl(tx), pl(px)
    assert pout.dtype is getattr(pf, dt)
    eps = 2.0 ** -7 if dt == "bfloat16" else 2.0 ** -10  # one ulp, relative
    np.testing.assert_allclose(pout.detach().float().numpy(), tout.detach().float().numpy(),
                               rtol=eps, atol=1e-6)
    g = rng.standard_normal((2, 5, 6)).astype(np.float32)
    tout.backward(torch.tensor(g).to(getattr(torch, dt)))
    pout.backward(pf.tensor(g).to(getattr(pf, dt)))
    for a, b_ in ((px.grad, tx.grad), (pl.weight.grad, tl.weight.grad),
                  (pl.bias.grad, tl.bias.grad)):
        assert a.dtype is getattr(pf, dt)
        np.testing.assert_allclose(a.float().numpy(), b_.float().numpy(), rtol=2 * eps,
                                   atol=2 * eps)
    with pf.autocast("cpu", dtype=pf.bfloat16), torch.autocast("cpu", dtype=torch.bfloat16):
        t32 = torch.nn.Linear(8, 6)
        with torch.no_grad():
            t32.weight.copy_(torch.tensor(w))
            t32.bias.copy_(torch.tensor(b))
        p32 = pf.nn.Linear(8, 6)
        p32.load_state_dict({k: pf.tensor(v.numpy()) for k, v in t32.state_dict().items()})
        ta, pa = t32(torch.tensor(x)), p32(pf.tensor(x))
    assert pa.dtype is pf.bfloat16 and ta.dtype is torch.bfloat16
    np.testing.assert_allclose(pa.detach().float().numpy(), ta.detach().float().numpy(),
                               rtol=2.0 ** -7, atol=1e-6)


@pytest.mark.parametrize("name", ["addmm", "addmm_scaled", "baddbmm", "addbmm", "addmv", "addr"])
def test_low_precision_blas_updates_round_once_as_torch(name):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 8)).astype(np.float32)
    w = rng.standard_normal((3, 8, 5)).astype(np.float32)
    c = -(x @ w) + 0.01 * rng.standard_normal((3, 4, 5)).astype(np.float32)  # cancels

    def run(lib):
        def b(a):
            return lib.tensor(a).to(lib.bfloat16)
        if name == "addmm":
            return lib.addmm(b(c[0]), b(x[0]), b(w[0]))
        if name == "addmm_scaled":
            return lib.addmm(b(c[0]), b(x[0]), b(w[0]), beta=0.5, alpha=0.5)
        if name == "baddbmm":
            return lib.baddbmm(b(c), b(x), b(w))
        if name == "addbmm":
            return lib.addbmm(b(c[0]), b(x), b(w), beta=0.5)
        if name == "addmv":
            return lib.addmv(b(c[0, :, 0]), b(x[0]), b(w[0, :, 0]))
        return lib.addr(b(c[0]), b(x[0, :, 0]), b(w[0, 0, :]))
    got, want = run(pf), run(torch)
    assert got.dtype is pf.bfloat16
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


def test_rms_norm_default_eps_in_bfloat16_as_torch():
    x = np.linspace(-4, 4, 64).astype(np.float32).reshape(4, 16)
    want = torch.nn.functional.rms_norm(torch.tensor(x).bfloat16(), (16,))
    got = pf.nn.functional.rms_norm(pf.tensor(x).to(pf.bfloat16), (16,))  # raised
    assert got.dtype is pf.bfloat16
    # torch computes in float32 and rounds once; pf rounds its steps: within 2 ulps
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=2 ** -6)
    np.testing.assert_allclose(pf.nn.RMSNorm(16)(pf.tensor(x).to(pf.float16)).float().numpy(),
                               torch.nn.RMSNorm(16)(torch.tensor(x).half()).float().detach()
                               .numpy(), rtol=2 ** -9)
