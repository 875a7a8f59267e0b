"""Issue #16 leftovers: ``wse.relayout`` (the tile grid transposed: a dim moves from
one grid axis to the other without a copy of the whole tensor on every PE) on 1x1,
2x2 and 4x4 grids with non-square tensors, against the data it moves and, planned
from pyflame graphs, against the reference backend; and the rate of the unrolled
tile matmul on one PE."""

from __future__ import annotations

import numpy as np
import pytest
from _csl_harness import assert_close, parse_wse, run_wse, wse_type
from pyflame_mlir.dialects import wse
from xdsl.utils.exceptions import VerifyException

import pyflame_mlir as pf

RNG = np.random.default_rng(16)


def _prog(g: int, src: str, body: str, out: tuple[str, str], w: int | None = None) -> str:
    return (f"wse.program @main {{width = {w or g}, height = {g}}} {{\n^bb0(%a: {src}):\n"
            f"{body}\n  wse.return %{out[0]} : {out[1]}\n}}")


CASES = [((7, 10), "[y, x]"), ((10, 7), "[x, y]"), ((7, 3), "[y, -], x = 0"),
         ((7,), "[x], y = 0"), ((3, 7), "[-, y], x = 0")]


@pytest.mark.parametrize("g", [1, 2, 4])
@pytest.mark.parametrize("shape,layout", CASES)
def test_relayout_moves_every_tile(g, shape, layout):
    """Tiled dims change axis (both, or one with the other axis held at a line); the
    tensor read back through the new layout equals what went in. 7 and 10 over 4 PEs
    leave a short last block, so the valid extents move with their tiles."""
    lay = wse.Layout.parse(layout)
    dims = "x".join(map(str, shape))
    src, dst = wse_type(dims, layout), wse_type(dims, str(wse.swap_axes(lay)))
    text = _prog(g, src, f"  %r = wse.relayout %a : {src} -> {dst}", ("r", dst))
    a = RNG.standard_normal(shape).astype(np.float32)
    for arch in ("wse2", "wse3") if g == 4 else ("wse2",):
        (out,), _ = run_wse(parse_wse(text), [a], arch)
        np.testing.assert_array_equal(out, a)


@pytest.mark.parametrize("g", [2, 4])
def test_relayout_of_a_replicated_tensor(g):
    """A tensor tiled over y and replicated over x becomes tiled over x and replicated
    over y: every PE of a column ends with its block (read back through a copy on
    each line)."""
    held, rep = wse_type("10x5", "[y, -], x = 0"), wse_type("10x5", "[y, -], x = *")
    moved, back = wse_type("10x5", "[x, -], y = *"), wse_type("10x5", "[x, -], y = 2")
    body = (f'  %b = wse.broadcast "x" %a : {held} -> {rep}\n'
            f"  %r = wse.relayout %b : {rep} -> {moved}\n"
            f'  %c = wse.map "copy"(%r) : ({moved}) -> {moved}\n'
            f'  %d = wse.map "neg"(%c) : ({moved}) -> {back}')
    a = RNG.standard_normal((10, 5)).astype(np.float32)
    text = _prog(g, held, body.replace("y = 2", f"y = {g - 1}"),
                 ("d", back.replace("y = 2", f"y = {g - 1}")))
    (out,), _ = run_wse(parse_wse(text), [a])
    np.testing.assert_array_equal(out, -a)


@pytest.mark.parametrize("g", [2, 4])
def test_relayout_of_f16_tiles(g):
    """f16 tiles (2 bytes an element, 16-bit wavelets in the low half) move alike."""
    def t(dt: str, lay: str) -> str:
        return f"!wse.tensor<7x10x{dt}, #wse.layout<{lay}>>"
    body = (f'  %h = wse.map "copy"(%a) : ({t("f32", "[y, x]")}) -> {t("f16", "[y, x]")}\n'
            f'  %r = wse.relayout %h : {t("f16", "[y, x]")} -> {t("f16", "[x, y]")}\n'
            f'  %o = wse.map "copy"(%r) : ({t("f16", "[x, y]")}) -> {t("f32", "[x, y]")}')
    text = _prog(g, t("f32", "[y, x]"), body, ("o", t("f32", "[x, y]")))
    a = RNG.standard_normal((7, 10)).astype(np.float32)
    for arch in ("wse2", "wse3"):
        (out,), _ = run_wse(parse_wse(text), [a], arch)
        np.testing.assert_array_equal(out, a.astype(np.float16).astype(np.float32))


def test_relayout_verifier():
    src, dst = wse_type("8x8", "[y, x]"), wse_type("8x8", "[x, y]")
    text = _prog(2, src, f"  %r = wse.relayout %a : {src} -> {dst}", ("r", dst))
    with pytest.raises(VerifyException, match="square grid"):
        parse_wse(text.replace("width = 2", "width = 4"))
    with pytest.raises(VerifyException, match="result must be"):
        parse_wse(_prog(2, src, f"  %r = wse.relayout %a : {src} -> {src}", ("r", src)))


@pytest.mark.parametrize("grid", [(2, 2), (4, 4)])
def test_planner_relayouts_instead_of_gathering(csl, grid):
    """``(2a).T + 3b``: the transpose is local (its dims swap placements), so one of
    the two computed operands must move its dims to the other axes: the plan does it
    with wse.relayout (gathers would hold the whole [10, 7] tensor on every PE: no
    buffer here is larger than a tile), and the values match the reference backend's,
    forward and, through ``s @ c`` and the matmul and transpose VJPs, a gradient."""
    a0 = RNG.standard_normal((7, 10)).astype(np.float32)
    b0 = RNG.standard_normal((10, 7)).astype(np.float32)
    c0 = RNG.standard_normal((7, 5)).astype(np.float32)
    outs = {}
    for backend in ("reference", "csl"):
        pf.set_backend(backend)
        csl.configure(grid=grid)
        a = pf.tensor(a0, requires_grad=True)
        s = (a * 2.0).T + pf.tensor(b0) * 3.0
        s.numpy()
        if backend == "csl":
            tile = -(-10 // grid[0]) * -(-7 // grid[1])
            assert max(csl.last_run().program.memory.sizes) <= tile
            assert set(csl.last_run().program.colors) == {"bcast_x", "relay_x", "bcast_y",
                                                           "relay_y"}
        loss = ((s @ pf.tensor(c0)) ** 2).mean()
        loss.backward()
        pf.eval(loss, a.grad)
        outs[backend] = [s.numpy(), loss.numpy(), a.grad.numpy()]
    assert_close(outs["reference"], outs["csl"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("m,k,n", [(64, 32, 8), (8, 32, 64)])
def test_tile_matmul_rate_on_one_pe(m, k, n):
    """The tile product as rank-1 updates with the short side unrolled (its line DSDs
    made once, before the loop over k): 64-element @fmacs run at >= 88% of the FMA
    rate (a loop of short lines, each DSD set up per line, stays near 85%); and the
    product is numpy's."""
    ta, tb, tc = (wse_type(f"{r}x{c}", "[-, -], x = 0, y = 0")
                  for r, c in ((m, k), (k, n), (m, n)))
    text = (f"wse.program @main {{width = 1, height = 1}} {{\n^bb0(%a: {ta}, %b: {tb}):\n"
            f"  %c = wse.matmul %a, %b : ({ta}, {tb}) -> {tc}\n  wse.return %c : {tc}\n}}")
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    (out,), report = run_wse(parse_wse(text), [a, b])
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)
    assert report.utilization >= 0.88
