"""``pf.nn.attention``: torch.nn.attention's kernel selection for
``scaled_dot_product_attention``. torch picks among fused CUDA kernels
(flash, memory-efficient, cuDNN) and the math one; pf has one
implementation, the math one (``F.scaled_dot_product_attention``), so
``sdpa_kernel`` only checks its argument and records the choice: values are
what torch's MATH backend gives, whichever backend is asked for."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    """torch's backends of scaled dot product attention (same names and values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SELECTED: list[tuple[SDPBackend, ...]] = [tuple(b for b in SDPBackend
                                                 if b is not SDPBackend.ERROR)]


def selected_backends() -> tuple[SDPBackend, ...]:
    """The backends the innermost ``sdpa_kernel`` allows (all outside one)."""
    return _SELECTED[-1]


@contextmanager
def sdpa_kernel(backends: Any, set_priority: bool = False) -> Iterator[None]:
    """``with sdpa_kernel(SDPBackend.MATH):`` (or a list of backends): runs
    the block with that choice recorded (``selected_backends``); pf's one
    implementation computes what torch's math kernel computes."""
    del set_priority
    chosen = (backends,) if isinstance(backends, SDPBackend) else \
        tuple(backends) if isinstance(backends, Iterable) else (backends,)
    if not chosen or not all(isinstance(b, SDPBackend) for b in chosen):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of "
                             "SDPBackend instances")
    _SELECTED.append(chosen)
    try:
        yield
    finally:
        _SELECTED.pop()
