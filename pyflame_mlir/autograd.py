"""``pf.autograd``: PyTorch's ``torch.autograd`` functions."""

from .autodiff import autograd_grad as grad
from .autodiff import backward as _backward
from .autodiff import enable_grad, is_grad_enabled, no_grad, set_grad_enabled


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves."""
    ts = tensors if isinstance(tensors, list | tuple) else [tensors]
    gs = grad_tensors if isinstance(grad_tensors, list | tuple) else [grad_tensors] * len(ts)
    for i, (t, g) in enumerate(zip(ts, gs)):  # one pass in PyTorch: free after the last
        _backward(t, g, retain_graph=True if i < len(ts) - 1 else retain_graph,
                  create_graph=create_graph)


__all__ = ["backward", "enable_grad", "grad", "is_grad_enabled", "no_grad",
           "set_grad_enabled"]
