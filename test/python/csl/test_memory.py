"""Memory planning: dead buffers are reused (in place for elementwise ops), inputs
and outputs keep theirs, scratch lives for one op, and the pass form annotates."""

from __future__ import annotations

from _csl_harness import parse_wse, wse_type
from pyflame_mlir.lowering.wse_memory import plan_memory
from pyflame_mlir.passes.wse_memory import WseMemoryPlan

T = wse_type("16x8", "[y, x]")


def _chain(n: int) -> str:
    body = []
    prev = "%a"
    for i in range(n):
        body.append(f'  %v{i} = wse.map "exp"({prev}) : ({T}) -> {T}')
        prev = f"%v{i}"
    return (f"wse.program @main {{width = 2, height = 2}} {{\n^bb0(%a: {T}):\n"
            + "\n".join(body) + f"\n  wse.return {prev} : {T}\n}}")


def test_chain_reuses_buffers():
    module = parse_wse(_chain(6))
    program = module.body.block.first_op
    plan = plan_memory(program)
    ops = list(program.body.block.ops)[:-1]
    bufs = [plan.of[op.results[0]] for op in ops]
    assert len(set(bufs)) == 1  # the input keeps its buffer; the chain runs in place
    assert plan.of[program.body.block.args[0]] not in bufs
    assert plan.bytes == 2 * 8 * 4 * 4
    assert plan_memory(program, reuse=False).bytes == 7 * 8 * 4 * 4


def test_outputs_and_inputs_are_never_reused():
    t2 = wse_type("16", "[y], x = 0")
    tp = t2.replace("x = 0", "x = sum")
    text = f"""wse.program @main {{width = 2, height = 2}} {{
^bb0(%a: {T}):
  %b = wse.map "neg"(%a) : ({T}) -> {T}
  %c = wse.map "exp"(%b) : ({T}) -> {T}
  %r = wse.reduce "sum" %c {{dims = array<i64: 1>, keepdim = false}} : {T} -> {tp}
  %s = wse.combine "x" %r : {tp} -> {t2}
  %d = wse.map "relu"(%c) : ({T}) -> {T}
  wse.return %b, %s, %d : {T}, {t2}, {T}
}}"""
    program = parse_wse(text).body.block.first_op
    plan = plan_memory(program)
    a = program.body.block.args[0]
    b, c, r, s, d = (op.results[0] for op in list(program.body.block.ops)[:5])
    assert len({plan.of[v] for v in (a, b, s, d)}) == 4  # input and outputs distinct
    assert plan.of[r] == plan.of[s]  # the combine works in place
    assert plan.of[c] not in (plan.of[a], plan.of[b])  # a, b are pinned: c is not in place


def test_pass_annotates_buffers():
    module = parse_wse(_chain(3))
    WseMemoryPlan().apply(None, module)  # type: ignore[arg-type]
    text = str(module)
    assert "wse.buffers = [#builtin.int<32>, #builtin.int<32>]" in text
    assert text.count("wse.buffer = ") == 3
