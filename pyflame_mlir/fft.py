"""``pf.fft``: torch.fft's names. pf has no complex dtype, so the transforms
(``fft``, ``rfft``, ``ifft``, ``irfft``, ``hfft``...) raise, naming the
function and why; the real-valued helpers work as torch's: ``fftfreq``,
``rfftfreq`` (the sample frequencies) and ``fftshift``/``ifftshift`` (a
roll, differentiable)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .core import Tensor
from .creation import tensor as _tensor
from .dialects.dtypes import default_float
from .dialects.dtypes import dtype as to_dtype
from .indexing import roll
from .ops import as_tensor_arg

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft",
           "ifft2", "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2",
           "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]


def _frequencies(values: np.ndarray, dtype: Any, requires_grad: bool) -> Tensor:
    dt = default_float() if dtype is None else to_dtype(dtype)
    t = _tensor(values.astype(dt.np), dtype=dt)
    return t.requires_grad_(True) if requires_grad else t


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``."""
    del layout, device
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _frequencies(k / (d * n), dtype, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """``[0, 1, ..., n // 2] / (d * n)``."""
    del layout, device
    with np.errstate(invalid="ignore", divide="ignore"):  # n = 0: [nan], as torch's
        values = np.arange(0, n // 2 + 1) / (d * n)
    return _frequencies(values, dtype, requires_grad)


def _shift(input: Any, dim: Any, sign: int) -> Tensor:  # noqa: A002
    x = as_tensor_arg(input)
    dims = list(range(x.ndim)) if dim is None else ([dim] if isinstance(dim, int) else
                                                    list(dim))
    if not dims:
        return x
    shifts = [sign * (x.shape[d] // 2) for d in dims]
    return roll(x, shifts, dims)


def fftshift(input: Any, dim: Any = None) -> Tensor:  # noqa: A002
    """The zero frequency moved to the middle: a roll by n // 2 along ``dim`` (all dims)."""
    return _shift(input, dim, 1)


def ifftshift(input: Any, dim: Any = None) -> Tensor:  # noqa: A002
    """``fftshift``'s inverse: a roll by -(n // 2)."""
    return _shift(input, dim, -1)


def _complex_only(name: str) -> Callable[..., Any]:
    def fn(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"torch.fft.{name}: the discrete Fourier transforms work "
                                  "on or give complex tensors, and pf has no complex dtype")
    fn.__name__ = name
    return fn


fft, ifft, fft2, ifft2, fftn, ifftn = (_complex_only(n) for n in (
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn"))
rfft, irfft, rfft2, irfft2, rfftn, irfftn = (_complex_only(n) for n in (
    "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn"))
hfft, ihfft, hfft2, ihfft2, hfftn, ihfftn = (_complex_only(n) for n in (
    "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn"))
