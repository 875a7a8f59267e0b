"""``torch.nn.utils.stateless``: ``functional_call`` (``pf.func``'s; torch
deprecates this path for ``torch.func.functional_call``). Loaded on first
use of ``pf.nn.utils.stateless`` (``pf.func`` sits on ``pf.nn``)."""

from ...func import functional_call

__all__ = ["functional_call"]
