"""pyflame_mlir/nn/lazy.py and session 11's functional names against torch:
lazy modules (materialized by a first forward or by torch's state dict,
becoming their ``cls_to_become``, optimizers made before keeping the
parameters), ``ConvTranspose3d``/``conv_transpose3d`` (values, float64
gradients vs torch and central differences), alpha dropout, the
``*_with_indices`` pools, ``LPPool3d``, ``embedding_bag(max_norm=)``,
``SyncBatchNorm``, ``DataParallel``, ``nn.Buffer`` and the new losses."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from _grad_oracles import Example, close, fd_gradient, torch_vjp

import pyflame_mlir as pf

F = pf.nn.functional


def _load_from(ours: pf.nn.Module, theirs: torch.nn.Module) -> None:
    ours.load_state_dict({k: pf.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})


def _grads(ex: Example, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    xs = [pf.from_numpy(a) for a in ex.arrays]
    out = ex.pf_fn(*xs)
    ct = rng.standard_normal(out.shape)
    grads = pf.grad(lambda *a: (ex.pf_fn(*a) * pf.from_numpy(ct)).sum(),
                    argnums=tuple(range(len(xs))))(*xs)
    _, t_grads = torch_vjp(ex, [ct])
    for i, (g, tg, fd) in enumerate(zip(grads, t_grads, fd_gradient(ex, [ct]))):
        close(g.numpy(), tg, ex.rtol, ex.atol, f"{ex.label}: grad {i} vs torch")
        close(g.numpy(), fd, ex.fd_rtol, ex.fd_atol, f"{ex.label}: grad {i} vs differences")


# ---- lazy modules ----

def test_lazy_linear_first_forward():
    m = pf.nn.LazyLinear(3)
    assert isinstance(m.weight, pf.nn.parameter.UninitializedParameter)
    with pytest.raises(ValueError, match="uninitialized parameter"):
        _ = m.weight.shape
    opt = pf.optim.SGD(m.parameters(), lr=0.1)  # made before: keeps the same objects
    w = m.weight
    x = pf.randn(4, 5)
    y = m(x)
    assert type(m) is pf.nn.Linear and m.in_features == 5
    assert m.weight is w and w.shape == (3, 5) and m.bias.shape == (3,)
    assert type(w) is pf.nn.Parameter
    bound = 1 / np.sqrt(5)  # torch's init: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert np.all(np.abs(w.numpy()) <= bound) and np.std(w.numpy()) > 0
    before = w.numpy().copy()
    y.sum().backward()
    opt.step()
    np.testing.assert_allclose(w.numpy(), before - 0.1 * np.tile(x.numpy().sum(0), (3, 1)),
                               rtol=1e-5, atol=1e-6)
    assert "in_features=5" in repr(m)


def test_lazy_linear_loads_torch_state_dict():
    theirs = torch.nn.LazyLinear(4).double()
    x = np.random.default_rng(0).standard_normal((2, 6))
    theirs(torch.tensor(x))
    ours = pf.nn.LazyLinear(4, dtype=pf.float64)
    sd = ours.state_dict()
    assert list(sd) == ["weight", "bias"]
    _load_from(ours, theirs)
    assert type(ours) is pf.nn.LazyLinear and ours.weight.shape == (4, 6)
    np.testing.assert_allclose(ours(pf.tensor(x)).numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    assert type(ours) is pf.nn.Linear and ours.in_features == 6
    back = {k: v.numpy() for k, v in ours.state_dict().items()}
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(back[k], v.numpy())


@pytest.mark.parametrize("name, kw, shape", [
    ("LazyConv1d", {"groups": 2}, (3, 4, 9)),
    ("LazyConv1d", {}, (4, 9)),  # unbatched
    ("LazyConv2d", {"stride": 2, "padding": 1}, (2, 4, 6, 5)),
    ("LazyConv3d", {"bias": False}, (2, 2, 4, 4, 4)),
    ("LazyConvTranspose1d", {"stride": 2}, (2, 4, 5)),
    ("LazyConvTranspose2d", {"groups": 2, "output_padding": 1, "stride": 2}, (2, 4, 3, 3)),
    ("LazyConvTranspose3d", {"padding": 1}, (1, 2, 3, 3, 3)),
])
def test_lazy_conv(name, kw, shape):
    x = np.random.default_rng(1).standard_normal(shape)
    theirs = getattr(torch.nn, name)(6, 3, **kw).double()
    want = theirs(torch.tensor(x))
    ours = getattr(pf.nn, name)(6, 3, **kw, dtype=pf.float64)
    _load_from(ours, theirs)
    got = ours(pf.tensor(x))
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert type(ours).__name__ == type(theirs).__name__  # both became the eager class
    fresh = getattr(pf.nn, name)(6, 3, **kw, dtype=pf.float64)
    fresh(pf.tensor(x))
    assert fresh.weight.shape == tuple(theirs.weight.shape)


@pytest.mark.parametrize("name, kw, shape", [
    ("LazyBatchNorm1d", {}, (5, 3)), ("LazyBatchNorm2d", {}, (4, 3, 2, 2)),
    ("LazyBatchNorm3d", {"affine": False}, (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", {"affine": False}, (2, 3, 7)),
    ("LazyInstanceNorm2d", {}, (2, 3, 4, 4)),
])
def test_lazy_norms(name, kw, shape):
    x = np.random.default_rng(2).standard_normal(shape)
    theirs = getattr(torch.nn, name)(**kw).double()
    ours = getattr(pf.nn, name)(**kw, dtype=pf.float64)
    for _ in range(2):
        np.testing.assert_allclose(ours(pf.tensor(x)).numpy(),
                                   theirs(torch.tensor(x)).detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    assert type(ours).__name__ == type(theirs).__name__
    mine = ours.state_dict()
    assert list(mine) == list(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(mine[k].numpy(), v.numpy(), rtol=1e-10)


# ---- ConvTranspose3d ----

def test_conv_transpose3d_module_and_gradients():
    theirs = torch.nn.ConvTranspose3d(4, 6, (2, 3, 2), stride=(2, 1, 2), padding=1,
                                      output_padding=(1, 0, 1), groups=2).double()
    ours = pf.nn.ConvTranspose3d(4, 6, (2, 3, 2), stride=(2, 1, 2), padding=1,
                                 output_padding=(1, 0, 1), groups=2, dtype=pf.float64)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _load_from(ours, theirs)
    x = np.random.default_rng(3).standard_normal((2, 4, 3, 4, 3))
    np.testing.assert_allclose(ours(pf.tensor(x)).numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    rng = np.random.default_rng(4)
    a, w, b = (rng.standard_normal((1, 2, 2, 3, 2)), rng.standard_normal((2, 2, 2, 2, 2)),
               rng.standard_normal(4))
    kw = {"stride": 2, "padding": (0, 1, 0), "groups": 2, "dilation": (1, 1, 2)}
    _grads(Example([a, w, b], lambda x, w, b: F.conv_transpose3d(x, w, b, **kw),
                   lambda x, w, b: TF.conv_transpose3d(x, w, b, **kw), "conv_transpose3d"))
    assert pf.conv_transpose3d is not None


# ---- dropout, pools ----

@pytest.mark.parametrize("fn", ["alpha_dropout", "feature_alpha_dropout"])
def test_alpha_dropout(fn):
    pf.manual_seed(0)
    p = 0.2
    x = pf.randn(*((400, 50) if fn == "alpha_dropout" else (400, 50, 3)), dtype=pf.float64)
    y = getattr(F, fn)(x, p, training=True).numpy()
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * p + 1) * (1 - p))
    b = 1.7580993408473766 * a * p
    kept = np.isclose(y, a * x.numpy() + b, rtol=1e-12)
    dropped = np.isclose(y, -1.7580993408473766 * a + b, rtol=1e-12)
    assert np.all(kept | dropped)
    assert abs(dropped.mean() - p) < 0.03
    if fn == "feature_alpha_dropout":  # whole channels
        assert np.all(dropped.all(-1) | (~dropped).all(-1))
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05  # SELU's fixed point kept
    assert getattr(F, fn)(x, p, training=False) is x
    np.testing.assert_array_equal(getattr(F, fn)(x, 1.0, training=True).numpy(), 0)
    mod = (pf.nn.AlphaDropout if fn == "alpha_dropout" else pf.nn.FeatureAlphaDropout)(0.5)
    mod.eval()
    assert mod(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        getattr(F, fn)(x, 1.5, training=True)


@pytest.mark.parametrize("fn, args, shape", [
    (F.max_pool1d_with_indices, (3, 2), (2, 3, 9)),
    (F.max_pool2d_with_indices, (2,), (2, 3, 5, 6)),
    (F.max_pool3d_with_indices, ((2, 1, 2),), (1, 2, 4, 3, 4)),
    (F.adaptive_max_pool1d_with_indices, (4,), (2, 3, 9)),
    (F.adaptive_max_pool2d_with_indices, ((2, 3),), (2, 3, 5, 6)),
    (F.adaptive_max_pool3d_with_indices, (2,), (1, 2, 4, 3, 4)),
], ids=lambda v: getattr(v, "__name__", None))
def test_pools_with_indices(fn, args, shape):
    x = np.random.default_rng(5).standard_normal(shape)
    got = fn(pf.tensor(x), *args)
    want = getattr(TF, fn.__name__)(torch.tensor(x), *args)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_lp_pool3d_module():
    x = np.abs(np.random.default_rng(6).standard_normal((2, 3, 4, 5, 4))) + 0.1
    for args in ((2, 2), (3.0, (2, 1, 2), (1, 1, 2))):
        np.testing.assert_allclose(pf.nn.LPPool3d(*args)(pf.tensor(x)).numpy(),
                                   torch.nn.LPPool3d(*args)(torch.tensor(x)).numpy(),
                                   rtol=1e-10)
    _grads(Example([x], lambda a: F.lp_pool3d(a, 2, 2), lambda a: TF.lp_pool3d(a, 2, 2),
                   "lp_pool3d"))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_max_norm(mode):
    rng = np.random.default_rng(7)
    w = rng.standard_normal((10, 4)) * 2
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 9])
    off = np.array([0, 3, 5])
    wt, wp = torch.tensor(w), pf.tensor(w)
    want = TF.embedding_bag(torch.tensor(idx), wt, torch.tensor(off), max_norm=1.5,
                            mode=mode)
    got = F.embedding_bag(pf.tensor(idx), wp, pf.tensor(off), max_norm=1.5, mode=mode)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    np.testing.assert_allclose(wp.numpy(), wt.numpy(), rtol=1e-12)  # renormalized in place
    bag_t = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w), max_norm=0.5, mode=mode,
                                                  freeze=False)
    bag_p = pf.nn.EmbeddingBag.from_pretrained(pf.tensor(w), max_norm=0.5, mode=mode,
                                               freeze=False)
    i2 = rng.integers(0, 10, (3, 4))
    np.testing.assert_allclose(bag_p(pf.tensor(i2)).numpy(),
                               bag_t(torch.tensor(i2)).detach().numpy(), rtol=1e-12)


# ---- wrappers, Buffer, losses ----

def test_sync_batchnorm_and_data_parallel():
    theirs = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3)).double()
    ours = pf.nn.Sequential(pf.nn.Conv2d(2, 3, 1, dtype=pf.float64),
                            pf.nn.BatchNorm2d(3, dtype=pf.float64))
    _load_from(ours, theirs)
    synced = pf.nn.SyncBatchNorm.convert_sync_batchnorm(ours)
    assert isinstance(synced[1], pf.nn.SyncBatchNorm)
    x = np.random.default_rng(8).standard_normal((4, 2, 3, 3))
    np.testing.assert_allclose(synced(pf.tensor(x)).numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(synced[1].running_var.numpy(), theirs[1].running_var.numpy(),
                               rtol=1e-12)
    dp_t, dp_p = torch.nn.DataParallel(theirs), pf.nn.DataParallel(ours)
    assert list(dp_p.state_dict()) == list(dp_t.state_dict())
    dp_t.eval()
    dp_p.eval()
    np.testing.assert_allclose(dp_p(pf.tensor(x)).numpy(),
                               dp_t(torch.tensor(x)).detach().numpy(), rtol=1e-10)


def test_buffer_and_base_classes():
    class M(pf.nn.Module):
        def __init__(self):
            super().__init__()
            self.kept = pf.nn.Buffer(pf.ones(2))
            self.scratch = pf.nn.Buffer(pf.zeros(3), persistent=False)

    m = M()
    assert [n for n, _ in m.named_buffers()] == ["kept", "scratch"]
    assert list(m.state_dict()) == ["kept"]
    assert isinstance(pf.nn.LSTM(3, 4), pf.nn.RNNBase)
    assert isinstance(pf.nn.GRUCell(3, 4), pf.nn.RNNCellBase)
    assert isinstance(pf.nn.NLLLoss2d(), pf.nn.NLLLoss)


def test_new_losses():
    rng = np.random.default_rng(9)
    a, p_, n = (rng.standard_normal((5, 4)) for _ in range(3))
    for kw in ({}, {"margin": 0.5, "swap": True}):
        want = torch.nn.TripletMarginWithDistanceLoss(
            distance_function=torch.nn.PairwiseDistance(), **kw)(
            *(torch.tensor(v) for v in (a, p_, n)))
        got = pf.nn.TripletMarginWithDistanceLoss(
            distance_function=pf.nn.PairwiseDistance(), **kw)(*(pf.tensor(v) for v in (a, p_, n)))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)
    x = rng.standard_normal((3, 5))
    y = np.array([[3, 0, -1, 1, 2], [1, 2, 4, -1, 0], [0, -1, 3, 3, 3]])
    for red in ("mean", "sum", "none"):
        np.testing.assert_allclose(
            pf.nn.MultiLabelMarginLoss(reduction=red)(pf.tensor(x), pf.tensor(y)).numpy(),
            torch.nn.MultiLabelMarginLoss(reduction=red)(torch.tensor(x),
                                                         torch.tensor(y)).numpy(), rtol=1e-10)


def test_init_sparse_and_deprecated_spellings():
    pf.manual_seed(0)
    w = pf.nn.init.sparse_(pf.empty(20, 6), sparsity=0.25, std=3.0)
    a = w.numpy()
    assert np.all((a == 0).sum(0) == 5)  # ceil(0.25 * 20) zeros in every column
    assert 2.0 < a[a != 0].std() < 4.0
    with pytest.raises(ValueError, match="2 dimensions"):
        pf.nn.init.sparse_(pf.empty(3), 0.1)
    for fn, args, shape in ((pf.nn.init.eye, (), (2, 3)), (pf.nn.init.dirac, (), (2, 2, 3)),
                            (pf.nn.init.sparse, (0.5,), (4, 2))):
        with pytest.warns(FutureWarning, match=f"nn.init.{fn.__name__}_"):
            fn(pf.empty(*shape), *args)
    np.testing.assert_array_equal(pf.nn.init.eye_(pf.empty(2, 3)).numpy(),
                                  torch.nn.init.eye_(torch.empty(2, 3)).numpy())


# ---- multi-head attention: torch's functional form, kdim/vdim, bias_kv, zero_attn ----

@pytest.mark.parametrize("kw", [{}, {"add_zero_attn": True}, {"bias_kv": True},
                                {"bias_kv": True, "add_zero_attn": True, "masks": True},
                                {"masks": True, "average_attn_weights": False},
                                {"separate": True, "masks": True}, {"unbatched": True}])
def test_multi_head_attention_forward(kw):
    rng = np.random.default_rng(10)
    e, h, lq, s, n = 8, 2, 3, 4, 2
    shape = (lambda length, d: (length, d)) if kw.get("unbatched") else \
        (lambda length, d: (length, n, d))
    arrays = {"q": rng.standard_normal(shape(lq, e)), "k": rng.standard_normal(shape(s, e)),
              "v": rng.standard_normal(shape(s, e)), "ipw": rng.standard_normal((3 * e, e)),
              "ipb": rng.standard_normal(3 * e), "ow": rng.standard_normal((e, e)),
              "ob": rng.standard_normal(e), "bk": rng.standard_normal((1, 1, e)),
              "bv": rng.standard_normal((1, 1, e))}
    am = rng.random((lq, s)) < 0.25
    kpm = rng.random((n, s)) < 0.25

    def call(lib, F_, t, q, k, v, ipw, ipb, ow, ob, bk, bv):
        bias = kw.get("bias_kv")
        sep = kw.get("separate")
        masks = kw.get("masks")
        return F_.multi_head_attention_forward(
            q, k, v, e, h, None if sep else ipw, ipb, bk if bias else None,
            bv if bias else None, kw.get("add_zero_attn", False), 0.0, ow, ob,
            key_padding_mask=t(kpm) if masks else None, attn_mask=t(am) if masks else None,
            use_separate_proj_weight=bool(sep), q_proj_weight=ipw[:e] if sep else None,
            k_proj_weight=ipw[e:2 * e] if sep else None,
            v_proj_weight=ipw[2 * e:] if sep else None,
            average_attn_weights=kw.get("average_attn_weights", True))

    names = ["q", "k", "v", "ipw", "ipb", "ow", "ob", "bk", "bv"]
    got = call(pf, F, pf.tensor, *(pf.tensor(arrays[k]) for k in names))
    want = call(torch, TF, torch.tensor, *(torch.tensor(arrays[k]) for k in names))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)
    diff = [arrays[k] for k in ("q", "k", "v", "ipw", "ow")]
    rest = {k: arrays[k] for k in ("ipb", "ob", "bk", "bv")}
    _grads(Example(diff, lambda q, k, v, ipw, ow: call(
        pf, F, pf.tensor, q, k, v, ipw, pf.tensor(rest["ipb"]), ow, pf.tensor(rest["ob"]),
        pf.tensor(rest["bk"]), pf.tensor(rest["bv"]))[0],
        lambda q, k, v, ipw, ow: call(
        torch, TF, torch.tensor, q, k, v, ipw, torch.tensor(rest["ipb"]), ow,
        torch.tensor(rest["ob"]), torch.tensor(rest["bk"]), torch.tensor(rest["bv"]))[0],
        f"mha {kw}"))


def test_adaptive_log_softmax_with_loss():
    torch.manual_seed(0)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10], div_value=2.0,
                                                 head_bias=True).double()
    ours = pf.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10], div_value=2.0, head_bias=True,
                                            dtype=pf.float64)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _load_from(ours, theirs)
    rng = np.random.default_rng(12)
    x = rng.standard_normal((7, 16))
    y = np.array([0, 3, 5, 9, 12, 19, 4])
    out_t, loss_t = theirs(torch.tensor(x), torch.tensor(y))
    out_p, loss_p = ours(pf.tensor(x), pf.tensor(y))
    np.testing.assert_allclose(out_p.numpy(), out_t.detach().numpy(), rtol=1e-12)
    assert loss_p.item() == pytest.approx(loss_t.item(), rel=1e-12)
    loss_t.backward()
    loss_p.backward()
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-13,
                                   err_msg=name)
    np.testing.assert_allclose(ours.log_prob(pf.tensor(x)).numpy(),
                               theirs.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(pf.tensor(x)).numpy(),
                                  theirs.predict(torch.tensor(x)).numpy())
    single_t = theirs(torch.tensor(x[0]), torch.tensor(y[0]))
    single_p = ours(pf.tensor(x[0]), pf.tensor(y[0]))
    assert single_p.output.shape == () and single_p.output.item() == pytest.approx(
        single_t.output.item(), rel=1e-12)
    with pytest.raises(RuntimeError, match="Target values should be in"):
        ours(pf.tensor(x[:1]), pf.tensor([20]))
    with pytest.raises(ValueError, match="cutoffs should be a sequence"):
        pf.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3])


@pytest.mark.parametrize("kw", [{}, {"bias": True, "label_smoothing": 0.1},
                                {"out_features": (3,), "bias": True},
                                {"ignore_index": 2, "reduction": "sum"},
                                {"reduction": "none"},
                                {"options": pf.nn.LinearCrossEntropyOptions(batch_chunk_size=2)}])
def test_linear_cross_entropy(kw):
    torch.manual_seed(0)
    theirs = torch.nn.LinearCrossEntropyLoss(5, 4, **{
        k: torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2) if k == "options" else v
        for k, v in kw.items()}).double()
    ours = pf.nn.LinearCrossEntropyLoss(5, 4, **kw, dtype=pf.float64)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _load_from(ours, theirs)
    rng = np.random.default_rng(13)
    x = rng.standard_normal((6, 5))
    y = rng.integers(0, 4, (6, *kw.get("out_features", ())))
    want = theirs(torch.tensor(x), torch.tensor(y))
    got = ours(pf.tensor(x), pf.tensor(y))
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-12)
    want.sum().backward()
    got.sum().backward()
    np.testing.assert_allclose(ours.linear.weight.grad.numpy(),
                               theirs.linear.weight.grad.numpy(), rtol=1e-10, atol=1e-14)
    w = rng.standard_normal((4, 5))
    probs = rng.dirichlet(np.ones(4), 6)
    np.testing.assert_allclose(
        F.linear_cross_entropy(pf.tensor(x), pf.tensor(w), pf.tensor(probs)).numpy(),
        TF.linear_cross_entropy(torch.tensor(x), torch.tensor(w), torch.tensor(probs)).numpy(),
        rtol=1e-12)
    with pytest.raises(RuntimeError, match="in_features"):
        F.linear_cross_entropy(pf.tensor(x), pf.tensor(w[:, :3]), pf.tensor(y))


def test_linear_cross_entropy_options_are_torchs():
    ours, theirs = pf.nn.LinearCrossEntropyOptions(), torch.nn.LinearCrossEntropyOptions()
    assert (ours.allow_retain_graph, ours.batch_chunk_size, ours.chunking_method,
            ours.acc_policy, ours.acc_dtype) == (
        theirs.allow_retain_graph, theirs.batch_chunk_size, theirs.chunking_method,
        theirs.acc_policy, theirs.acc_dtype)


@pytest.mark.parametrize("size, channels", [(3, 6), (4, 6), (5, 3), (1, 4), (7, 9)])
def test_cross_map_lrn2d(size, channels):
    x = np.random.default_rng(14).standard_normal((2, channels, 3, 2))
    theirs = torch.nn.CrossMapLRN2d(size, 0.05, 0.75, 1.5)
    ours = pf.nn.CrossMapLRN2d(size, 0.05, 0.75, 1.5)
    xt = torch.tensor(x, requires_grad=True)
    want = theirs(xt)
    got = ours(pf.tensor(x))
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-12)
    assert repr(ours) == repr(theirs)
    if size == 1:  # torch's own backward fails there (its padded buffer is too short)
        return
    ct = np.random.default_rng(15).standard_normal(x.shape)
    (want * torch.tensor(ct)).sum().backward()
    g = pf.grad(lambda t: (ours(t) * pf.tensor(ct)).sum())(pf.tensor(x))
    np.testing.assert_allclose(g.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("nsp, kernel, kw", [
    (2, (2, 3), {"output_size": (4, 5)}), (2, 2, {"output_ratio": (0.5, 0.5)}),
    (2, 3, {"output_size": 3}), (3, 2, {"output_size": (3, 4, 5)}),
    (3, (1, 2, 2), {"output_ratio": 0.6})])
def test_fractional_max_pool(dtype, nsp, kernel, kw):
    rng = np.random.default_rng(16)
    x = rng.standard_normal((2, 3, 9, 11) if nsp == 2 else (2, 2, 7, 8, 9)).astype(dtype)
    s = rng.random((2, x.shape[1], nsp)).astype(dtype)
    mod = "FractionalMaxPool2d" if nsp == 2 else "FractionalMaxPool3d"
    theirs = getattr(torch.nn, mod)(kernel, return_indices=True,
                                    _random_samples=torch.tensor(s), **kw)
    ours = (pf.nn.FractionalMaxPool2d if nsp == 2 else pf.nn.FractionalMaxPool3d)(
        kernel, return_indices=True, _random_samples=pf.tensor(s), **kw)
    xt = torch.tensor(x, requires_grad=True)
    (vt, it), (vp, ip) = theirs(xt), ours(pf.tensor(x))
    np.testing.assert_array_equal(vp.numpy(), vt.detach().numpy())
    np.testing.assert_array_equal(ip.numpy(), it.numpy())
    if dtype == np.float64:
        ct = rng.standard_normal(vt.shape)
        (vt * torch.tensor(ct)).sum().backward()
        g = pf.grad(lambda t: (ours(t)[0] * pf.tensor(ct)).sum())(pf.tensor(x))
        np.testing.assert_allclose(g.numpy(), xt.grad.numpy(), rtol=1e-12)
    pf.manual_seed(0)  # drawn samples: a valid pooling, windows inside the input
    free = F.fractional_max_pool2d(pf.tensor(x[:, :, :, :9]) if nsp == 2 else
                                   pf.tensor(x[:, :, 0]), 2, output_size=3,
                                   return_indices=True)
    assert free[0].shape[-2:] == (3, 3) and free[1].numpy().max() < 81
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        pf.nn.FractionalMaxPool2d(2, output_ratio=1.5)


def test_fractional_max_pool_with_indices_spellings():
    x = np.random.default_rng(17).standard_normal((1, 2, 6, 6, 6))
    s = np.full((1, 2, 3), 0.4)
    for fn, tfn, inp, samples in (
            (F.fractional_max_pool2d_with_indices, TF.fractional_max_pool2d_with_indices,
             x[:, :, 0], s[..., :2]),
            (F.fractional_max_pool3d_with_indices, TF.fractional_max_pool3d_with_indices,
             x, s)):
        got = fn(pf.tensor(inp), 2, output_size=3, _random_samples=pf.tensor(samples))
        want = tfn(torch.tensor(inp), 2, output_size=3,
                   _random_samples=torch.tensor(samples))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())


@pytest.mark.parametrize("kw", [{"proj_size": 3},
                                {"proj_size": 2, "num_layers": 2, "bidirectional": True,
                                 "batch_first": True}])
def test_lstm_proj_size(kw):
    torch.manual_seed(0)
    theirs = torch.nn.LSTM(4, 5, **kw).double()
    ours = pf.nn.LSTM(4, 5, **kw, dtype=pf.float64)
    assert list(ours.state_dict()) == list(theirs.state_dict()) and repr(ours) == repr(theirs)
    _load_from(ours, theirs)
    rng = np.random.default_rng(18)
    x = rng.standard_normal((3, 6, 4))
    dirs = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1)
    h0 = rng.standard_normal((layers * dirs, 6 if not kw.get("batch_first") else 3,
                              kw["proj_size"]))
    c0 = rng.standard_normal((layers * dirs, h0.shape[1], 5))
    xt = torch.tensor(x, requires_grad=True)
    out_t, (h_t, c_t) = theirs(xt, (torch.tensor(h0), torch.tensor(c0)))
    out_p, (h_p, c_p) = ours(pf.tensor(x), (pf.tensor(h0), pf.tensor(c0)))
    for g, w in ((out_p, out_t), (h_p, h_t), (c_p, c_t)):
        np.testing.assert_allclose(g.numpy(), w.detach().numpy(), rtol=1e-10, atol=1e-12)
    out_t.sum().backward()
    out_p.sum().backward()
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-12,
                                   err_msg=name)
    with pytest.raises(ValueError, match="smaller than hidden_size"):
        pf.nn.LSTM(4, 5, proj_size=5)
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        ours(pf.tensor(x), (pf.tensor(c0), pf.tensor(c0)))


def test_lazy_modules_cast_copy_and_pickle_before_init():
    import copy
    import pickle

    m = pf.nn.Sequential(pf.nn.LazyLinear(3), pf.nn.ReLU(), pf.nn.LazyBatchNorm1d())
    m.double()  # torch's lazy parameters take the dtype they will materialize in
    clone = copy.deepcopy(m)
    again = pickle.loads(pickle.dumps(m))
    for mod in (m, clone, again):
        assert type(mod[0]) is pf.nn.LazyLinear
        y = mod(pf.randn(4, 5, dtype=pf.float64))
        assert y.dtype == pf.float64 and type(mod[0]) is pf.nn.Linear
        assert mod[0].weight.dtype == pf.float64 and mod[2].running_var.dtype == pf.float64
    t = torch.nn.LazyLinear(3).double()
    t(torch.randn(4, 5, dtype=torch.float64))
    assert t.weight.dtype == torch.float64
    with pytest.raises(ValueError, match="uninitialized parameter"):
        sum(p.numel() for p in pf.nn.LazyLinear(2).parameters())
