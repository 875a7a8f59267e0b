"""``torch.nn.utils.prune``: a pruned ``module.<name>`` is ``<name>_orig`` (the
parameter, re-registered last) times the buffer ``<name>_mask``, recomputed by
a forward pre-hook (the pruning method itself, as torch's). Pruning the same
tensor again combines the methods as torch's ``PruningContainer``: the new
method sees only what the earlier masks kept (the unpruned entries, or the
channels not yet pruned for a structured method). Masks are computed on the
host from the current values (the smallest magnitudes, the channels of
smallest norm; ties are broken as numpy's stable sort, torch's topk is not
specified there); the random methods draw from pf's generator (not torch's
stream)."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ...autodiff import no_grad
from ...core import Tensor
from ...creation import rand
from ...creation import tensor as _tensor
from ..module import Module

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured",
           "PruningContainer", "RandomStructured", "RandomUnstructured", "custom_from_mask",
           "global_unstructured", "identity", "is_pruned", "l1_unstructured", "ln_structured",
           "random_structured", "random_unstructured", "remove"]


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def _nparams_toprune(amount: float, size: int) -> int:
    """torch's ``_compute_nparams_toprune`` with its validation."""
    if not isinstance(amount, numbers.Real) or amount < 0:
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters "
                             f"to prune={size}")
        return int(amount)
    if amount > 1:
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")
    return round(amount * size)


class BasePruningMethod:
    """A pruning method: ``compute_mask(t, default_mask)`` (host arrays) and
    the forward pre-hook that recomputes ``module.<name>``."""

    PRUNING_TYPE = "unstructured"
    _tensor_name: str

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    def compute_mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def apply_mask(self, module: Module) -> Tensor:
        orig = getattr(module, self._tensor_name + "_orig")
        return orig * getattr(module, self._tensor_name + "_mask")

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any,
              importance_scores: Tensor | None = None, **kwargs: Any) -> BasePruningMethod:
        old = [k for k, h in module._forward_pre_hooks.items()
               if isinstance(h, BasePruningMethod) and h._tensor_name == name]
        if len(old) > 1:
            raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor "
                                 f"{name} of module {type(module).__name__}. Use a "
                                 "PruningContainer.")
        old_method = module._forward_pre_hooks.pop(old[0]) if old else None
        method: BasePruningMethod = cls(*args, **kwargs)
        method._tensor_name = name
        if old_method is not None:
            if isinstance(old_method, PruningContainer):
                old_method.add_pruning_method(method)
                method = old_method
            else:
                method = PruningContainer(old_method, method)
        orig = getattr(module, name)
        scores = orig if importance_scores is None else importance_scores
        if tuple(scores.shape) != tuple(orig.shape):
            raise AssertionError(f"importance_scores should have the same shape as parameter "
                                 f"{name} of {module}")
        if not isinstance(method, PruningContainer):
            del module._parameters[name]
            module.register_parameter(name + "_orig", orig)
            default = np.ones(orig.shape, dtype=orig.dtype.np)
        else:
            default = _host(getattr(module, name + "_mask")).copy()
        mask = method.compute_mask(_host(scores), default)
        module.register_buffer(name + "_mask", _tensor(mask.astype(orig.dtype.np)))
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def remove(self, module: Module) -> None:
        """torch's: ``<name>`` becomes a parameter again (the ``_orig`` object,
        its data the pruned values), mask and hook gone."""
        with no_grad():  # (a value without history: ``orig`` takes it and stays a root)
            weight = self.apply_mask(module)
        if self._tensor_name in module.__dict__:
            delattr(module, self._tensor_name)
        orig = module._parameters.pop(self._tensor_name + "_orig")
        orig.data = weight
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """Successive pruning methods of one tensor (torch's): each new mask is
    computed where the previous ones kept entries, and multiplied in."""

    def __init__(self, *methods: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(methods) == 1 and isinstance(methods[0], Iterable) and \
                not isinstance(methods[0], BasePruningMethod):
            methods = tuple(methods[0])
        for m in methods:
            self.add_pruning_method(m)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if self._pruning_methods and method._tensor_name != self._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._tensor_name = method._tensor_name
        self._pruning_methods += (method,)

    def compute_mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        method = self._pruning_methods[-1]
        new = default_mask.copy()
        if method.PRUNING_TYPE == "unstructured":
            keep = default_mask == 1
            new[keep] = method.compute_mask(t[keep], default_mask[keep])
            return new
        if method.PRUNING_TYPE == "structured":
            dim = method.dim % t.ndim  # type: ignore[attr-defined]
            others = tuple(d for d in range(t.ndim) if d != dim)
            channels = default_mask.sum(axis=others) != 0
            slc = tuple(channels if d == dim else slice(None) for d in range(t.ndim))
            new[slc] = method.compute_mask(t[slc], default_mask[slc])
            return new
        if method.PRUNING_TYPE == "global":
            return method.compute_mask(t, default_mask)
        raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")


class Identity(BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        return default_mask.copy()

    @classmethod
    def apply(cls, module: Module, name: str) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _nparams_toprune(amount, 1 if isinstance(amount, float) else amount)  # validation
        self.amount = amount

    def _order(self, t: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def compute_mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        k = _nparams_toprune(self.amount, t.size)
        mask = default_mask.copy()
        if k:
            mask.reshape(-1)[self._order(t.reshape(-1))[:k]] = 0
        return mask


class L1Unstructured(_Unstructured):
    """The ``amount`` entries of smallest magnitude."""

    def _order(self, t: np.ndarray) -> np.ndarray:
        return np.argsort(np.abs(t), kind="stable")

    @classmethod
    def apply(cls, module: Module, name: str, amount: float,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomUnstructured(_Unstructured):
    """``amount`` entries at random (pf's generator)."""

    def _order(self, t: np.ndarray) -> np.ndarray:
        return np.argsort(-_host(rand(t.size)), kind="stable")

    @classmethod
    def apply(cls, module: Module, name: str, amount: float  # type: ignore[override]
              ) -> BasePruningMethod:
        return super().apply(module, name, amount=amount)


class _Structured(BasePruningMethod):
    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, dim: int = -1) -> None:
        _nparams_toprune(amount, 1 if isinstance(amount, float) else amount)
        self.amount, self.dim = amount, dim

    def _keep(self, t: np.ndarray, dim: int, keep: int) -> np.ndarray:
        raise NotImplementedError

    def compute_mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        if t.ndim <= 1:
            raise ValueError("Structured pruning can only be applied to multidimensional "
                             f"tensors. Found tensor of shape {list(t.shape)} with {t.ndim} "
                             "dims")
        if not -t.ndim <= self.dim < t.ndim:
            raise IndexError(f"Invalid index {self.dim} for tensor of size {list(t.shape)}")
        dim = self.dim % t.ndim
        size = t.shape[dim]
        k = _nparams_toprune(self.amount, size)
        if k == 0:
            return default_mask.copy()
        kept = self._keep(t, dim, size - k)
        mask = np.zeros_like(default_mask)
        mask[tuple(kept if d == dim else slice(None) for d in range(t.ndim))] = 1
        return mask * default_mask


class LnStructured(_Structured):
    """The ``amount`` channels along ``dim`` of smallest L``n`` norm."""

    def __init__(self, amount: float, n: float | str, dim: int = -1) -> None:
        super().__init__(amount, dim)
        self.n = n

    def _keep(self, t: np.ndarray, dim: int, keep: int) -> np.ndarray:
        flat = np.moveaxis(t, dim, 0).reshape(t.shape[dim], -1)
        n = self.n
        if n in ("fro", 2):
            norm = np.sqrt((flat.astype(np.float64) ** 2).sum(1))
        elif n == "nuc":
            raise ValueError("ln_structured: n='nuc' is not a vector norm")
        elif n == np.inf:
            norm = np.abs(flat).max(1)
        elif n == -np.inf:
            norm = np.abs(flat).min(1)
        elif n == 0:
            norm = (flat != 0).sum(1).astype(np.float64)
        else:
            norm = (np.abs(flat.astype(np.float64)) ** n).sum(1) ** (1.0 / n)
        return np.sort(np.argsort(-norm, kind="stable")[:keep])

    @classmethod
    def apply(cls, module: Module, name: str, amount: float,  # type: ignore[override]
              n: float | str, dim: int, importance_scores: Tensor | None = None
              ) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class RandomStructured(_Structured):
    """``amount`` channels along ``dim`` at random (pf's generator)."""

    def _keep(self, t: np.ndarray, dim: int, keep: int) -> np.ndarray:
        prob = _host(rand(t.shape[dim]))
        return np.sort(np.argsort(-prob, kind="stable")[:keep])

    @classmethod
    def apply(cls, module: Module, name: str, amount: float,  # type: ignore[override]
              dim: int = -1) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, dim=dim)


class CustomFromMask(BasePruningMethod):
    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        mask = _host(self.mask).astype(default_mask.dtype)
        if mask.shape != default_mask.shape:
            raise AssertionError(f"custom mask of shape {list(mask.shape)} for a tensor of "
                                 f"shape {list(default_mask.shape)}")
        return default_mask * mask

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor  # type: ignore[override]
              ) -> BasePruningMethod:
        return super().apply(module, name, mask=mask)


def identity(module: Module, name: str) -> Module:
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: float) -> Module:
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: float,
                    importance_scores: Tensor | None = None) -> Module:
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: float, dim: int) -> Module:
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: float, n: float | str, dim: int,
                  importance_scores: Tensor | None = None) -> Module:
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters: Iterable[tuple[Module, str]],
                        pruning_method: type[BasePruningMethod],
                        importance_scores: dict[tuple[Module, str], Tensor] | None = None,
                        **kwargs: Any) -> None:
    """One unstructured method over the parameters' entries together (the
    current values, or ``importance_scores``), each given its part of the
    mask with ``custom_from_mask``."""
    params: Sequence[tuple[Module, str]] = list(parameters)
    if not params:
        raise TypeError("global_unstructured(): parameters must be a non-empty iterable of "
                        "(module, name) pairs")
    scores_of = importance_scores or {}
    scores = np.concatenate([_host(scores_of.get((m, n), getattr(m, n))).reshape(-1)
                             for m, n in params])
    default = np.concatenate([
        _host(getattr(m, n + "_mask")).reshape(-1) if hasattr(m, n + "_mask")
        else np.ones(getattr(m, n).numel(), dtype=scores.dtype) for m, n in params])
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    method._tensor_name = "temp"
    final = PruningContainer(method).compute_mask(scores, default)
    at = 0
    for m, n in params:
        p = getattr(m, n)
        k = p.numel()
        custom_from_mask(m, n, _tensor(final[at:at + k].reshape(p.shape)))
        at += k


def remove(module: Module, name: str) -> Module:
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module: Module) -> bool:
    return any(isinstance(h, BasePruningMethod)
               for m in module.modules() for h in m._forward_pre_hooks.values())

