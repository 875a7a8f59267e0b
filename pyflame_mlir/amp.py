"""``pf.amp``: automatic mixed precision as ``torch.amp`` has it.

``autocast(device_type, dtype)`` makes the listed ops (``ops.autocast_policy``:
matmuls, convolutions, linear and attention) compute in bfloat16 or float16
and the overflow-prone ones (losses, ``prod``, linear algebra) in float32,
the other ops in their inputs' dtypes. Casts are recorded ops, so gradients
reach float32 parameters as float32. ``GradScaler`` scales the loss, unscales
the gradients, skips steps whose gradients overflowed and adapts the scale,
as torch's (that check reads the gradients: a host sync per step, as torch's
``found_inf.item()``).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .autodiff import no_grad
from .core import Tensor
from .dialects.dtypes import DType, bfloat16, float16, float64
from .dialects.dtypes import dtype as to_dtype
from .ops import AUTOCAST

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "get_autocast_dtype",
           "is_autocast_available",
           "is_autocast_enabled"]

_DEFAULT_DTYPE = {"cpu": bfloat16}


def is_autocast_available(device_type: str) -> bool:
    return device_type == "cpu"


class autocast:  # noqa: N801  (torch's name)
    """``with pf.autocast("cpu", dtype=pf.bfloat16):`` (or as a decorator).
    Only "cpu" autocasts here (pyflame has no CUDA device): "cuda" warns and
    disables, as torch does on a machine without CUDA."""

    def __init__(self, device_type: str = "cpu", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        del cache_enabled  # casts are recorded ops: CSE shares repeated ones
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: "
                             f"`{type(device_type)}`")
        self.device = device_type
        self.fast_dtype: DType | None = None
        if enabled and device_type != "cpu":
            warnings.warn(f"User provided device_type of '{device_type}', but it is not "
                          "available (pyflame autocasts on 'cpu' only). Disabling",
                          stacklevel=2)
            enabled = False
        if enabled:
            dt = to_dtype(dtype) if dtype is not None else _DEFAULT_DTYPE["cpu"]
            if dt not in (bfloat16, float16):
                warnings.warn(f"In CPU autocast, but the target dtype {dt.name} is not "
                              "supported. Disabling autocast.\nCPU Autocast only supports "
                              "dtype of torch.bfloat16, torch.float16 currently.",
                              stacklevel=2)
                enabled = False
            self.fast_dtype = dt
        self.enabled = enabled
        self._saved: list[DType | None] = []

    def __enter__(self) -> autocast:
        self._saved.append(AUTOCAST[0])
        AUTOCAST[0] = self.fast_dtype if self.enabled else None
        return self

    def __exit__(self, *exc: Any) -> None:
        AUTOCAST[0] = self._saved.pop()

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)
        return run


def is_autocast_enabled(device_type: str | None = None) -> bool:
    return AUTOCAST[0] is not None and device_type in (None, "cpu")


def get_autocast_dtype(device_type: str) -> DType:
    return AUTOCAST[0] if AUTOCAST[0] is not None else _DEFAULT_DTYPE.get(device_type,
                                                                          bfloat16)


def _cast_floats(value: Any, dtype: DType) -> Any:
    """torch's amp ``_cast``: floating tensors other than float64 cast to
    ``dtype``, through lists, tuples and dicts; everything else as it is."""
    if isinstance(value, Tensor):
        eligible = value.dtype.is_floating_point and value.dtype is not float64
        return value.to(dtype) if eligible else value
    if isinstance(value, dict):
        return {k: _cast_floats(v, dtype) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_cast_floats(v, dtype) for v in value)
    return value


def custom_fwd(fwd: Callable[..., Any] | None = None, *, device_type: str,
               cast_inputs: Any = None) -> Any:
    """torch.amp.custom_fwd, for an ``autograd.Function``'s ``forward``: with
    ``cast_inputs``, inside an enabled autocast region the floating inputs are
    cast to that dtype and ``forward`` runs with autocast off; without it,
    ``forward`` runs in the caller's autocast state, which ``custom_bwd``
    then restores for ``backward``."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    cast_to = to_dtype(cast_inputs) if cast_inputs is not None else None

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_to is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        on = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if not on:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast_floats(args, cast_to), **_cast_floats(kwargs, cast_to))
    return decorate_fwd


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str) -> Any:
    """torch.amp.custom_bwd, for an ``autograd.Function``'s ``backward``: it
    runs in the autocast state its ``custom_fwd`` forward ran in."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd


def _f32(v: float) -> float:
    """A Python float holding a float32 value (the scale's arithmetic, as torch's)."""
    with np.errstate(over="ignore"):
        return float(np.float32(v))


class GradScaler:
    """``torch.amp.GradScaler``: dynamic loss scaling for float16 training.

    ``scale(loss).backward(); scaler.step(opt); scaler.update()``: step
    unscales the gradients (unless ``unscale_`` already did, e.g. before
    clipping) and skips ``opt.step()`` when any is inf or NaN; update then
    backs the scale off, or grows it after ``growth_interval`` clean steps."""

    def __init__(self, device: str = "cpu", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if growth_factor <= 1.0:
            raise ValueError("The growth factor must be > 1.0.")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError("The backoff factor must be < 1.0.")
        if enabled and device != "cpu":  # torch on a machine without that device
            warnings.warn(f"torch.{device}.amp.GradScaler is enabled, but {device.upper()} is "
                          "not available.  Disabling. (pyflame scales on 'cpu' only)",
                          stacklevel=2)
            enabled = False
        self._device = device
        self._enabled = enabled
        self._scale = _f32(init_scale)  # torch keeps it in a float32 tensor
        self._growth_factor, self._backoff_factor = growth_factor, backoff_factor
        self._growth_interval = growth_interval
        self._growth_tracker = 0
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def scale(self, outputs: Any) -> Any:
        """``outputs * scale`` (tensors, or iterables of them)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, Iterable):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled) if isinstance(outputs, tuple | list) else scaled
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer: Any) -> dict[str, Any]:
        return self._per_optimizer.setdefault(id(optimizer), {"unscaled": False,
                                                              "stepped": False,
                                                              "found_inf": False})

    def unscale_(self, optimizer: Any) -> None:
        """Divide the optimizer's gradients by the scale, in place; notes
        whether any is inf or NaN (reads them: evaluates the backward)."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["unscaled"]:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stepped"]:
            raise RuntimeError("unscale_() is being called after step().")
        inv = _f32(np.float32(1.0) / np.float32(self._scale))  # torch: reciprocal in f32
        grads = [p.grad for group in optimizer.param_groups for p in group["params"]
                 if p.grad is not None]
        found = False
        with no_grad():
            for g in grads:
                if g.dtype is float16:  # torch's rule: keep float32 master weights
                    raise ValueError("Attempting to unscale FP16 gradients.")
                g.mul_(inv)
            for g in grads:  # one evaluation computes every gradient and its check
                if not np.isfinite(np.asarray(g.numpy(), dtype=np.float64)).all():
                    found = True
                    break
        state["unscaled"], state["found_inf"] = True, found

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step()`` unless the unscaled gradients overflowed."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        state = self._state(optimizer)
        if state["stepped"]:
            raise RuntimeError("step() has already been called since the last update().")
        if not state["unscaled"]:
            self.unscale_(optimizer)
        state["stepped"] = True
        if state["found_inf"]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back off after an overflow, grow after ``growth_interval`` clean
        steps (or set ``new_scale``); starts the next iteration."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = _f32(new_scale.item() if isinstance(new_scale, Tensor)
                               else new_scale)
        else:
            if not self._per_optimizer:
                raise RuntimeError("No inf checks were recorded prior to update.")
            if any(s["found_inf"] for s in self._per_optimizer.values()):
                self._scale = _f32(self._scale * np.float32(self._backoff_factor))
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    grown = _f32(self._scale * np.float32(self._growth_factor))
                    if math.isfinite(grown):
                        self._scale = grown
                    self._growth_tracker = 0
        self._per_optimizer = {}

    def state_dict(self) -> dict[str, Any]:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if not state_dict:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._scale = _f32(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
