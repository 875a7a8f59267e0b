"""``pf.numpy.fft`` against ``jax.numpy.fft``: values, shapes and dtypes of
every transform (``n``/``s``/``axes``/``norm``), the complex arithmetic of
their results, gradients of real losses through them, and the transforms
under ``vmap`` and ``pf.compile``; float64 under x64."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf
import pyflame_mlir.numpy as pnp

jax = pytest.importorskip("jax", reason="jax (the bench extra) is not installed")
jnp = pytest.importorskip("jax.numpy")

RNG = np.random.default_rng(0)
X8 = RNG.standard_normal((3, 8)).astype(np.float32)
X7 = RNG.standard_normal((2, 7)).astype(np.float32)
X3 = RNG.standard_normal((2, 6, 5)).astype(np.float32)


def _same(got, want, tol=2e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape,
                                                                 got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "ihfft"])
@pytest.mark.parametrize("n", [None, 5, 10])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_one_axis(name, n, norm):
    for x, axis in ((X8, -1), (X7, -1), (X8, 0)):
        _same(getattr(pnp.fft, name)(x, n=n, axis=axis, norm=norm),
              getattr(jnp.fft, name)(x, n=n, axis=axis, norm=norm))


@pytest.mark.parametrize("name", ["irfft", "hfft"])
@pytest.mark.parametrize("n", [None, 8, 9, 5, 12])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_complex_to_real(name, n, norm):
    # a spectrum whose zero and Nyquist terms have imaginary parts (not read)
    re, im = X8[:, :5], X7[:, :5].repeat(2, 0)[:3]
    got = getattr(pnp.fft, name)(pnp.fft.Complex(re, im), n=n, norm=norm)
    _same(got, getattr(jnp.fft, name)(re + 1j * im, n=n, norm=norm))


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn"])
@pytest.mark.parametrize("s, axes", [(None, None), ((4, 6), (0, 2)), (None, (1,)),
                                     ((3, 8), None), (None, (2, 0))])
def test_n_axes(name, s, axes):
    _same(getattr(pnp.fft, name)(X3, s=s, axes=axes),
          getattr(jnp.fft, name)(X3, s=s, axes=axes))


@pytest.mark.parametrize("s", [None, (2, 6, 5), (3, 4, 6)])
def test_irfftn_and_2d(s):
    _same(pnp.fft.irfftn(pnp.fft.rfftn(X3), s=s), jnp.fft.irfftn(jnp.fft.rfftn(X3), s=s))
    for name in ("fft2", "ifft2", "rfft2"):
        _same(getattr(pnp.fft, name)(X3), getattr(jnp.fft, name)(X3))
    _same(pnp.fft.irfft2(pnp.fft.rfft2(X3)), jnp.fft.irfft2(jnp.fft.rfft2(X3)))
    with pytest.raises(ValueError, match="only supports 2 axes"):
        pnp.fft.fft2(X3, axes=(1,))


def test_integer_input_and_errors():
    _same(pnp.fft.fft(pnp.arange(6)), jnp.fft.fft(jnp.arange(6)))
    with pytest.raises(ValueError, match="Invalid norm"):
        pnp.fft.fft(X8, norm="bad")
    with pytest.raises(ValueError, match="invalid number of data points"):
        pnp.fft.rfft(X8, n=0)
    with pytest.raises(TypeError, match="real array"):
        pnp.fft.rfft(pnp.fft.fft(X8))


def test_complex_arithmetic():
    a, aj = pnp.fft.fft(X8[0]), jnp.fft.fft(X8[0])
    b, bj = pnp.fft.fft(X8[1]), jnp.fft.fft(X8[1])
    h = X8[2]
    cases = [(a * b, aj * bj), (a / (b + 3.0), aj / (bj + 3.0)), (2.0 - a, 2.0 - aj),
             (a * (1 + 2j), aj * (1 + 2j)), ((1 - 1j) / b, (1 - 1j) / bj), (a * h, aj * h),
             (h - a, h - aj), (-a, -aj), (a.conj(), aj.conj()), (a[2:5], aj[2:5]),
             (a.reshape(2, 4), aj.reshape(2, 4)), (a.sum(), aj.sum()), (a.mean(0), aj.mean(0)),
             (pnp.abs(a), jnp.abs(aj)), (pnp.angle(b), jnp.angle(bj)),
             (pnp.angle(b, deg=True), jnp.angle(bj, deg=True)), (pnp.real(a), jnp.real(aj)),
             (pnp.imag(a), jnp.imag(aj)), (pnp.conj(a), jnp.conj(aj)),
             (pnp.angle(pnp.asarray([-1.0, 2.0, 0.0])), jnp.angle(jnp.asarray([-1.0, 2.0, 0.0])))]
    for got, want in cases:
        _same(got, want, 1e-5)
    assert a.shape == (8,) and a.ndim == 1 and a.size == 8 and len(a) == 8
    assert a.dtype == np.complex64
    with pytest.raises(ValueError, match="one shape and dtype"):
        pnp.fft.Complex(X8, X7)


def _loss(fft, absolute):
    def f(v):
        spec = fft.rfft(v * v)
        y = fft.fft(v, n=12, norm="ortho")
        z = fft.fftn(v, axes=(0, 1))
        return ((absolute(spec) ** 2).sum() + (y.real * y.imag).sum()
                + fft.irfft(spec * 0.5 + 1.0, n=9).sum() + (fft.ifft(fft.fft(v)).real ** 3).sum()
                + (fft.ifft2(z * z).imag).sum() + fft.hfft(spec, n=7).sum())
    return f


def test_gradients():
    got = pf.grad(_loss(pnp.fft, pnp.abs))(pnp.asarray(X8))
    want = jax.grad(_loss(jnp.fft, jnp.abs))(X8)
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=2e-4, atol=2e-3)


def test_vmap_and_compile():
    got = pf.vmap(pnp.fft.rfft)(pnp.asarray(X8))
    assert isinstance(got, pnp.fft.Complex)
    _same(got, jax.vmap(jnp.fft.rfft)(X8))
    _same(pf.vmap(lambda v: pnp.abs(pnp.fft.fft2(v)).sum())(pnp.asarray(X3)),
          jax.vmap(lambda v: jnp.abs(jnp.fft.fft2(v)).sum())(X3), 1e-4)
    _same(pf.vmap(pnp.fft.irfft, in_axes=(0,))(pnp.fft.rfft(X8)),
          jax.vmap(jnp.fft.irfft)(jnp.fft.rfft(X8)))
    _same(pf.compile(lambda v: pnp.fft.rfft(v) * 2.0)(pnp.asarray(X8)),
          jax.jit(lambda v: jnp.fft.rfft(v) * 2.0)(X8))


def test_frequencies_and_shifts():
    for n, d in ((5, 0.1), (6, 1.0), (1, 2.0)):
        _same(pnp.fft.fftfreq(n, d), jnp.fft.fftfreq(n, d))
        _same(pnp.fft.rfftfreq(n, d), jnp.fft.rfftfreq(n, d))
    _same(pnp.fft.fftshift(X3, axes=(0, 2)), jnp.fft.fftshift(X3, axes=(0, 2)))
    _same(pnp.fft.ifftshift(X7), jnp.fft.ifftshift(X7))


@pytest.fixture
def x64():
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    pf.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", prev)
    pf.config.update("jax_enable_x64", False)


def test_float64(x64):
    x = X8.astype(np.float64)
    _same(pnp.fft.fft(x), jnp.fft.fft(x), 1e-12)
    _same(pnp.fft.irfft(pnp.fft.rfft(x), n=8), jnp.fft.irfft(jnp.fft.rfft(x), n=8), 1e-12)
    _same(pnp.fft.fft(pnp.arange(6)), jnp.fft.fft(jnp.arange(6)), 1e-12)
    _same(pnp.fft.fftfreq(5), jnp.fft.fftfreq(5), 1e-15)


@pytest.mark.parametrize("n", [300, 1024, 4095, 65536])
def test_large_sizes_split_in_factors(n):
    """Past 256 points a composite length is split in two factors (the
    four-step FFT) recursively: values within float32 rounding of JAX's."""
    x = np.random.default_rng(n).standard_normal((2, n)).astype(np.float32)
    for name in ("fft", "ifft", "rfft"):
        got, want = np.asarray(getattr(pnp.fft, name)(x)), np.asarray(getattr(jnp.fft, name)(x))
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, atol=2e-6 * np.abs(want).max())
    spec = jnp.fft.rfft(x)
    for m in (n, n - 1):
        got = pnp.fft.irfft(pnp.fft.rfft(x), n=m)
        np.testing.assert_allclose(got.numpy(), np.asarray(jnp.fft.irfft(spec, n=m)), atol=1e-5)


def test_large_size_gradients_and_vmap():
    x = np.random.default_rng(1).standard_normal((3, 600)).astype(np.float32)
    got = pf.grad(_loss(pnp.fft, pnp.abs))(pnp.asarray(x))
    want = jax.grad(_loss(jnp.fft, jnp.abs))(x)
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=2e-3, atol=2e-2)
    _same(pf.vmap(pnp.fft.fft)(pnp.asarray(x)), jax.vmap(jnp.fft.fft)(x), 2e-4)


def test_shifts_of_complex_spectra():
    """fftshift(fft2(img)), as image code writes it (it raised)."""
    _same(pnp.fft.fftshift(pnp.fft.fft2(X3)), jnp.fft.fftshift(jnp.fft.fft2(X3)))
    _same(pnp.fft.ifftshift(pnp.fft.fft(X8), axes=1), jnp.fft.ifftshift(jnp.fft.fft(X8), axes=1))


def test_host_float64_quarter_turns_and_complex_predicates():
    """numpy float64 data transforms to complex64 without x64 (complex128
    before), the quarter-turn terms are exact (the Nyquist term of a real
    signal has a zero imaginary part), iscomplexobj/iscomplex see a Complex."""
    x = np.arange(8.0)
    for name in ("fft", "rfft", "fftn"):
        got, want = getattr(pnp.fft, name)(x), getattr(jnp.fft, name)(x)
        _same(got, want)
    assert pnp.fft.Complex(np.ones(2)).dtype == np.complex64
    spec = pnp.fft.fft(x)
    assert float(spec.imag[4]) == 0.0 and float(spec.imag[0]) == 0.0
    assert pnp.iscomplexobj(spec) and not pnp.isrealobj(spec)
    _same(pnp.iscomplex(spec), jnp.iscomplex(jnp.fft.fft(x)))


def test_complex_powers_comparisons_truth():
    """Integer powers, elementwise ==/!= (identity before: X == X.copy() was
    False), truth values as arrays'."""
    a, aj = pnp.fft.fft(X8[0]), jnp.fft.fft(X8[0])
    for k in (0, 1, 2, 5):
        _same(a ** k, aj ** k, 1e-4)
    _same(a == a.conj(), aj == aj.conj())
    _same(a != 2.0, aj != 2.0)
    _same(a == pnp.fft.fft(X8[0]), aj == jnp.fft.fft(X8[0]))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(a)
    with pytest.raises(TypeError, match="integer powers"):
        a ** 0.5  # noqa: B018
    g = pf.grad(lambda v: pnp.abs(pnp.fft.fft(v) ** 2).sum())(pnp.asarray(X8[0]))
    np.testing.assert_allclose(g.numpy(), 2 * 8 * X8[0], rtol=1e-5, atol=1e-5)
