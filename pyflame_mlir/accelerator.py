"""``pf.accelerator``: torch's device-agnostic queries (pytorch/examples now
picks its device with ``torch.accelerator.current_accelerator()`` when
``torch.accelerator.is_available()``). pyflame has no accelerator device of
torch's kinds (GPUs run through the MAX backend, ``pf.set_backend("max")``),
so the answers are torch's on a CPU-only machine."""

from __future__ import annotations

__all__ = ["current_accelerator", "device_count", "is_available"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def current_accelerator(check_available: bool = False) -> None:
    """The accelerator's device type: none here (torch returns None too)."""
    del check_available
