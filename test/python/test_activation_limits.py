"""Activations at their limits and kinks against torch: values and float64
gradients at the points where a piecewise rule switches (hardtanh's and
relu6's limits have derivative 0 in torch, unlike clamp's; logsigmoid's
derivative at 0 is 1/2; rrelu's slope applies at 0), at infinities and NaN."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

POINTS = np.array([-np.inf, -20.0, -6.0, -3.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, 6.0, 20.0,
                   np.inf, np.nan])
CASES = [("relu6", {}), ("hardtanh", {}), ("hardtanh", {"min_val": -2.0, "max_val": 3.0}),
         ("hardsigmoid", {}), ("hardswish", {}), ("leaky_relu", {}), ("elu", {}), ("selu", {}),
         ("celu", {}), ("softplus", {}), ("softshrink", {}), ("hardshrink", {}),
         ("threshold", {"threshold": 1.0, "value": 0.0}), ("logsigmoid", {}), ("relu", {}),
         ("rrelu", {"training": False}), ("silu", {}), ("mish", {}), ("gelu", {})]


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}{k or ''}" for n, k in CASES])
def test_activation_values_and_gradients_at_limits_match_torch(mode, name, kwargs) -> None:
    fn = getattr(pf.nn.functional, name, None)
    if fn is None:
        pytest.skip(f"pf.nn.functional.{name} does not exist")
    tx = torch.tensor(POINTS, requires_grad=True)
    ty = getattr(torch.nn.functional, name)(tx, **kwargs)
    ty.backward(torch.ones_like(ty))
    px = pf.tensor(POINTS, requires_grad=True)
    py = fn(px, **kwargs)
    py.backward(pf.ones_like(py))
    np.testing.assert_allclose(py.numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12,
                               equal_nan=True)
    finite = np.isfinite(POINTS)  # torch's gradients at +-inf and NaN are not a rule
    # (1e-7: torch's hardsigmoid multiplies float64 gradients by a float32 1/6)
    np.testing.assert_allclose(px.grad.numpy()[finite], tx.grad.numpy()[finite], rtol=1e-7,
                               atol=1e-12)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_second_derivative_matches_torch_at_zero_and_around(approximate) -> None:
    """gelu's derivative reads the forward's output (cdf = z / x, a series
    near 0): its own derivative must stay finite there (no 0/0 leaking
    through the branch not taken)."""
    x = np.array([0.0, -0.0, 1e-9, -1e-4, 0.5, -0.75, 3.0, -8.0])
    tx = torch.tensor(x, requires_grad=True)
    (g,) = torch.autograd.grad(torch.nn.functional.gelu(tx, approximate=approximate).sum(), tx,
                               create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), tx)
    got = pf.grad(lambda v: pf.grad(lambda u: pf.nn.functional.gelu(
        u, approximate=approximate).sum())(v).sum())(pf.tensor(x))
    np.testing.assert_allclose(got.numpy(), h.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_gradient_is_torchs_threshold_backward(mode, dtype) -> None:
    """relu's VJP selects (torch's threshold_backward), it does not multiply:
    an inf or NaN cotangent where the output is <= 0 gives 0 (not 0 * inf),
    and a NaN output passes its cotangent through; the JVP the same way."""
    x = np.array([-1.0, 0.0, -0.0, 2.0, np.nan, 3.0], dtype=dtype)
    g = np.array([np.inf, np.nan, -np.inf, 3.0, 5.0, np.nan], dtype=dtype)
    tx = torch.tensor(x, requires_grad=True)
    torch.relu(tx).backward(torch.tensor(g))
    px = pf.tensor(x, requires_grad=True)
    pf.relu(px).backward(pf.tensor(g))
    np.testing.assert_array_equal(px.grad.numpy(), tx.grad.numpy())
    _, tangent = pf.func.jvp(pf.relu, (pf.tensor(x),), (pf.tensor(g),))
    np.testing.assert_array_equal(tangent.numpy(), tx.grad.numpy())


FIXED = [("relu6", {}), ("hardtanh", {}), ("hardtanh", {"min_val": -2.0, "max_val": 3.0}),
         ("hardsigmoid", {}), ("hardswish", {}), ("leaky_relu", {"negative_slope": 0.2}),
         ("elu", {"alpha": 1.3}), ("selu", {}), ("celu", {"alpha": 0.5}), ("softplus", {}),
         ("softplus", {"beta": 2.0, "threshold": 10.0})]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", FIXED, ids=[f"{n}{k or ''}" for n, k in FIXED])
def test_activation_gradients_at_infinities_and_nan_are_torchs(name, kwargs, dtype) -> None:
    """torch's backward formulas are selections (``x <= 0 ? ... : grad``):
    at +-inf and NaN they give a number (elu's 1 at NaN, hardswish's 1 at
    +inf and 0 at -inf, hardtanh's 1 at NaN), reverse and forward mode alike,
    where a composite's chain gives NaN (0 * inf in a branch not taken)."""
    x = POINTS.astype(dtype)
    tx = torch.tensor(x, requires_grad=True)
    tf = getattr(torch.nn.functional, name)
    tf(tx, **kwargs).backward(torch.ones_like(tx))
    px = pf.tensor(x, requires_grad=True)
    fn = getattr(pf.nn.functional, name)
    fn(px, **kwargs).backward(pf.ones_like(px))
    # (float64 1e-7: torch's hardsigmoid backward multiplies by a float32 1/6, celu's
    # by a float32-rounded 1/alpha: alpha 0.5 here is exact)
    rtol = 1e-7 if dtype == "float64" else 2e-6
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=rtol, atol=0)
    _, tangent = pf.func.jvp(lambda v: fn(v, **kwargs), (pf.tensor(x),), (pf.ones_like(px),))
    _, want = torch.func.jvp(lambda v: tf(v, **kwargs), (torch.tensor(x),),
                             (torch.ones_like(tx),))
    np.testing.assert_allclose(tangent.numpy(), want.numpy(), rtol=rtol, atol=0)


@pytest.mark.parametrize("name", ["elu", "selu", "celu"])
def test_elu_float32_gradient_far_below_zero_is_exp_not_expm1_plus_one(name) -> None:
    """torch's elu_backward multiplies by exp(x); expm1's own derivative
    (result + 1) cancels in float32 for x << 0 (4e-5 relative off at -7)."""
    x = -np.linspace(0.0, 16.0, 65, dtype=np.float32)
    tx = torch.tensor(x, requires_grad=True)
    getattr(torch.nn.functional, name)(tx).sum().backward()
    px = pf.tensor(x, requires_grad=True)
    getattr(pf.nn.functional, name)(px).sum().backward()
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=2e-6, atol=0)
