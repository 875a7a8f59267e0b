"""Issue 14's surface, part 3 (branch surface3) against torch: ``F.fold`` /
``nn.Fold`` (the adjoint of ``unfold``), ``F.grid_sample`` (bilinear and
nearest, every padding mode, both corner conventions; gradients w.r.t. the
input and the grid), ``F.embedding_bag`` / ``nn.EmbeddingBag``,
``adaptive_max_pool1d/2d(return_indices=True)`` and ``torch.nextafter``:
values, float64 gradients (torch.autograd and central differences of our own
forward; forward mode against torch.func.jvp where torch has it, else
against differences), lazy and eager."""

from __future__ import annotations

import os
import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from _grad_oracles import Example, close, fd_directional, fd_gradient, torch_jvp, torch_vjp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

F = pf.nn.functional
_SCALE = float(os.environ.get("PYFLAME_TEST_SCALE", "1"))
EXAMPLES = max(3, round(6 * _SCALE))


def _check_grads(ex: Example, seed: int, torch_forward_mode: bool = True) -> None:
    """Reverse mode against torch.autograd and differences; forward mode
    against torch.func.jvp (where torch implements it) and differences."""
    rng = np.random.default_rng(seed)
    xs = [pf.from_numpy(a) for a in ex.arrays]
    outs = ex.pf_fn(*xs)
    cts = [rng.standard_normal(outs.shape)]

    def loss(*args: pf.Tensor) -> pf.Tensor:
        return (ex.pf_fn(*args) * pf.from_numpy(cts[0])).sum()

    grads = pf.grad(loss, argnums=tuple(range(len(xs))))(*xs)
    t_outs, t_grads = torch_vjp(ex, cts)
    close(outs.numpy(), t_outs[0], ex.rtol, ex.atol, f"{ex.label}: forward vs torch")
    for i, (g, tg, fd) in enumerate(zip(grads, t_grads, fd_gradient(ex, cts))):
        close(g.numpy(), tg, ex.rtol, ex.atol, f"{ex.label}: grad {i} vs torch")
        close(g.numpy(), fd, ex.fd_rtol, ex.fd_atol, f"{ex.label}: grad {i} vs differences")
    tangents = [rng.standard_normal(a.shape) for a in ex.arrays]
    _, tout = pf.jvp(ex.pf_fn, xs, [pf.from_numpy(t) for t in tangents])
    close(tout.numpy(), fd_directional(ex, tangents)[0], ex.fd_rtol, ex.fd_atol,
          f"{ex.label}: jvp vs differences")
    if torch_forward_mode:
        close(tout.numpy(), torch_jvp(ex, tangents)[0], ex.rtol, ex.atol,
              f"{ex.label}: jvp vs torch.func.jvp")


# ---- fold ----

@st.composite
def fold_geometries(draw):
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    d = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    p = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    size = tuple(draw(st.integers(max(1, dd * (kk - 1) + 1 - 2 * pp), 6))
                 for kk, dd, pp in zip(k, d, p))
    return size, k, d, p, s, draw(st.booleans()), draw(st.integers(0, 2**31 - 1))


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(geometry=fold_geometries())
def test_fold_matches_torch_values_and_grads(geometry, mode):
    size, k, d, p, s, batched, seed = geometry
    c = 2
    blocks = TF.unfold(torch.zeros(1, c, *size), k, d, p, s).shape[-1]
    shape = ((2,) if batched else ()) + (c * k[0] * k[1], blocks)
    x = np.random.default_rng(seed).standard_normal(shape)
    ex = Example([x], lambda t: F.fold(t, size, k, d, p, s),
                 lambda t: TF.fold(t, size, k, d, p, s), label=f"fold{size, k, d, p, s}")
    _check_grads(ex, seed)


def test_fold_is_the_adjoint_of_unfold():
    rng = np.random.default_rng(1)
    x, cols = rng.standard_normal((2, 3, 5, 6)), rng.standard_normal((2, 3 * 4, 12))
    args = dict(kernel_size=2, dilation=1, padding=1, stride=2)
    u = F.unfold(pf.from_numpy(x), **args).numpy()
    f = F.fold(pf.from_numpy(cols), (5, 6), **args).numpy()
    np.testing.assert_allclose(np.vdot(u, cols), np.vdot(x, f), rtol=1e-12)
    module = pf.nn.Fold((5, 6), **args)
    np.testing.assert_allclose(module(pf.from_numpy(cols)).numpy(),
                               torch.nn.Fold((5, 6), **args)(torch.tensor(cols)).numpy())


@pytest.mark.parametrize("shape, size, match", [
    ((2, 5, 4), (3, 3), "divisible"),
    ((2, 4, 5), (3, 3), "number of blocks"),
    ((4,), (3, 3), "2-D or 3-D"),
])
def test_fold_refuses_what_torch_refuses(shape, size, match):
    with pytest.raises(RuntimeError):
        TF.fold(torch.zeros(shape), size, 2)
    with pytest.raises(pf.ShapeError, match=match):
        F.fold(pf.zeros(shape), size, 2)


# ---- grid_sample ----

@pytest.mark.parametrize("grid_mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_matches_torch_values_and_grads(grid_mode, padding_mode, align_corners):
    # A fixed seed per case (str hashes change per process), and sample points off the
    # kinks: rounding boundaries, reflection and clipping points all sit at multiples of
    # half a pixel, where a finite difference straddles a jump.
    rng = np.random.default_rng(zlib.crc32(f"{grid_mode}{padding_mode}{align_corners}".encode()))
    x = rng.standard_normal((2, 2, 3, 4))
    grid = rng.uniform(-1.4, 1.4, (2, 3, 2, 2))  # some points outside [-1, 1]
    size = np.array([4, 3])  # (W, H) for grid[..., 0], grid[..., 1]
    pixel = (grid + 1) / 2 * (size - 1) if align_corners else ((grid + 1) * size - 1) / 2
    off_kink = np.round(pixel * 2) / 2 + np.where(pixel * 2 >= np.round(pixel * 2), 0.1, -0.1)
    near = np.abs(pixel * 2 - np.round(pixel * 2)) < 0.1
    pixel = np.where(near, off_kink, pixel)
    grid = pixel / (size - 1) * 2 - 1 if align_corners else (pixel * 2 + 1) / size - 1

    def pf_fn(a, g):
        return F.grid_sample(a, g, grid_mode, padding_mode, align_corners)

    def torch_fn(a, g):
        return TF.grid_sample(a, g, grid_mode, padding_mode, align_corners)
    ex = Example([x, grid], pf_fn, torch_fn, label=f"grid_sample {grid_mode} {padding_mode}",
                 rtol=1e-10, atol=1e-12)
    _check_grads(ex, 7, torch_forward_mode=False)  # (torch: no forward AD of grid_sampler)


def test_grid_sample_grads_lazy_and_eager(mode):
    rng = np.random.default_rng(8)
    x, grid = rng.standard_normal((1, 2, 4, 3)), rng.uniform(-1.2, 1.2, (1, 2, 3, 2))
    ex = Example([x, grid], lambda a, g: F.grid_sample(a, g, padding_mode="reflection"),
                 lambda a, g: TF.grid_sample(a, g, padding_mode="reflection",
                                             align_corners=False),
                 label="grid_sample", rtol=1e-10, atol=1e-12)
    _check_grads(ex, 9, torch_forward_mode=False)


def test_grid_sample_float32_and_identity_grid(mode):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    theta = np.array([[[1.0, 0, 0], [0, 1.0, 0]]], np.float32)
    grid = F.affine_grid(pf.from_numpy(theta), (1, 3, 4, 5), align_corners=False)
    out = F.grid_sample(pf.from_numpy(x), grid, align_corners=False)
    assert out.dtype == pf.float32
    np.testing.assert_allclose(out.numpy(), x, rtol=1e-5, atol=1e-6)


def test_grid_sample_refusals():
    x, g = pf.zeros((1, 1, 2, 2)), pf.zeros((1, 2, 2, 2))
    with pytest.raises(NotImplementedError, match="bicubic"):
        F.grid_sample(x, g, mode="bicubic")
    with pytest.raises(ValueError, match="padding_mode"):
        F.grid_sample(x, g, padding_mode="circular")
    with pytest.raises(pf.ShapeError, match="grid_sample"):
        F.grid_sample(x, pf.zeros((1, 2, 2, 3)))
    with pytest.raises(NotImplementedError, match="5-D"):
        F.grid_sample(pf.zeros((1, 1, 2, 2, 2)), pf.zeros((1, 2, 2, 2, 3)))


# ---- embedding_bag ----

_INPUT = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 2])


@pytest.mark.parametrize("bag_mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
@pytest.mark.parametrize("offsets, last", [([0, 4, 4, 6], False), ([0, 4, 4, 6, 10], True),
                                           (None, False)])
def test_embedding_bag_matches_torch(bag_mode, padding_idx, offsets, last):
    rng = np.random.default_rng(5)
    w = rng.standard_normal((10, 3))
    w[4] = w[5]  # a tie for max
    idx = _INPUT if offsets is not None else _INPUT.reshape(2, 5)
    kw = dict(mode=bag_mode, padding_idx=padding_idx, include_last_offset=last)

    def pf_fn(weight):
        off = None if offsets is None else pf.tensor(offsets)
        return F.embedding_bag(pf.tensor(idx), weight, off, **kw)

    def torch_fn(weight):
        off = None if offsets is None else torch.tensor(offsets)
        return TF.embedding_bag(torch.tensor(idx), weight, off, **kw)
    ex = Example([w], pf_fn, torch_fn, label=f"embedding_bag {kw}")
    _check_grads(ex, 11, torch_forward_mode=False)  # (torch: no forward AD of embedding_bag)


def test_embedding_bag_per_sample_weights_and_module(mode):
    rng = np.random.default_rng(6)
    w, psw = rng.standard_normal((10, 4)), rng.standard_normal(_INPUT.size)
    offsets = np.array([0, 3, 3, 7])
    ex = Example([w, psw],
                 lambda a, b: F.embedding_bag(pf.tensor(_INPUT), a, pf.tensor(offsets),
                                              mode="sum", per_sample_weights=b),
                 lambda a, b: TF.embedding_bag(torch.tensor(_INPUT), a, torch.tensor(offsets),
                                               mode="sum", per_sample_weights=b),
                 label="embedding_bag per_sample_weights")
    _check_grads(ex, 12, torch_forward_mode=False)
    bag = pf.nn.EmbeddingBag.from_pretrained(pf.from_numpy(w), mode="max", padding_idx=0)
    tbag = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w), mode="max", padding_idx=0)
    np.testing.assert_array_equal(bag(pf.tensor(_INPUT), pf.tensor(offsets)).numpy(),
                                  tbag(torch.tensor(_INPUT), torch.tensor(offsets)).numpy())
    fresh = pf.nn.EmbeddingBag(10, 4, padding_idx=3)
    assert fresh.weight.requires_grad and np.all(fresh.weight.numpy()[3] == 0)
    assert not bag.weight.requires_grad


def test_embedding_bag_refusals():
    w = pf.zeros((5, 2))
    with pytest.raises(NotImplementedError, match="per_sample_weights"):
        F.embedding_bag(pf.tensor([1, 2]), w, pf.tensor([0]), mode="mean",
                        per_sample_weights=pf.ones(2))
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(pf.tensor([[1, 2]]), w, pf.tensor([0]))
    with pytest.raises(ValueError, match="offsets has to be a 1D"):
        F.embedding_bag(pf.tensor([1, 2]), w)
    with pytest.raises(ValueError, match="last offset"):
        F.embedding_bag(pf.tensor([1, 2, 3]), w, pf.tensor([0, 2]), include_last_offset=True)
    with pytest.raises(ValueError, match="mode"):
        F.embedding_bag(pf.tensor([[1, 2]]), w, mode="median")


# ---- adaptive max pooling indices ----

@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(h=st.integers(1, 6), w=st.integers(1, 6), ho=st.integers(1, 4), wo=st.integers(1, 4),
       special=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_adaptive_max_pool_indices_match_torch(h, w, ho, wo, special, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, (2, 2, h, w)).astype(np.float64)  # ties
    if special:
        x.reshape(-1)[rng.integers(0, x.size, 2)] = [np.nan, np.inf]
    tx = torch.tensor(x, requires_grad=True)
    tv, ti = TF.adaptive_max_pool2d(tx, (ho, wo), return_indices=True)
    px = pf.from_numpy(x).requires_grad_()
    v, i = F.adaptive_max_pool2d(px, (ho, wo), return_indices=True)
    np.testing.assert_array_equal(v.numpy(), tv.detach().numpy())
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    assert i.dtype == pf.int64
    ct = rng.standard_normal(tv.shape)
    (tv * torch.tensor(ct)).sum().backward()
    (v * pf.from_numpy(ct)).sum().backward()
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    v1, i1 = F.adaptive_max_pool1d(pf.from_numpy(x[0]), wo, return_indices=True)
    tv1, ti1 = TF.adaptive_max_pool1d(torch.tensor(x[0]), wo, return_indices=True)
    np.testing.assert_array_equal(v1.numpy(), tv1.numpy())
    np.testing.assert_array_equal(i1.numpy(), ti1.numpy())


def test_adaptive_max_pool_modules_return_indices(mode):
    x = np.random.default_rng(2).standard_normal((1, 2, 5, 7))
    v, i = pf.nn.AdaptiveMaxPool2d((2, 3), return_indices=True)(pf.from_numpy(x))
    tv, ti = torch.nn.AdaptiveMaxPool2d((2, 3), return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(v.numpy(), tv.numpy())
    np.testing.assert_array_equal(i.numpy(), ti.numpy())


# ---- nextafter ----

_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 3.0, 1e-310, -5e-324, 5e-324, 1e308,
            np.inf, -np.inf, np.nan, 1.17549435e-38, 1e-45, 3.4028235e38]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nextafter_matches_torch_bit_for_bit(dtype, mode):
    with np.errstate(over="ignore"):
        a = np.array(_SPECIAL, dtype)
    rng = np.random.default_rng(0)
    more = (rng.standard_normal(40) * 10.0 ** rng.integers(-30, 30, 40)).astype(dtype)
    x = np.concatenate([np.repeat(a, a.size), more])
    y = np.concatenate([np.tile(a, a.size), rng.permutation(more)])
    got = pf.nextafter(pf.from_numpy(x), pf.from_numpy(y)).numpy()
    want = torch.nextafter(torch.tensor(x), torch.tensor(y)).numpy()
    assert got.dtype == want.dtype
    ints = np.int32 if dtype == np.float32 else np.int64
    bad = np.flatnonzero((got.view(ints) != want.view(ints)) & ~(np.isnan(got) & np.isnan(want)))
    assert bad.size == 0, f"nextafter({x[bad[:5]]}, {y[bad[:5]]}) = {got[bad[:5]]}, torch " \
                          f"{want[bad[:5]]}"


def test_nextafter_method_in_place_and_refusals():
    x = pf.tensor([1.0, 2.0], dtype=pf.float64)
    want = torch.tensor([1.0, 2.0], dtype=torch.float64).nextafter(torch.tensor(0.0,
                                                                                 dtype=torch.float64))
    np.testing.assert_array_equal(x.nextafter(pf.tensor(0.0, dtype=pf.float64)).numpy(), want)
    x.nextafter_(pf.tensor(0.0, dtype=pf.float64))
    np.testing.assert_array_equal(x.numpy(), want)
    with pytest.raises(RuntimeError, match="nextafter"):
        pf.nextafter(pf.tensor([1, 2]), pf.tensor([0, 0]))


# ---- ctc_loss ----

@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_matches_torch_values_and_grads(reduction, zero_infinity):
    """Gradients w.r.t. logits through log_softmax (torch's ctc backward
    assumes normalized log-probabilities: only that composition is the
    true gradient, and it is what users differentiate)."""
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((6, 3, 4))
    targets, in_len, tg_len = np.array([[1, 2, 2], [3, 1, 0], [2, 0, 0]]), [6, 5, 3], [3, 2, 1]

    def pf_fn(x):
        return F.ctc_loss(F.log_softmax(x, -1), pf.tensor(targets), pf.tensor(in_len),
                          pf.tensor(tg_len), reduction=reduction, zero_infinity=zero_infinity)

    def torch_fn(x):
        return TF.ctc_loss(TF.log_softmax(x, -1), torch.tensor(targets), torch.tensor(in_len),
                           torch.tensor(tg_len), reduction=reduction,
                           zero_infinity=zero_infinity)
    ex = Example([logits], pf_fn, torch_fn, label=f"ctc_loss {reduction}")
    _check_grads(ex, 1, torch_forward_mode=False)


def test_ctc_loss_forms_and_impossible_alignments(mode):
    rng = np.random.default_rng(1)
    lp = TF.log_softmax(torch.tensor(rng.standard_normal((5, 2, 4))), -1)
    plp = pf.from_numpy(lp.numpy())
    flat, in_len, tg_len = [1, 2, 2, 3, 3], [5, 4], [3, 2]
    np.testing.assert_allclose(
        pf.nn.CTCLoss(reduction="none")(plp, pf.tensor(flat), in_len, tg_len).numpy(),
        TF.ctc_loss(lp, torch.tensor(flat), in_len, tg_len, reduction="none").numpy(),
        rtol=1e-12)
    np.testing.assert_allclose(
        F.ctc_loss(plp[:, 0], pf.tensor([1, 2]), pf.tensor(5), pf.tensor(2)).numpy(),
        TF.ctc_loss(lp[:, 0], torch.tensor([1, 2]), torch.tensor(5), torch.tensor(2)).numpy(),
        rtol=1e-12)
    # two equal labels need a blank between them: 2 frames cannot hold them
    for zero_infinity in (False, True):
        got = F.ctc_loss(plp[:2], pf.tensor([[1, 1], [2, 3]]), [2, 2], [2, 2], reduction="none",
                         zero_infinity=zero_infinity).numpy()
        want = TF.ctc_loss(lp[:2], torch.tensor([[1, 1], [2, 3]]), [2, 2], [2, 2],
                           reduction="none", zero_infinity=zero_infinity).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match="blank"):
        F.ctc_loss(plp, pf.tensor([[0, 1], [1, 2]]), [5, 5], [2, 2])
    with pytest.raises(ValueError, match="input_lengths"):
        F.ctc_loss(plp, pf.tensor([[1, 1], [1, 2]]), [6, 5], [2, 2])
