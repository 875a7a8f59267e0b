"""``pf.nn.utils``: gradient clipping and flattening with torch's semantics;
``rnn`` (packed sequences) and ``parametrize``/``parametrizations``
(weight and spectral norm) as torch's submodules.
Recorded lazily: clipping a step's gradients joins the step's graph (only
``error_if_nonfinite=True`` evaluates, to decide whether to raise)."""

from __future__ import annotations

import importlib
import inspect
import math
import warnings
from collections.abc import Iterable
from typing import Any

from ...autodiff import no_grad
from ...core import Tensor
from ...creation import randn
from ...creation import tensor as _tensor
from ...ops import abs as _abs
from ...ops import amax, cat, clamp, matmul, permute, reshape, stack
from ...ops import sum as _sum
from .. import functional as F
from ..module import Module, Parameter
from . import parametrizations, parametrize, prune, rnn
from .parametrizations import norm_except_dim, weight_norm_value

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "parametrizations",
           "parametrize", "prune", "remove_spectral_norm", "remove_weight_norm", "rnn",
           "spectral_norm", "vector_to_parameters", "weight_norm"]


def _as_list(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _vector_norm(x: Tensor, ord: float) -> Tensor:  # noqa: A002  (torch's name)
    if ord == math.inf:
        return amax(_abs(x))
    if ord == 2:
        return _sum(x * x) ** 0.5
    if ord == 1:
        return _sum(_abs(x))
    if ord <= 0:
        raise ValueError(f"clip_grad_norm_: norm_type {ord} is not supported (use a positive "
                         "number or inf)")
    return _sum(_abs(x) ** ord) ** (1.0 / ord)


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale the gradients so that their total ``norm_type`` norm is at most
    ``max_norm``; returns the total norm (before clipping). ``foreach`` is
    accepted for torch's signature: the clip is one recorded graph anyway."""
    del foreach
    norm_type = float(norm_type)
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return _tensor(0.0)
    with no_grad():
        norms = [_vector_norm(g, norm_type) for g in grads]
        dt = norms[0].dtype
        total = _vector_norm(stack([n if n.dtype is dt else n.astype(dt) for n in norms]),
                             norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
        clip_coef = clamp(max_norm / (total + 1e-6), max=1.0)
        for g in grads:
            g.mul_(clip_coef)
    return total


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient to ``[-clip_value, clip_value]``."""
    del foreach
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated."""
    return cat([reshape(p, -1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy slices of ``vec`` into the parameters, in order."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected a Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    n = sum(p.numel() for p in params)
    if vec.shape != (n,):
        raise ValueError(f"vector_to_parameters: vec has shape {list(vec.shape)}, the "
                         f"parameters hold {n} elements")
    offset = 0
    with no_grad():
        for p in params:
            k = p.numel()
            p.copy_(reshape(vec[offset:offset + k], p.shape))
            offset += k


class _WeightNormHook:
    """The forward pre-hook of the older ``nn.utils.weight_norm``: recomputes
    ``module.<name>`` from ``<name>_g`` and ``<name>_v`` before each call."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def compute_weight(self, module: Module) -> Tensor:
        return weight_norm_value(getattr(module, self.name + "_v"),
                                 getattr(module, self.name + "_g"), self.dim)

    def __call__(self, module: Module, inputs: object) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """torch's older ``nn.utils.weight_norm``: the parameter ``name`` is
    replaced by ``name_g`` (its norm over all dims but ``dim``) and ``name_v``
    (its direction), recombined before every forward. New code should use
    ``parametrizations.weight_norm``."""
    dim = -1 if dim is None else dim
    for hook in module._forward_pre_hooks.values():  # noqa: SLF001
        if isinstance(hook, _WeightNormHook) and hook.name == name:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter "
                               f"{name}")
    weight = module._parameters.get(name)  # noqa: SLF001
    if weight is None:
        raise ValueError(f"weight_norm: module {type(module).__name__} has no parameter {name}")
    hook = _WeightNormHook(name, dim)
    del module._parameters[name]  # noqa: SLF001
    module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, hook.compute_weight(module))
    handle = module.register_forward_pre_hook(hook)
    hook.handle = handle  # type: ignore[attr-defined]
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``weight_norm``: ``name`` is a plain parameter again."""
    for hook in list(module._forward_pre_hooks.values()):  # noqa: SLF001
        if isinstance(hook, _WeightNormHook) and hook.name == name:
            with no_grad():
                weight = hook.compute_weight(module).detach()
            hook.handle.remove()  # type: ignore[attr-defined]
            delattr(module, name)
            del module._parameters[name + "_g"]  # noqa: SLF001
            del module._parameters[name + "_v"]  # noqa: SLF001
            module.register_parameter(name, Parameter(weight))
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")


class _SpectralNormHook:
    """The forward pre-hook of the older ``nn.utils.spectral_norm``: in
    training mode one power-iteration step per call on the ``<name>_u`` /
    ``<name>_v`` buffers (updated in place), then ``<name>_orig / sigma``."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, \
            dim, eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = permute(weight, (self.dim, *(d for d in range(weight.ndim)
                                                  if d != self.dim)))
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                mat = weight_mat.detach()
                new_u, new_v = u, v
                for _ in range(self.n_power_iterations):
                    new_v = F.normalize(matmul(mat.t(), new_u), dim=0, eps=self.eps)
                    new_u = F.normalize(matmul(mat, new_v), dim=0, eps=self.eps)
                u.copy_(new_u)
                v.copy_(new_v)
        sigma = (u.detach() * matmul(weight_mat, v.detach())).sum()
        return weight / sigma

    def __call__(self, module: Module, inputs: object) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """torch's older ``nn.utils.spectral_norm``: ``name_orig`` (parameter),
    ``name_u``/``name_v`` (buffers) and a pre-hook. New code should use
    ``parametrizations.spectral_norm``."""
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    for hook in module._forward_pre_hooks.values():  # noqa: SLF001
        if isinstance(hook, _SpectralNormHook) and hook.name == name:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter "
                               f"{name}")
    hook = _SpectralNormHook(name, n_power_iterations, dim, eps)
    weight = module._parameters.get(name)  # noqa: SLF001
    if weight is None:
        raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
    h, w = hook.reshape_weight_to_matrix(weight).shape
    u = F.normalize(randn(h, dtype=weight.dtype), dim=0, eps=eps).eval()
    v = F.normalize(randn(w, dtype=weight.dtype), dim=0, eps=eps).eval()
    del module._parameters[name]  # noqa: SLF001
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    hook.handle = module.register_forward_pre_hook(hook)  # type: ignore[attr-defined]
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``spectral_norm``: ``name`` is a plain parameter again."""
    for hook in list(module._forward_pre_hooks.values()):  # noqa: SLF001
        if isinstance(hook, _SpectralNormHook) and hook.name == name:
            with no_grad():
                weight = hook.compute_weight(module, do_power_iteration=False).detach()
            hook.handle.remove()  # type: ignore[attr-defined]
            for attr in (name, name + "_u", name + "_v", name + "_orig"):
                delattr(module, attr)
            module.register_parameter(name, Parameter(weight))
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")


# ---- issue 14 (s10-surface14): torch 2.6's split of clip_grad_norm_, and its old name ----

def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The ``norm_type`` norm of the norms of ``tensors`` (e.g. the gradients)."""
    del foreach
    ts = [t for t in _as_list(tensors) if t is not None]
    norm_type = float(norm_type)
    if not ts:
        return _tensor(0.0)
    with no_grad():
        norms = [_vector_norm(t, norm_type) for t in ts]
        dt = norms[0].dtype
        total = _vector_norm(stack([n if n.dtype is dt else n.astype(dt) for n in norms]),
                             norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable "
                           "this error and scale the gradients by the non-finite norm anyway, "
                           "set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                          total_norm: Tensor, foreach: bool | None = None) -> None:
    """Scale the gradients by ``min(1, max_norm / (total_norm + 1e-6))``."""
    del foreach
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    with no_grad():
        coef = clamp(max_norm / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef)


def clip_grad_norm(parameters: Tensor | Iterable[Tensor], max_norm: float,
                   norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """Deprecated spelling of ``clip_grad_norm_`` (torch warns)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


__all__ += ["clip_grad_norm", "clip_grads_with_norm_", "get_total_norm"]


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Module:
    """``torch.nn.utils.skip_init``: the module without torch's parameter
    initialization pass; pf builds it normally (the values torch leaves are
    uninitialized memory, so any values are torch's)."""
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)


def convert_conv2d_weight_memory_format(module: Module, memory_format: Any) -> Module:
    """The module itself: pf's tensors have no strides, so no layout to convert."""
    del memory_format
    return module


convert_conv3d_weight_memory_format = convert_conv2d_weight_memory_format


def __getattr__(name: str) -> Any:
    """``pf.nn.utils.stateless`` loads on first use (it imports ``pf.func``, which
    imports ``pf.nn``)."""
    if name == "stateless":
        return importlib.import_module(f"{__name__}.stateless")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


from . import clip_grad, convert_parameters, fusion  # noqa: E402  (they re-export the above)
from .fusion import (  # noqa: E402
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)

__all__ += ["clip_grad", "convert_parameters", "fusion", "fuse_conv_bn_eval",
            "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init",
            "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]
