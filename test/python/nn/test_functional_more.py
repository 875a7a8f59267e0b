"""The lead's block of nn.functional (shuffles, unfold, shrinks, margin and
likelihood losses) against torch: values and float64 gradients."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import pyflame_mlir as pf
import pyflame_mlir.nn.functional as F

rng = np.random.default_rng(0)


def _check(fn_p, fn_t, arrays, grad=(0,), tol=1e-10, **kw):
    ps = [pf.tensor(a, requires_grad=i in grad) for i, a in enumerate(arrays)]
    ts = [torch.tensor(a, requires_grad=i in grad) for i, a in enumerate(arrays)]
    out_p, out_t = fn_p(*ps, **kw), fn_t(*ts, **kw)
    np.testing.assert_allclose(out_p.numpy(), out_t.detach().numpy(), rtol=tol, atol=tol)
    w = rng.standard_normal(out_t.shape)
    (out_p * pf.tensor(w)).sum().backward()
    (out_t * torch.tensor(w)).sum().backward()
    for i in grad:
        np.testing.assert_allclose(ps[i].grad.numpy(), ts[i].grad.numpy(), rtol=tol, atol=tol)


def test_pixel_shuffle_roundtrip():
    x = rng.standard_normal((2, 8, 3, 5))
    _check(F.pixel_shuffle, TF.pixel_shuffle, [x], upscale_factor=2)
    _check(F.pixel_unshuffle, TF.pixel_unshuffle, [rng.standard_normal((1, 2, 4, 6))],
           downscale_factor=2)
    _check(F.pixel_shuffle, TF.pixel_shuffle, [rng.standard_normal((4, 3, 2))],
           upscale_factor=2)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=(2, 3), stride=2),
                                dict(kernel_size=3, padding=1, dilation=2),
                                dict(kernel_size=(1, 2), padding=(0, 1), stride=(1, 2))])
def test_unfold(kw):
    _check(F.unfold, TF.unfold, [rng.standard_normal((2, 3, 6, 7))], **kw)
    _check(F.unfold, TF.unfold, [rng.standard_normal((3, 6, 7))], **kw)


@pytest.mark.parametrize("name, kw", [("hardshrink", {}), ("softshrink", {"lambd": 0.3}),
                                      ("threshold", {"threshold": 0.1, "value": -2.0}),
                                      ("rrelu", {})])
def test_shrinks(name, kw):
    x = rng.standard_normal((4, 5))
    _check(getattr(F, name), getattr(TF, name), [x], **kw)


def test_prelu():
    x, w = rng.standard_normal((2, 3, 4)), np.array([0.1, -0.2, 0.3])
    _check(F.prelu, TF.prelu, [x, w], grad=(0, 1))
    _check(F.prelu, TF.prelu, [x, np.array([0.25])], grad=(0, 1))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses(reduction):
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    sign = rng.choice([-1.0, 1.0], (4, 5))
    sign4 = rng.choice([-1.0, 1.0], (4,))
    kw = {"reduction": reduction}
    _check(F.margin_ranking_loss, TF.margin_ranking_loss, [a, b, sign], grad=(0, 1),
           margin=0.2, **kw)
    _check(F.hinge_embedding_loss, TF.hinge_embedding_loss, [a, sign], **kw)
    _check(F.soft_margin_loss, TF.soft_margin_loss, [a, sign], **kw)
    _check(F.multilabel_soft_margin_loss, TF.multilabel_soft_margin_loss,
           [a, (sign > 0).astype(np.float64)], **kw)
    _check(F.cosine_embedding_loss, TF.cosine_embedding_loss, [a, b, sign4], grad=(0, 1),
           margin=0.1, **kw)
    c = rng.standard_normal((4, 5))
    for swap in (False, True):
        _check(F.triplet_margin_loss, TF.triplet_margin_loss, [a, b, c], grad=(0, 1, 2),
               swap=swap, **kw)
    counts = rng.poisson(2.0, (4, 5)).astype(np.float64)
    for full in (False, True):
        _check(F.poisson_nll_loss, TF.poisson_nll_loss, [a, counts], full=full, **kw)
        _check(F.poisson_nll_loss, TF.poisson_nll_loss, [np.abs(a) + 0.1, counts],
               log_input=False, full=full, **kw)
        _check(F.gaussian_nll_loss, TF.gaussian_nll_loss, [a, b, np.abs(c) + 1e-7],
               grad=(0, 2), full=full, **kw)
    t = rng.integers(0, 5, 4)
    for p in (1, 2):
        _check(F.multi_margin_loss, TF.multi_margin_loss, [a, t], p=p, margin=0.7, **kw)
    w = rng.random(5)
    _check(lambda x, y: F.multi_margin_loss(x, y, weight=pf.tensor(w), **kw),
           lambda x, y: TF.multi_margin_loss(x, y, weight=torch.tensor(w), **kw), [a, t])
