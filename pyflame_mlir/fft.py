"""``pf.fft``: torch.fft's names, and the discrete Fourier transforms that
``pf.numpy.fft`` (jnp.fft's names) gives.

pf has no complex dtype. The transforms here compute on a :class:`Complex`,
a complex array held as its real and imaginary float tensors: a DFT along an
axis is matmuls with the cos/sin matrices up to 256 points; a longer
composite length splits in two factors (the four-step FFT, recursively:
O(n (n1 + n2)) work; a large prime length stays one O(n^2) matmul pair).
Gradients, ``vmap`` and ``pf.compile`` go through the real ops, and a
``Complex`` is a pytree node (its two tensors). torch.fft's
transforms still raise (torch's complex tensors have the whole op surface;
a ``Complex`` has only the arithmetic below); the real-valued helpers work
as torch's: ``fftfreq``, ``rfftfreq`` (the sample frequencies) and
``fftshift``/``ifftshift`` (a roll, differentiable)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from . import ops
from .core import Tensor
from .creation import tensor as _tensor
from .creation import zeros
from .dialects.dtypes import DType, default_float, float64
from .dialects.dtypes import dtype as to_dtype
from .indexing import flip, movedim, narrow, roll
from .jax_config import canonical_host
from .jax_config import default_float as jax_float
from .ops import as_tensor_arg
from .tree_util import register_pytree_node

__all__ = ["Complex", "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn",
           "ifft", "ifft2", "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2",
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


# ---- the transforms on (real, imaginary) pairs ----

class Complex:
    """A complex array as two float tensors of one shape and dtype: ``real``
    and ``imag`` (what ``pf.numpy.fft``'s transforms give and take). It
    has the arithmetic with complex, real and Python-number operands on its
    left side or its right (``+ - * /``, ``-``, ``abs``), ``conj()``,
    ``angle()``, indexing, ``reshape``, ``sum``/``mean``, ``shape``/
    ``dtype`` (numpy's complex64/complex128) and ``numpy()``/
    ``np.asarray``; a pf tensor on the LEFT of an operator raises (pf's
    tensors take no complex operand): write ``X * h``, not ``h * X``."""

    __slots__ = ("imag", "real")
    __array_ufunc__ = None  # numpy arrays defer to the reflected operators

    def __init__(self, real: Any, imag: Any = None) -> None:
        re = _host(real)
        if not re.dtype.is_floating_point:  # (JAX's default float: float64 with x64)
            re = re.to(jax_float())
        im = zeros(tuple(re.shape), dtype=re.dtype) if imag is None else _host(imag)
        if tuple(im.shape) != tuple(re.shape) or im.dtype != re.dtype:
            raise ValueError(f"Complex: the real part {tuple(re.shape)} {re.dtype.name} and "
                             f"the imaginary part {tuple(im.shape)} {im.dtype.name} must "
                             "have one shape and dtype")
        self.real, self.imag = re, im

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.real.shape)

    @property
    def ndim(self) -> int:
        return self.real.ndim

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.complex128 if self.real.dtype == float64 else np.complex64)

    def numpy(self) -> np.ndarray:
        out = np.empty(self.shape, self.dtype)
        out.real, out.imag = self.real.numpy(), self.imag.numpy()
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self) -> str:
        return f"Complex({self.numpy()!r})"

    def __len__(self) -> int:
        return self.shape[0]

    def conj(self) -> Complex:
        return Complex(self.real, ops.neg(self.imag))

    conjugate = conj

    def __abs__(self) -> Tensor:
        return ops.sqrt(self.real * self.real + self.imag * self.imag)

    def angle(self) -> Tensor:
        return ops.atan2(self.imag, self.real)

    def __neg__(self) -> Complex:
        return Complex(ops.neg(self.real), ops.neg(self.imag))

    def __pos__(self) -> Complex:
        return self

    def __add__(self, other: Any) -> Complex:
        o = _as_complex(other, self)
        return Complex(self.real + o.real, self.imag + o.imag)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Complex:
        o = _as_complex(other, self)
        return Complex(self.real - o.real, self.imag - o.imag)

    def __rsub__(self, other: Any) -> Complex:
        return _as_complex(other, self) - self

    def __mul__(self, other: Any) -> Complex:
        if not _is_complex(other):  # a real factor scales both parts
            o = _real_operand(other, self)
            return Complex(self.real * o, self.imag * o)
        other = _as_complex(other, self)
        a, b, c, d = self.real, self.imag, other.real, other.imag
        return Complex(a * c - b * d, a * d + b * c)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Complex:
        if not _is_complex(other):
            o = _real_operand(other, self)
            return Complex(self.real / o, self.imag / o)
        other = _as_complex(other, self)
        den = other.real * other.real + other.imag * other.imag
        num = self * other.conj()
        return Complex(num.real / den, num.imag / den)

    def __rtruediv__(self, other: Any) -> Complex:
        return _as_complex(other, self) / self

    def __pow__(self, k: Any) -> Complex:
        """A non-negative integer power (repeated products, by squaring)."""
        if not isinstance(k, int | np.integer) or isinstance(k, bool) or k < 0:
            raise TypeError(f"Complex ** {k!r}: only non-negative integer powers are "
                            "supported (pf has no complex exp/log)")
        out, base, k = _as_complex(1.0, self) + self * 0.0, self, int(k)
        while k:
            if k & 1:
                out = out * base
            base, k = base * base, k >> 1
        return out

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        o = _as_complex(other, self)
        return ops.logical_and(ops.eq(self.real, o.real), ops.eq(self.imag, o.imag))

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return ops.logical_not(self.__eq__(other))

    __hash__ = None  # type: ignore[assignment]  (elementwise ==, as arrays)

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self.real.item() != 0 or self.imag.item() != 0)

    def __getitem__(self, key: Any) -> Complex:
        return Complex(self.real[key], self.imag[key])

    def reshape(self, *shape: Any) -> Complex:
        return Complex(self.real.reshape(*shape), self.imag.reshape(*shape))

    def sum(self, axis: Any = None, keepdims: bool = False) -> Complex:
        return Complex(*(_reduce(ops.sum, t, axis, keepdims) for t in (self.real, self.imag)))

    def mean(self, axis: Any = None, keepdims: bool = False) -> Complex:
        return Complex(*(_reduce(ops.mean, t, axis, keepdims) for t in (self.real, self.imag)))


def _host(x: Any) -> Tensor:
    """A tensor as is; host data in JAX's dtypes (float64 is float32 without x64)."""
    return x if isinstance(x, Tensor) else as_tensor_arg(canonical_host(x))


def _reduce(fn: Callable[..., Tensor], t: Tensor, axis: Any, keepdims: bool) -> Tensor:
    dims = tuple(range(t.ndim)) if axis is None else axis
    return fn(t, dims, keepdim=keepdims)


def _is_complex(v: Any) -> bool:
    return isinstance(v, Complex | complex | np.complexfloating) or (
        isinstance(v, np.ndarray) and v.dtype.kind == "c")


def _real_operand(other: Any, like: Complex) -> Tensor:
    if isinstance(other, np.ndarray) and other.dtype == np.float64 and jax_float() != float64:
        other = other.astype(np.float32)  # JAX's canonical dtype without x64
    o = as_tensor_arg(other)
    return o.to(like.real.dtype) if not o.dtype.is_floating_point else o


def _as_complex(other: Any, like: Complex) -> Complex:
    if isinstance(other, Complex):
        return other
    if _is_complex(other):
        v = np.asarray(other)
        dt = like.real.dtype
        return Complex(_tensor(v.real.astype(dt.np), dtype=dt),
                       _tensor(v.imag.astype(dt.np), dtype=dt))
    o = _real_operand(other, like)
    return Complex(o, zeros(tuple(o.shape), dtype=o.dtype))


register_pytree_node(Complex, lambda c: ((c.real, c.imag), None),
                     lambda _, children: Complex(*children))


_NORMS = ("backward", "ortho", "forward")


def _scale(norm: str | None, n: int, inverse: bool) -> float:
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".')
    if norm == "ortho":
        return 1.0 / float(np.sqrt(n))
    return 1.0 / n if (norm == "backward") == inverse else 1.0


def _angles(n: int, rows: int, cols: int) -> np.ndarray:
    """``2 pi (j k mod n) / n`` for j < rows, k < cols (the product reduced
    exactly in integers before the float division)."""
    jk = np.outer(np.arange(rows, dtype=np.int64), np.arange(cols, dtype=np.int64)) % n
    return 2.0 * np.pi * jk / n


@functools.lru_cache(maxsize=64)
def _trig(n: int, rows: int, cols: int, np_dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """``cos`` and ``sin`` of :func:`_angles` in ``np_dtype``, kept (a
    ``pf.compile``'d function runs its Python every call: the matrices are
    not recomputed)."""
    ang = _angles(n, rows, cols)
    out = []
    for v in (np.cos(ang), np.sin(ang)):
        v[np.abs(v) < 1e-12] = 0.0  # the quarter turns exactly (cos(pi / 2) is 6e-17)
        out.append(v.astype(np_dtype))
    for a in out:
        a.flags.writeable = False
    return out[0], out[1]


def _trig_consts(n: int, rows: int, cols: int, dt: DType, sin_factor: float = 1.0
                 ) -> tuple[Tensor, Tensor]:
    c, s_ = _trig(n, rows, cols, np.dtype(dt.np).name)
    return (_tensor(c, dtype=dt),
            _tensor(s_ if sin_factor == 1.0 else s_ * dt.np.type(sin_factor), dtype=dt))


def _const(values: np.ndarray, dt: DType) -> Tensor:
    return _tensor(values.astype(dt.np), dtype=dt)


def _resize(t: Tensor, n: int) -> Tensor:
    """``t`` cut or zero-padded to length ``n`` along its last axis."""
    m = t.shape[-1]
    if n == m:
        return t
    if n < m:
        return narrow(t, -1, 0, n)
    return ops.cat([t, zeros((*t.shape[:-1], n - m), dtype=t.dtype)], -1)


def _float_dtype(x: Any) -> Complex:
    if isinstance(x, Complex):
        return x
    t = _host(x)
    if not t.dtype.is_floating_point:
        t = t.to(jax_float())
    elif t.dtype.np.itemsize < 4:  # float16/bfloat16 compute (and give) complex64
        t = t.to("float32")
    return Complex(t, None)


def _last(x: Complex, axis: int) -> tuple[Complex, int]:
    ax = axis + x.ndim if axis < 0 else axis
    if not 0 <= ax < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    if ax == x.ndim - 1:
        return x, ax
    return Complex(movedim(x.real, ax, -1), movedim(x.imag, ax, -1)), ax


def _back(x: Complex, ax: int) -> Complex:
    if ax == x.ndim - 1:
        return x
    return Complex(movedim(x.real, -1, ax), movedim(x.imag, -1, ax))


def _check_n(name: str, n: int) -> None:
    if n < 1:
        raise ValueError(f"{name}: invalid number of data points ({n}) specified; it must "
                         "be at least 1")


# sizes up to this are one matmul pair per axis; larger composite sizes split
# in two factors (the four-step FFT): O(n (n1 + n2)) work, small matrices
_DIRECT_MAX = 256


def _split_size(n: int) -> int:
    """The largest divisor of ``n`` at most ``sqrt(n)`` (1: ``n`` is prime)."""
    for d in range(int(np.sqrt(n)), 1, -1):
        if n % d == 0:
            return d
    return 1


def _dft(re: Tensor, im: Tensor | None, inverse: bool) -> tuple[Tensor, Tensor]:
    """The unscaled DFT along the last axis of ``re + i im`` (``im`` None: a
    real input): matmuls with the cos/sin matrices, or for a large composite
    length ``n = n1 n2`` the four-step split: DFTs of length ``n1`` down the
    columns of the ``(n1, n2)`` view, the twiddle factors, DFTs of length
    ``n2`` along the rows, the ``(n2, n1)`` transpose flattened."""
    n = re.shape[-1]
    sign = 1.0 if inverse else -1.0  # e^{sign i theta}
    n1 = _split_size(n) if n > _DIRECT_MAX else 1
    if n1 == 1:
        cos_m, sin_m = _trig_consts(n, n, n, re.dtype, sign)
        # (re + i im)(cos + i sign sin)
        out_re, out_im = ops.matmul(re, cos_m), ops.matmul(re, sin_m)
        if im is not None:
            out_re = out_re - ops.matmul(im, sin_m)
            out_im = out_im + ops.matmul(im, cos_m)
        return out_re, out_im
    n2 = n // n1
    lead = tuple(re.shape[:-1])

    def columns(t: Tensor) -> Tensor:  # (..., n1, n2) -> (..., n2, n1): j1 last
        return movedim(ops.reshape(t, (*lead, n1, n2)), -1, -2)
    b_re, b_im = _dft(columns(re), None if im is None else columns(im), inverse)
    # b[..., j2, k1]: times the twiddle e^{sign i 2 pi j2 k1 / n}
    tw_c, tw_s = _trig_consts(n, n2, n1, re.dtype, sign)
    c_re, c_im = b_re * tw_c - b_im * tw_s, b_re * tw_s + b_im * tw_c
    d_re, d_im = _dft(movedim(c_re, -1, -2), movedim(c_im, -1, -2), inverse)  # (.., k1, k2)
    # X[k1 + n1 k2] = d[k1, k2]: k2 major
    return (ops.reshape(movedim(d_re, -1, -2), (*lead, n)),
            ops.reshape(movedim(d_im, -1, -2), (*lead, n)))


def c2c(x: Any, n: int | None, axis: int, norm: str | None, inverse: bool,
        name: str) -> Complex:
    """The complex DFT (``inverse``: its inverse) of ``x`` along ``axis``,
    cut or zero-padded to ``n`` points first (numpy's and JAX's rules)."""
    c, ax = _last(_float_dtype(x), axis)
    n = c.shape[-1] if n is None else int(n)
    _check_n(name, n)
    re, im = _resize(c.real, n), _resize(c.imag, n)
    out_re, out_im = _dft(re, im, inverse)
    s = _scale(norm, n, inverse)
    if s != 1.0:
        out_re, out_im = out_re * s, out_im * s
    return _back(Complex(out_re, out_im), ax)


def r2c(x: Any, n: int | None, axis: int, norm: str | None, name: str) -> Complex:
    """The DFT of real ``x`` along ``axis``: its first ``n // 2 + 1`` terms."""
    if isinstance(x, Complex):
        raise TypeError(f"{name} takes a real array, got a complex one")
    c, ax = _last(_float_dtype(x), axis)
    n = c.shape[-1] if n is None else int(n)
    _check_n(name, n)
    re = _resize(c.real, n)
    s = _scale(norm, n, False)
    if n > _DIRECT_MAX and _split_size(n) > 1:  # the full DFT's first half
        full_re, full_im = _dft(re, None, False)
        out_re, out_im = (narrow(t, -1, 0, n // 2 + 1) * s for t in (full_re, full_im))
        return _back(Complex(out_re, out_im), ax)
    cos_m, sin_m = _trig_consts(n, n, n // 2 + 1, re.dtype, -1.0)
    out_re, out_im = ops.matmul(re, cos_m), ops.matmul(re, sin_m)
    if s != 1.0:
        out_re, out_im = out_re * s, out_im * s
    return _back(Complex(out_re, out_im), ax)


def c2r(x: Any, n: int | None, axis: int, norm: str | None, name: str) -> Tensor:
    """The real inverse of :func:`r2c`: ``n`` points (``2 (m - 1)`` for ``m``
    terms by default) from the first ``n // 2 + 1`` terms of a Hermitian
    spectrum; the imaginary parts of the zero and Nyquist terms are not read
    (as numpy's and JAX's)."""
    c, ax = _last(_float_dtype(x), axis)
    n = 2 * (c.shape[-1] - 1) if n is None else int(n)
    _check_n(name, n)
    m = n // 2 + 1
    re, im = _resize(c.real, m), _resize(c.imag, m)
    if n > _DIRECT_MAX and _split_size(n) > 1:  # the Hermitian spectrum's inverse DFT
        keep = np.ones(m)
        keep[0] = 0.0
        if n % 2 == 0:
            keep[-1] = 0.0  # the zero and Nyquist terms' imaginary parts are not read
        im = im * _const(keep, im.dtype)
        tail = n - m  # X[n - k] = conj(X[k]) for the terms past m
        full_re = ops.cat([re, flip(narrow(re, -1, 1, tail), [-1])], -1)
        full_im = ops.cat([im, ops.neg(flip(narrow(im, -1, 1, tail), [-1]))], -1)
        out, _ = _dft(full_re, full_im, True)
        out = out * _scale(norm, n, True)
        return out if ax == out.ndim - 1 else movedim(out, -1, ax)
    w = np.full(m, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    s = _scale(norm, n, True)
    cos_m, sin_m = _trig(n, m, n, np.dtype(re.dtype.np).name)
    a = _const(cos_m * (w[:, None] * s), re.dtype)
    b = _const(sin_m * -(w[:, None] * s), re.dtype)
    out = ops.matmul(re, a) + ops.matmul(im, b)
    return out if ax == out.ndim - 1 else movedim(out, -1, ax)
