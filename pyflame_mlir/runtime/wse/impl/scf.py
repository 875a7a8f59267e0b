"""`scf` on a PE: counted loops and branches (CSL's `for` over `@range` and `if`).

A loop or branch waits only if its body can; one that cannot runs its body
with `run_sync`, without a generator per iteration.
"""

from __future__ import annotations

from xdsl.dialects import scf

from ..errors import ProgramError, WseError
from ..interpreter import Functions, Planner, location, run_block, run_sync
from ..values import int_info, wrap

SCF = Functions("scf")
SCF.impl_terminator(scf.YieldOp)


@SCF.impl_region(scf.ForOp)
def _for(op: scf.ForOp, planner: Planner):
    body = planner.block(op.body.block)
    idx, *args = body.args
    bits, signed = int_info(idx.type)
    lb, ub, step, inits, res = op.lb, op.ub, op.step, tuple(op.iter_args), tuple(op.res)

    def iterations(ctx, env) -> range:
        s = env[step]
        if s <= 0:  # scf.for's step must be positive; a zero step never ends
            raise ProgramError(f"scf.for with step {s} (at {location(op)}): the step of a "
                               "counted loop must be positive")
        return range(env[lb], env[ub], s)

    def check_time(ctx, i: int) -> None:
        """A long loop inside one task never returns to the event loop's guard."""
        sim = getattr(ctx, "sim", None)
        if sim is not None and ctx.t > sim.max_cycles:
            raise WseError(f"{ctx.where} is still in the loop at {location(op)} (index {i}) "
                           f"after {sim.max_cycles:,.0f} cycles: a livelock, or raise "
                           "max_cycles")

    def run_waiting(ctx, env):
        vals = [env[v] for v in inits]
        for k, i in enumerate(iterations(ctx, env)):
            if not k & 0xFFF:
                check_time(ctx, i)
            env[idx] = wrap(i, bits, signed)
            for a, v in zip(args, vals):
                env[a] = v
            vals = yield from run_block(ctx, env, body)
        for r, v in zip(res, vals):
            env[r] = v

    def run(ctx, env):
        vals = [env[v] for v in inits]
        for k, i in enumerate(iterations(ctx, env)):
            if not k & 0xFFF:
                check_time(ctx, i)
            env[idx] = wrap(i, bits, signed)
            for a, v in zip(args, vals):
                env[a] = v
            vals = run_sync(ctx, env, body)
        for r, v in zip(res, vals):
            env[r] = v

    return (True, run_waiting) if body.waits else (False, run)


@SCF.impl_region(scf.IfOp)
def _if(op: scf.IfOp, planner: Planner):
    cond, res = op.cond, tuple(op.output)
    then = planner.block(op.true_region.block)
    other = planner.block(op.false_region.block) if op.false_region.blocks else None

    def run_waiting(ctx, env):
        plan = then if env[cond] else other
        vals = (yield from run_block(ctx, env, plan)) if plan is not None else []
        for r, v in zip(res, vals or []):
            env[r] = v

    def run(ctx, env):
        plan = then if env[cond] else other
        vals = run_sync(ctx, env, plan) if plan is not None else []
        for r, v in zip(res, vals or []):
            env[r] = v

    waits = then.waits or (other is not None and other.waits)
    return (True, run_waiting) if waits else (False, run)
