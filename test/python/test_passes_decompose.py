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
    xs = [random_array(rng, s, d) for s in in_shapes]
    (out,) = opdef.decomposition(NumpyBuilder(), xs, **attrs)
    want = np.asarray(opdef.kernel(*xs, **attrs))
    assert out.shape == want.shape and out.dtype == want.dtype
    np.testing.assert_allclose(out, want, **_tolerance(d), err_msg=f"{name} {in_shapes} {attrs}")


@pytest.mark.parametrize("name", DECOMPOSED)
@settings(SETTINGS, max_examples=examples(6))
@given(data=st.data(), d=FLOATS, seed=seeds)
def test_decompose_pass_round_trip(name: str, data: st.DataObject, d: pf.DType,
                                   seed: int) -> None:
    opdef = OPS[name]
    in_shapes, attrs = data.draw(CASES[name])
    rng = np.random.default_rng(seed)
    xs = [random_array(rng, s, d) for s in in_shapes]

    def run(pipeline: str) -> tuple[np.ndarray, str]:
        pf.set_pipeline(pipeline)
        try:
            out = record(opdef, tuple(pf.from_numpy(x) for x in xs), attrs)
            text = pf.to_mlir([out], optimize=True)
            return out.numpy(), text
        finally:
            pf.set_pipeline(None)

    primitive, text = run("none")
    assert f"pyflame.{name} " in text
    decomposed, text = run(f"decompose{{ops={name}}}")
    assert f"pyflame.{name} " not in text  # the pass left none of the op
    # the decomposed program runs the decomposition's ops: exactly its numbers
    (by_kernels,) = opdef.decomposition(NumpyBuilder(), xs, **attrs)
    np.testing.assert_array_equal(decomposed, by_kernels)
    np.testing.assert_allclose(decomposed, primitive, **_tolerance(d))


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
