"""examples/gpt.py (issue 14's "must show"): the same source, run once with
pyflame and once with torch imported in its place, trains from the same state
dict to the same losses step by step; the loss falls; the training loop
compiles a bounded number of graphs and then hits the cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyflame_mlir as pf

torch = pytest.importorskip("torch")

EXAMPLE = Path(__file__).parents[2] / "examples" / "gpt.py"
PF_IMPORTS = ("import pyflame_mlir as pf\nfrom pyflame_mlir import nn\n"
              "from pyflame_mlir.nn import functional as F")
TORCH_IMPORTS = "import torch as pf\nfrom torch import nn\nfrom torch.nn import functional as F"


def load_example(use_torch: bool) -> dict:
    src = EXAMPLE.read_text()
    assert PF_IMPORTS in src, "the example's imports changed: update this test"
    if use_torch:
        src = src.replace(PF_IMPORTS, TORCH_IMPORTS)
    ns: dict = {"__name__": "gpt_example", "__file__": str(EXAMPLE)}
    exec(compile(src, str(EXAMPLE), "exec"), ns)
    return ns


def test_gpt_matches_torch_step_by_step(mode) -> None:
    steps = 6
    ours, theirs = load_example(False), load_example(True)
    pf.manual_seed(0)
    model = ours["GPT"]()
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    # weight tying: one parameter under two names, as torch's state_dict has it
    assert "head.weight" in state and "tok_emb.weight" in state
    assert model.head.weight is model.tok_emb.weight
    assert len(list(model.parameters())) == len(set(map(id, model.parameters())))
    reference = theirs["GPT"]()
    reference.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    assert reference.head.weight is reference.tok_emb.weight
    # (the arrays of .numpy() share the parameters' memory, as torch's: while they
    # live, each update is computed at once to write them, not in the step's graph)
    del state

    before = pf.cache_stats()
    got = ours["train"](steps, batch=8, log_every=0, model=model)
    want = theirs["train"](steps, batch=8, log_every=0, model=reference)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)
    assert want[-1] < want[0]
    if not pf.CONFIG.eager:  # steps 3.. reuse the compiled step graph
        stats = pf.cache_stats()
        assert stats["misses"] - before["misses"] <= 4
        assert stats["hits"] - before["hits"] >= steps - 4
    # the updates landed identically (AdamW's step is ~lr wherever a gradient is
    # tiny, so f32 rounding in the gradient can move a weight by up to ~lr/10)
    for name, p in model.state_dict().items():
        np.testing.assert_allclose(p.numpy(), reference.state_dict()[name].detach().numpy(),
                                   rtol=1e-3, atol=3e-4, err_msg=name)
