"""Thin modules over issue 14's nn.functional additions (branch surface): 3-d
convolution and pools, channel shuffle, Lp pools, local response norm."""

from __future__ import annotations

from typing import Any

from ..core import Tensor
from . import functional as F
from .layers import AvgPool2d, _ConvNd, _MaxPoolNd
from .module import Module


class Conv3d(_ConvNd):
    _nsp = 3

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode == "zeros":
            return F.conv3d(input, self.weight, self.bias, self.stride, self.padding,
                            self.dilation, self.groups)
        pairs = F._conv_padding("Conv3d", self.padding, self.kernel_size, self.dilation,
                                self.stride)
        flat = [v for a, b in reversed(pairs) for v in (a, b)]
        return F.conv3d(F.pad(input, flat, mode=self.padding_mode), self.weight, self.bias,
                        self.stride, 0, self.dilation, self.groups)


class MaxPool3d(_MaxPoolNd):
    _fn = staticmethod(F.max_pool3d)


class AvgPool3d(AvgPool2d):  # the same arguments, one more spatial dim
    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveMaxPool1d(Module):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class ChannelShuffle(Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)


class _LPPool(Module):
    _fn = staticmethod(F.lp_pool2d)

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.norm_type, self.kernel_size, self.stride,
                              self.ceil_mode)


class LPPool1d(_LPPool):
    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPool):
    pass


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)


__all__ = ["AdaptiveMaxPool1d", "AvgPool3d", "ChannelShuffle", "Conv3d", "LPPool1d",
           "LPPool2d", "LocalResponseNorm", "MaxPool3d"]
