"""``pf.nn.init``: torch.nn.init's initializers, in place under ``no_grad``.

The values are drawn on the host from the generator ``pf.manual_seed`` seeds
(in float64, then cast) and copied into the tensor, so an initialized
parameter is a realized value, not a lazy graph the first training step
would have to compute. The gains and fans are torch's."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..autodiff import no_grad
from ..core import Tensor
from ..creation import Generator, rand, randn, randperm

__all__ = ["calculate_gain", "constant_", "eye_", "kaiming_normal_", "kaiming_uniform_",
           "normal_", "ones_", "orthogonal_", "trunc_normal_", "uniform_", "xavier_normal_",
           "xavier_uniform_", "zeros_"]


def _fill(tensor: Tensor, values: np.ndarray) -> Tensor:
    with no_grad():
        return tensor.copy_(Tensor._leaf(np.asarray(values, dtype=tensor.dtype.np)))


def _uniform(shape: tuple[int, ...], generator: Generator | None = None) -> np.ndarray:
    return rand(*shape, dtype="float64", generator=generator).numpy()


def _normal(shape: tuple[int, ...], generator: Generator | None = None) -> np.ndarray:
    return randn(*shape, dtype="float64", generator=generator).numpy()


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """torch's recommended gain for a nonlinearity."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int | float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than "
                         "2 dimensions")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: Generator | None = None) -> Tensor:
    return _fill(tensor, a + (b - a) * _uniform(tensor.shape, generator))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: Generator | None = None) -> Tensor:
    return _fill(tensor, mean + std * _normal(tensor.shape, generator))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Generator | None = None) -> Tensor:
    """Normal(mean, std) restricted to [a, b] (redrawing values outside)."""
    if not a < b:
        raise ValueError(f"trunc_normal_: a={a} must be smaller than b={b}")
    values = mean + std * _normal(tensor.shape, generator)
    for _ in range(1000):
        bad = (values < a) | (values > b)
        if not bad.any():
            break
        values[bad] = mean + std * _normal((int(bad.sum()),), generator)
    else:
        raise ValueError(f"trunc_normal_: [{a}, {b}] holds too little of Normal({mean}, "
                         f"{std}) to sample from")
    return _fill(tensor, values)


def constant_(tensor: Tensor, val: float) -> Tensor:
    return _fill(tensor, np.full(tensor.shape, val, dtype=np.float64))


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0,
                    generator: Generator | None = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: Generator | None = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu",
                     generator: Generator | None = None) -> Tensor:
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu",
                    generator: Generator | None = None) -> Tensor:
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0,
                generator: Generator | None = None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR of a normal one, signs fixed as torch."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _normal((rows, cols), generator)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, (gain * q).reshape(tensor.shape))


# ---- issue 14 (s10-surface14): dirac_ and torch's deprecated spellings ----

def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The identity of a {3, 4, 5}-d convolution weight (per group), as torch."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_per_group = tensor.shape[0] // groups
    if tensor.shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    values = np.zeros(tensor.shape)
    centre = tuple(s // 2 for s in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(out_per_group, tensor.shape[1])):
            values[(g * out_per_group + d, d, *centre)] = 1
    return _fill(tensor, values)


def _deprecated(name: str, fn: Any) -> Any:
    def old(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`.",
                      FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    old.__name__ = old.__qualname__ = name
    old.__doc__ = f"Deprecated spelling of ``{name}_``."
    return old


uniform = _deprecated("uniform", uniform_)
normal = _deprecated("normal", normal_)
constant = _deprecated("constant", constant_)
xavier_uniform = _deprecated("xavier_uniform", xavier_uniform_)
xavier_normal = _deprecated("xavier_normal", xavier_normal_)
kaiming_uniform = _deprecated("kaiming_uniform", kaiming_uniform_)
kaiming_normal = _deprecated("kaiming_normal", kaiming_normal_)
orthogonal = _deprecated("orthogonal", orthogonal_)

__all__ += ["constant", "dirac_", "kaiming_normal", "kaiming_uniform", "normal", "orthogonal",
            "uniform", "xavier_normal", "xavier_uniform"]


# ---- session 11: sparse_ and the last deprecated spellings ----

def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01,
            generator: Generator | None = None) -> Tensor:
    """torch's: N(0, std) values, then ``ceil(sparsity * rows)`` random rows
    of each column zeroed (Martens 2010)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    values = _normal((rows, cols), generator) * std
    for col in range(cols):
        order = randperm(rows, generator=generator).numpy()
        values[order[:num_zeros], col] = 0.0
    return _fill(tensor, values)


dirac = _deprecated("dirac", dirac_)
eye = _deprecated("eye", eye_)
sparse = _deprecated("sparse", sparse_)

__all__ += ["dirac", "eye", "sparse", "sparse_"]
