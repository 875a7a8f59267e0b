"""The layer modules of ``torch.nn`` that wrap ``pf.nn.functional``:
normalization, dropout, convolution, pooling, reshaping, activations,
``MultiheadAttention`` and the losses. Constructors, parameter and buffer
names, initialization distributions and ``train``/``eval`` behaviour are
torch's, so a torch ``state_dict`` loads as it is."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..amp import is_autocast_enabled
from ..autodiff import is_grad_enabled, no_grad
from ..core import Tensor
from ..dialects.dtypes import default_float, int64
from ..dialects.dtypes import dtype as to_dtype
from ..ops import flatten, reshape
from . import functional as F
from . import init
from .linear import Linear
from .module import Module, Parameter

__all__ = [
    "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "AvgPool1d", "AvgPool2d", "BCELoss",
    "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "Conv1d", "Conv2d", "ConvTranspose1d",
    "ConvTranspose2d", "CrossEntropyLoss",
    "Dropout", "Dropout1d", "Dropout2d", "ELU", "Flatten", "GELU", "GroupNorm", "Hardtanh",
    "HuberLoss", "KLDivLoss", "L1Loss", "LayerNorm", "LeakyReLU", "LogSoftmax", "MSELoss",
    "MaxPool1d", "MaxPool2d", "MaxUnpool1d", "MaxUnpool2d", "Mish", "MultiheadAttention",
    "NLLLoss", "RMSNorm", "ReLU",
    "ReLU6", "SiLU", "Sigmoid", "SmoothL1Loss", "Softmax", "Softplus", "Tanh", "Unflatten",
]


def _empty(shape: tuple[int, ...], dtype: Any) -> Tensor:
    dt = to_dtype(dtype) if dtype is not None else default_float()
    return Tensor._leaf(np.zeros(shape, dtype=dt.np))


def _filled(shape: tuple[int, ...], value: float, dtype: Any) -> Tensor:
    t = _empty(shape, dtype)
    t._value[...] = value
    return t


def _check_device(device: Any) -> None:
    if device is not None and str(device).split(":")[0] != "cpu":
        raise RuntimeError(f"device {str(device)!r} is not supported (only 'cpu'); choose "
                           "where graphs run with pf.set_backend")


def _shape(normalized_shape: int | Sequence[int]) -> tuple[int, ...]:
    if isinstance(normalized_shape, int | np.integer):
        return (int(normalized_shape),)
    return tuple(int(d) for d in normalized_shape)


# ---- normalization ----

class LayerNorm(Module):
    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        _check_device(device)
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_filled(self.normalized_shape, 1.0, dtype))
        else:
            self.register_parameter("weight", None)
        if elementwise_affine and bias:
            self.bias = Parameter(_empty(self.normalized_shape, dtype))
        else:
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        _check_device(device)
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_filled(self.normalized_shape, 1.0, dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        _check_device(device)
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = \
            num_groups, num_channels, eps, affine
        _affine_parameters(self, (num_channels,), affine, bias, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


def _affine_parameters(m: Module, shape: tuple[int, ...], affine: bool, bias: bool,
                       dtype: Any) -> None:
    """A norm layer's ``weight`` (ones) and ``bias`` (zeros; PyTorch 2.13's
    ``bias=False`` leaves it out), or None for both without ``affine``."""
    if affine:
        m.weight = Parameter(_filled(shape, 1.0, dtype))
    else:
        m.register_parameter("weight", None)
    if affine and bias:
        m.bias = Parameter(_empty(shape, dtype))
    else:
        m.register_parameter("bias", None)


class _BatchNorm(Module):
    _input_dims: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        _check_device(device)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine_parameters(self, (num_features,), affine, bias, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", _empty((num_features,), dtype))
            self.register_buffer("running_var", _filled((num_features,), 1.0, dtype))
            self.register_buffer("num_batches_tracked",
                                 Tensor._leaf(np.zeros((), dtype=int64.np)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        """torch's: running mean 0, variance 1, batch count 0."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1.0)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        with no_grad():
            if getattr(self, "weight", None) is not None:
                self.weight.fill_(1.0)
            if getattr(self, "bias", None) is not None:
                self.bias.zero_()

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in self._input_dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._input_dims)} "
                             f"input (got {input.ndim}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and \
                self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average (reads the counter)
                factor = 1.0 / float(self.num_batches_tracked.item())
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_running else None,
                            self.running_var if use_running else None, self.weight, self.bias,
                            bn_training, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    _input_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    _input_dims = (4,)


# ---- dropout ----

class _DropoutNd(Module):
    _fn = staticmethod(F.dropout)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    pass


class Dropout1d(_DropoutNd):
    _fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    _fn = staticmethod(F.dropout2d)


# ---- convolution ----

class _ConvNd(Module):
    _nsp = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        _check_device(device)
        n = self._nsp
        name = type(self).__name__
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels and out_channels must be divisible by "
                             f"groups={groups}")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"{name}: padding_mode must be one of zeros, reflect, replicate, "
                             f"circular, got {padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = F._pair(kernel_size, n, "kernel_size", name)
        self.stride = F._pair(stride, n, "stride", name)
        self.dilation = F._pair(dilation, n, "dilation", name)
        self.padding = padding if isinstance(padding, str) else \
            F._pair(padding, n, "padding", name)
        if isinstance(padding, str) and padding == "same" and any(s != 1 for s in self.stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
        self.padding_mode = padding_mode
        self.weight = Parameter(_empty((out_channels, in_channels // groups,
                                        *self.kernel_size), dtype))
        if bias:
            self.bias = Parameter(_empty((out_channels,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # torch's: kaiming_uniform_(a=sqrt(5)), bias U(-1/sqrt(fan_in), 1/sqrt(fan_in))
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            if fan_in:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        fn = F.conv1d if self._nsp == 1 else F.conv2d
        if self.padding_mode == "zeros":
            return fn(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                      self.groups)
        pairs = F._conv_padding(type(self).__name__, self.padding, self.kernel_size,
                                self.dilation, self.stride)
        flat = [v for a, b in reversed(pairs) for v in (a, b)]
        return fn(F.pad(input, flat, mode=self.padding_mode), self.weight, self.bias,
                  self.stride, 0, self.dilation, self.groups)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * self._nsp:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._nsp:
            s += f", dilation={self.dilation}"
        output_padding = getattr(self, "output_padding", None)  # transposed convolutions
        if output_padding is not None and output_padding != (0,) * self._nsp:
            s += f", output_padding={output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    _nsp = 1


class Conv2d(_ConvNd):
    _nsp = 2


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any,
                 stride: Any = 1, padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                 bias: bool = True, dilation: Any = 1, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)
        self.output_padding = F._pair(output_padding, self._nsp, "output_padding",
                                      type(self).__name__)
        # torch's layout: (in_channels, out_channels / groups, *kernel)
        self.weight = Parameter(_empty((in_channels, out_channels // groups,
                                        *self.kernel_size), dtype))
        self.reset_parameters()

    def forward(self, input: Tensor) -> Tensor:
        fn = F.conv_transpose1d if self._nsp == 1 else F.conv_transpose2d
        return fn(input, self.weight, self.bias, self.stride, self.padding,
                  self.output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _nsp = 1


class ConvTranspose2d(_ConvTransposeNd):
    _nsp = 2


# ---- pooling ----

class _MaxPoolNd(Module):
    _fn = staticmethod(F.max_pool2d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Any:
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding,
                              self.dilation, self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    pass


class _MaxUnpoolNd(Module):
    """The partial inverse of a max pool: ``forward(input, indices, output_size=None)``."""
    _fn = staticmethod(F.max_unpool2d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)

    def extra_repr(self) -> str:  # torch's: each an n-tuple
        n = {"MaxUnpool1d": 1, "MaxUnpool2d": 2}.get(type(self).__name__, 3)

        def tup(v: Any) -> tuple[Any, ...]:
            return tuple(v) if isinstance(v, tuple | list) else (v,) * n
        return (f"kernel_size={tup(self.kernel_size)}, stride={tup(self.stride)}, "
                f"padding={tup(self.padding)}")


class MaxUnpool1d(_MaxUnpoolNd):
    _fn = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    pass


class AvgPool1d(Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding,
                            self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:  # torch's: 1-tuples
        def one(v: Any) -> tuple[Any, ...]:
            return tuple(v) if isinstance(v, tuple | list) else (v,)
        return (f"kernel_size={one(self.kernel_size)}, stride={one(self.stride)}, "
                f"padding={one(self.padding)}")


class AvgPool2d(Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding,
                            self.ceil_mode, self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(AdaptiveAvgPool2d):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


# ---- reshaping ----

class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        d = self.dim % input.ndim
        return reshape(input, (*input.shape[:d], *self.unflattened_size,
                               *input.shape[d + 1:]))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


# ---- activations ----

def _activation(name: str, fn: Any, params: Sequence[tuple[str, Any]],
                repr_fn: Callable[[Any], str] | None = None) -> type[Module]:
    """A module class calling ``fn(input, **its constructor arguments)``;
    ``repr_fn`` gives its ``extra_repr`` where torch's differs from the
    generic ``name=value`` list."""
    names = [p for p, _ in params]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        Module.__init__(self)
        if len(args) > len(names):
            raise TypeError(f"{name}() takes at most {len(names)} arguments")
        values = dict(params)
        values.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in values:
                raise TypeError(f"{name}() got an unexpected keyword argument {k!r}")
            values[k] = v
        for k in names:
            setattr(self, k, values[k])

    def forward(self, input: Tensor) -> Tensor:
        return fn(input, **{k: getattr(self, k) for k in names})

    def extra_repr(self) -> str:  # as PyTorch's: inplace only when set, strings quoted
        if repr_fn is not None:
            return repr_fn(self)
        return ", ".join(f"{k}={getattr(self, k)!r}" if isinstance(getattr(self, k), str)
                         else f"{k}={getattr(self, k)}" for k in names
                         if k != "inplace" or getattr(self, k))

    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "extra_repr": extra_repr, "__module__": __name__,
                                  "__doc__": f"torch.nn.{name}: applies F.{fn.__name__}."})


ReLU = _activation("ReLU", F.relu, [("inplace", False)])
ReLU6 = _activation("ReLU6", F.relu6, [("inplace", False)])
GELU = _activation("GELU", F.gelu, [("approximate", "none")])
SiLU = _activation("SiLU", F.silu, [("inplace", False)])
Mish = _activation("Mish", F.mish, [("inplace", False)])
Tanh = _activation("Tanh", F.tanh, [])
Sigmoid = _activation("Sigmoid", F.sigmoid, [])
Softmax = _activation("Softmax", F.softmax, [("dim", None)])
LogSoftmax = _activation("LogSoftmax", F.log_softmax, [("dim", None)])
LeakyReLU = _activation("LeakyReLU", F.leaky_relu, [("negative_slope", 0.01),
                                                     ("inplace", False)])
ELU = _activation("ELU", F.elu, [("alpha", 1.0), ("inplace", False)])
Softplus = _activation("Softplus", F.softplus, [("beta", 1.0), ("threshold", 20.0)])
Hardtanh = _activation("Hardtanh", F.hardtanh, [("min_val", -1.0), ("max_val", 1.0),
                                                 ("inplace", False)])


# ---- attention ----

class NonDynamicallyQuantizableLinear(Linear):
    """MultiheadAttention's ``out_proj`` (PyTorch's class name, which ``print``
    shows; quantization is not a thing here)."""


class MultiheadAttention(Module):
    """torch.nn.MultiheadAttention with one packed input projection
    (``in_proj_weight``/``in_proj_bias``) and ``out_proj``. A bool
    ``attn_mask``/``key_padding_mask`` marks positions that may NOT be
    attended (torch's convention here, the opposite of sdpa's)."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        _check_device(device)
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads "
                             f"({num_heads})")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.batch_first, self.head_dim = batch_first, embed_dim // num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_empty((3 * embed_dim, embed_dim), dtype))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:  # separate projections, as PyTorch's (their names in the state dict)
            self.q_proj_weight = Parameter(_empty((embed_dim, embed_dim), dtype))
            self.k_proj_weight = Parameter(_empty((embed_dim, self.kdim), dtype))
            self.v_proj_weight = Parameter(_empty((embed_dim, self.vdim), dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_empty((3 * embed_dim,), dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(_empty((1, 1, embed_dim), dtype))
            self.bias_v = Parameter(_empty((1, 1, embed_dim), dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if bias:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if add_bias_kv:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False, _native: bool | None = None
                ) -> tuple[Tensor, Tensor | None]:
        """torch's: the attention itself is ``F.multi_head_attention_forward``
        (sequence first), the module only moves a ``batch_first`` batch.
        ``_native``: whether torch's native kernel computes it (None: torch's
        module checks, see ``_torch_fast_path``)."""
        batched = query.ndim == 3
        fast = (self._torch_fast_path(query, key, value, key_padding_mask, attn_mask)
                if _native is None else _native)
        if self.batch_first and batched:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal, _native=fast)
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        return out, weights

    def _torch_fast_path(self, query: Tensor, key: Tensor, value: Tensor,
                         key_padding_mask: Tensor | None, attn_mask: Tensor | None) -> bool:
        """Whether torch's forward takes ``_native_multi_head_attention`` (its
        checks, in order): numbers differ there only where every key of a
        query is masked (NaN, not the 0s of scaled_dot_product_attention)."""
        if any(m is not None and m.dtype.is_floating_point
               for m in (attn_mask, key_padding_mask)):
            return False
        if (query.ndim != 3 or query is not key or key is not value or self.training
                or self.in_proj_weight is None or self.in_proj_bias is None
                or query.dtype is not self.in_proj_weight.dtype or self.num_heads % 2
                or not self.batch_first or self.bias_k is not None or self.bias_v is not None
                or self.add_zero_attn or not self._qkv_same_embed_dim
                or is_autocast_enabled()):
            return False
        args = (query, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight,
                self.out_proj.bias)
        return not (is_grad_enabled() and any(t is not None and t.requires_grad for t in args))


class _Loss(Module):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = F._reduction(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class NLLLoss(_WeightedLoss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)
