"""``pf.optim.lr_scheduler``: torch's schedulers, with torch's (chainable)
update formulas so the learning-rate sequences match step for step. The
learning rate is a Python number in the param groups; the optimizer feeds it
to the graph as a leaf, so a new value never compiles a new graph."""

from __future__ import annotations

import math
import types
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ..core import replay_effect
from .optimizer import Optimizer

__all__ = ["CosineAnnealingLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR",
           "MultiStepLR", "StepLR"]


class LRScheduler:
    """Base class: ``step()`` advances ``last_epoch`` and writes ``get_lr()``
    into the optimizer's param groups."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   "when resuming an optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self.step()

    def get_lr(self) -> list[float]:
        raise NotImplementedError

    def _group_lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        return self._last_lr

    def step(self) -> None:
        self._advance()
        replay_effect(self._advance)  # a pf.compile'd step replays it too

    def _advance(self) -> None:
        self._step_count += 1
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = self._group_lrs()

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    """lr times ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]


class MultiStepLR(LRScheduler):
    """lr times ``gamma`` at each milestone epoch."""

    def __init__(self, optimizer: Optimizer, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return self._group_lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._group_lrs()]


class ExponentialLR(LRScheduler):
    """lr times ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]


class CosineAnnealingLR(LRScheduler):
    """Cosine from the base lr down to ``eta_min`` over ``T_max`` epochs (SGDR
    without restarts), in torch's recursive form."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        e, t, lo = self.last_epoch, self.T_max, self.eta_min
        lrs = self._group_lrs()
        if e == 0:
            return lrs
        if self._step_count == 1 and e > 0:
            return [lo + (base - lo) * (1 + math.cos(e * math.pi / t)) / 2
                    for base in self.base_lrs]
        if (e - 1 - t) % (2 * t) == 0:
            return [lr + (base - lo) * (1 - math.cos(math.pi / t)) / 2
                    for base, lr in zip(self.base_lrs, lrs)]
        return [(1 + math.cos(math.pi * e / t)) / (1 + math.cos(math.pi * (e - 1) / t))
                * (lr - lo) + lo for lr in lrs]


class LambdaLR(LRScheduler):
    """lr = base lr times ``lr_lambda(epoch)`` (one function, or one per group)."""

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        n = len(optimizer.param_groups)
        if not isinstance(lr_lambda, list | tuple):
            self.lr_lambdas = [lr_lambda] * n
        else:
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict[str, Any]:
        """As torch: functions are not saved (None), callable objects by their ``__dict__``."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else
                               fn.__dict__.copy() for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        lambdas = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LinearLR(LRScheduler):
    """lr scaled linearly from ``start_factor`` to ``end_factor`` over ``total_iters``."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 "
                             "and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        lrs = self._group_lrs()
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in lrs]
        if self.last_epoch > self.total_iters:
            return lrs
        a, b = self.start_factor, self.end_factor
        factor = 1.0 + (b - a) / (self.total_iters * a + (self.last_epoch - 1) * (b - a))
        return [lr * factor for lr in lrs]
