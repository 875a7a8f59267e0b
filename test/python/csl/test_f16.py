"""Half precision on the csl backend (issue #16): f16 tensors on the WSE simulator vs
the reference backend running the same f16 program.

Tolerances, from f16's machine epsilon ``EPS = 2**-10``:

* ops with an f16 DSD builtin (``@faddh``, ``@fsubh``, ``@fmulh``, ``@fmaxh``,
  ``@fnegh``, ``@fabsh``, ``@fmovh``) round once per element, as IEEE half does in
  numpy: **bit-equal** to the reference;
* ops computed in f32 between ``@fh2s``/``@fs2h`` (``<math>`` calls, polynomials,
  division, comparisons) round once to f16 where the reference's numpy kernel may
  round intermediates in f16 too: within ``4 * EPS`` relative (plus ``4 * EPS``
  absolute near 0);
* reductions and matmuls accumulate in f32 here (in f16 or pairwise in the
  reference): within ``n * EPS * max|term|`` for ``n`` terms.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from pyflame_mlir.dialects.wse import Grid
from pyflame_mlir.dialects.wse_target import CycleModel
from pyflame_mlir.lowering.to_wse import CslUnsupportedError, WseOptions, lower_to_wse
from pyflame_mlir.passes.legalize_for_wse import LegalizeForWse
from xdsl.context import Context

import pyflame_mlir as pf
from pyflame_mlir.compiler import build_module
from pyflame_mlir.core import collect
from pyflame_mlir.runtime import csl_backend

EPS = float(np.finfo(np.float16).eps)
GRIDS = [(1, 1), (2, 2), (4, 4)]


def _half(rng: np.random.Generator, *shape: int, lo: float = -2.0, hi: float = 2.0):
    return pf.tensor(rng.uniform(lo, hi, shape).astype(np.float16))


def _run(grid, fn, arch: str = "wse2", sdk: int = 2):
    """fn()'s outputs on the reference backend and on the simulator."""
    prev_backend = pf.get_backend()
    prev = csl_backend.configure(mode="simulator", grid=grid, arch=arch, sdk=sdk)
    try:
        out = []
        for backend in ("reference", "csl"):
            pf.set_backend(backend)
            ts = fn()
            pf.eval(*ts)
            out.append([t.numpy() for t in ts])
    finally:
        pf.set_backend(prev_backend)
        csl_backend.configure(**vars(prev))
    return out


def _close(ref, got, rtol: float, atol: float) -> None:
    for i, (r, g) in enumerate(zip(ref, got)):
        assert g.dtype == r.dtype, f"output #{i}: {g.dtype} != {r.dtype}"
        np.testing.assert_allclose(g.astype(np.float32), r.astype(np.float32), rtol=rtol,
                                   atol=atol, err_msg=f"output #{i}")


def _elementwise(rng):
    a, b = _half(rng, 7, 6), _half(rng, 7, 6)
    row, col = _half(rng, 6), _half(rng, 7, 1)
    exact = [a + b, a - b, a * b, -a, pf.abs(a), pf.relu(a), pf.maximum(a, b), a * a,
             a + row, col * a, a * 2.0 + 1.0, a.T + b.T]
    f32 = [pf.minimum(a, b), a / (pf.abs(b) + 0.5), pf.exp(a), pf.tanh(a), pf.sigmoid(a),
           pf.erf(a), pf.gelu(a), pf.sqrt(pf.abs(a)), pf.log(pf.abs(a) + 1.0),
           pf.where(a > b, a, b), pf.softmax(a, 1)]
    return exact, f32


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
@pytest.mark.parametrize("grid", GRIDS)
def test_f16_elementwise(grid, arch):
    def fn():
        exact, f32 = _elementwise(np.random.default_rng(1))
        return exact + f32

    (ref, got), n_exact = _run(grid, fn, arch), 12
    for i, (r, g) in enumerate(zip(ref[:n_exact], got[:n_exact])):
        assert g.dtype == np.float16
        np.testing.assert_array_equal(g, r, err_msg=f"f16 DSD op #{i}")
    _close(ref[n_exact:], got[n_exact:], rtol=4 * EPS, atol=4 * EPS)


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
@pytest.mark.parametrize("grid", GRIDS)
def test_f16_reductions_and_matmul(grid, arch):
    k = 9

    def fn():
        rng = np.random.default_rng(2)
        a, b, v = _half(rng, 6, k), _half(rng, k, 5), _half(rng, k)
        return [a.sum(), a.sum(0), a.sum(1), a.mean(1), a.max(1).values, a.min(0).values,
                a @ b, a @ v, v @ b, v @ v, (a * a).sum(1, keepdim=True)]

    ref, got = _run(grid, fn, arch)
    # |term| <= 4 (products of values in [-2, 2]); at most 6 * 9 terms in a.sum()
    _close(ref, got, rtol=4 * EPS, atol=6 * k * EPS * 4)


def test_f16_sdk1_idioms_run_the_same():
    def fn():
        exact, f32 = _elementwise(np.random.default_rng(3))
        return exact[:4] + f32[:2]

    ref, got = _run((2, 2), fn, "wse3", sdk=1)
    for r, g in zip(ref[:4], got[:4]):
        np.testing.assert_array_equal(g, r)
    _close(ref[4:], got[4:], rtol=4 * EPS, atol=4 * EPS)


def _emitted(tmp_path, tensors, arch: str = "wse2", sdk: int = 2) -> str:
    prev_backend = pf.get_backend()
    prev = csl_backend.configure(mode="simulator")
    try:
        pf.set_backend("csl")
        path, _ = pf.export_csl(tensors, tmp_path, grid=(2, 2), arch=arch, sdk_version=sdk)
    finally:
        pf.set_backend(prev_backend)
        csl_backend.configure(**vars(prev))
    return (path / "pe_program.csl").read_text()


@pytest.mark.parametrize("sdk", [1, 2])
def test_f16_program_uses_the_f16_builtins(tmp_path, sdk):
    rng = np.random.default_rng(4)
    a, b, v = _half(rng, 8, 8), _half(rng, 8, 8), _half(rng, 8)
    text = _emitted(tmp_path, [pf.relu(a * b + a) - b, -a, pf.exp(a), a @ v], sdk=sdk)
    used = set(re.findall(r"@(f\w+)\(", text))
    assert {"faddh", "fmulh", "fsubh", "fmaxh", "fnegh", "fh2s", "fs2h", "fmachs"} <= used, used
    assert re.search(r"var buf\d+ : \[\d+\]f16", text), "no f16 buffer"


def test_f16_buffers_take_two_bytes_per_element():
    """The memory plan sizes f16 buffers at 2 bytes per element and never shares one
    with an f32 value (a CSL array has one element type)."""
    x = pf.tensor(np.ones((30, 30), np.float16))
    y = ((x * x + x) * x - x).exp() * x  # f16 chain, exp in f32 between conversions
    module = build_module(collect([y]))
    LegalizeForWse().apply(Context(), module)
    low = lower_to_wse(module, WseOptions(grid=Grid(1, 1)))
    plan, n = low.memory, 30 * 30
    values = [r for op in low.program.body.block.ops for r in op.results]
    half = [v for v in values if v.type.is_half]
    assert half, "no f16 value on the PEs"
    for v in values:
        if v in plan.of:
            b = plan.of[v]
            assert (b in plan.half) == v.type.is_half, f"{v.type} in buffer {b}"
            if v.type.is_half:
                assert plan.sizes[b] == n // 2, "an f16 tile of n elements takes n/2 words"


def test_bf16_is_refused_naming_the_arch():
    prev_backend = pf.get_backend()
    prev = csl_backend.configure(mode="simulator", grid=(1, 1), arch="wse3")
    try:
        pf.set_backend("csl")
        x = pf.tensor(np.ones((2, 2), np.float32)).to(pf.bfloat16)
        with pytest.raises(CslUnsupportedError, match=r"element type bfloat16: WSE-2: .*"
                                                       r"no bf16 .*WSE-3: "):
            (x + x).numpy()
    finally:
        pf.set_backend(prev_backend)
        csl_backend.configure(**vars(prev))


def test_f16_cycles_charge_the_simd_width_per_arch():
    """Seven f16 DSD ops over a 48x48 tile run at the arch's f16 SIMD width (WSE-2: 4,
    WSE-3: 8 elements per cycle: ``CycleModel.f16_simd``), f32 one element per cycle.
    The f16 input and output cross memcpy as 16-bit data (``MEMCPY_16BIT``), so the
    program has no conversion at its edges (it had an ``@fs2h`` in and an ``@fh2s``
    out, 2n cycles, before 16-bit host I/O)."""
    n, ops = 48 * 48, 7
    model = CycleModel()
    cycles = {}
    prev_backend, prev = pf.get_backend(), csl_backend.configure(mode="simulator", grid=(1, 1))
    try:
        pf.set_backend("csl")
        x32 = np.random.default_rng(5).uniform(-1, 1, (48, 48)).astype(np.float32)
        for arch in ("wse2", "wse3"):
            csl_backend.configure(arch=arch)
            for dt in (np.float32, np.float16):
                x = pf.tensor(x32.astype(dt))
                (((x * x + x) * x - x) * x + x).abs().numpy()
                cycles[arch, dt] = csl_backend.last_report().total_cycles
    finally:
        pf.set_backend(prev_backend)
        csl_backend.configure(**vars(prev))
    assert cycles["wse2", np.float32] == cycles["wse3", np.float32]
    for arch in ("wse2", "wse3"):
        simd = model.f16_simd(arch)
        saved = ops * n * (1 - 1 / simd)  # SIMD f16 ops; no conversions at the edges
        got = cycles[arch, np.float32] - cycles[arch, np.float16]
        assert abs(got - saved) < 0.01 * saved, (arch, got, saved)


def test_f16_windows_norms_and_casts():
    """f16 through the ops of issue #16 lowered in f32 (windows, layer_norm,
    cross_entropy, argmax), constant exponents, and casts to masks and back."""
    labels = np.array([0, 1, 2, 3, 0, 1])

    def fn():
        rng = np.random.default_rng(6)
        a = _half(rng, 6, 4)
        return [a[1:4], pf.cat([a, a * 2.0], 0), pf.nn.functional.pad(a, (1, 1)), a ** 2,
                pf.abs(a) ** 0.5, a.argmax(1), a.to(pf.bool), (a > 0).to(pf.float16),
                pf.nn.functional.layer_norm(a, (4,)),
                pf.nn.functional.cross_entropy(a, pf.tensor(labels)), a.float() * 3.0]

    ref, got = _run((2, 2), fn)
    _close(ref, got, rtol=4 * EPS, atol=4 * EPS)
