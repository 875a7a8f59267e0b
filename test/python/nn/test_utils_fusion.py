"""``pf.nn.utils``' session 11 additions against torch: batch-norm folding
(``fuse_conv_bn_eval``/``weights``, ``fuse_linear_bn_eval``/``weights``),
``skip_init``, and torch's module paths ``clip_grad``,
``convert_parameters`` and ``stateless``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf
from pyflame_mlir.nn.utils import clip_grad, convert_parameters, fusion


def _pair(t_mod, p_mod):
    p_mod.load_state_dict({k: pf.tensor(v.detach().numpy()) for k, v in
                           t_mod.state_dict().items()})


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_eval(transpose):
    rng = np.random.default_rng(0)
    if transpose:
        tc = torch.nn.ConvTranspose2d(3, 4, 3, stride=2).double()
        pc = pf.nn.ConvTranspose2d(3, 4, 3, stride=2, dtype=pf.float64)
    else:
        tc = torch.nn.Conv2d(3, 4, 3, padding=1).double()
        pc = pf.nn.Conv2d(3, 4, 3, padding=1, dtype=pf.float64)
    tb = torch.nn.BatchNorm2d(4).double()
    with torch.no_grad():  # statistics and an affine part that are not the defaults
        tb.running_mean.copy_(torch.tensor(rng.standard_normal(4)))
        tb.running_var.copy_(torch.tensor(rng.uniform(0.5, 2, 4)))
        tb.weight.copy_(torch.tensor(rng.standard_normal(4)))
        tb.bias.copy_(torch.tensor(rng.standard_normal(4)))
    pb = pf.nn.BatchNorm2d(4, dtype=pf.float64)
    _pair(tc, pc)
    _pair(tb, pb)
    for m in (tc, pc, tb, pb):
        m.eval()
    fused_t = torch.nn.utils.fuse_conv_bn_eval(tc, tb, transpose)
    fused_p = pf.nn.utils.fuse_conv_bn_eval(pc, pb, transpose)
    x = rng.standard_normal((2, 3, 5, 5))
    np.testing.assert_allclose(fused_p(pf.tensor(x)).numpy(),
                               fused_t(torch.tensor(x)).detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(fused_p(pf.tensor(x)).numpy(), pb(pc(pf.tensor(x))).numpy(),
                               rtol=1e-10, atol=1e-12)
    assert isinstance(fused_p.weight, pf.nn.Parameter) and fused_p is not pc
    pc.train()
    with pytest.raises(AssertionError, match="only for eval"):
        fusion.fuse_conv_bn_eval(pc, pb)


def test_fuse_linear_bn_eval_and_weights():
    rng = np.random.default_rng(1)
    tl, tb = torch.nn.Linear(3, 4, bias=False).double(), torch.nn.BatchNorm1d(4).double()
    pl, pb = pf.nn.Linear(3, 4, bias=False, dtype=pf.float64), pf.nn.BatchNorm1d(
        4, dtype=pf.float64)
    with torch.no_grad():
        tb.running_mean.copy_(torch.tensor(rng.standard_normal(4)))
        tb.running_var.copy_(torch.tensor(rng.uniform(0.5, 2, 4)))
    _pair(tl, pl)
    _pair(tb, pb)
    for m in (tl, pl, tb, pb):
        m.eval()
    ft, fp = torch.nn.utils.fuse_linear_bn_eval(tl, tb), pf.nn.utils.fuse_linear_bn_eval(pl, pb)
    x = rng.standard_normal((5, 3))
    np.testing.assert_allclose(fp(pf.tensor(x)).numpy(), ft(torch.tensor(x)).detach().numpy(),
                               rtol=1e-10)
    w, b = fusion.fuse_linear_bn_weights(pl.weight, None, pb.running_mean, pb.running_var,
                                         1e-3, pb.weight, pb.bias)
    wt, bt = torch.nn.utils.fuse_linear_bn_weights(tl.weight, None, tb.running_mean,
                                                   tb.running_var, 1e-3, tb.weight, tb.bias)
    np.testing.assert_allclose(w.numpy(), wt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(b.numpy(), bt.detach().numpy(), rtol=1e-12)
    cw, cb = pf.nn.utils.fuse_conv_bn_weights(pf.ones(2, 1, 1, 1), None, pf.zeros(2),
                                              pf.ones(2), 0.0, None, None)
    assert cw.shape == (2, 1, 1, 1) and cb.numpy().tolist() == [0.0, 0.0]


def test_skip_init_and_module_paths():
    m = pf.nn.utils.skip_init(pf.nn.Linear, 3, 4)
    assert isinstance(m, pf.nn.Linear) and m.weight.shape == (4, 3)

    class NoDevice(pf.nn.Module):
        def __init__(self, n):
            super().__init__()

    with pytest.raises(RuntimeError, match="'device' arg"):
        pf.nn.utils.skip_init(NoDevice, 3)
    assert clip_grad.clip_grad_norm_ is pf.nn.utils.clip_grad_norm_
    assert convert_parameters.parameters_to_vector is pf.nn.utils.parameters_to_vector
    lin = pf.nn.Linear(2, 1)
    x = pf.ones(3, 2)
    out = pf.nn.utils.stateless.functional_call(lin, {"weight": pf.zeros(1, 2),
                                                      "bias": pf.full((1,), 5.0)}, (x,))
    assert out.numpy().tolist() == [[5.0], [5.0], [5.0]]


@pytest.mark.parametrize("shape, kw", [((4, 4), {}), ((4, 4), {"orthogonal_map": "cayley"}),
                                       ((5, 3), {}), ((3, 5), {}),
                                       ((4, 4), {"orthogonal_map": "householder"}),
                                       ((5, 3), {"orthogonal_map": "matrix_exp"}),
                                       ((4, 3), {"use_trivialization": False})])
def test_orthogonal_parametrization(shape, kw):
    torch.manual_seed(0)
    tl = torch.nn.Linear(shape[1], shape[0]).double()
    pl = pf.nn.Linear(shape[1], shape[0], dtype=pf.float64)
    _pair(tl, pl)
    torch.nn.utils.parametrizations.orthogonal(tl, **kw)
    pf.nn.utils.parametrizations.orthogonal(pl, **kw)
    assert list(pl.state_dict()) == list(tl.state_dict())
    # registration orthogonalizes the weight as torch does (QR, diag(R) >= 0)
    np.testing.assert_allclose(pl.weight.numpy(), tl.weight.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    w = pl.weight.numpy()
    small = min(shape)
    gram = w @ w.T if shape[0] <= shape[1] else w.T @ w
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-12)
    # the same state (torch's random completion of a non-square base included): the same
    # forward and gradients of the unconstrained original
    _pair(tl, pl)
    x = np.random.default_rng(1).standard_normal((2, shape[1]))
    out_t, out_p = tl(torch.tensor(x)), pl(pf.tensor(x))
    np.testing.assert_allclose(out_p.numpy(), out_t.detach().numpy(), rtol=1e-10, atol=1e-12)
    (out_t ** 2).sum().backward()
    (out_p ** 2).sum().backward()
    g_t = tl.parametrizations.weight.original.grad.numpy()
    g_p = pl.parametrizations.weight.original.grad.numpy()
    np.testing.assert_allclose(g_p, g_t, rtol=1e-8, atol=1e-11)


def test_orthogonal_errors():
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        pf.nn.utils.parametrizations.orthogonal(pf.nn.Linear(3, 3), orthogonal_map="qr")
    with pytest.raises(ValueError, match="matrix or batch of matrices"):
        pf.nn.utils.parametrizations.orthogonal(pf.nn.Linear(3, 3), "bias")
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        pf.nn.utils.parametrizations.orthogonal(pf.nn.Linear(3, 3), use_trivialization=False)


@pytest.mark.parametrize("nsp, kw", [(1, {"stride": 2, "padding": 1}), (2, {"groups": 2}),
                                     (2, {"dilation": 2, "padding": (1, 0)}),
                                     (3, {"stride": (1, 2, 1)})])
def test_nn_grad_conv(nsp, kw):
    rng = np.random.default_rng(nsp)
    x = rng.standard_normal((2, 4) + (7,) * nsp)
    w = rng.standard_normal((6, 4 // kw.get("groups", 1)) + (3,) * nsp)
    conv = getattr(torch.nn.functional, f"conv{nsp}d")
    out = conv(torch.tensor(x), torch.tensor(w), **kw)
    g = rng.standard_normal(tuple(out.shape))
    for which in ("input", "weight"):
        ours = getattr(pf.nn.grad, f"conv{nsp}d_{which}")
        theirs = getattr(torch.nn.grad, f"conv{nsp}d_{which}")
        if which == "input":
            got = ours(x.shape, pf.tensor(w), pf.tensor(g), **kw)
            want = theirs(x.shape, torch.tensor(w), torch.tensor(g), **kw)
        else:
            got = ours(pf.tensor(x), w.shape, pf.tensor(g), **kw)
            want = theirs(torch.tensor(x), w.shape, torch.tensor(g), **kw)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError, match="does not match the convolution's output shape"):
        pf.nn.grad.conv2d_input((1, 1, 4, 4), pf.ones(1, 1, 2, 2), pf.ones(1, 1, 2, 2))
