"""pyflame_mlir/nn/more_layers.py against torch's modules from one state dict,
in train and eval mode (values, float64 gradients, repr where cheap)."""
import numpy as np
import pytest
import torch

import pyflame_mlir as pf

CASES = [
    ("InstanceNorm1d", (3,), {}, (2, 3, 7)),
    ("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True}, (2, 3, 5, 4)),
    ("InstanceNorm2d", (3,), {}, (3, 5, 4)),
    ("Upsample", (), {"scale_factor": 2, "mode": "nearest"}, (2, 3, 4, 5)),
    ("Upsample", (), {"size": (7, 3), "mode": "bilinear", "align_corners": False},
     (1, 2, 4, 5)),
    ("UpsamplingBilinear2d", (), {"scale_factor": 2}, (1, 2, 3, 3)),
    ("PixelShuffle", (2,), {}, (2, 8, 3, 3)),
    ("PixelUnshuffle", (2,), {}, (2, 2, 4, 6)),
    ("ZeroPad2d", ((1, 0, 2, 1),), {}, (2, 3, 4, 4)),
    ("ConstantPad1d", (2, -1.5), {}, (2, 3, 4)),
    ("ReflectionPad1d", ((2, 1),), {}, (2, 3, 5)),
    ("ReflectionPad2d", (1,), {}, (2, 3, 4, 4)),
    ("ReplicationPad2d", ((0, 2, 1, 0),), {}, (2, 3, 4, 4)),
    ("CircularPad2d", (1,), {}, (1, 2, 3, 3)),
    ("Unfold", ((2, 3),), {"stride": (1, 2), "padding": 1}, (2, 3, 5, 6)),
    ("SELU", (), {}, (3, 4)), ("CELU", (0.7,), {}, (3, 4)), ("Hardsigmoid", (), {}, (3, 4)),
    ("Hardswish", (), {}, (3, 4)), ("LogSigmoid", (), {}, (3, 4)), ("Softsign", (), {}, (3, 4)),
    ("Tanhshrink", (), {}, (3, 4)), ("Softmin", (1,), {}, (3, 4)), ("GLU", (), {}, (3, 4)),
    ("Hardshrink", (0.3,), {}, (3, 4)), ("Softshrink", (), {}, (3, 4)),
    ("Threshold", (0.2, -1.0), {}, (3, 4)), ("PReLU", (3,), {}, (2, 3, 4)),
    ("RReLU", (), {}, (3, 4)),
]


@pytest.mark.parametrize("name, args, kw, shape", CASES, ids=[c[0] for c in CASES])
def test_module_against_torch(name, args, kw, shape):
    theirs = getattr(torch.nn, name)(*args, **kw).double()
    ours = getattr(pf.nn, name)(*args, **kw, **({"dtype": "float64"} if name in (
        "PReLU", "InstanceNorm2d", "InstanceNorm1d") else {}))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: pf.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal(shape)
    for mode in ("train", "eval"):
        getattr(theirs, mode)()
        getattr(ours, mode)()
        if name == "RReLU" and mode == "train":
            continue  # random slopes: see test_rrelu_training
        xt, xp = torch.tensor(x, requires_grad=True), pf.tensor(x, requires_grad=True)
        out_t, out_p = theirs(xt), ours(xp)
        tol = 1e-7  # torch's double kernels of celu, hardsigmoid... use float constants
        np.testing.assert_allclose(out_p.numpy(), out_t.detach().numpy(), rtol=tol,
                                   atol=1e-12)
        out_t.pow(2).sum().backward()
        out_p.pow(2).sum().backward()
        np.testing.assert_allclose(xp.grad.numpy(), xt.grad.numpy(), rtol=tol * 10,
                                   atol=1e-12)
    for (k, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, err_msg=k)  # running stats


def test_rrelu_training():
    x = -pf.ones(10000)
    y = pf.nn.RReLU(0.1, 0.3).train()(x).numpy()
    assert y.min() >= -0.3 and y.max() <= -0.1 and abs(y.mean() + 0.2) < 0.01


@pytest.mark.parametrize("name, args, n_in", [
    ("MarginRankingLoss", (0.1,), 3), ("HingeEmbeddingLoss", (), 2),
    ("SoftMarginLoss", (), 2), ("MultiLabelSoftMarginLoss", (), 2),
    ("CosineEmbeddingLoss", (0.2,), 3), ("TripletMarginLoss", (0.5,), 3),
    ("PoissonNLLLoss", (), 2), ("MultiMarginLoss", (), 2), ("CosineSimilarity", (), 2),
    ("PairwiseDistance", (), 2)])
def test_loss_modules(name, args, n_in):
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal((4, 5)) for _ in range(3))
    sign = rng.choice([-1.0, 1.0], (4, 5))
    inputs = {"MarginRankingLoss": [a, b, sign], "HingeEmbeddingLoss": [a, sign],
              "SoftMarginLoss": [a, sign], "MultiLabelSoftMarginLoss": [a, (sign > 0) * 1.0],
              "CosineEmbeddingLoss": [a, b, sign[:, 0]], "TripletMarginLoss": [a, b, c],
              "PoissonNLLLoss": [a, np.abs(np.round(b * 3))],
              "MultiMarginLoss": [a, rng.integers(0, 5, 4)], "CosineSimilarity": [a, b],
              "PairwiseDistance": [a, b]}[name]
    got = getattr(pf.nn, name)(*args)(*[pf.tensor(v) for v in inputs])
    want = getattr(torch.nn, name)(*args)(*[torch.tensor(v) for v in inputs])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_gaussian_nll_loss_module():
    rng = np.random.default_rng(2)
    a, b, v = rng.standard_normal((4, 5)), rng.standard_normal((4, 5)), rng.random((4, 1))
    got = pf.nn.GaussianNLLLoss(full=True)(pf.tensor(a), pf.tensor(b), pf.tensor(v))
    want = torch.nn.GaussianNLLLoss(full=True)(torch.tensor(a), torch.tensor(b),
                                               torch.tensor(v))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)
