"""Simulated cycles per training step of an MLP on the WSE simulator (issue 16).

One step (forward, backward and the optimizer update, one graph, one launch) of
an MLP (ReLU, MSE loss against one-hot targets), batch 64, f32, on a PE grid,
measured twice on the same program. The default is the issue's MLP scaled down
to 128 -> 64 -> 10 on 4x4 PEs (seconds per step); the full 784 -> 256 -> 10 fits the
SRAM on 16x16 PEs for SGD (AdamW needs more: 32x32) and the simulator runs its step
in about a minute of wall time (``--d-in 784 --hidden 256 --grid 16x16``; a row
that does not fit the grid prints the SRAM it needed).

* resident: parameters and optimizer state stay in PE memory between steps; the
  host copies the batch in and the loss out (``csl_backend`` default);
* copied: every input copied in and every output (new weights, optimizer state,
  gradients) copied out at each step (``csl_backend.configure(resident=False)``,
  the pre-issue-16 way).

The launch's cycles come from the simulator's cycle model (several figures are
estimates: ``dialects/wse_target.py: FIGURES``); memcpy takes no simulated time, so
the host traffic is priced separately: ``memcpy cycles`` = 32-bit words / rows of
the rectangle (memcpy feeds each row from the west edge at one wavelet per cycle;
this project's estimate, a lower bound: host latency excluded). The roofline is the
f32 one: one multiply-add (2 FLOP) per PE per cycle; "% of roofline" is the step's
FLOPs / (cycles x PEs x 2).

``--plan`` simulates nothing: it lowers the step on each candidate grid, smallest
first, and prints which fit the SRAM of a PE (the planner's and memory plan's
verdict, with the bytes per PE it needed) and, for the smallest that fits, the SRAM
per PE by tensor; so the issue's full size is sized here in a minute or two.

    python bench/csl_train.py                # the table of docs/PERFORMANCE.md
    python bench/csl_train.py --d-in 784 --hidden 256 --plan         # smallest grid
    python bench/csl_train.py --d-in 784 --hidden 256 --plan --plan-all  # every grid
    python bench/csl_train.py --d-in 784 --hidden 256 --grid 16x16   # the full size
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np
from pyflame_mlir.lowering.pyflame_to_wse.support import CslUnsupportedError
from pyflame_mlir.lowering.wse_memory import MemoryBudgetError, default_budget

import pyflame_mlir as pf
from pyflame_mlir.csl_report import sram_by_tensor
from pyflame_mlir.runtime import csl_backend


def mlp(d_in: int, hidden: int, d_out: int, seed: int = 0) -> pf.nn.Module:
    rng = np.random.default_rng(seed)
    model = pf.nn.Sequential(pf.nn.Linear(d_in, hidden), pf.nn.ReLU(),
                             pf.nn.Linear(hidden, d_out))
    for p in model.parameters():
        p.data = pf.tensor((rng.standard_normal(p.shape) / np.sqrt(p.shape[-1]))
                           .astype(np.float32))
    return model


def step_loss(args: argparse.Namespace, optimizer: str) -> pf.Tensor:
    """The lazy loss of one training step (forward, backward, update) of the MLP."""
    model = mlp(args.d_in, args.hidden, args.d_out)
    opt = (pf.optim.SGD(model.parameters(), lr=0.01) if optimizer == "sgd"
           else pf.optim.AdamW(model.parameters(), lr=1e-3))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((args.batch, args.d_in)).astype(np.float32)
    y = np.eye(args.d_out, dtype=np.float32)[rng.integers(0, args.d_out, args.batch)]
    opt.zero_grad()
    loss = ((model(pf.tensor(x)) - pf.tensor(y)) ** 2).mean()
    loss.backward()
    opt.step()
    return loss


def plan(args: argparse.Namespace, optimizer: str) -> None:
    """Lower the step (no simulation) on each candidate grid, smallest first, until
    one fits; print the verdicts and the fitting plan's SRAM per PE by tensor."""
    csl_backend.configure(mode="simulator", grid=None)
    pf.set_backend("csl")
    loss = step_loss(args, optimizer)
    n_params = args.d_in * args.hidden + args.hidden + args.hidden * args.d_out + args.d_out
    state = 4 * n_params * (3 if optimizer == "adamw" else 1)  # + AdamW's two moments
    batch = 4 * args.batch * (args.d_in + args.d_out)
    print(f"{optimizer}: {state:,} B of resident state, {batch:,} B of batch; the planner's "
          "verdict per grid")
    for w, h in ((1, 1), (2, 1), (2, 2), (4, 2), (4, 4), (8, 4), (8, 8), (16, 8), (16, 16),
                 (32, 16), (32, 32)):
        if state + batch > w * h * default_budget():
            print(f"  {w}x{h}: does not fit (the state and the batch alone exceed the "
                  f"{w * h} PEs' SRAM)")
            continue
        t0 = time.perf_counter()
        # the backend's grid too: ``exe.current`` compiles under the backend's options
        # (an automatic grid would report the smallest grid's plan for every grid)
        csl_backend.configure(grid=(w, h))
        try:
            with tempfile.TemporaryDirectory() as d:
                _, exe = pf.export_csl(loss, d, grid=(w, h))
        except MemoryBudgetError as e:
            print(f"  {w}x{h}: does not fit ({e.needed:,} B/PE needed at the first op "
                  f"past the budget of {e.budget:,} B; {time.perf_counter() - t0:.0f} s)")
            continue
        except CslUnsupportedError as e:
            if "fits" not in str(e):
                raise
            print(f"  {w}x{h}: does not fit ({e})")
            continue
        prog = exe.current.program
        print(f"  {w}x{h}: fits, {prog.memory_bytes:,} B/PE high-water mark "
              f"({time.perf_counter() - t0:.0f} s to plan)"
              + ("" if args.plan_all else "; SRAM per PE by tensor:"))
        for what, n in [] if args.plan_all else sram_by_tensor(prog):
            print(f"    {what:<44} {n:>8,} B/PE")
        if args.plan_all:  # every grid's verdict, not only the smallest's
            continue
        print("  placement choices:")
        for line in exe.current.wse.choices:
            print(f"    {line}")
        return
    if not args.plan_all:
        print("  no grid up to 32x32 fits")


def f16_forward(model: pf.nn.Module, x: np.ndarray) -> pf.Tensor:
    """Mixed precision (issue #16): f16 compute copies of the resident f32 masters, cast
    at the start of the step; an f16 batch; the loss in f32; the update in f32."""
    first, last = model[0], model[2]
    h = pf.relu(pf.tensor(x.astype(np.float16)) @ first.weight.to(pf.float16).T
                + first.bias.to(pf.float16))
    return (h @ last.weight.to(pf.float16).T + last.bias.to(pf.float16)).float()


def run(args: argparse.Namespace, resident: bool, optimizer: str, arch: str = "wse2",
        half: bool = False) -> dict:
    csl_backend.configure(mode="simulator", grid=args.grid, resident=resident, arch=arch)
    pf.set_backend("csl")
    model = mlp(args.d_in, args.hidden, args.d_out)
    opt = (pf.optim.SGD(model.parameters(), lr=0.01) if optimizer == "sgd"
           else pf.optim.AdamW(model.parameters(), lr=1e-3))
    rng = np.random.default_rng(1)
    rows, walls = [], []
    for _ in range(args.steps):
        x = rng.standard_normal((args.batch, args.d_in)).astype(np.float32)
        y = np.eye(args.d_out, dtype=np.float32)[rng.integers(0, args.d_out, args.batch)]
        t0 = time.perf_counter()
        opt.zero_grad()
        out = f16_forward(model, x) if half else model(pf.tensor(x))
        loss = ((out - pf.tensor(y)) ** 2).mean()
        loss.backward()
        opt.step()
        loss.item()
        walls.append(time.perf_counter() - t0)
        r = pf.csl_report()
        rows.append((r.cycles, r.flops, r.roofline_flops_per_cycle, r.h2d_bytes, r.d2h_bytes,
                     r.sram_bytes_per_pe))
    cycles, flops, peak, h2d, d2h, sram = rows[-1]  # a step after the first (warm)
    words = (h2d + d2h) / 4
    memcpy = words / args.grid[1]
    return {"cycles": cycles, "flops": flops, "peak": peak, "h2d": h2d, "d2h": d2h,
            "sram": sram, "memcpy": memcpy, "wall": min(walls[1:] or walls),
            "batch_bytes": 4 * args.batch * (args.d_in + args.d_out)}


def _measured(args: argparse.Namespace, row: str, *how, **kw) -> dict | None:
    """`run(args, *how, **kw)`, or None after printing the row's verdict when the step
    does not fit this grid (the f16 or AdamW step may need more SRAM than the f32 one)."""
    try:
        return run(args, *how, **kw)
    except MemoryBudgetError as e:
        print(f"{row}| does not fit: {e.needed:,} B/PE needed (budget {e.budget:,}) |")
    except CslUnsupportedError as e:
        if "fits" not in str(e):
            raise
        print(f"{row}| does not fit: {e} |")
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--grid", default="4x4")
    ap.add_argument("--d-in", type=int, default=128)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--d-out", type=int, default=10)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--optimizers", default="sgd,adamw")
    ap.add_argument("--copied", action=argparse.BooleanOptionalAction, default=True,
                    help="the rows with weights copied in and out (--no-copied: skip them)")
    ap.add_argument("--f16", action=argparse.BooleanOptionalAction, default=True,
                    help="the mixed-precision rows (--no-f16: skip them)")
    ap.add_argument("--plan", action="store_true",
                    help="only lower: the smallest grid that fits and its SRAM per tensor")
    ap.add_argument("--plan-all", action="store_true",
                    help="with --plan: every grid's verdict, past the first that fits")
    args = ap.parse_args()
    w, _, h = args.grid.partition("x")
    args.grid = (int(w), int(h))
    if args.plan:
        print(f"MLP {args.d_in}->{args.hidden}->{args.d_out}, batch {args.batch}, f32\n")
        for optimizer in args.optimizers.split(","):
            plan(args, optimizer)
        return
    print(f"MLP {args.d_in}->{args.hidden}->{args.d_out}, batch {args.batch}, f32, "
          f"{args.grid[0]}x{args.grid[1]} PEs (wse2 cycle model)\n")
    head = ("| optimizer | dtype | weights | step cycles | FLOP/cycle | % of f32 roofline | "
            "host B in | host B out | memcpy cycles (est.) | step + memcpy cycles | "
            "SRAM B/PE | wall s/step |")
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for optimizer in args.optimizers.split(","):
        for resident in (True, False) if args.copied else (True,):
            m = _measured(args, f"| {optimizer} | f32 | {'resident' if resident else 'copied'} ",
                          resident, optimizer)
            if m is None:
                continue
            fpc = m["flops"] / m["cycles"]
            print(f"| {optimizer} | f32 | {'resident' if resident else 'copied'} | "
                  f"{m['cycles']:,.0f} | {fpc:,.1f} | {100 * fpc / m['peak']:.1f}% | "
                  f"{m['h2d']:,} | {m['d2h']:,} | {m['memcpy']:,.0f} | "
                  f"{m['cycles'] + m['memcpy']:,.0f} | {m['sram']:,} | {m['wall']:.2f} |")
        for arch in ("wse2", "wse3") if args.f16 else ():  # f16 rows (issue #16)
            m = _measured(args, f"| {optimizer} | f16 ({arch}) | resident f32 masters ",
                          True, optimizer, arch, half=True)
            if m is None:
                continue
            fpc = m["flops"] / m["cycles"]
            print(f"| {optimizer} | f16 ({arch}) | resident f32 masters | {m['cycles']:,.0f} | "
                  f"{fpc:,.1f} | {100 * fpc / m['peak']:.1f}% | {m['h2d']:,} | {m['d2h']:,} | "
                  f"{m['memcpy']:,.0f} | {m['cycles'] + m['memcpy']:,.0f} | {m['sram']:,} | "
                  f"{m['wall']:.2f} |")
    print(f"\nbatch in = {4 * args.batch * args.d_in:,} B, targets "
          f"{4 * args.batch * args.d_out:,} B")


if __name__ == "__main__":
    main()
