"""pf.nn.utils.rnn against torch.nn.utils.rnn 2.13: pad_sequence,
pack/pad round trips, and RNN/LSTM/GRU on PackedSequences (same state dict):
outputs and final hidden states per sequence length, float64 gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.nn.utils import rnn as trnn

import pyflame_mlir as pf
from pyflame_mlir.nn.utils import rnn as prnn

RNG = np.random.default_rng(0)


def _seqs(lengths, feat=3):
    return [RNG.normal(size=(n, feat)) for n in lengths]


def close(a, e, rtol=1e-10, atol=1e-12):
    a = a.numpy() if isinstance(a, pf.Tensor) else np.asarray(a)
    e = e.detach().numpy() if isinstance(e, torch.Tensor) else np.asarray(e)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    seqs = _seqs([4, 1, 3])
    p = prnn.pad_sequence([pf.tensor(s) for s in seqs], batch_first=batch_first,
                          padding_value=-7.0, padding_side=side)
    t = trnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first=batch_first,
                          padding_value=-7.0, padding_side=side)
    close(p, t)
    with pytest.raises(ValueError, match="padding_side"):
        prnn.pad_sequence([pf.tensor(seqs[0])], padding_side="middle")


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_pad_round_trip(enforce_sorted, batch_first):
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    seqs = _seqs(lengths)
    tp = trnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first=batch_first)
    pp = pf.tensor(tp.numpy())
    tpk = trnn.pack_padded_sequence(tp, lengths, batch_first=batch_first,
                                    enforce_sorted=enforce_sorted)
    ppk = prnn.pack_padded_sequence(pp, lengths, batch_first=batch_first,
                                    enforce_sorted=enforce_sorted)
    close(ppk.batch_sizes, tpk.batch_sizes)
    if not enforce_sorted:
        # ties may be ordered differently by torch's sort: compare via the lengths
        np.testing.assert_array_equal(np.array(lengths)[ppk.sorted_indices.numpy()],
                                      np.array(lengths)[tpk.sorted_indices.numpy()])
    else:
        close(ppk.data, tpk.data)
    padded, lens = prnn.pad_packed_sequence(ppk, batch_first=batch_first, padding_value=2.5,
                                            total_length=6)
    tpadded, tlens = trnn.pad_packed_sequence(tpk, batch_first=batch_first, padding_value=2.5,
                                              total_length=6)
    close(padded, tpadded)
    close(lens, tlens)
    assert lens.dtype == pf.int64
    un = prnn.unpack_sequence(prnn.pack_sequence([pf.tensor(s) for s in seqs],
                                                 enforce_sorted=False))
    for a, s in zip(un, seqs, strict=True):
        close(a, s)


def test_pack_errors():
    x = pf.zeros(4, 2, 3)
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        prnn.pack_padded_sequence(x, [1, 3])
    with pytest.raises(RuntimeError, match="greater than 0"):
        prnn.pack_padded_sequence(x, [3, 0])
    with pytest.raises(ValueError, match="total_length"):
        prnn.pad_packed_sequence(prnn.pack_padded_sequence(x, [4, 2]), total_length=2)


def _pair(kind, **kw):
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(3, 4, dtype=torch.float64, **kw)
    pm = getattr(pf.nn, kind)(3, 4, dtype=pf.float64, **kw)
    pm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    return pm, tm


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional,layers", [(False, 1), (True, 2)])
def test_rnn_on_packed_sequences_matches_torch(kind, bidirectional, layers):
    pm, tm = _pair(kind, num_layers=layers, bidirectional=bidirectional)
    lengths = [2, 5, 1, 4]
    seqs = _seqs(lengths)
    tx = [torch.tensor(s, requires_grad=True) for s in seqs]
    px = [pf.tensor(s, requires_grad=True) for s in seqs]
    tpk = trnn.pack_sequence(tx, enforce_sorted=False)
    ppk = prnn.pack_sequence(px, enforce_sorted=False)
    dirs = 2 if bidirectional else 1
    h0 = RNG.normal(size=(layers * dirs, 4, 4))
    hx_t = torch.tensor(h0)
    hx_p = pf.tensor(h0)
    if kind == "LSTM":
        c0 = RNG.normal(size=(layers * dirs, 4, 4))
        hx_t, hx_p = (hx_t, torch.tensor(c0)), (hx_p, pf.tensor(c0))
    tout, th = tm(tpk, hx_t)
    pout, ph = pm(ppk, hx_p)
    assert isinstance(pout, prnn.PackedSequence)
    tpad, tl = trnn.pad_packed_sequence(tout, batch_first=True)
    ppad, pl = prnn.pad_packed_sequence(pout, batch_first=True)
    close(ppad, tpad)
    close(pl, tl)
    th, ph = (th if kind == "LSTM" else (th,)), (ph if kind == "LSTM" else (ph,))
    for a, e in zip(ph, th, strict=True):
        close(a, e)  # the final states at each sequence's own length
    # gradients through packing, the masked recurrence and unpacking
    w = RNG.normal(size=tpad.shape)
    ((tpad * torch.tensor(w)).sum() + sum(h.sum() for h in th)).backward()
    ((ppad * pf.tensor(w)).sum() + sum(h.sum() for h in ph)).backward()
    for a, e in zip(px, tx, strict=True):
        close(a.grad, e.grad, rtol=1e-9, atol=1e-11)
    name = "weight_hh_l0"
    close(getattr(pm, name).grad, getattr(tm, name).grad, rtol=1e-9, atol=1e-11)


def test_lstm_packed_training_steps_match_torch():
    pm, tm = _pair("LSTM", batch_first=True)
    lengths = [4, 2, 3]
    seqs = _seqs(lengths)
    popt = pf.optim.SGD(pm.parameters(), lr=0.1)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1)
    for _ in range(3):
        tpk = trnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
        ppk = prnn.pack_sequence([pf.tensor(s) for s in seqs], enforce_sorted=False)
        _, (th, _) = tm(tpk)
        _, (ph, _) = pm(ppk)
        tl, pl = (th ** 2).mean(), (ph ** 2).mean()
        topt.zero_grad()
        popt.zero_grad()
        tl.backward()
        pl.backward()
        topt.step()
        popt.step()
        close(pl, tl)
    for name, tp in tm.named_parameters():
        close(dict(pm.named_parameters())[name], tp, rtol=1e-9)
