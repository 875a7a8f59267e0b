"""Decompositions (``OpDef.decomposition``): for every op that has one, on
hypothesis-drawn shapes, the decomposition run with the reference kernels
gives the op's own kernel's result, and a program sent through the
``decompose`` pass computes the same numbers as with the primitive."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _oracles import broadcast_pair, examples, random_array, seeds, shapes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyflame_mlir.dialects import OPS
from pyflame_mlir.dialects.dtypes import dtype as to_dtype

import pyflame_mlir as pf
from pyflame_mlir.core import record

SETTINGS = settings(max_examples=examples(25), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
FLOATS = st.sampled_from([pf.float32, pf.float64])


class NumpyBuilder:
    """The builder interface of ``dialects/ad.py`` over numpy: each op runs its
    reference kernel at once (after its shape rule, as the IR builder does)."""

    def shape(self, v: np.ndarray) -> tuple[int, ...]:
        return tuple(v.shape)

    def dtype(self, v: np.ndarray) -> pf.DType:
        return to_dtype(v.dtype)

    def op(self, name: str, *inputs: np.ndarray, **attrs: Any) -> np.ndarray:
        opdef = OPS[name]
        ((shape, d),) = opdef.check([self.shape(v) for v in inputs],
                                    [self.dtype(v) for v in inputs], attrs)
        out = np.asarray(opdef.kernel(*inputs, **attrs))
        assert out.shape == shape and to_dtype(out.dtype) is d, name
        return out

    def scalar(self, value: float, like: np.ndarray) -> np.ndarray:
        return np.asarray(value, dtype=like.dtype)

    def __getattr__(self, name: str) -> Any:
        if name in OPS:
            return lambda *inputs, **attrs: self.op(name, *inputs, **attrs)
        raise AttributeError(name)


@st.composite
def _along_dim(draw: Any) -> tuple[list[tuple[int, ...]], dict[str, Any]]:
    shape = draw(shapes(min_dims=1, min_side=1, max_side=5))
    return [shape], {"dim": draw(st.integers(0, len(shape) - 1))}


@st.composite
def _over_dims(draw: Any) -> tuple[list[tuple[int, ...]], dict[str, Any]]:
    shape = draw(shapes(min_dims=1, min_side=1, max_side=5))
    dims = draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True))
    return [shape], {"dims": tuple(sorted(dims)), "keepdim": draw(st.booleans())}


@st.composite
def _pair(draw: Any) -> tuple[list[tuple[int, ...]], dict[str, Any]]:
    a, b = draw(broadcast_pair(min_side=1)).input_shapes
    return [a, b], {}


@st.composite
def _triple(draw: Any) -> tuple[list[tuple[int, ...]], dict[str, Any]]:
    a, b = draw(broadcast_pair(min_side=1)).input_shapes
    return [a, b, np.broadcast_shapes(a, b)], {}


@st.composite
def _matmul(draw: Any, approximate: bool = False) -> tuple[list[tuple[int, ...]], dict]:
    m, k, n = (draw(st.integers(1, 6)) for _ in range(3))
    attrs = {"approximate": draw(st.sampled_from(["none", "tanh"]))} if approximate else {}
    return [(m, k), (k, n)], attrs


_WINDOWS = st.sampled_from([
    # kernel, stride, padding, dilation, ceil_mode (max pooling: dialects/pooling.py)
    ((2, 2), (2, 2), (0, 0), (1, 1), False), ((3, 2), (2, 1), (1, 1), (1, 2), True),
    ((3,), (2,), (1,), (1,), True), ((2, 1, 3), (1, 2, 2), (1, 0, 1), (2, 1, 1), False)])


def _window_attrs(w: tuple) -> dict[str, Any]:
    return dict(zip(("kernel", "stride", "padding", "dilation", "ceil_mode"), w))


@st.composite
def _max_pool(draw: Any) -> tuple[list[tuple[int, ...]], dict[str, Any]]:
    w = draw(_WINDOWS)
    size = tuple(draw(st.integers(d * (k - 1) + 1, 7)) for k, d in zip(w[0], w[3]))
    return [(draw(st.integers(1, 3)), *size)], _window_attrs(w)


@st.composite
def _max_pool_grad(draw: Any) -> tuple[list[Any], dict[str, Any]]:
    """The cotangent's shape and the offsets (an integer operand: ``("index",
    shape, count)``) of a drawn max pooling."""
    (shape,), attrs = draw(_max_pool())
    ((out, _), _) = OPS["max_pool"].check([shape], [pf.float32], attrs)
    count = int(np.prod(attrs["kernel"]))
    return [out, ("index", out, count)], {**attrs, "size": shape[1:]}


# op -> its operand shapes and attributes; every op with a decomposition needs one
CASES: dict[str, st.SearchStrategy] = {
    "softmax": _along_dim(),
    "log_softmax": _along_dim(),
    "logsumexp": _over_dims(),
    "fused_add_relu": _pair(),
    "fused_mul_sigmoid": _pair(),
    "fused_fma": _triple(),
    "fused_matmul_relu": _matmul(),
    "fused_matmul_gelu": _matmul(approximate=True),
    "expm1": _along_dim().map(lambda c: (c[0], {})),
    "atan": _along_dim().map(lambda c: (c[0], {})),
    "asin": _along_dim().map(lambda c: (c[0], {})),
    "atan2": _pair(),
    # x, gelu(x) (any values: the decomposition and kernel read both) and the cotangent
    "gelu_grad": _along_dim().map(lambda c: (c[0] * 3, {})),
    "max_pool": _max_pool(),
    "max_pool_grad": _max_pool_grad(),
}
DECOMPOSED = sorted(n for n, d in OPS.items() if d.decomposition is not None)


def _tolerance(d: pf.DType) -> dict[str, float]:
    return {"rtol": 2e-6, "atol": 1e-6} if d is pf.float32 else {"rtol": 1e-13, "atol": 1e-14}


def test_every_decomposition_has_a_case() -> None:
    assert DECOMPOSED == sorted(CASES)
    assert {"softmax", "log_softmax", "logsumexp"} <= set(DECOMPOSED)


@pytest.mark.parametrize("name", DECOMPOSED)
@SETTINGS
@given(data=st.data(), d=FLOATS, seed=seeds)
def test_decomposition_gives_the_kernel_result(name: str, data: st.DataObject, d: pf.DType,
                                               seed: int) -> None:
    opdef = OPS[name]
    in_shapes, attrs = data.draw(CASES[name])
    rng = np.random.default_rng(seed)
    xs = _operands(rng, in_shapes, d)
    outs = opdef.decomposition(NumpyBuilder(), xs, **attrs)
    wants = _results(opdef.kernel(*xs, **attrs))
    for out, want in zip(outs, wants, strict=True):
        assert out.shape == want.shape and out.dtype == want.dtype
        np.testing.assert_allclose(out, want, **_tolerance(d),
                                   err_msg=f"{name} {in_shapes} {attrs}")


def _operands(rng: np.random.Generator, in_shapes: list, d: pf.DType) -> list[np.ndarray]:
    """Random operands of ``d``; an ``("index", shape, count)`` entry is int64 in [0, count)."""
    return [rng.integers(0, s[2], s[1]).astype(np.int64) if s and s[0] == "index"
            else random_array(rng, s, d) for s in in_shapes]


def _results(out: Any) -> list[np.ndarray]:
    return [np.asarray(o) for o in out] if isinstance(out, tuple | list) else [np.asarray(out)]


@pytest.mark.usefixtures("lazy")  # it prints the recorded graph (eager mode records none)
@pytest.mark.parametrize("name", DECOMPOSED)
@settings(SETTINGS, max_examples=examples(6))
@given(data=st.data(), d=FLOATS, seed=seeds)
def test_decompose_pass_round_trip(name: str, data: st.DataObject, d: pf.DType,
                                   seed: int) -> None:
    opdef = OPS[name]
    in_shapes, attrs = data.draw(CASES[name])
    rng = np.random.default_rng(seed)
    xs = _operands(rng, in_shapes, d)

    def run(pipeline: str) -> tuple[list[np.ndarray], str]:
        pf.set_pipeline(pipeline)
        try:
            out = record(opdef, tuple(pf.from_numpy(x) for x in xs), attrs)
            outs = out if isinstance(out, list) else [out]
            text = pf.to_mlir(outs, optimize=True)
            return [o.numpy() for o in outs], text
        finally:
            pf.set_pipeline(None)

    primitive, text = run("none")
    assert f"pyflame.{name} " in text
    decomposed, text = run(f"decompose{{ops={name}}}")
    assert f"pyflame.{name} " not in text  # the pass left none of the op
    # the decomposed program runs the decomposition's ops: exactly its numbers
    by_kernels = opdef.decomposition(NumpyBuilder(), xs, **attrs)
    for dec, by, prim in zip(decomposed, by_kernels, primitive, strict=True):
        np.testing.assert_array_equal(dec, by)
        np.testing.assert_allclose(dec, prim, **_tolerance(d))


def test_decomposition_differs_where_documented() -> None:
    # an all -inf slice: the kernel shifts by 0 (-inf like PyTorch), the
    # max-shift decomposition gives NaN (what a backend without logsumexp computes)
    x = np.array([[-np.inf, -np.inf], [0.0, 1.0]], np.float32)
    opdef = OPS["logsumexp"]
    with np.errstate(invalid="ignore"):
        (out,) = opdef.decomposition(NumpyBuilder(), [x], dims=(1,), keepdim=False)
        want = opdef.kernel(x, dims=(1,), keepdim=False)
    assert want[0] == -np.inf and np.isnan(out[0])
    np.testing.assert_allclose(out[1], want[1], rtol=1e-6)
