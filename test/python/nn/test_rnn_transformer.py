"""RNN/LSTM/GRU (+ cells) and the Transformer modules against torch's, loaded
from torch's state dict: outputs, final states and float64 gradients."""
import numpy as np
import pytest
import torch

import pyflame_mlir as pf


def _load(ours, theirs):
    assert list(ours.state_dict()) == list(theirs.state_dict())  # names and order
    for (k, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert tuple(a.shape) == tuple(b.shape), k
    ours.load_state_dict({k: pf.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("kw", [{}, {"num_layers": 2, "bidirectional": True},
                                {"batch_first": True, "bias": False},
                                {"nonlinearity": "relu"}])
@pytest.mark.parametrize("with_state", [False, True])
def test_recurrent_layers(cls, kw, with_state):
    if "nonlinearity" in kw and cls != "RNN":
        pytest.skip("nonlinearity is RNN's")
    torch.manual_seed(0)
    theirs = getattr(torch.nn, cls)(3, 4, **kw).double()
    ours = getattr(pf.nn, cls)(3, 4, **kw, dtype="float64")
    _load(ours, theirs)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 3))
    dirs = 2 if kw.get("bidirectional") else 1
    n = 2 if kw.get("batch_first") else 5
    h = rng.standard_normal((kw.get("num_layers", 1) * dirs, n, 4))
    xt, xp = torch.tensor(x, requires_grad=True), pf.tensor(x, requires_grad=True)
    st, sp = None, None
    if with_state:
        st = (torch.tensor(h), torch.tensor(h * 0.5)) if cls == "LSTM" else torch.tensor(h)
        sp = (pf.tensor(h), pf.tensor(h * 0.5)) if cls == "LSTM" else pf.tensor(h)
    out_t, hn_t = theirs(xt, st)
    out_p, hn_p = ours(xp, sp)
    _close(out_p, out_t)
    for a, b in zip(hn_p if cls == "LSTM" else (hn_p,), hn_t if cls == "LSTM" else (hn_t,)):
        _close(a, b)
    (out_t.sum() + (hn_t[0] if cls == "LSTM" else hn_t).pow(2).sum()).backward()
    (out_p.sum() + (hn_p[0] if cls == "LSTM" else hn_p).pow(2).sum()).backward()
    _close(xp.grad, xt.grad)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        _close(p.grad, q.grad)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_unbatched_input(cls):
    theirs = getattr(torch.nn, cls)(3, 4).double()
    ours = getattr(pf.nn, cls)(3, 4, dtype="float64")
    _load(ours, theirs)
    x = np.random.default_rng(2).standard_normal((6, 3))
    out_t, _ = theirs(torch.tensor(x))
    out_p, hn = ours(pf.tensor(x))
    _close(out_p, out_t)
    assert (hn[0] if cls == "LSTM" else hn).shape == (1, 4)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells(cls):
    theirs = getattr(torch.nn, cls)(3, 4).double()
    ours = getattr(pf.nn, cls)(3, 4, dtype="float64")
    _load(ours, theirs)
    rng = np.random.default_rng(3)
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    if cls == "LSTMCell":
        ht, ct = theirs(torch.tensor(x), (torch.tensor(h), torch.tensor(h)))
        hp, cp = ours(pf.tensor(x), (pf.tensor(h), pf.tensor(h)))
        _close(hp, ht)
        _close(cp, ct)
    else:
        _close(ours(pf.tensor(x), pf.tensor(h)), theirs(torch.tensor(x), torch.tensor(h)))
        _close(ours(pf.tensor(x[0])), theirs(torch.tensor(x[0])))


def test_recurrent_errors():
    with pytest.raises(ValueError, match="input_size"):
        pf.nn.GRU(3, 4)(pf.ones(5, 2, 7))
    with pytest.raises(RuntimeError, match="hidden size"):
        pf.nn.RNN(3, 4)(pf.ones(5, 2, 3), pf.zeros(1, 3, 4))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer(batch_first, norm_first):
    torch.manual_seed(0)
    kw = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
              dim_feedforward=16, dropout=0.0, batch_first=batch_first, norm_first=norm_first,
              activation="gelu")
    theirs = torch.nn.Transformer(**kw).double()
    ours = pf.nn.Transformer(**kw, dtype="float64")
    _load(ours, theirs)
    rng = np.random.default_rng(4)
    src = rng.standard_normal((2, 5, 8) if batch_first else (5, 2, 8))
    tgt = rng.standard_normal((2, 4, 8) if batch_first else (4, 2, 8))
    kpm = np.zeros((2, 5), bool)
    kpm[1, -2:] = True
    mask_t = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    mask_p = pf.nn.Transformer.generate_square_subsequent_mask(4, dtype="float64")
    np.testing.assert_array_equal(mask_p.numpy(), mask_t.numpy())
    st, sp = torch.tensor(src, requires_grad=True), pf.tensor(src, requires_grad=True)
    out_t = theirs(st, torch.tensor(tgt), tgt_mask=mask_t,
                   src_key_padding_mask=torch.tensor(kpm),
                   memory_key_padding_mask=torch.tensor(kpm))
    out_p = ours(sp, pf.tensor(tgt), tgt_mask=mask_p, src_key_padding_mask=pf.tensor(kpm),
                 memory_key_padding_mask=pf.tensor(kpm))
    _close(out_p, out_t, 1e-9)
    out_t.pow(2).sum().backward()
    out_p.pow(2).sum().backward()
    _close(sp.grad, st.grad, 1e-9)


def test_encoder_stack_is_independent_copies():
    layer = pf.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    enc = pf.nn.TransformerEncoder(layer, 3, norm=pf.nn.LayerNorm(8))
    w = [lyr.linear1.weight for lyr in enc.layers]
    assert w[0] is not w[1] and len(list(enc.parameters())) == 3 * 12 + 2
    theirs = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 3,
        norm=torch.nn.LayerNorm(8), enable_nested_tensor=False).double()
    enc64 = pf.nn.TransformerEncoder(
        pf.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                      dtype="float64"), 3, norm=pf.nn.LayerNorm(8))
    _load(enc64, theirs)
    x = np.random.default_rng(5).standard_normal((2, 6, 8))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(6, dtype=torch.float64)
    _close(enc64(pf.tensor(x), mask=pf.tensor(mask.numpy()), is_causal=True),
           theirs(torch.tensor(x), mask=mask, is_causal=True), 1e-9)
