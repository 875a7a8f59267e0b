"""Kernels sped up for the CNN step (branch ``s10-perf``), against torch:

- ``scatter_add`` into a broadcast value (the zero autodiff scatters max
  pooling's gradient into) writes ``src + value`` at the picked positions
  without reading them back (``dialects/indexing.py: _scatter_add``): signed
  zeros, NaN and infinities come out as torch's read-add-write gives them;
- the short-axis argmax/argmin reads the input's slices as views
  (``dialects/reduction.py: _arg_over_short_axis``), covered with NaN and
  ties by ``test_perf15_kernels.py``; here on views of other layouts;
- the reference backend's malloc settings (``runtime/malloc.py``).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import numpy as np
import pytest
import torch
from pyflame_mlir.dialects.opdef import OPS


@pytest.mark.filterwarnings("ignore:invalid value encountered")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("value", [0.0, -0.0, 1.5, np.inf])
@pytest.mark.parametrize("dim,shape", [(0, (4, 8, 9, 70)), (2, (8, 9, 3, 70))])
def test_one_pick_scatter_add_into_a_broadcast_value(dtype, value, dim, shape) -> None:
    rng = np.random.default_rng(7)
    index_shape = shape[:dim] + (1,) + shape[dim + 1:]
    index = rng.integers(0, shape[dim], index_shape)
    src = rng.standard_normal(index_shape).astype(dtype)
    specials = np.array([-0.0, 0.0, np.nan, np.inf, -np.inf, 1e-30, -1e-30], dtype)
    src.reshape(-1)[:specials.size * 40:40] = np.tile(specials, 1)
    base = np.broadcast_to(np.asarray(value, dtype), shape)
    got = OPS["scatter_add"].kernel(base, index, src, dim=dim)
    want = torch.scatter_add(torch.full(shape, value, dtype=torch.from_numpy(src).dtype),
                             dim, torch.tensor(index), torch.tensor(src)).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("name,ref", [("argmax", np.argmax), ("argmin", np.argmin)])
def test_short_axis_argmax_of_strided_views(name, ref) -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(-2, 3, (6, 5, 40, 30)).astype(np.float32)
    x.reshape(-1)[::97] = np.nan
    for view, dim in ((x.transpose(2, 0, 3, 1), 3), (x[:, ::2].transpose(1, 0, 2, 3), 0),
                      (np.asfortranarray(x), 1)):
        got = OPS[name].kernel(view, dim=dim, keepdim=False)
        np.testing.assert_array_equal(got, ref(view, axis=dim))
        tgot = getattr(torch, name)(torch.tensor(np.ascontiguousarray(view)), dim=dim)
        # torch: NaN wins, as numpy's first NaN does
        np.testing.assert_array_equal(got, tgot.numpy())


def _tuning_in_child(env: dict[str, str]) -> str:
    code = ("import pyflame_mlir as pf\n"
            "from pyflame_mlir.runtime.malloc import keep_freed_memory\n"
            "print((pf.tensor([1.0, 2.0]) * 2).sum().item(), keep_freed_memory())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={k: v for k, v in {**os.environ, **env}.items() if v is not None},
                         check=True)
    return out.stdout.split()[-1]


@pytest.mark.skipif(not sys.platform.startswith("linux") or
                    platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_malloc_tuning_applies_once_unless_the_user_set_glibc_knobs() -> None:
    """The reference backend keeps freed memory in the process (runtime/malloc.py),
    except with PYFLAME_MALLOC_TUNING=0 or where glibc's own knobs are set."""
    clean = {k: None for k in ("PYFLAME_MALLOC_TUNING", "MALLOC_MMAP_THRESHOLD_",
                               "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "GLIBC_TUNABLES")}
    assert _tuning_in_child(clean) == "True"
    assert _tuning_in_child({**clean, "PYFLAME_MALLOC_TUNING": "0"}) == "False"
    assert _tuning_in_child({**clean, "MALLOC_TRIM_THRESHOLD_": "1000000"}) == "False"


def test_compiled_max_pool_step_replays_and_matches_torch() -> None:
    """max pooling's NaN offsets come from a recorded iota, not host data made on
    each call: pf.compile replays the step (nothing recorded from its third
    call) and the losses stay torch's."""
    import pyflame_mlir as pf

    rng = np.random.default_rng(0)
    w = (rng.standard_normal((4, 1, 3, 3)) * 0.3).astype(np.float32)
    lin = (rng.standard_normal((10, 4 * 4 * 4)) * 0.1).astype(np.float32)
    data = [(rng.standard_normal((8, 1, 8, 8)).astype(np.float32), rng.integers(0, 10, 8))
            for _ in range(5)]

    def runner(lib, compiled: bool):
        params = [lib.tensor(w.copy(), requires_grad=True),
                  lib.tensor(lin.copy(), requires_grad=True)]
        opt = lib.optim.SGD(params, lr=0.1, momentum=0.9)

        def step(x, y):
            h = lib.nn.functional.max_pool2d(
                lib.relu(lib.nn.functional.conv2d(x, params[0], padding=1)), 2)
            loss = lib.nn.functional.cross_entropy(h.reshape(8, -1) @ params[1].T, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss
        return pf.compile(step) if compiled else step

    ours, theirs = runner(pf, True), runner(torch, False)
    for i, (x, y) in enumerate(data):
        before = pf.COUNTERS.ops_recorded
        got = ours(pf.tensor(x), pf.tensor(y)).item()
        if i >= 2:
            assert pf.COUNTERS.ops_recorded == before, "the compiled step was not replayed"
        want = theirs(torch.tensor(x), torch.tensor(y)).item()
        np.testing.assert_allclose(got, want, rtol=1e-5)
