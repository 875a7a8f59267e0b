"""``pf.numpy.fft``: jax.numpy.fft's names and signatures. The transforms
give and take :class:`pyflame_mlir.fft.Complex` arrays (pf has no complex
dtype; see ``pf.fft``), computed there; the sample frequencies and shifts
are ``pf.fft``'s, in JAX's default float."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import fft as _fft
from .core import Tensor
from .fft import Complex, c2c, c2r, r2c
from .jax_config import default_float

__all__ = ["Complex", "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2",
           "ifftn", "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2",
           "rfftfreq", "rfftn"]


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Complex:
    return c2c(a, n, axis, norm, False, "jnp.fft.fft")


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Complex:
    return c2c(a, n, axis, norm, True, "jnp.fft.ifft")


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Complex:
    return r2c(a, n, axis, norm, "jnp.fft.rfft")


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Tensor:
    return c2r(a, n, axis, norm, "jnp.fft.irfft")


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Tensor:
    """The real spectrum of a Hermitian signal: ``irfft(conj(a))`` with the
    inverse's scale swapped (numpy's definition)."""
    c = a if isinstance(a, Complex) else Complex(a)
    return c2r(c.conj(), n, axis, _swapped(norm), "jnp.fft.hfft")


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Complex:
    """``hfft``'s inverse: ``conj(rfft(a))`` with the scale swapped."""
    return r2c(a, n, axis, _swapped(norm), "jnp.fft.ihfft").conj()


def _swapped(norm: str | None) -> str:
    return {None: "forward", "backward": "forward", "forward": "backward"}.get(norm, norm)


def _axes_sizes(name: str, ndim: int, s: Sequence[int] | None, axes: Sequence[int] | None
                ) -> tuple[list[int], list[int | None]]:
    if axes is None:
        axes = list(range(ndim - (len(s) if s is not None else ndim), ndim))
    axes = [int(a) for a in axes]
    if s is None:
        return axes, [None] * len(axes)
    if len(s) != len(axes):
        raise ValueError(f"{name}: shape and axes have different lengths ({len(s)} and "
                         f"{len(axes)})")
    return axes, [int(v) for v in s]


def _ndim(a: Any) -> int:
    return a.ndim if isinstance(a, Complex | Tensor) else Complex(a).ndim


def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Complex:
    axes_, sizes = _axes_sizes("jnp.fft.fftn", _ndim(a), s, axes)
    out = a if isinstance(a, Complex) else Complex(a)
    for ax, n in zip(reversed(axes_), reversed(sizes)):
        out = c2c(out, n, ax, norm, False, "jnp.fft.fftn")
    return out


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Complex:
    axes_, sizes = _axes_sizes("jnp.fft.ifftn", _ndim(a), s, axes)
    out = a if isinstance(a, Complex) else Complex(a)
    for ax, n in zip(reversed(axes_), reversed(sizes)):
        out = c2c(out, n, ax, norm, True, "jnp.fft.ifftn")
    return out


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Complex:
    """``rfft`` along the last of ``axes``, then ``fft`` along the others."""
    axes_, sizes = _axes_sizes("jnp.fft.rfftn", _ndim(a), s, axes)
    out = r2c(a, sizes[-1], axes_[-1], norm, "jnp.fft.rfftn")
    for ax, n in zip(reversed(axes_[:-1]), reversed(sizes[:-1])):
        out = c2c(out, n, ax, norm, False, "jnp.fft.rfftn")
    return out


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Tensor:
    """``ifft`` along all but the last of ``axes``, then ``irfft`` along it."""
    axes_, sizes = _axes_sizes("jnp.fft.irfftn", _ndim(a), s, axes)
    out = a if isinstance(a, Complex) else Complex(a)
    for ax, n in zip(reversed(axes_[:-1]), reversed(sizes[:-1])):
        out = c2c(out, n, ax, norm, True, "jnp.fft.irfftn")
    return c2r(out, sizes[-1], axes_[-1], norm, "jnp.fft.irfftn")


def _two_axes(name: str, axes: Sequence[int]) -> Sequence[int]:
    if len(axes) != 2:
        raise ValueError(f"jnp.fft.{name} only supports 2 axes. Got axes = {tuple(axes)}.")
    return axes


def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Complex:
    return fftn(a, s, _two_axes("fft2", axes), norm)


def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Complex:
    return ifftn(a, s, _two_axes("ifft2", axes), norm)


def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Complex:
    return rfftn(a, s, _two_axes("rfft2", axes), norm)


def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Tensor:
    return irfftn(a, s, _two_axes("irfft2", axes), norm)


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Tensor:
    del device
    return _fft.fftfreq(n, d, dtype=default_float() if dtype is None else dtype)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Tensor:
    del device
    return _fft.rfftfreq(n, d, dtype=default_float() if dtype is None else dtype)


def fftshift(x: Any, axes: Any = None) -> Any:
    """The zero frequency moved to the middle (a real or complex array)."""
    if isinstance(x, Complex):
        return Complex(_fft.fftshift(x.real, axes), _fft.fftshift(x.imag, axes))
    return _fft.fftshift(x, axes)


def ifftshift(x: Any, axes: Any = None) -> Any:
    if isinstance(x, Complex):
        return Complex(_fft.ifftshift(x.real, axes), _fft.ifftshift(x.imag, axes))
    return _fft.ifftshift(x, axes)
