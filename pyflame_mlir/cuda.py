"""``pf.cuda``: the queries a PyTorch script makes before choosing a device
(``device = "cuda" if torch.cuda.is_available() else "cpu"``). pyflame has
no CUDA device of its own (GPUs are reached through the MAX backend,
``pf.set_backend("max")``), so the answers are torch's on a machine without
CUDA: not available, no devices; seeding is a no-op as torch's lazy seeding
is there; what needs a device raises."""

from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Any

from . import amp as _amp
from .dialects.dtypes import float16

__all__ = ["amp", "current_device", "device_count", "empty_cache", "get_device_capability",
           "get_device_name", "is_available", "is_bf16_supported", "is_initialized",
           "manual_seed", "manual_seed_all", "max_memory_allocated", "max_memory_reserved",
           "memory_allocated", "memory_reserved", "seed", "seed_all", "synchronize"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    del including_emulation  # no CUDA device: neither natively nor emulated
    return False


def manual_seed(seed: int) -> None:
    """No CUDA generator to seed (torch defers it until CUDA initializes)."""


def manual_seed_all(seed: int) -> None:
    """No CUDA generators to seed."""


def seed() -> None:
    """No CUDA generator to seed."""


def seed_all() -> None:
    """No CUDA generators to seed."""


def empty_cache() -> None:
    """No CUDA caching allocator to empty."""


# the memory statistics logging code prints: 0 bytes, as torch's without CUDA
def memory_allocated(device: object = None) -> int:
    del device
    return 0


def max_memory_allocated(device: object = None) -> int:
    del device
    return 0


def memory_reserved(device: object = None) -> int:
    del device
    return 0


def max_memory_reserved(device: object = None) -> int:
    del device
    return 0


def _no_device(what: str) -> RuntimeError:
    return RuntimeError(f"pf.cuda.{what}: pyflame has no CUDA device (torch.cuda.is_available() "
                        "is False here; GPUs run through the MAX backend: "
                        "pf.set_backend('max'))")


def current_device() -> int:
    raise _no_device("current_device")


def get_device_name(device: object = None) -> str:
    del device
    raise _no_device("get_device_name")


def get_device_capability(device: object = None) -> tuple[int, int]:
    del device
    raise _no_device("get_device_capability")


def synchronize(device: object = None) -> None:
    raise RuntimeError("pf.cuda.synchronize: pyflame has no CUDA device (GPUs run through the "
                       "MAX backend: pf.set_backend('max'))")


def _grad_scaler(*args: Any, **kwargs: Any) -> _amp.GradScaler:
    """``torch.cuda.amp.GradScaler(...)``: deprecated for ``torch.amp.GradScaler("cuda",
    ...)``, which warns and disables here (no CUDA), as torch on such a machine."""
    warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                  "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
    return _amp.GradScaler("cuda", *args, **kwargs)


def _autocast(enabled: bool = True, dtype: Any = None, cache_enabled: bool = True
              ) -> _amp.autocast:
    """``torch.cuda.amp.autocast(...)``: ``torch.amp.autocast("cuda", ...)`` (disabled:
    no CUDA)."""
    warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                  "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
    return _amp.autocast("cuda", dtype=dtype if dtype is not None else float16,
                         enabled=enabled, cache_enabled=cache_enabled)


def _custom_fwd(fwd: Any = None, *, cast_inputs: Any = None) -> Any:
    """``torch.cuda.amp.custom_fwd``: ``torch.amp.custom_fwd(device_type="cuda")``."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def _custom_bwd(bwd: Any) -> Any:
    """``torch.cuda.amp.custom_bwd``: ``torch.amp.custom_bwd(device_type="cuda")``."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return _amp.custom_bwd(bwd, device_type="cuda")


# torch.cuda.amp: the deprecated spellings older training scripts use
amp = SimpleNamespace(GradScaler=_grad_scaler, autocast=_autocast, custom_fwd=_custom_fwd,
                      custom_bwd=_custom_bwd)


class _CudaLegacyType(type):
    """``torch.cuda.FloatTensor`` and its kin: names a script may refer to
    (``dtype = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor``);
    making one raises as torch without CUDA does, and no tensor is one."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        del args, kwargs
        raise TypeError(f"type torch.cuda.{cls.__name__} not available: pyflame has no CUDA "
                        f"device (use torch.{cls.__name__}, or .to(dtype))")

    def __instancecheck__(cls, obj: Any) -> bool:
        del obj
        return False


_CUDA_TYPES = ("BFloat16", "Bool", "Byte", "Char", "Double", "Float", "Half", "Int", "Long",
               "Short")
for _name in _CUDA_TYPES:
    globals()[f"{_name}Tensor"] = _CudaLegacyType(f"{_name}Tensor", (), {})
    __all__.append(f"{_name}Tensor")
