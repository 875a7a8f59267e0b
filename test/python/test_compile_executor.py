"""The reference executor's buffer planning (reused ``out=`` buffers, GEMMs
written into planned buffers, donated arguments) never lets a value alias a
live one: random programs of matmuls (with transposed operands), elementwise
ops and reductions, several intermediates returned, agree with numpy in
float64, through the implicit cache and through pf.compile; and a result
handed to the user is never overwritten by a later call."""

from __future__ import annotations

import numpy as np
from _oracles import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

N = 3
OPS = ("matmul", "matmul_t", "t_matmul", "add", "mul", "sub", "tanh", "relu", "sum0")


def _apply(name: str, a, b, lib):
    if name == "matmul":
        return a @ b
    if name == "matmul_t":
        return a @ b.T
    if name == "t_matmul":
        return a.T @ b
    if name == "add":
        return a + b
    if name == "mul":
        return a * b
    if name == "sub":
        return a - b
    if name == "tanh":
        return lib.tanh(a)
    if name == "relu":
        return lib.maximum(a, 0 * a) if lib is np else pf.relu(a)
    return (a.sum(0) if lib is np else a.sum(dim=0)) + b  # broadcast back to N x N


def _program(steps, outs):
    def f(*xs):
        lib = np if isinstance(xs[0], np.ndarray) else pf
        vals = list(xs)
        for name, i, j in steps:
            vals.append(_apply(name, vals[i % len(vals)], vals[j % len(vals)], lib))
        return [vals[len(xs) + k % len(steps)] for k in outs]
    return f


STEPS = st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 20), st.integers(0, 20)),
                 min_size=1, max_size=8)


@settings(max_examples=examples(10), deadline=None)
@given(STEPS, st.lists(st.integers(0, 20), min_size=1, max_size=3), st.integers(0, 2 ** 31))
def test_random_programs_match_numpy_and_results_stay_put(steps, outs, seed):
    f = _program(steps, outs)
    cf = pf.compile(f)
    rng = np.random.default_rng(seed)
    kept = []
    for _ in range(3):
        xs = [rng.uniform(-1, 1, (N, N)).astype(np.float32) for _ in range(2)]
        want = f(*[x.astype(np.float64) for x in xs])
        got_implicit = f(*[pf.tensor(x) for x in xs])
        pf.eval(*got_implicit)
        got_compiled = cf(*[pf.tensor(x) for x in xs])
        for g, h, w in zip(got_implicit, got_compiled, want):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(h.numpy(), w, rtol=1e-4, atol=1e-4)
        kept.append((got_implicit, got_compiled, want))
    for got_implicit, got_compiled, want in kept:  # later calls wrote elsewhere
        for g, h, w in zip(got_implicit, got_compiled, want):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(h.numpy(), w, rtol=1e-4, atol=1e-4)
    assert cf.stats()["hits"] == 2


@settings(max_examples=examples(6), deadline=None)
@given(STEPS, st.integers(0, 2 ** 31))
def test_random_programs_with_a_donated_argument(steps, seed):
    f = _program(steps, [len(steps) - 1])
    cf = pf.compile(f, donate_argnums=0)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        xs = [rng.uniform(-1, 1, (N, N)).astype(np.float32) for _ in range(2)]
        want = f(*[x.astype(np.float64) for x in xs])
        keep = xs[1].copy()
        got = cf(pf.tensor(xs[0]), pf.tensor(xs[1]))
        np.testing.assert_allclose(got[0].numpy(), want[0], rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(xs[1], keep)


def test_a_result_viewing_only_a_new_array_is_handed_out_without_a_copy():
    """A kernel's reshape of its own new array (a bias gradient's ones @ x) is
    handed out as it is; a view of anything another holder sees (an input, a
    buffer, a second view), a part of an array, a transposed or read-only view
    is copied."""
    from pyflame_mlir.runtime.reference import _sole_view

    def check(view: np.ndarray) -> bool:  # (pytest's assert rewriting holds its operands)
        return _sole_view(view)

    fresh = np.ones(6).reshape(2, 3)
    assert check(fresh)
    held = np.ones(6)
    twice = held.reshape(2, 3)
    assert not check(twice)
    del held
    other = twice.reshape(3, 2)  # a second view of the same array
    assert not check(twice)
    del other
    assert check(twice)
    part = np.ones(6)[:3]
    assert not check(part)
    transposed = np.ones((2, 3)).T
    assert not check(transposed)
    ro = np.ones(6)
    ro.flags.writeable = False
    v = ro.reshape(2, 3)
    del ro
    assert not check(v)

    x0 = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    cf = pf.compile(lambda x: (x * 2).sum(0))
    got = [cf(pf.tensor(x0 + k)) for k in range(3)]
    for k, g in enumerate(got):  # each call's result its own memory, the right values
        np.testing.assert_allclose(g.numpy(), ((x0 + k) * 2).sum(0), rtol=1e-5, atol=1e-4)
    assert cf.stats()["hits"] == 2
