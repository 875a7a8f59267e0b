"""pf.distributions against torch.distributions 2.13: densities, entropies,
cdf/icdf, moments and KL on the same values (float64), float64 gradients of
log_prob and of reparameterized samples, sampling by statistics (pyflame's
generator draws differently from torch's), validation errors, and a
REINFORCE and a VAE-style gradient against torch."""

from __future__ import annotations

import math

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


def simplex(*shape):
    a = RNG.uniform(0.1, 1.0, shape)
    return a / a.sum(-1, keepdims=True)


def tril(n, batch=()):
    a = RNG.normal(size=(*batch, n, n)) * 0.3
    a = np.tril(a, -1) + np.eye(n) * RNG.uniform(0.8, 1.5, (*batch, 1, n)).swapaxes(-1, -2) \
        * np.eye(n)
    return np.tril(a)


# (name, pf ctor, torch ctor, parameter arrays, value array)
CASES = [
    ("Normal", D.Normal, TD.Normal, [real(3, 2), pos(3, 2)], real(4, 3, 2)),
    ("Uniform", D.Uniform, TD.Uniform, [np.full((3,), -1.0), np.full((3,), 2.0)],
     RNG.uniform(-0.9, 1.9, (3,))),
    ("Laplace", D.Laplace, TD.Laplace, [real(3), pos(3)], real(2, 3)),
    ("Exponential", D.Exponential, TD.Exponential, [pos(3)], pos(2, 3)),
    ("Gamma", D.Gamma, TD.Gamma, [pos(3), pos(3)], pos(2, 3)),
    ("Beta", D.Beta, TD.Beta, [pos(3), pos(3)], unit(2, 3)),
    ("Dirichlet", D.Dirichlet, TD.Dirichlet, [pos(2, 4)], simplex(3, 2, 4)),
]


def _both(ctor_pf, ctor_t, arrays, **kw):
    ps = [pf.tensor(a, dtype=pf.float64) for a in arrays]
    ts = [torch.tensor(a, dtype=torch.float64) for a in arrays]
    return ctor_pf(*ps, **kw), ctor_t(*ts, **kw), ps, ts


def close(actual, expected, rtol=1e-9, atol=1e-10):
    e = expected.detach().numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    a = actual.numpy() if isinstance(actual, pf.Tensor) else np.asarray(actual)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_against_torch(case, mode):
    name, cp, ct, arrays, value = case
    if mode == "eager" and name in ("Gamma", "Beta", "Dirichlet"):
        pytest.skip("lgamma/digamma composites: lazy mode covers them (test time)")
    dp, dt, _, _ = _both(cp, ct, arrays)
    assert dp.batch_shape == tuple(dt.batch_shape) and dp.event_shape == tuple(dt.event_shape)
    v64 = torch.tensor(value)
    close(dp.log_prob(pf.tensor(value)), dt.log_prob(v64), rtol=1e-8)
    close(dp.entropy(), dt.entropy(), rtol=1e-8)
    for stat in ("mean", "mode", "variance", "stddev"):
        close(getattr(dp, stat), getattr(dt, stat), rtol=1e-8)
    if name in ("Normal", "Uniform", "Laplace", "Exponential"):
        close(dp.cdf(pf.tensor(value)), dt.cdf(v64), rtol=1e-8)
        p = unit(*dp.batch_shape)
        close(dp.icdf(pf.tensor(p)), dt.icdf(torch.tensor(p)), rtol=1e-7, atol=1e-9)
    # expand keeps the values
    shape = (2, *dp.batch_shape)
    ep = dp.expand(shape)
    assert ep.batch_shape == shape
    close(ep.entropy(), dt.expand(shape).entropy(), rtol=1e-8)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_log_prob_gradients_float64(case):
    _, cp, ct, arrays, value = case
    ps = [pf.tensor(a, dtype=pf.float64, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    dp, dt = cp(*ps), ct(*ts)
    # the entropies of Beta and Dirichlet differentiate digamma (polygamma graphs:
    # slow to compile); Gamma's covers that derivative
    with_entropy = case[0] not in ("Beta", "Dirichlet")
    (dp.log_prob(pf.tensor(value)).sum() + (dp.entropy().sum() if with_entropy else 0)
     ).backward()
    (dt.log_prob(torch.tensor(value)).sum() + (dt.entropy().sum() if with_entropy else 0)
     ).backward()
    for p, t in zip(ps, ts, strict=True):
        close(p.grad, t.grad, rtol=1e-7, atol=1e-9)


def test_discrete_against_torch(mode):
    p, lg = unit(3, 2), real(3, 2)
    for kw in ({"probs": p}, {"logits": lg}):
        dp = D.Bernoulli(**{k: pf.tensor(v) for k, v in kw.items()})
        dt = TD.Bernoulli(**{k: torch.tensor(v) for k, v in kw.items()})
        v = (RNG.random((4, 3, 2)) < 0.5).astype(np.float64)
        close(dp.log_prob(pf.tensor(v)), dt.log_prob(torch.tensor(v)), rtol=1e-8)
        for stat in ("entropy",):
            close(getattr(dp, stat)(), getattr(dt, stat)(), rtol=1e-8)
        for stat in ("mean", "variance", "probs", "logits"):
            close(getattr(dp, stat), getattr(dt, stat), rtol=1e-7)
        close(dp.enumerate_support(), dt.enumerate_support())
    close(D.Bernoulli(pf.tensor([0.2, 0.5, 0.9])).mode, TD.Bernoulli(torch.tensor(
        [0.2, 0.5, 0.9])).mode)
    sp, lg = simplex(3, 4) * 3.0, real(3, 4)
    v = RNG.integers(0, 4, (5, 3))
    for kw in ({"probs": sp}, {"logits": lg}):
        dp = D.Categorical(**{k: pf.tensor(a) for k, a in kw.items()})
        dt = TD.Categorical(**{k: torch.tensor(a) for k, a in kw.items()})
        assert dp.batch_shape == (3,)
        close(dp.log_prob(pf.tensor(v)), dt.log_prob(torch.tensor(v)), rtol=1e-8)
        close(dp.entropy(), dt.entropy(), rtol=1e-8)
        close(dp.probs, dt.probs, rtol=1e-8)
        close(dp.logits, dt.logits, rtol=1e-8)
        close(dp.mode, dt.mode)
        close(dp.mean, dt.mean)
        close(dp.enumerate_support(), dt.enumerate_support())
        oh = np.eye(4)[v]
        op = D.OneHotCategorical(**{k: pf.tensor(a) for k, a in kw.items()})
        ot = TD.OneHotCategorical(**{k: torch.tensor(a) for k, a in kw.items()})
        assert op.event_shape == (4,) and op.batch_shape == (3,)
        close(op.log_prob(pf.tensor(oh)), ot.log_prob(torch.tensor(oh)), rtol=1e-8)
        close(op.entropy(), ot.entropy(), rtol=1e-8)
        close(op.mode, ot.mode)
        close(op.variance, ot.variance, rtol=1e-8)


def test_categorical_zero_probability_entropy_and_kl():
    p = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    q = np.array([[0.25, 0.25, 0.5], [0.2, 0.0, 0.8]])
    cp = [D.Categorical(pf.tensor(a)) for a in (p, q)]
    ct = [TD.Categorical(torch.tensor(a)) for a in (p, q)]
    close(cp[0].entropy(), ct[0].entropy())
    close(D.kl_divergence(*cp), TD.kl_divergence(*ct))
    bp = [D.Bernoulli(pf.tensor(np.array(a))) for a in ([0.0, 0.3, 1.0], [0.5, 0.0, 0.7])]
    bt = [TD.Bernoulli(torch.tensor(np.array(a))) for a in ([0.0, 0.3, 1.0], [0.5, 0.0, 0.7])]
    close(D.kl_divergence(*bp), TD.kl_divergence(*bt))


def _mvn_params(batch=(2,), n=3):
    return real(*batch, n), tril(n, batch)


def test_multivariate_normal_against_torch(mode):
    loc, lt = _mvn_params()
    dp = D.MultivariateNormal(pf.tensor(loc), scale_tril=pf.tensor(lt))
    dt = TD.MultivariateNormal(torch.tensor(loc), scale_tril=torch.tensor(lt))
    v = real(4, 2, 3)
    assert dp.batch_shape == (2,) and dp.event_shape == (3,)
    close(dp.log_prob(pf.tensor(v)), dt.log_prob(torch.tensor(v)), rtol=1e-8)
    close(dp.entropy(), dt.entropy(), rtol=1e-8)
    for stat in ("mean", "variance", "covariance_matrix", "precision_matrix", "scale_tril"):
        close(getattr(dp, stat), getattr(dt, stat), rtol=1e-7, atol=1e-9)
    # a batch of locs sharing one scale_tril broadcasts as torch
    dp1 = D.MultivariateNormal(pf.tensor(loc), scale_tril=pf.tensor(lt[0]))
    dt1 = TD.MultivariateNormal(torch.tensor(loc), scale_tril=torch.tensor(lt[0]))
    close(dp1.log_prob(pf.tensor(v)), dt1.log_prob(torch.tensor(v)), rtol=1e-8)
    loc2, lt2 = _mvn_params()
    q = D.MultivariateNormal(pf.tensor(loc2), scale_tril=pf.tensor(lt2))
    qt = TD.MultivariateNormal(torch.tensor(loc2), scale_tril=torch.tensor(lt2))
    close(D.kl_divergence(dp, q), TD.kl_divergence(dt, qt), rtol=1e-8)


def test_multivariate_normal_gradients_float64():
    loc, lt = _mvn_params()
    v = real(4, 2, 3)
    lp = pf.tensor(loc, requires_grad=True)
    sp = pf.tensor(lt, requires_grad=True)
    lt_ = torch.tensor(loc, requires_grad=True)
    st = torch.tensor(lt, requires_grad=True)
    D.MultivariateNormal(lp, scale_tril=sp).log_prob(pf.tensor(v)).sum().backward()
    TD.MultivariateNormal(lt_, scale_tril=st).log_prob(torch.tensor(v)).sum().backward()
    close(lp.grad, lt_.grad, rtol=1e-7)
    close(sp.grad, np.tril(st.grad.numpy()), rtol=1e-7, atol=1e-9)


def test_multivariate_normal_covariance_needs_cholesky():
    cov = pf.tensor(np.eye(3) * 2.0)
    if hasattr(pf.linalg, "cholesky"):
        d = D.MultivariateNormal(pf.zeros(3, dtype=pf.float64), covariance_matrix=cov)
        close(d.scale_tril, np.eye(3) * math.sqrt(2.0), rtol=1e-12)
        return
    with pytest.raises(NotImplementedError, match="pf.linalg.cholesky"):
        D.MultivariateNormal(pf.zeros(3, dtype=pf.float64), covariance_matrix=cov)
    with pytest.raises(ValueError, match="Exactly one"):
        D.MultivariateNormal(pf.zeros(3), scale_tril=cov, covariance_matrix=cov)


KL_PAIRS = [
    (D.Normal, TD.Normal, lambda: [real(3), pos(3)]),
    (D.Laplace, TD.Laplace, lambda: [real(3), pos(3)]),
    (D.Exponential, TD.Exponential, lambda: [pos(3)]),
    (D.Gamma, TD.Gamma, lambda: [pos(3), pos(3)]),
    (D.Beta, TD.Beta, lambda: [pos(3), pos(3)]),
    (D.Dirichlet, TD.Dirichlet, lambda: [pos(2, 3)]),
    (D.Bernoulli, TD.Bernoulli, lambda: [unit(3)]),
    (D.Categorical, TD.Categorical, lambda: [simplex(2, 4)]),
    (D.OneHotCategorical, TD.OneHotCategorical, lambda: [simplex(2, 4)]),
    (D.Uniform, TD.Uniform, lambda: [np.array([0.0, -1.0]), np.array([1.0, 1.0])]),
]


@pytest.mark.parametrize("pair", KL_PAIRS, ids=[p[0].__name__ for p in KL_PAIRS])
def test_kl_against_torch(pair):
    cp, ct, make = pair
    a, b = make(), make()
    if cp is D.Uniform:  # q must cover p
        a = [a[0] + 0.1, a[1] - 0.1]
    ps = [pf.tensor(x, requires_grad=True) for x in a]
    ts = [torch.tensor(x, requires_grad=True) for x in a]
    kp = D.kl_divergence(cp(*ps), cp(*[pf.tensor(x) for x in b]))
    kt = TD.kl_divergence(ct(*ts), ct(*[torch.tensor(x) for x in b]))
    close(kp, kt, rtol=1e-8)
    if cp in (D.Beta, D.Dirichlet):
        return  # their gradients go through digamma's derivative: Gamma's case covers it
    kp.sum().backward()
    kt.sum().backward()
    for p, t in zip(ps, ts, strict=True):
        close(p.grad, t.grad, rtol=1e-6, atol=1e-9)


def test_kl_independent_and_registry():
    a, b = [real(2, 3), pos(2, 3)], [real(2, 3), pos(2, 3)]
    ip = [D.Independent(D.Normal(*map(pf.tensor, x)), 1) for x in (a, b)]
    it = [TD.Independent(TD.Normal(*map(torch.tensor, x)), 1) for x in (a, b)]
    assert ip[0].batch_shape == (2,) and ip[0].event_shape == (3,)
    close(D.kl_divergence(*ip), TD.kl_divergence(*it), rtol=1e-8)
    v = real(2, 3)
    close(ip[0].log_prob(pf.tensor(v)), it[0].log_prob(torch.tensor(v)), rtol=1e-8)
    close(ip[0].entropy(), it[0].entropy(), rtol=1e-8)
    with pytest.raises(NotImplementedError, match="Normal and q type Exponential"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Exponential(1.0))

    class MyNormal(D.Normal):
        pass

    D.register_kl(MyNormal, D.Normal)(lambda p, q: pf.tensor(42.0))

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 42.0
    # the parent pair still serves other subclasses
    assert abs(D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(1.0, 1.0)).item() - 0.5) < 1e-6


def test_transformed_distributions_against_torch(mode):
    loc, scale = real(3), pos(3)
    x = real(5, 3)
    for tp, tt in [
        (lambda: [D.TanhTransform()], lambda: [TD.TanhTransform()]),
        (lambda: [D.ExpTransform()], lambda: [TD.ExpTransform()]),
        (lambda: [D.SigmoidTransform()], lambda: [TD.SigmoidTransform()]),
        (lambda: [D.AffineTransform(1.5, -2.0), D.ExpTransform()],
         lambda: [TD.AffineTransform(1.5, -2.0), TD.ExpTransform()]),
    ]:
        dp = D.TransformedDistribution(D.Normal(pf.tensor(loc), pf.tensor(scale)), tp())
        dt = TD.TransformedDistribution(TD.Normal(torch.tensor(loc), torch.tensor(scale)), tt())
        yt = dt.transforms[-1](dt.transforms[0](torch.tensor(x))) if len(tt()) > 1 else \
            dt.transforms[0](torch.tensor(x))
        y = yt.numpy()
        close(dp.log_prob(pf.tensor(y)), dt.log_prob(torch.tensor(y)), rtol=1e-7, atol=1e-9)
    # the affine transform with tensor parameters and cdf / icdf through it
    shift, mult = real(3), pos(3) * np.array([1.0, -1.0, 1.0])
    dp = D.TransformedDistribution(D.Normal(pf.tensor(loc), pf.tensor(scale)),
                                   [D.AffineTransform(pf.tensor(shift), pf.tensor(mult))])
    dt = TD.TransformedDistribution(TD.Normal(torch.tensor(loc), torch.tensor(scale)),
                                    [TD.AffineTransform(torch.tensor(shift), torch.tensor(mult))])
    close(dp.cdf(pf.tensor(x)), dt.cdf(torch.tensor(x)), rtol=1e-8)
    close(dp.log_prob(pf.tensor(x)), dt.log_prob(torch.tensor(x)), rtol=1e-8)
    u = unit(3)
    close(dp.cdf(dp.icdf(pf.tensor(u))), u, rtol=1e-7)
    # Independent over a transformed distribution: the event dims sum
    ip = D.Independent(D.TransformedDistribution(D.Normal(pf.tensor(loc), pf.tensor(scale)),
                                                 [D.ExpTransform()]), 1)
    it = TD.Independent(TD.TransformedDistribution(
        TD.Normal(torch.tensor(loc), torch.tensor(scale)), [TD.ExpTransform()]), 1)
    close(ip.log_prob(pf.tensor(np.exp(x))), it.log_prob(torch.tensor(np.exp(x))), rtol=1e-8)


def test_sac_tanh_policy_gradient_matches_torch():
    """The SAC idiom: a = tanh(u), u = mu + sigma * eps (rsample), loss =
    alpha * log_prob(a) - q(a); the cached transform keeps log_prob exact. The
    same eps is given to torch so the gradients compare."""
    mu, log_std = real(4, 2), real(4, 2) * 0.3
    pm, ps = pf.tensor(mu, requires_grad=True), pf.tensor(log_std, requires_grad=True)
    dist = D.TransformedDistribution(D.Normal(pm, ps.exp()), [D.TanhTransform(cache_size=1)])
    pf.manual_seed(3)
    a = dist.rsample()
    assert a.shape == (4, 2)
    loss = (0.2 * dist.log_prob(a) - a * 1.5).sum()
    loss.backward()
    eps = np.arctanh(a.numpy())  # the draw: u = mu + sigma * eps
    eps = (eps - mu) / np.exp(log_std)
    tm, ts = torch.tensor(mu, requires_grad=True), torch.tensor(log_std, requires_grad=True)
    tdist = TD.TransformedDistribution(TD.Normal(tm, ts.exp()), [TD.TanhTransform(cache_size=1)])
    ta = torch.tanh(tm + ts.exp() * torch.tensor(eps))
    ta = tdist.transforms[0](tm + ts.exp() * torch.tensor(eps))
    tloss = (0.2 * tdist.log_prob(ta) - ta * 1.5).sum()
    tloss.backward()
    close(loss, tloss, rtol=1e-6)
    close(pm.grad, tm.grad, rtol=1e-6, atol=1e-8)
    close(ps.grad, ts.grad, rtol=1e-6, atol=1e-8)


def test_reparameterized_vae_gradient_matches_torch():
    """A VAE-style step: z = mu + sigma * eps from an encoder, a decoder
    likelihood, and KL(q(z|x) || N(0, 1)); gradients of the encoder
    weights vs torch with the same eps."""
    x = real(6, 4)
    we, wd = real(4, 4) * 0.5, real(2, 4) * 0.5
    pf.manual_seed(7)
    pwe, pwd = pf.tensor(we, requires_grad=True), pf.tensor(wd, requires_grad=True)
    h = pf.tensor(x) @ pwe
    q = D.Normal(h[:, :2], pf.softplus(h[:, 2:]) + 0.1)
    z = q.rsample()
    eps = ((z - q.loc) / q.scale).numpy()
    recon = D.Normal(z @ pwd, 1.0).log_prob(pf.tensor(x)).sum(-1)
    kl = D.kl_divergence(q, D.Normal(pf.zeros(6, 2, dtype=pf.float64), 1.0)).sum(-1)
    loss = (kl - recon).mean()
    loss.backward()
    twe, twd = torch.tensor(we, requires_grad=True), torch.tensor(wd, requires_grad=True)
    th = torch.tensor(x) @ twe
    tq = TD.Normal(th[:, :2], torch.nn.functional.softplus(th[:, 2:]) + 0.1)
    tz = tq.loc + tq.scale * torch.tensor(eps)
    trecon = TD.Normal(tz @ twd, 1.0).log_prob(torch.tensor(x)).sum(-1)
    tkl = TD.kl_divergence(tq, TD.Normal(torch.zeros(6, 2, dtype=torch.float64), 1.0)).sum(-1)
    tloss = (tkl - trecon).mean()
    tloss.backward()
    close(loss, tloss, rtol=1e-8)
    close(pwe.grad, twe.grad, rtol=1e-7, atol=1e-9)
    close(pwd.grad, twd.grad, rtol=1e-7, atol=1e-9)


def test_reinforce_gradient_matches_torch():
    """REINFORCE: loss = -(log_prob(a) * advantage).mean() over sampled
    actions (sample() carries no gradient); the same actions for torch."""
    logits = real(5, 3)
    pl = pf.tensor(logits, requires_grad=True)
    pf.manual_seed(1)
    dist = D.Categorical(logits=pl)
    a = dist.sample()
    assert a.dtype == pf.int64 and a.shape == (5,)
    adv = real(5)
    loss = -(dist.log_prob(a) * pf.tensor(adv)).mean() - 0.01 * dist.entropy().mean()
    loss.backward()
    tl = torch.tensor(logits, requires_grad=True)
    tdist = TD.Categorical(logits=tl)
    tloss = -(tdist.log_prob(torch.tensor(a.numpy())) * torch.tensor(adv)).mean() \
        - 0.01 * tdist.entropy().mean()
    tloss.backward()
    close(pl.grad, tl.grad, rtol=1e-7, atol=1e-9)
    # Bernoulli policy the same way
    pp = pf.tensor(unit(5), requires_grad=True)
    bd = D.Bernoulli(probs=pp)
    act = bd.sample()
    (-(bd.log_prob(act) * pf.tensor(adv)).sum()).backward()
    tp = torch.tensor(pp.detach().numpy(), requires_grad=True)
    (-(TD.Bernoulli(probs=tp).log_prob(torch.tensor(act.numpy())) * torch.tensor(adv)).sum()
     ).backward()
    close(pp.grad, tp.grad, rtol=1e-6, atol=1e-9)


def test_rsample_gradient_flows():
    loc = pf.tensor([0.5, -1.0], requires_grad=True)
    scale = pf.tensor([2.0, 0.5], requires_grad=True)
    pf.manual_seed(0)
    x = D.Normal(loc, scale).rsample((3,))
    x.sum().backward()
    eps = (x.detach().numpy() - loc.detach().numpy()) / scale.detach().numpy()
    close(loc.grad, np.full(2, 3.0))
    close(scale.grad, eps.sum(0), rtol=1e-6)
    s = D.Normal(loc, scale).sample((3,))
    assert s.shape == (3, 2)


N = 20000


def _moments(d, sample_shape=(N,)):
    s = d.sample(sample_shape).numpy().astype(np.float64)
    return s, s.mean(0), s.var(0)


@pytest.mark.parametrize("ctor,params", [
    (D.Normal, [[0.5, -1.0], [2.0, 0.5]]),
    (D.Uniform, [[-1.0, 0.0], [1.0, 3.0]]),
    (D.Laplace, [[0.5, -1.0], [1.0, 0.3]]),
    (D.Exponential, [[0.5, 3.0]]),
    (D.Gamma, [[0.5, 4.0], [2.0, 1.0]]),
    (D.Beta, [[0.5, 4.0], [2.0, 1.0]]),
    (D.Bernoulli, [[0.1, 0.7]]),
])
def test_sampling_moments(ctor, params):
    pf.manual_seed(11)
    d = ctor(*[pf.tensor(p, dtype=pf.float64) for p in params])
    s, m, v = _moments(d)
    assert s.shape == (N, 2)
    mean, var = d.mean.numpy(), d.variance.numpy()
    # 6 standard errors of the mean; the variance to 10%
    assert np.all(np.abs(m - mean) < 6 * np.sqrt(var / N)), (m, mean)
    np.testing.assert_allclose(v, var, rtol=0.1)
    assert np.all(d.support.check(pf.tensor(s)).numpy()) if ctor is not D.Uniform else True


def test_sampling_discrete_and_multivariate():
    pf.manual_seed(5)
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    c = D.Categorical(pf.tensor(probs))
    s = c.sample((N,)).numpy()
    assert s.shape == (N, 2) and s.dtype == np.int64
    freq = np.stack([(s == k).mean(0) for k in range(3)], -1)
    np.testing.assert_allclose(freq, probs, atol=0.02)
    oh = D.OneHotCategorical(pf.tensor(probs)).sample((N,)).numpy()
    assert oh.shape == (N, 2, 3) and np.all(oh.sum(-1) == 1)
    np.testing.assert_allclose(oh.mean(0), probs, atol=0.02)
    conc = np.array([[1.0, 2.0, 3.0]])
    ds = D.Dirichlet(pf.tensor(conc)).sample((N,)).numpy()
    np.testing.assert_allclose(ds.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(ds.mean(0), conc / conc.sum(), atol=0.01)
    loc, lt = np.array([1.0, -2.0]), np.array([[1.0, 0.0], [0.6, 0.5]])
    mv = D.MultivariateNormal(pf.tensor(loc), scale_tril=pf.tensor(lt)).rsample((N,)).numpy()
    np.testing.assert_allclose(mv.mean(0), loc, atol=0.05)
    np.testing.assert_allclose(np.cov(mv.T), lt @ lt.T, atol=0.05)
    # the generator is pyflame's: the same seed gives the same draws
    pf.manual_seed(9)
    a = D.Normal(0.0, 1.0).sample((4,)).numpy()
    pf.manual_seed(9)
    np.testing.assert_array_equal(a, D.Normal(0.0, 1.0).sample((4,)).numpy())


def test_validation_errors(lazy):
    with pytest.raises(ValueError, match="scale.*GreaterThan"):
        D.Normal(pf.tensor([0.0]), pf.tensor([-1.0]))
    with pytest.raises(ValueError, match="probs"):
        D.Bernoulli(probs=pf.tensor([1.5]))
    with pytest.raises(ValueError, match="either `probs` or `logits`"):
        D.Categorical()
    with pytest.raises(ValueError, match="low < high"):
        D.Uniform(1.0, 0.0)
    with pytest.raises(ValueError, match="value"):
        D.Exponential(pf.tensor([1.0])).log_prob(pf.tensor([-1.0]))
    with pytest.raises(ValueError, match="broadcastable"):
        D.Normal(pf.zeros(3), 1.0).log_prob(pf.zeros(4))
    with pytest.raises(ValueError, match="must be a Tensor"):
        D.Normal(0.0, 1.0).log_prob(0.5)
    # off: torch's nan
    d = D.Normal(pf.tensor([0.0]), pf.tensor([-1.0]), validate_args=False)
    assert np.isnan(d.log_prob(pf.tensor([0.0])).numpy()).all()
    # a lazy parameter is checked only when asked for
    lazy_scale = pf.tensor([1.0]) - 2.0
    D.Normal(0.0, lazy_scale)
    with pytest.raises(ValueError, match="scale"):
        D.Normal(0.0, lazy_scale, validate_args=True)
    with pytest.raises(NotImplementedError, match="rsample"):
        D.Gamma(1.0, 1.0).rsample()


def test_validation_in_eager_mode_checks_every_value(eager):
    computed_scale = pf.tensor([1.0]) - 2.0  # computed at once in eager mode: checked
    with pytest.raises(ValueError, match="scale"):
        D.Normal(0.0, computed_scale)


def test_log_prob_records_lazily(lazy):
    loc = pf.tensor([0.0, 1.0])
    d = D.Normal(loc * 2, 1.0)
    lp = d.log_prob(pf.tensor([0.5, 0.5]))
    assert lp.is_lazy
    close(lp, TD.Normal(torch.tensor([0.0, 2.0]), 1.0).log_prob(torch.tensor([0.5, 0.5])),
          rtol=1e-6)


def test_api_surface_against_torch():
    d, t = D.Normal(pf.tensor([0.0, 1.0]), pf.tensor([2.0, 0.5])), TD.Normal(
        torch.tensor([0.0, 1.0]), torch.tensor([2.0, 0.5]))
    close(d.stddev, t.stddev)
    close(d.perplexity(), t.perplexity(), rtol=1e-6)
    pf.manual_seed(2)
    assert d.sample_n(5).shape == (5, 2)
    assert D.Bernoulli(0.3).has_enumerate_support and not D.Normal(0.0, 1.0).has_enumerate_support
    assert D.Normal(0.0, 1.0).has_rsample and not D.Bernoulli(0.3).has_rsample
    t_exp = D.ExpTransform()
    cached = t_exp.with_cache(1)
    x = pf.tensor([0.5])
    y = cached(x)
    assert cached.inv(y) is x and t_exp.inv(t_exp(x)) is not x
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)  # no error while validation is off
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="scale"):
        D.Normal(0.0, -1.0)
