"""pf.nn.functional against torch.nn.functional: values and float64 gradients
(reverse mode vs torch.autograd, forward mode vs torch.func.jvp), lazy and
eager, over a few shapes and options per function."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from _grad_oracles import (
    Example,
    close,
    draw_cotangents,
    fd_gradient,
    forward,
    pf_loss,
    torch_jvp,
    torch_vjp,
)

import pyflame_mlir as pf
import pyflame_mlir.nn.functional as F

RNG = np.random.default_rng(0)


def arr(*shape: int, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return RNG.uniform(low, high, shape)


def pos(*shape: int) -> np.ndarray:
    return RNG.uniform(0.5, 1.5, shape)


def targets(c: int, *shape: int, ignore: int | None = None) -> np.ndarray:
    t = RNG.integers(0, c, shape)
    if ignore is not None:
        t.flat[::3] = ignore
    return t


def probs(*shape: int, dim: int = 1) -> np.ndarray:
    e = np.exp(arr(*shape))
    return e / e.sum(axis=dim, keepdims=True)


def both(name: str, arrays: list[np.ndarray], fn: Callable, *consts: np.ndarray,
         **kw) -> Example:
    """An Example calling pf's ``F.name`` and torch's ``TF.name`` the same way:
    ``fn(F_or_TF, lib_consts, *xs)`` where ``consts`` are non-differentiated
    arrays passed as tensors of each library."""
    def pf_fn(*xs):
        return fn(F, [pf.tensor(c) for c in consts], *xs)

    def torch_fn(*xs):
        return fn(TF, [torch.tensor(c) for c in consts], *xs)
    return Example(arrays, pf_fn, torch_fn, label=name, **kw)


CASES: dict[str, Callable[[], Example]] = {
    "linear": lambda: both("linear", [arr(2, 3, 4), arr(5, 4), arr(5)],
                           lambda f, c, x, w, b: f.linear(x, w, b)),
    "linear_vector_weight": lambda: both("linear", [arr(3, 4), arr(4)],
                                         lambda f, c, x, w: f.linear(x, w)),
    # normalization
    "layer_norm": lambda: both("layer_norm", [arr(2, 3, 4), arr(3, 4), arr(3, 4)],
                               lambda f, c, x, w, b: f.layer_norm(x, (3, 4), w, b)),
    "layer_norm_plain": lambda: both("layer_norm", [arr(5, 6)],
                                     lambda f, c, x: f.layer_norm(x, [6], eps=1e-3)),
    "rms_norm": lambda: both("rms_norm", [arr(2, 3, 4), arr(4)],
                             lambda f, c, x, w: f.rms_norm(x, [4], w)),
    "rms_norm_eps": lambda: both("rms_norm", [arr(3, 5)],
                                 lambda f, c, x: f.rms_norm(x, [5], eps=1e-2)),
    "group_norm": lambda: both("group_norm", [arr(2, 6, 3, 2), arr(6), arr(6)],
                               lambda f, c, x, w, b: f.group_norm(x, 3, w, b)),
    "group_norm_1d": lambda: both("group_norm", [arr(3, 4, 5)],
                                  lambda f, c, x: f.group_norm(x, 2)),
    "batch_norm_train": lambda: both(
        "batch_norm", [arr(4, 3, 2, 2), arr(3), arr(3)],
        lambda f, c, x, w, b: f.batch_norm(x, None, None, w, b, training=True)),
    "batch_norm_eval": lambda: both(
        "batch_norm", [arr(4, 3), arr(3), arr(3)],
        lambda f, c, x, w, b: f.batch_norm(x, c[0], c[1], w, b, training=False),
        arr(3), pos(3)),
    "instance_norm": lambda: both("instance_norm", [arr(2, 3, 5), arr(3), arr(3)],
                                  lambda f, c, x, w, b: f.instance_norm(x, weight=w, bias=b)),
    "normalize": lambda: both("normalize", [arr(3, 4)], lambda f, c, x: f.normalize(x)),
    "normalize_p1": lambda: both("normalize", [arr(3, 4, 2)],
                                 lambda f, c, x: f.normalize(x, p=1.0, dim=-1)),
    # activations
    **{f"act_{n}": (lambda n=n, kw=kw: both(n, [arr(3, 6, low=-3, high=3)],
                                            lambda f, c, x: getattr(f, n)(x, **kw)))
       for n, kw in [("relu6", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {}),
                     ("elu", {"alpha": 0.5}), ("celu", {"alpha": 2.0}), ("selu", {}),
                     ("softplus", {}), ("softplus", {"beta": 2.0, "threshold": 3.0}),
                     ("silu", {}), ("mish", {}), ("logsigmoid", {}), ("softsign", {}),
                     ("tanhshrink", {}), ("hardsigmoid", {}), ("hardswish", {}),
                     ("hardtanh", {"min_val": -0.5, "max_val": 1.5}), ("gelu", {}),
                     ("gelu", {"approximate": "tanh"}), ("sigmoid", {}), ("tanh", {}),
                     ("relu", {}), ("softmax", {"dim": 1}), ("log_softmax", {"dim": 0}),
                     ("softmin", {"dim": -1}), ("glu", {"dim": -1})]},
    # attention
    "sdpa": lambda: both("sdpa", [arr(2, 3, 4, 5), arr(2, 3, 6, 5), arr(2, 3, 6, 2)],
                         lambda f, c, q, k, v: f.scaled_dot_product_attention(q, k, v)),
    "sdpa_causal": lambda: both(
        "sdpa", [arr(2, 5, 4), arr(2, 5, 4), arr(2, 5, 3)],
        lambda f, c, q, k, v: f.scaled_dot_product_attention(q, k, v, is_causal=True)),
    "sdpa_causal_rect": lambda: both(
        "sdpa", [arr(3, 4), arr(5, 4), arr(5, 2)],
        lambda f, c, q, k, v: f.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                             scale=0.3)),
    "sdpa_bool_mask": lambda: both(
        "sdpa", [arr(2, 4, 3), arr(2, 5, 3), arr(2, 5, 3)],
        lambda f, c, q, k, v: f.scaled_dot_product_attention(q, k, v, attn_mask=c[0]),
        np.concatenate([np.ones((4, 1), bool), RNG.random((4, 4)) > 0.4], 1)),
    "sdpa_float_mask": lambda: both(
        "sdpa", [arr(2, 4, 3), arr(2, 5, 3), arr(2, 5, 3), arr(4, 5)],
        lambda f, c, q, k, v, m: f.scaled_dot_product_attention(q, k, v, attn_mask=m)),
    "sdpa_gqa": lambda: both(
        "sdpa", [arr(1, 4, 3, 2), arr(1, 2, 3, 2), arr(1, 2, 3, 2)],
        lambda f, c, q, k, v: f.scaled_dot_product_attention(q, k, v, enable_gqa=True)),
    # convolution
    "conv2d": lambda: both("conv2d", [arr(2, 3, 5, 6), arr(4, 3, 3, 2), arr(4)],
                           lambda f, c, x, w, b: f.conv2d(x, w, b)),
    "conv2d_opts": lambda: both(
        "conv2d", [arr(1, 4, 7, 6), arr(6, 2, 3, 3)],
        lambda f, c, x, w: f.conv2d(x, w, stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                                    groups=2)),
    "conv2d_same": lambda: both("conv2d", [arr(2, 2, 5, 5), arr(3, 2, 4, 3)],
                                lambda f, c, x, w: f.conv2d(x, w, padding="same",
                                                            dilation=(1, 2))),
    "conv2d_unbatched_valid": lambda: both(
        "conv2d", [arr(2, 4, 4), arr(1, 2, 2, 2)],
        lambda f, c, x, w: f.conv2d(x, w, padding="valid", stride=2)),
    "conv1d": lambda: both("conv1d", [arr(2, 3, 8), arr(4, 3, 3), arr(4)],
                           lambda f, c, x, w, b: f.conv1d(x, w, b, stride=2, padding=1)),
    "conv1d_groups": lambda: both("conv1d", [arr(1, 4, 9), arr(4, 1, 2)],
                                  lambda f, c, x, w: f.conv1d(x, w, groups=4, dilation=3,
                                                              padding="same")),
    "conv_transpose2d": lambda: both(
        "conv_transpose2d", [arr(2, 4, 3, 4), arr(4, 3, 3, 2), arr(3)],
        lambda f, c, x, w, b: f.conv_transpose2d(x, w, b, stride=2, padding=1,
                                                 output_padding=1)),
    "conv_transpose2d_groups": lambda: both(
        "conv_transpose2d", [arr(1, 4, 3, 3), arr(4, 1, 2, 3)],
        lambda f, c, x, w: f.conv_transpose2d(x, w, groups=2, dilation=(2, 1),
                                              padding=(0, 2))),
    "conv_transpose1d": lambda: both(
        "conv_transpose1d", [arr(2, 3, 5), arr(3, 2, 4)],
        lambda f, c, x, w: f.conv_transpose1d(x, w, stride=3)),
    # pooling
    "max_pool2d": lambda: both("max_pool2d", [arr(2, 3, 6, 5)],
                               lambda f, c, x: f.max_pool2d(x, 2)),
    "max_pool2d_opts": lambda: both(
        "max_pool2d", [arr(1, 2, 7, 8)],
        lambda f, c, x: f.max_pool2d(x, (3, 2), stride=(2, 3), padding=1, dilation=(1, 2),
                                     ceil_mode=True)),
    "max_pool1d": lambda: both("max_pool1d", [arr(2, 3, 9)],
                               lambda f, c, x: f.max_pool1d(x, 3, 2, 1)),
    "avg_pool2d": lambda: both("avg_pool2d", [arr(2, 3, 6, 5)],
                               lambda f, c, x: f.avg_pool2d(x, 2)),
    "avg_pool2d_pad": lambda: both(
        "avg_pool2d", [arr(1, 2, 7, 6)],
        lambda f, c, x: f.avg_pool2d(x, 3, 2, 1, ceil_mode=True)),
    "avg_pool2d_nopad": lambda: both(
        "avg_pool2d", [arr(1, 2, 7, 6)],
        lambda f, c, x: f.avg_pool2d(x, (3, 2), 2, 1, ceil_mode=True,
                                     count_include_pad=False)),
    "avg_pool2d_div": lambda: both(
        "avg_pool2d", [arr(1, 2, 5, 5)],
        lambda f, c, x: f.avg_pool2d(x, 2, padding=1, divisor_override=3)),
    "avg_pool1d": lambda: both("avg_pool1d", [arr(2, 3, 7)],
                               lambda f, c, x: f.avg_pool1d(x, 3, 2, 1,
                                                            count_include_pad=False)),
    "adaptive_avg_pool2d": lambda: both("adaptive_avg_pool2d", [arr(2, 3, 7, 5)],
                                        lambda f, c, x: f.adaptive_avg_pool2d(x, (3, 2))),
    "adaptive_avg_pool2d_1": lambda: both("adaptive_avg_pool2d", [arr(2, 3, 4, 5)],
                                          lambda f, c, x: f.adaptive_avg_pool2d(x, 1)),
    "adaptive_avg_pool1d": lambda: both("adaptive_avg_pool1d", [arr(2, 3, 7)],
                                        lambda f, c, x: f.adaptive_avg_pool1d(x, 4)),
    "adaptive_max_pool2d": lambda: both("adaptive_max_pool2d", [arr(1, 2, 5, 7)],
                                        lambda f, c, x: f.adaptive_max_pool2d(x, (2, 3))),
    # interpolation and padding
    "interp_nearest": lambda: both("interpolate", [arr(1, 2, 3, 4)],
                                   lambda f, c, x: f.interpolate(x, size=(5, 7))),
    "interp_nearest_scale": lambda: both("interpolate", [arr(1, 2, 3, 4)],
                                         lambda f, c, x: f.interpolate(x, scale_factor=2)),
    "interp_nearest_exact": lambda: both(
        "interpolate", [arr(1, 1, 5, 4)],
        lambda f, c, x: f.interpolate(x, size=(3, 7), mode="nearest-exact")),
    "interp_bilinear": lambda: both(
        "interpolate", [arr(2, 2, 3, 4)],
        lambda f, c, x: f.interpolate(x, size=(5, 3), mode="bilinear")),
    "interp_bilinear_ac": lambda: both(
        "interpolate", [arr(1, 2, 3, 4)],
        lambda f, c, x: f.interpolate(x, scale_factor=(2.0, 1.5), mode="bilinear",
                                      align_corners=True)),
    "interp_bilinear_scale": lambda: both(
        "interpolate", [arr(1, 2, 4, 3)],
        lambda f, c, x: f.interpolate(x, scale_factor=1.7, mode="bilinear")),
    "interp_linear": lambda: both(
        "interpolate", [arr(2, 2, 5)],
        lambda f, c, x: f.interpolate(x, size=8, mode="linear", align_corners=False)),
    **{f"pad_{mode}_{i}": (lambda mode=mode, p=p, shape=shape: both(
        "pad", [arr(*shape)], lambda f, c, x: f.pad(x, p, mode=mode)))
       for mode in ("constant", "reflect", "replicate", "circular")
       for i, (p, shape) in enumerate([((1, 2), (2, 3, 4)), ((2, 1, 1, 2), (1, 2, 3, 4))])},
    "pad_value": lambda: both("pad", [arr(2, 3)],
                              lambda f, c, x: f.pad(x, (1, 1, 2, 0), value=1.5)),
    "pad_crop": lambda: both("pad", [arr(3, 5)], lambda f, c, x: f.pad(x, (-1, 2, 1, -1))),
    # losses
    **{f"{n}_{r}": (lambda n=n, r=r: both(n, [arr(3, 4), arr(3, 4)],
                                          lambda f, c, x, t: getattr(f, n)(x, t, reduction=r)))
       for n in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss")
       for r in ("mean", "sum", "none")},
    "mse_loss_weight": lambda: both("mse_loss", [arr(3, 4), arr(3, 4)],
                                    lambda f, c, x, t: f.mse_loss(x, t, weight=c[0]),
                                    pos(3, 4)),
    "l1_loss_weight": lambda: both("l1_loss", [arr(3, 4), arr(3, 4)],
                                   lambda f, c, x, t: f.l1_loss(x, t, weight=c[0]),
                                   pos(3, 4)),
    "huber_loss_weight": lambda: both("huber_loss", [arr(3, 4), arr(3, 4)],
                                      lambda f, c, x, t: f.huber_loss(x, t, weight=c[0]),
                                      pos(3, 4)),
    "smooth_l1_beta": lambda: both("smooth_l1_loss", [arr(5, 2), arr(5, 2)],
                                   lambda f, c, x, t: f.smooth_l1_loss(x, t, beta=0.5)),
    "huber_delta": lambda: both("huber_loss", [arr(5, 2), arr(5, 2)],
                                lambda f, c, x, t: f.huber_loss(x, t, delta=0.3)),
    **{f"ce_{r}": (lambda r=r: both("cross_entropy", [arr(5, 4)],
                                    lambda f, c, x: f.cross_entropy(x, c[0], reduction=r),
                                    targets(4, 5)))
       for r in ("mean", "sum", "none")},
    "ce_weight_ignore": lambda: both(
        "cross_entropy", [arr(6, 4)],
        lambda f, c, x: f.cross_entropy(x, c[0], weight=c[1], ignore_index=-1),
        targets(4, 6, ignore=-1), pos(4)),
    "ce_smoothing": lambda: both(
        "cross_entropy", [arr(6, 4)],
        lambda f, c, x: f.cross_entropy(x, c[0], ignore_index=2, label_smoothing=0.2),
        targets(4, 6)),
    "ce_smoothing_weight": lambda: both(
        "cross_entropy", [arr(6, 4)],
        lambda f, c, x: f.cross_entropy(x, c[0], weight=c[1], ignore_index=-100,
                                        label_smoothing=0.3),
        targets(4, 6, ignore=-100), pos(4)),
    "ce_smoothing_sum": lambda: both(
        "cross_entropy", [arr(6, 4)],
        lambda f, c, x: f.cross_entropy(x, c[0], weight=c[1], reduction="sum",
                                        label_smoothing=0.1), targets(4, 6), pos(4)),
    "ce_spatial": lambda: both(
        "cross_entropy", [arr(2, 3, 4, 2)],
        lambda f, c, x: f.cross_entropy(x, c[0], ignore_index=1), targets(3, 2, 4, 2)),
    "ce_unbatched": lambda: both("cross_entropy", [arr(5)],
                                 lambda f, c, x: f.cross_entropy(x, c[0]),
                                 np.array(3)),
    "ce_probs": lambda: both("cross_entropy", [arr(4, 3, 2), probs(4, 3, 2)],
                             lambda f, c, x, t: f.cross_entropy(x, t, weight=c[0]), pos(3)),
    "ce_probs_smooth": lambda: both(
        "cross_entropy", [arr(4, 3), probs(4, 3)],
        lambda f, c, x, t: f.cross_entropy(x, t, label_smoothing=0.25, reduction="sum")),
    "nll": lambda: both("nll_loss", [arr(5, 3)], lambda f, c, x: f.nll_loss(x, c[0], c[1]),
                        targets(3, 5), pos(3)),
    "nll_none": lambda: both("nll_loss", [arr(2, 3, 4)],
                             lambda f, c, x: f.nll_loss(x, c[0], ignore_index=0,
                                                        reduction="none"),
                             targets(3, 2, 4)),
    "bce": lambda: both("binary_cross_entropy", [RNG.uniform(0.1, 0.9, (3, 4)), pos(3, 4) / 2],
                        lambda f, c, x, t: f.binary_cross_entropy(x, t, c[0]), pos(4)),
    "bce_logits": lambda: both(
        "bce_with_logits", [arr(3, 4), pos(3, 4) / 2],
        lambda f, c, x, t: f.binary_cross_entropy_with_logits(x, t, c[0], pos_weight=c[1],
                                                              reduction="sum"),
        pos(3, 4), pos(4)),
    "bce_logits_plain": lambda: both(
        "bce_with_logits", [arr(6, low=-30, high=30), pos(6) / 2],
        lambda f, c, x, t: f.binary_cross_entropy_with_logits(x, t)),
    **{f"kl_{r}_{lt}": (lambda r=r, lt=lt: both(
        "kl_div", [np.log(probs(3, 4)), probs(3, 4) if not lt else np.log(probs(3, 4))],
        lambda f, c, x, t: f.kl_div(x, t, reduction=r, log_target=lt)))
       for r in ("batchmean", "sum", "none") for lt in (False, True)},
    "cosine_similarity": lambda: both("cosine_similarity", [arr(3, 4), arr(3, 4)],
                                      lambda f, c, a, b: f.cosine_similarity(a, b)),
    "cosine_similarity_dim": lambda: both(
        "cosine_similarity", [arr(2, 3, 4), arr(3, 1)],
        lambda f, c, a, b: f.cosine_similarity(a, b, dim=-1)),
    "pairwise_distance": lambda: both("pairwise_distance", [arr(3, 4), arr(3, 4)],
                                      lambda f, c, a, b: f.pairwise_distance(a, b)),
    "pairwise_distance_p1": lambda: both(
        "pairwise_distance", [arr(3, 4), arr(4)],
        lambda f, c, a, b: f.pairwise_distance(a, b, p=1.0, keepdim=True)),
}

# cases whose gradient is also checked by finite differences (the rest: vs torch)
FD = {"layer_norm", "group_norm", "batch_norm_train", "conv2d_opts", "avg_pool2d_nopad",
      "interp_bilinear_ac", "ce_smoothing_weight", "ce_probs", "sdpa_causal", "pad_reflect_1",
      "bce_logits"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_and_grad_match_torch(name: str, mode: str) -> None:
    ex = CASES[name]()
    rng = np.random.default_rng(1)
    cts = draw_cotangents(rng, ex)
    xs = [pf.from_numpy(a) for a in ex.arrays]
    value, grads = pf.value_and_grad(pf_loss(ex, cts), argnums=tuple(range(len(xs))))(*xs)
    pf.eval(value, *grads)
    t_outs, t_grads = torch_vjp(ex, cts)
    what = ex.describe()
    for o, t in zip(forward(ex, ex.arrays), t_outs):
        assert o.shape == t.shape, f"{what}: shape {o.shape} vs torch {t.shape}"
        close(o, t, 1e-7, 1e-9, f"{what}: forward vs torch")
    for i, (g, tg) in enumerate(zip(grads, t_grads)):
        close(g, tg, 1e-7, 1e-9, f"{what}: grad of input {i} vs torch.autograd")
    if name in FD and mode == "lazy":
        for i, (g, fd) in enumerate(zip(grads, fd_gradient(ex, cts))):
            close(g, fd, 1e-5, 1e-6, f"{what}: grad of input {i} vs finite differences")


JVP = ["layer_norm", "rms_norm", "conv2d", "max_pool2d", "sdpa_bool_mask", "ce_weight_ignore",
       "interp_bilinear", "pad_circular_1", "act_mish", "act_softplus"]


@pytest.mark.parametrize("name", JVP)
def test_jvp_matches_torch(name: str) -> None:
    ex = CASES[name]()
    rng = np.random.default_rng(2)
    tangents = [rng.uniform(-1, 1, a.shape) for a in ex.arrays]
    _, tout = pf.jvp(ex.pf_fn, [pf.from_numpy(a) for a in ex.arrays],
                     [pf.from_numpy(t) for t in tangents])
    tout = tout if isinstance(tout, list | tuple) else [tout]
    for t, tt in zip(tout, torch_jvp(ex, tangents)):
        close(t, tt, 1e-7, 1e-9, f"{ex.describe()}: jvp vs torch.func.jvp")


def test_float32_conv_and_pool_match_torch() -> None:
    x, w = arr(2, 3, 8, 8).astype(np.float32), arr(5, 3, 3, 3).astype(np.float32)
    y = F.max_pool2d(F.relu(F.conv2d(pf.tensor(x), pf.tensor(w), padding=1)), 2)
    ty = TF.max_pool2d(TF.relu(TF.conv2d(torch.tensor(x), torch.tensor(w), padding=1)), 2)
    assert y.dtype is pf.float32
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-5, atol=1e-5)


# ---- batch_norm running statistics (in place, as torch) ----

@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 2, 2)])
def test_batch_norm_updates_running_stats_like_torch(shape, mode: str) -> None:
    x = arr(*shape)
    rm, rv = arr(3), pos(3)
    prm, prv = pf.tensor(rm), pf.tensor(rv)
    trm, trv = torch.tensor(rm), torch.tensor(rv)
    for step in range(2):
        y = F.batch_norm(pf.tensor(x * (step + 1)), prm, prv, training=True, momentum=0.3)
        ty = TF.batch_norm(torch.tensor(x * (step + 1)), trm, trv, training=True,
                           momentum=0.3)
        np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(prm.numpy(), trm.numpy(), rtol=1e-12)
    np.testing.assert_allclose(prv.numpy(), trv.numpy(), rtol=1e-12)


def test_instance_norm_running_stats_like_torch() -> None:
    x = arr(3, 2, 5)
    prm, prv = pf.zeros(2, dtype=pf.float64), pf.ones(2, dtype=pf.float64)
    trm, trv = torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)
    y = F.instance_norm(pf.tensor(x), prm, prv, momentum=0.2)
    ty = TF.instance_norm(torch.tensor(x), trm, trv, momentum=0.2)
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(prm.numpy(), trm.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(prv.numpy(), trv.numpy(), rtol=1e-12)


def test_batch_norm_training_with_one_value_per_channel_raises() -> None:
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(pf.randn(1, 3), None, None, training=True)


# ---- dropout ----

def test_dropout_is_seeded_scaled_and_lazy(lazy) -> None:
    x = pf.ones(200, 50)
    pf.manual_seed(3)
    a = F.dropout(x, 0.3)
    pf.manual_seed(3)
    b = F.dropout(x, 0.3)
    av = a.numpy()
    np.testing.assert_array_equal(av, b.numpy())
    assert set(np.unique(av)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((av == 0).mean() - 0.3) < 0.02
    c = F.dropout(x, 0.3)
    assert not np.array_equal(c.numpy(), av)  # a new draw
    pf.clear_cache()
    before = pf.cache_stats()
    for _ in range(3):
        F.dropout(x * 2.0, 0.5).sum().item()
    after = pf.cache_stats()
    assert after["misses"] - before["misses"] == 1  # the mask is a leaf: one compile


def test_dropout_identity_and_extremes() -> None:
    x = pf.randn(4, 5)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), np.zeros((4, 5), np.float32))
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)


def test_dropout_inplace_and_gradient() -> None:
    x = pf.randn(30, 40, dtype=pf.float64)
    y = x * 1.0
    out = F.dropout(y, 0.4, inplace=True)
    assert out is y
    xr = pf.randn(30, 40, dtype=pf.float64, requires_grad=True)
    pf.manual_seed(5)
    z = F.dropout(xr, 0.4)
    z.sum().backward()
    np.testing.assert_allclose(xr.grad.numpy(), (z.numpy() != 0) / 0.6)


@pytest.mark.parametrize("fn,shape,mask_axes", [(F.dropout1d, (4, 6, 5), (2,)),
                                                 (F.dropout2d, (4, 6, 3, 5), (2, 3)),
                                                 (F.dropout2d, (6, 3, 5), (2,))])
def test_feature_dropout_zeroes_whole_channels(fn, shape, mask_axes) -> None:
    # (a 3-D input to dropout2d is (N, C, L), as torch reads it, with its warning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = fn(pf.ones(*shape), 0.5).numpy()
    per_channel = y.min(axis=mask_axes) == y.max(axis=mask_axes)
    assert per_channel.all() and (y == 0).any() and (y == 2).any()


# ---- attention extras ----

def test_sdpa_dropout_is_seeded_and_unbiased_in_expectation() -> None:
    q, k, v = (pf.randn(1, 4, 3) for _ in range(3))
    pf.manual_seed(1)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    pf.manual_seed(1)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="is_causal"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=pf.ones(4, 4), is_causal=True)


# ---- errors and edge cases ----

def test_errors_name_the_op_and_shapes() -> None:
    x = pf.randn(2, 3, 5, 5)
    with pytest.raises(pf.ShapeError, match="conv2d"):
        F.conv2d(x, pf.randn(4, 2, 3, 3))
    with pytest.raises(pf.ShapeError, match="layer_norm"):
        F.layer_norm(x, (4,))
    with pytest.raises(pf.ShapeError, match="group_norm"):
        F.group_norm(x, 2)
    # (return_indices=True is supported since branch surface3: test_surface3.py checks
    # it against torch; this asserted its refusal before)
    with pytest.raises(ValueError, match="adaptive_max_pool2d: output_size"):
        F.adaptive_max_pool2d(x, (1, 2, 3), return_indices=True)
    with pytest.raises(ValueError, match="same"):
        F.conv2d(x, pf.randn(4, 3, 3, 3), stride=2, padding="same")
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.mse_loss(x, x, reduction="avg")
    with pytest.raises(IndexError, match="out of bounds"):
        F.cross_entropy(pf.randn(3, 4), pf.tensor([0, 4, 1]))
    with pytest.raises(ValueError, match="reflect"):
        F.pad(pf.randn(1, 2, 3), (3, 0), mode="reflect")
    with pytest.raises(ValueError, match="half of effective kernel"):
        F.max_pool2d(x, 2, padding=2)


def test_pad_keeps_integer_dtype_like_torch() -> None:
    x = np.arange(6).reshape(2, 3)
    out = F.pad(pf.tensor(x), (1, 1), value=7)
    expected = TF.pad(torch.tensor(x), (1, 1), value=7)
    assert out.dtype is pf.int64
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_cross_entropy_all_ignored_is_nan_like_torch() -> None:
    x = arr(3, 4)
    t = np.full(3, -100)
    out = F.cross_entropy(pf.tensor(x), pf.tensor(t)).item()
    assert math.isnan(out) and math.isnan(TF.cross_entropy(torch.tensor(x),
                                                           torch.tensor(t)).item())


def test_max_pool_with_inf_and_softplus_large_values_match_torch() -> None:
    x = arr(1, 1, 4, 4)
    x[0, 0, 0, 0] = np.inf
    x[0, 0, 3, 3] = -np.inf
    np.testing.assert_array_equal(F.max_pool2d(pf.tensor(x), 2, padding=1).numpy(),
                                  TF.max_pool2d(torch.tensor(x), 2, padding=1).numpy())
    big = np.array([-100.0, -30.0, 0.0, 19.0, 21.0, 1000.0])
    xs = pf.tensor(big, requires_grad=True)
    F.softplus(xs).sum().backward()
    tx = torch.tensor(big, requires_grad=True)
    TF.softplus(tx).sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(F.softplus(pf.tensor(big)).numpy(),
                               TF.softplus(torch.tensor(big)).numpy(), rtol=1e-12)


@pytest.mark.parametrize("fn,nsp,kwargs", [
    ("conv2d", 2, {"padding": 1}),
    ("conv2d", 2, {"stride": 2, "dilation": 2, "padding": 2}),
    ("conv2d", 2, {"groups": 2, "padding": "same"}),
    ("conv1d", 1, {"stride": 3}),
    ("conv3d", 3, {"padding": 1}),
    ("conv_transpose2d", 2, {"stride": 2, "padding": 1, "output_padding": 1}),
])
def test_conv_with_the_batch_innermost_matches_torch(fn, nsp, kwargs) -> None:
    """Convolutions whose columns outweigh the output (in channels x kernel >
    out channels) with rows under 32 wide lay the batch innermost
    (``_convnd``'s ``batch_last``): values and the gradients of input, weight
    and bias as torch's, float64."""
    rng = np.random.default_rng(nsp)
    groups = kwargs.get("groups", 1)
    c, o, k = 6, 4, 3
    x = rng.standard_normal((3, c, *([9] * nsp)))
    if fn.startswith("conv_transpose"):
        w = rng.standard_normal((c, o // groups, *([k] * nsp)))
    else:
        w = rng.standard_normal((o, c // groups, *([k] * nsp)))
    b = rng.standard_normal(o)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ty = getattr(TF, fn)(tx, tw, tb, **kwargs)
    g = rng.standard_normal(tuple(ty.shape))
    ty.backward(torch.tensor(g))
    px, pw, pb = (pf.tensor(a, requires_grad=True) for a in (x, w, b))
    py = getattr(F, fn)(px, pw, pb, **kwargs)
    (py * pf.tensor(g)).sum().backward()
    np.testing.assert_allclose(py.numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    for p, t in ((px, tx), (pw, tw), (pb, tb)):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)


# ---- in-place activations differentiate through the update (torch's relu_ and the like) ----

_INPLACE_ACTS: dict[str, Callable] = {
    "relu": lambda F_, h: F_.relu(h, inplace=True),
    "relu_": lambda F_, h: F_.relu_(h),
    "relu6": lambda F_, h: F_.relu6(h, inplace=True),
    "hardtanh": lambda F_, h: F_.hardtanh(h, -0.5, 0.7, inplace=True),
    "hardtanh_": lambda F_, h: F_.hardtanh_(h, -0.5, 0.7),
    "leaky_relu": lambda F_, h: F_.leaky_relu(h, 0.1, inplace=True),
    "leaky_relu_": lambda F_, h: F_.leaky_relu_(h, 0.1),
    "elu": lambda F_, h: F_.elu(h, 0.7, inplace=True),
    "elu_": lambda F_, h: F_.elu_(h, 0.7),
    "celu": lambda F_, h: F_.celu(h, 0.7, inplace=True),
    "selu": lambda F_, h: F_.selu(h, inplace=True),
    "silu": lambda F_, h: F_.silu(h, inplace=True),
    "mish": lambda F_, h: F_.mish(h, inplace=True),
    "hardsigmoid": lambda F_, h: F_.hardsigmoid(h, inplace=True),
    "hardswish": lambda F_, h: F_.hardswish(h, inplace=True),
    "threshold": lambda F_, h: F_.threshold(h, 0.3, -1.0, inplace=True),
    "threshold_": lambda F_, h: F_.threshold_(h, 0.3, -1.0),
    "rrelu_eval": lambda F_, h: F_.rrelu(h, inplace=True),
}


@pytest.mark.parametrize("name", sorted(_INPLACE_ACTS))
def test_inplace_activation_backward_matches_torch(name: str) -> None:
    """``F.relu(h, inplace=True)`` after a matmul (ResNet's ``nn.ReLU(inplace=True)``):
    the op that computes the new value is the update itself, so backward
    neither raises the version-counter error nor loses the gradient."""
    act = _INPLACE_ACTS[name]
    w0, x0 = arr(3, 4), arr(2, 3)
    grads, outs = [], []
    for lib, F_ in ((torch, TF), (pf, F)):
        w = lib.tensor(w0, requires_grad=True)
        h = lib.tensor(x0) @ w
        y = act(F_, h)
        assert y is h  # the same tensor object, updated in place
        (y * y).sum().backward()
        grads.append(np.asarray(w.grad.detach().numpy()))
        outs.append(np.asarray(h.detach().numpy()))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-10, atol=1e-12)
    # torch's float64 hardsigmoid and celu backward use float32 constants (1/6,
    # 1/alpha): 1e-7 relative; ours are exact
    rtol = 1e-7 if name in ("hardsigmoid", "celu") else 1e-10
    np.testing.assert_allclose(grads[1], grads[0], rtol=rtol, atol=1e-12)


def test_inplace_relu_module_in_residual_block() -> None:
    """ResNet's pattern: ``nn.ReLU(inplace=True)`` after BatchNorm, ``out += x``,
    then ``F.relu(out, inplace=True)``; gradients equal torch's."""
    x0, w0 = arr(2, 4), arr(4, 4)
    got = []
    for lib, F_ in ((torch, TF), (pf, F)):
        x = lib.tensor(x0, requires_grad=True)
        w = lib.tensor(w0, requires_grad=True)
        bn = lib.nn.BatchNorm1d(4).double()
        out = lib.nn.ReLU(inplace=True)(bn(x @ w))
        out = out @ w
        out += x
        out = F_.relu(out, inplace=True)
        out.pow(2).sum().backward()
        got.append([np.asarray(t.grad.numpy()) for t in (x, w, bn.weight, bn.bias)])
    for a, b in zip(got[0], got[1]):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def test_norm_based_functions_at_a_zero_row_have_torchs_gradient() -> None:
    """normalize / cosine_similarity / pdist / pairwise_distance with a zero
    row (padding embeddings, duplicate points): gradients as torch's, finite
    (a sqrt of the sum of squares gave NaN there)."""
    x0 = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 2.0], [1.0, -2.0, 2.0]])
    y0 = np.array([[0.5, 1.0, -1.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    cases = {
        "normalize": lambda F_, x, y: F_.normalize(x, dim=1),
        "normalize_p1": lambda F_, x, y: F_.normalize(x, p=1.0, dim=1),
        "cosine_similarity": lambda F_, x, y: F_.cosine_similarity(x, y),
        "pdist": lambda F_, x, y: F_.pdist(x),
        "pairwise_distance": lambda F_, x, y: F_.pairwise_distance(x, x.detach() * 1, eps=0.0),
    }
    for name, f in cases.items():
        got = []
        for lib, F_ in ((torch, TF), (pf, F)):
            x = lib.tensor(x0, requires_grad=True)
            y = lib.tensor(y0, requires_grad=True)
            out = f(F_, x, y)
            (out * lib.arange(1.0, out.numel() + 1.0, dtype=lib.float64).reshape(out.shape)
             ).sum().backward()
            got.append([np.asarray(out.detach().numpy()), np.asarray(x.grad.numpy()),
                        None if y.grad is None else np.asarray(y.grad.numpy())])
        for a, b in zip(*got):
            if a is None:
                assert b is None, name
                continue
            assert np.isfinite(b).all(), name
            np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12, err_msg=name)
