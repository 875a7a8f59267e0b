"""``pf.tree_util`` (on optree) with JAX's semantics, and the functional
transforms over pytrees, lazy and eager, with and without a value looked at
in the middle. The expected structures are JAX's, written by hand (jax is
not a test dependency)."""

from __future__ import annotations

import dataclasses
from collections import OrderedDict, defaultdict, namedtuple

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir import tree_util as tu

Point = namedtuple("Point", "x y")


class Pair:  # a user class, registered below
    def __init__(self, a, b):
        self.a, self.b = a, b


tu.register_pytree_node(Pair, lambda p: ((p.a, p.b), "pair"), lambda aux, ch: Pair(*ch))


@tu.register_dataclass
@dataclasses.dataclass
class Layer:
    w: object
    b: object
    name: str = dataclasses.field(default="dense", metadata={"static": True})


def test_flatten_like_jax():
    tree = {"b": [1, None, (2, 3)], "a": Point(4, 5), "c": None}
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [4, 5, 1, 2, 3]  # dict keys sorted; None is an empty subtree
    assert tu.tree_unflatten(treedef, [10, 20, 30, 40, 50]) == \
        {"b": [30, None, (40, 50)], "a": Point(10, 20), "c": None}
    assert tu.tree_leaves(OrderedDict([("z", 1), ("a", 2)])) == [1, 2]  # insertion order
    assert tu.tree_leaves(defaultdict(int, {"z": 1, "a": 2})) == [2, 1]  # sorted
    assert tu.tree_leaves([None, None]) == []
    assert tu.tree_structure((1, 2)) == tu.tree_structure((3, 4))
    assert tu.tree_structure((1, 2)) != tu.tree_structure([3, 4])
    assert tu.tree_structure(Layer(1, 2)) != tu.tree_structure(Layer(1, 2, name="other"))
    assert pf.tree_flatten is tu.tree_flatten and pf.tree_unflatten is tu.tree_unflatten


def test_user_classes_and_dataclasses():
    p = tu.tree_map(lambda v: v * 10, Pair(1, (2, None)))
    assert isinstance(p, Pair) and p.a == 10 and p.b == (20, None)
    lay = tu.tree_map(lambda u, v: u + v, Layer(1, 2, "l1"), Layer(10, 20, "l1"))
    assert lay == Layer(11, 22, "l1")
    assert tu.tree_leaves(Layer(1, 2)) == [1, 2]  # name is static: part of the structure

    @dataclasses.dataclass
    class Cfg:
        a: object
        k: int
    tu.register_dataclass(Cfg, data_fields=["a"], meta_fields=["k"])
    leaves, treedef = tu.tree_flatten(Cfg(a=(1, 2), k=3))
    assert leaves == [1, 2] and tu.tree_unflatten(treedef, [5, 6]) == Cfg(a=(5, 6), k=3)
    with pytest.raises(TypeError, match="not a dataclass"):
        tu.register_dataclass(Pair)


W, B, X = np.array([1., -2., 3.]), np.array([0.5, 2.]), np.array([2., 1., -1.])


def _np(t):
    return np.array(t.numpy())


@pytest.mark.parametrize("look", [False, True])
def test_grad_over_pytrees_argnums_and_aux(mode, look):
    def loss(params, x, scale):
        y = (params["layer"].w * x).sum() * scale + (params["extra"][0].y ** 2).sum()
        if look:
            y.item()
        return y, {"y": y}
    params = {"layer": Layer(pf.tensor(W), pf.tensor(B)),
              "extra": [Point(None, pf.tensor(B))]}
    (g_params, g_x), aux = pf.grad(loss, argnums=(0, 1), has_aux=True)(
        params, pf.tensor(X), 3.0)
    assert isinstance(g_params["layer"], Layer) and g_params["extra"][0].x is None
    np.testing.assert_allclose(_np(g_params["layer"].w), 3 * X)
    np.testing.assert_allclose(_np(g_params["layer"].b), 0 * B)
    np.testing.assert_allclose(_np(g_params["extra"][0].y), 2 * B)
    np.testing.assert_allclose(_np(g_x), 3 * W)
    np.testing.assert_allclose(_np(aux["y"]), (W * X).sum() * 3 + (B ** 2).sum())


def _g(p, look=False):
    u = p["w"] * 2 + p["b"].sum()
    if look:
        print(u)
    return {"v": (p["w"] * p["w"]).sum(), "u": u}


@pytest.mark.parametrize("look", [False, True])
@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobians_nest_the_input_structure_in_the_output_structure(mode, look, jac):
    p = {"w": pf.tensor(W), "b": pf.tensor(B)}
    j = getattr(pf, jac)(lambda p: _g(p, look))(p)
    assert set(j) == {"u", "v"} and set(j["u"]) == set(j["v"]) == {"w", "b"}
    np.testing.assert_allclose(_np(j["u"]["w"]), 2 * np.eye(3))
    np.testing.assert_allclose(_np(j["u"]["b"]), np.ones((3, 2)))
    np.testing.assert_allclose(_np(j["v"]["w"]), 2 * W)
    np.testing.assert_allclose(_np(j["v"]["b"]), np.zeros(2))


@pytest.mark.parametrize("look", [False, True])
def test_hessian_over_a_dict_and_has_aux(mode, look):
    def h(p):
        y = (p["w"] * p["w"]).sum() * p["b"].sum()
        if look:
            y.item()
        return y, y * 2
    p = {"w": pf.tensor(W), "b": pf.tensor(B)}
    hs, aux = pf.hessian(h, has_aux=True)(p)
    np.testing.assert_allclose(_np(hs["w"]["w"]), 2 * B.sum() * np.eye(3), rtol=1e-6)
    np.testing.assert_allclose(_np(hs["w"]["b"]), np.repeat(2 * W[:, None], 2, 1), rtol=1e-6)
    np.testing.assert_allclose(_np(hs["b"]["w"]), np.repeat(2 * W[None], 2, 0), rtol=1e-6)
    np.testing.assert_allclose(_np(hs["b"]["b"]), np.zeros((2, 2)))
    np.testing.assert_allclose(_np(aux), 2 * (W * W).sum() * B.sum(), rtol=1e-6)
    # argnums tuple: a tuple (per argument) of tuples
    jr = pf.jacrev(lambda a, b: a * b.sum(), argnums=(0, 1))(pf.tensor(W), pf.tensor(B))
    assert isinstance(jr, tuple) and len(jr) == 2
    np.testing.assert_allclose(_np(jr[0]), B.sum() * np.eye(3))
    np.testing.assert_allclose(_np(jr[1]), np.repeat(W[:, None], 2, 1))


def test_vjp_over_pytrees_checks_the_cotangent_tree(mode):
    out, vjp_fn = pf.vjp(lambda p: _g(p), {"w": pf.tensor(W), "b": pf.tensor(B)})
    (ct,) = vjp_fn({"u": pf.tensor([1., 0., 2.]), "v": pf.tensor(1.)})
    np.testing.assert_allclose(_np(ct["w"]), [2., 0., 4.] + 2 * W)
    np.testing.assert_allclose(_np(ct["b"]), [3., 3.])
    with pytest.raises(TypeError, match="Tree structure of cotangent"):
        vjp_fn({"u": pf.tensor([1., 0., 2.])})
    with pytest.raises(TypeError, match="Tree structure of cotangent"):
        vjp_fn([pf.tensor([1., 0., 2.]), pf.tensor(1.)])
    with pytest.raises(ValueError, match="does not match"):
        vjp_fn({"u": pf.tensor([1., 0.]), "v": pf.tensor(1.)})


@tu.register_pytree_with_keys_class
class Keyed:  # JAX's keyed registration: the node names its children in key paths
    def __init__(self, w, b):
        self.w, self.b = w, b

    def tree_flatten_with_keys(self):
        return ((tu.GetAttrKey("w"), self.w), (tu.GetAttrKey("b"), self.b)), "keyed"

    @classmethod
    def tree_unflatten(cls, aux, children):
        assert aux == "keyed"
        return cls(*children)


def test_register_pytree_with_keys_and_treedef_helpers_as_jax() -> None:
    t = {"m": Keyed(1.0, [2.0, 3.0])}
    # jax.tree_util gives these paths for the same registration
    assert [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(t)[0]] == \
        ["['m'].w", "['m'].b[0]", "['m'].b[1]"]
    assert tu.tree_map(lambda x: x * 2, t)["m"].b == [4.0, 6.0]
    assert tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure([2])]) == \
        tu.tree_structure((1, [2]))
    assert [c.num_leaves for c in tu.treedef_children(tu.tree_structure((1, [2, 3])))] == [1, 2]
    g = pf.grad(lambda k: pf.sum(k.w * k.b[0] ** 2))(Keyed(pf.tensor(3.0), [pf.tensor(2.0)]))
    assert isinstance(g, Keyed)
    np.testing.assert_allclose([g.w.item(), g.b[0].item()], [4.0, 12.0])
