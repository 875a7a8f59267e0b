"""``pf.autocast`` and ``pf.amp.GradScaler`` against torch 2.13's CPU
autocast: output dtypes op by op, values within half-precision tolerance,
float32 gradients, and the scaler's scale / skipped steps step by step."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

torch = pytest.importorskip("torch")
TF = torch.nn.functional
F = pf.nn.functional

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 6)).astype(np.float32)
W = RNG.standard_normal((5, 6)).astype(np.float32)
B = RNG.standard_normal(5).astype(np.float32)
IMG = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
K = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
T = RNG.integers(0, 5, 4)
P = RNG.random((4, 6)).astype(np.float32)


def _cases(lib, nnf, wrap):
    x, w, b, img, k, t, p = (wrap(v) for v in (X, W, B, IMG, K, T, P))
    return {
        "matmul": lambda: x @ w.T, "mm": lambda: lib.mm(x, w.T),
        "bmm": lambda: lib.bmm(x[None], w.T[None]), "addmm": lambda: lib.addmm(b, x, w.T),
        "baddbmm": lambda: lib.baddbmm(b[None, None], x[None], w.T[None]),
        "einsum": lambda: lib.einsum("ij,kj->ik", x, w), "inner": lambda: lib.inner(x, w),
        "linear": lambda: nnf.linear(x, w, b), "conv2d": lambda: nnf.conv2d(img, k, padding=1),
        "conv1d": lambda: nnf.conv1d(img[:, :, 0], k[:, :, 0]),
        "sdpa": lambda: nnf.scaled_dot_product_attention(x[None], x[None], x[None]),
        "mv": lambda: lib.mv(x, x[0]), "dot": lambda: lib.dot(x[0], x[1]),
        "outer": lambda: lib.outer(x[0], x[1]),
        "relu of matmul": lambda: lib.relu(x @ w.T), "matmul + f32 bias": lambda: x @ w.T + b,
        "softmax of matmul": lambda: lib.softmax(x @ w.T, -1),
        "cross_entropy": lambda: nnf.cross_entropy(x @ w.T, t),
        "mse_loss": lambda: nnf.mse_loss(x @ w.T, (x @ w.T).detach() * 0),
        "nll_loss": lambda: nnf.nll_loss(lib.log_softmax(x @ w.T, -1), t),
        "bce_logits": lambda: nnf.binary_cross_entropy_with_logits(x @ x.T, p @ p.T),
        "prod": lambda: (x @ x.T).prod(), "sum": lambda: (x @ w.T).sum(),
        "layer_norm": lambda: nnf.layer_norm(x @ x.T, (4,)),
        "pad reflect": lambda: nnf.pad(nnf.conv2d(img, k), (1, 1, 1, 1), mode="reflect"),
        "pad constant": lambda: nnf.pad(nnf.conv2d(img, k), (1, 1, 1, 1)),
        "float64 matmul": lambda: x.double() @ w.double().T,
        "adaptive_avg_pool2d": lambda: nnf.adaptive_avg_pool2d(img, (3, 4)),
        "interpolate bilinear": lambda: nnf.interpolate(img, scale_factor=2, mode="bilinear"),
        "affine_grid": lambda: nnf.affine_grid(x[None, :2, :3], [1, 1, 4, 4],
                                               align_corners=False),
    }


@pytest.mark.parametrize("half", ["bfloat16", "float16"])
def test_autocast_dtypes_and_values_match_torch(half: str) -> None:
    ours = _cases(pf, F, pf.tensor)
    theirs = _cases(torch, TF, torch.tensor)
    with pf.autocast("cpu", dtype=getattr(pf, half)):
        got = {k: f() for k, f in ours.items()}
    with torch.autocast("cpu", dtype=getattr(torch, half)):
        want = {k: f() for k, f in theirs.items()}
    got_dtypes = {k: v.dtype.name for k, v in got.items()}
    want_dtypes = {k: str(v.dtype).removeprefix("torch.") for k, v in want.items()}
    assert got_dtypes == want_dtypes
    for k in got:
        a = np.asarray(got[k].numpy(), dtype=np.float64)
        e = want[k].detach().double().numpy()
        scale = max(1.0, float(np.abs(e).max()))
        assert np.abs(a - e).max() <= 2e-2 * scale, k  # a few half-precision ulps


def test_autocast_training_step_gives_float32_grads_close_to_torch() -> None:
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 5))
    pm = pf.nn.Sequential(pf.nn.Linear(6, 8), pf.nn.ReLU(), pf.nn.Linear(8, 5))
    pm.load_state_dict({k: pf.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    with torch.autocast("cpu", dtype=torch.bfloat16):
        t_logits = tm(torch.tensor(X))
        tl = TF.cross_entropy(t_logits, torch.tensor(T))
    with pf.autocast("cpu", dtype=pf.bfloat16):
        p_logits = pm(pf.tensor(X))  # nn.Linear modules: the policy of F.linear
        pl = F.cross_entropy(p_logits, pf.tensor(T))
    assert p_logits.dtype is pf.bfloat16 and t_logits.dtype == torch.bfloat16
    assert pl.dtype is pf.float32 and tl.dtype == torch.float32
    tl.backward()
    pl.backward()
    assert abs(pl.item() - tl.item()) < 2e-2
    for (name, tp), (_, pp) in zip(tm.named_parameters(), pm.named_parameters()):
        assert pp.grad.dtype is pf.float32, name
        np.testing.assert_allclose(pp.grad.numpy(), tp.grad.numpy(), atol=3e-2, rtol=3e-2)


def test_autocast_regions_nest_and_decorate() -> None:
    x, w = pf.tensor(X), pf.tensor(W)
    with pf.autocast("cpu"):
        assert pf.is_autocast_enabled() and pf.get_autocast_dtype("cpu") is pf.bfloat16
        assert (x @ w.T).dtype is pf.bfloat16
        with pf.autocast("cpu", enabled=False):
            assert (x @ w.T).dtype is pf.float32 and not pf.is_autocast_enabled()
        assert (x @ w.T).dtype is pf.bfloat16
    assert not pf.is_autocast_enabled() and (x @ w.T).dtype is pf.float32

    @pf.autocast("cpu", dtype=pf.float16)
    def f(a, b):
        return a @ b.T
    assert f(x, w).dtype is pf.float16
    with pytest.warns(UserWarning, match="Disabling"):
        region = pf.autocast("cuda")
    with region:
        assert (x @ w.T).dtype is pf.float32
    with pytest.warns(UserWarning, match="not supported"):
        pf.autocast("cpu", dtype=pf.float64)


def _scaler_run(lib, nn, optim, amp, steps: int, init_scale: float, growth_interval: int,
                clip: bool):
    lib.manual_seed(0)
    model = nn.Linear(6, 5)
    if lib is pf:
        ref = torch.nn.Linear(6, 5)
        torch.manual_seed(0)
        ref = torch.nn.Linear(6, 5)
        model.load_state_dict({k: pf.tensor(v.detach().numpy())
                               for k, v in ref.state_dict().items()})
    opt = optim.SGD(model.parameters(), lr=0.1)
    scaler = amp.GradScaler("cpu", init_scale=init_scale, growth_interval=growth_interval)
    scales, losses = [], []
    for i in range(steps):
        x = lib.tensor(X * (1 + i))
        loss = ((model(x) - lib.tensor(W[:4, :5])) ** 2).mean()
        opt.zero_grad()
        scaler.scale(loss).backward()
        if clip:
            scaler.unscale_(opt)
            (torch.nn.utils if lib is torch else pf.nn.utils).clip_grad_norm_(
                model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        losses.append(float(loss.item()))
    return scales, losses, {k: v.detach().numpy() for k, v in model.state_dict().items()}


@pytest.mark.parametrize("init_scale,growth_interval,clip", [
    (2.0 ** 16, 2, False),      # grows every two clean steps
    (3.0e38, 3, False),         # the scaled loss overflows: steps skipped, scale backs off
    (2.0 ** 10, 1, True),       # unscale_ before clipping, as torch's docs show
])
def test_grad_scaler_matches_torch_step_by_step(init_scale: float, growth_interval: int,
                                                clip: bool) -> None:
    got = _scaler_run(pf, pf.nn, pf.optim, pf.amp, 5, init_scale, growth_interval, clip)
    torch.manual_seed(0)
    want = _scaler_run(torch, torch.nn, torch.optim, torch.amp, 5, init_scale,
                       growth_interval, clip)
    assert got[0] == want[0]  # the scale after every step
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
    for k in want[2]:
        np.testing.assert_allclose(got[2][k], want[2][k], rtol=1e-5, atol=1e-6)


def test_grad_scaler_rules() -> None:
    model = pf.nn.Linear(2, 1)
    opt = pf.optim.SGD(model.parameters(), lr=0.1)
    scaler = pf.amp.GradScaler(init_scale=4.0)
    assert scaler.scale(pf.ones(())).item() == 4.0
    with pytest.raises(RuntimeError, match="No inf checks"):
        scaler.update()
    scaler.scale(model(pf.ones(1, 2)).sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    state = scaler.state_dict()
    other = pf.amp.GradScaler()
    other.load_state_dict(state)
    assert other.get_scale() == scaler.get_scale() == 4.0
    assert (scaler.is_enabled(), scaler.get_growth_factor(), scaler.get_backoff_factor(),
            scaler.get_growth_interval()) == (True, 2.0, 0.5, 2000)
    off = pf.amp.GradScaler(enabled=False)
    assert off.get_scale() == 1.0 and off.state_dict() == {}
    with pytest.raises(ValueError, match="growth factor"):
        pf.amp.GradScaler(growth_factor=1.0)
