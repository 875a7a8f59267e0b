"""``pf.optim.Optimizer``: torch.optim's base class (param groups, defaults,
``zero_grad``, ``state_dict``/``load_state_dict`` in torch's format).

A step is recorded, not run: each subclass's update is written as in-place
updates under ``no_grad`` (``p.add_(...)``, ``buf.mul_(...)``) that rebind the
parameters and the state tensors to lazy promises. The next evaluation (the
next ``loss.item()``) computes forward, backward and update as one graph,
and the in-place-updated tensors come out of it realized
(``core.collect``'s pending outputs), so the graph of every step has the same
structure and hits the compile cache. Everything that changes from step to
step (the learning rate, Adam's bias corrections) enters the graph as a 0-d
leaf tensor, an argument, never as a constant: a scheduler changing ``lr``
does not compile a new graph.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ..autodiff import enable_grad
from ..core import OBSERVERS, Tensor, detach, guard_value, host_scalar, replay_effect
from ..dialects.dtypes import DType, float32
from ..nn.module import _host_value, zero_grad_of
from ..ops import convert

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _RequiredParameter()


class ScalarLeaves:
    """0-d leaf tensors of Python numbers, one per (value, dtype) within a
    step: they are graph arguments, so new values reuse the compiled graph.

    ``of(fn, dt)`` is the number ``fn()`` computes from the optimizer's Python
    state (``group["lr"]``, a bias correction of ``state["step"]``): under a
    ``pf.compile`` trace it becomes a per-call input (``core.host_scalar``),
    so the compiled step replays with the values of each call."""

    def __init__(self) -> None:
        self._made: dict[tuple[Any, DType], Tensor] = {}

    def __call__(self, v: float, dt: DType) -> Tensor:
        key = (v, dt)
        t = self._made.get(key)
        if t is None:
            t = self._made[key] = Tensor._leaf(np.asarray(v, dtype=dt.np))
        return t

    def of(self, fn: Callable[[], float], dt: DType, key: Any = None) -> Tensor:
        """``fn()`` as a 0-d leaf; ``key`` names values equal on every call
        (one input for all of them, e.g. a group's learning rate)."""
        if not OBSERVERS:
            return self(fn(), dt)
        if key is None:
            return host_scalar(fn, dt)
        t = self._made.get((key, dt))
        if t is None:
            t = self._made[(key, dt)] = host_scalar(fn, dt)
        return t


def guard_hyperparameters(group: dict[str, Any]) -> None:
    """Under a ``pf.compile`` trace: the group's settings other than the
    learning rate (fed per call) are baked into the program as constants, so
    rebinding one traces again (torch.compile guards on them too)."""
    if OBSERVERS:
        for k in group:
            if k not in ("params", "lr", "initial_lr"):
                guard_value(group, k)


def step_tensor(n: float) -> Tensor:
    """``state["step"]``: a 0-d float32 tensor, as torch keeps it (code calls
    ``.item()`` on it, checkpoints store it). Counting makes a new one."""
    return Tensor._leaf(np.asarray(n, np.float32), float32)


def step_of(state: dict[str, Any], key: str = "step") -> float:
    """``state["step"]`` (or another 0-d float32 state entry, NAdam's
    ``mu_product``, ASGD's ``eta`` and ``mu``) as a Python number (the
    step's Python arithmetic)."""
    t = state[key]
    if isinstance(t, Tensor):
        v = t._value
        return float(v) if v is not None else float(t.item())
    return float(t)


# the state entries torch keeps as 0-d float32 tensors (whatever the parameter's dtype)
SCALAR_STATE = frozenset({"step", "mu_product", "eta", "mu"})


def count_step(state: dict[str, Any]) -> None:
    """``state["step"] += 1`` (in float32, as torch's), which a compiled step
    replays too. A new tensor each step: one a caller holds keeps its value."""
    def advance() -> None:
        # (the float64 sum of a float32 and 1 is exact: rounding it is float32's sum)
        state["step"] = step_tensor(step_of(state) + 1.0)
    advance()
    replay_effect(advance)


class Optimizer:
    """Base class: ``Optimizer(params, defaults)`` where ``params`` is an
    iterable of tensors or of dicts (parameter groups)."""

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(p).__name__)
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group)
        group["params"] = params
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    @staticmethod
    def _gradients(group: dict[str, Any]) -> Iterator[tuple[Tensor, Tensor]]:
        """(parameter, gradient) for the group's parameters that have a gradient;
        the gradient negated where the group maximizes."""
        for p in group["params"]:
            if p.grad is not None:
                yield p, (-p.grad if group["maximize"] else p.grad)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                zero_grad_of(p, set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter with a ``.grad``, recorded lazily;
        returns ``closure()``'s loss (evaluated with grad enabled) if given."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._step(ScalarLeaves())
        return loss

    def _step(self, scalar: ScalarLeaves) -> None:
        raise NotImplementedError

    # ---- state dicts (torch's format: state keyed by the parameter's index) ----
    def state_dict(self) -> dict[str, Any]:
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index[id(p)]: {k: self._pack(k, v) for k, v in s.items()}
                 for p, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    @staticmethod
    def _pack(key: str, value: Any) -> Any:
        del key  # (the steps are torch's: float32 0-d tensors, SparseAdam's an int)
        return value

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Load a state dict of this format: ours, or torch's (torch tensors are
        copied). Tensors take the dtype of their parameter, as in torch."""
        groups = self.param_groups
        saved_groups = copy.deepcopy(list(state_dict["param_groups"]))
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't "
                             "match the size of optimizer's group")
        by_index = {i: p for g, s in zip(groups, saved_groups)
                    for i, p in zip(s["params"], g["params"])}
        state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            k = int(k)
            if k not in by_index:
                continue
            p = by_index[k]
            state[p] = {name: self._unpack(name, value, p) for name, value in v.items()}
        new_groups = []
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            new_groups.append(s)
        self.state = state
        self.param_groups = new_groups

    @staticmethod
    def _unpack(key: str, value: Any, p: Tensor) -> Any:
        if value is None or isinstance(value, bool | int | float | str):
            return value
        t = _host_value(value)
        if key in SCALAR_STATE and t.numel() == 1:
            return step_tensor(float(t.item()))
        if t.shape != p.shape and t.numel() != 1:
            raise ValueError(f"optimizer state {key!r} of shape {list(t.shape)} does not "
                             f"match its parameter's shape {list(p.shape)}")
        t = convert(t, p.dtype) if t.dtype.is_floating_point and t.dtype is not p.dtype \
            else detach(t)
        return t  # a new tensor object: in-place updates never reach the caller's dict

    def __repr__(self) -> str:
        s = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


def zeros_leaf(p: Tensor) -> Tensor:
    """Zeros like ``p`` as a realized value: the initial optimizer state, an
    argument of the first step's graph as the state is of every later step."""
    return Tensor._leaf(np.zeros(p.shape, dtype=p.dtype.np))


def check_unsupported(name: str, **flags: Any) -> None:
    """torch's implementation switches we do not have: asking for one raises."""
    on = [k for k, v in flags.items() if v]
    if on:
        raise NotImplementedError(f"{name}: {', '.join(on)}=True is not supported")
