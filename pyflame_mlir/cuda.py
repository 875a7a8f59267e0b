"""``pf.cuda``: the queries a PyTorch script makes before choosing a device
(``device = "cuda" if torch.cuda.is_available() else "cpu"``). pyflame has
no CUDA device of its own (GPUs are reached through the MAX backend,
``pf.set_backend("max")``), so the answers are torch's on a machine without
CUDA: not available, no devices; seeding is a no-op as torch's lazy seeding
is there; what needs a device raises."""

from __future__ import annotations

__all__ = ["device_count", "empty_cache", "is_available", "is_bf16_supported",
           "is_initialized", "manual_seed", "manual_seed_all", "synchronize"]


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


def empty_cache() -> None:
    """No CUDA caching allocator to empty."""


def synchronize(device: object = None) -> None:
    raise RuntimeError("pf.cuda.synchronize: pyflame has no CUDA device (GPUs run through the "
                       "MAX backend: pf.set_backend('max'))")
