"""``nn.Embedding(sparse=True)`` + ``optim.SparseAdam`` and
``scale_grad_by_freq`` against torch 2.13: the same program run with
``L = torch`` and ``L = pf`` (nn/sparse_grad.py, optim/adam.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

BATCHES = [[[1, 2, 3, 3]], [[4, 1, 2, 9]], [[2, 2, 2, 2]], [[7, 7, 0, 1]], [[5, 3, 8, 1]]]


def _program(L, opt_name: str, set_to_none: bool, maximize: bool = False,
             padding_idx: int | None = 2) -> list[np.ndarray]:
    emb = L.nn.Embedding(10, 4, padding_idx=padding_idx, sparse=True).double()
    lin = L.nn.Linear(4, 1).double()
    with L.no_grad():
        emb.weight.copy_(L.tensor(np.arange(40.0).reshape(10, 4) / 17 - 1))
        lin.weight.copy_(L.tensor([[0.3, -0.2, 0.5, 0.1]]))
        lin.bias.zero_()
    kw = {"maximize": maximize} if maximize else {}
    opt = getattr(L.optim, opt_name)(list(emb.parameters()), lr=0.05, **kw)
    opt2 = L.optim.Adam(lin.parameters(), lr=0.01)
    out = []
    for b in BATCHES:
        opt.zero_grad(set_to_none=set_to_none)
        opt2.zero_grad(set_to_none=set_to_none)
        y = lin(emb(L.tensor(b))).squeeze(-1)
        # row 6 is looked up with a zero gradient: in torch's sparse gradient, so
        # SparseAdam decays its moments (and moves it once they are nonzero)
        loss = ((y - 0.5) ** 2).mean() + 0 * emb(L.tensor([6])).sum()
        loss.backward()
        opt.step()
        opt2.step()
        out.append(emb.weight.detach().numpy().copy())
    return out


@pytest.mark.parametrize("set_to_none", [True, False])
@pytest.mark.parametrize("opt_name,maximize", [("SparseAdam", False), ("SparseAdam", True),
                                               ("SGD", False), ("Adagrad", False)])
def test_sparse_embedding_training_matches_torch(opt_name, maximize, set_to_none) -> None:
    want = _program(torch, opt_name, set_to_none, maximize)
    got = _program(pf, opt_name, set_to_none, maximize)
    for step, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=f"step {step}")


def test_sparse_adam_leaves_rows_not_looked_up_and_decays_looked_up_zero_rows() -> None:
    """Dense Adam would move every row with a nonzero moment: SparseAdam
    moves only the rows of this step's sparse gradient."""
    got = _program(pf, "SparseAdam", True, padding_idx=None)
    want = _program(torch, "SparseAdam", True, padding_idx=None)
    np.testing.assert_allclose(got[-1], want[-1], rtol=1e-10, atol=1e-12)
    dense = _program(pf, "Adam", True, padding_idx=None)
    assert not np.allclose(dense[-1], want[-1])


def test_sparse_adam_raises_on_dense_gradients_as_torch() -> None:
    for L in (torch, pf):
        lin = L.nn.Linear(3, 2)
        opt = L.optim.SparseAdam(lin.parameters())
        lin(L.ones(1, 3)).sum().backward()
        with pytest.raises(RuntimeError, match="does not support dense gradients"):
            opt.step()


def test_sparse_adam_raises_when_the_weight_is_used_densely_too() -> None:
    """Tied weights: torch's sparse + dense gradient is dense (SparseAdam
    raises); pf sees a gradient outside the rows looked up."""
    for L in (torch, pf):
        emb = L.nn.Embedding(5, 3, sparse=True)
        opt = L.optim.SparseAdam(emb.parameters())
        h = emb(L.tensor([1, 2]))
        (h @ emb.weight.T).sum().backward()
        with pytest.raises(RuntimeError, match="does not support dense gradients"):
            opt.step()


@pytest.mark.parametrize("padding_idx", [None, 1])
def test_scale_grad_by_freq_gradient_matches_torch(padding_idx) -> None:
    idx = [[1, 3, 1, 1], [0, 3, 2, 1]]
    w = np.linspace(-1, 1, 15).reshape(5, 3)
    g = np.linspace(0.5, 2, 24).reshape(2, 4, 3)
    tw = torch.tensor(w, requires_grad=True)
    torch.nn.functional.embedding(torch.tensor(idx), tw, padding_idx,
                                  scale_grad_by_freq=True).backward(torch.tensor(g))
    pw = pf.tensor(w, requires_grad=True)
    pf.nn.functional.embedding(pf.tensor(idx), pw, padding_idx,
                               scale_grad_by_freq=True).backward(pf.tensor(g))
    np.testing.assert_allclose(pw.grad.numpy(), tw.grad.numpy(), rtol=1e-12)


def test_scale_grad_by_freq_with_sparse_raises_as_torch() -> None:
    for L in (torch, pf):
        w = L.ones(4, 2, requires_grad=True)
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse"):
            L.nn.functional.embedding(L.tensor([1, 1]), w, scale_grad_by_freq=True,
                                      sparse=True).sum().backward()


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_sparse_embedding_bag_with_sparse_adam_matches_torch(mode) -> None:
    def program(L) -> list[np.ndarray]:
        bag = L.nn.EmbeddingBag(8, 3, mode=mode, sparse=True, padding_idx=1).double()
        with L.no_grad():
            bag.weight.copy_(L.tensor(np.linspace(-1, 1, 24).reshape(8, 3)))
        opt = L.optim.SparseAdam(bag.parameters(), lr=0.1)
        out = []
        for inp, off in (([2, 1, 3, 3, 0], [0, 2, 2]), ([5, 1], [0, 1]), ([7, 7, 2], [0])):
            opt.zero_grad()
            y = bag(L.tensor(inp), L.tensor(off))
            (y * L.tensor([0.5, -1.0, 2.0], dtype=L.float64)).sum().backward()
            opt.step()
            out.append(bag.weight.detach().numpy().copy())
        return out
    for step, (g, w) in enumerate(zip(program(pf), program(torch))):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=f"step {step}")


def test_sparse_embedding_bag_max_mode_raises_as_torch() -> None:
    with pytest.raises(RuntimeError, match="max mode does not support sparse weights"):
        pf.nn.EmbeddingBag(6, 2, mode="max", sparse=True)(pf.tensor([[1, 2]])).sum().backward()
