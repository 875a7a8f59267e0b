"""Wall time per DSD op of a PE program doing many small DSD ops on the WSE simulator
(the csl backend's hot path): a loop of `trips` @fadds / @fmacs of length 8 on
module-level arrays. Usage: python bench/wse_small_dsd_ops.py <test/python/wse dir>
<trips>; run it for two checkouts alternately and compare the printed microseconds per
op as a ratio (docs/PERFORMANCE.md, s12)."""
import sys
import time

sys.path.insert(0, sys.argv[1])
import numpy as np
from _wse_harness import D1, dsd, make_program, run_main, simulate

trips = int(sys.argv[2])
body = f"""{dsd('a', 8)}
      {dsd('b', 8)}
      %lo = arith.constant 0 : i32
      %hi = arith.constant {trips} : i32
      %st = arith.constant 1 : i32
      %s = arith.constant 0.5 : f32
      scf.for %i = %lo to %hi step %st : i32 {{
        "csl.fadds"(%a_dsd, %a_dsd, %b_dsd) : ({D1}, {D1}, {D1}) -> ()
        "csl.fmacs"(%b_dsd, %b_dsd, %a_dsd, %s) : ({D1}, {D1}, {D1}, f32) -> ()
      }}"""
text = make_program(body, arrays={"a": ("f32", 8), "b": ("f32", 8)})
best = 1e9
for _ in range(5):
    sim = simulate(text)
    t = time.perf_counter()
    run_main(sim, {"a": np.ones(8, np.float32), "b": np.ones(8, np.float32) * 1e-3})
    best = min(best, time.perf_counter() - t)
print(f"{best * 1e6 / (2 * trips):.2f}")
