"""``jax.nn``'s functions under ``pf.nn`` (``pf.nn.relu``, ``pf.nn.softmax(x,
axis=-1)``, ``pf.nn.one_hot(x, n)``, ...): JAX's signatures and defaults
(``gelu`` is the tanh approximation unless ``approximate=False``; ``softmax``
and ``logsumexp`` take ``axis``, an int or a tuple), as compositions of the op
API. torch.nn has no lowercase functions, so nothing of torch's is shadowed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ops
from ..composites import logaddexp
from ..core import Tensor
from ..creation import arange, full_like, zeros_like
from ..dialects.dtypes import dtype as to_dtype
from ..indexing import repeat_interleave
from ..jax_config import canonical_host, default_float

__all__ = ["celu", "dot_product_attention", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu",
           "hard_swish", "hard_tanh", "identity", "leaky_relu", "log1mexp", "log_sigmoid",
           "log_softmax", "logmeanexp", "logsumexp", "mish", "one_hot", "relu", "relu6", "selu",
           "sigmoid", "silu", "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid",
           "squareplus", "standardize", "swish", "tanh"]


def _t(x: Any) -> Tensor:
    """A tensor as is; host data in JAX's dtypes (float64 data is float32
    without x64, as jax.nn's functions take it)."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, int | bool | np.number | np.bool_) and not isinstance(x, np.ndarray):
        return ops.as_tensor_arg(x)
    return ops.as_tensor_arg(canonical_host(x))


def _axes(x: Tensor, axis: int | Sequence[int] | None) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    return tuple(int(a) % x.ndim for a in axes) if x.ndim else ()


def _no_where(where: Any, what: str) -> None:
    if where is not None:
        raise NotImplementedError(f"nn.{what}(where=...) is not supported")


def relu(x: Any) -> Tensor:
    return ops.relu(_t(x))


def relu6(x: Any) -> Tensor:
    """``min(max(x, 0), 6)``; JAX's derivative is 0 at both kinks."""
    x = _t(x)
    inside = ops.logical_and(x > 0.0, x < 6.0)
    return ops.where(inside, x, ops.where(x >= 6.0, 6.0, 0.0))


def sigmoid(x: Any) -> Tensor:
    return ops.sigmoid(_t(x))


def tanh(x: Any) -> Tensor:
    return ops.tanh(_t(x))


def identity(x: Any) -> Tensor:
    return _t(x)


def softplus(x: Any) -> Tensor:
    """``log(1 + exp(x))`` as JAX: ``logaddexp(x, 0)``."""
    return logaddexp(_t(x), 0.0)


def log_sigmoid(x: Any) -> Tensor:
    return ops.neg(softplus(ops.neg(_t(x))))


def soft_sign(x: Any) -> Tensor:
    x = _t(x)
    return x / (ops.abs(x) + 1.0)


def silu(x: Any) -> Tensor:
    x = _t(x)
    return x * ops.sigmoid(x)


swish = silu


def hard_sigmoid(x: Any) -> Tensor:
    return relu6(_t(x) + 3.0) / 6.0


def hard_silu(x: Any) -> Tensor:
    x = _t(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def hard_tanh(x: Any) -> Tensor:
    return ops.clamp(_t(x), -1.0, 1.0)


def elu(x: Any, alpha: float = 1.0) -> Tensor:
    x = _t(x)
    pos = x > 0
    return ops.where(pos, x, ops.expm1(ops.where(pos, 0.0, x)) * alpha)


def celu(x: Any, alpha: float = 1.0) -> Tensor:
    x = _t(x)
    return ops.maximum(x, 0.0) + ops.expm1(ops.minimum(x, 0.0) / alpha) * alpha


def selu(x: Any) -> Tensor:
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return elu(x, alpha) * scale


def leaky_relu(x: Any, negative_slope: float = 0.01) -> Tensor:
    x = _t(x)
    return ops.where(x >= 0, x, x * negative_slope)


def gelu(x: Any, approximate: bool = True) -> Tensor:
    """JAX's default is the tanh approximation (torch's is exact)."""
    x = _t(x)
    if approximate:
        c = math.sqrt(2 / math.pi)
        return x * 0.5 * (ops.tanh((x + x * x * x * 0.044715) * c) + 1.0)
    return x * 0.5 * (ops.erf(x / math.sqrt(2)) + 1.0)


def glu(x: Any, axis: int = -1) -> Tensor:
    x = _t(x)
    n = x.shape[axis]
    if n % 2:
        raise ValueError(f"nn.glu: axis {axis} has odd size {n}")
    a, b = ops.split(x, n // 2, axis)
    return a * ops.sigmoid(b)


def mish(x: Any) -> Tensor:
    x = _t(x)
    return x * ops.tanh(softplus(x))


def squareplus(x: Any, b: float = 4) -> Tensor:
    x = _t(x)
    return (x + ops.sqrt(x * x + b)) / 2


def sparse_plus(x: Any) -> Tensor:
    x = _t(x)
    return ops.where(x <= -1.0, 0.0, ops.where(x >= 1.0, x, (x + 1.0) * (x + 1.0) / 4))


def sparse_sigmoid(x: Any) -> Tensor:
    """``clip(x + 1, 0, 2) / 2`` with jnp.clip's maximum/minimum (ties share
    the derivative, as JAX's)."""
    return ops.minimum(ops.maximum(_t(x) + 1.0, 0.0), 2.0) * 0.5


def log1mexp(x: Any) -> Tensor:
    """``log(1 - exp(-x))``, accurate on both sides of log 2."""
    x = _t(x)
    return ops.where(x < math.log(2), ops.log(ops.neg(ops.expm1(ops.neg(x)))),
                     ops.log1p(ops.neg(ops.exp(ops.neg(x)))))


def _shifted(x: Tensor, axes: tuple[int, ...]) -> tuple[Tensor, Tensor]:
    """(x - max, max) over ``axes`` (the max kept: no derivative through it is
    needed, the result does not depend on it)."""
    m = ops.amax(x, axes, keepdim=True).detach()
    m = ops.where(ops.isfinite(m), m, 0.0)
    return x - m, m


def _mask(x: Tensor, where: Any) -> Tensor:
    """JAX's ``where=`` of softmax/log_softmax: a bool mask broadcast to ``x``."""
    w = _t(where)
    return ops.broadcast_to(w if w.dtype.is_bool else ops.ne(w, 0), x.shape)


def softmax(x: Any, axis: int | Sequence[int] | None = -1, where: Any = None) -> Tensor:
    """JAX's softmax; with ``where``, over the selected elements only (the
    others are 0 and get no gradient)."""
    x = _t(x)
    axes = _axes(x, axis)
    if where is None:
        z, _ = _shifted(x, axes)
        e = ops.exp(z)
        return e / ops.sum(e, axes, keepdim=True)
    w = _mask(x, where)
    z, _ = _shifted(ops.where(w, x, -math.inf), axes)
    e = ops.where(w, ops.exp(ops.where(w, z, 0.0)), 0.0)
    return ops.where(w, e / ops.sum(e, axes, keepdim=True), 0.0)


def log_softmax(x: Any, axis: int | Sequence[int] | None = -1, where: Any = None) -> Tensor:
    """JAX's log_softmax; with ``where``, over the selected elements only (the
    others are -inf and get no gradient)."""
    x = _t(x)
    axes = _axes(x, axis)
    if where is None:
        z, _ = _shifted(x, axes)
        return z - ops.log(ops.sum(ops.exp(z), axes, keepdim=True))
    w = _mask(x, where)
    z, _ = _shifted(ops.where(w, x, -math.inf), axes)
    z = ops.where(w, z, 0.0)
    total = ops.sum(ops.where(w, ops.exp(z), 0.0), axes, keepdim=True)
    return ops.where(w, z - ops.log(total), -math.inf)


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis`` (all axes when None), stable;
    with ``return_sign``, ``(log|s|, sign(s))``, else NaN where the weighted
    sum is negative (SciPy's and JAX's convention); with ``where``, over the
    elements it marks (-inf where it marks none). As JAX's: the terms ``b``
    zeroes are out of the sum, NaN's sign is NaN. ``pf.scipy.special``'s is
    this function."""
    x = _t(a)
    if not x.dtype.is_floating_point:
        x = x.to(default_float())
    if where is not None:
        x = ops.where(_mask(x, where), x, -math.inf)
    if b is not None:  # the terms b drops are out of the sum (no inf * 0)
        bt = _t(b)
        x = ops.where(ops.ne(bt, 0), x, -math.inf)
    axes = _axes(x, axis)
    if b is None and not return_sign:
        return ops.logsumexp(x, list(axes), keepdim=keepdims) if axes else x
    m = ops.amax(x, list(axes), keepdim=True) if axes else x
    m = ops.where(ops.isfinite(m), m, zeros_like(m)).detach()
    e = ops.exp(x - m)
    if b is not None:
        e = e * bt
    s = ops.sum(e, list(axes), keepdim=True) if axes else e
    sign = ops.where(ops.isnan(s), s, ops.sign(s))  # (NaN's sign is NaN, as lax.sign's)
    out = ops.log(ops.abs(s)) + m
    if not return_sign and b is not None:
        out = ops.where(sign < 0, full_like(out, math.nan), out)
    if not keepdims and axes:
        out, sign = ops.squeeze(out, axes), ops.squeeze(sign, axes)
    return (out, sign) if return_sign else out


def logmeanexp(x: Any, axis: int | Sequence[int] | None = None, where: Any = None,
               keepdims: bool = False) -> Tensor:
    _no_where(where, "logmeanexp")
    t = _t(x)
    n = math.prod(t.shape[a] for a in _axes(t, axis))
    return logsumexp(t, axis, keepdims=keepdims) - math.log(n)


def standardize(x: Any, axis: int | Sequence[int] | None = -1, mean: Any = None,
                variance: Any = None, epsilon: float = 1e-5, where: Any = None, *,
                algorithm: str = "fast") -> Tensor:
    """``(x - mean) / sqrt(variance + epsilon)`` over ``axis`` (JAX's: the
    statistics over the elements ``where`` selects; ``algorithm="fast"`` the
    mean of squares minus the squared mean, clipped at 0, ``"stable"`` the
    mean of the squared deviations)."""
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    x = _t(x)
    axes = _axes(x, axis)
    w = None if where is None else _t(where)

    def avg(v: Tensor) -> Tensor:
        if w is None:
            return ops.mean(v, axes, keepdim=True)
        keep = ops.broadcast_to(w, tuple(v.shape))
        return ops.sum(ops.where(keep, v, 0.0), axes, keepdim=True) / \
            ops.sum(keep.to(v.dtype), axes, keepdim=True)
    if mean is None:
        mean = avg(x)
    if variance is None:
        if algorithm == "stable":
            variance = avg((x - mean) * (x - mean))
        else:
            variance = ops.clamp(avg(x * x) - _t(mean) * _t(mean), min=0.0)
    return (x - mean) * ops.rsqrt(_t(variance) + epsilon)


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Tensor:
    """``x``'s integers as one-hot vectors along a new ``axis`` (JAX's default
    float by default: float32, float64 with x64; an index outside
    ``[0, num_classes)`` gives a zero vector)."""
    t = x if isinstance(x, Tensor) else ops.as_tensor_arg(np.asarray(x))
    out_ndim = t.ndim + 1
    axis %= out_ndim
    shape = [1] * out_ndim
    shape[axis] = num_classes
    classes = ops.reshape(arange(num_classes, dtype=t.dtype), tuple(shape))
    hot = ops.eq(ops.unsqueeze(t, axis), classes)
    return hot.to(default_float() if dtype is None else to_dtype(dtype))


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None,
                          *, scale: float | None = None, is_causal: bool = False,
                          query_seq_lengths: Any = None, key_value_seq_lengths: Any = None,
                          local_window_size: Any = None, implementation: Any = None) -> Tensor:
    """JAX's ``jax.nn.dot_product_attention`` (its XLA form): ``query``
    ``[B, T, N, H]`` (or ``[T, N, H]``), ``key``/``value`` ``[B, S, K, H]``
    with ``N`` a multiple of ``K`` (grouped heads: head n reads kv head
    ``n // (N // K)``); logits ``q.k * scale`` (``1/sqrt(H)``) plus ``bias``,
    in float32 at least; positions ``mask`` (bool, broadcast to ``[B, N, T,
    S]``) or ``is_causal`` rules out get ``-0.7 * finfo.max`` (a row with none
    left averages every value, as JAX's); the softmax in float32."""
    if query_seq_lengths is not None or key_value_seq_lengths is not None or \
            local_window_size is not None:
        raise NotImplementedError("dot_product_attention: query_seq_lengths, "
                                  "key_value_seq_lengths and local_window_size are not "
                                  "supported (give a mask)")
    if implementation not in (None, "xla"):
        raise NotImplementedError(f"dot_product_attention: implementation={implementation!r} "
                                  "(pyflame runs the 'xla' form)")
    q, k, v = _t(query), _t(key), _t(value)
    unbatched = q.ndim == 3
    if unbatched:
        q, k, v = (ops.unsqueeze(t, 0) for t in (q, k, v))
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4 or k.shape != v.shape or \
            q.shape[0] != k.shape[0] or q.shape[3] != k.shape[3] or q.shape[2] % k.shape[2]:
        raise ValueError(f"dot_product_attention: query {list(q.shape)}, key {list(k.shape)}, "
                         f"value {list(v.shape)}: expected [B, T, N, H] and [B, S, K, H] "
                         "with N a multiple of K")
    groups = q.shape[2] // k.shape[2]
    if groups > 1:
        k, v = repeat_interleave(k, groups, 2), repeat_interleave(v, groups, 2)
    logits_dtype = q.dtype if q.dtype.itemsize >= 4 else to_dtype("float32")
    scale = 1.0 / math.sqrt(q.shape[3]) if scale is None else float(scale)
    logits = ops.einsum("btnh,bsnh->bnts", q.to(logits_dtype), k.to(logits_dtype)) * scale
    if bias is not None:
        logits = logits + _t(bias).to(logits_dtype)
    keep = None
    if mask is not None:
        keep = ops.broadcast_to(_t(mask), tuple(logits.shape))
    if is_causal:
        t_len, s_len = logits.shape[2], logits.shape[3]
        causal = ops.as_tensor_arg(np.tril(np.ones((t_len, s_len), bool)))
        keep = causal if keep is None else ops.logical_and(keep, causal)
    if keep is not None:
        logits = ops.where(keep, logits, -0.7 * float(np.finfo(logits_dtype.np).max))
    probs = softmax(logits.to(to_dtype("float32")), -1).to(k.dtype)
    out = ops.einsum("bnts,bsnh->btnh", probs, v)
    return out[0] if unbatched else out
