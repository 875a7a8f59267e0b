"""Session 16's torch hunt (round 7): whole programs users paste, compared with
torch 2.13; each test here failed before its fix."""
import numpy as np
import pytest
import torch

import pyflame_mlir as pf


def _desc(x):
    """A structural description: container types, tensor shapes/dtypes/values."""
    if isinstance(x, list | tuple):
        return (type(x).__name__, [_desc(v) for v in x])
    if isinstance(x, dict):
        return {k: _desc(v) for k, v in x.items()}
    if isinstance(x, torch.Tensor | pf.Tensor):
        return ("T", tuple(x.shape), str(x.dtype).split(".")[-1], np.asarray(x.numpy()).tolist())
    return (type(x).__name__, x)


def test_default_collate_types_as_torch():
    # Python floats collate to float64 (float32 before: a silent dtype change),
    # a batch of tuples to a list, strings left as zip gives them (a tuple)
    cases = [[1.5, 2.5], [(1, "a"), (2, "b")], [(np.float32(1.0), 2.0, True)] * 3,
             [{"w": 0.5, "n": "x", "m": [1, 2]}, {"w": 1.0, "n": "y", "m": [3, 4]}]]
    for batch in cases:
        assert _desc(pf.utils.data.default_collate(batch)) == \
            _desc(torch.utils.data.default_collate(batch)), batch


def test_dataloader_batches_as_torch():
    class DS:
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return np.arange(2, dtype=np.float32) + i, i, float(i) / 2

    ds = DS()
    for kw in ({"batch_size": 2}, {"batch_size": None}):
        t = [_desc(b) for b in torch.utils.data.DataLoader(ds, **kw)]
        p = [_desc(b) for b in pf.utils.data.DataLoader(ds, **kw)]
        assert p == t, kw
    # TensorDataset batches are lists in torch (default_collate of tuples)
    x = np.arange(6, dtype=np.float32)
    t = [_desc(b) for b in torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.tensor(x), torch.arange(6)), batch_size=4)]
    p = [_desc(b) for b in pf.utils.data.DataLoader(
        pf.utils.data.TensorDataset(pf.tensor(x), pf.arange(6)), batch_size=4)]
    assert p == t


def test_save_load_keeps_parameters_requires_grad_and_size(tmp_path):
    # torch.save/load keeps a Parameter's class and requires_grad, a tensor's
    # requires_grad and a torch.Size; pf.load gave plain tensors and a tuple
    for L in (torch, pf):
        p = L.nn.Parameter(L.ones(2))
        frozen = L.nn.Parameter(L.ones(1), requires_grad=False)
        obj = {"p": p, "again": p, "frozen": frozen, "t": L.ones(3, requires_grad=True),
               "plain": L.ones(1), "size": L.ones(2, 3).shape}
        f = tmp_path / f"{L.__name__}.pt"
        L.save(obj, f)
        r = L.load(f)
        assert isinstance(r["p"], L.nn.Parameter) and r["p"].requires_grad
        assert r["again"] is r["p"]
        assert isinstance(r["frozen"], L.nn.Parameter) and not r["frozen"].requires_grad
        assert r["t"].requires_grad and r["t"].is_leaf and not r["plain"].requires_grad
        assert type(r["size"]).__name__ == "Size" and r["size"] == (2, 3)
    # a torch file's torch.Size loads as pf.Size
    f = tmp_path / "torch_size.pt"
    torch.save({"s": torch.Size([4, 5])}, f)
    assert isinstance(pf.load(f)["s"], pf.Size)


def test_random_sampler_with_huge_num_samples_is_drawn_lazily():
    # minGPT's trainer: RandomSampler(replacement=True, num_samples=int(1e10)) feeding a
    # DataLoader; pf drew all 1e10 indices up front (a MemoryError) before the first batch
    ds = pf.utils.data.TensorDataset(pf.arange(10.0), pf.arange(10))
    sampler = pf.utils.data.RandomSampler(ds, replacement=True, num_samples=int(1e10))
    loader = pf.utils.data.DataLoader(ds, sampler=sampler, shuffle=False, pin_memory=True,
                                      batch_size=4, num_workers=0)
    assert len(loader) == 2_500_000_000
    it = iter(loader)
    for _ in range(3):
        x, y = next(it)
        assert x.shape == (4,) and np.array_equal(x.numpy(), y.numpy().astype(np.float32))
        assert ((0 <= y.numpy()) & (y.numpy() < 10)).all()
    # without replacement: whole permutations, the last one cut (as torch's)
    idx = list(pf.utils.data.RandomSampler(range(4), num_samples=10))
    assert len(idx) == 10 and sorted(idx[:4]) == sorted(idx[4:8]) == [0, 1, 2, 3]
    assert len(set(idx[8:])) == 2


def test_cross_entropy_probability_target_refuses_ignore_index():
    # torch raises; pf computed the loss, ignoring ignore_index without a word
    import pytest
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    p = np.full((3, 4), 0.25, np.float32)
    with pytest.raises(RuntimeError, match="ignore_index is not supported"):
        torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(p), ignore_index=1)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point"):
        pf.nn.functional.cross_entropy(pf.tensor(x), pf.tensor(p), ignore_index=1)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point"):
        pf.nn.CrossEntropyLoss(ignore_index=0)(pf.tensor(x), pf.tensor(p))
    # the default ignore_index still takes probabilities, as torch's
    t = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(p), label_smoothing=0.1)
    q = pf.nn.functional.cross_entropy(pf.tensor(x), pf.tensor(p), label_smoothing=0.1)
    np.testing.assert_allclose(q.numpy(), t.numpy(), rtol=1e-6)


def test_inference_mode_false_enables_grad_as_torch():
    # torch's InferenceMode(false) sets grad mode on: inside no_grad it re-enables
    # gradients; pf left no_grad in force (a tensor that should require grad did not)
    for L in (torch, pf):
        x = L.ones(2, requires_grad=True)
        with L.no_grad():
            with L.inference_mode(False):
                assert L.is_grad_enabled() and not L.is_inference_mode_enabled()
                assert (x * 2).requires_grad
            assert not L.is_grad_enabled()
        with L.inference_mode():
            with L.inference_mode(mode=False):
                y = x * 2
                assert y.requires_grad and not y.is_inference()
            assert not L.is_grad_enabled() and not (x * 2).requires_grad

        @L.inference_mode(False)
        def f(a):
            return a * 2
        with L.no_grad():
            assert f(x).requires_grad
        assert L.is_grad_enabled()


def test_nadam_asgd_scalar_state_is_0d_float32_as_torch():
    # torch keeps NAdam's mu_product and ASGD's eta and mu as 0-d float32 tensors
    # (mu_product multiplied in float32); pf kept Python floats (float64 arithmetic)
    x = np.random.default_rng(0).standard_normal((8, 4))
    for name, kw, keys in (("NAdam", {"lr": 0.01, "momentum_decay": 0.03}, ("mu_product",)),
                           ("ASGD", {"lr": 0.01, "t0": 2}, ("eta", "mu"))):
        got = {}
        for L in (torch, pf):
            L.manual_seed(0)
            w = L.nn.Parameter(L.tensor(np.linspace(-1, 1, 8).reshape(2, 4)))  # float64
            opt = getattr(L.optim, name)([w], **kw)
            for _ in range(6):
                opt.zero_grad()
                ((L.tensor(x) @ w.t()) ** 2).mean().backward()
                opt.step()
            sd = opt.state_dict()["state"][0]
            for k in keys:
                v = sd[k]
                assert isinstance(v, L.Tensor) and tuple(v.shape) == (), (name, k)
                assert str(v.dtype).endswith("float32"), (name, k, v.dtype)
            got[L.__name__] = ([float(sd[k].item()) for k in keys], w.detach().numpy().copy())
        t, p = got["torch"], got["pyflame_mlir"]
        np.testing.assert_array_equal(np.float32(p[0]), np.float32(t[0]), err_msg=name)
        np.testing.assert_allclose(p[1], t[1], rtol=1e-12, err_msg=name)


def test_sequential_and_modulelist_pop_add_mul_as_torch():
    # Sequential.pop/+/+=/*/*= and ModuleList.pop were missing (AttributeError/TypeError)
    def shape(seq):
        return [type(m).__name__ for m in seq], list(seq.state_dict().keys())

    for L in (torch, pf):
        nn = L.nn
        s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
        assert type(s.pop(1)).__name__ == "ReLU"
        assert shape(s) == (["Linear", "Linear"], ["0.weight", "0.bias", "1.weight", "1.bias"])
        t = s + nn.Sequential(nn.Tanh())
        assert shape(t)[0] == ["Linear", "Linear", "Tanh"] and t[0] is s[0]
        t += nn.Sequential(nn.Sigmoid())
        assert [type(m).__name__ for m in t][-1] == "Sigmoid" and len(t) == 4
        d = 2 * nn.Sequential(nn.ReLU(), nn.Tanh())
        assert shape(d)[0] == ["ReLU", "Tanh", "ReLU", "Tanh"] and d[0] is d[2]
        d *= 2
        assert len(d) == 8 and d[0] is d[6]
        ml = nn.ModuleList([nn.ReLU(), nn.Tanh(), nn.Sigmoid()])
        assert type(ml.pop(0)).__name__ == "ReLU" and len(ml) == 2
        assert type(ml[0]).__name__ == "Tanh"


def _warmup_scheduler(L):
    """ildoonet's GradualWarmupScheduler as repositories paste it: a subclass
    that calls super().step(epoch) and hands over to another scheduler."""
    class GradualWarmupScheduler(L.optim.lr_scheduler._LRScheduler):
        def __init__(self, optimizer, multiplier, total_epoch, after_scheduler=None):
            self.multiplier, self.total_epoch = multiplier, total_epoch
            self.after_scheduler, self.finished = after_scheduler, False
            super().__init__(optimizer)

        def get_lr(self):
            if self.last_epoch > self.total_epoch:
                if self.after_scheduler:
                    if not self.finished:
                        self.after_scheduler.base_lrs = [b * self.multiplier for b in self.base_lrs]
                        self.finished = True
                    return self.after_scheduler.get_last_lr()
                return [b * self.multiplier for b in self.base_lrs]
            return [b * ((self.multiplier - 1.) * self.last_epoch / self.total_epoch + 1.)
                    for b in self.base_lrs]

        def step(self, epoch=None, metrics=None):
            if self.finished and self.after_scheduler:
                self.after_scheduler.step(None if epoch is None else epoch - self.total_epoch)
                self._last_lr = self.after_scheduler.get_last_lr()
            else:
                return super().step(epoch)
    return GradualWarmupScheduler


def test_scheduler_step_with_epoch_and_warmup_subclass_as_torch():
    # LRScheduler.step(epoch) (torch's deprecated form, with its closed forms) and
    # _LRScheduler were missing: a TypeError on the warm-up scheduler above
    import warnings
    got = {}
    for L in (torch, pf):
        S = L.optim.lr_scheduler
        w = L.nn.Parameter(L.ones(1))
        opt = L.optim.SGD([w], lr=0.1, momentum=0.9)
        sch = _warmup_scheduler(L)(opt, 4, 3, after_scheduler=S.StepLR(opt, 2, 0.5))
        opt2 = L.optim.SGD([L.nn.Parameter(L.ones(1))], lr=0.1)
        closed = [S.StepLR(opt2, 3, 0.5), S.MultiStepLR(opt2, [2, 5], 0.3),
                  S.ExponentialLR(opt2, 0.9), S.CosineAnnealingLR(opt2, 7, 0.01),
                  S.LinearLR(opt2, 0.2, 0.9, 4), S.ConstantLR(opt2, 0.5, 3),
                  S.PolynomialLR(opt2, 6, 2.0)]
        seq = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(10):
                opt.step()
                sch.step()
                seq.append(opt.param_groups[0]["lr"])
            for s in closed:
                for e in (1, 5, 3, 9, None):
                    s.step(e) if e is not None else s.step()
                    seq += [s.get_last_lr()[0], s.last_epoch]
        got[L.__name__] = seq
    np.testing.assert_allclose(got["pyflame_mlir"], got["torch"], rtol=1e-12)


def test_nn_modules_layout_as_torch():
    # code naming classes by torch's module layout failed (no pf.nn.modules):
    # freezing BatchNorm via nn.modules.batchnorm._BatchNorm, _pair in custom convs,
    # stripping DataParallel's "module." from checkpoint keys
    for L in (torch, pf):
        nn = L.nn
        m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.SyncBatchNorm(4))
        frozen = [k for k, x in m.named_modules() if isinstance(x, nn.modules.batchnorm._BatchNorm)]
        assert frozen == ["1", "3"]
        assert isinstance(m[0], nn.modules.conv._ConvNd)
        assert issubclass(nn.CrossEntropyLoss, nn.modules.loss._WeightedLoss)
        assert nn.modules.module.Module is nn.Module and nn.modules.Linear is nn.Linear
        u = nn.modules.utils
        assert u._pair(3) == (3, 3) and u._triple((1, 2, 3)) == (1, 2, 3)
        assert u._reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)
        sd = {"module.fc.weight": 1, "module.fc.bias": 2, "step": 3}
        u.consume_prefix_in_state_dict_if_present(sd, "module.")
        assert sd == {"step": 3, "fc.weight": 1, "fc.bias": 2} and list(sd)[0] == "step"
    # every class torch.nn.modules' submodules define that pf.nn has is reachable there
    import inspect
    for sub in ("activation", "batchnorm", "container", "conv", "dropout", "instancenorm",
                "linear", "loss", "normalization", "pooling", "rnn", "sparse", "transformer"):
        tmod = getattr(torch.nn.modules, sub)
        for name, cls in vars(tmod).items():
            if inspect.isclass(cls) and cls.__module__ == tmod.__name__ \
                    and not name.startswith("_") and hasattr(pf.nn, name):
                assert getattr(getattr(pf.nn.modules, sub), name) is getattr(pf.nn, name)


def _custom_amp_run(L, x, w):
    seen = []

    class MatmulF32(L.autograd.Function):
        @staticmethod
        @L.amp.custom_fwd(device_type="cpu", cast_inputs=L.float32)
        def forward(ctx, a, b):
            seen.append(("fwd", str(a.dtype), L.is_autocast_enabled("cpu")))
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        @L.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            seen.append(("bwd", L.is_autocast_enabled("cpu")))
            return g @ b.t(), a.t() @ g

    class Plain(L.autograd.Function):
        @staticmethod
        @L.amp.custom_fwd(device_type="cpu")
        def forward(ctx, a):
            seen.append(("plain", L.is_autocast_enabled("cpu")))
            return a * 2

        @staticmethod
        @L.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen.append(("plain-bwd", L.is_autocast_enabled("cpu")))
            return g * 2

    a = L.tensor(x, requires_grad=True)
    b = L.tensor(w, requires_grad=True)
    with L.autocast("cpu", dtype=L.bfloat16):
        y = MatmulF32.apply(a.to(L.bfloat16), b)
        z = Plain.apply(a)
    (y.float().sum() + z.sum()).backward()
    return (seen, str(y.dtype).split(".")[-1], y.detach().numpy(), a.grad.numpy(),
            b.grad.numpy())


def test_amp_custom_fwd_bwd_as_torch():
    # torch.amp.custom_fwd/custom_bwd were missing (autograd.Functions written for
    # mixed precision: a float32 forward inside a bfloat16 autocast region)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((4, 2)).astype(np.float32)
    t, p = _custom_amp_run(torch, x, w), _custom_amp_run(pf, x, w)
    assert [tuple(str(v).split(".")[-1] for v in s) for s in p[0]] == \
        [tuple(str(v).split(".")[-1] for v in s) for s in t[0]]
    assert ("fwd", "torch.float32", False) in t[0]
    assert p[1] == t[1] == "float32"
    for i in (2, 3, 4):
        np.testing.assert_allclose(p[i], t[i], rtol=1e-2, atol=1e-2)


def test_cuda_memory_queries_as_torch_without_cuda():
    # training scripts log torch.cuda.max_memory_allocated() unguarded: 0 in torch
    # without CUDA; pf had no such names (AttributeError)
    import pytest
    for n in ("memory_allocated", "max_memory_allocated", "memory_reserved",
              "max_memory_reserved"):
        assert getattr(pf.cuda, n)() == getattr(torch.cuda, n)() == 0
    assert pf.cuda.seed_all() is None and pf.cuda.seed() is None
    for n in ("current_device", "get_device_name", "get_device_capability"):
        with pytest.raises(AssertionError):
            getattr(torch.cuda, n)()
        with pytest.raises(RuntimeError, match="no CUDA device"):
            getattr(pf.cuda, n)()


def test_interpolate_antialias_as_torch():
    # F.interpolate(antialias=True) raised NotImplementedError (torchvision-style
    # resizes and CLIP/diffusion preprocessing use it)
    import itertools
    x = np.random.default_rng(0).standard_normal((2, 3, 17, 23)).astype(np.float32)
    w = np.random.default_rng(1).random((2, 3, 40, 46)).astype(np.float32)
    for mode, ac, kw in itertools.product(
            ("bilinear", "bicubic"), (False, True),
            ({"size": (5, 7)}, {"size": (40, 9)}, {"size": (8, 46)}, {"scale_factor": 0.3},
             {"scale_factor": (0.5, 0.25)}, {"scale_factor": 0.37, "recompute_scale_factor": True},
             {"size": (1, 1)})):
        res = []
        for L in (torch, pf):
            xi = L.tensor(x, requires_grad=True)
            y = L.nn.functional.interpolate(xi, mode=mode, align_corners=ac, antialias=True, **kw)
            wy = L.tensor(w[:, :, :y.shape[2], :y.shape[3]].copy())
            (g,) = L.autograd.grad((y * wy).sum(), xi)
            res.append((y.detach().numpy(), g.numpy()))
        (a, ga), (b, gb) = res
        assert a.shape == b.shape, (mode, ac, kw)
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5, err_msg=f"{mode} {ac} {kw}")
        np.testing.assert_allclose(gb, ga, rtol=1e-4, atol=1e-5, err_msg=f"{mode} {ac} {kw}")
    import pytest
    with pytest.raises(NotImplementedError, match="bilinear and bicubic"):
        pf.nn.functional.interpolate(pf.tensor(x), scale_factor=0.5, mode="nearest",
                                     antialias=True)


def test_embedding_from_pretrained_options_and_reprs_as_torch():
    # Embedding.from_pretrained took no max_norm/norm_type/scale_grad_by_freq/sparse
    # (TypeError); the Embedding/EmbeddingBag reprs left those options out
    w = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    got = {}
    for L in (torch, pf):
        e = L.nn.Embedding.from_pretrained(L.tensor(w), freeze=False, padding_idx=1,
                                           max_norm=1.0, norm_type=1.5,
                                           scale_grad_by_freq=True)
        y = e(L.tensor([1, 3, 3]))
        (y * L.tensor([1.0, 2.0, 3.0])).sum().backward()
        got[L.__name__] = (repr(e), repr(L.nn.EmbeddingBag(4, 2, max_norm=2.0, mode="sum")),
                           repr(L.nn.Embedding.from_pretrained(L.tensor(w), sparse=True)),
                           y.detach().numpy(), e.weight.detach().numpy(), e.weight.grad.numpy())
    t, p = got["torch"], got["pyflame_mlir"]
    assert p[:3] == t[:3]
    for a, b in zip(t[3:], p[3:]):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)


def _repr_modules(L):
    nn = L.nn
    return [nn.ConvTranspose2d(4, 4, 3, stride=2, output_padding=1),
            nn.ConvTranspose1d(4, 4, 3, stride=2, padding=1, output_padding=1, groups=2),
            nn.AvgPool1d(4, 2, 1), nn.MaxUnpool2d(2), nn.MaxUnpool1d(3, 2, 1),
            nn.MaxUnpool3d(2), nn.AdaptiveMaxPool1d(4), nn.ChannelShuffle(2),
            nn.LPPool2d(2, 3), nn.LocalResponseNorm(3, beta=2.0),
            nn.RNNCell(4, 3, nonlinearity="relu"), nn.RNNCell(4, 3, bias=False),
            nn.Hardshrink(0.3), nn.Softshrink(), nn.Hardsigmoid(inplace=True),
            nn.Hardswish(inplace=True), nn.TripletMarginWithDistanceLoss(margin=0.5),
            nn.NLLLoss2d(), nn.SyncBatchNorm(4, bias=False)]


def test_module_reprs_as_torch():
    # print(model) differed from torch's for these layers (options missing or extra,
    # ints where torch prints tuples, NLLLoss2d printed as NLLLoss, SyncBatchNorm(bias=)
    # refused)
    for t, p in zip(_repr_modules(torch), _repr_modules(pf)):
        assert repr(p) == repr(t)
    assert isinstance(pf.nn.NLLLoss2d(), pf.nn.NLLLoss)


def test_vmap_with_torchs_keywords_is_torch_vmap():
    """``torch.vmap(f, in_dims=..., out_dims=...)`` as users write it (pf.vmap is
    JAX's otherwise); mixing the two libraries' keywords raises."""
    x = np.random.default_rng(7).standard_normal((3, 4)).astype(np.float32)
    y = np.arange(4, dtype=np.float32)

    def f(a, b):
        return (a * b).sum()
    got = pf.vmap(f, in_dims=(0, None))(pf.tensor(x), pf.tensor(y))
    want = torch.vmap(f, in_dims=(0, None))(torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    got = pf.vmap(lambda a: a * 2, in_dims=1, out_dims=1)(pf.tensor(x))
    np.testing.assert_array_equal(got.numpy(), x * 2)
    with pytest.raises(RuntimeError, match="randomness"):
        pf.vmap(lambda a: a + pf.rand(()), in_dims=0)(pf.tensor(x))
    with pytest.raises(TypeError, match="one library"):
        pf.vmap(f, in_dims=0, axis_name="i")
