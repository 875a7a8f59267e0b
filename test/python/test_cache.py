"""The compiled-graph cache: hits for new data, misses for any structural
change, never a shared key between different computations."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import pyflame_mlir as pf


@pytest.fixture(autouse=True)
def fresh_cache():
    pf.clear_cache()
    yield
    pf.clear_cache()


def step(x, w, b):
    return -pf.log_softmax(pf.relu(x @ w + b), dim=1).sum()


def test_loop_with_new_data_compiles_once(lazy):
    """Lazy-only: it counts the compiles of one recorded step
    (eager mode compiles per op)."""
    w, b = pf.randn(8, 4), pf.zeros(4)
    builds = pf.counters()["ir_builds"]
    for _ in range(100):
        x = pf.randn(16, 8)
        loss = step(x, w, b)
        expect = loss  # the value is checked against numpy below, once
        loss.item()
    s = pf.cache_stats()
    assert (s["misses"], s["hits"], s["entries"]) == (1, 99, 1)
    assert pf.counters()["ir_builds"] == builds + 1  # a hit never builds IR
    assert s["bytes"] > 0
    xn, wn = x.numpy(), w.numpy()
    h = np.maximum(xn @ wn, 0)
    ls = h - h.max(1, keepdims=True)
    ls -= np.log(np.exp(ls).sum(1, keepdims=True))
    np.testing.assert_allclose(expect.item(), -ls.sum(), rtol=1e-5)


def key(t) -> str:
    return pf.structural_hash(t)


def test_changed_constant_shape_or_dtype_is_a_miss(lazy):
    """Lazy-only: keys and misses of recorded graphs (in eager
    mode the results are realized leaves)."""
    x = pf.randn(4, 4)
    base = key(x + 1.0)
    assert key(x + 1.0) == base
    assert key(x + 2.0) != base
    assert key(pf.randn(4, 5) + 1.0) != base
    assert key(pf.randn(4, 4, dtype=pf.float64) + 1.0) != base
    (x + 1.0).numpy()
    (x + 2.0).numpy()
    assert pf.cache_stats()["misses"] == 2


@pytest.mark.parametrize("make_pair", [
    lambda a, b: (a + a, a + b),                        # wiring of leaves
    lambda a, b: (a - b, a - a),                        # leaf identity
    lambda a, b: (a * 0.0, a * -0.0),                   # signed zero
    lambda a, b: (a + float("nan"), a + float("inf")),  # special values
    lambda a, b: (a.sum(0), a.sum(1)),                  # attributes
    lambda a, b: (a.sum(0, keepdim=True), a.sum(0).reshape(1, 4)),  # same values, other graph
    lambda a, b: (a.reshape(2, 8), a.reshape(8, 2)),
    lambda a, b: (a.T, a),                             # realized vs op
    lambda a, b: (a + 1, a.double() + 1),               # dtype
    lambda a, b: (a.int() + 1, a.int() + 2),            # int constants
    lambda a, b: (pf.gelu(a), pf.gelu(a, approximate="tanh")),
    lambda a, b: (pf.split(a, 2)[0], pf.split(a, 2)[1]),  # which result
    lambda a, b: (pf.full([4], 1.0), pf.full([4], 1)),
])
def test_near_identical_graphs_never_share_a_key(make_pair, lazy):
    """Lazy-only: keys of recorded graphs (in eager mode
    realized leaves of equal shape share a key by design)."""
    a, b = pf.randn(4, 4), pf.randn(4, 4)
    p, q = make_pair(a, b)
    assert key(p) != key(q)


def test_record_memo_stays_exact_when_it_fills_and_clears(monkeypatch):
    """record() memoizes shape rules and signatures per op; interned scalar
    constants hit it by identity. Filling and clearing both tables (a small
    limit here) must never mix two constants or two shapes."""
    from pyflame_mlir import core

    monkeypatch.setattr(core, "_MEMO_LIMIT", 8)
    a = pf.randn(3)
    av = a.numpy()
    for i in range(40):
        v = (-1) ** i * i / 7.0
        x = pf.randn(i % 5 + 1)
        y = (a * v).sum(0, keepdim=bool(i % 2)) + x.sum()
        want = np.sum(av * np.float32(v), keepdims=bool(i % 2)) + x.numpy().sum()
        assert y.shape == ((1,) if i % 2 else ())
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-5)
    if not pf.CONFIG.eager:  # (eager: realized leaves of one shape share a key by design)
        assert key(a * 0.0) != key(a * -0.0)


def test_constants_key_the_same_wherever_they_were_made(lazy):
    """Ops without operands (constants) sort first, whenever they were
    recorded: a scalar shared between training steps, or a constant made
    early, leaves the structure (and the cache key) unchanged.
    Lazy-only: keys and hits of recorded graphs."""
    x = pf.randn(4)
    c = pf.full([4], 2.0)
    early = x.exp() * c
    a = x.exp()
    late = a * pf.full([4], 2.0)
    assert key(early) == key(late)
    np.testing.assert_allclose(early.numpy(), np.exp(x.numpy()) * 2, rtol=1e-6)
    np.testing.assert_allclose(late.numpy(), np.exp(x.numpy()) * 2, rtol=1e-6)
    assert pf.cache_stats() == {**pf.cache_stats(), "hits": 1, "misses": 1}


def test_shared_scalar_operands_stay_private(lazy):
    """``t * 0.5`` shares one constant for 0.5 between all such products; it
    is never handed out, so realizing or differentiating results leaves it a
    lazy constant that every later graph can still use.
    Lazy-only: it reads the recorded node of ``y``."""
    x = pf.tensor(np.arange(4, dtype=np.float32), requires_grad=True)
    y = x * 0.5
    (y * 0.5).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.25] * 4)
    const = y._node.inputs[1]
    assert const._node is not None and const._ag is None
    z = pf.tensor(np.ones(4, np.float32)) * 0.5
    assert z._node.inputs[1] is const
    np.testing.assert_allclose(z.numpy(), [0.5] * 4)
    assert const.is_lazy


def test_same_structure_with_swapped_leaves_shares_a_key_and_stays_correct():
    a, b = pf.randn(4), pf.randn(4)
    p, q = a - b, b - a  # one function, arguments passed in a different order
    assert key(p) == key(q)
    np.testing.assert_array_equal(p.numpy(), a.numpy() - b.numpy())
    np.testing.assert_array_equal(q.numpy(), b.numpy() - a.numpy())
    assert pf.cache_stats()["hits"] == 1


def test_output_order_and_multiplicity_are_part_of_the_key(lazy):
    """Lazy-only: keys of recorded graphs."""
    a = pf.randn(3)
    x, y = a.exp(), a.sin()
    assert pf.structural_hash([x, y]) != pf.structural_hash([y, x])
    assert pf.structural_hash([x, x]) != pf.structural_hash([x])


def test_pipeline_and_backend_are_part_of_the_key():
    a = pf.randn(3)
    y = a.exp()
    assert pf.structural_hash(y, optimize=True) != pf.structural_hash(y, optimize=False)



def test_config_key_follows_every_setting_it_reads(monkeypatch):
    """The evaluation key's config part is memoized, yet a pipeline set, a
    backend's settings token, or a backend replaced after first use all count."""
    import dataclasses

    from pyflame_mlir.compiler import config_key

    before = config_key()
    prev = pf.get_pipeline()
    pf.set_pipeline("cse,dce")
    try:
        assert config_key()[1] == "cse,dce"
    finally:
        pf.set_pipeline(prev)
    assert config_key() == before
    ref = pf.BACKENDS["reference"]
    monkeypatch.setitem(pf.BACKENDS, "reference", dataclasses.replace(ref, token=lambda: 7))
    assert config_key()[2] == 7
    monkeypatch.setitem(pf.BACKENDS, "reference", ref)
    assert config_key() == before
    assert config_key(optimize=False)[1] == ""


def test_same_key_gives_same_results_with_new_data():
    outs = []
    for seed in range(3):
        pf.manual_seed(seed)
        x = pf.randn(5, 3)
        outs.append((pf.softmax(x, 1).numpy(), x.numpy()))
    for y, x in outs:
        e = np.exp(x - x.max(1, keepdims=True))
        np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-6)
    assert pf.cache_stats()["misses"] == 1


HASH_PROGRAM = """
import pyflame_mlir as pf
x = pf.randn(4, 8); w = pf.randn(8, 2)
print(pf.structural_hash(pf.softmax(pf.relu(x @ w + 0.5), dim=1)))
"""


def test_structural_hash_is_stable_across_processes():
    runs = [subprocess.run([sys.executable, "-c", HASH_PROGRAM], capture_output=True,
                           text=True, check=True, env={"PYTHONHASHSEED": str(s),
                                                       "PATH": ""}).stdout
            for s in (1, 2)]
    assert runs[0] == runs[1] and len(runs[0].strip()) == 40


def test_clear_cache_and_stats():
    pf.exp(pf.randn(2)).numpy()
    assert pf.cache_stats()["entries"] == 1
    pf.clear_cache()
    assert pf.cache_stats() == {"hits": 0, "misses": 0, "entries": 0, "bytes": 0}


def test_a_full_cache_evicts_the_least_recently_used_graph(monkeypatch):
    """Past ``max_entries`` the entry unused for longest goes, not the oldest
    made: a graph hit after others were made stays compiled."""
    from pyflame_mlir.compiler import CACHE

    monkeypatch.setattr(CACHE, "max_entries", 3)
    x = pf.randn(3)
    graphs = [lambda: pf.exp(x), lambda: pf.sin(x), lambda: pf.cos(x), lambda: pf.tanh(x)]
    for g in graphs[:3]:
        g().numpy()
    graphs[0]().numpy()  # a hit: exp is now the most recently used
    graphs[3]().numpy()  # a miss past the limit: sin (least recently used) goes
    s = pf.cache_stats()
    assert (s["misses"], s["hits"], s["entries"]) == (4, 1, 3)
    graphs[0]().numpy()
    graphs[2]().numpy()
    assert pf.cache_stats()["hits"] == 3  # exp and cos stayed
    np.testing.assert_allclose(graphs[1]().numpy(), np.sin(x.numpy()), rtol=1e-6)
    assert pf.cache_stats()["misses"] == 5  # sin was compiled again
