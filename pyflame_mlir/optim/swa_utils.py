"""``pf.optim.swa_utils``: torch's stochastic weight averaging and EMA
helpers (``AveragedModel``, ``SWALR``, ``update_bn`` and the averaging
functions), with torch's formulas, state dicts and defaults. The averages
are in-place updates under ``no_grad``, so they are recorded lazily like an
optimizer step."""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable
from typing import Any

from ..autodiff import no_grad
from ..core import Tensor, detach
from ..creation import tensor as _tensor
from ..dialects.dtypes import int64
from ..nn.layers import _BatchNorm
from ..nn.module import Module
from .lr_scheduler import LRScheduler
from .optimizer import Optimizer

__all__ = ["SWALR", "AveragedModel", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn", "update_bn"]

_ParamList = list[Tensor]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def _count(n: Any) -> float:
    return float(n.item()) if isinstance(n, Tensor) else float(n)


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[_ParamList, _ParamList, Any], None]:
    """EMA over lists of parameters, in place: ``ema += (1 - decay) (p - ema)``."""
    _check_decay(decay)

    def ema_update(ema_param_list: _ParamList, current_param_list: _ParamList, _: Any) -> None:
        with no_grad():
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                if p_ema.dtype.is_floating_point:
                    p_ema.add_((p_model - p_ema) * (1 - decay))  # torch's lerp_
                else:
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn() -> Callable[[_ParamList, _ParamList, Any], None]:
    """The running equal-weight average over lists of parameters, in place."""

    def swa_update(averaged_param_list: _ParamList, current_param_list: _ParamList,
                   num_averaged: Any) -> None:
        with no_grad():
            w = 1.0 / (_count(num_averaged) + 1)
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                p_avg.add_((p_model - p_avg) * w)
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Any], Tensor]:
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (
                _count(num_averaged) + 1)
    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` whose parameters (and, with ``use_buffers``,
    buffers) are running averages of ``model``'s: ``update_parameters(model)``
    copies them the first time, then applies ``avg_fn`` (per tensor) or
    ``multi_avg_fn`` (per list; the equal-weight SWA average by default).
    Without ``use_buffers`` the buffers are copied from ``model``."""

    def __init__(self, model: Module, device: Any = None,
                 avg_fn: Callable[[Tensor, Tensor, Any], Tensor] | None = None,
                 multi_avg_fn: Callable[[_ParamList, _ParamList, Any], None] | None = None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        del device
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        self.register_buffer("n_averaged", _tensor(0, dtype=int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        if self.use_buffers:
            mine = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            theirs = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            mine, theirs = list(self.parameters()), list(model.parameters())
        n = int(self.n_averaged.item())
        with no_grad():
            pairs = list(zip(mine, theirs, strict=False))
            if n == 0:
                for p_avg, p_model in pairs:
                    p_avg.copy_(detach(p_model))
            elif self.avg_fn is not None:
                for p_avg, p_model in pairs:
                    p_avg.copy_(self.avg_fn(detach(p_avg), detach(p_model), self.n_averaged))
            else:
                fn = self.multi_avg_fn or get_swa_multi_avg_fn()
                fn([p for p, _ in pairs], [detach(q) for _, q in pairs], self.n_averaged)
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.copy_(detach(b_model))
            self.n_averaged.add_(1)


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the batch norms' running statistics with one pass over
    ``loader`` (a cumulative average: momentum None), as torch's."""
    del device
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for input in loader:  # noqa: A001
            if isinstance(input, list | tuple):
                input = input[0]  # noqa: A001, PLW2901
            model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate to ``swa_lr`` over ``anneal_epochs``
    epochs ("cos" or "linear"), then keeps it there (torch's formula)."""

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float],
                 anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        groups = optimizer.param_groups
        if isinstance(swa_lr, list | tuple):
            if len(swa_lr) != len(groups):
                raise ValueError(f"swa_lr must have the same length as optimizer.param_groups: "
                                 f"swa_lr has {len(swa_lr)}, optimizer.param_groups has "
                                 f"{len(groups)}")
            lrs = list(swa_lr)
        else:
            lrs = [swa_lr] * len(groups)
        for lr, group in zip(lrs, groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_strategy = anneal_strategy
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _anneal(self, t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2 if self._anneal_strategy == "cos" else t

    @staticmethod
    def _initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self._anneal(prev_t)
        groups = self.optimizer.param_groups
        prev = [self._initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self._anneal(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev)]
