"""Shape and dtype errors are raised when the op is *recorded*: before any
evaluation or compilation, with a message naming the op and the shapes (or
the offending dim), and without disturbing the lazy operands."""

from __future__ import annotations

import re

import numpy as np
import pytest
from _oracles import examples, shapes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyflame_mlir as pf

# Every test here proves "nothing was evaluated": record lazily even when the
# suite runs under PYFLAME_EAGER=1 (the eager test switches eager on itself).
pytestmark = pytest.mark.usefixtures("lazy")


def lazy(*shape, dtype=None):
    """A promise of the given shape (a recorded op, not host data)."""
    t = pf.zeros(*shape, dtype=dtype or pf.float32) + 1
    assert pf.is_lazy(t) or pf.CONFIG.eager
    return t


def fmt(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def raises_at_record(fn, op: str, *needles: str, exc=pf.ShapeError):
    """``fn`` must raise ``exc`` naming ``pyflame.<op>`` and every needle, and
    nothing may be evaluated or compiled on the way."""
    before = pf.counters()
    with pytest.raises(exc) as info:
        fn()
    after = pf.counters()
    assert after["evaluations"] == before["evaluations"], "evaluated before the error"
    assert after["compiles"] == before["compiles"], "compiled before the error"
    msg = str(info.value)
    if op:
        assert f"pyflame.{op}" in msg, msg
    for n in needles:
        assert n in msg, f"{n!r} not in {msg!r}"
    return info.value


# (id, thunk over fresh lazy operands, op named, needles)
CASES = [
    ("add", lambda: lazy(2, 3) + lazy(4), "add", "[2, 3]", "[4]"),
    ("radd_numpy", lambda: np.zeros((5,)) + lazy(2, 3), "add", "[5]", "[2, 3]"),
    ("sub", lambda: pf.sub(lazy(2, 3), lazy(3, 2)), "sub", "[2, 3]", "[3, 2]"),
    ("mul", lambda: lazy(4, 1, 3) * lazy(2, 4), "mul", "[4, 1, 3]", "[2, 4]"),
    ("div", lambda: lazy(3) / lazy(0), "div", "[3]", "[0]"),
    ("pow", lambda: lazy(2) ** lazy(3), "pow", "[2]", "[3]"),
    ("maximum", lambda: pf.maximum(lazy(2, 2), lazy(3)), "maximum", "[2, 2]", "[3]"),
    ("minimum", lambda: lazy(2, 2).minimum(lazy(2, 3)), "minimum", "[2, 2]", "[2, 3]"),
    ("eq", lambda: lazy(2) == lazy(3), "eq", "[2]", "[3]"),
    ("lt", lambda: lazy(2) < lazy(3, 3), "lt", "[2]", "[3, 3]"),
    ("logical_and", lambda: (lazy(2) > 0) & (lazy(3) > 0), "logical_and", "[2]", "[3]"),
    ("where", lambda: pf.where(lazy(2) > 0, lazy(3), lazy(2)), "where", "[2]", "[3]"),
    ("clamp", lambda: pf.clamp(lazy(2, 3), lazy(4), None), "clamp", "[2, 3]", "[4]"),
    ("matmul_inner", lambda: lazy(2, 3) @ lazy(4, 5), "matmul", "[2, 3]", "[4, 5]"),
    ("matmul_vec", lambda: lazy(3) @ lazy(4), "matmul", "[3]", "[4]"),
    ("matmul_batch", lambda: lazy(2, 3, 4) @ lazy(5, 4, 6), "matmul", "[2, 3, 4]",
     "[5, 4, 6]"),
    ("matmul_0d", lambda: lazy() @ lazy(3), "matmul", "[]", "[3]"),
    ("reshape", lambda: lazy(2, 3).reshape(4, 2), "reshape", "[2, 3]", "[4, 2]"),
    ("reshape_infer", lambda: lazy(2, 3).reshape(4, -1), "reshape", "[2, 3]", "[4, -1]"),
    ("reshape_two_infer", lambda: lazy(2, 3).view(-1, -1), "reshape", "[-1, -1]"),
    ("reshape_negative", lambda: lazy(2, 3).reshape(-2, -3), "reshape", "[-2, -3]"),
    ("view_empty_infer", lambda: lazy(0, 3).view(0, -1), "reshape", "[0, 3]"),
    ("flatten", lambda: lazy(2, 3, 4).flatten(2, 1), "flatten", "start_dim 2", "end_dim 1"),
    ("squeeze_dim", lambda: lazy(2, 3).squeeze(2), "squeeze", "dimension 2", "rank 2"),
    ("unsqueeze_dim", lambda: lazy(2, 3).unsqueeze(4), "unsqueeze", "dimension 4"),
    ("transpose_dim", lambda: lazy(2, 3).transpose(0, 2), "transpose", "dimension 2"),
    ("transpose_1d", lambda: lazy(3).transpose(0, 1), "transpose", "dimension 1"),
    ("permute_dup", lambda: lazy(2, 3, 4).permute(0, 0, 1), "permute", "[0, 0, 1]",
     "[2, 3, 4]"),
    ("permute_short", lambda: lazy(2, 3, 4).permute(1, 0), "permute", "[1, 0]", "[2, 3, 4]"),
    ("expand", lambda: lazy(2, 3).expand(4, 3), "broadcast_to", "[2, 3]", "[4, 3]"),
    ("expand_fewer", lambda: lazy(2, 3).expand(3), "broadcast_to", "[2, 3]", "[3]"),
    ("broadcast_to", lambda: pf.broadcast_to(lazy(3, 2), (3, 3)), "broadcast_to", "[3, 2]",
     "[3, 3]"),
    ("cat_dims", lambda: pf.cat([lazy(2, 3), lazy(3, 4)], 0), "concat", "[2, 3]", "[3, 4]"),
    ("cat_rank", lambda: pf.cat([lazy(2, 3), lazy(3)], 0), "concat", "[2, 3]", "[3]"),
    ("cat_dim_range", lambda: pf.cat([lazy(2, 3), lazy(2, 3)], 2), "concat", "dimension 2"),
    ("cat_empty", lambda: pf.cat([]), "concat", "non-empty"),
    ("stack", lambda: pf.stack([lazy(2, 3), lazy(3, 2)]), "concat", "[2, 3]", "[3, 2]"),
    ("split_sizes", lambda: lazy(3, 4).split([1, 1], 0), "split", "[1, 1]", "[3, 4]"),
    ("split_one_size", lambda: lazy(3, 4).split([2], 0), "split", "[2]", "[3, 4]"),
    ("split_zero", lambda: lazy(3, 4).split(0), "split", "positive"),
    ("chunk_zero", lambda: lazy(3, 4).chunk(0), "split", "positive"),
    ("sum_dim", lambda: lazy(2, 3).sum(2), "sum", "dimension 2", "rank 2"),
    ("sum_dup", lambda: lazy(2, 3).sum((0, -2)), "sum", "more than once"),
    ("mean_int", lambda: lazy(2, 3, dtype=pf.int32).mean(), "mean", "int32"),
    ("max_empty", lambda: lazy(0, 3).max(0), "max", "[0, 3]"),
    ("amin_empty", lambda: pf.amin(lazy(0, 3)), "min", "[0, 3]"),
    ("argmax_empty", lambda: lazy(2, 0).argmax(), "argmax", "[2, 0]"),
    ("argmin_empty_dim", lambda: lazy(2, 0).argmin(1), "argmin", "[2, 0]"),
    ("argmax_dim", lambda: lazy(2, 3).argmax(-3), "argmax", "dimension -3"),
    ("argmax_bool", lambda: (lazy(2) > 0).argmax(), "argmax", "bool"),
    ("softmax_dim", lambda: lazy(2, 3).softmax(2), "softmax", "dimension 2"),
    ("log_softmax_dim", lambda: pf.log_softmax(lazy(2), -2), "log_softmax", "dimension -2"),
    ("logsumexp_dim", lambda: pf.logsumexp(lazy(2, 3), (0, 3)), "logsumexp", "dimension 3"),
    ("neg_bool", lambda: -(lazy(2) > 0), "neg", "bool"),
    ("abs_bool", lambda: abs(lazy(2) > 0), "abs", "bool"),
    ("relu_bool", lambda: pf.relu(lazy(2) > 0), "relu", "bool"),
    ("sub_bool", lambda: (lazy(2) > 0) - 1, "sub", "bool"),
    ("pow_bool", lambda: (lazy(2) > 0) ** (lazy(2) > 0), "pow", "bool"),
    ("pow_negative_int", lambda: lazy(2, dtype=pf.int64) ** -2, "pow", "negative"),
    ("matmul_bool", lambda: (lazy(2, 2) > 0) @ (lazy(2, 2) > 0), "matmul", "bool"),
    ("gelu_mode", lambda: pf.gelu(lazy(2), approximate="erf"), "gelu", "'erf'"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_error_at_record_time(case):
    _, fn, op, *needles = case
    raises_at_record(fn, op, *needles)


@pytest.mark.parametrize("case", CASES[:20], ids=[c[0] for c in CASES[:20]])
def test_errors_in_eager_mode_too(case, eager):
    _, fn, op, *needles = case
    # operands are evaluated as they are recorded; the failing op is not
    with pytest.raises(pf.ShapeError, match=re.escape(f"pyflame.{op}")):
        fn()


def test_operands_stay_lazy_and_usable_after_an_error():
    a, b = lazy(2, 3), lazy(4)
    raises_at_record(lambda: a + b, "add", "[2, 3]", "[4]")
    assert pf.is_lazy(a) and pf.is_lazy(b)
    assert (a + 1).sum().item() == 12.0 and b.tolist() == [1.0] * 4


def test_shape_error_is_a_value_error_with_fields():
    e = raises_at_record(lambda: lazy(2, 3) @ lazy(2, 3), "matmul", "[2, 3]")
    assert isinstance(e, ValueError) and e.op == "matmul" and "[2, 3]" in e.reason


def test_non_shape_argument_errors():
    raises_at_record(lambda: pf.where(lazy(2), lazy(2), lazy(2)), "", "bool", exc=TypeError)
    raises_at_record(lambda: pf.matmul(lazy(2), 3), "", "tensors", exc=TypeError)
    raises_at_record(lambda: lazy(2) + "a", "", "str", exc=TypeError)
    raises_at_record(lambda: pf.clamp(lazy(2)), "", "min", exc=ValueError)
    raises_at_record(lambda: lazy(2).sum(1.5), "sum", "1.5")
    raises_at_record(lambda: lazy(2).astype("complex64"), "", "complex64", exc=TypeError)


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow,
                                         HealthCheck.function_scoped_fixture])
@given(a=shapes(max_dims=4, max_side=4), b=shapes(max_dims=4, max_side=4),
       op=st.sampled_from(["add", "mul", "maximum", "gt"]))
def test_broadcasting_errors_match_numpy(a, b, op):
    try:
        expected = np.broadcast_shapes(a, b)
    except ValueError:
        raises_at_record(lambda: getattr(pf, op)(lazy(*a), lazy(*b)), op, fmt(a), fmt(b))
        return
    assert getattr(pf, op)(lazy(*a), lazy(*b)).shape == expected


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow,
                                         HealthCheck.function_scoped_fixture])
@given(a=shapes(min_dims=0, max_dims=4, max_side=3), b=shapes(min_dims=0, max_dims=4,
                                                               max_side=3))
def test_matmul_errors_match_numpy(a, b):
    try:
        expected = np.matmul(np.zeros(a), np.zeros(b)).shape
    except ValueError:
        raises_at_record(lambda: lazy(*a) @ lazy(*b), "matmul", fmt(a), fmt(b))
        return
    assert (lazy(*a) @ lazy(*b)).shape == expected


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow,
                                         HealthCheck.function_scoped_fixture])
@given(shape=shapes(max_dims=4, max_side=4), data=st.data())
def test_reshape_and_broadcast_to_errors_match_numpy(shape, data):
    target = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    x = lazy(*shape)
    if int(np.prod(shape)) != int(np.prod(target)):
        raises_at_record(lambda: x.reshape(target), "reshape", fmt(shape), fmt(target))
    else:
        assert x.reshape(target).shape == target
    try:
        np.broadcast_to(np.zeros(shape), target)
    except ValueError:
        raises_at_record(lambda: pf.broadcast_to(x, target), "broadcast_to", fmt(shape),
                         fmt(target))
    else:
        assert pf.broadcast_to(x, target).shape == target
