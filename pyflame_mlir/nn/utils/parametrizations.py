"""``pf.nn.utils.parametrizations``: ``weight_norm`` and ``spectral_norm``
as parametrizations (torch's current API; state dict keys
``parametrizations.weight.original0/1`` and
``parametrizations.weight.original``, ``...weight.0._u/_v``)."""

from __future__ import annotations

from ...autodiff import no_grad
from ...composites2 import allclose
from ...core import Tensor
from ...creation import eye, randn, zeros
from ...indexing import diagonal, tril
from ...linalg import geqrf, householder_product, matrix_exp, solve
from ...ops import cat, matmul, permute, sign, where
from ...torch_api import finfo
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





# ---- session 11: orthogonal (torch's three maps and its trivialization) ----

_ORTH_MAPS = ("matrix_exp", "cayley", "householder")


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of A = QR (A tall) with diag(R) >= 0, as torch's (geqrf + orgqr)."""
    x, tau = geqrf(a)
    q = householder_product(x, tau)
    return q * sign(diagonal(x, dim1=-2, dim2=-1)).unsqueeze(-2)


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.shape[-2:]
    eps = 10.0 * n * float(finfo(q.dtype).eps)
    return bool(allclose(q.mT @ q, eye(k, dtype=q.dtype), atol=eps))


class _Orthogonal(Module):
    """torch's ``_Orthogonal``: an unconstrained square (or tall) matrix mapped
    to an orthogonal one by the matrix exponential or the Cayley map of its
    skew-symmetric part, or by Householder reflectors; with the
    trivialization, the result is ``base @ Q`` where ``base`` holds the
    orthogonal matrix last assigned."""

    def __init__(self, weight: Tensor, orthogonal_map: str, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        self.use_trivialization = use_trivialization
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:  # noqa: N803
        n, k = X.shape[-2:]
        transposed = n < k
        if transposed:
            X = X.mT  # noqa: N806
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = tril(X)  # noqa: N806
            if n != k:
                X = cat([X, zeros(n, n - k, dtype=X.dtype).expand(*X.shape[:-2], n, n - k)],  # noqa: N806
                        -1)
            A = X - X.mT  # noqa: N806
            if self.orthogonal_map == "matrix_exp":
                Q = matrix_exp(A)  # noqa: N806
            else:
                identity = eye(n, dtype=A.dtype)
                Q = solve(identity - 0.5 * A, identity + 0.5 * A)  # noqa: N806
            if n != k:
                Q = Q[..., :k]  # noqa: N806
        else:
            A = tril(X, -1)  # noqa: N806
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = householder_product(A, tau)  # noqa: N806
            Q = Q * diagonal(X, dim1=-2, dim2=-1).int().unsqueeze(-2)  # noqa: N806
        if self.use_trivialization and self.base is not None:
            Q = self.base @ Q  # noqa: N806
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:  # noqa: N803
        with no_grad():
            if tuple(Q.shape) != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape "
                                 f"{list(self.shape)}. Got a tensor of shape {list(Q.shape)}.")
            q_init = Q
            n, k = Q.shape[-2:]
            transpose = n < k
            if transpose:
                Q = Q.mT  # noqa: N806
                n, k = k, n
            if not self.use_trivialization:
                if self.orthogonal_map in ("cayley", "matrix_exp"):
                    raise NotImplementedError("It is not possible to assign to the matrix "
                                              "exponential or the Cayley parametrizations "
                                              "when use_trivialization=False.")
                a, tau = geqrf(Q)
                d = sign(diagonal(a, dim1=-2, dim2=-1))
                d = where(tau == 0.0, -d, d)
                on_diagonal = eye(*a.shape[-2:], dtype=a.dtype) != 0
                a = where(on_diagonal, d.unsqueeze(-2), a)  # (a tall matrix's diagonal)
                return a.mT if transpose else a
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)  # noqa: N806
            else:
                noise = randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype)
                Q = _make_orthogonal(cat([Q, noise], -1))  # noqa: N806
            self.base = Q
            return _neg_identity_like(q_init)  # forward(-I) is base (torch's neg_Id)


def _neg_identity_like(q: Tensor) -> Tensor:
    """Zeros of q's shape with -1 on the diagonal (torch's neg_Id)."""
    rows, cols = q.shape[-2:]
    return (-eye(rows, cols, dtype=q.dtype)).expand(*q.shape).clone()


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """``torch.nn.utils.parametrizations.orthogonal``: ``module.<name>`` becomes
    an orthogonal (or semi-orthogonal) matrix, starting from its current value
    orthogonalized (QR with a non-negative diagonal of R)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _ORTH_MAPS:
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    register_parametrization(module, name, orth, unsafe=True)
    return module


__all__ += ["orthogonal"]
