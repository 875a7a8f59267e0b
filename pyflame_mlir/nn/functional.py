"""``pf.nn.functional``: ``torch.nn.functional``'s names, arguments, defaults
and semantics, written as composites of the existing primitives (as
``jax.nn`` is written from ``lax``), so every function runs on every backend
and differentiates with no rules of its own.

Convolutions are im2col: one strided ``slice`` per kernel offset, stacked and
contracted with one ``matmul``; pooling reduces the same window slices;
``adaptive_avg_pool2d`` and bilinear ``interpolate`` are constant
interpolation matrices (``A_h @ x @ A_w^T``). Random masks (``dropout``) are
host data drawn from the generator ``pf.manual_seed`` seeds: they enter the
graph as leaves, so a training loop still hits the compile cache.

Where another branch adds a primitive (``one_hot``, ``var``, ``tril``,
``softplus``, ``silu``...), the composites here marked "(switch:)" may call
it instead.
"""

from __future__ import annotations

import builtins
import itertools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from .. import indexing as _indexing
from .. import math_rules as _math_rules
from .. import ops as _ops
from ..autodiff import no_grad
from ..core import CONFIG, Tensor, detach, record
from ..creation import arange, from_numpy, full, linspace, rand
from ..dialects import OPS
from ..dialects.dtypes import bfloat16, bool_, float16, float32, float64, int64
from ..dialects.opdef import ShapeError
from ..inplace import _update
from ..ops import (
    abs,
    amax,
    as_tensor_arg,
    autocast_policy,
    cat,
    clone,
    exp,
    gelu,
    log,
    logsumexp,
    matmul,
    maximum,
    mean,
    reshape,
    rsqrt,
    sigmoid,
    sqrt,
    stack,
    sum,
    tanh,
    where,
)
from ..ops import log_softmax as _log_softmax
from ..ops import relu as _relu
from ..ops import softmax as _softmax
from . import sparse_grad as _sparse_grad

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "avg_pool1d",
    "avg_pool2d", "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "celu", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "cosine_similarity",
    "cross_entropy", "dropout", "dropout1d", "dropout3d",
    "dropout2d", "elu", "gelu", "glu", "group_norm", "hardsigmoid", "hardswish", "hardtanh",
    "huber_loss", "instance_norm", "interpolate", "kl_div", "l1_loss", "layer_norm", "linear",
    "leaky_relu", "log_softmax", "logsigmoid", "max_pool1d", "max_pool2d", "mish", "mse_loss",
    "nll_loss", "normalize", "pad", "pairwise_distance", "relu", "relu6", "rms_norm", "selu",
    "sigmoid", "silu", "smooth_l1_loss", "softmax", "softmin", "softplus", "softsign",
    "scaled_dot_product_attention", "tanh", "tanhshrink", "embedding", "one_hot",
]

_INT2 = int | tuple[int, int]


def _pair(v: Any, n: int, what: str, op: str) -> tuple[int, ...]:
    if isinstance(v, int | np.integer):
        return (int(v),) * n
    t = tuple(int(a) for a in v)
    if len(t) == 1:
        return t * n
    if len(t) != n:
        raise ValueError(f"{op}: {what} must be an int or {n} ints, got {v!r}")
    return t


def _const_like(arr: np.ndarray, like: Tensor) -> Tensor:
    """Host data (masks, interpolation matrices) as a leaf of ``like``'s dtype."""
    return from_numpy(np.ascontiguousarray(arr, dtype=like.dtype.np))


def _keep_shape(n: int, dim: int, size: int) -> tuple[int, ...]:
    """(1, .., size, .., 1): a per-channel vector broadcast along ``dim`` of rank ``n``."""
    return tuple(size if i == dim else 1 for i in range(n))


# ---- activations (the ones pf has are re-exported: relu gelu sigmoid tanh softmax
# log_softmax; the rest are composites here. switch: to pf's when the math branch adds them)

def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, _relu, inplace, "relu_")


def _implicit_softmax_dim(name: str, input: Any, dim: int | None, stacklevel: int) -> int:
    """torch's ``_get_softmax_dim``: without ``dim``, a 0-, 1- or 3-d input
    is normalized over dim 0, any other over dim 1 (deprecated in torch, with
    the same warning, but old programs such as the classic MNIST example
    still call ``F.log_softmax(x)``)."""
    if dim is not None:
        return dim
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if as_tensor_arg(input).ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
            ) -> Tensor:
    return _softmax(input, _implicit_softmax_dim("softmax", input, dim, _stacklevel), dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
                ) -> Tensor:
    return _log_softmax(input, _implicit_softmax_dim("log_softmax", input, dim, _stacklevel),
                        dtype)


# The activations' math lives in pyflame_mlir/ops.py (pf.elu, pf.silu, ...); these
# add torch.nn.functional's ``inplace`` argument.

def _maybe_inplace(input: Tensor, make: Any, inplace: bool, name: str) -> Tensor:
    """``make(input)``; in place, ``input`` rebound to it as one update (the op
    that computes the new value is part of the update, so autograd's version
    check does not count its read of ``input``: PyTorch's ``relu_`` and the
    like differentiate through the update)."""
    return _update(input, make, name) if inplace else make(input)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, _ops.relu6, inplace, "relu6_")


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, lambda o: _ops.hardtanh(o, min_val, max_val), inplace,
                          "hardtanh_")


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, lambda o: _ops.leaky_relu(o, negative_slope), inplace,
                          "leaky_relu_")


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, lambda o: _ops.elu(o, alpha), inplace, "elu_")


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, lambda o: _ops.celu(o, alpha), inplace, "celu_")


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, _ops.selu, inplace, "selu_")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, _ops.silu, inplace, "silu_")


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, _ops.mish, inplace, "mish_")


softplus = _ops.softplus
logsigmoid = _ops.logsigmoid


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """``torch.nn.functional.embedding``: rows of ``weight``. With
    ``max_norm``, the rows looked up are first renormalized in place to norm
    at most ``max_norm`` (torch's ``embedding_renorm_``, outside autograd).
    ``scale_grad_by_freq`` divides each row's gradient by the count of its
    index; ``sparse``: the gradient is stored dense, its rows recorded for
    ``SparseAdam`` (``nn/sparse_grad.py``)."""
    if max_norm is not None:
        _embedding_renorm_(weight, _indexing._int_index("embedding", input), max_norm,
                           norm_type)
    if scale_grad_by_freq and sparse:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse "
                           "gradients")
    if scale_grad_by_freq or sparse:
        w = _ops.as_tensor_arg(weight)
        if padding_idx is not None and w.ndim == 2:
            if not -w.shape[0] <= padding_idx < w.shape[0]:
                raise ShapeError("gather", f"embedding(): padding_idx {padding_idx} must be "
                                           f"within the {w.shape[0]} embeddings")
            padding_idx %= w.shape[0]
        return _sparse_grad.lookup(_indexing._int_index("embedding", input), w, padding_idx,
                                   scale_grad_by_freq, sparse)
    return _indexing.embedding(input, weight, padding_idx, None, norm_type)
def _embedding_renorm_(weight: Tensor, idx: Tensor, max_norm: float, norm_type: float
                       ) -> None:
    """torch's ``embedding_renorm_``: the rows ``idx`` names rescaled in place
    to norm at most ``max_norm`` (outside autograd)."""
    with no_grad():
        flat = _ops.reshape(idx, (-1,))
        rows = _indexing.index_select(weight, 0, flat)
        norms = _ops.vector_norm(rows, norm_type, dim=1, keepdim=True)
        scale = _ops.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight.index_copy_(0, flat, rows * scale)  # (duplicates write the same row)


one_hot = _indexing.one_hot


def softsign(input: Tensor) -> Tensor:
    return input / (abs(input) + 1.0)


def tanhshrink(input: Tensor) -> Tensor:
    return input - tanh(input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, _ops.hardsigmoid, inplace, "hardsigmoid_")


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, _ops.hardswish, inplace, "hardswish_")


def glu(input: Tensor, dim: int = -1) -> Tensor:
    if input.shape[dim] % 2:
        raise ShapeError("glu", f"halving dimension {dim} of {list(input.shape)} needs an "
                                "even size")
    a, b = input.chunk(2, dim)
    return a * sigmoid(b)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
            ) -> Tensor:
    return _softmax(-as_tensor_arg(input), _implicit_softmax_dim("softmin", input, dim,
                                                                _stacklevel), dtype)


# ---- linear ----

def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias, weight of shape (out_features, in_features)."""
    if weight.ndim not in (1, 2) or input.shape[-1:] != weight.shape[-1:]:
        raise ShapeError("linear", f"input {list(input.shape)} and weight "
                                   f"{list(weight.shape)}: the input's last dimension must be "
                                   "the weight's in_features")
    w = weight.T if weight.ndim == 2 else weight
    dt = input.dtype
    if bias is not None and dt in (bfloat16, float16) and weight.dtype is dt \
            and bias.dtype is dt:
        # torch's addmm: the bias added to the float32 accumulation, one
        # rounding (adding it to the rounded product loses ulps to cancellation)
        return _ops.convert(matmul(_ops.convert(input, float32), _ops.convert(w, float32))
                            + _ops.convert(bias, float32), dt)
    out = matmul(input, w)
    return out if bias is None else out + bias


# ---- normalization ----

def _normalized_dims(op: str, x: Tensor, normalized_shape: Sequence[int] | int
                     ) -> tuple[int, ...]:
    shape = (int(normalized_shape),) if isinstance(normalized_shape, int | np.integer) \
        else tuple(int(d) for d in normalized_shape)
    k = len(shape)
    if k == 0 or k > x.ndim or x.shape[x.ndim - k:] != shape:
        raise ShapeError(op, f"normalized_shape {list(shape)} must match the trailing "
                             f"dimensions of the input {list(x.shape)}")
    return tuple(range(x.ndim - k, x.ndim))


def _moments(x: Tensor, dims: tuple[int, ...]) -> tuple[Tensor, Tensor]:
    """Mean and biased variance (mean of squared centered values; switch: to
    pf.var(correction=0) when the reductions branch adds it)."""
    m = mean(x, dims, keepdim=True)
    c = x - m
    return m, mean(c * c, dims, keepdim=True)


def _affine(y: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    dims = _normalized_dims("layer_norm", input, normalized_shape)
    m, v = _moments(input, dims)
    return _affine((input - m) * rsqrt(v + eps), weight, bias)


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    dims = _normalized_dims("rms_norm", input, normalized_shape)
    if eps is None:
        eps = float(ml_dtypes.finfo(input.dtype.np).eps)  # (numpy's finfo has no bfloat16)
    y = input * rsqrt(mean(input * input, dims, keepdim=True) + eps)
    return _affine(y, weight, None)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    if input.ndim < 2:
        raise ShapeError("group_norm", f"expects an input of shape (N, C, *), got "
                                       f"{list(input.shape)}")
    n, c = input.shape[:2]
    if c % num_groups:
        raise ShapeError("group_norm", f"expected the number of channels {c} to be "
                                       f"divisible by num_groups={num_groups}")
    g = reshape(input, (n, num_groups, -1))
    m, v = _moments(g, (2,))
    y = reshape((g - m) * rsqrt(v + eps), input.shape)
    per_channel = _keep_shape(input.ndim, 1, c)
    return _affine(y, None if weight is None else reshape(weight, per_channel),
                   None if bias is None else reshape(bias, per_channel))


def _update_running(running: Tensor | None, stat: Tensor, momentum: float) -> None:
    """running <- (1 - momentum) running + momentum stat, in place (pyflame's
    in-place machinery: the buffer object is rebound to the new promise).
    A module with momentum=None passes torch's cumulative factor
    1 / num_batches_tracked."""
    if running is None:
        return
    with no_grad():
        s = reshape(stat.detach(), running.shape)
        # through the in-place methods, whose new value reads the snapshot of
        # the old state: chains of lazy updates keep every state they need
        running.mul_(1.0 - momentum).add_(s * momentum)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float | None = 0.1,
               eps: float = 1e-5) -> Tensor:
    if input.ndim < 2:
        raise ShapeError("batch_norm", f"expects an input of shape (N, C, *), got "
                                       f"{list(input.shape)}")
    c = input.shape[1]
    dims = tuple(d for d in range(input.ndim) if d != 1)
    per_channel = _keep_shape(input.ndim, 1, c)
    if training:
        count = input.numel() // c
        if count <= 1:
            raise ValueError(f"batch_norm: expected more than 1 value per channel when "
                             f"training, got input size {list(input.shape)}")
        m, v = _moments(input, dims)
        mom = 0.0 if momentum is None else momentum  # (torch.batch_norm's None: no update)
        _update_running(running_mean, m, mom)
        _update_running(running_var, v * (count / (count - 1)), mom)  # unbiased
    else:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: running_mean and running_var are required when "
                             "training=False")
        m, v = reshape(running_mean, per_channel), reshape(running_var, per_channel)
    return _affine((input - m) * rsqrt(v + eps),
                   None if weight is None else reshape(weight, per_channel),
                   None if bias is None else reshape(bias, per_channel))


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    if input.ndim < 3:
        raise ShapeError("instance_norm", f"expects an input of shape (N, C, *spatial), got "
                                          f"{list(input.shape)}")
    n, c = input.shape[:2]
    per_channel = _keep_shape(input.ndim, 1, c)
    if use_input_stats:
        dims = tuple(range(2, input.ndim))
        m, v = _moments(input, dims)
        count = input.numel() // (n * c)
        if running_mean is not None:
            _update_running(running_mean, mean(m, 0), momentum)
        if running_var is not None:
            if count <= 1:
                raise ValueError("instance_norm: expected more than 1 spatial element when "
                                 "tracking running statistics")
            _update_running(running_var, mean(v, 0) * (count / (count - 1)), momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError("instance_norm: running_mean and running_var are required when "
                             "use_input_stats=False")
        m, v = reshape(running_mean, per_channel), reshape(running_var, per_channel)
    return _affine((input - m) * rsqrt(v + eps),
                   None if weight is None else reshape(weight, per_channel),
                   None if bias is None else reshape(bias, per_channel))


def _vector_norm(x: Tensor, p: float, dim: int, keepdim: bool) -> Tensor:
    """``linalg.vector_norm`` (its gradient at a zero vector is torch's 0, not
    the NaN of differentiating ``sqrt(sum(x * x))`` there)."""
    if p <= 0:
        raise NotImplementedError(f"norm of order p={p} is not supported (p > 0 only)")
    return _ops.vector_norm(x, p, dim, keepdim)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: None = None) -> Tensor:
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported")
    return input / maximum(_vector_norm(input, p, dim, True), eps)


# ---- dropout ----

def _check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_mask(input: Tensor, p: float, mask_shape: tuple[int, ...]) -> Tensor:
    """keep / (1 - p) drawn on the host from pf's seeded generator: a leaf, so
    the graph (and its cache entry) is the same for every draw."""
    u = rand(mask_shape, dtype=float64).numpy()
    keep = (u >= p).astype(np.float64)
    return _const_like(keep / (1.0 - p) if p < 1 else keep, input)


def _dropout(input: Tensor, p: float, training: bool, inplace: bool,
             mask_shape: tuple[int, ...]) -> Tensor:
    _check_p(p)
    if not training or p == 0:
        return input
    out = input * _dropout_mask(input, p, mask_shape)
    return input.copy_(out) if inplace else out


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    return _dropout(input, p, training, inplace, input.shape)


def _feature_dropout(op: str, input: Tensor, p: float, training: bool, inplace: bool,
                     spatial: int) -> Tensor:
    if input.ndim not in (spatial + 1, spatial + 2):
        raise ShapeError(op, f"expects a {spatial + 1}-D or {spatial + 2}-D input, got "
                             f"{list(input.shape)}")
    lead = input.ndim - spatial
    return _dropout(input, p, training, inplace, input.shape[:lead] + (1,) * spatial)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    return _feature_dropout("dropout1d", input, p, training, inplace, 1)


def _feature_mask(op: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    """torch's ``feature_dropout`` mask: one draw per (sample, channel), the
    first two dims."""
    if len(shape) < 2:
        raise RuntimeError(f"{op}: Feature dropout requires at least 2 dimensions in the input, "
                           f"got {list(shape)}")
    return shape[:2] + (1,) * (len(shape) - 2)


def _feature_dims_warning(op: str, ndim: int, want: str) -> None:
    warnings.warn(f"{op}: Received a {ndim}-D input to {op}, which is deprecated and will "
                  "result in an error in a future release. To retain the behavior and silence "
                  f"this warning, please use dropout instead. Note that {op} exists to provide "
                  f"channel-wise dropout on {want} inputs.", UserWarning, stacklevel=3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """torch's: channel-wise over the first two dims whatever the rank, so a 3-D
    input is (N, C, L) (torch's historical reading, with its warning), not an
    unbatched (C, H, W); ranks other than 3 and 4 warn."""
    x = as_tensor_arg(input)
    if x.ndim not in (3, 4):
        _feature_dims_warning("dropout2d", x.ndim, "3D or 4D")
    if x.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape "
                      "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch "
                      "to using dropout1d instead.", UserWarning, stacklevel=2)
    return _dropout(x, p, training, inplace, _feature_mask("dropout2d", x.shape))


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,  # issue 14 (surface14)
              inplace: bool = False) -> Tensor:
    """torch's: a 5-D input is batched, any other rank unbatched (channels
    first); ranks other than 4 and 5 warn."""
    x = as_tensor_arg(input)
    if x.ndim not in (4, 5):
        _feature_dims_warning("dropout3d", x.ndim, "4D or 5D")
    if x.ndim == 5:
        return _dropout(x, p, training, inplace, _feature_mask("dropout3d", x.shape))
    return _dropout(x, p, training, inplace, _feature_mask("dropout3d", (1, *x.shape))[1:])


# ---- attention ----

def _causal_mask(n_q: int, n_k: int) -> Tensor:
    """tril(ones(L, S)) as a bool mask from two aranges (switch: to pf.tril)."""
    return reshape(arange(n_q), (n_q, 1)) >= reshape(arange(n_k), (1, n_k))


def _repeat_heads(x: Tensor, times: int) -> Tensor:
    """repeat_interleave along dim -3 (grouped-query attention)."""
    if times == 1:
        return x
    lead, (h, s, e) = x.shape[:-3], x.shape[-3:]
    y = x.unsqueeze(-3).expand(*lead, h, times, s, e)
    return reshape(y, (*lead, h * times, s, e))


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise ShapeError("scaled_dot_product_attention", "query, key and value need at "
                         "least 2 dimensions (..., L, E)")
    n_q, e = query.shape[-2:]
    n_k = key.shape[-2]
    if key.shape[-1] != e:
        raise ShapeError("scaled_dot_product_attention", f"query {list(query.shape)} and "
                         f"key {list(key.shape)} need the same embedding size")
    if enable_gqa and query.ndim >= 3:
        hq, hk = query.shape[-3], key.shape[-3]
        if hq % hk or hq % value.shape[-3]:
            raise ShapeError("scaled_dot_product_attention", f"enable_gqa: {hq} query heads "
                             f"must be a multiple of the {hk} key/value heads")
        key, value = _repeat_heads(key, hq // hk), _repeat_heads(value, hq // value.shape[-3])
    s = 1.0 / math.sqrt(e) if scale is None else scale
    scores = matmul(query, key.transpose(-2, -1)) * s
    if is_causal:
        if attn_mask is not None:
            raise ValueError("scaled_dot_product_attention: explicit attn_mask should not be "
                             "set when is_causal=True")
        scores = where(_causal_mask(n_q, n_k), scores, -math.inf)
    dead = None
    if not is_causal and attn_mask is not None:  # (a causal row keeps its first key)
        mask, dead = _live_mask(as_tensor_arg(attn_mask))
        scores = where(mask, scores, -math.inf) if mask.dtype is bool_ else scores + mask
    attn = softmax(scores, -1)
    if dropout_p > 0:
        attn = dropout(attn, dropout_p, True)
    out = matmul(attn, value)
    return out if dead is None else where(dead, _ops._cast(0.0, out.dtype), out)


def _live_mask(mask: Tensor) -> tuple[Tensor, Tensor]:
    """torch's ``_safe_softmax`` (its attention's math path) on the mask: a
    query whose keys are all masked gets zero weights, not NaN (nor NaN
    gradients). Returns the mask with such rows unmasked (their softmax then
    reads finite scores) and those rows (``mask.shape[:-1] + (1,)``), whose
    output the caller zeroes. (torch tests the scores for -inf: scores made
    -inf by infinite inputs are not seen here.)"""
    if mask.dtype is bool_:
        dead = _ops.logical_not(mask.any(-1, keepdim=True))
        return _ops.logical_or(mask, dead), dead
    dead = _ops.eq(_ops.amax(mask, -1, keepdim=True), -math.inf)
    return where(dead, _ops._cast(0.0, mask.dtype), mask), dead


# ---- padding ----

def _pad_pairs(op: str, x: Tensor, pad: Sequence[int]) -> list[tuple[int, int]]:
    """torch's pad list (last dim first: left, right, top, bottom, ...) as
    (before, after) per dim of ``x``."""
    pad = [int(p) for p in pad]
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise ValueError(f"{op}: padding length must be even and at most twice the input's "
                         f"{x.ndim} dimensions, got {pad}")
    pairs = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        pairs[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return pairs


def _slice_dim(x: Tensor, dim: int, start: int, stop: int, step: int = 1) -> Tensor:
    st, li, sd = [0] * x.ndim, list(x.shape), [1] * x.ndim
    st[dim], li[dim], sd[dim] = start, stop, step
    if st == [0] * x.ndim and li == list(x.shape) and step == 1:
        return x
    return record(OPS["slice"], (x,), {"start": tuple(st), "limit": tuple(li),
                                       "stride": tuple(sd)})


def _zero_pad(x: Tensor, pairs: Sequence[tuple[int, int]]) -> Tensor:
    if builtins.all(a == 0 and b == 0 for a, b in pairs):
        return x
    return record(OPS["pad"], (x,), {"low": tuple(a for a, _ in pairs),
                                     "high": tuple(b for _, b in pairs),
                                     "interior": (0,) * x.ndim})


def _constant_pad(x: Tensor, pairs: Sequence[tuple[int, int]], value: float) -> Tensor:
    # negative amounts crop (torch): slice first, then pad the positive parts
    for d, (a, b) in enumerate(pairs):
        if a < 0 or b < 0:
            x = _slice_dim(x, d, builtins.max(-a, 0), x.shape[d] - builtins.max(-b, 0))
    pos = [(builtins.max(a, 0), builtins.max(b, 0)) for a, b in pairs]
    out = _zero_pad(x, pos)
    if value == 0 or out is x:
        return out
    inside = _zero_pad(full(x.shape, True, dtype=bool_), pos)
    padded = where(inside, out, value)
    return padded if padded.dtype is x.dtype else padded.to(x.dtype)  # (torch keeps it)


def _index_pad(op: str, x: Tensor, pairs: Sequence[tuple[int, int]], mode: str) -> Tensor:
    for d, (a, b) in enumerate(pairs):
        if a == 0 and b == 0:
            continue
        n = x.shape[d]
        if a < 0 or b < 0:
            raise NotImplementedError(f"{op}: negative padding in mode {mode!r}")
        if mode == "reflect" and (a >= n or b >= n):
            raise ValueError(f"{op}: padding ({a}, {b}) must be smaller than dimension {d} "
                             f"of size {n} for reflect padding")
        if mode == "circular" and (a > n or b > n):
            raise ValueError(f"{op}: padding ({a}, {b}) must be at most dimension {d} of "
                             f"size {n} for circular padding")
        if mode == "replicate" and n == 0:
            raise ValueError(f"{op}: cannot replicate-pad an empty dimension {d}")
        if mode == "replicate":
            first, last = _slice_dim(x, d, 0, 1), _slice_dim(x, d, n - 1, n)
            shape = list(x.shape)
            parts = []
            if a:
                shape[d] = a
                parts.append(first.expand(*shape))
            parts.append(x)
            if b:
                shape[d] = b
                parts.append(last.expand(*shape))
        elif mode == "reflect":  # rows a..1 before, n-2..n-1-b after (no flip op: one slice
            # per row; switch: to pf.flip)
            parts = [_slice_dim(x, d, i, i + 1) for i in range(a, 0, -1)] + [x] + \
                    [_slice_dim(x, d, i, i + 1) for i in range(n - 2, n - 2 - b, -1)]
        else:  # circular
            parts = ([_slice_dim(x, d, n - a, n)] if a else []) + [x] + \
                    ([_slice_dim(x, d, 0, b)] if b else [])
        x = cat(parts, d)
    return x


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    x = as_tensor_arg(input)
    pairs = _pad_pairs("pad", x, pad)
    if mode in ("constant", "reflect", "replicate", "circular") \
            and builtins.all(a == 0 and b == 0 for a, b in pairs):
        return clone(x)  # a new tensor, as PyTorch's (never x itself)
    if mode == "constant":
        return _constant_pad(x, pairs, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"pad: mode {mode!r} is not supported (constant, reflect, "
                                  "replicate, circular)")
    if value:
        raise ValueError(f"pad: padding mode {mode!r} doesn't take in value argument")
    k = builtins.sum(1 for a, b in pairs if a or b)
    if x.ndim - len(pad) // 2 not in (1, 2) and k:
        raise NotImplementedError(f"pad: mode {mode!r} pads the last 1-3 dimensions of a "
                                  f"batched or unbatched input; got input {list(x.shape)} and "
                                  f"pad {list(pad)}")
    return _index_pad("pad", x, pairs, mode)


# ---- windows: the common part of convolution and pooling ----

def _out_size(op: str, n: int, k: int, s: int, p: int, d: int, ceil_mode: bool = False
              ) -> int:
    span = d * (k - 1) + 1
    num = n + 2 * p - span
    if num < 0:
        raise ShapeError(op, f"the window (kernel {k}, dilation {d}) is larger than the "
                             f"padded input ({n} + 2*{p})")
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= n + p:  # the last window must start inside
        out -= 1
    return out


def _windows(x: Tensor, kernel: Sequence[int], stride: Sequence[int],
             dilation: Sequence[int], out: Sequence[int], trail: int = 0) -> list[Tensor]:
    """One strided slice of the (already padded) ``x`` per kernel offset, over
    the len(kernel) dims before its last ``trail`` dims, each of the output's
    spatial shape; offsets in row-major order of the kernel."""
    nsp = len(kernel)
    lead = x.ndim - nsp - trail
    offsets: list[tuple[int, ...]] = [()]
    for k in kernel:
        offsets = [o + (i,) for o in offsets for i in range(k)]
    views = []
    rest = list(x.shape[lead + nsp:])
    for off in offsets:
        first = [o * d for o, d in zip(off, dilation)]
        start = [0] * lead + first + [0] * trail
        limit = list(x.shape[:lead]) + [a + (n - 1) * s + 1 for a, n, s in
                                        zip(first, out, stride)] + rest
        step = [1] * lead + list(stride) + [1] * trail
        if start == [0] * x.ndim and limit == list(x.shape) and step == [1] * x.ndim:
            views.append(x)
        else:
            views.append(record(OPS["slice"], (x,), {"start": tuple(start),
                                                     "limit": tuple(limit),
                                                     "stride": tuple(step)}))
    return views


# ---- convolution ----

def _conv_padding(op: str, padding: Any, kernel: Sequence[int], dilation: Sequence[int],
                  stride: Sequence[int]) -> list[tuple[int, int]]:
    n = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * n
        if padding == "same":
            if builtins.any(s != 1 for s in stride):
                raise ValueError(f"{op}: padding='same' is not supported for strided "
                                 "convolutions")
            pairs = []
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                pairs.append((total // 2, total - total // 2))  # torch: extra on the right
            return pairs
        raise ValueError(f"{op}: invalid padding string {padding!r}, should be one of "
                         "{'valid', 'same'}")
    p = _pair(padding, n, "padding", op)
    if builtins.any(v < 0 for v in p):
        raise ValueError(f"{op}: negative padding is not supported")
    return [(v, v) for v in p]


def _batched_conv_input(op: str, nsp: int, input: Tensor, weight: Tensor  # noqa: A002
                         ) -> tuple[Tensor, bool]:
    """The input with a batch dimension (and whether it had none), after checking
    the ranks of input and weight."""
    x = as_tensor_arg(input)
    unbatched = x.ndim == nsp + 1
    if unbatched:
        x = x.unsqueeze(0)
    if x.ndim != nsp + 2 or weight.ndim != nsp + 2:
        raise ShapeError(op, f"expects a {nsp + 1}-D or {nsp + 2}-D input and a "
                             f"{nsp + 2}-D weight, got {list(input.shape)} and "
                             f"{list(weight.shape)}")
    return x, unbatched


def _convnd(op: str, nsp: int, input: Tensor, weight: Tensor, bias: Tensor | None,
            stride: Any, padding: Any, dilation: Any, groups: int) -> Tensor:
    x, unbatched = _batched_conv_input(op, nsp, input, weight)
    n, c = x.shape[:2]
    o, cg = weight.shape[:2]
    kernel = weight.shape[2:]
    if groups < 1 or c % groups or o % groups or cg * groups != c:
        raise ShapeError(op, f"input {list(x.shape)} with {c} channels, weight "
                             f"{list(weight.shape)} and groups={groups}: expected the weight "
                             f"to have {c // builtins.max(groups, 1)} input channels and "
                             f"{o} divisible by groups")
    stride_, dilation_ = _pair(stride, nsp, "stride", op), _pair(dilation, nsp, "dilation", op)
    pairs = _conv_padding(op, padding, kernel, dilation_, stride_)
    kk = int(np.prod(kernel))
    out = [_out_size(op, x.shape[2 + i] + pairs[i][0] + pairs[i][1], kernel[i], stride_[i], 0,
                     dilation_[i]) for i in range(nsp)]
    # the batch innermost, (C, *spatial, N), when the columns outweigh the
    # output and the output rows are short: each window's copy (and, in the
    # backward, its add into the input's gradient) then runs over rows of
    # out[-1] * N elements instead of out[-1], for one transposing copy of
    # input and output each (bench/cnn.py's second conv: 16 channels x 9
    # offsets, 32 out channels, 14-wide rows)
    batch_last = c * kk > o and out[-1] < 32 and n > 1
    if batch_last:
        x = _zero_pad(x.permute(1, *range(2, 2 + nsp), 0), [(0, 0), *pairs, (0, 0)])
        windows = _windows(x, kernel, stride_, dilation_, out, trail=1)
    else:
        # channels first before padding: the padded copy is then (C, N,
        # *spatial) and its windows stack straight into the column layout
        # below, so the reshape to (C*K, N*L) is a view, not a second copy
        x = _zero_pad(x.permute(1, 0, *range(2, 2 + nsp)), [(0, 0), (0, 0), *pairs])
        windows = _windows(x, kernel, stride_, dilation_, out)
    # One GEMM per group over the whole batch: columns (C*K, N*L) with rows in
    # the weight's (c, kernel offset) order. (A batched (N, C*K, L) matmul is
    # ~10x slower in numpy: many small products instead of one BLAS call.)
    length = n * int(np.prod(out))
    if bias is not None and groups == 1 and bias.dtype == weight.dtype == x.dtype \
            and tuple(bias.shape) == (o,):
        # the bias as one more column of the weight against a row of ones: the
        # GEMM adds it (no pass over the output) and the weight's gradient GEMM
        # sums its gradient (no reduction). Rows in (kernel offset, c) order, so
        # the windows and the ones row stack along dim 0 in one copy.
        ones = full((1, *windows[0].shape[1:]), 1, dtype=weight.dtype)
        cols = cat([*windows, ones], 0)  # (K*C + 1, N, *out), or (K*C + 1, *out, N)
        w = reshape(weight.permute(0, *range(2, 2 + nsp), 1), (o, kk * c))
        y = matmul(cat([w, reshape(bias, (o, 1))], 1), reshape(cols, (kk * c + 1, length)))
        bias = None
    elif groups == 1:
        cols = stack(windows, 1)  # (C, K, N, *out), or (C, K, *out, N)
        y = matmul(reshape(weight, (o, c * kk)), reshape(cols, (c * kk, length)))
    else:
        cols = stack(windows, 1)
        y = matmul(reshape(weight, (groups, o // groups, cg * kk)),
                   reshape(cols, (groups, cg * kk, length)))
    if batch_last:  # (O, *out, N) -> (N, O, *out)
        y = reshape(y, (o, *out, n)).permute(1 + nsp, 0, *range(1, 1 + nsp))
    else:
        y = reshape(y, (o, n, *out)).permute(1, 0, *range(2, 2 + nsp))  # (N, O, *out)
    if bias is not None:
        y = y + reshape(bias, _keep_shape(nsp + 2, 1, o))
    return y[0] if unbatched else y


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    return _convnd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    return _convnd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def _conv_transposend(op: str, nsp: int, input: Tensor, weight: Tensor, bias: Tensor | None,
                      stride: Any, padding: Any, output_padding: Any, groups: int,
                      dilation: Any) -> Tensor:
    """The transpose of convolution as a convolution: the input spread out by
    ``stride`` (interior zero padding), padded by dilation*(k-1) - padding
    (cropped where that is negative), and convolved with the flipped kernel
    whose in/out channels are swapped per group."""
    x, unbatched = _batched_conv_input(op, nsp, input, weight)
    c, og = weight.shape[:2]
    kernel = weight.shape[2:]
    if x.shape[1] != c or groups < 1 or c % groups:
        raise ShapeError(op, f"input {list(x.shape)} and weight {list(weight.shape)} with "
                             f"groups={groups}: the weight's first dimension must be the "
                             f"{x.shape[1]} input channels, divisible by groups")
    s, p = _pair(stride, nsp, "stride", op), _pair(padding, nsp, "padding", op)
    op_, d = _pair(output_padding, nsp, "output_padding", op), _pair(dilation, nsp,
                                                                    "dilation", op)
    if builtins.any(o >= builtins.max(sv, dv) for o, sv, dv in zip(op_, s, d)):
        raise ValueError(f"{op}: output padding must be smaller than either stride or "
                         f"dilation, got output_padding={list(op_)}")
    spread = x if builtins.all(v == 1 for v in s) else record(
        OPS["pad"], (x,), {"low": (0,) * x.ndim, "high": (0,) * x.ndim,
                           "interior": (0, 0, *(v - 1 for v in s))})
    pairs = [(0, 0), (0, 0)] + [(dv * (k - 1) - pv, dv * (k - 1) - pv + o)
                                for k, pv, dv, o in zip(kernel, p, d, op_)]
    spread = _constant_pad(spread, pairs, 0.0)
    w = weight
    for i, k in enumerate(kernel):  # flip (switch: to pf.flip)
        w = _select_rows(w, 2 + i, list(range(k - 1, -1, -1)))
    w = reshape(w, (groups, c // groups, og, *kernel)).permute(0, 2, 1, *range(3, 3 + nsp))
    w = reshape(w, (groups * og, c // groups, *kernel))
    y = _convnd(op, nsp, spread, w, bias, 1, 0, d, groups)
    return y[0] if unbatched else y


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    return _conv_transposend("conv_transpose1d", 1, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    return _conv_transposend("conv_transpose2d", 2, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


# ---- pooling ----

def _pool_args(op: str, nsp: int, x: Tensor, kernel_size: Any, stride: Any, padding: Any,
               dilation: Any) -> tuple[tuple[int, ...], ...]:
    if x.ndim not in (nsp + 1, nsp + 2):
        raise ShapeError(op, f"expects a {nsp + 1}-D or {nsp + 2}-D input, got "
                             f"{list(x.shape)}")
    k = _pair(kernel_size, nsp, "kernel_size", op)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _pair(stride, nsp, "stride", op)
    p = _pair(padding, nsp, "padding", op)
    d = _pair(dilation, nsp, "dilation", op)
    if builtins.any(v <= 0 for v in (*k, *s, *d)):
        raise ValueError(f"{op}: kernel_size, stride and dilation must be positive")
    if builtins.any(2 * pv > kv for pv, kv in zip(p, k)):
        raise ValueError(f"{op}: pad should be at most half of effective kernel size, but "
                         f"got pad={list(p)} and kernel_size={list(k)}")
    return k, s, p, d


def _pool_input(x: Tensor, k, s, p, d, ceil_mode: bool, op: str, value: float
                ) -> tuple[Tensor, list[int]]:
    nsp = len(k)
    out = [_out_size(op, x.shape[x.ndim - nsp + i], k[i], s[i], p[i], d[i], ceil_mode)
           for i in range(nsp)]
    pairs = [(0, 0)] * (x.ndim - nsp)
    for i in range(nsp):
        n = x.shape[x.ndim - nsp + i]
        need = (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1  # extent of the last window
        pairs.append((p[i], builtins.max(need - n - p[i], 0)))
    return _constant_pad(x, pairs, value), out


def _tiles(x: Tensor, k, s, p, d, ceil_mode: bool, op: str
           ) -> tuple[Tensor, tuple[int, ...]] | None:
    """Non-overlapping windows (stride = kernel, no padding or dilation) as a
    reshape ``(..., o0, k0, o1, k1, ...)`` of the input cropped to whole
    windows, with the window axes to reduce; None for other windows. A
    reduction of the reshape differentiates into elementwise ops on the input,
    where one strided slice per window offset costs a zero-padded copy of the
    input per offset in the backward pass. (A transposing copy to put the
    window axes first, so the backward broadcasts over leading axes, was
    measured: its two copies cost more than they save.)"""
    nsp, lead = len(k), x.ndim - len(k)
    if tuple(s) != tuple(k) or builtins.any(p) or builtins.any(v != 1 for v in d):
        return None
    if CONFIG.backend == "csl":  # the PE grid places rank <= 2 (batch dims folded): the
        return None  # rank-6 reshape is refused there, the window slices are not
    out = [_out_size(op, x.shape[lead + i], k[i], s[i], 0, 1, ceil_mode) for i in range(nsp)]
    if builtins.any(o * kv > x.shape[lead + i] or o == 0 for i, (o, kv) in
                    enumerate(zip(out, k))):
        return None  # a window would reach past the input (ceil_mode): padded windows
    for i in range(nsp):
        if out[i] * k[i] != x.shape[lead + i]:
            x = _slice_dim(x, lead + i, 0, out[i] * k[i])
    tiled = reshape(x, (*x.shape[:lead], *(v for o, kv in zip(out, k) for v in (o, kv))))
    return tiled, tuple(lead + 2 * i + 1 for i in range(nsp))


_MAX_POOL = OPS["max_pool"]


def _max_poolnd(op: str, nsp: int, input: Tensor, kernel_size: Any, stride: Any,
                padding: Any, dilation: Any, ceil_mode: bool, return_indices: bool) -> Any:
    x = as_tensor_arg(input)
    k, s, p, d = _pool_args(op, nsp, x, kernel_size, stride, padding, dilation)
    if CONFIG.backend != "csl":  # one op: values and window offsets in one pass
        values, offset = record(_MAX_POOL, (x,), {"kernel": k, "stride": s, "padding": p,
                                                  "dilation": d, "ceil_mode": bool(ceil_mode)})
        if not return_indices:
            return values
        out = list(values.shape[values.ndim - nsp:])
        return values, _max_indices(x, offset, k, s, p, d, out)
    # the PE grid: the windows as other ops (rank <= 2 placements, no int64 reductions)
    tiles = _tiles(x, k, s, p, d, ceil_mode, op)
    if tiles is not None:  # the windows by one transposing copy of the input, no slices
        tiled, axes = tiles
        rest = [i for i in range(tiled.ndim) if i not in axes]
        windows = reshape(tiled.permute(*axes, *rest),
                          (math.prod(k), *(tiled.shape[i] for i in rest)))
        out = [tiled.shape[i] for i in rest][-nsp:]
    else:
        xp, out = _pool_input(x, k, s, p, d, ceil_mode, op, -math.inf)
        windows = stack(_windows(xp, k, s, d, out), 0)
        if CONFIG.backend == "csl" and not return_indices:
            # the PE grid computes no int64 reductions (argmax's offsets): the
            # same values, with the gradient of a tie shared among its elements
            # there (torch gives it all to the first)
            return amax(windows, 0)
    # torch's choice in each window (offsets in row-major kernel order): the
    # last NaN, else the first maximum; the value is read at that offset, so
    # the whole gradient goes to it, as torch's (a max over the windows would
    # share it among equal elements: the zeros a ReLU leaves, say)
    count = windows.shape[0]
    offset = _ops.argmax(windows, 0)
    if x.dtype.is_floating_point:
        # the offsets in the windows' own dtype (exact to 256 in every float
        # dtype): the input-sized where and max move 4 bytes per element, not 8
        small = count <= 256
        # recorded (iota), not host data: pf.compile replays a step that pools
        order = reshape(arange(count, dtype=(windows if small else offset).dtype),
                        (count,) + (1,) * (windows.ndim - 1))
        last_nan = amax(where(_ops.isnan(windows), order, -1), 0)
        offset = where(last_nan >= 0, _ops.convert(last_nan, offset.dtype) if small
                       else last_nan, offset)
    values = reshape(_indexing.gather(windows, 0, _ops.unsqueeze(offset, 0)), offset.shape)
    if not return_indices:
        return values
    return values, _max_indices(x, offset, k, s, p, d, out)


def _max_indices(x: Tensor, offset: Tensor, k, s, p, d, out) -> Tensor:
    """The input position of each window's chosen ``offset``, flat per channel
    plane of the input, as torch's indices; where every element is -inf, the
    first inside the input (never a padded one)."""
    nsp, count = len(k), math.prod(k)
    # the input position of each kernel offset at each output position, -1 if padded
    grids = np.meshgrid(*[np.arange(o) for o in out], indexing="ij")
    where_in = np.zeros((count, *out), np.int64)
    inside = np.ones((count, *out), bool)
    for j, off in enumerate(np.ndindex(*k)):
        flat = np.zeros(tuple(out), np.int64)
        for i in range(nsp):
            n = x.shape[x.ndim - nsp + i]
            at = grids[i] * s[i] - p[i] + off[i] * d[i]
            inside[j] &= (at >= 0) & (at < n)
            flat = flat * n + at
        where_in[j] = flat
    first_inside = np.take_along_axis(where_in, inside.argmax(0)[None], 0)[0]
    where_in[~inside] = -1
    lead = x.ndim - nsp
    table = _const_like(where_in.reshape((count,) + (1,) * lead + tuple(out)), offset)
    chosen = _indexing.take_along_dim(table, _ops.unsqueeze(offset, 0), 0)
    chosen = reshape(chosen, offset.shape)
    fallback = _const_like(first_inside.reshape((1,) * lead + tuple(out)), offset)
    return where(chosen < 0, fallback, chosen)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    return _max_poolnd("max_pool1d", 1, input, kernel_size, stride, padding, dilation,
                       ceil_mode, return_indices)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    return _max_poolnd("max_pool2d", 2, input, kernel_size, stride, padding, dilation,
                       ceil_mode, return_indices)


def _unpool_size(op: str, x: Tensor, k, s, p, output_size: Any) -> tuple[int, ...]:
    nsp = len(k)
    default = [(x.shape[x.ndim - nsp + i] - 1) * s[i] + k[i] - 2 * p[i] for i in range(nsp)]
    if output_size is None:
        size = default
    else:
        size = [int(v) for v in (output_size if not isinstance(output_size, int)
                                 else (output_size,))]
        if len(size) == nsp + 2:
            size = size[2:]
        if len(size) != nsp:
            raise ValueError(f"{op}: output_size should be a sequence containing {nsp} or "
                             f"{nsp + 2} elements, but it has a length of '{len(size)}'")
        for i in range(nsp):
            lo, hi = default[i] - s[i], default[i] + s[i]
            if not lo < size[i] < hi:
                raise ValueError(f'{op}: invalid output_size "{list(size)}" (dim {i} must be '
                                 f"between {lo} and {hi})")
    if builtins.any(v <= 0 for v in size):
        raise ValueError(f"{op}: output_size must be positive, got {list(size)}")
    return tuple(size)


def _max_unpoolnd(op: str, nsp: int, input: Tensor, indices: Tensor, kernel_size: Any,
                  stride: Any, padding: Any, output_size: Any) -> Tensor:
    """``input`` written at its flat per-plane ``indices`` into zeros of the
    output size (the index is evaluated: its values place the writes). Where
    several elements name one position (overlapping pooling windows), the last
    is written, as torch's CPU kernel, and each of them gets that position's
    gradient, as torch's backward (a gather): the others add ``x - x``, exactly
    +0.0 in value, written as a subtraction so a -0.0 stays -0.0."""
    x, idx = as_tensor_arg(input), as_tensor_arg(indices)
    if x.ndim not in (nsp + 1, nsp + 2):
        raise ShapeError(op, f"expects a {nsp + 1}-D or {nsp + 2}-D input, got "
                             f"{list(x.shape)}")
    if idx.shape != x.shape:
        raise ShapeError(op, f"indices {list(idx.shape)} must have the input's shape "
                             f"{list(x.shape)}")
    if idx.dtype.name != "int64":
        raise TypeError(f"{op}: indices must be an int64 tensor, got {idx.dtype.name}")
    k = _pair(kernel_size, nsp, "kernel_size", op)
    s = k if stride is None else _pair(stride, nsp, "stride", op)
    p = _pair(padding, nsp, "padding", op)
    size = _unpool_size(op, x, k, s, p, output_size)
    lead = x.shape[:x.ndim - nsp]
    planes, plane = int(np.prod(lead)), int(np.prod(size))
    host = np.asarray(idx.numpy()).reshape(planes, -1)
    if host.size and (host.min() < 0 or host.max() >= plane):
        bad = int(host.min() if host.min() < 0 else host.max())
        raise IndexError(f"{op}: Found an invalid max index: {bad} (output volumes are of "
                         f"size {'x'.join(map(str, size))})")
    flat_x = reshape(x, (planes, -1))
    zeros = _ops.broadcast_to(_ops._cast(0, x.dtype), (planes, plane))
    y = _indexing.scatter(zeros, 1, host, flat_x)
    # the earlier writes of a repeated position: gradient only, value +0.0
    flat_pos = (host + np.arange(planes)[:, None] * plane).reshape(-1)
    last = np.zeros(flat_pos.size, bool)
    last[flat_pos.size - 1 - np.unique(flat_pos[::-1], return_index=True)[1]] = True
    last = last.reshape(host.shape)
    if not last.all() and x.dtype.is_floating_point:
        held = detach(flat_x)
        safe = where(_ops.isfinite(held), held - flat_x, _ops._cast(0, x.dtype))
        earlier = where(from_numpy(~last), safe, _ops._cast(0, x.dtype))
        y = y - _indexing.scatter_add(zeros, 1, host, earlier)
    return reshape(y, (*lead, *size))


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    return _max_unpoolnd("max_unpool1d", 1, input, indices, kernel_size, stride, padding,
                         output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    return _max_unpoolnd("max_unpool2d", 2, input, indices, kernel_size, stride, padding,
                         output_size)
def _avg_divisor(n: int, k: int, s: int, p: int, out: int, include_pad: bool) -> np.ndarray:
    """torch's per-window divisor along one dim: the window clipped to the
    padded input (count_include_pad) or to the input itself."""
    start = np.arange(out) * s - p
    end = np.minimum(start + k, n + p)
    if include_pad:
        return (end - start).astype(np.float64)
    return (np.minimum(end, n) - np.maximum(start, 0)).astype(np.float64)


def _avg_poolnd(op: str, nsp: int, input: Tensor, kernel_size: Any, stride: Any,
                padding: Any, ceil_mode: bool, count_include_pad: bool,
                divisor_override: int | None) -> Tensor:
    x = as_tensor_arg(input)
    k, s, p, d = _pool_args(op, nsp, x, kernel_size, stride, padding, 1)
    xp, out = _pool_input(x, k, s, p, d, ceil_mode, op, 0.0)
    tiles = _tiles(x, k, s, p, d, ceil_mode, op)
    total = sum(stack(_windows(xp, k, s, d, out), 0), 0) if tiles is None \
        else sum(tiles[0], tiles[1])
    if divisor_override is not None:
        if divisor_override == 0:
            raise ValueError(f"{op}: divisor must be not zero")
        div = np.array(float(divisor_override))
    else:
        div = np.ones((), np.float64)
        for i in range(nsp):
            n = x.shape[x.ndim - nsp + i]
            div = np.multiply.outer(div, _avg_divisor(n, k[i], s[i], p[i], out[i],
                                                      count_include_pad))
    if not x.dtype.is_floating_point:  # torch: integer sums divided, truncated, same dtype
        quotient = _ops.div(total, _const_like(div.astype(np.int64), total),
                            rounding_mode="trunc")
        return _ops.convert(quotient, x.dtype)
    return total / _const_like(div, total)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    return _avg_poolnd("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode,
                       count_include_pad, None)


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    return _avg_poolnd("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                       count_include_pad, divisor_override)


def _adaptive_bounds(n: int, out: int) -> list[tuple[int, int]]:
    return [((i * n) // out, -(-((i + 1) * n) // out)) for i in range(out)]


def _adaptive_sizes(op: str, x: Tensor, output_size: Any, nsp: int) -> tuple[int, ...]:
    if x.ndim not in (nsp + 1, nsp + 2):
        raise ShapeError(op, f"expects a {nsp + 1}-D or {nsp + 2}-D input, got "
                             f"{list(x.shape)}")
    sizes = (output_size,) * nsp if isinstance(output_size, int | None) \
        else tuple(output_size)
    if len(sizes) != nsp:
        raise ValueError(f"{op}: output_size must have {nsp} entries, got {output_size!r}")
    spatial = x.shape[x.ndim - nsp:]
    return tuple(spatial[i] if v is None else int(v) for i, v in enumerate(sizes))


def _adaptive_means(x: Tensor, sizes: Sequence[int]) -> Tensor:
    """Adaptive average pooling of the last ``len(sizes)`` dims, one dim after
    the other (a box mean is the mean of means along its sides): a reshape
    and a mean where the size divides, slice means otherwise. A NaN or inf
    stays in its own regions (as torch's), where averaging matrices would
    spread it over the whole plane."""
    for i, out in enumerate(sizes):
        dim = x.ndim - len(sizes) + i
        n = x.shape[dim]
        if out == n:
            continue
        if n % out == 0:
            split = (*x.shape[:dim], out, n // out, *x.shape[dim + 1:])
            x = mean(reshape(x, split), dim + 1)
        else:
            x = cat([mean(_slice_dim(x, dim, lo, hi), dim, keepdim=True)
                     for lo, hi in _adaptive_bounds(n, out)], dim)
    return x


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    x = as_tensor_arg(input)
    return _adaptive_means(x, _adaptive_sizes("adaptive_avg_pool1d", x, output_size, 1))


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    x = as_tensor_arg(input)
    ho, wo = _adaptive_sizes("adaptive_avg_pool2d", x, output_size, 2)
    if (ho, wo) == (1, 1):
        return mean(x, (-2, -1), keepdim=True)
    return _adaptive_means(x, (ho, wo))


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False
                        ) -> Tensor:
    x = as_tensor_arg(input)
    ho, wo = _adaptive_sizes("adaptive_max_pool2d", x, output_size, 2)
    if return_indices:
        return _adaptive_max_pool2d_with_indices(x, ho, wo)
    h, w = x.shape[-2:]
    rows = []
    for hl, hh in _adaptive_bounds(h, ho):
        band = _slice_dim(x, x.ndim - 2, hl, hh)
        rows.append(cat([_region_max(_slice_dim(band, x.ndim - 1, wl, wh))
                         for wl, wh in _adaptive_bounds(w, wo)], -1))
    return cat(rows, -2)


def _region_max(region: Tensor) -> Tensor:
    """The maximum of the last two dims (kept, size 1), read at the first
    maximum in row-major order: the whole gradient goes there, as torch's."""
    flat = reshape(region, (*region.shape[:-2], region.shape[-2] * region.shape[-1]))
    return reshape(_ops.max(flat, -1).values, (*region.shape[:-2], 1, 1))


# ---- interpolation ----

def _linear_matrix(n: int, out: int, align_corners: bool, scale: float | None
                   ) -> np.ndarray:
    a = np.zeros((out, n), np.float64)
    for i in range(out):
        if align_corners:
            src = i * (n - 1) / (out - 1) if out > 1 else 0.0
        else:
            r = (n / out) if scale is None else 1.0 / scale
            src = builtins.max((i + 0.5) * r - 0.5, 0.0)
        i0 = builtins.min(int(math.floor(src)), n - 1)
        i1 = builtins.min(i0 + 1, n - 1)
        lam = src - i0
        a[i, i0] += 1.0 - lam
        a[i, i1] += lam
    return a


def _aa_matrix(n: int, out: int, align_corners: bool, scale: float | None, cubic: bool
               ) -> np.ndarray:
    """torch's antialiased (``antialias=True``) bilinear/bicubic weights along
    one dim (ATen's ``_compute_indices_min_size_weights_aa``, PIL's resampling):
    when downsampling, the triangle (bilinear) or Keys (A = -0.5, bicubic)
    filter is widened by the scale, so each output averages every input it
    covers; the weights of a row are normalised to sum to 1."""
    a_ = -0.5

    def filt(x: float) -> float:
        x = abs(x)
        if not cubic:
            return 1.0 - x if x < 1.0 else 0.0
        if x < 1.0:
            return ((a_ + 2.0) * x - (a_ + 3.0)) * x * x + 1.0
        if x < 2.0:
            return (((x - 5.0) * x + 8.0) * x - 4.0) * a_
        return 0.0

    if align_corners:
        r = (n - 1) / (out - 1) if out > 1 else 0.0
    else:
        r = 1.0 / scale if scale is not None and scale > 0 else n / out
    r = float(np.float32(r))  # torch computes the scale in the input's float
    support = (2.0 if cubic else 1.0) * (r if r >= 1.0 else 1.0)
    invscale = 1.0 / r if r >= 1.0 else 1.0
    a = np.zeros((out, n), np.float64)
    for i in range(out):
        center = r * (i + 0.5)
        xmin = builtins.max(int(center - support + 0.5), 0)
        xsize = builtins.min(int(center + support + 0.5), n) - xmin
        w = np.array([filt((j + xmin - center + 0.5) * invscale) for j in range(xsize)])
        total = w.sum()
        if total != 0.0:
            w = w / total
        a[i, xmin:xmin + xsize] = w
    return a


def _cubic_matrix(n: int, out: int, align_corners: bool, scale: float | None) -> np.ndarray:
    """torch's bicubic weights along one dim (Keys' kernel with A = -0.75): the
    source coordinate is not clamped at 0 (as torch's ``cubic=True``), its
    integer part at most n - 1 and the fraction clamped to [0, 1]; the four
    taps read clamped indices (border replication)."""
    a_ = -0.75

    def near(t: float) -> float:  # |t| <= 1
        return ((a_ + 2) * t - (a_ + 3)) * t * t + 1

    def far(t: float) -> float:  # 1 < |t| < 2
        return ((a_ * t - 5 * a_) * t + 8 * a_) * t - 4 * a_

    a = np.zeros((out, n), np.float64)
    if align_corners:
        r = (n - 1) / (out - 1) if out > 1 else 0.0
    else:
        r = 1.0 / scale if scale is not None and scale > 0 else n / out
    for i in range(out):
        src = r * i if align_corners else r * (i + 0.5) - 0.5
        i0 = builtins.min(int(math.floor(src)), n - 1)
        t = builtins.min(builtins.max(src - i0, 0.0), 1.0)
        for tap, w in zip(range(i0 - 1, i0 + 3), (far(t + 1), near(t), near(1 - t),
                                                   far(2 - t))):
            a[i, builtins.min(builtins.max(tap, 0), n - 1)] += w
    return a


def _nearest_index(n: int, out: int, scale: float | None, exact: bool) -> list[int]:
    r = (n / out) if scale is None else 1.0 / scale
    if exact:
        return [builtins.min(int(math.floor((i + 0.5) * r)), n - 1) for i in range(out)]
    return [builtins.min(int(math.floor(i * np.float32(r))), n - 1) for i in range(out)]


def _select_rows(x: Tensor, dim: int, index: list[int]) -> Tensor:
    """x's slices ``index`` along ``dim``, joined (runs of consecutive
    indices become one slice; switch: to pf.index_select)."""
    parts, i = [], 0
    while i < len(index):
        j = i
        if index[i] == index[j]:
            while j + 1 < len(index) and index[j + 1] == index[i]:
                j += 1
            if j > i:
                piece = _slice_dim(x, dim, index[i], index[i] + 1)
                shape = list(piece.shape)
                shape[dim] = j - i + 1
                parts.append(piece.expand(*shape))
                i = j + 1
                continue
        while j + 1 < len(index) and index[j + 1] == index[j] + 1:
            j += 1
        parts.append(_slice_dim(x, dim, index[i], index[j] + 1))
        i = j + 1
    return cat(parts, dim)


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False
                ) -> Tensor:
    x = as_tensor_arg(input)
    nsp = x.ndim - 2
    if nsp < 1:
        raise ShapeError("interpolate", f"expects a batched input (N, C, *spatial), got "
                                        f"{list(x.shape)}")
    linear = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
    if antialias and (mode not in ("bilinear", "bicubic") or nsp != 2):
        raise NotImplementedError("Anti-alias option is restricted to bilinear and bicubic "
                                  "modes and requires a 4-D tensor as input")
    if mode in linear and linear[mode] != nsp:
        raise NotImplementedError(f"interpolate: mode {mode!r} needs a {linear[mode] + 2}-D "
                                  f"input, got {list(x.shape)}")
    if mode not in ("nearest", "nearest-exact", "area", *linear):
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported (nearest, "
                                  "nearest-exact, area, linear, bilinear, bicubic, trilinear)")
    if align_corners is not None and mode not in linear:
        raise ValueError("interpolate: align_corners option can only be set with the "
                         "interpolating modes: linear | bilinear | bicubic | trilinear")
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: exactly one of size and scale_factor must be defined")
    spatial = x.shape[2:]
    if size is not None:
        out = _pair(size, nsp, "size", "interpolate")
        scales: list[float | None] = [None] * nsp
    else:
        sf = (float(scale_factor),) * nsp if isinstance(scale_factor, int | float) \
            else tuple(float(v) for v in scale_factor)
        if len(sf) != nsp:
            raise ValueError(f"interpolate: scale_factor needs {nsp} entries")
        out = tuple(int(math.floor(n * f)) for n, f in zip(spatial, sf))
        scales = [None if recompute_scale_factor else f for f in sf]
    if mode == "area":  # torch's: the adaptive average pool to the output size
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nsp - 1](x, out)
    y = x
    for i in range(nsp):
        dim = 2 + i
        n, o = spatial[i], out[i]
        if n == o and mode != "bicubic" and mode in linear:
            continue  # torch's linear kernels copy a dim whose size is kept, whatever the scale
        if antialias:
            a = _aa_matrix(n, o, bool(align_corners), scales[i], mode == "bicubic")
            moved = y.transpose(dim, -1) if dim != y.ndim - 1 else y
            moved = matmul(moved, _const_like(a.T, y))
            y = moved.transpose(dim, -1) if dim != y.ndim - 1 else moved
        elif mode in linear:
            matrix = _cubic_matrix if mode == "bicubic" else _linear_matrix
            a = matrix(n, o, bool(align_corners), scales[i])
            moved = y.transpose(dim, -1) if dim != y.ndim - 1 else y
            moved = matmul(moved, _const_like(a.T, y))
            y = moved.transpose(dim, -1) if dim != y.ndim - 1 else moved
        else:
            y = _select_rows(y, dim, _nearest_index(n, o, scales[i], mode == "nearest-exact"))
    return y


# ---- losses ----

def _reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "none" if not reduce else ("mean" if size_average else "sum")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_same_shape(op: str, input: Tensor, target: Tensor) -> None:
    if input.shape != target.shape:
        try:
            np.broadcast_shapes(input.shape, target.shape)
        except ValueError:
            raise ShapeError(op, f"input {list(input.shape)} and target "
                                 f"{list(target.shape)} do not broadcast") from None


def _pointwise_loss(op: str, input: Tensor, target: Tensor, size_average, reduce,
                    reduction: str, fn, weight: Tensor | None = None,
                    weighted_mean: bool = False) -> Tensor:
    """fn(input - target) (times ``weight``), reduced. torch's weighted mean is
    sum / sum(weight) for mse and l1 (``weighted_mean``), a plain mean for huber."""
    red = _reduction(size_average, reduce, reduction)
    target = as_tensor_arg(target)
    _check_same_shape(op, input, target)
    loss = fn(input - target)
    if weight is None:
        return _reduce(loss, red)
    if weight.shape != input.shape:
        raise ValueError(f"{op}: weights and input must have the same size, got "
                         f"{list(weight.shape)} and {list(input.shape)}")
    loss = loss * weight
    if red == "mean" and weighted_mean:
        return sum(loss) / sum(weight)
    return _reduce(loss, red)


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    return _pointwise_loss("mse_loss", input, target, size_average, reduce, reduction,
                           lambda d: d * d, weight, True)


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    return _pointwise_loss("l1_loss", input, target, size_average, reduce, reduction, abs,
                           weight, True)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    if beta < 0:
        raise ValueError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:
        return l1_loss(input, target, size_average, reduce, reduction)

    def fn(d: Tensor) -> Tensor:
        a = abs(d)
        return where(a < beta, d * d * (0.5 / beta), a - 0.5 * beta)
    return _pointwise_loss("smooth_l1_loss", input, target, size_average, reduce, reduction,
                           fn)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    if delta <= 0:
        raise ValueError("huber_loss does not support non-positive values for delta.")

    def fn(d: Tensor) -> Tensor:
        a = abs(d)
        return where(a < delta, d * d * 0.5, (a - 0.5 * delta) * delta)
    return _pointwise_loss("huber_loss", input, target, None, None, reduction, fn, weight)


def _class_dim(input: Tensor) -> int:
    return 0 if input.ndim == 1 else 1


def _one_hot(op: str, input: Tensor, target: Tensor) -> Tensor:
    """(target == class) along input's class dim, bool (switch: to pf.one_hot).
    A realized target is checked as torch does; out-of-range classes of a
    lazy target have no 1 anywhere (the lead may add a runtime check)."""
    cd = _class_dim(input)
    c = input.shape[cd]
    expected = input.shape[:cd] + input.shape[cd + 1:]
    if target.shape != expected:
        raise ShapeError(op, f"expected target of shape {list(expected)} for input "
                             f"{list(input.shape)}, got {list(target.shape)}")
    if target.dtype.is_floating_point or target.dtype is bool_:
        raise ShapeError(op, f"class-index target must be an integer tensor, got "
                             f"{target.dtype.name}")
    classes = reshape(arange(c, dtype=target.dtype), _keep_shape(input.ndim, cd, c))
    return target.unsqueeze(cd) == classes


def _check_targets(op: str, target: Tensor, c: int, ignore_index: int) -> None:
    if target._node is None and type(target._value) is np.ndarray:
        # realized: cheap to check, as torch does (the array, not .numpy(): a check
        # is not a value read that would keep pf.compile from replaying the step)
        t = target._value
        bad = (t != ignore_index) & ((t < 0) | (t >= c))
        if bad.any():
            raise IndexError(f"{op}: target {int(t[bad].flat[0])} is out of bounds for "
                             f"{c} classes")


def _nll(op: str, logp: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int
         ) -> tuple[Tensor, Tensor, Tensor]:
    """(per-element loss, per-element weight w[target] (0 where ignored), the
    not-ignored mask)."""
    target = as_tensor_arg(target)
    cd = _class_dim(logp)
    c = logp.shape[cd]
    if weight is not None and weight.shape != (c,):
        raise ShapeError(op, f"weight must have shape [{c}] for {c} classes, got "
                             f"{list(weight.shape)}")
    _check_targets(op, target, c, ignore_index)
    hot = _one_hot(op, logp, target)
    picked = sum(where(hot, logp, 0.0), cd)
    keep = target != ignore_index
    if weight is None:
        w = where(keep, 1.0, 0.0).to(logp.dtype)
    else:
        w = where(keep, sum(where(hot, reshape(weight, _keep_shape(logp.ndim, cd, c)), 0.0),
                            cd), 0.0)
    return -picked * w, w, keep


def _weighted_mean(total: Tensor, weight_sum: Tensor) -> Tensor:
    """``total / weight_sum``, NaN when every target is ignored (0/0, torch's
    value) but with a zero gradient there, as torch's nll_loss_backward skips
    the ignored targets (the quotient's chain would give 0 * inf = NaN)."""
    none = weight_sum == 0
    return where(none, _ops._cast(math.nan, total.dtype),
                 total / where(none, _ops._cast(1.0, weight_sum.dtype), weight_sum))


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: bool | None = None, ignore_index: int = -100,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    red = _reduction(size_average, reduce, reduction)
    loss, w, _ = _nll("nll_loss", input, target, weight, ignore_index)
    if red == "mean":
        return _weighted_mean(sum(loss), sum(w))
    return _reduce(loss, red)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    red = _reduction(size_average, reduce, reduction)
    if red not in ("none", "mean", "sum"):
        raise ValueError(f"{red} is not a valid value for reduction")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got "
                         f"{label_smoothing}")
    target = as_tensor_arg(target)
    cd = _class_dim(input)
    c = input.shape[cd]
    logp = log_softmax(input, cd)
    w_c = None if weight is None else reshape(weight, _keep_shape(input.ndim, cd, c))
    if target.dtype.is_floating_point:  # class probabilities
        if target.shape != input.shape:
            raise ShapeError("cross_entropy", f"probability target {list(target.shape)} must "
                                              f"have the input's shape {list(input.shape)}")
        if ignore_index != -100:  # torch's check: no class index to ignore in probabilities
            raise RuntimeError(f"cross_entropy: ignore_index is not supported for floating "
                               f"point target (got ignore_index={ignore_index} with a "
                               f"{target.dtype.name} probability target)")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = logp * target if w_c is None else logp * target * w_c
        loss = -sum(prod, cd)
        if red == "mean":
            return sum(loss) / float(builtins.max(input.numel() // c, 1)) \
                if input.numel() else mean(loss)
        return _reduce(loss, red)
    nll, w, keep = _nll("cross_entropy", logp, target, weight, ignore_index)
    nll_red = _weighted_mean(sum(nll), sum(w)) if red == "mean" else _reduce(nll, red)
    if label_smoothing == 0:
        return nll_red
    smooth = -sum(logp if w_c is None else logp * w_c, cd)
    smooth = where(keep, smooth, 0.0)
    if red == "mean":
        smooth_red = _weighted_mean(sum(smooth), sum(w) if weight is not None else
                                    sum(keep.to(input.dtype)))
    else:
        smooth_red = _reduce(smooth, red)
    return nll_red * (1 - label_smoothing) + smooth_red * (label_smoothing / c)


def _bce_value(x: Tensor, t: Tensor) -> Tensor:
    # torch clamps the logs at -100 so that 0 * log(0) stays finite
    return -(t * maximum(log(x), -100.0) + (1 - t) * maximum(log(1 - x), -100.0))


def _bce_partials(x: Tensor, t: Tensor) -> list[Tensor]:
    """torch's binary_cross_entropy_backward, ``(x - t) / max((1 - x) x, 1e-12)``
    (finite at x = 0 and 1, where the clamped logs' chain gives NaN or 0), and
    its target derivative ``-logit(x)``. (torch's EPSILON is the float 1e-12,
    float64 tensors included.)"""
    return [(x - t) / maximum((1 - x) * x, _BCE_EPSILON), -_ops.logit(x)]


_BCE_EPSILON = float(np.float32(1e-12))


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    red = _reduction(size_average, reduce, reduction)
    target = as_tensor_arg(target)
    if target.shape != input.shape:
        raise ShapeError("binary_cross_entropy", f"target size {list(target.shape)} must be "
                         f"the same as input size {list(input.shape)}")
    loss = _math_rules.elementwise("BinaryCrossEntropyBackward0", _bce_value, [input, target],
                                   vjp=_bce_partials)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, red)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None,
                                     size_average: bool | None = None,
                                     reduce: bool | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    red = _reduction(size_average, reduce, reduction)
    target = as_tensor_arg(target)
    if target.shape != input.shape:
        raise ShapeError("binary_cross_entropy_with_logits", f"target size "
                         f"{list(target.shape)} must be the same as input size "
                         f"{list(input.shape)}")
    # (1 - t) x + lw softplus(-x),  lw = (pos_weight - 1) t + 1; softplus(-x) as
    # -logsigmoid(x), whose derivative at 0 is right (log1p(exp(-|x|)) + max(-x, 0)
    # has the value but a 0 derivative there: |x|'s and max's)
    soft = -_ops.logsigmoid(input)
    if pos_weight is not None:
        loss = (1 - target) * input + ((pos_weight - 1) * target + 1) * soft
    else:
        loss = (1 - target) * input + soft
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, red)


def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None,
           reduce: bool | None = None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    red = _reduction(size_average, reduce, reduction)
    target = as_tensor_arg(target)
    if log_target:
        loss = exp(target) * (target - input)
    else:  # xlogy(t, t) - t x, with 0 log 0 = 0 (the log of a safe operand); NaN for
        pos = target > 0  # a negative (or NaN) target, as torch's xlogy gives
        loss = where(pos, target * log(where(pos, target, 1.0)),
                     where(target == 0, 0.0, math.nan)) - target * input
    if red == "batchmean":
        return sum(loss) / float(input.shape[0]) if input.ndim else sum(loss)
    return _reduce(loss, red)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    if x1.shape != x2.shape:  # torch broadcasts first: norms are of the broadcast operands
        shape = tuple(np.broadcast_shapes(x1.shape, x2.shape))
        x1, x2 = x1.expand(*shape), x2.expand(*shape)
    n1 = maximum(_vector_norm(x1, 2, dim, True), eps)
    n2 = maximum(_vector_norm(x2, 2, dim, True), eps)
    return sum((x1 / n1) * (x2 / n2), dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    d = x1 - x2 + eps
    dim = builtins.max(d.ndim - 1, 0)
    if d.ndim == 0:
        d = reshape(d, (1,))
    return _vector_norm(d, p, dim, keepdim)


__all__ += ["logsumexp"]  # pf's own, exported as they are (with gelu sigmoid tanh ...)


# ---- more of torch.nn.functional (the lead's block: shuffles, unfold, shrinks, losses) ----

def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = int(upscale_factor)
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise ShapeError("pixel_shuffle", f"input channels {c} must be divisible by "
                                          f"upscale_factor squared ({r * r})")
    n = len(lead)
    x = reshape(input, (*lead, c // (r * r), r, r, h, w))
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return reshape(x, (*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = int(downscale_factor)
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise ShapeError("pixel_unshuffle", f"height {h} and width {w} must be divisible by "
                                            f"downscale_factor {r}")
    n = len(lead)
    x = reshape(input, (*lead, c, h // r, r, w // r, r))
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return reshape(x, (*lead, c * r * r, h // r, w // r))


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """im2col: (N, C, H, W) -> (N, C kh kw, L), blocks in torch's order."""
    x = as_tensor_arg(input)
    if x.ndim not in (3, 4):
        raise ShapeError("unfold", f"expects a 3-D or 4-D input, got {list(x.shape)}")
    unbatched = x.ndim == 3
    if unbatched:
        x = x.unsqueeze(0)
    k, d = _pair(kernel_size, 2, "kernel_size", "unfold"), _pair(dilation, 2, "dilation", "unfold")
    p, s = _pair(padding, 2, "padding", "unfold"), _pair(stride, 2, "stride", "unfold")
    if p != (0, 0):
        x = pad(x, (p[1], p[1], p[0], p[0]))
    out = [_out_size("unfold", x.shape[2 + i], k[i], s[i], 0, d[i]) for i in range(2)]
    if builtins.min(out) <= 0:
        raise ShapeError("unfold", f"the input {list(input.shape)} is too small for kernel "
                                   f"{list(k)} with dilation {list(d)} and padding {list(p)}")
    n, c = x.shape[:2]
    cols = stack(_windows(x, k, s, d, out), 2)  # (N, C, kh kw, oh, ow)
    cols = reshape(cols, (n, c * k[0] * k[1], out[0] * out[1]))
    return cols[0] if unbatched else cols


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    # torch's rule: NaN is not inside [-lambd, lambd], so it stays
    return where((input >= -lambd) & (input <= lambd), 0.0, input)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    if lambd < 0:
        raise ValueError(f"softshrink: lambda must be non-negative, got {lambd}")
    # x * 0 in the middle: NaN stays NaN (and -0.0 stays -0.0), as torch's
    return where(input > lambd, input - lambd, where(input < -lambd, input + lambd, input * 0.0))


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    # torch's rule x <= threshold ? value : x keeps NaN
    return _maybe_inplace(input, lambda o: where(o <= threshold, value, o), inplace,
                          "threshold_")


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """max(0, x) + weight * min(0, x), one weight per channel (dim 1) or one for all."""
    w = weight
    if w.numel() > 1:
        if input.ndim < 2 or input.shape[1] != w.numel():
            raise ShapeError("prelu", f"weight of {w.numel()} elements needs input channels "
                                      f"(dim 1) of that size, got {list(input.shape)}")
        w = reshape(w, (-1,) + (1,) * (input.ndim - 2))
    return where(input > 0, input, w * input)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: a slope drawn from U(lower, upper) per element in
    training, their mean otherwise."""
    if training:
        slope = rand(*input.shape, dtype=input.dtype) * (upper - lower) + lower
        return _maybe_inplace(input, lambda o: where(o > 0, o, o * slope), inplace, "rrelu_")
    # the slope at 0 too, as torch's (its derivative there)
    return _maybe_inplace(input, lambda o: where(o > 0, o, o * ((lower + upper) / 2)),
                          inplace, "rrelu_")


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: str = "mean", **legacy: Any) -> Tensor:
    loss = _ops.clamp(-target * (input1 - input2) + margin, 0.0)  # (torch's clamp_min)
    return _reduce(loss, _reduction(legacy.get("size_average"), legacy.get("reduce"),
                                    reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: str = "mean", **legacy: Any) -> Tensor:
    # torch's: the input where target != -1, the clamped margin where target != 1
    # (both for a target neither 1 nor -1); clamp_min, not relu: at the margin the
    # gradient passes (torch's clamp)
    loss = where(target != -1, input, 0.0) + where(target != 1, _ops.clamp(margin - input, 0.0),
                                                     0.0)
    return _reduce(loss, _reduction(legacy.get("size_average"), legacy.get("reduce"),
                                    reduction))


def soft_margin_loss(input: Tensor, target: Tensor, reduction: str = "mean",
                     **legacy: Any) -> Tensor:
    loss = _ops.softplus(-target * input)
    return _reduce(loss, _reduction(legacy.get("size_average"), legacy.get("reduce"),
                                    reduction))


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                reduction: str = "mean", **legacy: Any) -> Tensor:
    loss = -(target * _ops.logsigmoid(input) + (1 - target) * _ops.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = mean(loss, -1)
    return _reduce(loss, _reduction(legacy.get("size_average"), legacy.get("reduce"),
                                    reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: str = "mean", **legacy: Any) -> Tensor:
    eps = 1e-12  # torch's EPSILON inside the norms
    dim = input1.ndim - 1
    prod = sum(input1 * input2, dim)
    m1, m2 = sum(input1 * input1, dim) + eps, sum(input2 * input2, dim) + eps
    cos = prod / sqrt(m1 * m2)
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, _ops.clamp(cos - margin, 0.0),
                                                    0.0)
    return _reduce(loss, _reduction(legacy.get("size_average"), legacy.get("reduce"),
                                    reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, reduction: str = "mean", **legacy: Any) -> Tensor:
    if margin <= 0:
        raise ValueError(f"triplet_margin_loss: margin must be greater than 0, got {margin}")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _ops.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = _ops.clamp(d_pos - d_neg + margin, 0.0)  # (torch's clamp_min)
    return _reduce(loss, _reduction(legacy.get("size_average"), legacy.get("reduce"),
                                    reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,
                     full: bool = False, eps: float = 1e-8, reduction: str = "mean",
                     **legacy: Any) -> Tensor:
    loss = exp(input) - target * input if log_input else input - target * log(input + eps)
    if full:  # Stirling's term for target > 1
        t = target
        safe = where(t > 1, t, 1.0)
        stirling = safe * log(safe) - safe + 0.5 * log(2 * math.pi * safe)
        loss = loss + where(t > 1, stirling, 0.0)
    return _reduce(loss, _reduction(legacy.get("size_average"), legacy.get("reduce"),
                                    reduction))


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Any, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    v = as_tensor_arg(var)
    if v.shape != input.shape and v.shape == input.shape[:-1]:
        v = v.unsqueeze(-1)
    with no_grad():
        floor = maximum(v, eps) - v  # clamp(var, min=eps) without a gradient through it
    v = v + floor
    loss = 0.5 * (log(v) + (input - target) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, reduction: str = "mean",
                      **legacy: Any) -> Tensor:
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.ndim == 2 else input.unsqueeze(0)
    t = target.reshape(-1)
    n, c = x.shape
    picked = _indexing.gather(x, 1, t.unsqueeze(1))  # (N, 1)
    z = _relu(margin - picked + x)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * _indexing.gather(weight, 0, t).unsqueeze(1)
    not_target = _indexing.one_hot(t, c).logical_not()
    loss = sum(where(not_target, z, 0.0), 1) / c
    if input.ndim == 1:
        loss = loss[0]
    return _reduce(loss, _reduction(legacy.get("size_average"), legacy.get("reduce"),
                                    reduction))


__all__ += ["pixel_shuffle", "pixel_unshuffle", "unfold", "hardshrink", "softshrink",
            "threshold", "prelu", "rrelu", "margin_ranking_loss", "hinge_embedding_loss",
            "soft_margin_loss", "multilabel_soft_margin_loss", "cosine_embedding_loss",
            "triplet_margin_loss", "poisson_nll_loss", "gaussian_nll_loss", "multi_margin_loss"]


# ---- issue 14's surface (branch surface): 3-d conv/pools, in-place activations,
# deprecated upsample names, shuffles, distances, LRN, Lp pools, bilinear, losses ----

def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    return _convnd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    return _max_poolnd("max_pool3d", 3, input, kernel_size, stride, padding, dilation,
                       ceil_mode, return_indices)


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    return _avg_poolnd("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                       count_include_pad, divisor_override)


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False
                        ) -> Tensor:
    x = as_tensor_arg(input)
    if x.ndim not in (2, 3):
        raise ShapeError("adaptive_max_pool1d", f"expected a 2-D or 3-D input, got "
                                                f"{list(x.shape)}")
    size = output_size[0] if isinstance(output_size, Sequence) else output_size
    out = adaptive_max_pool2d(x.unsqueeze(-2), (1, size), return_indices)
    if return_indices:  # a (1, W) plane's flat indices are the column indices
        return out[0][..., 0, :], out[1][..., 0, :]
    return out[..., 0, :]


# the in-place activations: the new value written into ``input`` (PyTorch's
# in-place semantics: a view writes through to its base, versions go up)

def relu_(input: Tensor) -> Tensor:
    return relu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    return rrelu(input, lower, upper, training, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _maybe_inplace(input, lambda o: where(o <= threshold, value, o), True, "threshold_")


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated in torch: ``interpolate``."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated in torch: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    x = as_tensor_arg(input)
    if x.ndim < 3:
        raise ShapeError("channel_shuffle", f"expected an input of at least 3 dimensions, got "
                                            f"{list(x.shape)}")
    c = x.shape[1]
    if groups <= 0 or c % groups:
        raise ShapeError("channel_shuffle", f"number of channels {c} must be divisible by "
                                            f"groups {groups}")
    y = reshape(x, (x.shape[0], groups, c // groups, *x.shape[2:])).transpose(1, 2)
    return reshape(y, x.shape)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distances between the rows of an (N, M) input, pairs i < j."""
    x = as_tensor_arg(input)
    if x.ndim != 2:
        raise ShapeError("pdist", f"only supports 2D tensors, got: {x.ndim}D")
    if p < 0:
        raise ShapeError("pdist", f"only supports non-negative p values, got {p}")
    i, j = np.triu_indices(x.shape[0], 1)
    if i.size == 0:
        return (sum(x, 1) * 0.0)[:0]
    rows_i = _indexing.index_select(x, 0, from_numpy(i.astype(np.int64)))
    rows_j = _indexing.index_select(x, 0, from_numpy(j.astype(np.int64)))
    return _vector_norm(rows_i - rows_j, p, 1, False)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """``x / (k + alpha/size * sum of x^2 over ``size`` neighbouring channels)^beta``."""
    x = as_tensor_arg(input)
    if x.ndim < 3:
        raise ShapeError("local_response_norm", f"expected 3D or higher dimensionality input "
                                                f"(got {x.ndim} dimensions)")
    if not x.dtype.is_floating_point:
        raise ShapeError("local_response_norm", f"expects a floating-point input, got "
                                                f"{x.dtype.name}")
    if x.shape[0] == 0 or x.numel() == 0:
        return x
    c = x.shape[1]
    sq = _zero_pad(x * x, [(0, 0), (size // 2, (size - 1) // 2),
                           *[(0, 0)] * (x.ndim - 2)])
    acc = _slice_dim(sq, 1, 0, c)
    for j in range(1, size):
        acc = acc + _slice_dim(sq, 1, j, j + c)
    div = (acc * (alpha / size) + k) ** beta
    return x / div


def _lp_pool(op: str, nsp: int, input: Tensor, norm_type: float, kernel_size: Any,
             stride: Any, ceil_mode: bool) -> Tensor:
    k = _pair(kernel_size, nsp, "kernel_size", op)
    x = as_tensor_arg(input)
    powered = x ** float(norm_type)
    out = _avg_poolnd(op, nsp, powered, k, stride, 0, ceil_mode, True, None)
    out = _ops.sign(out) * _relu(abs(out))
    return (out * float(np.prod(k))) ** (1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """``y_o = x1^T W_o x2 + b_o`` over the last dimensions."""
    a, b, w = as_tensor_arg(input1), as_tensor_arg(input2), as_tensor_arg(weight)
    if w.ndim != 3 or a.shape[-1] != w.shape[1] or b.shape[-1] != w.shape[2] or \
            a.shape[:-1] != b.shape[:-1]:
        raise ShapeError("bilinear", f"input1 {list(a.shape)}, input2 {list(b.shape)} and "
                                     f"weight {list(w.shape)}: expected weight (out, in1, in2) "
                                     f"and inputs with equal leading dimensions")
    y = _ops.einsum("...i,oij,...j->...o", a, w, b)
    return y if bias is None else y + bias


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """Samples of the Gumbel-softmax distribution (straight-through when ``hard``)."""
    del eps  # torch ignores it too (deprecated)
    x = as_tensor_arg(logits)
    u = rand(*x.shape, dtype=x.dtype)
    exponential = -log(u.clamp(1e-20, 1.0))
    gumbels = -log(exponential.clamp_min(1e-20))
    y = _softmax((x + gumbels) / tau, dim)
    if not hard:
        return y
    index = _ops.argmax(y, dim, keepdim=True)
    y_hard = _indexing.scatter(detach(y) * 0.0, dim, index, 1.0)
    return y_hard - detach(y) + y


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Any = None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater "
                         f"than 0, got {margin} instead")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _ops.minimum(d_neg, dist(positive, negative))
    return _reduce(_ops.clamp(margin + d_pos - d_neg, 0.0), _reduction(None, None, reduction))


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``sum_{j in targets, i not in targets} max(0, 1 - (x_j - x_i)) / C``; a row's
    targets are its entries up to the first -1 (evaluated: they select pairs)."""
    x = as_tensor_arg(input)
    t = np.asarray(as_tensor_arg(target).numpy())
    if x.ndim not in (1, 2) or t.shape != x.shape:
        raise ShapeError("multilabel_margin_loss", f"expected input and target of one shape "
                                                   f"(C) or (N, C), got {list(x.shape)} and "
                                                   f"{list(t.shape)}")
    x2 = x if x.ndim == 2 else x.unsqueeze(0)
    t2 = t.reshape(x2.shape)
    n, c = x2.shape
    counts = np.zeros((n, c), np.float64)  # how often j is listed as a target of row r
    is_target = np.zeros((n, c), bool)
    for r in range(n):
        for v in t2[r]:
            if v < 0:
                break
            if v >= c:
                raise IndexError(f"multilabel_margin_loss: target {v} is out of bounds for "
                                 f"{c} classes")
            counts[r, v] += 1
            is_target[r, v] = True
    pairs = counts[:, :, None] * (~is_target)[:, None, :]  # (N, j, i)
    hinge = _relu(1.0 - (x2.unsqueeze(2) - x2.unsqueeze(1)))  # [r, j, i]: 1 - (x_j - x_i)
    loss = sum(hinge * _const_like(pairs, hinge), (1, 2)) / float(c)
    if x.ndim == 1:
        loss = loss[0]
    return _reduce(loss, _reduction(size_average, reduce, reduction))


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None
                ) -> Tensor:
    """The sampling grid (N, H, W, 2) of 2-D affine matrices theta (N, 2, 3)."""
    th = as_tensor_arg(theta)
    if len(size) != 4 or th.ndim != 3 or th.shape[1:] != (2, 3) or th.shape[0] != size[0]:
        raise ShapeError("affine_grid", f"expected theta (N, 2, 3) and a 4-D size (N, C, H, W) "
                                        f"(5-D is not supported), got {list(th.shape)} and "
                                        f"{list(size)}")
    n, _, h, w = size
    dt = np.dtype(th.dtype.np if th.dtype.is_floating_point else np.float32).type

    def axis(k: int) -> np.ndarray:
        """torch's ``linspace_from_neg_one``: its linspace (bit for bit), then
        ``* (k - 1) / k`` in the dtype (a grid point on a pixel center must
        round as torch's does: grid_sample's gradient jumps there)."""
        if k <= 1:
            return np.zeros(1, dtype=dt)
        v = linspace(-1.0, 1.0, k, dtype=th.dtype).numpy().astype(dt)
        return v if align_corners else (v * dt(k - 1)) / dt(k)
    xs, ys = np.meshgrid(axis(w), axis(h))
    base = np.stack([xs, ys, np.ones_like(xs)], -1).reshape(1, h * w, 3)
    grid = matmul(_const_like(np.broadcast_to(base, (n, h * w, 3)).copy(), th),
                  th.transpose(1, 2))
    return reshape(grid, (n, h, w, 2))


__all__ += ["conv3d", "max_pool3d", "avg_pool3d", "adaptive_max_pool1d", "relu_", "elu_",
            "leaky_relu_", "hardtanh_", "selu_", "celu_", "rrelu_", "threshold_", "upsample",
            "upsample_nearest", "upsample_bilinear", "channel_shuffle", "pdist",
            "local_response_norm", "lp_pool1d", "lp_pool2d", "bilinear", "gumbel_softmax",
            "triplet_margin_with_distance_loss", "multilabel_margin_loss", "affine_grid"]


# ---- issue 14's surface, part 3 (branch surface3): fold, grid_sample, embedding_bag,
# adaptive max pooling indices. Composites: gathers and scatter-adds at positions
# computed on the host from the geometry (grid_sample: in the graph, from the grid) ----

def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """col2im, the adjoint of ``unfold``: (N, C kh kw, L) -> (N, C, H, W), the
    overlapping blocks summed (one scatter-add at host-computed positions; its
    VJP is the gather that is ``unfold``)."""
    x = as_tensor_arg(input)
    if x.ndim not in (2, 3):
        raise ShapeError("fold", f"expects a 2-D or 3-D input (N, C*kh*kw, L), got "
                                 f"{list(x.shape)}")
    unbatched = x.ndim == 2
    if unbatched:
        x = x.unsqueeze(0)
    size = _pair(output_size, 2, "output_size", "fold")
    k, d = _pair(kernel_size, 2, "kernel_size", "fold"), _pair(dilation, 2, "dilation", "fold")
    p, s = _pair(padding, 2, "padding", "fold"), _pair(stride, 2, "stride", "fold")
    if builtins.any(v <= 0 for v in (*k, *d, *s)) or builtins.any(v < 0 for v in p):
        raise ValueError(f"fold: kernel_size {list(k)}, dilation {list(d)} and stride "
                         f"{list(s)} must be positive, padding {list(p)} non-negative")
    n, ckk, length = x.shape
    kk = k[0] * k[1]
    if ckk % kk:
        raise ShapeError("fold", f"expected size of input's dimension 1 ({ckk}) to be "
                                 f"divisible by the product of kernel_size ({kk})")
    hp, wp = size[0] + 2 * p[0], size[1] + 2 * p[1]
    out = [(e - (dd * (kv - 1) + 1)) // sv + 1 for e, kv, dd, sv in zip((hp, wp), k, d, s)]
    if builtins.min(out) <= 0 or out[0] * out[1] != length:
        raise ShapeError("fold", f"given output_size={list(size)}, kernel_size={list(k)}, "
                                 f"dilation={list(d)}, padding={list(p)}, stride={list(s)}, "
                                 f"expected size of input's dimension 2 to match the number "
                                 f"of blocks ({builtins.max(out[0], 0) * builtins.max(out[1], 0)}"
                                 f"), but got {length}")
    c = ckk // kk
    rows = (np.arange(out[0])[None, :, None] * s[0]
            + np.repeat(np.arange(k[0]), k[1])[:, None, None] * d[0])
    cols = (np.arange(out[1])[None, None, :] * s[1]
            + np.tile(np.arange(k[1]), k[0])[:, None, None] * d[1])
    pos = (rows * wp + cols).reshape(1, 1, kk * length)  # (kernel offset, block) -> plane
    index = np.ascontiguousarray(np.broadcast_to(pos, (n, c, kk * length)), np.int64)
    zeros = _ops.broadcast_to(_ops._cast(0, x.dtype), (n, c, hp * wp))
    y = _indexing.scatter_add(zeros, 2, index, reshape(x, (n, c, kk * length)))
    y = reshape(y, (n, c, hp, wp))
    if p != (0, 0):
        y = _slice_dim(_slice_dim(y, 2, p[0], p[0] + size[0]), 3, p[1], p[1] + size[1])
    return y[0] if unbatched else y


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """torch's reflect_coordinates: ``coord`` mirrored into [low, high]."""
    if twice_low == twice_high:
        return coord * 0.0
    low, span = twice_low / 2.0, (twice_high - twice_low) / 2.0
    dist = abs(coord - low)
    extra = _ops.fmod(dist, span)
    flips = (dist / span).floor()
    even = _ops.eq(_ops.fmod(flips, 2.0), 0.0)
    return where(even, extra + low, span - extra + low)


def _source_index(coord: Tensor, size: int, padding_mode: str, align_corners: bool
                  ) -> Tensor:
    """A normalized grid coordinate in [-1, 1] as a pixel coordinate of an
    axis of ``size`` pixels, with torch's padding (border: clipped; reflection:
    mirrored at the edges, then clipped)."""
    # torch's CPU kernel: ``(coord + 1) * scale - 0.5`` as a fused multiply-add
    # (scale = size/2; align_corners: ``(coord + 1) * (size - 1)/2``). Its one
    # rounding decides on which side of a pixel center a point falls, and so the
    # grid's gradient there (STN's identity start): float32 runs it in float64
    scale = (size - 1) / 2.0 if align_corners else size / 2.0
    shift = 0.0 if align_corners else 0.5
    if coord.dtype.name in ("float32", "float16", "bfloat16"):
        wide = _ops.convert(coord + 1.0, float64)
        coord = _ops.convert(wide * scale - shift, coord.dtype)
    else:
        coord = (coord + 1.0) * scale - shift
    if padding_mode == "reflection":
        coord = (_reflect(coord, 0, 2 * (size - 1)) if align_corners
                 else _reflect(coord, -1, 2 * size - 1))
    if padding_mode in ("border", "reflection"):
        # torch's clip_coordinates: a point on the border counts as outside, for
        # the gradient too (none reaches the grid there; clamp's would pass)
        coord = where(coord <= 0.0, 0.0, where(coord >= size - 1.0, size - 1.0, coord))
    return coord


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """``input`` (N, C, H, W) sampled at ``grid`` (N, Ho, Wo, 2) of (x, y) in
    [-1, 1]: a gather per corner from the flattened planes, weighted in the
    graph, so gradients reach the input (scatter-add) and the grid (through
    the weights; clipped coordinates get none, as torch's)."""
    x, g = as_tensor_arg(input), as_tensor_arg(grid)
    if mode not in ("bilinear", "nearest"):
        raise NotImplementedError(f"grid_sample: mode={mode!r} is not supported (bilinear, "
                                  f"nearest)")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"grid_sample: expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: {padding_mode!r}")
    if x.ndim == 5:
        raise NotImplementedError("grid_sample: 5-D (volumetric) inputs are not supported")
    if x.ndim != 4 or g.ndim != 4 or g.shape[-1] != 2 or g.shape[0] != x.shape[0]:
        raise ShapeError("grid_sample", f"expected input (N, C, H, W) and grid (N, Ho, Wo, 2) "
                                        f"with the same N, got {list(x.shape)} and "
                                        f"{list(g.shape)}")
    if not x.dtype.is_floating_point or g.dtype is not x.dtype:
        raise TypeError(f"grid_sample: expected input and grid of the same floating dtype, "
                        f"got {x.dtype.name} and {g.dtype.name}")
    n, c, h, w = x.shape
    _, ho, wo, _ = g.shape
    corners = bool(align_corners)
    ix = _source_index(g[..., 0], w, padding_mode, corners)
    iy = _source_index(g[..., 1], h, padding_mode, corners)
    planes = reshape(x, (n, c, h * w))

    def pick(cx: Tensor, cy: Tensor) -> tuple[Tensor, Tensor]:
        """The input at integer-valued float coordinates (N, Ho, Wo) -> (N, C, Ho, Wo)
        and whether they lie inside (outside: read at 0, to be masked)."""
        inside = (_ops.logical_and(_ops.logical_and(cx >= 0.0, cx <= w - 1.0),
                                   _ops.logical_and(cy >= 0.0, cy <= h - 1.0)))
        safe_x = _ops.convert(where(inside, cx, 0.0), int64)
        safe_y = _ops.convert(where(inside, cy, 0.0), int64)
        flat = reshape(safe_y * w + safe_x, (n, 1, ho * wo))
        got = _indexing.gather(planes, 2, _ops.broadcast_to(flat, (n, c, ho * wo)))
        return reshape(got, (n, c, ho, wo)), _ops.unsqueeze(inside, 1)

    zero = _ops._cast(0, x.dtype)
    if mode == "nearest":
        rx, ry = ix.round(), iy.round()
        value, inside = pick(rx, ry)
        # torch gives the grid a zero gradient (not none): a factor 1 made from the
        # rounded coordinates (round's derivative is 0) keeps the grid in the graph
        one = _ops.unsqueeze(rx * 0.0 + ry * 0.0 + 1.0, 1)
        return where(inside, value * one, zero)
    x0, y0 = ix.floor(), iy.floor()
    # torch's weights: (x1 - ix) and (ix - x0) (not 1 - (ix - x0): the same
    # roundings as its kernel)
    tx0, ty0 = _ops.unsqueeze((x0 + 1.0) - ix, 1), _ops.unsqueeze((y0 + 1.0) - iy, 1)
    tx, ty = _ops.unsqueeze(ix - x0, 1), _ops.unsqueeze(iy - y0, 1)
    out = None
    for dx, dy, weight in ((0, 0, tx0 * ty0), (1, 0, tx * ty0),
                           (0, 1, tx0 * ty), (1, 1, tx * ty)):
        value, inside = pick(x0 + float(dx), y0 + float(dy))
        term = where(inside, value * weight, zero)
        out = term if out is None else out + term
    return out


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxima of bags of embedding rows: bags are the rows of a
    2-D ``input`` or, for a 1-D ``input``, the runs that ``offsets`` starts
    (offsets are evaluated: they set the bag sizes). Padding entries and empty
    bags count for nothing (an empty bag gives zeros), as torch's."""
    idx, w = as_tensor_arg(input), as_tensor_arg(weight)
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, got {mode!r}")
    if scale_grad_by_freq:
        raise NotImplementedError("embedding_bag: scale_grad_by_freq is not supported")
    if sparse and mode == "max":
        raise RuntimeError("embedding_bag: max mode does not support sparse weights")
    if idx.dtype.name not in ("int32", "int64"):
        raise TypeError(f"embedding_bag: input must be an int32 or int64 tensor, got "
                        f"{idx.dtype.name}")
    if max_norm is not None:  # torch renormalizes every row the input names, first
        _embedding_renorm_(weight, idx, max_norm, norm_type)
    if w.ndim != 2:
        raise ShapeError("embedding_bag", f"weight must be 2-D, got {list(w.shape)}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                      f"per_sample_weights is only supported for mode='sum' "
                                      f"(got mode={mode!r})")
        psw = as_tensor_arg(per_sample_weights)
        if psw.shape != idx.shape:
            raise ShapeError("embedding_bag", f"per_sample_weights {list(psw.shape)} must have "
                                              f"the input's shape {list(idx.shape)}")
    rows, dim = w.shape
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise ShapeError("embedding_bag", f"padding_idx {padding_idx} must be within the "
                                              f"{rows} embeddings")
        padding_idx %= rows
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: if input is 2D, then offsets has to be None, as "
                             "input is treated is a mini-batch of fixed length sequences.")
        bags, length = idx.shape
        bag_idx, valid = idx, None
        bag_psw = psw if per_sample_weights is not None else None
    elif idx.ndim == 1:
        if offsets is None:
            raise ValueError("embedding_bag: offsets has to be a 1D Tensor but got None")
        starts = np.asarray(_indexing._host(as_tensor_arg(offsets))).astype(np.int64)
        if starts.ndim != 1:
            raise ValueError(f"embedding_bag: offsets has to be a 1D Tensor, got shape "
                             f"{list(starts.shape)}")
        total = idx.shape[0]
        if include_last_offset:
            if starts.size < 1 or starts[-1] != total:  # torch's kernels disagree otherwise
                raise ValueError(f"embedding_bag: with include_last_offset=True the last offset "
                                 f"must be the input's length {total}, got offsets "
                                 f"{starts.tolist()}")
            starts, ends = starts[:-1], starts[1:]
        else:
            ends = np.append(starts[1:], total)
        if starts.size and (starts[0] != 0 or np.any(np.diff(starts) < 0)
                            or starts[-1] > total):
            raise ValueError(f"embedding_bag: offsets must start at 0 and not decrease nor "
                             f"exceed the input's length {total}, got {starts.tolist()}")
        ends = np.minimum(ends, total)
        bags = starts.size
        length = builtins.max(int((ends - starts).max(initial=0)), 1)
        at = starts[:, None] + np.arange(length)[None, :]
        inside = at < ends[:, None]
        at = np.where(inside, at, 0)
        if total == 0:  # nothing to read: every bag is empty
            return _ops.broadcast_to(_ops._cast(0, w.dtype), (bags, dim))
        bag_idx = _indexing.take(idx, at)
        valid = from_numpy(inside)
        bag_psw = (_indexing.take(psw, at) if per_sample_weights is not None else None)
    else:
        raise ValueError(f"embedding_bag: input has to be 1D or 2D Tensor, but got Tensor of "
                         f"dimension {idx.ndim}")
    # (bags, length, dim); sparse: the rows read recorded (filler positions of 1-D
    # input read idx[0], a row of the input anyway)
    vectors = (_sparse_grad.lookup(bag_idx, w, padding_idx, False, True) if sparse
               else _indexing.embedding(bag_idx, w))
    if padding_idx is not None:
        keep = _ops.ne(bag_idx, padding_idx)
        valid = keep if valid is None else _ops.logical_and(valid, keep)
    if bag_psw is not None:
        vectors = vectors * _ops.unsqueeze(_ops._cast(bag_psw, w.dtype), -1)
    zero = _ops._cast(0, w.dtype)
    if valid is None:
        count = float(length)
        kept = vectors
    else:
        mask = _ops.unsqueeze(valid, -1)
        count = sum(_ops.convert(valid, w.dtype), -1, keepdim=True)
        kept = where(mask, vectors, zero)
    if mode == "sum":
        return sum(kept, 1)
    if mode == "mean":
        total_ = sum(kept, 1)
        return total_ / (count if valid is None else maximum(count, 1.0))
    if valid is None:
        return _ops.max(vectors, 1).values
    best = _ops.max(where(mask, vectors, -math.inf), 1).values
    return where(count > 0.0, best, zero)


def _adaptive_max_pool2d_with_indices(x: Tensor, ho: int, wo: int) -> tuple[Tensor, Tensor]:
    return _adaptive_max_with_indices(x, (ho, wo))


def _adaptive_max_with_indices(x: Tensor, out: Sequence[int]) -> tuple[Tensor, Tensor]:
    """adaptive max pooling over the last len(out) dims: the values and torch's
    flat per-plane indices of the maxima (the first maximum of each region;
    the last NaN, as torch's loop). The value is read at the chosen element,
    so the whole gradient goes there, as torch's."""
    nsp = len(out)
    spatial = x.shape[x.ndim - nsp:]
    bounds = [_adaptive_bounds(n, o) for n, o in zip(spatial, out)]
    values, indices = [], []
    for region_bounds in itertools.product(*bounds):
        region = x
        for i, (lo, hi) in enumerate(region_bounds):
            region = _slice_dim(region, x.ndim - nsp + i, lo, hi)
        sizes = [hi - lo for lo, hi in region_bounds]
        flat = reshape(region, (*region.shape[:x.ndim - nsp], math.prod(sizes)))
        grids = np.meshgrid(*[np.arange(lo, hi) for lo, hi in region_bounds], indexing="ij")
        where_in = np.ravel_multi_index(tuple(g.reshape(-1) for g in grids), spatial)
        where_in = where_in.astype(np.int64)
        local = _ops.argmax(flat, -1, keepdim=True)
        if x.dtype.is_floating_point:
            order = from_numpy(np.arange(flat.shape[-1], dtype=np.int64))
            last_nan = amax(where(_ops.isnan(flat), order, -1), -1, keepdim=True)
            local = where(last_nan >= 0, last_nan, local)
        values.append(_indexing.gather(flat, -1, local))
        indices.append(_indexing.take(from_numpy(where_in), local))
    lead = x.shape[:x.ndim - nsp]
    return (reshape(cat(values, -1), (*lead, *out)), reshape(cat(indices, -1), (*lead, *out)))


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    x = as_tensor_arg(input)
    return _adaptive_means(x, _adaptive_sizes("adaptive_avg_pool3d", x, output_size, 3))


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    x = as_tensor_arg(input)
    sizes = _adaptive_sizes("adaptive_max_pool3d", x, output_size, 3)
    values, indices = _adaptive_max_with_indices(x, sizes)
    return (values, indices) if return_indices else values


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    return _max_unpoolnd("max_unpool3d", 3, input, indices, kernel_size, stride, padding,
                         output_size)


# a log-probability standing for log(0) in the CTC recursion: finite, so that
# the gradients of impossible paths are exact zeros (exp(-1e30 - m) is 0)
# where -inf would give 0 * inf = NaN
_LOG_ZERO = -1e30


def _log_add(*terms: Tensor) -> Tensor:
    top = terms[0]
    for t in terms[1:]:
        top = maximum(top, t)
    top = detach(top)
    total = exp(terms[0] - top)
    for t in terms[1:]:
        total = total + exp(t - top)
    return top + log(total)


def _ctc_batch(lp: Tensor, seqs: list[np.ndarray], in_len: np.ndarray, blank: int
               ) -> Tensor:
    """-log p(target | emissions) of every sequence by one forward (alpha)
    recursion over the blank-extended targets, all sequences at once (padded
    to the longest; a sequence's alpha stops changing after its length)."""
    batch = len(seqs)
    width = 2 * builtins.max((q.size for q in seqs), default=0) + 1
    ext = np.full((batch, width), blank, np.int64)
    skip = np.zeros((batch, width), bool)  # s-2 -> s: a label unlike the one two back
    for i, q in enumerate(seqs):
        ext[i, 1:2 * q.size:2] = q
        lab = np.where(np.arange(width) % 2 == 1, ext[i], -1)
        skip[i, 2:] = (lab[2:] >= 0) & (lab[2:] != lab[:-2])
    steps = builtins.max(int(in_len.max(initial=1)), 1)
    index = np.ascontiguousarray(np.broadcast_to(ext, (steps, batch, width)))
    emit = _indexing.gather(lp[:steps], 2, index)  # (T, N, W)
    start = np.full((batch, width), _LOG_ZERO)
    start[:, :2] = 0.0
    pad = _const_like(np.full((batch, 2), _LOG_ZERO), lp)
    blocked = _const_like(np.where(skip, 0.0, _LOG_ZERO), lp)
    alpha = _const_like(start, lp) + emit[0]
    for t in range(1, steps):
        shifted = cat([pad, alpha], 1)
        step = _log_add(alpha, shifted[:, 1:width + 1], shifted[:, :width] + blocked) + emit[t]
        active = in_len > t
        alpha = step if active.all() else where(from_numpy(active[:, None]), step, alpha)
    last = np.array([2 * q.size for q in seqs], np.int64)[:, None]
    both = _indexing.gather(alpha, 1, from_numpy(np.concatenate([last, np.maximum(last - 1, 0)],
                                                                1)))
    second = where(from_numpy(last > 0), both[:, 1:], _ops._cast(_LOG_ZERO, lp.dtype))
    return -_log_add(both[:, 0], second[:, 0])


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The connectionist temporal classification loss (torch's): one alpha
    recursion per sequence (the lengths and targets are evaluated: they shape
    the recursion), differentiated by autodiff. An impossible alignment costs
    inf (0 with ``zero_infinity``, its gradient then 0)."""
    lp = as_tensor_arg(log_probs)
    if not lp.dtype.is_floating_point or lp.ndim not in (2, 3):
        raise ShapeError("ctc_loss", f"expected float log_probs (T, N, C) or (T, C), got "
                                     f"{lp.dtype.name}{list(lp.shape)}")
    unbatched = lp.ndim == 2
    if unbatched:
        lp = lp.unsqueeze(1)
    steps, batch, classes = lp.shape
    if not 0 <= blank < classes:
        raise ValueError(f"ctc_loss: blank must be in label range, got {blank} for {classes} "
                         f"classes")

    def host(v: Any, what: str) -> np.ndarray:
        a = np.asarray(_indexing._host(v) if isinstance(v, Tensor) else v)
        if a.dtype.kind not in "iu":
            raise TypeError(f"ctc_loss: {what} must be integers, got {a.dtype}")
        return a.astype(np.int64).reshape(-1)
    in_len, tg_len = host(input_lengths, "input_lengths"), host(target_lengths, "target_lengths")
    tg = np.asarray(_indexing._host(as_tensor_arg(targets)))
    if tg.dtype.kind not in "iu":
        raise TypeError(f"ctc_loss: targets must be integers, got {tg.dtype}")
    if in_len.size != batch or tg_len.size != batch:
        raise ShapeError("ctc_loss", f"expected {batch} input_lengths and target_lengths, got "
                                     f"{in_len.size} and {tg_len.size}")
    if np.any(in_len > steps) or np.any(in_len < 0) or np.any(tg_len < 0):
        raise ValueError(f"ctc_loss: input_lengths {in_len.tolist()} must be within the "
                         f"{steps} time steps and target_lengths non-negative")
    if unbatched or tg.ndim == 1:
        tg = tg.reshape(-1)
        if tg.size < tg_len.sum():
            raise ShapeError("ctc_loss", f"targets of {tg.size} labels are fewer than "
                                         f"target_lengths sum to ({int(tg_len.sum())})")
        starts = np.concatenate([[0], np.cumsum(tg_len)[:-1]])
        seqs = [tg[a:a + n] for a, n in zip(starts, tg_len)]
    else:
        if np.any(tg_len > tg.shape[1]):
            raise ShapeError("ctc_loss", f"target_lengths {tg_len.tolist()} exceed the "
                                         f"targets' length {tg.shape[1]}")
        seqs = [tg[i, :n] for i, n in enumerate(tg_len)]
    for seq in seqs:
        if np.any((seq < 0) | (seq >= classes) | (seq == blank)):
            raise ValueError(f"ctc_loss: targets {seq.tolist()} must be classes other than the "
                             f"blank {blank}, below {classes}")
    loss = _ctc_batch(lp, seqs, in_len, blank)
    if np.any(in_len == 0):  # no frames: only an empty target is possible
        empty = np.array([0.0 if q.size == 0 else -_LOG_ZERO for q in seqs])
        loss = where(from_numpy(in_len == 0), _const_like(empty, loss), loss)
    impossible = loss >= -_LOG_ZERO / 2
    loss = where(impossible, detach(loss) * 0.0 + (0.0 if zero_infinity else math.inf), loss)
    if unbatched:
        loss = loss[0]
    if reduction == "mean":
        return mean(loss / _const_like(np.maximum(tg_len, 1).astype(np.float64), loss)
                    .reshape(loss.shape))
    return _reduce(loss, reduction)


__all__ += ["fold", "grid_sample", "embedding_bag", "adaptive_avg_pool3d", "adaptive_max_pool3d",
            "max_unpool3d", "ctc_loss"]

# ---- torch.autocast's CPU op lists (``ops.autocast_policy``), measured against torch 2.13 ----
# Rebinding the module's names after the definitions: the composites above and
# every importer (``nn.Linear`` calls ``F.linear``) see the policy.
linear = autocast_policy("lower")(linear)
conv1d = autocast_policy("lower")(conv1d)
conv2d = autocast_policy("lower")(conv2d)
conv3d = autocast_policy("lower")(conv3d)
conv_transpose1d = autocast_policy("lower")(conv_transpose1d)
conv_transpose2d = autocast_policy("lower")(conv_transpose2d)
prelu = autocast_policy("lower")(prelu)
scaled_dot_product_attention = autocast_policy("lower")(scaled_dot_product_attention)
bilinear = autocast_policy("none")(bilinear)  # torch keeps the input dtype (einsum inside)
mse_loss = autocast_policy("fp32")(mse_loss)
l1_loss = autocast_policy("fp32")(l1_loss)
smooth_l1_loss = autocast_policy("fp32")(smooth_l1_loss)
huber_loss = autocast_policy("fp32")(huber_loss)
nll_loss = autocast_policy("fp32")(nll_loss)
cross_entropy = autocast_policy("fp32")(cross_entropy)
binary_cross_entropy = autocast_policy("fp32")(binary_cross_entropy)
binary_cross_entropy_with_logits = autocast_policy("fp32")(binary_cross_entropy_with_logits)
kl_div = autocast_policy("fp32")(kl_div)
margin_ranking_loss = autocast_policy("fp32")(margin_ranking_loss)
hinge_embedding_loss = autocast_policy("fp32")(hinge_embedding_loss)
soft_margin_loss = autocast_policy("fp32")(soft_margin_loss)
multilabel_soft_margin_loss = autocast_policy("fp32")(multilabel_soft_margin_loss)
cosine_embedding_loss = autocast_policy("fp32")(cosine_embedding_loss)
triplet_margin_loss = autocast_policy("fp32")(triplet_margin_loss)
poisson_nll_loss = autocast_policy("fp32")(poisson_nll_loss)
gaussian_nll_loss = autocast_policy("fp32")(gaussian_nll_loss)
multi_margin_loss = autocast_policy("fp32")(multi_margin_loss)
multilabel_margin_loss = autocast_policy("fp32")(multilabel_margin_loss)
max_pool3d = autocast_policy("fp32")(max_pool3d)
avg_pool3d = autocast_policy("fp32")(avg_pool3d)
max_unpool2d = autocast_policy("fp32")(max_unpool2d)
local_response_norm = autocast_policy("fp32")(local_response_norm)  # avg_pool3d in torch's
max_unpool3d = autocast_policy("fp32")(max_unpool3d)
adaptive_avg_pool3d = autocast_policy("fp32")(adaptive_avg_pool3d)
adaptive_max_pool3d = autocast_policy("fp32")(adaptive_max_pool3d)
grid_sample = autocast_policy("fp32")(grid_sample)
ctc_loss = autocast_policy("fp32")(ctc_loss)
interpolate = autocast_policy("none")(interpolate)  # matmuls inside: torch keeps the dtype
_pad_any = pad
_pad_fp32 = autocast_policy("fp32")(pad)


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",  # noqa: A002, F811
        value: float | None = None) -> Tensor:
    """``F.pad``; the reflect and replicate modes run in float32 under autocast."""
    which = _pad_fp32 if mode in ("reflect", "replicate") else _pad_any
    return which(input, pad, mode, value)


# ---- session 11 (issue 14): functional names pf lacked ----

def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    return _conv_transposend("conv_transpose3d", 3, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


conv_transpose3d = autocast_policy("lower")(conv_transpose3d)

# SELU's negative saturation value, -scale * alpha (torch's alpha dropout constant)
_ALPHA_PRIME = 1.7580993408473766


def _alpha_dropout(op: str, input: Tensor, p: float, training: bool, inplace: bool,
                   mask_shape: tuple[int, ...]) -> Tensor:
    """torch's alpha dropout: dropped elements become SELU's saturation value
    -alpha', then ``a * x + b`` restores zero mean and unit variance:
    ``a = ((1 - p) (1 + p alpha'^2))^-1/2``, ``b = a alpha' p``. p = 1 gives zeros."""
    _check_p(p)
    if not training or p == 0:
        return input
    if p == 1:
        out = input * _ops._cast(0, input.dtype)
    else:
        keep = (rand(mask_shape, dtype=float64).numpy() >= p).astype(np.float64)
        a = 1.0 / math.sqrt((_ALPHA_PRIME ** 2 * p + 1) * (1 - p))
        noise = _const_like(keep * a, input)
        shift = _const_like((keep - 1) * _ALPHA_PRIME * a + _ALPHA_PRIME * a * p, input)
        out = input * noise + shift
    return input.copy_(out) if inplace else out


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    return _alpha_dropout("alpha_dropout", input, p, training, inplace, input.shape)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels: one draw per (batch, channel)."""
    if input.ndim < 2:
        raise ShapeError("feature_alpha_dropout", f"expects an input with at least 2 dims "
                                                  f"(N, C, ...), got {list(input.shape)}")
    return _alpha_dropout("feature_alpha_dropout", input, p, training, inplace,
                          input.shape[:2] + (1,) * (input.ndim - 2))


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    del return_indices  # torch's *_with_indices return both whatever it says
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    del return_indices
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    del return_indices
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    del return_indices
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    del return_indices
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    del return_indices
    return adaptive_max_pool3d(input, output_size, True)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool("lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode)


__all__ += ["conv_transpose3d", "alpha_dropout", "feature_alpha_dropout",
            "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
            "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
            "adaptive_max_pool3d_with_indices", "lp_pool3d"]


def _canonical_mask(mask: Tensor | None, like: Tensor) -> Tensor | None:
    """A bool mask (True: not attended) as an additive float one (-inf there)."""
    if mask is None:
        return None
    m = as_tensor_arg(mask)
    if m.dtype is bool_:
        return where(m, _ops._cast(-math.inf, like.dtype), _ops._cast(0.0, like.dtype))
    if not m.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of masks are supported, got "
                             f"{m.dtype.name}")
    return m


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False, _native: bool = False) -> tuple[Tensor, Tensor | None]:
    """torch's ``F.multi_head_attention_forward`` on (L, N, E) inputs (or
    unbatched (L, E)): the packed or separate input projections, ``bias_k``/
    ``bias_v`` and ``add_zero_attn`` (one more key), static keys/values, bool
    or additive masks (True: not attended), dropout on the weights, and the
    output projection; the weights averaged over heads unless asked not to.
    A query whose keys are all masked gets zero weights without
    ``need_weights`` (torch computes that with scaled_dot_product_attention)
    and NaN with it or with ``_native`` (``MultiheadAttention`` passes it where
    torch's module takes ``_native_multi_head_attention``)."""
    batched = query.ndim == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, "
                             f"but got {embed_dim}")
    if embed_dim % num_heads:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    head_dim = embed_dim // num_heads
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    key_padding_mask = _canonical_mask(key_padding_mask, query)
    attn_mask = _canonical_mask(attn_mask, query)
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.chunk(3)
    if use_separate_proj_weight:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, "
                                 "k_proj_weight or v_proj_weight is None")
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w_q, w_k, w_v = in_proj_weight.chunk(3)
    q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, key.shape[0]):
                raise RuntimeError(f"The shape of the 2D attn_mask is {list(attn_mask.shape)}, "
                                   f"but should be {[tgt_len, key.shape[0]]}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, key.shape[0]):
                raise RuntimeError(f"The shape of the 3D attn_mask is {list(attn_mask.shape)}, "
                                   f"but should be {[bsz * num_heads, tgt_len, key.shape[0]]}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key or value.")
        k = cat([k, bias_k.reshape(1, 1, embed_dim).expand(1, bsz, embed_dim)], 0)
        v = cat([v, bias_v.reshape(1, 1, embed_dim).expand(1, bsz, embed_dim)], 0)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given or both be None")
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
         if static_k is None else static_k)
    v = (v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
         if static_v is None else static_v)
    if add_zero_attn:
        zero = _ops._cast(0.0, k.dtype).expand(bsz * num_heads, 1, head_dim)
        k, v = cat([k, zero], 1), cat([v, zero], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but "
                                 f"got {tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    scores = matmul(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
    dead = None
    if attn_mask is not None:
        # torch: need_weights=False is scaled_dot_product_attention (a fully masked
        # row gives 0s), need_weights=True an explicit softmax (NaN there)
        if not (need_weights or _native):
            attn_mask, dead = _live_mask(attn_mask)
        scores = scores + attn_mask
    weights = softmax(scores, -1)
    if training and dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    heads = matmul(weights, v)
    if dead is not None:
        heads = where(dead, _ops._cast(0.0, heads.dtype), heads)
    out = heads.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    avg = None
    if need_weights:
        avg = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            avg = avg.mean(1)
        if not batched:
            avg = avg.squeeze(0)
    if not batched:
        out = out.squeeze(1)
    return out, avg


__all__ += ["multi_head_attention_forward"]


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """torch's ``F.linear_cross_entropy``: ``cross_entropy(linear(input, W), target)``
    with ``W`` of shape (C, *out_features, in_features) (a K-dimensional loss
    for out_features). torch's ``options`` only chunk the computation to save
    memory; the value is the same, so they are accepted and not needed here."""
    del options
    x, w = as_tensor_arg(input), as_tensor_arg(linear_weight)
    if x.ndim not in (1, 2):
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {x.ndim}")
    if w.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{w.ndim}")
    if x.shape[-1] != w.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {x.shape[-1]} and {w.shape[-1]}, respectively")
    classes, out_features = w.shape[0], tuple(w.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and x.ndim == 1:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(w.shape)} requires batched input, (N, {x.shape[-1]}), got "
                           f"unbatched input with shape {tuple(x.shape)}")
    flat_bias = None if linear_bias is None else reshape(linear_bias, (-1,))
    logits = linear(x, reshape(w, (-1, w.shape[-1])), flat_bias)
    logits = reshape(logits, (*x.shape[:-1], classes, *out_features))
    probabilities = tuple(target.shape) == tuple(logits.shape)
    if probabilities and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    return cross_entropy(logits, target, weight, ignore_index=-100 if ignore_index is None
                         else ignore_index, reduction=reduction,
                         label_smoothing=label_smoothing)


__all__ += ["linear_cross_entropy"]


def _fractional_intervals(sample: np.ndarray, n_in: int, n_out: int, k: int) -> np.ndarray:
    """torch's ``generate_intervals``: the window starts of fractional max
    pooling from one uniform sample per plane, in the sample's dtype."""
    dt = sample.dtype.type
    seq = np.empty(sample.shape + (n_out,), dtype=np.int64)
    if n_out > 1:
        alpha = dt(n_in - k) / dt(n_out - 1)
        i = np.arange(n_out - 1).astype(sample.dtype)
        seq[..., :-1] = ((i + sample[..., None]) * alpha).astype(np.int64) - \
            (sample * alpha).astype(np.int64)[..., None]
    seq[..., -1] = n_in - k
    return seq


def _fractional_max_pool(op: str, nsp: int, input: Tensor, kernel_size: Any,
                         output_size: Any, output_ratio: Any, return_indices: bool,
                         _random_samples: Tensor | None) -> Any:
    x = as_tensor_arg(input)
    if x.ndim not in (nsp + 1, nsp + 2):
        raise ShapeError(op, f"expects a {nsp + 1}-D or {nsp + 2}-D input, got {list(x.shape)}")
    unbatched = x.ndim == nsp + 1
    if unbatched:
        x = x.unsqueeze(0)
    k = _pair(kernel_size, nsp, "kernel_size", op)
    spatial = x.shape[2:]
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{op} requires specifying either an output_size or an "
                             "output_ratio")
        ratio = (output_ratio,) * nsp if isinstance(output_ratio, float | int) else \
            tuple(output_ratio)
        out = tuple(int(n * r) for n, r in zip(spatial, ratio))
    else:
        out = _pair(output_size, nsp, "output_size", op)
    for n_in, n_out, kk in zip(spatial, out, k):
        if n_out + kk - 1 > n_in:
            raise RuntimeError(f"{op}(): pool size {kk} and output size {n_out} are too "
                               f"large for input size {n_in}")
    n, c = x.shape[:2]
    if _random_samples is None:
        samples = rand(n, c, nsp, dtype=x.dtype).numpy()
    else:
        samples = np.asarray(as_tensor_arg(_random_samples).numpy())
        if samples.shape != (n, c, nsp):
            raise RuntimeError(f"{op}(): expected _random_samples of shape {[n, c, nsp]}, got "
                               f"{list(samples.shape)}")
    # torch's planes: sample 0 is the last (width) dim, then height (and depth for 3-d)
    order = list(range(nsp))[::-1] if nsp == 2 else list(range(nsp))
    starts = [_fractional_intervals(samples[..., order[d]], spatial[d], out[d], k[d])
              for d in range(nsp)]
    strides = np.cumprod((1, *spatial[::-1]))[:-1][::-1]  # row-major strides of the plane
    pos = np.zeros((n, c) + tuple(out) + tuple(k), dtype=np.int64)
    for d in range(nsp):
        s = starts[d].reshape((n, c) + tuple(out[d] if e == d else 1 for e in range(nsp))
                              + (1,) * nsp)
        off = np.arange(k[d]).reshape((1, 1) + (1,) * nsp
                                      + tuple(k[d] if e == d else 1 for e in range(nsp)))
        pos = pos + (s + off) * int(strides[d])
    cells = int(np.prod(out))
    pos = pos.reshape(n, c, cells, -1)
    flat = reshape(x, (n, c, -1))
    windows = _indexing.gather(flat.unsqueeze(2).expand(n, c, cells, flat.shape[-1]), 3,
                               from_numpy(pos))
    best = _ops.argmax(windows, 3, keepdim=True)
    values = _indexing.take_along_dim(windows, best, 3).squeeze(3).reshape(n, c, *out)
    indices = _indexing.take_along_dim(from_numpy(pos), best, 3).squeeze(3).reshape(
        n, c, *out)
    if unbatched:
        values, indices = values[0], indices[0]
    return (values, indices) if return_indices else values


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """torch's fractional max pooling (Graham 2014): pseudo-random window
    starts per plane from ``_random_samples`` (drawn from pf's generator when
    not given); the gradient goes to each window's maximum."""
    return _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    return _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any,
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> Any:
    del return_indices
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any,
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> Any:
    del return_indices
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)


__all__ += ["fractional_max_pool2d", "fractional_max_pool3d",
            "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]


native_channel_shuffle = channel_shuffle  # torch's name for the same shuffle
__all__ += ["native_channel_shuffle"]
