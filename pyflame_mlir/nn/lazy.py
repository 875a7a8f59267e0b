"""Modules from session 11's scan of ``torch.nn`` (issue 14): the lazy
modules (``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``,
``LazyBatchNorm1d/2d/3d``, ``LazyInstanceNorm1d/2d/3d``), ``ConvTranspose3d``,
``AlphaDropout``/``FeatureAlphaDropout``, ``LPPool3d``,
``TripletMarginWithDistanceLoss``, ``MultiLabelMarginLoss``, ``SyncBatchNorm``
(one process: batch norm), ``DataParallel`` (one device: the module),
``RNNBase``/``RNNCellBase`` and ``Container``.

A lazy module is torch's ``LazyModuleMixin``: its parameters (and running
statistics) are ``UninitializedParameter``/``UninitializedBuffer`` until the
first forward, which reads the input's feature size, materializes them (the
same objects: an optimizer made before keeps them), runs the module's
``reset_parameters`` and turns the module into its ``cls_to_become``
(``LazyLinear`` becomes ``Linear``). Loading a state dict into it first gives
the parameters the checkpoint's shapes, as torch's load hook does.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..autodiff import no_grad
from ..autograd import Function
from ..core import Tensor
from ..creation import tensor as _tensor
from ..creation import zeros
from ..indexing import gather as gather_
from ..indexing import index_copy, index_select
from ..ops import cat
from . import functional as F  # noqa: N812  (torch's spelling)
from .containers import ModuleList, Sequential
from .extra_layers import BatchNorm3d, InstanceNorm3d
from .layers import (
    BatchNorm1d,
    BatchNorm2d,
    Conv1d,
    Conv2d,
    ConvTranspose1d,
    ConvTranspose2d,
    Linear,
    NLLLoss,
    _ConvTransposeNd,
    _DropoutNd,
    _Loss,
)
from .module import Module, UninitializedBuffer, UninitializedParameter, is_uninitialized
from .more_layers import InstanceNorm1d, InstanceNorm2d, PairwiseDistance
from .rnn import _CellBase, _RNNBase
from .surface_layers import Conv3d, _LPPool

__all__ = [
    "AdaptiveLogSoftmaxWithLoss", "AlphaDropout", "Container", "ConvTranspose3d", "CrossMapLRN2d",
    "DataParallel", "FeatureAlphaDropout", "FractionalMaxPool2d", "FractionalMaxPool3d",
    "LinearCrossEntropyLoss",
    "LinearCrossEntropyOptions",
    "LPPool3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d",
    "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
    "LazyConvTranspose3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
    "LazyLinear", "LazyModuleMixin", "MultiLabelMarginLoss", "NLLLoss2d", "RNNBase",
    "RNNCellBase", "SyncBatchNorm", "TripletMarginWithDistanceLoss", "UninitializedBuffer",
    "UninitializedParameter",
]


# ---- ConvTranspose3d, dropout, pooling, losses ----

class ConvTranspose3d(_ConvTransposeNd):
    _nsp = 3

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:  # noqa: A002
        if output_size is not None:
            raise NotImplementedError("ConvTranspose3d: output_size= is not supported; give "
                                      "output_padding to the constructor")
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)


class AlphaDropout(_DropoutNd):
    _fn = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    _fn = staticmethod(F.feature_alpha_dropout)


class LPPool3d(_LPPool):
    _fn = staticmethod(F.lp_pool3d)


class TripletMarginWithDistanceLoss(_Loss):
    def __init__(self, *, distance_function: Any = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        # torch's default: a PairwiseDistance module (a child, so it prints)
        self.distance_function = distance_function if distance_function is not None \
            else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """torch's deprecated subclass of ``NLLLoss`` (which takes (N, C, H, W) inputs)."""


class SyncBatchNorm(BatchNorm1d):
    """``torch.nn.SyncBatchNorm`` in one process: batch norm over the local
    batch (there is no other process to synchronize statistics with); any
    input of 2 or more dims, as torch's."""

    _input_dims = tuple(range(2, 9))

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """The module with every BatchNorm*d replaced by a SyncBatchNorm holding
        the same parameters and buffers (the objects themselves, as torch's)."""
        out = module
        if isinstance(module, BatchNorm1d | BatchNorm2d | BatchNorm3d) and \
                not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            if module.affine:
                with no_grad():
                    out.weight, out.bias = module.weight, module.bias
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                out._buffers[name] = module._buffers[name]
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


class DataParallel(Module):
    """``torch.nn.DataParallel`` on one device: calls the module (there are
    no other devices to split the batch over); ``.module`` holds it, so
    state dicts carry the ``module.`` prefix, as torch's."""

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


class Container(Module):
    """torch's deprecated ``nn.Container``: a Module whose keyword arguments
    are its submodules."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        warnings.warn("nn.Container is deprecated. All of it's functionality is now "
                      "implemented in nn.Module. Subclass that instead.", stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)


# torch's base classes of the recurrent modules (``isinstance(m, nn.RNNBase)``)
RNNBase, RNNCellBase = _RNNBase, _CellBase


# ---- lazy modules ----

class LazyModuleMixin:
    """torch's ``LazyModuleMixin``: a forward pre-hook materializes the
    uninitialized parameters from the first input, then the module becomes
    ``cls_to_become``."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._initialize_hook = self.register_forward_pre_hook(  # type: ignore[attr-defined]
            _infer_parameters)

    def has_uninitialized_params(self) -> bool:
        tables = (self._parameters, self._buffers)  # type: ignore[attr-defined]
        return any(is_uninitialized(t) for table in tables for t in table.values())

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")


def _infer_parameters(module: Any, args: tuple) -> None:
    with no_grad():  # (after a state dict gave the shapes: it records the sizes)
        module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


def _in_features(input: Tensor, spatial: int) -> int:
    """The channel count of a (C, ...) or (N, C, ...) input."""
    return input.shape[0] if input.ndim == spatial + 1 else input.shape[1]


class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is the last dim of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, False, device, dtype)
        self.out_features = out_features
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:  # noqa: A002
        if not self.has_uninitialized_params():
            self.in_features = self.weight.shape[1]
        else:
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    _transposed = False

    def _lazy_init(self, out_channels: int, bias: bool, dtype: Any) -> None:
        self.out_channels = out_channels
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:  # noqa: A002
        if not self.has_uninitialized_params():
            w = self.weight.shape
            self.in_channels = w[0] if self._transposed else w[1] * self.groups
            return
        n = self._nsp  # type: ignore[attr-defined]
        if input.ndim not in (n + 1, n + 2):
            raise ValueError(f"{type(self).__name__}: expected a {n + 1}-D or {n + 2}-D input, "
                             f"got {list(input.shape)}")
        self.in_channels = _in_features(input, n)
        g = self.groups  # type: ignore[attr-defined]
        if self.in_channels % g:
            raise ValueError("in_channels must be divisible by groups")
        k = self.kernel_size  # type: ignore[attr-defined]
        if self._transposed:
            self.weight.materialize((self.in_channels, self.out_channels // g, *k))
        else:
            self.weight.materialize((self.out_channels, self.in_channels // g, *k))
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


def _conv_init(self: Any, base: type, out_channels: int, kernel_size: Any, stride: Any,
               padding: Any, dilation: Any, groups: int, bias: bool, padding_mode: str,
               device: Any, dtype: Any) -> None:
    base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False,
                  padding_mode, device, dtype)
    self._lazy_init(out_channels, bias, dtype)


def _conv_transpose_init(self: Any, base: type, out_channels: int, kernel_size: Any,
                         stride: Any, padding: Any, output_padding: Any, groups: int,
                         bias: bool, dilation: Any, padding_mode: str, device: Any,
                         dtype: Any) -> None:
    base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False,
                  dilation, padding_mode, device, dtype)
    self._lazy_init(out_channels, bias, dtype)


class LazyConv1d(_LazyConvMixin, Conv1d):
    cls_to_become = Conv1d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        _conv_init(self, Conv1d, out_channels, kernel_size, stride, padding, dilation, groups,
                   bias, padding_mode, device, dtype)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)


class LazyConv2d(_LazyConvMixin, Conv2d):
    cls_to_become = Conv2d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        _conv_init(self, Conv2d, out_channels, kernel_size, stride, padding, dilation, groups,
                   bias, padding_mode, device, dtype)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)


class LazyConv3d(_LazyConvMixin, Conv3d):
    cls_to_become = Conv3d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        _conv_init(self, Conv3d, out_channels, kernel_size, stride, padding, dilation, groups,
                   bias, padding_mode, device, dtype)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)


class LazyConvTranspose1d(_LazyConvMixin, ConvTranspose1d):
    cls_to_become = ConvTranspose1d
    _transposed = True

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        _conv_transpose_init(self, ConvTranspose1d, out_channels, kernel_size, stride, padding,
                             output_padding, groups, bias, dilation, padding_mode, device,
                             dtype)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)


class LazyConvTranspose2d(_LazyConvMixin, ConvTranspose2d):
    cls_to_become = ConvTranspose2d
    _transposed = True

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        _conv_transpose_init(self, ConvTranspose2d, out_channels, kernel_size, stride, padding,
                             output_padding, groups, bias, dilation, padding_mode, device,
                             dtype)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)


class LazyConvTranspose3d(_LazyConvMixin, ConvTranspose3d):
    cls_to_become = ConvTranspose3d
    _transposed = True

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        _conv_transpose_init(self, ConvTranspose3d, out_channels, kernel_size, stride, padding,
                             output_padding, groups, bias, dilation, padding_mode, device,
                             dtype)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)


class _LazyNormMixin(LazyModuleMixin):
    """Lazy batch and instance norms: weight/bias and the running statistics
    get the input's channel count."""

    _spatial: tuple[int, ...] = ()

    def _lazy_init(self, affine: bool, track_running_stats: bool, dtype: Any) -> None:
        self.num_features = 0
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self._buffers["running_mean"] = UninitializedBuffer(dtype=dtype)
            self._buffers["running_var"] = UninitializedBuffer(dtype=dtype)

    def initialize_parameters(self, input: Tensor) -> None:  # noqa: A002
        if not self.has_uninitialized_params():
            known = self.weight if self.affine else self.running_mean  # type: ignore
            if known is not None:
                self.num_features = known.shape[0]
            return
        self.num_features = _channels(type(self).__name__, input, self._spatial)
        n = (self.num_features,)
        if self.affine:  # type: ignore[attr-defined]
            self.weight.materialize(n)
            self.bias.materialize(n)
            self.weight.fill_(1.0)  # torch's reset_parameters: ones and zeros
        if self.track_running_stats:  # type: ignore[attr-defined]
            self.running_mean.materialize(n)
            self.running_var.materialize(n)
            self.running_var.fill_(1.0)
            self.num_batches_tracked.zero_()


def _channels(name: str, input: Tensor, spatial: tuple[int, ...]) -> int:
    """Batch norms: dim 1 of (N, C, ...); instance norms: dim 0 when unbatched."""
    if input.ndim < 2:
        raise ValueError(f"{name}: expected an input with at least 2 dims, got "
                         f"{list(input.shape)}")
    if spatial and input.ndim == spatial[0] + 1:
        return input.shape[0]
    return input.shape[1]


def _norm_class(name: str, base: type, spatial: tuple[int, ...]) -> type:
    def __init__(self: Any, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        base.__init__(self, 0, eps, momentum, affine, track_running_stats, device, dtype)
        self._lazy_init(affine, track_running_stats, dtype)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)

    body = {"__init__": __init__, "cls_to_become": base,
            "_spatial": spatial, "__module__": __name__,
            "__doc__": f"``{base.__name__}`` whose ``num_features`` is its first input's "
                       "channel count."}
    return type(name, (_LazyNormMixin, base), body)


LazyBatchNorm1d = _norm_class("LazyBatchNorm1d", BatchNorm1d, ())
LazyBatchNorm2d = _norm_class("LazyBatchNorm2d", BatchNorm2d, ())
LazyBatchNorm3d = _norm_class("LazyBatchNorm3d", BatchNorm3d, ())
LazyInstanceNorm1d = _norm_class("LazyInstanceNorm1d", InstanceNorm1d, (1,))
LazyInstanceNorm2d = _norm_class("LazyInstanceNorm2d", InstanceNorm2d, (2,))
LazyInstanceNorm3d = _norm_class("LazyInstanceNorm3d", InstanceNorm3d, (3,))


# ---- adaptive softmax ----

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """torch's adaptive softmax (Grave et al. 2017): a head over the
    ``cutoffs[0]`` frequent classes plus one entry per cluster, and per
    cluster a two-layer tail (``in_features / div_value^(i+1)`` wide) over its
    classes. ``forward(input, target)`` gives each target's log-probability
    and the mean negative one (computing each tail on its rows only);
    ``log_prob`` the full distribution, ``predict`` its argmax."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        del device
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        tails = []
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            tails.append(Sequential(Linear(in_features, hsz, bias=False, dtype=dtype),
                                    Linear(hsz, osz, bias=False, dtype=dtype)))
        self.tail = ModuleList(tails)

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for seq in self.tail:
            for lin in seq:
                lin.reset_parameters()

    def forward(self, input: Tensor, target: Tensor) -> _ASMoutput:  # noqa: A002
        batched = target.ndim == 1
        if target.ndim not in (0, 1) or input.ndim != target.ndim + 1:
            raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs "
                               f"with size {list(input.shape)}" if target.ndim == 1 else
                               "0D target tensor expects 1D input tensors, but found inputs "
                               f"with size {list(input.shape)}")
        if batched and input.shape[0] != target.shape[0]:
            raise RuntimeError("Input and target should have the same size in the batch "
                               "dimension.")
        if not batched:
            input, target = input.unsqueeze(0), target.unsqueeze(0)  # noqa: A001
        values = np.asarray(target.numpy()).astype(np.int64)
        batch = values.shape[0]
        output = zeros(batch, dtype=input.dtype)
        gather = values.copy()
        used = 0
        bounds = [0, *self.cutoffs]
        for i in range(len(bounds) - 1):
            lo, hi = bounds[i], bounds[i + 1]
            rows = np.nonzero((values >= lo) & (values < hi))[0]
            if rows.size == 0:
                continue
            used += rows.size
            if i == 0:
                continue
            at = _tensor(rows)
            local = self.tail[i - 1](index_select(input, 0, at))
            logp = F.log_softmax(local, dim=1)
            picked = gather_(logp, 1, _tensor(values[rows] - lo).unsqueeze(1)).squeeze(1)
            output = index_copy(output, 0, at, picked)
            gather[rows] = self.shortlist_size + i - 1
        if used != batch:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{values.min()}, {values.max()}] were found. ")
        head = F.log_softmax(self.head(input), dim=1)
        output = output + gather_(head, 1, _tensor(gather).unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input: Tensor) -> Tensor:  # noqa: A002
        head = F.log_softmax(self.head(input), dim=1)
        parts = [head[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            tail = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(tail + head[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:  # noqa: A002
        """Log-probabilities of every class, (N, n_classes) (or (n_classes,))."""
        if input.ndim == 1:
            return self._full_log_prob(input.unsqueeze(0)).squeeze(0)
        return self._full_log_prob(input)

    def predict(self, input: Tensor) -> Tensor:  # noqa: A002
        """The most likely class of each row."""
        if input.ndim == 1:
            return self.log_prob(input.unsqueeze(0)).argmax(1).squeeze(0)
        return self.log_prob(input).argmax(1)


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """torch's options of the chunked linear cross entropy: how to split the
    computation to save memory. pf computes the loss whole (the same value),
    so they are kept and have no effect."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None


class LinearCrossEntropyLoss(_Loss):
    """torch's ``nn.LinearCrossEntropyLoss``: a ``Linear`` (stored flat, as
    torch's: (C * prod(out_features), in_features)) and the cross entropy of
    its logits, through ``F.linear_cross_entropy``."""

    def __init__(self, in_features: int, num_classes: int, *,
                 out_features: tuple[int, ...] = (), bias: bool = False, device: Any = None,
                 dtype: Any = None, reduction: str = "mean", weight: Tensor | None = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: Any = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(reduction=reduction)
        self.register_buffer("weight", weight)
        self.num_classes, self.out_features = num_classes, tuple(out_features)
        self.ignore_index, self.label_smoothing, self.options = (ignore_index,
                                                                 label_smoothing, options)
        rows = num_classes * int(np.prod(self.out_features, dtype=np.int64))
        self.linear = Linear(in_features, rows, bias=bias, device=device, dtype=dtype)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        w = self.linear.weight.reshape((self.num_classes, *self.out_features,
                                        self.linear.in_features))
        b = None if self.linear.bias is None else \
            self.linear.bias.reshape((self.num_classes, *self.out_features))
        return F.linear_cross_entropy(input, w, target, linear_bias=b, weight=self.weight,
                                      reduction=self.reduction, ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing,
                                      options=self.options)


def _cross_map_window(size: int, channels: int) -> np.ndarray:
    """Which channels' squares torch's CrossMapLRN2d sums for each channel:
    its running-sum recurrence replayed on indicator rows (it never drops
    channel 0 from the sum: the matrix reproduces that too)."""
    pre_pad = int((size - 1) / 2 + 1)
    m = np.zeros((channels, channels))
    m[0, :min(pre_pad, channels)] = 1.0
    for c in range(1, channels):
        m[c] = m[c - 1]
        if c < channels - pre_pad + 1:
            m[c, c + pre_pad - 1] += 1.0
        if c > pre_pad:
            m[c, c - pre_pad] -= 1.0
    return m


class CrossMapLRN2d(Module):
    """torch's legacy cross-channel LRN of 4-d inputs: ``x * (k + alpha /
    size * S)^-beta`` with S torch's running sum of squares over a channel
    window (composed from a constant channel-mixing matrix: differentiable)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1
                 ) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D "
                             "instead.")
        size, alpha, beta, k = self.size, self.alpha, self.beta, self.k
        n, c = input.shape[:2]

        def channel_mix(matrix: np.ndarray, t: Tensor) -> Tensor:
            mix = _tensor(matrix, dtype=t.dtype)
            return (mix @ t.reshape(n, c, -1)).reshape(t.shape)

        def scale_of(x: Tensor) -> Tensor:
            return channel_mix(_cross_map_window(size, c), x * x) * (alpha / size) + k

        class CrossMapLRN(Function):
            """torch's forward, and torch's own backward formula (the legacy
            one, which assumes a symmetric window: not the derivative of the
            forward's running sum at the edges; pf reproduces torch's)."""

            @staticmethod
            def forward(ctx: Any, x: Tensor) -> Tensor:
                scale = scale_of(x)
                out = x * scale ** (-beta)
                ctx.save_for_backward(x, out, scale)
                return out

            @staticmethod
            def backward(ctx: Any, grad: Tensor) -> Tensor:
                x, out, scale = ctx.saved_tensors
                lead = int(size - (size - 1) / 2)
                j = np.arange(c)
                window = ((j[None, :] >= j[:, None] - lead)
                          & (j[None, :] <= j[:, None] + size - 1 - lead)).astype(np.float64)
                ratio = channel_mix(window, grad * out / scale)
                return scale ** (-beta) * grad - (2 * alpha * beta / size) * x * ratio

        return CrossMapLRN.apply(input)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class _FractionalMaxPoolNd(Module):
    _nsp = 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        n, name = self._nsp, type(self).__name__
        self.kernel_size = F._pair(kernel_size, n, "kernel_size", name)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else F._pair(output_size, n,
                                                                      "output_size", name)
        self.output_ratio = None if output_ratio is None else (
            (output_ratio,) * n if isinstance(output_ratio, float | int) else
            tuple(output_ratio))
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a "
                             "pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        fn = F.fractional_max_pool2d if self._nsp == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _nsp = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _nsp = 3
