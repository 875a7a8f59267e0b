"""``pf.nn.utils.parametrizations``: ``weight_norm`` and ``spectral_norm``
as parametrizations (torch's current API; state dict keys
``parametrizations.weight.original0/1`` and
``parametrizations.weight.original``, ``...weight.0._u/_v``)."""

from __future__ import annotations

from ...autodiff import no_grad
from ...core import Tensor
from ...creation import randn
from ...ops import matmul, permute
from .. import functional as F
from ..module import Module
from .parametrize import register_parametrization

__all__ = ["norm_except_dim", "spectral_norm", "weight_norm"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002
    """The ``pow``-norm over every dim but ``dim`` (kept as size 1); the
    whole tensor's norm for ``dim == -1`` (torch's convention)."""
    if dim == -1:
        return (v.abs() ** pow).sum() ** (1.0 / pow)
    dims = tuple(d for d in range(v.ndim) if d != dim)
    if not dims:
        return v.abs()
    return (v.abs() ** pow).sum(dims, keepdim=True) ** (1.0 / pow)


def weight_norm_value(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """``v * g / ||v||`` (torch's ``_weight_norm``)."""
    return v * (g / norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_norm_value(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """``weight = g * v / ||v||`` with ``g`` (``original0``) and ``v``
    (``original1``) the parameters."""
    register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight.detach())
            h, w = weight_mat.shape
            self.register_buffer("_u", F.normalize(randn(h, dtype=weight.dtype), dim=0,
                                                   eps=eps).eval())
            self.register_buffer("_v", F.normalize(randn(w, dtype=weight.dtype), dim=0,
                                                   eps=eps).eval())
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = permute(weight, (self.dim, *(d for d in range(weight.ndim)
                                                  if d != self.dim)))
        return weight.reshape(weight.shape[0], -1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        """Power iteration on the buffers, updated in place (so the values
        are realized by the evaluation of the step that uses them)."""
        with no_grad():
            weight_mat = weight_mat.detach()
            u, v = self._u, self._v
            for _ in range(n_power_iterations):
                u = F.normalize(matmul(weight_mat, v), dim=0, eps=self.eps)
                v = F.normalize(matmul(weight_mat.t(), u), dim=0, eps=self.eps)
            self._u.copy_(u)
            self._v.copy_(v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.detach(), self._v.detach()
        sigma = (u * matmul(weight_mat, v)).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """``weight / sigma`` with ``sigma`` the largest singular value, estimated
    by power iteration (one step per training-mode forward)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module



