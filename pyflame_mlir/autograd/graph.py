"""``pf.autograd.graph``: PyTorch's ``torch.autograd.graph`` contexts about
saved tensors.

pf's backward does not keep saved tensors: it differentiates the recorded
graph, whose values stay where they are (host memory). So ``save_on_cpu``
(move what backward saves to the host) has nothing to move and changes no
number; ``saved_tensors_hooks`` (a pack/unpack pair run on every tensor an op
saves) is refused with a clear error rather than silently ignored, since pf has
no saved tensors to run them on and a hook that changes the value would change
torch's gradient. ``disable_saved_tensors_hooks`` makes entering
``saved_tensors_hooks`` raise the given message, as torch's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_DISABLED: list[str] = []  # disable_saved_tensors_hooks' messages, innermost last


class saved_tensors_hooks:  # noqa: N801  (torch's name)
    """``torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook)``:
    not supported (see the module's docstring); raises on entering."""

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> None:
        if _DISABLED:
            raise RuntimeError(_DISABLED[-1])
        raise NotImplementedError(
            "torch.autograd.graph.saved_tensors_hooks is not supported: pf's backward "
            "differentiates the recorded graph and saves no tensors for pack/unpack hooks to "
            "run on (save_on_cpu, whose hooks only move memory, is supported: a no-op here)")

    def __exit__(self, *exc: object) -> None:
        pass


class save_on_cpu(saved_tensors_hooks):  # noqa: N801
    """``torch.autograd.graph.save_on_cpu(pin_memory, device_type)``: what
    backward reads is already in host memory here; nothing changes."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        del pin_memory, device_type
        super().__init__(lambda t: t, lambda t: t)

    def __enter__(self) -> None:
        if _DISABLED:
            raise RuntimeError(_DISABLED[-1])


class disable_saved_tensors_hooks:  # noqa: N801
    """Inside it, entering ``saved_tensors_hooks`` (or ``save_on_cpu``)
    raises ``RuntimeError(error_message)``."""

    def __init__(self, error_message: str):
        self.error_message = error_message

    def __enter__(self) -> None:
        _DISABLED.append(self.error_message)

    def __exit__(self, *exc: object) -> None:
        _DISABLED.pop()


__all__ = ["disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks"]
