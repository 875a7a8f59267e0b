"""``pf.fft`` against torch.fft: the sample frequencies and the shifts
(values, dtypes, gradients of the shifts); the transforms raise, naming
the missing complex dtype."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.25])
def test_frequencies(n, d):
    for name in ("fftfreq", "rfftfreq"):
        got, want = getattr(pf.fft, name)(n, d), getattr(torch.fft, name)(n, d)
        assert got.dtype == pf.float32
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-7)
    got = pf.fft.fftfreq(n, d, dtype=pf.float64)
    np.testing.assert_allclose(got.numpy(), torch.fft.fftfreq(n, d, dtype=torch.float64),
                               rtol=1e-15)


@pytest.mark.parametrize("shape, dim", [((5,), None), ((4, 5), None), ((4, 5), 1),
                                        ((3, 4, 5), (0, 2)), ((6,), -1)])
def test_shifts(shape, dim):
    x = np.random.default_rng(0).standard_normal(shape)
    for name in ("fftshift", "ifftshift"):
        got = getattr(pf.fft, name)(pf.tensor(x), dim)
        want = getattr(torch.fft, name)(torch.tensor(x), dim)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    back = pf.fft.ifftshift(pf.fft.fftshift(pf.tensor(x), dim), dim)
    np.testing.assert_array_equal(back.numpy(), x)
    ct = np.random.default_rng(1).standard_normal(shape)
    g = pf.grad(lambda t: (pf.fft.fftshift(t, dim) * pf.tensor(ct)).sum())(pf.tensor(x))
    xt = torch.tensor(x, requires_grad=True)
    (torch.fft.fftshift(xt, dim) * torch.tensor(ct)).sum().backward()
    np.testing.assert_array_equal(g.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "ifft", "fft2", "rfftn", "hfft"])
def test_transforms_raise(name):
    with pytest.raises(NotImplementedError, match=f"fft.{name}: .*no complex dtype"):
        getattr(pf.fft, name)(pf.ones(8))
