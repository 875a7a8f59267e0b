"""Issue 17: the factor rules of the indexing, shape, scan, sorting and nn ops
(``dialects/sharding.py``): single-device code over inputs sharded on a 2x2
mesh, partitioned (``pf.sharding.partition``), gives torch's values and
gradients; propagation warns of no op without a rule, and the dimensions the
rules keep split stay split in the device program."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from torch.nn import functional as TF

import pyflame_mlir as pf
from pyflame_mlir import P
from pyflame_mlir.nn import functional as F

MESH = pf.DeviceMesh((2, 2), ("a", "b"))
RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 8))
X3 = RNG.standard_normal((4, 4, 8))
IDX = RNG.integers(0, 8, (4, 6))
TABLE = RNG.standard_normal((16, 8))
IDS = RNG.integers(0, 16, (4, 6))
W8, B8 = RNG.standard_normal(8), RNG.standard_normal(8)
TARGET = RNG.integers(0, 8, 4)


def _gelu_attention(lib, q):
    """softmax(q q^T / sqrt(d)) q over (batch, heads, T, d), heads split."""
    f = TF if lib is torch else F
    return f.scaled_dot_product_attention(q, q * 0.5, q * 2.0, is_causal=True)


# name, f(lib, x, *extra) -> tensor, global input, its spec, extra inputs (numpy, spec),
# the local shape the device program must hold for the output (None: not checked)
CASES = [
    ("embedding_vocab_split", lambda lib, w, ids: (TF if lib is torch else F).embedding(ids, w),
     TABLE, P("a"), [(IDS, P("b"))], "2x6x8"),
    ("vocab_parallel_tied_head",  # Megatron: a masked lookup in each vocabulary block
     lambda lib, w, ids: lib.log_softmax(
         (TF if lib is torch else F).embedding(ids, w) @ w.T, dim=-1),
     TABLE, P("b"), [(IDS, P("a"))], "2x6x16"),
    ("index_select", lambda lib, x, i: lib.index_select(x, 1, i), X, P("a", "b"),
     [(np.array([7, 0, 3, 3, 5]), P())], "2x5"),
    ("take_along_dim", lambda lib, x, i: lib.take_along_dim(x, i, dim=1), X, P("a", "b"),
     [(IDX, P("a"))], "2x6"),
    ("scatter_add", lambda lib, x, i: x.scatter_add(1, i, x[:, :6] * 3.0), X, P("a", "b"),
     [(IDX, P("a"))], "2x8"),
    ("slice_whole_dim_split", lambda lib, x: x[:, 2:7:2] * 2.0, X, P("a", "b"), [], "2x3"),
    ("narrow", lambda lib, x: lib.narrow(x, 0, 1, 2), X, P("a", "b"), [], "2x4"),
    ("pad", lambda lib, x: (TF if lib is torch else F).pad(x, (1, 2)), X, P("a", "b"), [],
     "2x11"),
    ("concat", lambda lib, x: lib.cat([x, x * 2.0], 0), X, P("a", "b"), [], "8x4"),
    ("split", lambda lib, x: x.split(3, dim=1)[1] * 1.5, X, P("a", "b"), [], "2x3"),
    ("cumsum_split_dim", lambda lib, x: lib.cumsum(x, dim=1), X, P("a", "b"), [], "2x8"),
    ("cumsum_other_dim", lambda lib, x: lib.cumsum(x, dim=0), X, P("a", "b"), [], "4x4"),
    ("logcumsumexp", lambda lib, x: lib.logcumsumexp(x, dim=1), X, P("a", "b"), [], "2x8"),
    ("cummax", lambda lib, x: lib.cummax(x, dim=1)[0], X, P("a", "b"), [], "2x8"),
    ("sort", lambda lib, x: lib.sort(x, dim=1)[0], X, P("a", "b"), [], "2x8"),
    ("topk", lambda lib, x: lib.topk(x, 3, dim=1)[0], X, P("a", "b"), [], "2x3"),
    ("argmax_rows", lambda lib, x: x * lib.argmax(x, dim=1, keepdim=True), X, P("a", "b"),
     [], None),
    ("softmax", lambda lib, x: lib.softmax(x, dim=1), X, P("a", "b"), [], "2x8"),
    ("log_softmax", lambda lib, x: lib.log_softmax(x, dim=-1), X3, P("a", "b"), [], "2x2x8"),
    ("layer_norm", lambda lib, x, w, b: (TF if lib is torch else F).layer_norm(x, (8,), w, b),
     X3, P("a", "b"), [(W8, P()), (B8, P())], "2x2x8"),
    ("attention_heads", _gelu_attention, RNG.standard_normal((2, 4, 4, 4)), P("a", "b"), [],
     "1x2x4x4"),
    ("cross_entropy", lambda lib, x, t: (TF if lib is torch else F).cross_entropy(x, t), X,
     P("a"), [(TARGET, P("a"))], None),
]


def _float(a: np.ndarray) -> bool:
    return a.dtype.kind == "f"


@pytest.mark.parametrize("name,f,x,spec,extra,local", CASES, ids=[c[0] for c in CASES])
def test_sharded_equals_unsharded(name, f, x, spec, extra, local):
    xs = pf.shard(pf.tensor(x).requires_grad_(), MESH, spec)
    others = [pf.shard(pf.tensor(a).requires_grad_() if _float(a) else pf.tensor(a), MESH, s)
              for a, s in extra]
    fn = pf.sharding.partition(lambda *a: f(pf, *a))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no op replicated for want of a rule
        out = fn(xs, *others)
    r = RNG.standard_normal(out.shape)
    (out * pf.tensor(r)).sum().backward()

    tx = torch.tensor(x, requires_grad=True)
    tothers = [torch.tensor(a, requires_grad=_float(a)) for a, _ in extra]
    want = f(torch, tx, *tothers)
    (want * torch.tensor(r)).sum().backward()
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(xs.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
    for o, t in zip(others, tothers, strict=True):
        if t.requires_grad:
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)
    ir = fn.last.device_ir
    if name.startswith(("embedding", "vocab")):  # masked lookups, no gathered table
        assert "pyflame.iota" in ir and "sharding.all_reduce" in ir
        assert "tensor<8x8xf64> -> tensor<16x8xf64>" not in ir  # the table stays split
    if local is not None:  # the device program's result: the split dims stay split
        ret = ir[ir.index("func.return"):]
        assert f"tensor<{local}xf64>" in ret, ret[:300]
