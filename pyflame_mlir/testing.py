"""``pf.testing.assert_close``: torch.testing's comparison, with its default
tolerances per dtype and its messages, for pyflame tensors, numpy arrays,
Python numbers and (nested) sequences and mappings of them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .core import Tensor

__all__ = ["assert_close"]

# torch.testing's defaults: (rtol, atol) by dtype name; integers and bool compare exactly
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7)}


def _as_array(x: Any) -> tuple[np.ndarray, str, str]:
    """(values, dtype name, kind of input) of a tensor-like leaf."""
    if isinstance(x, Tensor):
        return np.asarray(x.detach().numpy()), x.dtype.name, "Tensor"
    if isinstance(x, np.ndarray):
        return x, x.dtype.name, "ndarray"
    if isinstance(x, bool | int | float | np.number | np.bool_):
        name = "bool" if isinstance(x, bool | np.bool_) else \
            "int64" if isinstance(x, int | np.integer) else "float64"
        return np.asarray(x), name, "scalar"
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(x)}.")


def _fail(msg: str | None, default: str) -> AssertionError:
    return AssertionError(msg if msg is not None else default)


def _compare(actual: Any, expected: Any, rtol: float | None, atol: float | None,
             equal_nan: bool, check_dtype: bool, msg: str | None, path: str) -> None:
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise _fail(msg, f"The keys of the mappings do not match{path}: "
                             f"{sorted(map(str, actual))} != {sorted(map(str, expected))}")
        for k in expected:
            _compare(actual[k], expected[k], rtol, atol, equal_nan, check_dtype, msg,
                     f"{path}[{k!r}]")
        return
    seqs = (Sequence,)
    if isinstance(actual, seqs) and isinstance(expected, seqs) and \
            not isinstance(actual, str) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _fail(msg, f"The length of the sequences mismatch{path}: {len(actual)} != "
                             f"{len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, rtol, atol, equal_nan, check_dtype, msg, f"{path}[{i}]")
        return
    a, a_dt, a_kind = _as_array(actual)
    e, e_dt, e_kind = _as_array(expected)
    where = f"\n\nThe failure occurred for item {path}" if path else ""
    if a_kind != e_kind:
        raise TypeError(f"Except for Python scalars, input types need to match: got "
                        f"{type(actual).__name__} and {type(expected).__name__}{where}")
    if a.shape != e.shape:
        raise _fail(msg, f"The values for attribute 'shape' do not match: {a.shape} != "
                         f"{e.shape}.{where}")
    if check_dtype and a_dt != e_dt:
        raise _fail(msg, f"The values for attribute 'dtype' do not match: {a_dt} != "
                         f"{e_dt}.{where}")
    if rtol is None:
        rtol, atol = max(_TOLERANCES.get(a_dt, (0.0, 0.0)), _TOLERANCES.get(e_dt, (0.0, 0.0)))
    assert atol is not None
    if a.dtype == np.bool_ or e.dtype == np.bool_:
        a, e = a.astype(np.int64), e.astype(np.int64)
    wide = np.float64 if a.dtype.kind == "f" or e.dtype.kind == "f" or a.dtype.kind == "V" \
        or e.dtype.kind == "V" else None
    av = a.astype(wide) if wide else a
    ev = e.astype(wide) if wide else e
    if wide:
        with np.errstate(invalid="ignore"):
            close = np.isclose(av, ev, rtol=rtol, atol=atol, equal_nan=equal_nan)
        close |= (av == ev)  # equal infinities
    else:
        diff_int = np.abs(av.astype(np.float64) - ev.astype(np.float64))
        close = diff_int <= atol + rtol * np.abs(ev.astype(np.float64))
    if close.all():
        return
    kind = "Scalars" if a_kind == "scalar" else "Tensor-likes"
    if a.ndim == 0:
        raise _fail(msg, f"{kind} are not close!\n\nExpected {e.item()} but got {a.item()}.\n"
                         f"Absolute difference: {abs(float(av) - float(ev))} (up to {atol} "
                         f"allowed)\nRelative difference: "
                         f"{abs(float(av) - float(ev)) / abs(float(ev)) if ev else float('inf')}"
                         f" (up to {rtol} allowed){where}")
    fa, fe = av.astype(np.float64), ev.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        absdiff = np.where(close, 0.0, np.abs(fa - fe))
        reldiff = np.where(close, 0.0, absdiff / np.abs(fe))
    absdiff = np.nan_to_num(absdiff, nan=np.inf)
    reldiff = np.nan_to_num(reldiff, nan=np.inf)
    bad = int((~close).sum())
    ia = np.unravel_index(int(np.argmax(absdiff)), a.shape)
    ir = np.unravel_index(int(np.argmax(reldiff)), a.shape)
    raise _fail(msg, f"{kind} are not close!\n\nMismatched elements: {bad} / {a.size} "
                     f"({100 * bad / a.size:.1f}%)\nGreatest absolute difference: "
                     f"{absdiff[ia]} at index {tuple(map(int, ia))} (up to {atol} allowed)\n"
                     f"Greatest relative difference: {reldiff[ir]} at index "
                     f"{tuple(map(int, ir))} (up to {rtol} allowed){where}")


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_device: bool = True, check_dtype: bool = True,
                 check_layout: bool = True, check_stride: bool = False,
                 msg: str | None = None) -> None:
    """Raise AssertionError unless ``|actual - expected| <= atol + rtol *
    |expected|`` elementwise (NaNs equal only with ``equal_nan``), shapes
    equal, dtypes equal (``check_dtype``). Default tolerances by dtype as
    torch's; give both ``rtol`` and ``atol`` or neither."""
    del allow_subclasses, check_device, check_layout, check_stride
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    _compare(actual, expected, rtol, atol, equal_nan, check_dtype, msg, "")
