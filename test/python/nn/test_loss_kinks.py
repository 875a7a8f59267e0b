"""Gradients where losses and activations have kinks, ties or saturate,
against torch 2.13's autograd (float64): inputs sit exactly on 0, on the
margins and on ties, where a composite built from pieces with one-sided
derivatives (relu, abs, max) can give a wrong gradient while its value is
right (``binary_cross_entropy_with_logits`` at a zero logit did). Random
inputs in the other gradient tests never land there."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

X = np.array([[0.0, 1.0, -1.0, 2.0], [0.5, -0.5, 0.0, 3.0]], dtype=np.float64)
T = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.5, 1.0]])
CASES = {
    "bce_logits": lambda L, x, t: L.nn.functional.binary_cross_entropy_with_logits(x, t),
    "bce_logits_pw": lambda L, x, t: L.nn.functional.binary_cross_entropy_with_logits(
        x, t, pos_weight=L.tensor([1.0, 2.0, 3.0, 4.0], dtype=L.float64)
    ),
    "bce": lambda L, x, t: L.nn.functional.binary_cross_entropy(L.sigmoid(x), t),
    "softplus": lambda L, x, t: L.nn.functional.softplus(x).sum(),
    "softplus_beta": lambda L, x, t: L.nn.functional.softplus(x, beta=2, threshold=1).sum(),
    "logsigmoid": lambda L, x, t: L.nn.functional.logsigmoid(x).sum(),
    "mse": lambda L, x, t: L.nn.functional.mse_loss(x, t),
    "l1": lambda L, x, t: L.nn.functional.l1_loss(x, t),
    "smooth_l1": lambda L, x, t: L.nn.functional.smooth_l1_loss(x, t),
    "smooth_l1_b0": lambda L, x, t: L.nn.functional.smooth_l1_loss(x, t, beta=0.0),
    "huber": lambda L, x, t: L.nn.functional.huber_loss(x, t, delta=0.5),
    "soft_margin": lambda L, x, t: L.nn.functional.soft_margin_loss(x, t * 2 - 1),
    "multilabel_soft": lambda L, x, t: L.nn.functional.multilabel_soft_margin_loss(x, t.round()),
    "hinge": lambda L, x, t: L.nn.functional.hinge_embedding_loss(x, t.round() * 2 - 1),
    "margin_rank": lambda L, x, t: L.nn.functional.margin_ranking_loss(
        x[0], x[1], L.tensor([1.0, -1.0, 1.0, -1.0], dtype=L.float64)
    ),
    "ce": lambda L, x, t: L.nn.functional.cross_entropy(x, L.tensor([0, 2])),
    "ce_smooth": lambda L, x, t: L.nn.functional.cross_entropy(
        x, L.tensor([0, 2]), label_smoothing=0.2
    ),
    "ce_probs": lambda L, x, t: L.nn.functional.cross_entropy(x, t / t.sum(1, keepdim=True)),
    "nll": lambda L, x, t: L.nn.functional.nll_loss(x, L.tensor([1, 3])),
    "kl": lambda L, x, t: L.nn.functional.kl_div(
        L.log_softmax(x, 1), t / t.sum(1, keepdim=True), reduction="batchmean"
    ),
    "kl_logt": lambda L, x, t: L.nn.functional.kl_div(
        L.log_softmax(x, 1), L.log_softmax(t, 1), reduction="sum", log_target=True
    ),
    "poisson": lambda L, x, t: L.nn.functional.poisson_nll_loss(x, t),
    "poisson_nolog": lambda L, x, t: L.nn.functional.poisson_nll_loss(
        x.abs() + 0.1, t, log_input=False, full=True
    ),
    "gauss": lambda L, x, t: L.nn.functional.gaussian_nll_loss(x, t, L.ones(2, 4, dtype=L.float64)),
    "cos_emb": lambda L, x, t: L.nn.functional.cosine_embedding_loss(x, t, L.tensor([1, -1])),
    "triplet": lambda L, x, t: L.nn.functional.triplet_margin_loss(x, t, x * 0.5),
    "multi_margin": lambda L, x, t: L.nn.functional.multi_margin_loss(x, L.tensor([0, 2])),
    "relu": lambda L, x, t: L.relu(x).sum(),
    "relu6": lambda L, x, t: L.nn.functional.relu6(x * 3).sum(),
    "leaky": lambda L, x, t: L.nn.functional.leaky_relu(x, 0.1).sum(),
    "elu": lambda L, x, t: L.nn.functional.elu(x).sum(),
    "selu": lambda L, x, t: L.nn.functional.selu(x).sum(),
    "celu": lambda L, x, t: L.nn.functional.celu(x).sum(),
    "gelu": lambda L, x, t: L.nn.functional.gelu(x).sum(),
    "gelu_t": lambda L, x, t: L.nn.functional.gelu(x, approximate="tanh").sum(),
    "silu": lambda L, x, t: L.nn.functional.silu(x).sum(),
    "mish": lambda L, x, t: L.nn.functional.mish(x).sum(),
    "hardswish": lambda L, x, t: L.nn.functional.hardswish(x * 3).sum(),
    "hardsigmoid": lambda L, x, t: L.nn.functional.hardsigmoid(x * 3).sum(),
    "hardtanh": lambda L, x, t: L.nn.functional.hardtanh(x).sum(),
    "hardshrink": lambda L, x, t: L.nn.functional.hardshrink(x, 0.5).sum(),
    "softshrink": lambda L, x, t: L.nn.functional.softshrink(x, 0.5).sum(),
    "tanhshrink": lambda L, x, t: L.nn.functional.tanhshrink(x).sum(),
    "softsign": lambda L, x, t: L.nn.functional.softsign(x).sum(),
    "threshold": lambda L, x, t: L.nn.functional.threshold(x, 0.5, -1.0).sum(),
    "prelu": lambda L, x, t: L.nn.functional.prelu(x, L.tensor([0.25], dtype=L.float64)).sum(),
    "abs": lambda L, x, t: x.abs().sum(),
    "sign": lambda L, x, t: (x.sign() * x).sum(),
    "clamp": lambda L, x, t: x.clamp(-1, 1).sum(),
    "clamp_min": lambda L, x, t: x.clamp(min=0).sum(),
    "max_el": lambda L, x, t: L.maximum(x, t).sum(),
    "min_el": lambda L, x, t: L.minimum(x, L.zeros_like(x)).sum(),
    "max_red": lambda L, x, t: (x * 0 + 1).max(),
    "amax_ties": lambda L, x, t: L.stack([x[0, 1], x[0, 1]]).amax(),
    "norm": lambda L, x, t: x.norm(),
    "norm_zero": lambda L, x, t: (x[:, 0] * 0).norm(),
    "norm1": lambda L, x, t: x.norm(p=1),
    "norminf": lambda L, x, t: x.norm(p=float("inf")),
    "dist": lambda L, x, t: L.dist(x, x * 1),
    "cdist": lambda L, x, t: L.cdist(x, x).sum(),
    "pdist_like": lambda L, x, t: L.nn.functional.pairwise_distance(x, x + 0).sum(),
    "cos_sim": lambda L, x, t: L.nn.functional.cosine_similarity(x, t).sum(),
    "normalize": lambda L, x, t: L.nn.functional.normalize(x * 0 + (x == 0).double(), dim=1).sum(),
    "sqrt": lambda L, x, t: (x * x).sqrt().sum(),
    "pow_half": lambda L, x, t: ((x * x) ** 0.5).sum(),
    "std": lambda L, x, t: x.std(),
    "std_const": lambda L, x, t: (x * 0).std(dim=1).sum(),
    "var": lambda L, x, t: x.var(dim=1).sum(),
    "layer_norm": lambda L, x, t: L.nn.functional.layer_norm(x, (4,)).pow(2).mul(t).sum(),
    "layer_norm_const": lambda L, x, t: L.nn.functional.layer_norm(x * 0, (4,)).mul(t).sum(),
    "rms_norm": lambda L, x, t: L.nn.functional.rms_norm(x, (4,)).mul(t).sum(),
    "logsumexp": lambda L, x, t: L.logsumexp(x, 1).sum(),
    "softmax": lambda L, x, t: (L.softmax(x, 1) * t).sum(),
    "sort": lambda L, x, t: (x.sort(1).values * t).sum(),
    "topk": lambda L, x, t: x.topk(2).values.sum(),
    "median": lambda L, x, t: x.median(),
    "quantile": lambda L, x, t: L.quantile(x, 0.3),
    "cumprod0": lambda L, x, t: x.cumprod(1).sum(),
    "prod0": lambda L, x, t: x.prod(1).sum(),
    "atan2": lambda L, x, t: L.atan2(x, t + 1).sum(),
    "xlogy": lambda L, x, t: L.xlogy(t, x.abs() + 1).sum(),
    "where_nan": lambda L, x, t: L.where(x > 0, x.log(), L.zeros_like(x)).sum(),
    "frac_floor": lambda L, x, t: (x - x.floor()).sum() + x.round().sum() + x.trunc().sum(),
    "fmod": lambda L, x, t: L.fmod(x, 1.5).sum(),
    "remainder": lambda L, x, t: L.remainder(x, 1.5).sum(),
    "copysign": lambda L, x, t: L.copysign(x, t - 0.5).sum(),
    "glu": lambda L, x, t: L.nn.functional.glu(x, 1).sum(),
    "dropout0": lambda L, x, t: L.nn.functional.dropout(x, 0.0).sum(),
    "interp": lambda L, x, t: L.nn.functional.interpolate(
        x[None], scale_factor=2, mode="linear"
    ).sum(),
    "maxpool": lambda L, x, t: L.nn.functional.max_pool1d(x[None], 2).sum(),
    "avgpool": lambda L, x, t: L.nn.functional.avg_pool1d(x[None], 2).sum(),
}

MARGINS = {
    "margin_rank": lambda L, a, b: L.nn.functional.margin_ranking_loss(
        a, b, L.tensor([1.0, -1.0, 1.0], dtype=L.float64), margin=0.5
    ),
    "hinge": lambda L, a, b: L.nn.functional.hinge_embedding_loss(
        a, L.tensor([-1.0, -1.0, 1.0], dtype=L.float64), margin=1.0
    ),
    "cos_emb": lambda L, a, b: L.nn.functional.cosine_embedding_loss(
        L.stack([a, b]), L.stack([a, a]), L.tensor([-1, -1]), margin=1.0
    ),
    "multi_margin": lambda L, a, b: L.nn.functional.multi_margin_loss(
        L.stack([a, b]), L.tensor([0, 1])
    ),
    "multilabel_margin": lambda L, a, b: L.nn.functional.multilabel_margin_loss(
        L.stack([a, b]), L.tensor([[0, -1, 1], [2, -1, 0]])
    ),
}


def _value_and_grads(lib, f, arrays, extra):
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    y = f(lib, *xs, *extra(lib))
    y.backward()
    value = float(y.detach().numpy())
    return value, [
        np.zeros_like(a) if x.grad is None else x.grad.numpy() for a, x in zip(arrays, xs)
    ]


def _compare(f, arrays, extra=lambda lib: ()):
    (tv, tg), (pv, pg) = (_value_and_grads(lib, f, arrays, extra) for lib in (torch, pf))
    assert np.isclose(pv, tv, rtol=1e-7, atol=1e-9, equal_nan=True), (pv, tv)
    for ours, theirs in zip(pg, tg):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_at_kinks_and_ties_matches_torch(name: str) -> None:
    _compare(lambda lib, x, t: CASES[name](lib, x, t), [X], lambda lib: (lib.tensor(T),))


@pytest.mark.parametrize("name", sorted(MARGINS))
def test_margin_losses_at_their_margin_pass_the_gradient_as_torch(name: str) -> None:
    _compare(MARGINS[name], [np.array([1.0, 0.5, 2.0]), np.array([0.5, 1.0, 1.0])])


@pytest.mark.parametrize(
    "data",
    [
        [3.0, 3.0, 3.0],
        [1.0, float("nan"), 2.0, float("nan")],
        [0.0, 1.0, -1.0, 2.0, 0.5, -0.5, 0.0, 3.0],
        [5.0],
    ],
)
@pytest.mark.parametrize("fn", ["median", "nanmedian"])
def test_median_of_all_elements_shares_its_gradient_among_ties(fn: str, data) -> None:
    _compare(lambda lib, x: getattr(x, fn)(), [np.array(data)])


def test_triplet_margin_loss_refuses_a_margin_that_is_not_positive() -> None:
    a = pf.ones(1, 3)
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        pf.nn.functional.triplet_margin_loss(a, a, a, margin=0.0)


ELEMENTWISE_AT_SPECIAL_POINTS = {
    # (function, inputs exactly where the bug was)
    "lgamma_at_1_and_2": (lambda L, x: x.lgamma().sum(), [1.0, 2.0, 3.0, 0.5]),
    "logaddexp_tie": (lambda L, x: L.logaddexp(x, x * 0).sum(), [0.0, 1.0, -2.0]),
    "logaddexp2_tie": (lambda L, x: L.logaddexp2(x, x * 0 + 1).sum(), [1.0, 0.0]),
    "fmax_tie": (lambda L, x: L.fmax(x, x * 0).sum(), [0.0, -1.0, 2.0, float("nan")]),
    "fmin_tie": (lambda L, x: L.fmin(x, x * 0).sum(), [0.0, -1.0, 2.0, float("nan")]),
    "atan2_origin": (lambda L, x: (L.atan2(x, x * 0) + L.atan2(x * 0, x)).sum(), [0.0, 1.0]),
    "logit_outside": (lambda L, x: x.logit().sum(), [-1.0, 0.25, 2.0, 0.5]),
    "logit_at_0_and_1": (lambda L, x: x.logit().sum(), [0.0, 1.0, 1e-30, 0.5]),
    "logit_eps_edges": (lambda L, x: x.logit(eps=0.25).sum(), [0.0, 0.25, 0.75, 1.0, 0.5]),
    "erfinv_outside": (lambda L, x: x.erfinv().sum(), [1.5, -2.0, float("nan"), 0.5]),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE_AT_SPECIAL_POINTS))
def test_elementwise_gradients_at_special_points_match_torch(name: str) -> None:
    f, data = ELEMENTWISE_AT_SPECIAL_POINTS[name]
    _compare(f, [np.array(data)])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_binary_cross_entropy_gradient_is_torchs_at_0_and_1(dtype) -> None:
    """torch's binary_cross_entropy_backward: (x - t) / max((1 - x) x, 1e-12)
    (a float 1e-12): 0 where x = t = 0 or 1, +-1e12-ish near them; the clamped
    logs' chain gave NaN there and 1e20 at x = 1e-20. The target's derivative
    is -logit(x)."""
    x = np.array([0.0, 1.0, 0.5, 1e-20, 1 - 1e-7, 1e-30, 0.3, 0.9], dtype=dtype)
    t = np.array([0.0, 1.0, 0.3, 1.0, 0.0, 0.5, 0.3, 0.2], dtype=dtype)
    w = np.array([1.0, 2.0, 3.0, 1.0, 1.0, 2.0, 0.5, 1.0], dtype=dtype)
    got = []
    for L in (torch, pf):
        xx, tt = L.tensor(x, requires_grad=True), L.tensor(t, requires_grad=True)
        loss = L.nn.functional.binary_cross_entropy(xx, tt, reduction="none")
        mean = L.nn.functional.binary_cross_entropy(xx, tt.detach(), weight=L.tensor(w))
        (loss[2:].sum() + mean).backward()
        got.append([loss.detach().numpy(), mean.detach().numpy(), xx.grad.numpy(),
                    tt.grad.numpy()])
    rtol = 1e-10 if dtype == "float64" else 1e-6
    for p, q in zip(got[1], got[0]):
        np.testing.assert_allclose(p, q, rtol=rtol, atol=1e-30)


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_mean_losses_with_every_target_ignored_have_zero_gradients(smoothing) -> None:
    """The mean over no targets is NaN (0/0) in torch, but its backward skips
    the ignored targets: zero gradients, not the quotient's 0 * inf = NaN."""
    x = np.random.default_rng(0).standard_normal((3, 4))
    got = []
    for L in (torch, pf):
        xx = L.tensor(x, requires_grad=True)
        a = L.nn.functional.cross_entropy(xx, L.tensor([1, 1, 1]), ignore_index=1,
                                          label_smoothing=smoothing)
        b = L.nn.functional.nll_loss(xx.log_softmax(1), L.tensor([-100, -100, -100]))
        (a + b).backward()
        got.append([a.detach().numpy(), b.detach().numpy(), xx.grad.numpy()])
    for p, q in zip(got[1], got[0]):
        np.testing.assert_array_equal(p, q)


def test_hinge_embedding_loss_with_targets_other_than_plus_minus_one_is_torchs() -> None:
    """torch sums the input term (target != -1) and the margin term
    (target != 1): a target 0 (or 2) gets both."""
    x = np.array([0.5, -1.0, 2.0, 0.3, 1.5])
    y = np.array([1.0, -1.0, 0.0, 2.0, 0.0])
    got = []
    for L in (torch, pf):
        xx = L.tensor(x, requires_grad=True)
        loss = L.nn.functional.hinge_embedding_loss(xx, L.tensor(y), margin=0.8,
                                                    reduction="none")
        loss.sum().backward()
        got.append([loss.detach().numpy(), xx.grad.numpy()])
    for p, q in zip(got[1], got[0]):
        np.testing.assert_allclose(p, q, rtol=1e-12)
