"""More of torch's top-level names (session 11's scan of ``torch.*``): the
memory-format and layout constants (pf tensors have no strides: a format
changes no value, so ``x.contiguous(memory_format=pf.channels_last)`` is
``x``), the top-level spellings of losses and recurrent cells with torch's
argument orders and integer reductions (``torch.kl_div(x, y, 1)``), the
``native_*`` ops with their extra outputs, the in-place dropouts,
``torch.cond``/``torch.while_loop`` over ``pf.lax``, and the functions torch
removed (``torch.solve``, ``torch.eig``...), which raise torch's message.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import autograd, lax, linalg, special
from .amp import get_autocast_dtype
from .autodiff import no_grad
from .core import Tensor, detach, geometry, outside_pyflame, share
from .creation import _draws, empty, zeros
from .creation import tensor as _tensor
from .dialects.dtypes import dtype as to_dtype
from .inplace import _in_place
from .nn import functional as F  # noqa: N812  (torch's spelling)
from .nn.module import set_data
from .nn.rnn import _linear, _step
from .ops import as_tensor_arg, rsqrt
from .reductions import var_mean

__all__ = [
    "memory_format", "contiguous_format", "channels_last", "channels_last_3d",
    "preserve_format", "layout", "strided", "binary_cross_entropy_with_logits", "kl_div",
    "margin_ranking_loss", "cosine_embedding_loss", "hinge_embedding_loss", "poisson_nll_loss",
    "triplet_margin_loss", "ctc_loss", "constant_pad_nd", "convolution", "lstm_cell",
    "gru_cell", "rnn_tanh_cell", "rnn_relu_cell", "native_layer_norm", "native_batch_norm",
    "native_dropout", "dropout_", "alpha_dropout_", "feature_dropout_",
    "feature_alpha_dropout_", "empty_strided", "empty_permuted", "cond", "while_loop",
    "solve", "lstsq", "eig", "symeig", "matrix_rank", "get_autocast_cpu_dtype",
]


# ---- memory formats and layouts (no strides here: they change no value) ----

class memory_format:  # noqa: N801  (torch's name)
    """``torch.memory_format``: accepted by ``contiguous``/``to``/``clone``/
    ``empty``...; pf's tensors have no strides, so every format gives the same
    values (as torch's do)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


class layout:  # noqa: N801  (torch's name)
    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"


strided = layout("strided")


# ---- losses under their top-level names (torch's int reductions) ----
# (aten's schemas say reduction=1, but torch 2.13's Python bindings of these give the
# unreduced loss when it is left out, measured: pf follows what scripts get)

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(r: Any) -> str:
    if isinstance(r, str):
        return r
    if r not in _REDUCTIONS:
        raise ValueError(f"{r} is not a valid value for reduction (0: none, 1: mean, 2: sum)")
    return _REDUCTIONS[r]


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,  # noqa: A002
                                     weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None, reduction: Any = 0
                                     ) -> Tensor:
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(
        reduction), pos_weight=pos_weight)


def kl_div(input: Tensor, target: Tensor, reduction: Any = 0,  # noqa: A002
           log_target: bool = False) -> Tensor:
    """``torch.kl_div``: elementwise mean for reduction 1, as torch's (not batchmean)."""
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: Any = 0) -> Tensor:
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: Any = 0) -> Tensor:
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,  # noqa: A002
                         reduction: Any = 0) -> Tensor:
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool,  # noqa: A002
                     eps: float, reduction: Any) -> Tensor:
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, reduction: Any = 0) -> Tensor:
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: Any = 0, zero_infinity: bool = False) -> Tensor:
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction), zero_infinity)


# ---- convolution, padding, cells ----

def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:  # noqa: A002
    return F.pad(input, list(pad), mode="constant", value=value)


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,  # noqa: A002
                padding: Any, dilation: Any, transposed: bool, output_padding: Any,
                groups: int) -> Tensor:
    """``torch.convolution``: convNd or conv_transposeNd by the weight's rank."""
    nsp = weight.ndim - 2
    if nsp not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-D, 4-D or 5-D weight, got "
                           f"{list(weight.shape)}")
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nsp - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    if any(v != 0 for v in (output_padding if isinstance(output_padding, Sequence)
                            else [output_padding])):
        raise RuntimeError("convolution: output_padding is only used by transposed "
                           "convolutions")
    fn = (F.conv1d, F.conv2d, F.conv3d)[nsp - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor,  # noqa: A002
              b_ih: Tensor | None = None, b_hh: Tensor | None = None
              ) -> tuple[Tensor, Tensor]:
    if len(hx) != 2:
        raise RuntimeError(f"lstm_cell: expected hx to be (h, c), got {len(hx)} tensors")
    h, c = _step("LSTM", _linear(input, w_ih, b_ih), hx[0], hx[1], w_hh, b_hh)
    return h, c


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
             b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    return _step("GRU", _linear(input, w_ih, b_ih), hx, None, w_hh, b_hh)[0]


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    return _step("RNN_TANH", _linear(input, w_ih, b_ih), hx, None, w_hh, b_hh)[0]


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    return _step("RNN_RELU", _linear(input, w_ih, b_ih), hx, None, w_hh, b_hh)[0]


# ---- native_* (the statistics as extra outputs) ----

def native_layer_norm(input: Tensor, normalized_shape: Sequence[int],  # noqa: A002
                      weight: Tensor | None, bias: Tensor | None, eps: float
                      ) -> tuple[Tensor, Tensor, Tensor]:
    """(out, mean, rstd), the statistics over the normalized dims kept as 1s."""
    k = len(normalized_shape)
    dims = tuple(range(input.ndim - k, input.ndim))
    v, m = var_mean(input, dims, correction=0, keepdim=True)
    return (F.layer_norm(input, normalized_shape, weight, bias, eps), m, rsqrt(v + eps))


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                      running_mean: Tensor | None, running_var: Tensor | None,
                      training: bool, momentum: float, eps: float
                      ) -> tuple[Tensor, Tensor, Tensor]:
    """(out, save_mean, save_invstd): the batch's statistics in training,
    empty tensors in eval (torch's CPU kernel)."""
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        return out, empty(0, dtype=input.dtype), empty(0, dtype=input.dtype)
    dims = (0, *range(2, input.ndim))
    v, m = var_mean(input, dims, correction=0)
    return out, m, rsqrt(v + eps)


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """(out, mask): the kept elements (bool) and the scaled output."""
    if not train:
        return input, as_tensor_arg(True).expand(*input.shape) if input.ndim else \
            as_tensor_arg(True)
    F._check_p(p)
    mask = F._dropout_mask(input, p, input.shape)
    keep = mask != 0
    return input * mask, keep


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    if input.ndim < 2:
        raise RuntimeError(f"feature_dropout_: expects an input with at least 2 dims, got "
                           f"{list(input.shape)}")
    return F._dropout(input, p, train, True, input.shape[:2] + (1,) * (input.ndim - 2))


# ---- creation with strides (there are none: the values are what matters) ----

def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None,
                  layout: Any = None, device: Any = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    del layout, device, pin_memory
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape ({len(stride)} strides "
                           f"for {len(size)} sizes)")
    t = empty(*size, dtype=dtype)
    return t.requires_grad_(True) if requires_grad else t


def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: Any = None,
                   layout: Any = None, device: Any = None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    del layout, device, pin_memory
    if sorted(physical_layout) != list(range(len(size))):
        raise RuntimeError(f"empty_permuted: physical_layout {list(physical_layout)} is not a "
                           f"permutation of the {len(size)} dims")
    t = empty(*size, dtype=dtype)
    return t.requires_grad_(True) if requires_grad else t


# ---- control flow ----

def cond(pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
         operands: Sequence[Any] = ()) -> Any:
    """``torch.cond(pred, true_fn, false_fn, operands)``: ``pf.lax.cond`` with
    the operands as a tuple (both branches must give the same shapes)."""
    if isinstance(pred, Tensor) and pred.numel() != 1:
        raise RuntimeError(f"cond: expected pred to be bool or single-element tensor, but got "
                           f"a tensor of shape {list(pred.shape)}")
    return lax.cond(pred, true_fn, false_fn, *tuple(operands))


def while_loop(cond_fn: Callable[..., Any], body_fn: Callable[..., Any],
               carried_inputs: Sequence[Any]) -> Any:
    """``torch.while_loop``: the carry is a tuple unpacked into both functions."""
    carried = tuple(carried_inputs)
    out = lax.python_while_loop(lambda c: cond_fn(*c), lambda c: tuple(body_fn(*c)), carried)
    return tuple(out)


# ---- functions torch removed: its message ----

def _removed(name: str, replacement: str) -> Callable[..., Any]:
    def fn(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"This function was deprecated since version 1.9 and is now "
                           f"removed. {replacement}")
    fn.__name__ = name
    return fn


solve = _removed("solve", "torch.linalg.solve has its arguments reversed and does not return "
                          "the LU factorization. To get the LU factorization see torch.lu, which "
                          "can be used with torch.lu_solve or torch.lu_unpack.")
lstsq = _removed("lstsq", "torch.linalg.lstsq has reversed arguments and does not return the "
                          "QR decomposition in the returned tuple.")
eig = _removed("eig", "torch.linalg.eig returns complex tensors of dtype cfloat or cdouble "
                      "rather than real tensors mimicking complex tensors (and pf has no "
                      "complex dtype).")
symeig = _removed("symeig", "Use torch.linalg.eigh (pf.linalg.eigh) instead.")
matrix_rank = _removed("matrix_rank", "torch.linalg.matrix_rank is its replacement.")


def get_autocast_cpu_dtype() -> Any:
    return get_autocast_dtype("cpu")


_TENSOR_REMOVED = {"solve": solve, "lstsq": lstsq, "eig": eig, "symeig": symeig}
for _name, _fn in _TENSOR_REMOVED.items():
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _fn)


# ---- Tensor members torch has and pf lacked ----

def _new(self: Tensor, *args: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``x.new(...)`` (torch's legacy constructor): ``new()`` an empty tensor,
    ``new(2, 3)`` one of that shape (zeros: torch's is uninitialized),
    ``new(data)`` a tensor of ``data``; ``x``'s dtype unless given."""
    del device
    dt = self.dtype if dtype is None else dtype
    if not args:
        return empty(0, dtype=dt)
    if all(isinstance(a, int | np.integer) for a in args):
        return zeros(*(int(a) for a in args), dtype=dt)
    if len(args) == 1 and isinstance(args[0], tuple | list) and args[0] and \
            all(isinstance(a, int | np.integer) for a in args[0]) and _is_size(args[0]):
        return zeros(*(int(a) for a in args[0]), dtype=dt)
    if len(args) != 1:
        raise TypeError(f"new(): expected sizes or one data argument, got {args!r}")
    return _tensor(args[0] if not isinstance(args[0], Tensor) else args[0].numpy(), dtype=dt)


def _is_size(v: Any) -> bool:
    """torch.Size (a tuple subclass) means a shape; a plain list means data."""
    return type(v).__name__ == "Size"


def _resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """``x.resize_(*sizes)``: ``x`` (the same object) takes the shape; its
    elements in row-major order are kept, new ones are zeros (torch leaves
    them uninitialized). Not for tensors that require grad (torch's rule)."""
    del memory_format
    shape = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if any(int(n) < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
    flat = np.asarray(detach(self).numpy()).reshape(-1)
    n = int(np.prod(shape, dtype=np.int64))
    values = np.zeros(n, dtype=flat.dtype)
    values[:min(n, flat.size)] = flat[:n]
    set_data(self, _tensor(values.reshape(shape), dtype=self.dtype))
    return self


def _resize_as_(self: Tensor, other: Tensor, memory_format: Any = None) -> Tensor:
    return _resize_(self, other.shape)


def _host_elementwise(self: Tensor, values: np.ndarray, what: str) -> Tensor:
    with no_grad():
        self.copy_(_tensor(values.astype(self.dtype.np), dtype=self.dtype))
    return self


def _apply_(self: Tensor, callable: Callable[[Any], Any]) -> Tensor:  # noqa: A002
    """``x.apply_(fn)``: ``fn`` (a Python function of a number) on every element,
    in place (torch's CPU-only, autograd-free helper)."""
    if self.requires_grad:
        raise RuntimeError("apply_: can't call apply_() on Variable that requires grad. Use "
                           "var.detach().apply_() instead.")
    x = np.asarray(self.numpy())
    out = np.array([callable(v) for v in x.reshape(-1).tolist()]).reshape(x.shape)
    return _host_elementwise(self, out, "apply_")


def _map_(self: Tensor, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:  # noqa: A002
    """``x.map_(y, fn)``: ``fn(x_i, y_i)`` with ``y`` broadcast to ``x``, in place."""
    if self.requires_grad:
        raise RuntimeError("map_: can't call map_() on Variable that requires grad. Use "
                           "var.detach().map_() instead.")
    x = np.asarray(self.numpy())
    y = np.broadcast_to(np.asarray(as_tensor_arg(tensor).numpy()), x.shape)
    out = np.array([callable(a, b) for a, b in zip(x.reshape(-1).tolist(),
                                                    y.reshape(-1).tolist())]).reshape(x.shape)
    return _host_elementwise(self, out, "map_")


def _data_ptr(self: Tensor) -> int:
    """An address standing for the storage: equal for tensors sharing a
    storage at the same offset (views of one root), as torch's pointers are."""
    base = self
    while base._base is not None:
        base = base._base
    return id(base) * 64 + geometry(self)[2] * self.dtype.itemsize


def _no_device(name: str) -> Callable[..., Any]:
    def fn(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        raise RuntimeError(f"Tensor.{name}(): pf has no {name.upper()} device (the CPU only; "
                           "pf.set_backend chooses where graphs run)")
    fn.__name__ = name
    return fn


def _to_dense(self: Tensor, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
    """Dense already: the tensor itself (in ``dtype`` if given)."""
    del masked_grad
    return self if dtype is None else self.to(dtype)


def _dim_order(self: Tensor, *, ambiguity_check: bool = False) -> tuple[int, ...]:
    """Row-major: the dims in order (pf has no other layout)."""
    del ambiguity_check
    return tuple(range(self.ndim))


_TENSOR_MEMBERS: dict[str, Any] = {
    "new": _new, "resize_": _resize_, "resize_as_": _resize_as_, "apply_": _apply_,
    "map_": _map_, "data_ptr": _data_ptr, "const_data_ptr": _data_ptr,
    "share_memory_": lambda self: self, "is_shared": lambda self: False,
    "is_pinned": lambda self, device=None: False, "to_dense": _to_dense,
    "hardshrink": lambda self, lambd=0.5: F.hardshrink(self, lambd),
    "prelu": lambda self, weight: F.prelu(self, weight),
    "dim_order": _dim_order,
    "xpu": _no_device("xpu"), "ipu": _no_device("ipu"), "mtia": _no_device("mtia"),
}
_TENSOR_PROPERTIES: dict[str, Any] = {
    "layout": lambda self: strided, "output_nr": lambda self: 0,
    "is_mps": lambda self: False, "is_xpu": lambda self: False, "is_mkldnn": lambda self: False,
    "is_vulkan": lambda self: False, "is_ipu": lambda self: False, "is_xla": lambda self: False,
    "is_maia": lambda self: False, "is_mtia": lambda self: False, "name": lambda self: None,
}
for _name, _member in _TENSOR_MEMBERS.items():
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _member)
for _name, _member in _TENSOR_PROPERTIES.items():
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, property(_member))


# ---- session 11: more small top-level names ----

def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:  # noqa: A002
    """``torch.nonzero_static``: the indices of the nonzeros (row-major), cut
    or padded with ``fill_value`` to ``size`` rows (a fixed shape)."""
    if not isinstance(size, int) or size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
    x = as_tensor_arg(input)
    found = np.argwhere(np.asarray(x.numpy()) != 0).astype(np.int64)[:size]
    out = np.full((size, x.ndim), fill_value, dtype=np.int64)
    out[:len(found)] = found
    return _tensor(out)


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,  # noqa: N803
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """``torch.svd_lowrank``: (U, S, V) of rank ``q`` approximating ``A - M``.
    torch draws a random subspace and refines it ``niter`` times; pf takes
    the exact truncated SVD (the best rank-q approximation: what the
    randomized one converges to; singular vectors are unique up to sign)."""
    del niter
    a = as_tensor_arg(A)
    if M is not None:
        a = a - M
    m, n = a.shape[-2:]
    k = min(6 if q is None else q, m, n)
    u, s, vh = linalg.svd(a, full_matrices=False)
    return u[..., :, :k], s[..., :k], vh[..., :k, :].transpose(-2, -1)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,  # noqa: N803
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """``torch.pca_lowrank``: ``svd_lowrank`` of A centred on its column means."""
    a = as_tensor_arg(A)
    m, n = a.shape[-2:]
    k = min(6, m, n) if q is None else q
    if not 0 <= k <= min(m, n):
        raise ValueError(f"q(={k}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    centred = a - a.mean(-2, keepdim=True) if center else a
    return svd_lowrank(centred, k, niter)


def get_device(input: Tensor) -> int:  # noqa: A002
    """-1: the CPU (torch's answer for CPU tensors)."""
    return -1


def set_flush_denormal(mode: bool) -> bool:
    """Not supported here (numpy keeps denormals): False, as torch on CPUs without it."""
    del mode
    return False


def is_vulkan_available() -> bool:
    return False


def detach_(input: Tensor) -> Tensor:  # noqa: A002
    return input.detach_()


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None  # noqa: A002
               ) -> Tensor:
    return _resize_as_(input, the_template, memory_format)


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float,  # noqa: A002
                      norm_type: float) -> Tensor:
    """``torch.embedding_renorm_``: the rows ``indices`` names rescaled in
    place to norm at most ``max_norm`` (F.embedding's ``max_norm``)."""
    F._embedding_renorm_(input, as_tensor_arg(indices), max_norm, norm_type)
    return input


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """``torch.set_anomaly_enabled``: ``pf.autograd.set_detect_anomaly``'s switch."""
    del check_nan  # (pf's anomaly mode always checks for NaN)
    autograd.set_detect_anomaly(enabled)


is_anomaly_enabled = autograd.is_anomaly_enabled


def _new_empty_strided(self: Tensor, size: Sequence[int], stride: Sequence[int], *,
                       dtype: Any = None, device: Any = None, requires_grad: bool = False,
                       layout: Any = None, pin_memory: bool = False) -> Tensor:
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                         requires_grad=requires_grad)


__all__ += ["nonzero_static", "svd_lowrank", "pca_lowrank", "get_device", "set_flush_denormal",
            "is_vulkan_available", "detach_", "resize_as_", "embedding_renorm_",
            "set_anomaly_enabled", "is_anomaly_enabled"]

for _name, _member in {"nonzero_static": nonzero_static, "new_empty_strided": _new_empty_strided,
                       "igamma_": _in_place(special.gammainc, "igamma_"),
                       "igammac_": _in_place(special.gammaincc, "igammac_")}.items():
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _member)


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """``torch.binomial``: a Binomial(count, prob) draw per element (from pf's
    generator), in count's floating dtype. A count below 0 or a probability
    outside [0, 1] raises (torch returns arbitrary numbers there); a fractional
    count is truncated."""
    n, p = as_tensor_arg(count), as_tensor_arg(prob)
    if not n.dtype.is_floating_point:
        raise RuntimeError(f"binomial only supports floating-point dtypes for count, got: "
                           f"{n.dtype.name}")
    nv, pv = np.asarray(n.numpy()), np.asarray(p.numpy())
    nv, pv = np.broadcast_arrays(nv, pv)
    if np.any(nv < 0) or np.any((pv < 0) | (pv > 1)) or np.any(np.isnan(nv) | np.isnan(pv)):
        raise RuntimeError("binomial: count must be >= 0 and prob in [0, 1]")
    draws = _draws(generator).binomial(nv.astype(np.int64), pv.astype(np.float64))
    return Tensor._leaf(draws.astype(n.dtype.np))


__all__ += ["binomial"]


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """``torch.frombuffer``: a 1-d tensor of the buffer's bytes read as
    ``dtype`` (``count`` elements from byte ``offset``; all when -1), sharing
    the buffer's memory as ``from_numpy`` shares an array's (an in-place update
    of a tensor of a read-only buffer, ``bytes``, raises)."""
    dt = to_dtype(dtype)
    if offset < 0:
        raise ValueError(f"offset must be non-negative, got {offset}")
    raw = memoryview(buffer).cast("B")
    if offset > len(raw) or (len(raw) - offset) % dt.itemsize and count < 0:
        raise ValueError(f"buffer length ({len(raw) - offset} bytes after offset {offset}) must "
                         f"be a multiple of element size ({dt.itemsize})")
    values = np.frombuffer(raw, dtype=dt.np, count=count, offset=offset)
    if outside_pyflame(sys._getframe(1)):
        t = share(Tensor._leaf(values, dt), values)
    else:  # (pyflame's own: a copy)
        t = _tensor(values.copy(), dtype=dt)
    return t.requires_grad_(True) if requires_grad else t


__all__ += ["frombuffer"]


# ---- storages: what a tensor's root holds (read-only here) ----

class _Storage:
    """``x.storage()`` / ``x.untyped_storage()``: the elements of the tensor's
    root (the tensor its views share), as torch's storages describe them:
    ``size()`` (elements, or bytes when untyped), ``nbytes()``, ``data_ptr()``
    (equal for tensors sharing it), ``element_size()``, ``tolist()``. A copy of
    the values: writing through a storage is not supported."""

    def __init__(self, root: Tensor, typed: bool) -> None:
        self._root, self._typed = root, typed

    @property
    def dtype(self) -> Any:
        return self._root.dtype if self._typed else to_dtype("uint8")

    @property
    def device(self) -> Any:
        return self._root.device

    def element_size(self) -> int:
        return self._root.dtype.itemsize if self._typed else 1

    def nbytes(self) -> int:
        return self._root.numel() * self._root.dtype.itemsize

    def size(self) -> int:
        return self._root.numel() if self._typed else self.nbytes()

    def __len__(self) -> int:
        return self.size()

    def data_ptr(self) -> int:
        return _data_ptr(self._root)

    def tolist(self) -> list[Any]:
        values = np.asarray(self._root.numpy()).reshape(-1)
        return values.tolist() if self._typed else list(values.view(np.uint8))

    def __repr__(self) -> str:
        kind = f"TypedStorage(dtype={self._root.dtype.name}" if self._typed else \
            "UntypedStorage(dtype=uint8"
        return f"{kind}, size={self.size()})"


def _root_tensor(t: Tensor) -> Tensor:
    while t._base is not None:
        t = t._base
    return t


for _name, _member in {"storage": lambda self: _Storage(_root_tensor(self), True),
                       "untyped_storage": lambda self: _Storage(_root_tensor(self), False)
                       }.items():
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _member)
