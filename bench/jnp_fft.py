"""``pf.numpy.fft`` (DFT matmuls, four-step split past 256 points) against
``jax.numpy.fft`` (XLA's FFT) and numpy's pocketfft: rfft + irfft of a
batch, compiled (``pf.compile``, ``jax.jit``), best of ``repeat`` runs of
``number`` calls, ratios in one process. Run with OPENBLAS_NUM_THREADS=1.

    python bench/jnp_fft.py [batch] [repeat]
"""

from __future__ import annotations

import sys
import time

import numpy as np

import pyflame_mlir as pf
import pyflame_mlir.numpy as pnp


def best(fn, number: int, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return min(times)


def main() -> None:
    batch = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        jax = None
    print(f"rfft + irfft of a ({batch}, n) float32 batch: ms per call")
    print(f"{'n':>6} {'pyflame':>9} {'jax.jit':>9} {'numpy':>9} {'pf/jax':>7} {'pf/numpy':>8}")
    for n in (64, 256, 1024, 4096, 16384):
        x = np.random.default_rng(n).standard_normal((batch, n)).astype(np.float32)
        f = pf.compile(lambda v, n=n: pnp.fft.irfft(pnp.fft.rfft(v), n=n))
        xt = pnp.asarray(x)
        number = max(1, 2000 // n)
        t_pf = best(lambda f=f, xt=xt: f(xt).numpy(), number, repeat)
        t_np = best(lambda x=x, n=n: np.fft.irfft(np.fft.rfft(x), n=n), number, repeat)
        t_jax = float("nan")
        if jax is not None:
            g = jax.jit(lambda v, n=n: jnp.fft.irfft(jnp.fft.rfft(v), n=n))
            xj = jnp.asarray(x)
            t_jax = best(lambda g=g, xj=xj: g(xj).block_until_ready(), number, repeat)
        print(f"{n:>6} {t_pf * 1e3:>9.3f} {t_jax * 1e3:>9.3f} {t_np * 1e3:>9.3f} "
              f"{t_pf / t_jax:>7.1f} {t_pf / t_np:>8.1f}")


if __name__ == "__main__":
    main()
