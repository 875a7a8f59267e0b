"""JAX's ``custom_vjp``/``custom_jvp``, ``stop_gradient``, ``lax`` control
flow and ``checkpoint`` against jax itself (values and derivatives), and
``pf.utils.checkpoint`` against torch's."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

RNG = np.random.default_rng(0)
X = RNG.random(4).astype(np.float32)
Y = RNG.random(4).astype(np.float32)


def close(a: pf.Tensor, b: object, tol: float = 2e-6) -> None:
    np.testing.assert_allclose(np.asarray(a.numpy()), np.asarray(b), rtol=tol, atol=tol)


def _clipped(lib, cv):
    """A custom_vjp that clips its cotangent (a rule no autodiff derives)."""
    @cv
    def f(x, scale):
        return {"out": lib.sin(x) * scale["s"]}

    def fwd(x, scale):
        return f(x, scale), (lib.cos(x), scale["s"])

    def bwd(res, ct):
        cos_x, s = res
        g = ct["out"]
        clip = g.clamp(-0.1, 0.1) if lib is pf else lib.clip(g, -0.1, 0.1)
        return (cos_x * s * clip, {"s": (g * 0).sum() + 7.0})
    f.defvjp(fwd, bwd)
    return f


def test_custom_vjp_pytrees_match_jax() -> None:
    fj, fp = _clipped(jnp, jax.custom_vjp), _clipped(pf, pf.custom_vjp)
    args_j = (X, {"s": np.float32(3.0)})
    args_p = (pf.tensor(X), {"s": pf.tensor(np.float32(3.0))})
    close(fp(*args_p)["out"], fj(*args_j)["out"])
    gj = jax.grad(lambda x, s: (fj(x, s)["out"] * 5).sum(), argnums=(0, 1))(*args_j)
    gp = pf.grad(lambda x, s: (fp(x, s)["out"] * 5).sum(), argnums=(0, 1))(*args_p)
    close(gp[0], gj[0])
    close(gp[1]["s"], gj[1]["s"])
    x = pf.tensor(X).requires_grad_()  # torch-style backward goes through the rule too
    (fp(x, {"s": pf.tensor(np.float32(3.0))})["out"] * 5).sum().backward()
    close(x.grad, gj[0])


def test_custom_vjp_nondiff_argnums_and_errors() -> None:
    def mk(lib, cv):
        f = cv(lambda n, x: x ** n, nondiff_argnums=(0,))
        f.defvjp(lambda n, x: (x ** n, x), lambda n, x, g: (g * n * x ** (n - 1) * 10,))
        return f
    fj, fp = mk(jnp, jax.custom_vjp), mk(pf, pf.custom_vjp)
    close(pf.grad(lambda x: fp(3, x).sum())(pf.tensor(X)),
          jax.grad(lambda x: fj(3, x).sum())(X), tol=1e-5)
    bare = pf.custom_vjp(lambda x: x)
    with pytest.raises(AttributeError, match="No VJP defined"):
        bare(pf.tensor(X))
    wrong = pf.custom_vjp(lambda x, y: x * y)
    wrong.defvjp(lambda x, y: (x * y, None), lambda res, g: (g,))
    with pytest.raises(TypeError, match="tuple of length 2"):
        pf.grad(lambda x: wrong(x, pf.tensor(Y)).sum())(pf.tensor(X))


def _softplus(lib, cj):
    @cj
    def g(x):
        return lib.log1p(lib.exp(x))

    def g_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return g(x), t * 3.0 / (1 + lib.exp(-x))  # 3x the true derivative: the rule is used
    g.defjvp(g_jvp)
    return g


def test_custom_jvp_forward_and_reverse_match_jax() -> None:
    gj, gp = _softplus(jnp, jax.custom_jvp), _softplus(pf, pf.custom_jvp)
    x = pf.tensor(X)
    close(gp(x), gj(X))
    close(pf.jvp(gp, (x,), (pf.tensor(Y),))[1], jax.jvp(gj, (X,), (Y,))[1])
    close(pf.grad(lambda a: gp(a).sum())(x), jax.grad(lambda a: gj(a).sum())(X))
    close(pf.jacrev(gp)(x), jax.jacrev(gj)(X))
    close(pf.jacfwd(gp)(x), jax.jacfwd(gj)(X))

    def mk(lib, cj):
        h = cj(lambda a, b: a * b + lib.sin(a))
        h.defjvps(lambda ta, out, a, b: ta * (b + lib.cos(a)) * 2, lambda tb, out, a, b: tb * a)
        return h
    hj, hp = mk(jnp, jax.custom_jvp), mk(pf, pf.custom_jvp)
    close(pf.grad(lambda a, b: hp(a, b).sum(), argnums=(0, 1))(x, pf.tensor(Y))[0],
          jax.grad(lambda a, b: hj(a, b).sum(), argnums=(0, 1))(X, Y)[0])


def test_stop_gradient_and_checkpoint_match_jax() -> None:
    def f(lib, sg, ck):
        return lambda x: (ck(lambda a: lib.sin(a) * sg(a * a))(x) * x).sum()
    got = pf.grad(f(pf, pf.stop_gradient, pf.checkpoint))(pf.tensor(X))
    want = jax.grad(f(jnp, jax.lax.stop_gradient, jax.checkpoint))(X)
    close(got, want)
    tree = pf.stop_gradient({"a": pf.tensor(X).requires_grad_(), "n": 3})
    assert not tree["a"].requires_grad and tree["n"] == 3


def test_scan_pytree_carry_reverse_and_grad_match_jax() -> None:
    xs = RNG.standard_normal((5, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 3)).astype(np.float32)

    def run(lib, lax, reverse):
        def step(carry, x):
            h = lib.tanh(carry["h"] @ carry["w"] + x)
            return {"h": h, "w": carry["w"]}, (h.sum(), h)

        def loss(w_, xs_):
            c, (s, hs) = lax.scan(step, {"h": xs_[0] * 0, "w": w_}, xs_, reverse=reverse)
            return (c["h"] ** 2).sum() + s.sum() + hs.mean()
        return loss
    for reverse in (False, True):
        lj, lp = run(jnp, jax.lax, reverse), run(pf, pf.lax, reverse)
        close(lp(pf.tensor(w), pf.tensor(xs)), lj(w, xs), tol=1e-5)
        close(pf.grad(lp)(pf.tensor(w), pf.tensor(xs)), jax.grad(lj)(w, xs), tol=1e-5)
    c, ys = pf.lax.scan(lambda c, _: (c + 1, c * 2), pf.tensor(0.0), None, length=3)
    assert c.item() == 3.0 and ys.numpy().tolist() == [0.0, 2.0, 4.0]
    with pytest.raises(ValueError, match="length"):
        pf.lax.scan(lambda c, x: (c, x), 0.0, None)
    close(pf.lax.map(lambda r: r.sum(), pf.tensor(xs)), jax.lax.map(lambda r: r.sum(), xs))


def test_loops_and_branches_match_jax() -> None:
    def body(lib):
        return lambda i, v: v * 1.5 + lib.sin(v) * i
    close(pf.lax.fori_loop(0, 4, body(pf), pf.tensor(X)),
          jax.lax.fori_loop(0, 4, body(jnp), X), tol=1e-5)
    close(pf.grad(lambda v: pf.lax.fori_loop(1, 3, body(pf), v).sum())(pf.tensor(X)),
          jax.grad(lambda v: jax.lax.fori_loop(1, 3, body(jnp), v).sum())(X), tol=1e-5)
    got = pf.lax.while_loop(lambda v: v.sum() < 50, lambda v: v * 2 + 1, pf.tensor(X))
    want = jax.lax.while_loop(lambda v: v.sum() < 50, lambda v: v * 2 + 1, X)
    close(got, want)
    def branchy(lib, lax, threshold):
        return lambda v: lax.cond(v.sum() > threshold, lambda a: lib.sin(a).sum(),
                                  lambda a: (a * a).sum(), v)
    for threshold in (-1.0, 100.0):  # both branches
        close(pf.grad(branchy(pf, pf.lax, threshold))(pf.tensor(X)),
              jax.grad(branchy(jnp, jax.lax, threshold))(X))
    for i in (-1, 1, 7):  # clamped, as JAX's switch
        branches = [lambda a: a + 1, lambda a: a * 3, lambda a: -a]
        close(pf.lax.switch(i, branches, pf.tensor(X)), jax.lax.switch(i, branches, X))


def test_torch_utils_checkpoint_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    pm = pf.nn.Sequential(pf.nn.Linear(4, 4), pf.nn.Tanh(), pf.nn.Linear(4, 2))
    pm.load_state_dict({k: pf.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    xt = torch.tensor(np.stack([X, Y]), requires_grad=True)
    xp = pf.tensor(np.stack([X, Y])).requires_grad_()
    torch.utils.checkpoint.checkpoint(tm, xt, use_reentrant=False).sum().backward()
    pf.utils.checkpoint.checkpoint(pm, xp, use_reentrant=False).sum().backward()
    close(xp.grad, xt.grad.numpy())
    out = pf.utils.checkpoint.checkpoint_sequential(pm, 2, xp)
    close(out, torch.utils.checkpoint.checkpoint_sequential(tm, 2, xt, use_reentrant=False)
          .detach().numpy())


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "vjp", "jacrev", "jacfwd"])
def test_has_aux_without_a_pair_raises_naming_it(transform):
    f = getattr(pf, transform)
    with pytest.raises(TypeError, match=r"has_aux=True requires the function to return a pair"):
        if transform == "vjp":
            f(lambda x: (x * x).sum(), pf.ones(2), has_aux=True)
        else:
            f(lambda x: (x * x).sum(), has_aux=True)(pf.ones(2))
