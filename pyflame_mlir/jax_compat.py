"""JAX's runtime queries and debugging helpers: ``pf.devices()``,
``pf.default_backend()``, ``pf.debug.print``/``callback`` and the arrays'
``block_until_ready()``. pyflame runs on the host: one CPU device (the
compiled backends are chosen per program, not per device)."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from .core import Tensor, realize
from .jit import block_until_ready
from .ops import device
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["debug", "default_backend", "device_count", "devices", "local_device_count",
           "local_devices"]


def devices(backend: str | None = None) -> list[device]:
    """JAX's ``devices()``: this process's devices (one CPU)."""
    if backend not in (None, "cpu"):
        raise RuntimeError(f"Unknown backend {backend}: pyflame's arrays live on the host "
                           "('cpu'); the backends that compile programs are chosen with "
                           "pf.set_backend")
    return [device("cpu")]


local_devices = devices


def device_count(backend: str | None = None) -> int:
    return len(devices(backend))


local_device_count = device_count


def default_backend() -> str:
    return "cpu"


def _host_values(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``args``/``kwargs`` with every tensor leaf as its numpy value (all
    computed in one graph)."""
    leaves, tree = tree_flatten((args, kwargs))
    lazy = [t for t in leaves if isinstance(t, Tensor)]
    if lazy:
        realize(lazy)
    host = [t.numpy() if isinstance(t, Tensor) else t for t in leaves]
    return tree_unflatten(tree, host)


def _debug_print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """``jax.debug.print``: ``fmt.format(*args, **kwargs)`` with the arrays'
    values (numpy's formatting), printed when called (pyflame records
    eagerly; under ``pf.compile`` reading the values makes the function run
    its Python on every call, so it prints every call, as JAX's)."""
    del ordered
    a, k = _host_values(args, kwargs)
    print(fmt.format(*a, **k))


def _debug_callback(callback: Callable[..., Any], *args: Any, ordered: bool = False,
                    **kwargs: Any) -> None:
    """``jax.debug.callback``: ``callback`` on the arguments' numpy values;
    its result is discarded."""
    del ordered
    a, k = _host_values(args, kwargs)
    callback(*a, **k)


debug = types.SimpleNamespace(print=_debug_print, callback=_debug_callback)


def _block_until_ready(self: Tensor) -> Tensor:
    """``jax.Array.block_until_ready``: the value computed; returns the array."""
    return block_until_ready(self)


Tensor.block_until_ready = _block_until_ready  # type: ignore[attr-defined]
