"""torch's TransformerEncoder inference fast path (nested tensors) zeroes the
padded positions of its output; pf reproduces the numbers under the same
conditions and keeps the plain ones elsewhere (nn/transformer.py)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

X = np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32)
MASKS = {"right": [[False, False, False, True, True], [False] * 5],
         "left": [[True, False, False, False, False], [False] * 5],
         "float": [[0.0, 0.0, 0.0, -np.inf, -np.inf], [0.0] * 5], "none": None}


def _run(L, state, nhead, norm_first, batch_first, act, final_norm, grad, mask):
    L.manual_seed(0)
    layer = L.nn.TransformerEncoderLayer(8, nhead, 16, dropout=0.1, batch_first=batch_first,
                                         norm_first=norm_first, activation=act)
    m = L.nn.TransformerEncoder(layer, 2, norm=L.nn.LayerNorm(8) if final_norm else None)
    if state is not None:
        m.load_state_dict({k: L.tensor(v) for k, v in state.items()})
    m.eval()
    x = L.tensor(X if batch_first else X.transpose(1, 0, 2).copy())
    pm = None if MASKS[mask] is None else L.tensor(MASKS[mask])
    if grad:
        y = m(x, src_key_padding_mask=pm)
    else:
        with L.no_grad():
            y = m(x, src_key_padding_mask=pm)
    return y.detach().numpy(), {k: v.detach().numpy() for k, v in m.state_dict().items()}


@pytest.mark.parametrize("nhead,norm_first,batch_first,act,final_norm,grad,mask", [
    c for c in itertools.product([2, 1], [False, True], [True, False], ["relu", "gelu"],
                                 [True, False], [False, True], list(MASKS))
    if c[1:3] == (False, True) or c[0] == 2 and c[5] is False and c[6] == "right"])
def test_encoder_inference_output_matches_torch(nhead, norm_first, batch_first, act,
                                                final_norm, grad, mask) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "enable_nested_tensor is True, but ..."
        want, state = _run(torch, None, nhead, norm_first, batch_first, act, final_norm, grad,
                           mask)
        got, _ = _run(pf, state, nhead, norm_first, batch_first, act, final_norm, grad, mask)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_transformer_inference_with_padded_source_matches_torch() -> None:
    """The decoder attends to the encoder's zeroed padded positions (no
    memory_key_padding_mask): the whole output depends on them."""
    def run(L, state):
        L.manual_seed(0)
        m = L.nn.Transformer(8, 2, 2, 2, 16, batch_first=True)
        if state is not None:
            m.load_state_dict({k: L.tensor(v) for k, v in state.items()})
        m.eval()
        tgt = L.tensor(X[:, :3] * 0.5)
        with L.no_grad():
            y = m(L.tensor(X), tgt, src_key_padding_mask=L.tensor(MASKS["right"]))
        return y.numpy(), {k: v.detach().numpy() for k, v in m.state_dict().items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, state = run(torch, None)
        got, _ = run(pf, state)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
