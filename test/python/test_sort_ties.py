"""Indices among equal values, against torch 2.13 CPU, on tie-heavy inputs
(small integer-valued tensors, some NaN, -0.0 next to 0.0).

Where torch follows a rule, ours are compared exactly: sort and argsort
(stable, also by default), median and nanmedian with a dim (the stable
order's middle element; the first NaN when ``median`` meets one), mode (the
smallest most frequent value, its last occurrence, for slices of up to 16
elements), max/min with a dim and argmax/argmin (the first extreme, the first
NaN), cummax/cummin (the latest element equal to the running extreme). topk
and kthvalue follow no rule we can reproduce (see ``TIES_PICK_ANY`` in
test_opinfo.py): their values are compared and their indices must select
them; topk's are exactly torch's where torch's selection is an insertion sort
(n <= 3).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _oracles import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

SETTINGS = settings(max_examples=examples(25), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


@st.composite
def tie_heavy(draw: st.DrawFn, max_side: int = 7, nan: bool = True,
              dtypes: tuple[str, ...] = ("float32", "float64", "int64")
              ) -> tuple[np.ndarray, int]:
    ndim = draw(st.integers(1, 3), label="ndim")
    shape = tuple(draw(st.lists(st.integers(1, max_side), min_size=ndim, max_size=ndim),
                       label="shape"))
    dtype = draw(st.sampled_from(dtypes), label="dtype")
    seed = draw(st.integers(0, 2**31 - 1), label="seed")
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, shape).astype(dtype)
    if dtype.startswith("float"):
        x[rng.random(shape) < 0.15] = -0.0  # equal to 0.0: a tie, not an order
        if nan and draw(st.booleans(), label="nan"):
            x[rng.random(shape) < 0.2] = np.nan
    dim = draw(st.integers(-ndim, ndim - 1), label="dim")
    return x, dim


def same(got: pf.Tensor, want: torch.Tensor, what: str) -> None:
    g, w = got.numpy(), want.numpy()
    assert g.shape == w.shape, f"{what}: shape {g.shape} vs torch {w.shape}"
    if w.dtype.kind == "f":
        # -0.0 and 0.0 are one value; NaN where torch has NaN
        np.testing.assert_array_equal(g, w, err_msg=what)
    else:
        np.testing.assert_array_equal(g, w, err_msg=what)


def selects(x: np.ndarray, values: pf.Tensor, indices: pf.Tensor, dim: int, keepdim: bool,
            what: str) -> None:
    v, i = values.numpy(), indices.numpy()
    if not keepdim:
        v, i = np.expand_dims(v, dim), np.expand_dims(i, dim)
    picked = np.take_along_axis(x, i, dim)
    ok = (picked == v) | (np.isnan(picked) & np.isnan(v)) if x.dtype.kind == "f" else picked == v
    assert ok.all(), f"{what}: indices do not select the returned values"


@SETTINGS
@given(case=tie_heavy(), descending=st.booleans(), stable=st.sampled_from([True, False, None]))
def test_sort_and_argsort_are_torchs_stable_order(case, descending: bool, stable,
                                                   mode: str) -> None:
    x, dim = case
    p, t = pf.from_numpy(x), torch.from_numpy(x)
    kw = {} if stable is None else {"stable": stable}
    got = pf.sort(p, dim, descending, **kw)
    want = torch.sort(t, dim=dim, descending=descending, **kw)
    same(got.values, want.values, "sort values")
    same(got.indices, want.indices, f"sort indices (stable={stable})")
    same(p.argsort(dim, descending), torch.argsort(t, dim=dim, descending=descending),
         "argsort")


@SETTINGS
@given(case=tie_heavy(), keepdim=st.booleans())
def test_median_nanmedian_max_min_indices_are_torchs(case, keepdim: bool, mode: str) -> None:
    x, dim = case
    p, t = pf.from_numpy(x), torch.from_numpy(x)
    pairs = [("median", pf.median(p, dim, keepdim), torch.median(t, dim, keepdim)),
             ("max", pf.max(p, dim, keepdim), torch.max(t, dim, keepdim)),
             ("min", pf.min(p, dim, keepdim), torch.min(t, dim, keepdim))]
    if x.dtype.kind == "f":
        pairs.append(("nanmedian", pf.nanmedian(p, dim, keepdim),
                      torch.nanmedian(t, dim, keepdim)))
    for name, got, want in pairs:
        same(got.values, want.values, f"{name} values")
        same(got.indices, want.indices, f"{name} indices")
    same(pf.argmax(p, dim, keepdim), torch.argmax(t, dim, keepdim), "argmax")
    same(pf.argmin(p, dim, keepdim), torch.argmin(t, dim, keepdim), "argmin")
    for name in ("cummax", "cummin"):
        got, want = getattr(pf, name)(p, dim), getattr(torch, name)(t, dim)
        same(got.values, want.values, f"{name} values")
        same(got.indices, want.indices, f"{name} indices")


@SETTINGS
@given(case=tie_heavy(max_side=16, nan=False), keepdim=st.booleans())
def test_mode_is_the_smallest_most_frequent_value_at_its_last_occurrence(
        case, keepdim: bool, mode: str) -> None:
    x, dim = case
    got = pf.mode(pf.from_numpy(x), dim, keepdim)
    want = torch.mode(torch.from_numpy(x), dim, keepdim)
    same(got.values, want.values, "mode values")
    same(got.indices, want.indices, "mode indices")
    meth = pf.from_numpy(x).mode(dim)
    same(meth.indices, torch.from_numpy(x).mode(dim).indices, "Tensor.mode")


def test_mode_of_long_slices_and_edge_cases() -> None:
    # beyond 16 elements torch's index is its introsort's: the values still match
    rng = np.random.default_rng(3)
    x = rng.integers(0, 5, (3, 40)).astype(np.float32)
    got, want = pf.mode(pf.from_numpy(x), 1), torch.mode(torch.from_numpy(x), 1)
    same(got.values, want.values, "mode values (n = 40)")
    selects(x, got.values, got.indices, 1, False, "mode (n = 40)")
    last = np.array([np.flatnonzero(row == v)[-1] for row, v in zip(x, got.values.numpy())])
    np.testing.assert_array_equal(got.indices.numpy(), last)
    for x in (np.float32(2.5), np.array([True, False, True]), np.zeros((0, 2), np.float32)):
        got, want = pf.mode(pf.from_numpy(np.asarray(x))), torch.mode(torch.from_numpy(
            np.asarray(x)))
        same(got.values, want.values, f"mode of {x!r}")
        same(got.indices, want.indices, f"mode index of {x!r}")
    with pytest.raises(Exception, match="mode.*non-zero size"):
        pf.mode(pf.zeros((2, 0)), 1)


def test_mode_gradient_goes_to_the_returned_index() -> None:
    x = np.array([[1.0, 2.0, 2.0, 1.0, 3.0], [4.0, 4.0, 0.0, 4.0, 0.0]])
    p = pf.from_numpy(x).requires_grad_()
    t = torch.from_numpy(x).requires_grad_()
    w = np.array([2.0, -3.0])
    (pf.mode(p, 1).values * pf.from_numpy(w)).sum().backward()
    (torch.mode(t, 1).values * torch.from_numpy(w)).sum().backward()
    np.testing.assert_array_equal(p.grad.numpy(), t.grad.numpy())


@SETTINGS
@given(case=tie_heavy(), data=st.data())
def test_topk_and_kthvalue_values_match_and_indices_select_them(case, data: st.DataObject,
                                                                mode: str) -> None:
    x, dim = case
    n = x.shape[dim]
    k = data.draw(st.integers(1, n), label="k")
    largest = data.draw(st.booleans(), label="largest")
    keepdim = data.draw(st.booleans(), label="keepdim")
    p, t = pf.from_numpy(x), torch.from_numpy(x)
    got, want = pf.topk(p, k, dim, largest), torch.topk(t, k, dim, largest)
    same(got.values, want.values, "topk values")
    selects(x, got.values, got.indices, dim, True, "topk")
    if n <= 3:  # torch's selection is an insertion sort: stable, as ours
        same(got.indices, want.indices, "topk indices (n <= 3)")
    got, want = pf.kthvalue(p, k, dim, keepdim), torch.kthvalue(t, k, dim, keepdim)
    same(got.values, want.values, "kthvalue values")
    selects(x, got.values, got.indices, dim % x.ndim, keepdim, "kthvalue")


def test_nanmedian_index_of_all_nan_slices_is_torchs() -> None:
    # torch's std::nth_element over elements that all compare equal
    for n in range(1, 41):
        x = np.full((2, n), np.nan, np.float32)
        got = pf.nanmedian(pf.from_numpy(x), 1)
        want = torch.nanmedian(torch.from_numpy(x), 1)
        same(got.indices, want.indices, f"nanmedian index, {n} NaNs")
        same(got.values, want.values, f"nanmedian value, {n} NaNs")
