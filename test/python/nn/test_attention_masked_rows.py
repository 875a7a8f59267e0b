"""A query whose keys are all masked, against torch 2.13: scaled_dot_product_attention
(and MultiheadAttention without need_weights, which uses it) gives 0s and finite
gradients (torch's _safe_softmax); need_weights=True and torch's native fast
paths (eval, no gradient needed) give NaN (nn/functional.py, nn/layers.py,
nn/transformer.py)."""

from __future__ import annotations

import contextlib
import itertools
import warnings

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

Q = np.random.default_rng(0).standard_normal((1, 2, 3, 4))
BOOL = np.array([[False, False, False], [True, False, True], [False, False, False]])


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_sdpa_fully_masked_rows_are_zero_with_finite_gradients(kind) -> None:
    mask = BOOL if kind == "bool" else np.where(BOOL, 0.0, -np.inf)
    got = []
    for L in (torch, pf):
        q = L.tensor(Q, requires_grad=True)
        o = L.nn.functional.scaled_dot_product_attention(q, q * 2, q, attn_mask=L.tensor(mask))
        (o ** 2).sum().backward()
        got.append((o.detach().numpy(), q.grad.numpy()))
    np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-10, atol=1e-12)
    assert np.isfinite(got[1][1]).all()


X = np.random.default_rng(1).standard_normal((2, 4, 8)).astype(np.float32)
PAD = np.array([[True] * 4, [False, False, True, True]])
ATTN = np.array([[True] * 4, [False, True, True, True], [True] * 4, [False] * 4])


def _attention(L, state, nhead, batch_first, train, grad, need, kind, self_attn, layer):
    L.manual_seed(0)
    mha = L.nn.MultiheadAttention(8, nhead, batch_first=batch_first)
    lay = L.nn.TransformerEncoderLayer(8, nhead, 16, batch_first=batch_first, dropout=0.0)
    if state is not None:
        mha.load_state_dict({k: L.tensor(v) for k, v in state[0].items()})
        lay.load_state_dict({k: L.tensor(v) for k, v in state[1].items()})
    mha.train(train)
    lay.train(train)
    x = L.tensor(X if batch_first else X.transpose(1, 0, 2).copy())
    kv = x if self_attn else x * 1.5
    kw = {"key_padding_mask": L.tensor(PAD)} if kind == "bool" else \
        {"key_padding_mask": L.tensor(np.where(PAD, -np.inf, 0.0).astype(np.float32))} \
        if kind == "float" else {"attn_mask": L.tensor(ATTN)}
    with contextlib.nullcontext() if grad else L.no_grad():
        if layer:
            out = [lay(x, src_key_padding_mask=kw.get("key_padding_mask"),
                       src_mask=kw.get("attn_mask"))]
        else:
            o, w = mha(x, kv, kv, need_weights=need, **kw)
            out = [o] + ([w] if w is not None else [])
    states = ({k: v.detach().numpy() for k, v in mha.state_dict().items()},
              {k: v.detach().numpy() for k, v in lay.state_dict().items()})
    return [t.detach().numpy() for t in out], states


CASES = [c for c in itertools.product([2, 1], [True, False], [False, True], [False, True],
                                      [False, True], ["bool", "float", "attn"], [True, False],
                                      [False, True])
         if not c[7] or (c[6] and c[4])]


@pytest.mark.parametrize("nhead,batch_first,train,grad,need,kind,self_attn,layer", CASES)
def test_attention_fully_masked_queries_match_torch(nhead, batch_first, train, grad, need,
                                                    kind, self_attn, layer) -> None:
    args = (nhead, batch_first, train, grad, need, kind, self_attn, layer)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, state = _attention(torch, None, *args)
        got, _ = _attention(pf, state, *args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True)
