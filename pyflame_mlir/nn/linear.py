"""``Identity``, ``Linear``, ``Bilinear`` and ``Embedding`` with torch's
constructors, initialization and ``extra_repr``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autodiff import no_grad
from ..core import Tensor
from ..dialects.dtypes import default_float
from ..dialects.dtypes import dtype as to_dtype
from ..ops import matmul, reshape, unsqueeze
from ..ops import sum as _sum
from . import functional as F
from . import init
from .module import Module, Parameter

__all__ = ["Bilinear", "Embedding", "Identity", "Linear"]


def _empty(shape: tuple[int, ...], dtype: Any) -> Tensor:
    dt = to_dtype(dtype) if dtype is not None else default_float()
    return Tensor._leaf(np.zeros(shape, dtype=dt.np))


def _check_device(device: Any) -> None:
    if device is not None and str(device).split(":")[0] != "cpu":
        raise RuntimeError(f"device {str(device)!r} is not supported (only 'cpu'); choose "
                           "where graphs run with pf.set_backend")


class Identity(Module):
    """Returns its input; ignores any constructor arguments (as torch)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:  # noqa: A002
        return input


class Linear(Module):
    """``y = x @ W.T + b`` with ``W`` of shape (out_features, in_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        _check_device(device)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in_features), dtype))
        if bias:
            self.bias = Parameter(_empty((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # torch's: kaiming_uniform_(a=sqrt(5)) is U(-1/sqrt(fan_in), 1/sqrt(fan_in))
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.shape[-1:] != (self.in_features,):
            raise ValueError(f"Linear: input of shape {list(input.shape)} does not end with "
                             f"in_features={self.in_features}")
        return F.linear(input, self.weight, self.bias)  # its home (and autocast policy)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """``y[n, o] = x1[n] @ W[o] @ x2[n] + b[o]``."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        _check_device(device)
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in1_features, in2_features), dtype))
        if bias:
            self.bias = Parameter(_empty((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        o, i, j = self.weight.shape
        if input1.shape[-1:] != (i,) or input2.shape[-1:] != (j,) or \
                input1.shape[:-1] != input2.shape[:-1]:
            raise ValueError(f"Bilinear: inputs of shapes {list(input1.shape)} and "
                             f"{list(input2.shape)} do not match (..., {i}) and (..., {j})")
        batch = input1.shape[:-1]
        x1 = reshape(input1, (-1, i))
        x2 = reshape(input2, (-1, j))
        # x1 @ W viewed as (in1, out*in2), then contracted with x2 over in2
        w = reshape(self.weight.permute(1, 0, 2), (i, o * j))
        t = reshape(matmul(x1, w), (-1, o, j))
        out = _sum(t * unsqueeze(x2, 1), -1)
        if self.bias is not None:
            out = out + self.bias
        return reshape(out, (*batch, o))

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class Embedding(Module):
    """A lookup table: ``Embedding(num, dim)(idx)`` is ``weight[idx]``; the row
    at ``padding_idx`` gets no gradient. ``sparse=True``: torch's sparse
    gradient, stored dense with its rows recorded (``SparseAdam`` reads them)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        _check_device(device)
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                assert padding_idx < num_embeddings, \
                    "Padding_idx must be within num_embeddings"
            elif padding_idx < 0:
                assert padding_idx >= -num_embeddings, \
                    "Padding_idx must be within num_embeddings"
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(_empty((num_embeddings, embedding_dim), dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError("Shape of weight does not match num_embeddings and "
                                 "embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        if embeddings.ndim != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx=padding_idx, max_norm=max_norm,
                   norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse,
                   _weight=embeddings, _freeze=freeze)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:  # torch's repr names every non-default option
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s
