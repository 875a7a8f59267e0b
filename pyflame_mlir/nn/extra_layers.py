"""Modules from issue 14's scan of ``torch.nn`` that pf lacked: the 3-d
forms of the norms, dropout and pads (their functional ops take 5-d inputs
already), ``AdaptiveAvgPool1d`` and ``Softmax2d``."""

from __future__ import annotations

from typing import Any

from ..core import Tensor
from . import functional as F  # noqa: N812  (torch's spelling)
from .layers import _BatchNorm, _DropoutNd
from .module import Module
from .more_layers import _InstanceNorm, _padding

__all__ = ["AdaptiveAvgPool1d", "BatchNorm3d", "CircularPad3d", "ConstantPad3d", "Dropout3d",
           "InstanceNorm3d", "ReflectionPad3d", "ReplicationPad3d", "Softmax2d", "ZeroPad3d"]


class BatchNorm3d(_BatchNorm):
    _input_dims = (5,)


class InstanceNorm3d(_InstanceNorm):
    _dims = 3


class Dropout3d(_DropoutNd):
    _fn = staticmethod(F.dropout3d)


class AdaptiveAvgPool1d(Module):
    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class Softmax2d(Module):
    """Softmax over the channels of [N, C, H, W] (or [C, H, W]) inputs."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             "instead")
        return F.softmax(input, -3)


ZeroPad3d = _padding("ZeroPad3d", "constant", 3, False)
ConstantPad3d = _padding("ConstantPad3d", "constant", 3, True)
ReflectionPad3d = _padding("ReflectionPad3d", "reflect", 3, False)
ReplicationPad3d = _padding("ReplicationPad3d", "replicate", 3, False)
CircularPad3d = _padding("CircularPad3d", "circular", 3, False)
