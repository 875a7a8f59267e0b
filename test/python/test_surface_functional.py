"""issue 14's torch surface, part 3: the nn.functional additions (3-d conv and
pools, in-place activations, upsample aliases, shuffles, distances, LRN, Lp
pools, bilinear, losses, affine_grid) against torch, values and float64
gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import pyflame_mlir as pf

F = pf.nn.functional


def _t(a: np.ndarray, grad: bool = False) -> torch.Tensor:
    return torch.from_numpy(a.copy()).requires_grad_(grad)


def _same(got, want, rtol: float = 1e-9, atol: float = 1e-10) -> None:
    want = want.detach().numpy() if isinstance(want, torch.Tensor) else want
    g = got.numpy()
    assert g.shape == want.shape, (g.shape, want.shape)
    np.testing.assert_allclose(g, want, rtol=rtol, atol=atol)


def _value_and_grad(pf_fn, torch_fn, *arrays: np.ndarray) -> None:
    """Values, and float64 gradients of sum(out * w) for every array argument."""
    ts = [_t(a, True) for a in arrays]
    want = torch_fn(*ts)
    _same(pf_fn(*[pf.tensor(a) for a in arrays]), want)
    w = np.random.default_rng(9).standard_normal(tuple(want.shape))
    (want * torch.from_numpy(w)).sum().backward()
    grads = pf.grad(lambda *xs: (pf_fn(*xs) * pf.tensor(w)).sum(),
                    argnums=tuple(range(len(arrays))))(*[pf.tensor(a) for a in arrays])
    for g, t in zip(grads, ts):
        _same(g, t.grad, 1e-8, 1e-9)


RNG = np.random.default_rng(0)


def test_conv3d_and_3d_pools(mode):
    x = RNG.standard_normal((2, 2, 4, 5, 3))
    w = RNG.standard_normal((4, 1, 2, 2, 2))
    b = RNG.standard_normal(4)
    _value_and_grad(lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1, groups=2),
                    lambda x, w, b: TF.conv3d(x, w, b, stride=(1, 2, 1), padding=1, groups=2),
                    x, w, b)
    _value_and_grad(lambda x: F.max_pool3d(x, 2, stride=1), lambda x: TF.max_pool3d(x, 2, 1), x)
    _value_and_grad(lambda x: F.avg_pool3d(x, (2, 2, 1), padding=(1, 0, 0)),
                    lambda x: TF.avg_pool3d(x, (2, 2, 1), padding=(1, 0, 0)), x)


def test_adaptive_max_pool1d():
    x = RNG.standard_normal((2, 3, 7))
    _value_and_grad(lambda x: F.adaptive_max_pool1d(x, 3), lambda x: TF.adaptive_max_pool1d(x, 3),
                    x)


@pytest.mark.parametrize("name,args", [("relu_", ()), ("elu_", (0.5,)), ("leaky_relu_", (0.2,)),
                                       ("hardtanh_", (-0.5, 0.5)), ("selu_", ()),
                                       ("celu_", (1.5,)), ("threshold_", (0.1, -2.0)),
                                       ("rrelu_", ())])
def test_in_place_activations(name, args, mode):
    a = RNG.standard_normal((3, 4))
    px, tx = pf.tensor(a), _t(a)
    out = getattr(F, name)(px, *args)
    assert out is px
    getattr(TF, name)(tx, *args)
    _same(px, tx)


def test_upsample_aliases():
    x = RNG.standard_normal((1, 2, 3, 4))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(F.upsample(pf.tensor(x), scale_factor=2), TF.upsample(_t(x), scale_factor=2))
        _same(F.upsample_nearest(pf.tensor(x), size=(5, 7)),
              TF.upsample_nearest(_t(x), size=(5, 7)))
        _same(F.upsample_bilinear(pf.tensor(x), scale_factor=2),
              TF.upsample_bilinear(_t(x), scale_factor=2))


def test_channel_shuffle_pdist_lrn_lp():
    x = RNG.standard_normal((2, 6, 3, 2))
    _same(F.channel_shuffle(pf.tensor(x), 3), TF.channel_shuffle(_t(x), 3))
    with pytest.raises(pf.ShapeError):
        F.channel_shuffle(pf.tensor(x), 4)
    rows = RNG.standard_normal((5, 3))
    for p in (1.0, 2.0, 3.0, float("inf")):
        _value_and_grad(lambda r, p=p: F.pdist(r, p), lambda r, p=p: TF.pdist(r, p), rows)
    assert F.pdist(pf.tensor(rows[:1])).shape == (0,)
    for size in (1, 2, 3, 4):
        _value_and_grad(lambda x, s=size: F.local_response_norm(x, s, 0.1, 0.5, 2.0),
                        lambda x, s=size: TF.local_response_norm(x, s, 0.1, 0.5, 2.0), x)
    _value_and_grad(lambda x: F.lp_pool2d(x, 2, (2, 1)), lambda x: TF.lp_pool2d(x, 2, (2, 1)),
                    np.abs(x) + 0.1)
    x1 = np.abs(RNG.standard_normal((2, 3, 7))) + 0.1
    _value_and_grad(lambda x: F.lp_pool1d(x, 3, 3, 2), lambda x: TF.lp_pool1d(x, 3, 3, 2), x1)


def test_bilinear():
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 2))
    w, bias = RNG.standard_normal((5, 3, 2)), RNG.standard_normal(5)
    _value_and_grad(F.bilinear, TF.bilinear, a, b, w, bias)
    with pytest.raises(pf.ShapeError):
        F.bilinear(pf.tensor(a), pf.tensor(a), pf.tensor(w))


def test_losses():
    a, p, n = (RNG.standard_normal((4, 3)) for _ in range(3))
    for swap in (False, True):
        for red in ("mean", "sum", "none"):
            _value_and_grad(
                lambda a, p, n, s=swap, r=red: F.triplet_margin_with_distance_loss(
                    a, p, n, swap=s, reduction=r),
                lambda a, p, n, s=swap, r=red: TF.triplet_margin_with_distance_loss(
                    a, p, n, swap=s, reduction=r), a, p, n)
    _value_and_grad(
        lambda a, p, n: F.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda u, v: ((u - v) ** 2).sum(-1), margin=2.0),
        lambda a, p, n: TF.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda u, v: ((u - v) ** 2).sum(-1), margin=2.0), a, p, n)
    x = RNG.standard_normal((3, 5))
    target = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 1, 1, 1, 1]])
    for red in ("mean", "sum", "none"):
        _value_and_grad(
            lambda x, r=red: F.multilabel_margin_loss(x, pf.tensor(target), reduction=r),
            lambda x, r=red: TF.multilabel_margin_loss(x, torch.from_numpy(target), reduction=r),
            x)
    _value_and_grad(lambda x: F.multilabel_margin_loss(x, pf.tensor(target[0])),
                    lambda x: TF.multilabel_margin_loss(x, torch.from_numpy(target[0])), x[0])


def test_gumbel_softmax_properties():
    pf.manual_seed(0)
    logits = pf.tensor(RNG.standard_normal((6, 4)))
    y = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(y.numpy().sum(-1), 1.0, rtol=1e-12)
    hard = F.gumbel_softmax(logits, hard=True)
    h = hard.numpy()
    assert set(np.unique(h)) <= {0.0, 1.0} and np.all(h.sum(-1) == 1.0)
    g = pf.grad(lambda t: (F.gumbel_softmax(t, hard=True) * pf.tensor(np.arange(4.0))).sum())(
        logits)
    assert np.all(np.isfinite(g.numpy())) and np.abs(g.numpy()).sum() > 0


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid(align):
    theta = RNG.standard_normal((2, 2, 3))
    _value_and_grad(lambda t: F.affine_grid(t, (2, 1, 3, 4), align_corners=align),
                    lambda t: TF.affine_grid(t, (2, 1, 3, 4), align_corners=align), theta)


def test_modules_against_torch():
    torch.manual_seed(0)
    tconv = torch.nn.Conv3d(2, 4, (2, 3, 2), stride=(1, 2, 1), padding=1, bias=True).double()
    conv = pf.nn.Conv3d(2, 4, (2, 3, 2), stride=(1, 2, 1), padding=1)
    conv.load_state_dict({k: pf.tensor(v.detach().numpy()) for k, v in
                          tconv.state_dict().items()})
    x = RNG.standard_normal((1, 2, 3, 5, 4))
    _same(conv(pf.tensor(x)), tconv(_t(x)))
    pairs = [(pf.nn.MaxPool3d(2), torch.nn.MaxPool3d(2)),
             (pf.nn.AvgPool3d(2, 1), torch.nn.AvgPool3d(2, 1)),
             (pf.nn.LocalResponseNorm(3), torch.nn.LocalResponseNorm(3)),
             (pf.nn.ChannelShuffle(2), torch.nn.ChannelShuffle(2))]
    for mine, theirs in pairs:
        _same(mine(pf.tensor(x)), theirs(_t(x)))
    x2 = np.abs(RNG.standard_normal((2, 4, 6, 5))) + 0.1
    _same(pf.nn.LPPool2d(2, 2)(pf.tensor(x2)), torch.nn.LPPool2d(2, 2)(_t(x2)))
    _same(pf.nn.LPPool1d(2, 3)(pf.tensor(x2[0])), torch.nn.LPPool1d(2, 3)(_t(x2[0])))
    _same(pf.nn.AdaptiveMaxPool1d(2)(pf.tensor(x2[0])), torch.nn.AdaptiveMaxPool1d(2)(_t(x2[0])))
