"""Train an MLP and a tiny GPT block on the simulated wafer with AdamW: the weights
stay in PE memory.

Each training step (forward, backward and the AdamW update: one graph) is one
launch on the WSE simulator; parameters and optimizer state are resident in the
PEs' SRAM between steps, so the host sends the batch in and reads the loss out.
The same model is trained on the reference (numpy) backend beside it: the losses
follow it step by step. Every step prints ``pf.csl_report()``'s headline (cycles,
FLOP/cycle against the f32 roofline, host traffic); the last step's full report
is printed at the end, and with ``--out DIR`` the step's SDK project is written
there (``run.py --steps N`` trains with the state resident) with the picture of
the grid (``grid.png``: busy fraction and resident state per PE) next to it.

The GPT block (``--model gpt``) is a token embedding plus a learned position
table, one pre-norm block (layer_norm, causal self-attention with small heads,
an MLP with gelu) and a final layer_norm before the vocabulary head, trained with
cross_entropy: every op of it runs on the PE grid (issue 16).

    python examples/train_on_wse.py                 # the MLP, 2x2 PEs, about a minute
    python examples/train_on_wse.py --model gpt --steps 3
    python examples/train_on_wse.py --steps 20 --grid 4x4 --out /tmp/train_on_wse
    python examples/train_on_wse.py --dtype f16     # the MLP in mixed precision
    python examples/train_on_wse.py --model gpt --dtype f16 --steps 3   # the GPT block too
"""

import argparse
import math
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

import pyflame_mlir as pf
from pyflame_mlir import nn
from pyflame_mlir.nn import functional as F
from pyflame_mlir.runtime import csl_backend


class TinyGPT(nn.Module):
    """Embedding + one pre-norm transformer block + cross_entropy, at grid scale.

    The token ids arrive flattened ([B*T]: the grid's embedding lookup takes a
    vector of row ids) and the position table is added whole (positions 0..T-1)."""

    def __init__(self, vocab: int, context: int, d_model: int, n_head: int):
        super().__init__()
        self.vocab, self.context, self.n_head = vocab, context, n_head
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(pf.zeros(context, d_model))
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                 nn.Linear(4 * d_model, d_model))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.register_buffer("causal", pf.tril(pf.ones(context, context)).view(
            1, 1, context, context))

    def attention(self, x, linear: Callable = lambda m, x: m(x)):
        B, T, C = x.shape
        q, k, v = linear(self.qkv, x).split(C, dim=2)
        heads = [t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v)]
        att = (heads[0] @ heads[1].transpose(-2, -1)) * (1.0 / math.sqrt(C // self.n_head))
        att = att.masked_fill(self.causal == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        return linear(self.proj, (att @ heads[2]).transpose(1, 2).reshape(B, T, C))

    def forward(self, ids, targets):
        B = ids.shape[0] // self.context
        x = self.tok(ids).view(B, self.context, -1) + self.pos
        x = x + self.attention(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, self.vocab), targets)

    def forward_half(self, ids, targets):
        """Mixed precision: the same block on f16 compute copies of the f32 master
        weights (cast at the start of every step, ``@fs2h`` on the PEs) and f16
        activations; the data movement (embedding rows, q/k/v split, head reshapes and
        transposes) stays f16 on the PEs, layer_norm, softmax and gelu run in f32
        between conversions there, and the logits widen to f32 for the loss. The
        gradients flow back through the casts into the f32 masters AdamW updates."""
        half = pf.float16

        def linear(m: nn.Module, x: pf.Tensor) -> pf.Tensor:
            y = x @ m.weight.to(half).T
            return y if m.bias is None else y + m.bias.to(half)

        def norm(m: nn.Module, x: pf.Tensor) -> pf.Tensor:
            return F.layer_norm(x, (x.shape[-1],), m.weight.to(half), m.bias.to(half))

        B = ids.shape[0] // self.context
        x = F.embedding(ids, self.tok.weight.to(half)).view(B, self.context, -1) \
            + self.pos.to(half)
        x = x + self.attention(norm(self.ln1, x), linear)
        x = x + linear(self.mlp[2], F.gelu(linear(self.mlp[0], norm(self.ln2, x))))
        logits = linear(self.head, norm(self.ln_f, x))
        return F.cross_entropy(logits.float().view(-1, self.vocab), targets)


def init_params(model: nn.Module, seed: int = 0) -> None:
    """The same deterministic weights on every backend (scaled normal, norms at 1/0)."""
    rng = np.random.default_rng(seed)
    for name, p in model.named_parameters():
        if name.startswith("ln"):
            continue  # LayerNorm keeps its ones and zeros
        p.data = pf.tensor((rng.standard_normal(p.shape) * 0.3 / np.sqrt(p.shape[-1]))
                           .astype(np.float32))


def gpt_data(steps: int, batch: int, vocab: int, context: int, seed: int = 1
             ) -> list[tuple[np.ndarray, np.ndarray]]:
    """(ids [B*T], next ids [B*T]) of a repeating token pattern with noise."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        start = rng.integers(0, vocab, batch)[:, None]
        seq = (start + np.arange(context + 1) * 3 + rng.integers(0, 2, (batch, context + 1))
               ) % vocab
        out.append((seq[:, :-1].reshape(-1), seq[:, 1:].reshape(-1)))
    return out


def train(backend: str, make_model: Callable[[], nn.Module],
          data: list[tuple[np.ndarray, np.ndarray]], loss_fn: Callable,
          lr: float = 3e-3, on_last: Callable | None = None) -> Iterator[float]:
    """A generator of per-step losses of ``make_model()`` trained with AdamW on
    ``backend`` (the state resident on the wafer on the csl backend)."""
    pf.set_backend(backend)
    model = make_model()
    opt = pf.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    for step, (x, y) in enumerate(data):
        pf.set_backend(backend)
        opt.zero_grad()
        loss = loss_fn(model, pf.tensor(x), pf.tensor(y))
        loss.backward()
        opt.step()
        if on_last is not None and step == len(data) - 1:
            on_last(loss)
        yield loss.item()


def mlp_setup(args: argparse.Namespace, batch: int):
    d_in, hidden, d_out = (int(n) for n in args.sizes.split(","))
    rng = np.random.default_rng(0)
    teacher = rng.standard_normal((d_in, d_out)).astype(np.float32)
    data = []
    for _ in range(args.steps):
        x = rng.standard_normal((batch, d_in)).astype(np.float32)
        y = np.tanh(x @ teacher / np.float32(np.sqrt(d_in))).astype(np.float32)
        # f16: the batch is half precision on the host too (16-bit memcpy: half the bytes)
        data.append((x.astype(np.float16) if args.dtype == "f16" else x, y))

    def make() -> nn.Module:
        model = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, d_out))
        init_params(model)
        return model

    title = f"MLP {d_in}->{hidden}->{d_out}, batch {batch}"
    if args.dtype == "f16":
        return title + ", f16 compute on f32 masters", make, data, mixed_precision_mse
    return title, make, data, lambda m, x, y: ((m(x) - y) ** 2).mean()


def mixed_precision_mse(model: nn.Module, x: pf.Tensor, y: pf.Tensor) -> pf.Tensor:
    """Mixed precision: f16 copies of the f32 master weights (cast at the start of
    every step, ``@fs2h`` on the PEs), an f16 batch (sent as 16-bit data) and f16
    products, the loss in
    f32; the gradients flow back through the casts into the f32 masters, which
    AdamW updates (and which stay resident)."""
    first, last = model[0], model[2]
    half = pf.float16
    h = pf.relu(x.to(half) @ first.weight.to(half).T + first.bias.to(half))
    out = h @ last.weight.to(half).T + last.bias.to(half)
    return ((out.float() - y) ** 2).mean()


def gpt_setup(args: argparse.Namespace, batch: int):
    vocab, context, d_model, n_head = (int(n) for n in args.gpt.split(","))
    data = gpt_data(args.steps, batch, vocab, context)

    def make() -> nn.Module:
        model = TinyGPT(vocab, context, d_model, n_head)
        init_params(model)
        return model

    title = (f"GPT block (vocab {vocab}, context {context}, d_model {d_model}, {n_head} heads), "
             f"batch {batch}")
    if args.dtype == "f16":
        return (title + ", f16 compute on f32 masters", make, data,
                lambda m, x, y: m.forward_half(x, y))
    return title, make, data, lambda m, x, y: m(x, y)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="mlp", help="mlp, gpt or both (mlp,gpt)")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--grid", default="2x2", help="PE grid WIDTHxHEIGHT")
    ap.add_argument("--sizes", default="32,24,4", help="in,hidden,out features of the MLP")
    ap.add_argument("--gpt", default="8,4,8,2", help="vocab,context,d_model,heads of the GPT")
    ap.add_argument("--batch", type=int, default=0, help="default: 16 (MLP), 1 (GPT)")
    ap.add_argument("--out", help="write the last step's SDK project and grid.png here")
    ap.add_argument("--dtype", default="f32", choices=("f32", "f16"),
                    help="f16: compute in half precision on f32 master weights")
    args = ap.parse_args()
    gw, _, gh = args.grid.partition("x")
    csl_backend.configure(mode="simulator", grid=(int(gw), int(gh)))
    for which in args.model.split(","):
        batch = args.batch or (16 if which == "mlp" else 1)
        title, make, data, loss_fn = (mlp_setup if which == "mlp" else gpt_setup)(args, batch)
        out = Path(args.out) / which if args.out else None

        def export(loss, out=out):
            if out is not None:  # the SDK project of the step, before it runs
                pf.export_csl(loss, out)

        print(f"{title}, AdamW, on a {args.grid} grid of the simulated wafer (weights "
              "resident) vs the reference backend\n")
        print(f"{'step':>4} {'reference':>12} {'wafer':>12} {'cycles':>9} {'FLOP/cycle':>10} "
              f"{'roofline':>8} {'host in':>8} {'host out':>8} {'resident':>9}")
        worst = 0.0
        for step, (ref, got) in enumerate(zip(train("reference", make, data, loss_fn),
                                              train("csl", make, data, loss_fn,
                                                    on_last=export))):
            r = pf.csl_report()
            worst = max(worst, abs(got - ref) / abs(ref))
            print(f"{step:>4} {ref:>12.6f} {got:>12.6f} {r.cycles:>9,.0f} "
                  f"{r.flops_per_cycle:>10.2f} {100 * r.roofline_fraction:>7.1f}% "
                  f"{r.h2d_bytes:>7,}B {r.d2h_bytes:>7,}B {r.resident_bytes:>8,}B")
        print(f"\nlargest relative difference of a loss from the reference: {worst:.2e}")
        # f32: the same arithmetic; f16: a few half-precision roundings apart
        bound = 1e-4 if args.dtype == "f32" else 4 * float(np.finfo(np.float16).eps)
        assert worst < bound, "the losses on the wafer left the reference backend's"
        report = pf.csl_report(out)
        print(f"\nthe last step:\n{report}\n")
        if out is not None:
            print(f"SDK project and grid.png in {out}\n")


if __name__ == "__main__":
    main()
