"""Issue 14's namespace-scan additions to ``Tensor``, ``pf.nn``,
``pf.nn.init`` and ``pf.nn.utils`` against torch 2.13: values where they are
deterministic (fill_diagonal_, the 3-d modules loaded with the same state,
dirac_, gradient norms), distributions (sample moments over 20000 draws, the
range and dtype) for the in-place samplers, and torch's warnings."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

RNG = np.random.default_rng(0)
N = 20000


def _close(got: pf.Tensor, want: torch.Tensor, tol: float = 1e-5) -> None:
    assert list(got.shape) == list(want.shape)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=tol, atol=tol)


def test_in_place_samplers_follow_their_distributions(mode: str) -> None:
    pf.manual_seed(0)
    x = pf.zeros(N)
    assert x.exponential_(2.0) is x
    assert abs(float(x.mean()) - 0.5) < 0.02 and float(x.min()) >= 0
    x = pf.zeros(N).log_normal_(0.5, 0.25)
    assert abs(float(x.log().mean()) - 0.5) < 0.01 and abs(float(x.log().std()) - 0.25) < 0.01
    x = pf.zeros(N, dtype=pf.float64).cauchy_(1.0, 2.0)
    q = np.quantile(x.numpy(), [0.25, 0.5, 0.75])  # median 1, quartiles 1 -+ 2
    np.testing.assert_allclose(q, [-1.0, 1.0, 3.0], atol=0.15)
    x = pf.zeros(N, dtype=pf.int64).geometric_(0.25)
    assert x.dtype == pf.int64 and int(x.min()) >= 1 and abs(float(x.float().mean()) - 4) < 0.15
    x = pf.zeros(N).bernoulli_(0.3)
    assert set(np.unique(x.numpy())) <= {0.0, 1.0} and abs(float(x.mean()) - 0.3) < 0.02
    p = pf.tensor([0.0, 1.0])
    np.testing.assert_array_equal(pf.zeros(2).bernoulli_(p).numpy(), [0, 1])
    np.testing.assert_array_equal(p.bernoulli().numpy(), [0, 1])
    x = pf.zeros(N, dtype=pf.int64).random_(3, 7)
    assert set(np.unique(x.numpy())) == {3, 4, 5, 6}
    x = pf.zeros(N).random_(5)
    assert set(np.unique(x.numpy())) == {0.0, 1.0, 2.0, 3.0, 4.0}
    for bad in (lambda: pf.zeros(2).exponential_(0.0), lambda: pf.zeros(2).geometric_(1.5),
                lambda: pf.zeros(2).random_(4, 2)):
        with pytest.raises(RuntimeError):
            bad()


@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((5, 3), True), ((5, 3), False),
                                        ((3, 5), True), ((7, 2), True), ((2, 2, 2), False)])
def test_fill_diagonal_matches_torch(mode: str, shape: tuple[int, ...], wrap: bool) -> None:
    x = RNG.standard_normal(shape)
    got = pf.from_numpy(x.copy())
    want = torch.from_numpy(x.copy())
    assert got.fill_diagonal_(7.0, wrap) is got
    want.fill_diagonal_(7.0, wrap)
    _close(got, want)


def test_swap_in_place() -> None:
    x, t = pf.zeros(2, 3, 4), torch.zeros(2, 3, 4)
    assert x.swapaxes_(0, 2) is x and x.swapdims_(0, 1) is x
    t.swapaxes_(0, 2).swapdims_(0, 1)
    assert list(x.shape) == list(t.shape)


def _same_state(ours: pf.nn.Module, theirs: torch.nn.Module) -> None:
    ours.load_state_dict({k: pf.from_numpy(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})


def test_3d_modules_match_torch() -> None:
    x = RNG.standard_normal((2, 3, 4, 4, 4)).astype(np.float32)
    for ours, theirs in ((pf.nn.BatchNorm3d(3), torch.nn.BatchNorm3d(3)),
                         (pf.nn.InstanceNorm3d(3, affine=True),
                          torch.nn.InstanceNorm3d(3, affine=True))):
        with torch.no_grad():
            for p in theirs.parameters():
                p.copy_(torch.randn(p.shape))
        _same_state(ours, theirs)
        for train in (True, False):
            ours.train(train)
            theirs.train(train)
            _close(ours(pf.from_numpy(x)), theirs(torch.from_numpy(x)), 1e-4)
    for name, args in (("ZeroPad3d", (1,)), ("ConstantPad3d", ((1, 0, 2, 1, 0, 1), 3.5)),
                       ("ReflectionPad3d", (1,)), ("ReplicationPad3d", ((1, 2, 0, 1, 2, 0),)),
                       ("CircularPad3d", (1,))):
        _close(getattr(pf.nn, name)(*args)(pf.from_numpy(x)),
               getattr(torch.nn, name)(*args)(torch.from_numpy(x)))
    _close(pf.nn.Dropout3d(0.5).eval()(pf.from_numpy(x)),
           torch.nn.Dropout3d(0.5).eval()(torch.from_numpy(x)))
    y = pf.nn.Dropout3d(0.5)(pf.ones(2, 8, 3, 3, 3)).numpy()
    per_channel = y.reshape(2, 8, -1)
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert (per_channel.min(-1) == per_channel.max(-1)).all()  # whole channels dropped
    img = RNG.standard_normal((2, 3, 5, 5)).astype(np.float32)
    _close(pf.nn.Softmax2d()(pf.from_numpy(img)), torch.nn.Softmax2d()(torch.from_numpy(img)))
    _close(pf.nn.AdaptiveAvgPool1d(3)(pf.from_numpy(img[:, :, 0])),
           torch.nn.AdaptiveAvgPool1d(3)(torch.from_numpy(img[:, :, 0])))


@pytest.mark.parametrize("shape,groups", [((4, 4, 3), 1), ((6, 3, 3, 3), 2),
                                          ((2, 4, 3, 3, 3), 1)])
def test_dirac_matches_torch(shape: tuple[int, ...], groups: int) -> None:
    ours, theirs = pf.zeros(*shape), torch.zeros(*shape)
    pf.nn.init.dirac_(ours, groups)
    torch.nn.init.dirac_(theirs, groups)
    _close(ours, theirs)


def test_deprecated_init_spellings_warn_as_torch() -> None:
    init = pf.nn.init
    for fn in (init.uniform, init.normal, init.constant, init.xavier_uniform, init.xavier_normal,
               init.kaiming_uniform, init.kaiming_normal, init.orthogonal):
        args = (0.5,) if fn is init.constant else ()
        with pytest.warns(FutureWarning, match=f"{fn.__name__}_"):
            fn(pf.zeros(3, 4), *args)


def test_gradient_norm_helpers_match_torch() -> None:
    ws = [RNG.standard_normal(s) for s in [(3, 4), (5,)]]
    ours = [pf.from_numpy(w).requires_grad_() for w in ws]
    theirs = [torch.from_numpy(w).requires_grad_() for w in ws]
    sum((w * w * 3).sum() for w in ours).backward()
    sum((w * w * 3).sum() for w in theirs).backward()
    for norm_type in (2.0, 1.0, float("inf")):
        _close(pf.nn.utils.get_total_norm([w.grad for w in ours], norm_type),
               torch.nn.utils.get_total_norm([w.grad for w in theirs], norm_type), 1e-10)
    total = pf.nn.utils.get_total_norm([w.grad for w in ours])
    pf.nn.utils.clip_grads_with_norm_(ours, 1.0, total)
    torch.nn.utils.clip_grads_with_norm_(theirs, 1.0,
                                         torch.nn.utils.get_total_norm([w.grad for w in theirs]))
    for a, b in zip(ours, theirs):
        _close(a.grad, b.grad, 1e-10)
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        got = pf.nn.utils.clip_grad_norm(ours, 0.5)
    with pytest.warns(FutureWarning):
        want = torch.nn.utils.clip_grad_norm(theirs, 0.5)
    _close(got, want, 1e-8)
