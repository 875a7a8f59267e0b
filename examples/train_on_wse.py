"""Train an MLP on the simulated wafer with AdamW: the weights stay in PE memory.

Each training step (forward, backward and the AdamW update: one graph) is one
launch on the WSE simulator; parameters and optimizer state are resident in the
PEs' SRAM between steps, so the host sends the batch in and reads the loss out.
The same model is trained on the reference (numpy) backend beside it: the losses
follow it step by step. Every step prints ``pf.csl_report()``'s headline (cycles,
FLOP/cycle against the f32 roofline, host traffic); the last step's full report
is printed at the end, and with ``--out DIR`` the step's SDK project is written
there (``run.py --steps N`` trains with the state resident) with the picture of
the grid (``grid.png``: busy fraction and resident state per PE) next to it.

    python examples/train_on_wse.py                 # 2x2 PEs, 10 steps, about a minute
    python examples/train_on_wse.py --steps 20 --grid 4x4 --out /tmp/train_on_wse
"""

import argparse
from pathlib import Path

import numpy as np

import pyflame_mlir as pf
from pyflame_mlir.runtime import csl_backend

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--steps", type=int, default=10)
ap.add_argument("--grid", default="2x2", help="PE grid WIDTHxHEIGHT")
ap.add_argument("--sizes", default="32,24,4", help="in,hidden,out features of the MLP")
ap.add_argument("--batch", type=int, default=16)
ap.add_argument("--out", help="write the step's SDK project and grid.png here")
args = ap.parse_args()
d_in, hidden, d_out = (int(n) for n in args.sizes.split(","))
gw, _, gh = args.grid.partition("x")
csl_backend.configure(mode="simulator", grid=(int(gw), int(gh)))

rng = np.random.default_rng(0)
init = [(rng.standard_normal(s) / np.sqrt(s[-1])).astype(np.float32)
        for s in ((hidden, d_in), (hidden,), (d_out, hidden), (d_out,))]
teacher = rng.standard_normal((d_in, d_out)).astype(np.float32)
data = []
for _ in range(args.steps):
    x = rng.standard_normal((args.batch, d_in)).astype(np.float32)
    data.append((x, np.tanh(x @ teacher / np.float32(np.sqrt(d_in))).astype(np.float32)))


def trainer(backend: str):
    """A generator of per-step losses of the MLP trained with AdamW on ``backend``."""
    pf.set_backend(backend)
    model = pf.nn.Sequential(pf.nn.Linear(d_in, hidden), pf.nn.ReLU(),
                             pf.nn.Linear(hidden, d_out))
    for p, w in zip(model.parameters(), init):
        p.data = pf.tensor(w)
    opt = pf.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    for step, (x, y) in enumerate(data):
        pf.set_backend(backend)
        opt.zero_grad()
        loss = ((model(pf.tensor(x)) - pf.tensor(y)) ** 2).mean()
        loss.backward()
        opt.step()
        if backend == "csl" and args.out and step == args.steps - 1:
            pf.export_csl(loss, args.out)  # the SDK project of the step, before it runs
        yield loss.item()


print(f"MLP {d_in}->{hidden}->{d_out}, batch {args.batch}, AdamW, on a {args.grid} grid of "
      "the simulated wafer (weights resident) vs the reference backend\n")
print(f"{'step':>4} {'reference':>12} {'wafer':>12} {'cycles':>9} {'FLOP/cycle':>10} "
      f"{'roofline':>8} {'host in':>8} {'host out':>8} {'resident':>9}")
worst = 0.0
for step, (ref, got) in enumerate(zip(trainer("reference"), trainer("csl"))):
    r = pf.csl_report()
    worst = max(worst, abs(got - ref) / abs(ref))
    print(f"{step:>4} {ref:>12.6f} {got:>12.6f} {r.cycles:>9,.0f} {r.flops_per_cycle:>10.2f} "
          f"{100 * r.roofline_fraction:>7.1f}% {r.h2d_bytes:>7,}B {r.d2h_bytes:>7,}B "
          f"{r.resident_bytes:>8,}B")
print(f"\nlargest relative difference of a loss from the reference: {worst:.2e}")
assert worst < 1e-5, "the losses on the wafer left the reference backend's"
report = pf.csl_report(Path(args.out) if args.out else None)
print(f"\nthe last step:\n{report}")
if args.out:
    print(f"\nSDK project and grid.png in {args.out}")
