"""Issue 16 leftovers: the tiny GPT block of examples/train_on_wse.py trained in mixed
precision on the WSE simulator (``TinyGPT.forward_half``: f16 compute copies of the
f32 master weights, f16 activations, its data movement in f16 on the PEs; AdamW on
the resident f32 masters) for 20 steps on 2x2 PEs: the losses follow the reference
backend running the same mixed-precision program within ``4 * EPS`` relative
(``EPS = 2**-10``, f16's machine epsilon: the PEs accumulate matmuls and reductions in
f32 where numpy may round partial sums in f16, and erf is a polynomial in f32 there).

Marked slow but run in CI (unlike the f32 test of the block, test_gpt_block.py,
opt-in with ``PYFLAME_CSL_GPT=1``): compiling the step takes ~90 s of CPU (the
placement search re-plans the whole program per matmul candidate), each further
step ~1 s; the test measured 147 s on a quiet machine. It is the issue's f16
training check of the transformer block, so CI keeps it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir.runtime import csl_backend

EXAMPLE = Path(__file__).parents[3] / "examples" / "train_on_wse.py"
VOCAB, CONTEXT, D_MODEL, HEADS, STEPS = 8, 4, 8, 2, 20
EPS = float(np.finfo(np.float16).eps)


@pytest.fixture
def example():
    ns: dict = {"__name__": "train_on_wse", "__file__": str(EXAMPLE)}
    exec(compile(EXAMPLE.read_text(), str(EXAMPLE), "exec"), ns)
    prev_backend = pf.get_backend()
    prev = csl_backend.configure(mode="simulator", grid=(2, 2))
    try:
        yield ns
    finally:
        pf.set_backend(prev_backend)
        csl_backend.configure(**vars(prev))


@pytest.mark.slow
def test_gpt_block_trains_in_f16_on_the_wafer_as_on_the_reference(example):
    data = example["gpt_data"](STEPS, 1, VOCAB, CONTEXT)

    def make():
        model = example["TinyGPT"](VOCAB, CONTEXT, D_MODEL, HEADS)
        example["init_params"](model)
        return model

    def loss_fn(m, x, y):
        return m.forward_half(x, y)

    ref = list(example["train"]("reference", make, data, loss_fn, lr=1e-2))
    runs, got = [], []
    for loss in example["train"]("csl", make, data, loss_fn, lr=1e-2):
        got.append(loss)
        runs.append(csl_backend.last_run())
    np.testing.assert_allclose(got, ref, rtol=4 * EPS)
    assert max(ref[:5]) != min(ref[:5])  # the steps change the model
    program = runs[-1].program
    assert program.resident, "the f32 masters and AdamW's moments stay in PE memory"
    assert not any(io.half for io in program.inputs)  # no f16 state crosses the host
    text = str(program.module)
    assert "csl.fmovh" in text and "csl.fmachs" in text  # f16 moves, f16 products
    ids_and_targets, mask = 4 * 2 * CONTEXT, 4 * CONTEXT * CONTEXT
    for run in runs[1:]:
        t = run.traffic  # the batch, the causal-mask buffer and the step's scalars in
        assert ids_and_targets + mask <= t.h2d_bytes < ids_and_targets + mask + 64, t
        assert t.d2h_bytes == 4, t  # the loss
