"""``pf.nn.grad``: torch.nn.grad's gradients of a convolution with respect
to its input or its weight, given the output's gradient, as the
vector-Jacobian products of ``F.conv1d/2d/3d`` (the convolution is linear
in each, so this is exact and has the convolution's own semantics)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..autodiff import vjp
from ..core import Tensor
from ..creation import zeros
from ..ops import as_tensor_arg
from . import functional as F  # noqa: N812  (torch's spelling)

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _check_output(name: str, y: Tensor, grad_output: Tensor) -> None:
    if tuple(y.shape) != tuple(grad_output.shape):
        raise RuntimeError(f"{name}: grad_output of shape {list(grad_output.shape)} does not "
                           f"match the convolution's output shape {list(y.shape)}")


def _input_grad(name: str, conv: Callable[..., Tensor], input_size: Sequence[int],
                weight: Tensor, grad_output: Tensor, stride: Any, padding: Any,
                dilation: Any, groups: int) -> Tensor:
    w, g = as_tensor_arg(weight), as_tensor_arg(grad_output)
    x0 = zeros(*tuple(input_size), dtype=g.dtype)
    y, pullback = vjp(lambda x: conv(x, w, None, stride, padding, dilation, groups), x0)
    _check_output(name, y, g)
    return pullback(g)[0]


def _weight_grad(name: str, conv: Callable[..., Tensor], input: Tensor,  # noqa: A002
                 weight_size: Sequence[int], grad_output: Tensor, stride: Any, padding: Any,
                 dilation: Any, groups: int) -> Tensor:
    x, g = as_tensor_arg(input), as_tensor_arg(grad_output)
    w0 = zeros(*tuple(weight_size), dtype=g.dtype)
    y, pullback = vjp(lambda w: conv(x, w, None, stride, padding, dilation, groups), w0)
    _check_output(name, y, g)
    return pullback(g)[0]


def conv1d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor,
                 stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1
                 ) -> Tensor:
    return _input_grad("conv1d_input", F.conv1d, input_size, weight, grad_output, stride,
                       padding, dilation, groups)


def conv1d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor,  # noqa: A002
                  stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1
                  ) -> Tensor:
    return _weight_grad("conv1d_weight", F.conv1d, input, weight_size, grad_output, stride,
                        padding, dilation, groups)


def conv2d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor,
                 stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1
                 ) -> Tensor:
    return _input_grad("conv2d_input", F.conv2d, input_size, weight, grad_output, stride,
                       padding, dilation, groups)


def conv2d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor,  # noqa: A002
                  stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1
                  ) -> Tensor:
    return _weight_grad("conv2d_weight", F.conv2d, input, weight_size, grad_output, stride,
                        padding, dilation, groups)


def conv3d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor,
                 stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1
                 ) -> Tensor:
    return _input_grad("conv3d_input", F.conv3d, input_size, weight, grad_output, stride,
                       padding, dilation, groups)


def conv3d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor,  # noqa: A002
                  stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1
                  ) -> Tensor:
    return _weight_grad("conv3d_weight", F.conv3d, input, weight_size, grad_output, stride,
                        padding, dilation, groups)
