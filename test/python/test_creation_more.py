"""linspace/logspace/empty and the sampling functions, against torch where
the values are deterministic and by their distribution where they are not."""
import numpy as np
import pytest
import torch

import pyflame_mlir as pf


@pytest.mark.parametrize("dtype", [None, "float64"])
def test_linspace_bitwise_as_torch(dtype):
    rng = np.random.default_rng(0)
    cases = [(0, 1, 5), (0.1, 0.9, 1), (0, 1, 0), (3, 3, 4), (5, -5, 6)] + \
        [(float(rng.uniform(-10, 10)), float(rng.uniform(-10, 10)), int(rng.integers(1, 50)))
         for _ in range(100)]
    tdt = getattr(torch, dtype) if dtype else None
    for start, end, steps in cases:
        got = pf.linspace(start, end, steps, dtype=dtype).numpy()
        want = torch.linspace(start, end, steps, dtype=tdt).numpy()
        np.testing.assert_array_equal(got, want, err_msg=f"{(start, end, steps)}")


def test_logspace_empty():
    np.testing.assert_allclose(pf.logspace(0, 2, 3).numpy(), torch.logspace(0, 2, 3).numpy())
    np.testing.assert_allclose(pf.logspace(-1, 1, 4, base=2.0).numpy(),
                               torch.logspace(-1, 1, 4, base=2.0).numpy(), rtol=1e-6)
    e = pf.empty(2, 3, dtype=pf.float64)
    assert e.shape == (2, 3) and e.dtype is pf.float64
    assert pf.empty_like(pf.ones(4, dtype=pf.int64)).dtype is pf.int64


def test_randperm_and_randint_like():
    pf.manual_seed(0)
    p = pf.randperm(50).numpy()
    assert sorted(p.tolist()) == list(range(50)) and p.dtype == np.int64
    r = pf.randint_like(pf.zeros(3, 4, dtype=pf.int64), 5, 9).numpy()
    assert r.shape == (3, 4) and r.min() >= 5 and r.max() < 9


def test_normal_forms():
    pf.manual_seed(1)
    z = pf.normal(2.0, 0.5, (20000,)).numpy()
    assert abs(z.mean() - 2.0) < 0.02 and abs(z.std() - 0.5) < 0.02
    mean = pf.zeros(3, 1000, requires_grad=True)
    s = pf.normal(mean, pf.tensor([[1.0], [2.0], [3.0]]))
    assert s.shape == (3, 1000)
    s.sum().backward()
    np.testing.assert_array_equal(mean.grad.numpy(), np.ones((3, 1000)))  # d(mean + std z)
    with pytest.raises(TypeError, match="size"):
        pf.normal(0.0, 1.0)


def test_bernoulli_and_multinomial():
    pf.manual_seed(2)
    b = pf.bernoulli(pf.full((10000,), 0.3)).numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.02
    probs = pf.tensor([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]])
    draws = pf.multinomial(probs, 1000, replacement=True).numpy()
    assert draws.shape == (2, 1000) and (draws[0] == 1).all()
    assert set(np.unique(draws[1])) == {0, 2}
    nr = pf.multinomial(pf.tensor([0.0, 1.0, 0.0]), 2).tolist()
    assert nr[0] == 1 and len(set(nr)) == 2  # torch: zero-weight categories last
    with pytest.raises(RuntimeError, match="without replacement"):
        pf.multinomial(pf.tensor([1.0, 1.0]), 3)
    with pytest.raises(RuntimeError, match="inf, nan or element < 0"):
        pf.multinomial(pf.tensor([1.0, -1.0]), 1)
    lam = pf.poisson(pf.full((5000,), 4.0)).numpy()
    assert abs(lam.mean() - 4.0) < 0.15
