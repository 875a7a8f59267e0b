"""A byte-level GPT trained on the small text in ``examples/data/tiny.txt``,
written exactly as a PyTorch user writes it: ``nn`` modules, weight tying by
assignment, causal attention with ``masked_fill``, ``cross_entropy`` with an
``ignore_index`` for the padding, ``AdamW``, gradient clipping.

Every step is lazy: ``loss.item()`` runs forward, backward and the previous
step's optimizer update as one compiled graph, and from the third step on
that graph comes from the cache.

    python examples/gpt.py [--steps 60] [--backend reference|max|mlir]

The same source runs under PyTorch with its first three imports replaced by
``import torch as pf; from torch import nn; from torch.nn import functional as
F``; ``test/python/nn/test_gpt_example.py`` does exactly that and compares the
losses step by step from the same state dict.
"""

import math
import pathlib

import numpy as np

import pyflame_mlir as pf
from pyflame_mlir import nn
from pyflame_mlir.nn import functional as F

VOCAB, CONTEXT, D_MODEL, N_HEAD, N_LAYER = 256, 64, 128, 4, 2
PAD_TARGET = -1  # targets past the end of a line: ignored by the loss


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model: int, n_head: int, context: int):
        super().__init__()
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.n_head = n_head
        self.register_buffer("causal", pf.tril(pf.ones(context, context)).view(
            1, 1, context, context))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.causal[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, d_model: int, n_head: int, context: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_head, context)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                 nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab: int = VOCAB, context: int = CONTEXT, d_model: int = D_MODEL,
                 n_head: int = N_HEAD, n_layer: int = N_LAYER):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, d_model)
        self.pos_emb = nn.Embedding(context, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_head, context) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.head.weight = self.tok_emb.weight  # weight tying
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        pos = pf.arange(T)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                               ignore_index=PAD_TARGET)
        return logits, loss


def batches(batch: int, steps: int, seed: int = 0, context: int = CONTEXT):
    """(inputs, targets) as int64 numpy arrays: each row a line of the text,
    continued by the next lines and cut at ``context + 1`` bytes; a row that
    runs out of text is padded (input 0, target PAD_TARGET)."""
    text = (pathlib.Path(__file__).parent / "data" / "tiny.txt").read_bytes()
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == ord("\n")]
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        rows = np.zeros((batch, context + 1), np.int64)
        valid = np.zeros((batch, context + 1), bool)
        for r, s in enumerate(rng.choice(starts, batch)):
            chunk = np.frombuffer(text[s:s + context + 1], np.uint8)
            rows[r, :len(chunk)] = chunk
            valid[r, :len(chunk)] = True
        targets = np.where(valid[:, 1:], rows[:, 1:], PAD_TARGET)
        yield rows[:, :-1], targets


def train(steps: int = 60, batch: int = 16, lr: float = 3e-3, log_every: int = 10,
          model=None) -> list[float]:
    pf.manual_seed(0)
    model = model if model is not None else GPT()
    optimizer = pf.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1)
    losses = []
    for step, (x, y) in enumerate(batches(batch, steps)):
        _, loss = model(pf.tensor(x), pf.tensor(y))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        if log_every and (step % log_every == 0 or step == steps - 1):
            print(f"step {step:4d}  loss {losses[-1]:.4f}")
    return losses


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--backend", default="reference")
    args = parser.parse_args()
    pf.set_backend(args.backend)
    losses = train(args.steps)
    print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}; cache: {pf.cache_stats()}")
    assert losses[-1] < losses[0] - 1.0, "the loss did not fall"
