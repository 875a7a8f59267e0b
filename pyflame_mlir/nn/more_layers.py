"""More of torch.nn's modules, each a thin wrapper of its ``F`` function:
the remaining activations, ``PReLU``, instance norm, upsampling, pixel
shuffles, the padding modules, ``Unfold``, distances and the margin and
likelihood losses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import Tensor
from . import functional as F
from .layers import _activation, _affine_parameters, _Loss, _WeightedLoss
from .linear import _check_device, _empty
from .module import Module, Parameter

__all__ = [
    "CELU", "CircularPad1d", "CircularPad2d", "ConstantPad1d", "ConstantPad2d",
    "CosineEmbeddingLoss", "CosineSimilarity", "GLU", "GaussianNLLLoss", "Hardshrink",
    "Hardsigmoid", "Hardswish", "HingeEmbeddingLoss", "InstanceNorm1d", "InstanceNorm2d",
    "LogSigmoid", "MarginRankingLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PReLU",
    "PairwiseDistance", "PixelShuffle", "PixelUnshuffle", "PoissonNLLLoss", "RReLU", "SELU",
    "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d",
    "SoftMarginLoss", "Softmin", "Softshrink", "Softsign", "Tanhshrink", "Threshold",
    "TripletMarginLoss", "Unfold", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d",
    "ZeroPad1d", "ZeroPad2d",
]

SELU = _activation("SELU", F.selu, [("inplace", False)])
CELU = _activation("CELU", F.celu, [("alpha", 1.0), ("inplace", False)])
# (torch's Hardsigmoid/Hardswish print no options, its shrinks the bare lambda)
Hardsigmoid = _activation("Hardsigmoid", F.hardsigmoid, [("inplace", False)], lambda m: "")
Hardswish = _activation("Hardswish", F.hardswish, [("inplace", False)], lambda m: "")
LogSigmoid = _activation("LogSigmoid", F.logsigmoid, [])
Softsign = _activation("Softsign", F.softsign, [])
Tanhshrink = _activation("Tanhshrink", F.tanhshrink, [])
Softmin = _activation("Softmin", F.softmin, [("dim", None)])
GLU = _activation("GLU", F.glu, [("dim", -1)])
Hardshrink = _activation("Hardshrink", F.hardshrink, [("lambd", 0.5)], lambda m: f"{m.lambd}")
Softshrink = _activation("Softshrink", F.softshrink, [("lambd", 0.5)], lambda m: f"{m.lambd}")
Threshold = _activation("Threshold", F.threshold, [("threshold", None), ("value", None),
                                                   ("inplace", False)])


class RReLU(Module):
    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace
                                                            else "")


class PReLU(Module):
    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        _check_device(device)
        self.num_parameters = num_parameters
        self.weight = Parameter(_empty((num_parameters,), dtype))
        self.weight.data.fill_(init)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class _InstanceNorm(Module):
    _dims = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        _check_device(device)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine_parameters(self, (num_features,), affine, bias, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", _empty((num_features,), dtype))
            var = _empty((num_features,), dtype)
            var.fill_(1.0)
            self.register_buffer("running_var", var)
            # torch's _NormBase keeps it (instance norm never counts with it)
            self.register_buffer("num_batches_tracked", Tensor._leaf(np.zeros((), np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        unbatched = input.ndim == self._dims + 1
        x = input.unsqueeze(0) if unbatched else input
        if x.ndim != self._dims + 2:
            raise ValueError(f"{type(self).__name__}: expected {self._dims + 1}D or "
                             f"{self._dims + 2}D input (got {input.ndim}D input)")
        use_stats = self.training or not self.track_running_stats
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            use_stats, self.momentum, self.eps)
        return y[0] if unbatched else y

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    _dims = 1


class InstanceNorm2d(_InstanceNorm):
    _dims = 2


class Upsample(Module):
    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        # stored as floats, as PyTorch's (what print shows)
        self.size, self.mode = size, mode
        self.scale_factor = tuple(float(f) for f in scale_factor) \
            if isinstance(scale_factor, tuple | list) else \
            float(scale_factor) if scale_factor else None
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.interpolate(input, self.size, self.scale_factor, self.mode,
                             self.align_corners, self.recompute_scale_factor)

    def extra_repr(self) -> str:
        what = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None \
            else f"size={self.size!r}"
        return f"{what}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, "nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, "bilinear", align_corners=True)


class PixelShuffle(Module):
    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


def _padding(name: str, mode: str, dims: int, with_value: bool) -> type[Module]:
    """torch's ``<Mode>Pad<dims>d``: padding an int (every side) or 2*dims ints."""
    def __init__(self, padding: int | Sequence[int], value: float = 0.0) -> None:
        Module.__init__(self)
        self.padding = (padding,) * (2 * dims) if isinstance(padding, int) else tuple(padding)
        if len(self.padding) != 2 * dims:
            raise ValueError(f"{name}: padding must be an int or {2 * dims} ints, got "
                             f"{padding}")
        self.value = value

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, mode)

    def extra_repr(self) -> str:
        return (f"padding={self.padding}, value={self.value}" if with_value
                else f"{self.padding}")

    init = __init__ if with_value else (lambda self, padding: __init__(self, padding))
    return type(name, (Module,), {"__init__": init, "forward": forward,
                                  "extra_repr": extra_repr, "__module__": __name__})


ZeroPad1d = _padding("ZeroPad1d", "constant", 1, False)
ZeroPad2d = _padding("ZeroPad2d", "constant", 2, False)
ConstantPad1d = _padding("ConstantPad1d", "constant", 1, True)
ConstantPad2d = _padding("ConstantPad2d", "constant", 2, True)
ReflectionPad1d = _padding("ReflectionPad1d", "reflect", 1, False)
ReflectionPad2d = _padding("ReflectionPad2d", "reflect", 2, False)
ReplicationPad1d = _padding("ReplicationPad1d", "replicate", 1, False)
ReplicationPad2d = _padding("ReplicationPad2d", "replicate", 2, False)
CircularPad1d = _padding("CircularPad1d", "circular", 1, False)
CircularPad2d = _padding("CircularPad2d", "circular", 2, False)


class Unfold(Module):
    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = \
            kernel_size, dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class CosineSimilarity(Module):
    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class MarginRankingLoss(_Loss):
    def __init__(self, margin: float = 0.0, **kw: Any) -> None:
        super().__init__(**kw)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, self.margin,
                                     reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    def __init__(self, margin: float = 1.0, **kw: Any) -> None:
        super().__init__(**kw)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.multilabel_soft_margin_loss(input, target, self.weight,
                                             reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    def __init__(self, margin: float = 0.0, **kw: Any) -> None:
        super().__init__(**kw)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, self.margin,
                                       reduction=self.reduction)


class TripletMarginLoss(_Loss):
    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, **kw: Any) -> None:
        super().__init__(**kw)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, self.margin, self.p,
                                     self.eps, self.swap, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    def __init__(self, log_input: bool = True, full: bool = False, eps: float = 1e-8,
                 **kw: Any) -> None:
        super().__init__(**kw)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(log_input, target, self.log_input, self.full, self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    def __init__(self, *, full: bool = False, eps: float = 1e-6,
                 reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var: Any) -> Tensor:  # noqa: A002
        return F.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class MultiMarginLoss(_WeightedLoss):
    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 **kw: Any) -> None:
        super().__init__(weight, **kw)
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.multi_margin_loss(input, target, self.p, self.margin, self.weight,
                                   reduction=self.reduction)
