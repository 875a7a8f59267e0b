"""Issue 17: meshes, specs, pf.shard and shard_map's collectives on the virtual
mesh, forward and autodiff, against numpy, torch and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf
from pyflame_mlir import P

MESHES = [((1,), ("i",)), ((2,), ("i",)), ((2, 2), ("i", "j")), ((4, 2), ("i", "j"))]


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float64)


def test_mesh_groups_and_indices():
    mesh = pf.DeviceMesh((2, 3), ("a", "b"), devices=[5, 4, 3, 2, 1, 0])
    assert mesh.size == 6 and mesh.axis_size(("a", "b")) == 6
    assert mesh.groups("b") == [[0, 1, 2], [3, 4, 5]]
    assert mesh.groups("a") == [[0, 3], [1, 4], [2, 5]]
    assert mesh.groups(("b", "a")) == [[0, 3, 1, 4, 2, 5]]
    assert mesh.index_along(4, ("a", "b")) == 4 and mesh.index_along(4, ("b", "a")) == 3
    with pytest.raises(ValueError, match="axis names"):
        pf.DeviceMesh((2, 2), ("a", "a"))
    with pytest.raises(ValueError, match="6 distinct"):
        pf.DeviceMesh((2, 3), ("a", "b"), devices=[0, 1])


@pytest.mark.parametrize("spec", [P(), P("a"), P(None, "b"), P("b", "a"), P(("a", "b"))])
def test_addressable_shards_tile_the_global_value(spec):
    mesh = pf.DeviceMesh((2, 3), ("a", "b"), devices=[5, 4, 3, 2, 1, 0])
    x = _rand(6, 12)
    t = pf.shard(pf.tensor(x), mesh, spec)
    assert t.shape == (6, 12) and t.sharding.spec == spec
    assert pf.sharding.sharding_of(t) is t.sharding and pf.sharding.sharding_of(t + 1) is None
    np.testing.assert_array_equal(t.numpy(), x)
    covered = np.zeros_like(x)
    for s, dev in zip(t.addressable_shards, mesh.devices, strict=True):
        assert s.device == dev
        np.testing.assert_array_equal(s.data, x[s.index])
        assert s.data.shape == t.sharding.shard_shape(x.shape)
        covered[s.index] += 1
    # every element lives on the devices that replicate it: size / (number of shards)
    shards = t.sharding.num_shards(0) * t.sharding.num_shards(1)
    assert (covered == mesh.size // shards).all()


def test_shard_errors_name_the_rule():
    mesh = pf.DeviceMesh((2, 2), ("a", "b"))
    with pytest.raises(pf.ShapeError, match="divisible by 2"):
        pf.shard(pf.zeros((3, 4)), mesh, P("a"))
    with pytest.raises(pf.ShapeError, match="twice"):
        pf.shard(pf.zeros((4, 4)), mesh, P("a", "a"))
    with pytest.raises(ValueError, match="not one of"):
        pf.shard(pf.zeros((4, 4)), mesh, P("c"))
    with pytest.raises(RuntimeError, match="inside a function given to pf.shard_map"):
        pf.all_reduce(pf.zeros(2), "a")


def test_shard_keeps_parameters_and_gradients_flow():
    w = pf.tensor(_rand(4, 2)).requires_grad_()
    mesh = pf.DeviceMesh((2,), ("i",))
    ws = pf.shard(w, mesh, P("i"))
    assert ws.requires_grad and ws.is_leaf
    lazy = pf.shard(w * 2.0, mesh, P("i"))
    (lazy * lazy).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 8.0 * w.numpy())
    r = pf.reshard(lazy, mesh, P(None, "i"))
    assert r.sharding.spec == P(None, "i")
    np.testing.assert_allclose(r.numpy(), lazy.numpy())


@pytest.mark.parametrize("shape,names", MESHES)
def test_collectives_forward(shape, names):
    mesh = pf.DeviceMesh(shape, names)
    n = mesh.axis_size(names)
    ax = names  # all axes: one group of every device
    x = _rand(2 * n, 3 * n)
    spec = P(ax)

    red = pf.shard_map(lambda b: pf.all_reduce(b, ax), mesh, spec, P())(pf.tensor(x))
    np.testing.assert_allclose(red.numpy(), x.reshape(n, 2, 3 * n).sum(0), rtol=1e-12)
    mx = pf.shard_map(lambda b: pf.all_reduce(b, ax, "max"), mesh, spec, P())(pf.tensor(x))
    np.testing.assert_allclose(mx.numpy(), x.reshape(n, 2, 3 * n).max(0))

    gat = pf.shard_map(lambda b: pf.all_gather(b, ax, tiled=True), mesh, spec, P())
    np.testing.assert_array_equal(gat(pf.tensor(x)).numpy(), x)
    stk = pf.shard_map(lambda b: pf.all_gather(b, ax, dim=1), mesh, spec, P())
    np.testing.assert_array_equal(stk(pf.tensor(x)).numpy(),
                                  x.reshape(n, 2, 3 * n).transpose(1, 0, 2))

    # every device holds all of x; the sum over devices is n * x, scattered by rows
    rs = pf.shard_map(lambda b: pf.reduce_scatter(b, ax, dim=0, tiled=True), mesh, P(), spec)
    np.testing.assert_allclose(rs(pf.tensor(x)).numpy(), n * x, rtol=1e-12)

    # rows split -> columns split: the global value is unchanged
    a2a = pf.shard_map(lambda b: pf.all_to_all(b, ax, split_dim=1, concat_dim=0), mesh,
                       spec, P(None, ax))
    np.testing.assert_array_equal(a2a(pf.tensor(x)).numpy(), x)

    shift = [(i, (i + 1) % n) for i in range(n)]
    pp = pf.shard_map(lambda b: pf.ppermute(b, ax, shift), mesh, spec, spec)
    np.testing.assert_array_equal(pp(pf.tensor(x)).numpy(), np.roll(x, 2, axis=0))
    half = [(0, n - 1)] if n > 1 else []
    pz = pf.shard_map(lambda b: pf.ppermute(b, ax, half), mesh, spec, spec)(pf.tensor(x))
    want = np.zeros_like(x)
    if n > 1:
        want[-2:] = x[:2]
    np.testing.assert_array_equal(pz.numpy(), want)


def test_collectives_over_one_axis_of_a_2d_mesh():
    mesh = pf.DeviceMesh((4, 2), ("i", "j"))
    x = _rand(8, 6)

    def f(b):  # b: (2, 3); sum over "i" (4 devices), gather over "j" (2 devices)
        s = pf.all_reduce(b, "i")
        return pf.all_gather(s, "j", dim=1, tiled=True) + pf.axis_index("i")

    out = pf.shard_map(f, mesh, P("i", "j"), P("i"))(pf.tensor(x))
    want = np.tile(x.reshape(4, 2, 6).sum(0), (4, 1)) + np.repeat(np.arange(4), 2)[:, None]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)
    assert out.sharding.spec == P("i")


def test_comm_report_counts_bytes_by_hand():
    mesh = pf.DeviceMesh((2, 2), ("i", "j"))
    f = pf.shard_map(lambda b: pf.all_gather(pf.all_reduce(b, "i"), "j", tiled=True),
                     mesh, P("i", "j"), P())
    f(pf.zeros((4, 8), dtype=pf.float32))  # local blocks (2, 4) f32: 32 bytes
    ar, ag = f.last_comm.collectives
    # all_reduce over 2 devices (ring): each sends 2 * (2 - 1) / 2 * 32 bytes, 4 devices
    assert (ar.name, ar.group_size, ar.bytes_per_device, ar.total_bytes) == \
        ("all_reduce", 2, 32, 128)
    # all_gather over 2: each sends its 32 bytes once to the other
    assert (ag.name, ag.bytes_per_device, ag.total_bytes) == ("all_gather", 32, 128)
    assert f.last_comm.total_bytes == 256
    assert f.last_comm.by_name() == {"all_reduce": 128, "all_gather": 128}


def test_divergent_programs_raise():
    mesh = pf.DeviceMesh((2,), ("i",))

    def f(b):
        return pf.all_reduce(b, "i") if pf.axis_index("i") == 0 else b

    with pytest.raises(RuntimeError, match="diverged"):
        pf.shard_map(f, mesh, P("i"), P("i"))(pf.zeros(4))

    def g(b):
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        pf.shard_map(g, mesh, P("i"), P("i"))(pf.zeros(4))


# ---- autodiff through every collective ----

def _numeric_grad(fn, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in range(x.size):
        d = np.zeros_like(x)
        d.flat[i] = eps
        g.flat[i] = (fn(x + d) - fn(x - d)) / (2 * eps)
    return g


def _programs(n: int):
    """Each collective inside a small nonlinear program, with its out spec."""
    ax = ("i", "j")
    shift = [(i, (i + 1) % n) for i in range(n)]
    return {
        "all_reduce": (lambda b: pf.all_reduce(b * b, ax).sin(), P()),
        "all_reduce_mean": (lambda b: pf.all_reduce(b.exp(), ax, "mean") * 2.0, P()),
        "all_gather": (lambda b: pf.all_gather(b.tanh(), ax, tiled=True) ** 2, P()),
        "reduce_scatter": (lambda b: pf.reduce_scatter(pf.all_gather(b, ax, tiled=True).sin(),
                                                       ax, tiled=True) * b, P(ax)),
        "all_to_all": (lambda b: pf.all_to_all(b * b, ax, 1, 0).cos(), P(None, ax)),
        "ppermute": (lambda b: pf.ppermute(b.sin(), ax, shift) * b, P(ax)),
    }


@pytest.mark.parametrize("name", list(_programs(4)))
def test_collective_gradients_match_finite_differences(name):
    mesh = pf.DeviceMesh((2, 2), ("i", "j"))
    f, out_spec = _programs(4)[name]
    mapped = pf.shard_map(f, mesh, P(("i", "j")), out_spec)
    x = _rand(8, 4, seed=3)
    w = _rand(*mapped(pf.tensor(x)).shape, seed=4)

    def loss(t):
        return (mapped(t) * pf.tensor(w)).sum()

    g = pf.grad(loss)(pf.tensor(x)).numpy()
    num = _numeric_grad(lambda v: loss(pf.tensor(v)).item(), x)
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-7)
    # forward mode along a direction vs the directional derivative
    v = _rand(*x.shape, seed=5)
    _, tan = pf.jvp(loss, (pf.tensor(x),), (pf.tensor(v),))
    np.testing.assert_allclose(tan.item(), (g * v).sum(), rtol=1e-8)


# ---- Megatron MLP: data, tensor and mixed parallel vs torch ----

def _mlp_torch(x, w1, w2, y):
    return ((torch.relu(x @ w1) @ w2 - y) ** 2).mean()


def _megatron(mesh: pf.DeviceMesh, data: str | None, model: str | None):
    """Column-parallel W1, row-parallel W2 over ``model``, batch over ``data``;
    the loss is the global mean (all_reduce over every axis)."""
    axes = tuple(mesh.axis_names)
    n_all = mesh.size

    def local(xb, w1b, w2b, yb):
        h = pf.relu(xb @ w1b) @ w2b
        if model is not None:
            h = pf.all_reduce(h, model)  # row-parallel W2: partial sums
        err = ((h - yb) ** 2).sum() / (xb.shape[0] * yb.shape[1])
        # every device's loss copy is scaled by its share so the total is the mean
        n_data = mesh.axis_size(data) if data else 1
        return pf.all_reduce(err / n_data, axes) / (n_all // n_data)

    specs = (P(data), P(None, model), P(model), P(data))
    return pf.shard_map(local, mesh, specs, P())


@pytest.mark.parametrize("shape,names,data,model", [
    ((1,), ("d",), "d", None),
    ((2,), ("d",), "d", None),
    ((2,), ("m",), None, "m"),
    ((2, 2), ("d", "m"), "d", "m"),
    ((4, 2), ("d", "m"), "d", "m"),
])
def test_megatron_mlp_sgd_matches_torch_step_by_step(shape, names, data, model):
    mesh = pf.DeviceMesh(shape, names)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 6)), rng.standard_normal((8, 3))
    w1, w2 = rng.standard_normal((6, 4)) * 0.5, rng.standard_normal((4, 3)) * 0.5
    loss_fn = _megatron(mesh, data, model)
    vg = pf.value_and_grad(loss_fn, argnums=(1, 2))
    tw1, tw2 = (torch.tensor(w, requires_grad=True) for w in (w1, w2))
    tx, ty = torch.tensor(x), torch.tensor(y)
    pw1, pw2 = pf.tensor(w1), pf.tensor(w2)
    steps = 20 if len(shape) == 2 else 3  # 20 steps on the 2-d meshes (time)
    for _ in range(steps):
        loss, (g1, g2) = vg(pf.tensor(x), pw1, pw2, pf.tensor(y))
        tl = _mlp_torch(tx, tw1, tw2, ty)
        tl.backward()
        np.testing.assert_allclose(loss.item(), tl.item(), rtol=1e-10)
        np.testing.assert_allclose(g1.numpy(), tw1.grad.numpy(), rtol=1e-9, atol=1e-12)
        with torch.no_grad():
            for t in (tw1, tw2):
                t -= 0.1 * t.grad
                t.grad = None
        pw1, pw2 = pw1 - 0.1 * g1, pw2 - 0.1 * g2
        pf.eval(pw1, pw2)


@pytest.mark.parametrize("name,attrs", [
    ("all_reduce", {"reduction": "sum"}),
    ("all_gather", {"dim": 1}),
    ("reduce_scatter", {"dim": 0}),
    ("all_to_all", {"split_dim": 1, "concat_dim": 0}),
    ("ppermute", {"pairs": ((0, 1), (1, 3), (3, 0))}),
])
def test_collective_transpose_rules_are_adjoints(name, attrs):
    """<C(x), y> == <x, C^T(y)> summed over the devices, for the dialect's
    transpose rule run by the virtual mesh's collectives; shapes by its shape rule."""
    from pyflame_mlir.dialects.sharding import collective_shape, collective_transpose

    def call(kind, a, b):
        if kind == "all_reduce":
            return pf.all_reduce(b, "i")
        if kind == "ppermute":
            return pf.ppermute(b, "i", a["pairs"])
        if kind == "all_to_all":
            return pf.all_to_all(b, "i", a["split_dim"], a["concat_dim"])
        return getattr(pf, kind)(b, "i", dim=a["dim"], tiled=True)

    mesh = pf.DeviceMesh((4,), ("i",))
    local = (4, 8)
    out_local = collective_shape(name, local, 4, attrs)
    x, y = _rand(16, 8, seed=1), _rand(4 * out_local[0], out_local[1], seed=2)
    fwd = pf.shard_map(lambda b: call(name, attrs, b), mesh, P("i"), P("i"))(pf.tensor(x))
    assert fwd.shape == (4 * out_local[0], out_local[1])
    tname, tattrs = collective_transpose(name, attrs)
    back = pf.shard_map(lambda b: call(tname, tattrs, b), mesh, P("i"), P("i"))(pf.tensor(y))
    assert back.shape == x.shape
    np.testing.assert_allclose((fwd.numpy() * y).sum(), (x * back.numpy()).sum(), rtol=1e-10)
    with pytest.raises(pf.ShapeError, match="not linear"):
        collective_transpose("all_reduce", {"reduction": "max"})
