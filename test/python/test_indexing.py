"""Basic indexing (``__getitem__``: ints, slices with steps, None, Ellipsis)
against numpy and torch on hypothesis-drawn shapes and indices."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _oracles import assert_close, dtypes, examples, random_array, seeds, shapes, to_torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

SETTINGS = settings(max_examples=examples(40), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])

bounds = st.one_of(st.none(), st.integers(-7, 7))


@st.composite
def basic_index(draw, ndim: int):
    items: list = []
    ellipsis = False
    for _ in range(draw(st.integers(0, ndim + 2))):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis"]))
        if kind == "ellipsis" and not ellipsis:
            items.append(Ellipsis)
            ellipsis = True
        elif kind == "none":
            items.append(None)
        elif kind == "int":
            items.append(draw(st.integers(-6, 6)))
        else:
            items.append(slice(draw(bounds), draw(bounds),
                               draw(st.one_of(st.none(), st.integers(1, 3)))))
    if len(items) == 1 and draw(st.booleans()):
        return items[0]  # a bare index, not a 1-tuple
    return tuple(items)


@SETTINGS
@given(shape=shapes(max_dims=4, max_side=5), dt=dtypes, seed=seeds, data=st.data())
def test_getitem_matches_numpy_and_torch(shape, dt, seed, data):
    idx = data.draw(basic_index(len(shape)))
    a = random_array(np.random.default_rng(seed), shape, dt)
    x = pf.from_numpy(a)
    try:
        expected = a[idx]
    except IndexError:
        before = pf.counters()["evaluations"]
        with pytest.raises(IndexError):
            x[idx]
        with pytest.raises(IndexError):
            to_torch(a)[idx]  # torch agrees that this index is bad
        assert pf.counters()["evaluations"] == before
        return
    y = x[idx]
    assert y.shape == np.shape(expected), (idx, y.shape)
    assert_close(y, np.asarray(expected), rtol=0, atol=0, what=f"{shape}[{idx!r}]")
    assert_close(y, to_torch(a)[idx], rtol=0, atol=0, what=f"{shape}[{idx!r}] vs torch")


@SETTINGS
@given(shape=shapes(min_dims=1, max_dims=3, min_side=1, max_side=5), seed=seeds,
       data=st.data())
def test_chained_indexing_of_a_promise(shape, seed, data, lazy):
    a = random_array(np.random.default_rng(seed), shape, pf.float32)
    i1 = data.draw(basic_index(len(shape)))
    try:
        mid = a[i1]
        i2 = data.draw(basic_index(np.ndim(mid)))
        expected = np.asarray(mid)[i2]
    except IndexError:
        return
    y = (pf.from_numpy(a) * 2)[i1][i2] + 1
    assert pf.is_lazy(y)
    assert_close(y, np.asarray(expected) * 2 + 1, what=f"[{i1!r}][{i2!r}]")


def test_fixed_indices():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x, t = pf.from_numpy(a), to_torch(a)
    for idx in [0, -1, (1, 2), (1, 2, 3), (-1, -1, -1), slice(None), slice(1, None),
                (slice(None, None, 2), slice(1, 4, 2)), (Ellipsis, 0), (Ellipsis, slice(3, 1)),
                (None, 0, None, Ellipsis, None), (0, Ellipsis, None),
                (slice(-100, 100), slice(-2, None), slice(None, -3)), (), Ellipsis, None,
                (np.int64(1), np.int32(-2)), (slice(5, 10),), (1, slice(None), 4)]:
        assert_close(x[idx], t[idx], rtol=0, atol=0, what=repr(idx))
        assert_close(x[idx], a[idx], rtol=0, atol=0, what=repr(idx))


def test_zero_dim_and_empty():
    s = pf.tensor(3.5)
    ts = torch.tensor(3.5)
    for idx in [(), Ellipsis, None, (None, None), (Ellipsis, None)]:
        assert_close(s[idx], ts[idx], rtol=0, atol=0, what=repr(idx))
    with pytest.raises(IndexError):
        s[0]
    e = pf.zeros(0, 3)
    assert e[:, 1].shape == (0,) and e[1:].shape == (0, 3) and e[..., None].shape == (0, 3, 1)
    with pytest.raises(IndexError, match="out of bounds"):
        e[0]


def test_index_errors(lazy):
    x = pf.zeros(3, 4) + 1
    before = pf.counters()["evaluations"]
    with pytest.raises(IndexError, match="out of bounds"):
        x[3]
    with pytest.raises(IndexError, match="out of bounds"):
        x[0, -5]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="ellipsis"):
        x[..., 0, ...]
    # torch refuses negative steps; pf takes numpy's (a superset)
    assert x[::-1, ::-2].shape == (3, 2)  # (values: test_jax_negative_steps.py)
    with pytest.raises(ValueError, match="step"):
        to_torch(np.zeros(3))[::-1]
    with pytest.raises(ValueError):
        x[::0]
    # (advanced indexing with lists and int/bool tensors is supported since issue 14:
    # test_indexing_adv.py; a Python bool, a float and a string still raise)
    for advanced in (True, 1.5, "a"):
        with pytest.raises(TypeError, match="advanced indexing|only ints"):
            x[advanced]
    with pytest.raises(IndexError, match="out of bounds"):
        x[3] = 1.0  # (issue 13: t[idx] = v updates in place; a bad index raises)
    assert pf.counters()["evaluations"] == before, "index errors come at record time"
    assert pf.is_lazy(x)
