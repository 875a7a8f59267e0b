"""pf.distributions' second set of families (distributions/families2.py)
against torch.distributions 2.13 on the same float64 values: log_prob,
moments, entropy, cdf/icdf, expand, float64 gradients of log_prob + entropy;
samples by statistics (pyflame's generator draws differently from torch's);
MixtureSameFamily (a Gaussian mixture) and validation errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.distributions as TD

import pyflame_mlir as pf
import pyflame_mlir.distributions as D

RNG = np.random.default_rng(0)


def pos(*shape):
    return RNG.uniform(0.5, 2.0, shape)


def real(*shape):
    return RNG.normal(size=shape)


def unit(*shape):
    return RNG.uniform(0.05, 0.95, shape)


def counts(*shape):
    return RNG.integers(0, 6, shape).astype(np.float64)


def simplex(*shape):
    a = RNG.uniform(0.1, 1.0, shape)
    return a / a.sum(-1, keepdims=True)


# (name, positional parameter arrays, keyword parameter arrays, values)
CASES = [
    ("Poisson", [pos(3)], {}, counts(2, 3)),
    ("Geometric", [unit(3)], {}, counts(2, 3)),
    ("Geometric", [], {"logits": real(3)}, counts(2, 3)),
    ("Binomial", [np.full(3, 7.0), unit(3)], {}, counts(2, 3)),
    ("Binomial", [np.full(3, 7.0)], {"logits": real(3)}, counts(2, 3)),
    ("NegativeBinomial", [pos(3) * 3, unit(3)], {}, counts(2, 3)),
    ("NegativeBinomial", [pos(3) * 3], {"logits": real(3)}, counts(2, 3)),
    ("LogNormal", [real(3), pos(3)], {}, pos(2, 3)),
    ("HalfNormal", [pos(3)], {}, pos(2, 3)),
    ("Cauchy", [real(3), pos(3)], {}, real(2, 3)),
    ("HalfCauchy", [pos(3)], {}, pos(2, 3)),
    ("Gumbel", [real(3), pos(3)], {}, real(2, 3)),
    ("StudentT", [np.array([0.8, 1.5, 4.0]), real(3), pos(3)], {}, real(2, 3)),
    ("Chi2", [pos(3) * 2], {}, pos(2, 3)),
    ("Weibull", [pos(3), np.array([0.7, 1.5, 3.0])], {}, pos(2, 3)),
    ("Pareto", [pos(3) * 0.5, np.array([0.8, 1.5, 3.0])], {}, pos(2, 3) + 1.0),
    ("RelaxedBernoulli", [np.array(0.7), unit(3)], {}, unit(2, 3)),
    ("RelaxedBernoulli", [np.array(0.7)], {"logits": real(3)}, unit(2, 3)),
    ("RelaxedOneHotCategorical", [np.array(0.5), unit(2, 4)], {}, simplex(3, 2, 4)),
    ("RelaxedOneHotCategorical", [np.array(0.5)], {"logits": real(2, 4)}, simplex(3, 2, 4)),
]
IDS = [f"{c[0]}-{'-'.join(c[2]) or 'probs'}" for c in CASES]


def _make(lib, case, requires_grad=False):
    name, arrays, kw, _ = case
    ctor = getattr(TD if lib is torch else D, name)
    ps = [lib.tensor(a, dtype=lib.float64, requires_grad=requires_grad) for a in arrays]
    kws = {k: lib.tensor(v, dtype=lib.float64, requires_grad=requires_grad)
           for k, v in kw.items()}
    return ctor(*ps, **kws), ps + list(kws.values())


def close(actual, expected, rtol=1e-8, atol=1e-10):
    e = expected.detach().numpy()
    a = actual.numpy()
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True)


def _torch_has(fn):
    try:
        return fn()
    except NotImplementedError:
        return None


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_and_gradients_against_torch(case):
    dt, tps = _make(torch, case, True)
    dp, pps = _make(pf, case, True)
    value = case[3]
    assert dp.batch_shape == tuple(dt.batch_shape)
    assert dp.event_shape == tuple(dt.event_shape)
    lt, lp = dt.log_prob(torch.tensor(value)), dp.log_prob(pf.tensor(value))
    close(lp, lt)
    for stat in ("mean", "mode", "variance", "stddev"):
        want = _torch_has(lambda s=stat: getattr(dt, s))
        if want is not None:
            close(getattr(dp, stat), want)
    et = _torch_has(dt.entropy)
    if et is not None:
        close(dp.entropy(), et)
    want = _torch_has(lambda: dt.cdf(torch.tensor(value)))
    if want is not None and case[0] != "Chi2":  # Gamma's cdf is not implemented here
        close(dp.cdf(pf.tensor(value)), want)
    p = unit(*dt.batch_shape)
    want = _torch_has(lambda: dt.icdf(torch.tensor(p)))
    if want is not None:
        close(dp.icdf(pf.tensor(p)), want, rtol=1e-7)
    (lt.sum() + (et.sum() if et is not None else 0)).backward()
    (lp.sum() + (dp.entropy().sum() if et is not None else 0)).backward()
    for t, q in zip(tps, pps, strict=True):
        assert (t.grad is None) == (q.grad is None)
        if t.grad is not None:
            close(q.grad, t.grad, rtol=1e-7, atol=1e-9)
    shape = (2, *dt.batch_shape)
    v = value[:1] if case[0] == "RelaxedOneHotCategorical" else value
    close(dp.expand(shape).log_prob(pf.tensor(v)), dt.expand(shape).log_prob(torch.tensor(v)))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_samples_by_statistics(case):
    dt, _ = _make(torch, case)
    dp, _ = _make(pf, case)
    n = 4000
    pf.manual_seed(0)
    torch.manual_seed(0)
    s = dp.sample((n,))
    assert s.shape == (n, *dt.batch_shape, *dt.event_shape)
    assert not s.requires_grad
    if dp.has_rsample:
        assert dt.has_rsample
        r = _make(pf, case, True)[0].rsample((2,))
        assert r.requires_grad and r.shape == (2, *dt.batch_shape, *dt.event_shape)
    else:
        assert not dt.has_rsample or case[0] in ("StudentT", "Chi2")  # torch's gamma rsample
    got = s.numpy()
    ref = dt.sample((n,)).numpy()
    if case[0] in ("Cauchy", "HalfCauchy", "StudentT", "Pareto"):  # heavy tails: medians
        med_p, med_t = np.median(got, 0), np.median(ref, 0)
        spread = np.subtract(*np.percentile(ref, [75, 25], 0))
        assert np.all(np.abs(med_p - med_t) < 0.15 * spread + 1e-9), (med_p, med_t)
        return
    sd = ref.std(0)
    assert np.all(np.abs(got.mean(0) - ref.mean(0)) < 6 * sd / np.sqrt(n) + 1e-9), \
        (got.mean(0), ref.mean(0))
    if case[0] in ("Poisson", "Geometric", "Binomial", "NegativeBinomial"):
        assert np.all(got == np.round(got)) and got.min() >= 0


def _gmm(lib, m):
    lg = lib.tensor(np.array([0.1, -0.5, 0.7]), dtype=lib.float64, requires_grad=True)
    loc = lib.tensor(np.array([[-1., 0.], [0.5, 1.], [2., -1.]]), dtype=lib.float64,
                     requires_grad=True)
    sc = lib.tensor(np.array([[0.5, 1.], [1.2, 0.3], [0.8, 0.9]]), dtype=lib.float64,
                    requires_grad=True)
    g = m.MixtureSameFamily(m.Categorical(logits=lg), m.Independent(m.Normal(loc, sc), 1))
    g1 = m.MixtureSameFamily(m.Categorical(logits=lg), m.Normal(loc[:, 0], sc[:, 0]))
    x = lib.tensor(np.array([[0., 0.], [1., -1.], [2., 2.], [-1, 0.5]]), dtype=lib.float64)
    lp = g.log_prob(x)
    (lp.sum() + g1.log_prob(x[:, 0]).sum() + g1.cdf(x[:, 1]).sum()).backward()
    return [lp, g.mean, g.variance, g1.mean, g1.variance, g1.cdf(x[:, 0]), lg.grad, loc.grad,
            sc.grad, g.expand((2,)).log_prob(x[:2].unsqueeze(1))]


def test_gaussian_mixture_against_torch():
    for a, b in zip(_gmm(torch, TD), _gmm(pf, D), strict=True):
        close(b, a)
    pf.manual_seed(0)
    g = D.MixtureSameFamily(D.Categorical(probs=pf.tensor([0.2, 0.8])),
                            D.Normal(pf.tensor([-5., 5.]), pf.tensor([0.1, 0.1])))
    s = g.sample((4000,)).numpy()
    assert s.shape == (4000,)
    assert abs((s > 0).mean() - 0.8) < 0.03
    with pytest.raises(ValueError, match="does not equal"):
        D.MixtureSameFamily(D.Categorical(probs=pf.tensor([0.5, 0.5])),
                            D.Normal(pf.zeros(3), pf.ones(3)))


def test_validation_errors():
    with pytest.raises(ValueError, match="constraint"):
        D.Poisson(pf.tensor([1.0])).log_prob(pf.tensor([-1.0]))
    with pytest.raises(ValueError, match="constraint"):
        D.Poisson(pf.tensor([1.0])).log_prob(pf.tensor([0.5]))
    with pytest.raises(ValueError, match="constraint"):
        D.Binomial(3, pf.tensor([0.5])).log_prob(pf.tensor([4.0]))
    with pytest.raises(ValueError, match="constraint"):
        D.Binomial(pf.tensor([2.5]), pf.tensor([0.5]))
    with pytest.raises(ValueError, match="constraint"):
        D.HalfNormal(pf.tensor([1.0])).log_prob(pf.tensor([-0.5]))
    with pytest.raises(ValueError, match="constraint"):
        D.Pareto(pf.tensor([1.0]), pf.tensor([2.0])).log_prob(pf.tensor([0.5]))
    with pytest.raises(ValueError, match="either `probs` or `logits`"):
        D.Geometric()


def test_binomial_enumerate_support_and_entropy():
    dp = D.Binomial(4, pf.tensor([0.3, 0.6], dtype=pf.float64))
    dt = TD.Binomial(4, torch.tensor([0.3, 0.6], dtype=torch.float64))
    close(dp.enumerate_support(), dt.enumerate_support())
    close(dp.enumerate_support(expand=False), dt.enumerate_support(expand=False))
    close(dp.entropy(), dt.entropy())
    with pytest.raises(NotImplementedError, match="Inhomogeneous"):
        D.Binomial(pf.tensor([2.0, 3.0]), pf.tensor([0.5, 0.5])).enumerate_support()


def test_multinomial_against_torch():
    p0 = np.array([[0.2, 0.5, 0.3], [0.1, 0.0, 0.9]])
    v = np.array([[[1.0, 3.0, 1.0], [2.0, 0.0, 3.0]], [[0.0, 5.0, 0.0], [0.0, 0.0, 5.0]]])
    lg0 = real(2, 3)
    for kw in ({"probs": p0}, {"logits": lg0}):
        tps = {k: torch.tensor(a, requires_grad=True) for k, a in kw.items()}
        pps = {k: pf.tensor(a, requires_grad=True) for k, a in kw.items()}
        dt, dp = TD.Multinomial(5, **tps), D.Multinomial(5, **pps)
        assert dp.batch_shape == tuple(dt.batch_shape) and dp.event_shape == (3,)
        lt, lp = dt.log_prob(torch.tensor(v)), dp.log_prob(pf.tensor(v))
        close(lp, lt)
        close(dp.mean, dt.mean)
        close(dp.variance, dt.variance)
        # torch's lgamma(total_count + 1) is of an int64 tensor: a float32 value
        close(dp.entropy(), dt.entropy(), rtol=1e-7)
        close(dp.expand((4, 2)).log_prob(pf.tensor(v[0])),
              dt.expand((4, 2)).log_prob(torch.tensor(v[0])))
        (lt.sum() + dt.entropy().sum()).backward()
        (lp.sum() + dp.entropy().sum()).backward()
        for k in kw:
            close(pps[k].grad, tps[k].grad, rtol=1e-7, atol=1e-9)
    pf.manual_seed(0)
    s = D.Multinomial(10, pf.tensor(p0)).sample((3000,)).numpy()
    assert s.shape == (3000, 2, 3) and (s.sum(-1) == 10).all()
    assert np.all(np.abs(s.mean(0) - 10 * p0) < 0.15)
    with pytest.raises(ValueError, match="constraint"):
        D.Multinomial(5, pf.tensor(p0)).log_prob(pf.tensor([[1.0, 1.0, 4.5], [5.0, 0.0, 0.0]]))
