"""``torch.func.vmap``'s ``randomness`` (func.py): a random draw inside the
mapped function raises torch's error in the default 'error' mode and a clear
NotImplementedError with 'different' (pyflame draws once per call, shared by
the examples: torch's 'same', which works); no draw, no error."""

from __future__ import annotations

import pytest
import torch

import pyflame_mlir as pf


def _dropout(L):
    return lambda v: L.nn.functional.dropout(v, 0.5)


def test_random_draw_in_error_mode_raises_as_torch() -> None:
    for L in (torch, pf):
        with pytest.raises(RuntimeError, match="randomness error mode"):
            L.func.vmap(_dropout(L))(L.ones(3, 4))
        with pytest.raises(RuntimeError, match="randomness error mode"):
            L.func.vmap(lambda v, L=L: v + L.randn(4))(L.ones(3, 4))


def test_different_randomness_refuses_rather_than_sharing_the_draw() -> None:
    with pytest.raises(NotImplementedError, match="randomness='different'"):
        pf.func.vmap(_dropout(pf), randomness="different")(pf.ones(3, 4))


def test_same_randomness_shares_one_draw_and_no_draw_needs_no_mode() -> None:
    out = pf.func.vmap(_dropout(pf), randomness="same")(pf.ones(3, 1000)).numpy()
    assert (out[0] == out[1]).all() and (out[0] == out[2]).all()
    assert 300 < (out[0] == 0).sum() < 700
    kept = pf.func.vmap(lambda v: pf.nn.functional.dropout(v, 0.5, training=False))(
        pf.ones(3, 4))
    assert (kept.numpy() == 1).all()
    # outside vmap again: draws work
    assert pf.rand(2).shape == (2,)
