"""``pf.utils.checkpoint``: torch.utils.checkpoint's entry point.

``checkpoint(function, *args)`` returns ``function(*args)``: its values and
gradients. Not implemented: the memory saving (recomputing the segment's
activations during backward); the reference backend keeps them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["checkpoint", "checkpoint_sequential"]


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Any = None, determinism_check: str = "default",
               debug: bool = False, preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    del use_reentrant, context_fn, determinism_check, debug, preserve_rng_state
    return function(*args, **kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Any,  # noqa: A002
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Run the modules of ``functions`` (a Sequential or a list) in order."""
    del segments, use_reentrant, kwargs
    for f in (list(functions.children()) if hasattr(functions, "children") else functions):
        input = f(input)
    return input
