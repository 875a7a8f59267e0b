"""``nn.utils.prune`` against torch 2.13 (nn/utils/prune.py): one program
run with ``L = torch`` and ``L = pf`` from the same weights: masks of the
magnitude and norm methods, pruning again (torch's PruningContainer),
global pruning, custom masks, training through the pruned weight, remove(),
and the parameter/buffer names and order of the state dict."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.utils.prune  # noqa: F401  (torch.nn.utils.prune is not imported by torch)

import pyflame_mlir as pf


def _program(L, state):
    P = L.nn.utils.prune
    L.manual_seed(0)
    m = L.nn.Sequential(L.nn.Conv2d(2, 4, 3), L.nn.Flatten(), L.nn.Linear(4 * 4 * 4, 3))
    if state is not None:
        m.load_state_dict({k: L.tensor(v) for k, v in state.items()})
    state = {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}
    P.l1_unstructured(m[2], "weight", amount=0.3)
    out = [list(m[2].state_dict()), [n for n, _ in m[2].named_parameters()],
           [n for n, _ in m[2].named_buffers()], m[2].weight_mask]
    P.l1_unstructured(m[2], "weight", amount=10)  # 10 more of the remaining
    out.append(m[2].weight_mask)
    P.ln_structured(m[0], "weight", amount=0.5, n=2, dim=0)
    P.ln_structured(m[0], "weight", amount=1, n=1, dim=1)  # the channels left
    out.append(m[0].weight_mask)
    P.l1_unstructured(m[0], "bias", amount=2)
    P.global_unstructured([(m[0], "weight"), (m[2], "weight"), (m[2], "bias")],
                          pruning_method=P.L1Unstructured, amount=0.4)
    out += [m[0].weight_mask, m[2].weight_mask, m[2].bias_mask, m[0].bias_mask]
    P.custom_from_mask(m[2], "bias", mask=L.tensor([1.0, 0.0, 1.0]))
    out.append(m[2].bias_mask)
    x = L.tensor(np.linspace(-1, 1, 144, dtype=np.float32).reshape(2, 2, 6, 6))
    opt = L.optim.SGD(m.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        y = m(x)
        y.pow(2).sum().backward()
        opt.step()
        out += [y, m[2].weight_orig.grad, m[0].weight]
    out.append(P.is_pruned(m))
    P.remove(m[2], "weight")
    P.remove(m[0], "weight")
    out += [list(m.state_dict()), m[2].weight, isinstance(m[2].weight, L.nn.Parameter), m(x)]
    with pytest.raises(ValueError, match="has to be pruned before"):
        P.remove(m[2], "weight")
    return out, state


def test_pruning_program_matches_torch() -> None:
    want, state = _program(torch, None)
    got, _ = _program(pf, state)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        if isinstance(w, torch.Tensor):
            np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5,
                                       atol=1e-6, err_msg=f"item {i}")
        else:
            assert g == w, f"item {i}: {g} vs {w}"


@pytest.mark.parametrize("amount", [-1, 1.5, 100])
def test_bad_amounts_raise_as_torch(amount) -> None:
    for L in (torch, pf):
        with pytest.raises(ValueError):
            L.nn.utils.prune.l1_unstructured(L.nn.Linear(3, 2), "weight", amount=amount)


def test_random_methods_prune_the_amount() -> None:
    m = pf.nn.Linear(10, 8)
    pf.nn.utils.prune.random_unstructured(m, "weight", amount=0.25)
    assert int((m.weight_mask.numpy() == 0).sum()) == 20
    pf.nn.utils.prune.random_structured(m, "weight", amount=3, dim=0)
    rows = (m.weight_mask.numpy() != 0).any(1)
    assert rows.sum() == 5
    assert (m.weight.numpy()[~rows] == 0).all()
