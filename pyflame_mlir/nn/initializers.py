"""``jax.nn.initializers`` (``pf.nn.initializers``): each initializer is
``init(key, shape, dtype=float32)`` drawing from ``pf.random`` as JAX's
draws from ``jax.random``, so a flax/haiku-style model initialized from the
same key gets JAX's parameters (uniform draws bit for bit, normal ones to
the last bit or one ulp off: XLA's float32 erf_inv is its own polynomial) (torch's in-place
``pf.nn.init`` is the other, PyTorch-style, API)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import creation, indexing, ops
from .. import random as jrandom
from ..core import Tensor
from ..dialects.dtypes import dtype as to_dtype
from ..dialects.dtypes import float32

__all__ = ["constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal",
           "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform",
           "normal", "ones", "orthogonal", "truncated_normal", "uniform", "variance_scaling",
           "xavier_normal", "xavier_uniform", "zeros"]

Initializer = Callable[..., Tensor]


def _dt(dtype: Any) -> Any:
    dt = float32 if dtype is None else to_dtype(dtype)
    if not dt.is_floating_point:
        raise TypeError(f"initializers: a floating dtype is required, got {dt.name}")
    return dt


def _shape(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, int | np.integer) else tuple(int(d) for d in shape)


def zeros(key: Any, shape: Any, dtype: Any = None) -> Tensor:
    """Zeros (the key is ignored)."""
    return creation.zeros(list(_shape(shape)), dtype=_dt(dtype))


def ones(key: Any, shape: Any, dtype: Any = None) -> Tensor:
    """Ones (the key is ignored)."""
    return creation.ones(list(_shape(shape)), dtype=_dt(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Tensor:
        return creation.full(list(_shape(shape)), value, dtype=_dt(dtype))
    return init


def _scaled(sample: Tensor, factor: Any, dt: Any) -> Tensor:
    """``sample * factor`` with the factor rounded to ``dt`` first, as JAX's
    ``* jnp.array(factor, dtype)``."""
    return sample * creation.tensor(np.asarray(factor, dtype=dt.np), dtype=dt)


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Tensor:
        dt = _dt(dtype)
        return _scaled(jrandom.uniform(key, _shape(shape), dt), scale, dt)
    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Tensor:
        dt = _dt(dtype)
        return _scaled(jrandom.normal(key, _shape(shape), dt), stddev, dt)
    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0,
                     upper: Any = 2.0) -> Initializer:
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Tensor:
        dt = _dt(dtype)
        sample = jrandom.truncated_normal(key, lower, upper, _shape(shape), dt)
        return _scaled(sample, stddev, dt)
    return init


def _compute_fans(shape: tuple[int, ...], in_axis: int | Sequence[int],
                  out_axis: int | Sequence[int], batch_axis: int | Sequence[int]
                  ) -> tuple[float, float]:
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")

    def size(axes: int | Sequence[int]) -> int:
        return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)
    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


def variance_scaling(scale: float, mode: str, distribution: str,
                     in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                     batch_axis: int | Sequence[int] = (), dtype: Any = None) -> Initializer:
    """JAX's: a (truncated) normal or uniform draw whose variance is
    ``scale / n``, n the fan in, out, their mean or geometric mean."""
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Tensor:
        shp, dt = _shape(shape), _dt(dtype)
        fan_in, fan_out = _compute_fans(shp, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = np.asarray(scale / denominator, dtype=dt.np)  # JAX rounds it to dtype
        if distribution == "truncated_normal":
            stddev = np.sqrt(variance) / np.asarray(.87962566103423978, dtype=dt.np)
            return _scaled(jrandom.truncated_normal(key, -2, 2, shp, dt), stddev, dt)
        if distribution == "normal":
            return _scaled(jrandom.normal(key, shp, dt), np.sqrt(variance), dt)
        return _scaled(jrandom.uniform(key, shp, dt, -1), np.sqrt(3 * variance), dt)
    return init


def _special(scale: float, mode: str, distribution: str, doc: str) -> Callable[..., Initializer]:
    def make(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
             batch_axis: int | Sequence[int] = (), dtype: Any = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis,
                                dtype)
    make.__doc__ = doc
    return make


glorot_uniform = xavier_uniform = _special(1.0, "fan_avg", "uniform", "Glorot uniform.")
glorot_normal = xavier_normal = _special(1.0, "fan_avg", "truncated_normal", "Glorot normal.")
lecun_uniform = _special(1.0, "fan_in", "uniform", "LeCun uniform.")
lecun_normal = _special(1.0, "fan_in", "truncated_normal", "LeCun normal.")
he_uniform = kaiming_uniform = _special(2.0, "fan_in", "uniform", "He uniform.")
he_normal = kaiming_normal = _special(2.0, "fan_in", "truncated_normal", "He normal.")


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Tensor:
        shp, dt = _shape(shape), _dt(dtype)
        if len(shp) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if 0 in shp:
            return creation.zeros(list(shp), dtype=dt)
        n_cols = shp[column_axis]
        n_rows = math.prod(shp) // n_cols
        q = jrandom.orthogonal(key, n_rows, (), dt, n_cols)
        q = ops.reshape(q, tuple(np.delete(np.array(shp), column_axis % len(shp))) + (n_cols,))
        q = indexing.movedim(q, -1, column_axis)
        return _scaled(q, scale, dt)
    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None
                     ) -> Initializer:
    """An orthogonal matrix at the kernel's centre, zeros elsewhere (a 3-5-D
    convolution kernel, channels last)."""
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Tensor:
        shp, dt = _shape(shape), _dt(dtype)
        if len(shp) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shp[-1] < shp[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dt)(key, shp[-2:])
        center = tuple((k - 1) // 2 for k in shp[:-2])
        out = np.zeros(shp, dtype=dt.np)
        out[center] = ortho.numpy()
        return creation.tensor(out, dtype=dt)
    return init
