"""``pf.autograd``: PyTorch's ``torch.autograd`` functions, ``Function`` and
anomaly detection."""

from __future__ import annotations

import traceback
import weakref
from collections.abc import Sequence
from typing import Any

from ..autodiff import CustomNode, enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from ..autodiff import autograd_grad as _grad
from ..autodiff import backward as _backward
from ..core import CONFIG, GRAD_MODE, Tensor, realize, requires_grad
from ..creation import zeros
from ..dialects import OPS
from ..ops import convert, stack
from ..tree_util import tree_flatten


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None,
         retain_graph: bool | None = None, create_graph: bool = False,
         allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple:
    """``torch.autograd.grad``: gradients of ``outputs`` w.r.t. ``inputs``
    only (``.grad`` untouched). ``is_grads_batched``: the first dimension of
    every ``grad_outputs`` tensor is a batch of cotangents, one gradient per
    entry stacked along a new first dimension (torch vmaps over it; here one
    backward pass each on the kept graph)."""
    kw = {"create_graph": create_graph, "allow_unused": allow_unused,
          "materialize_grads": materialize_grads}
    if not is_grads_batched:
        return _grad(outputs, inputs, grad_outputs, retain_graph, **kw)
    seeds, tree = tree_flatten(grad_outputs)
    if not seeds or not all(isinstance(s, Tensor) and s.ndim >= 1 for s in seeds):
        raise RuntimeError("autograd.grad(is_grads_batched=True): grad_outputs must be tensors "
                           "with a leading batch dimension")
    n = seeds[0].shape[0]
    if any(s.shape[0] != n for s in seeds):
        raise RuntimeError(f"autograd.grad(is_grads_batched=True): the grad_outputs' batch "
                           f"sizes differ: {[s.shape[0] for s in seeds]}")
    keep = create_graph if retain_graph is None else retain_graph
    per = [_grad(outputs, inputs, [s[b] for s in seeds], keep or b < n - 1, **kw)
           for b in range(n)]
    return tuple(None if per[0][i] is None else stack([p[i] for p in per])
                 for i in range(len(per[0])))

_ALIAS = OPS["reshape"]


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables=None, inputs=None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves
    (only of ``inputs`` when given)."""
    if grad_variables is not None:  # torch's deprecated spelling
        grad_tensors = grad_variables
    ts = tensors if isinstance(tensors, list | tuple) else [tensors]
    gs = grad_tensors if isinstance(grad_tensors, list | tuple) else [grad_tensors] * len(ts)
    for i, (t, g) in enumerate(zip(ts, gs)):  # one pass in PyTorch: free after the last
        _backward(t, g, retain_graph=True if i < len(ts) - 1 else retain_graph,
                  create_graph=create_graph, inputs=inputs)


# ---- custom functions (torch.autograd.Function) ----

class FunctionCtx:
    """The ``ctx`` of a ``Function``: what forward (or ``setup_context``)
    saves for backward. Also what differentiation (``autodiff._Reverse``)
    asks: ``inputs``, ``out_nodes`` (a ``CustomNode`` per differentiable
    output, else None) and ``run_backward``."""

    def __init__(self, cls: type[Function], inputs: tuple):
        self._cls = cls
        self.inputs = inputs
        self.name = cls.__name__
        self.has_jvp = cls.jvp is not Function.jvp
        self.needs_input_grad: tuple[bool, ...] = ()
        self.materialize_grads = True
        self.out_nodes: list[CustomNode | None] = []
        self.trace: Any = None  # the forward's stack (anomaly detection)
        self._saved: tuple = ()
        self._versions: list[int] = []
        self._saved_forward: tuple = ()  # save_for_forward: what jvp reads as saved_tensors
        self._forward_versions: list[int] = []
        self._non_differentiable: set[int] = set()
        self._out_specs: list[tuple | None] = []
        self._outputs: dict[int, weakref.ref[Tensor]] = {}  # id(forward's tensor) -> output
        self._freed = False
        self.history_of: Tensor | None = None  # KeepHistory: the tensor whose grad_fn it shows

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save tensors (or None), got "
                                f"{type(t).__name__}")
        self._saved = tensors
        self._versions = [t._version if t is not None else 0 for t in tensors]

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Tensors ``jvp`` reads as ``ctx.saved_tensors`` (PyTorch's forward AD)."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_forward can only save tensors (or None), got "
                                f"{type(t).__name__}")
        self._saved_forward = tensors
        self._forward_versions = [t._version if t is not None else 0 for t in tensors]

    @property
    def saved_tensors(self) -> tuple:
        if self._freed:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access "
                "saved tensors after they have already been freed). Saved intermediate "
                "values of the graph are freed when you call .backward() or autograd.grad()."
                " Specify retain_graph=True if you need to backward through the graph a "
                "second time or if you need to access saved tensors after calling backward.")
        out = []
        for i, (t, v) in enumerate(zip(self._saved, self._versions)):
            if t is not None and t._version != v:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been "
                    f"modified by an inplace operation: [{t.dtype.name} {list(t.shape)}], "
                    f"saved tensor {i} of {self.name}, is at version {t._version}; expected "
                    f"version {v} instead")
            ref = None if t is None else self._outputs.get(id(t))
            wrapped = None if ref is None else ref()
            out.append(t if wrapped is None else wrapped)  # an output: its graph, as torch
        return tuple(out)

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        self._non_differentiable.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value

    def mark_dirty(self, *tensors: Tensor) -> None:
        raise NotImplementedError(f"{self.name}: mark_dirty (a Function modifying its inputs "
                                  "in place) is not supported; return new tensors instead")

    def run_backward(self, cts: Sequence[Tensor | None]) -> list[Tensor | None]:
        """The user's backward on the output cotangents (None: no gradient
        reached that output); one gradient (or None) per forward input."""
        if self.materialize_grads:
            cts = [zeros(list(spec[0]), dtype=spec[1]) if c is None and spec is not None
                   else c for c, spec in zip(cts, self._out_specs)]
        grads = self._cls.backward(self, *cts)
        if not isinstance(grads, tuple):
            grads = (grads,)
        n = len(self.inputs)
        if len(grads) < n or any(g is not None for g in grads[n:]):
            raise RuntimeError(f"function {self.name}Backward returned an incorrect number of "
                               f"gradients (expected {n}, got {len(grads)})")
        out: list[Tensor | None] = []
        for i, (x, g) in enumerate(zip(self.inputs, grads)):
            if g is None:
                out.append(None)
                continue
            if not isinstance(x, Tensor):
                raise RuntimeError(f"function {self.name}Backward returned a gradient different "
                                   f"than None at position {i + 1}, but the corresponding "
                                   "forward input was not a Tensor")
            if not isinstance(g, Tensor):
                raise TypeError(f"function {self.name}Backward returned a "
                                f"{type(g).__name__} as gradient {i}, expected a Tensor")
            if g.shape != x.shape:
                raise RuntimeError(f"Function {self.name}Backward returned an invalid gradient "
                                   f"at index {i} - got {list(g.shape)} but expected shape "
                                   f"{list(x.shape)}")
            out.append(g if g.dtype is x.dtype else convert(g, x.dtype))
        return out

    def run_jvp(self, tangents: Sequence[Tensor | None]) -> list[Tensor]:
        """The user's jvp on one tangent per forward input (None for a
        non-tensor; zeros for a tensor without one); one tangent per output."""
        inputs = self.inputs
        if self.materialize_grads:  # torch: set_materialize_grads covers jvp too
            tangents = [zeros(list(x.shape), dtype=x.dtype)
                        if t is None and isinstance(x, Tensor) and x.dtype.is_floating_point
                        else t for x, t in zip(inputs, tangents)]
        saved = self._saved, self._versions, self._freed
        self._saved, self._versions, self._freed = \
            self._saved_forward, self._forward_versions, False
        try:
            out = self._cls.jvp(self, *tangents)
        finally:
            self._saved, self._versions, self._freed = saved
        outs = out if isinstance(out, tuple) else (out,)
        specs = self._out_specs
        if len(outs) != len(specs):
            raise RuntimeError(f"function {self.name}.jvp returned an incorrect number of "
                               f"tangents (expected {len(specs)}, got {len(outs)})")
        result = []
        for i, (t, spec) in enumerate(zip(outs, specs)):
            if spec is None:
                result.append(t)
                continue
            if t is None:
                t = zeros(list(spec[0]), dtype=spec[1])
            if not isinstance(t, Tensor) or t.shape != spec[0]:
                raise RuntimeError(f"function {self.name}.jvp returned an invalid tangent at "
                                   f"index {i}: expected a tensor of shape {list(spec[0])}, got "
                                   f"{getattr(t, 'shape', type(t).__name__)}")
            result.append(t if t.dtype is spec[1] else convert(t, spec[1]))
        return result

    def free(self) -> None:
        self._freed = True
        self._saved = ()


class Function:
    """PyTorch's ``torch.autograd.Function``: subclass it with static methods
    ``forward(ctx, *args)`` (or ``forward(*args)`` and ``setup_context(ctx,
    inputs, output)``) and ``backward(ctx, *grads)``, and call ``apply``.
    Forward runs under no_grad; its tensor outputs are recorded as outputs of
    the Function, so ``backward()``, ``pf.autograd.grad`` and the functional
    transforms (``grad``, ``vjp``, ``jacrev``) call the user's backward on the
    traced cotangents; forward mode (``jvp``, ``jacfwd``) calls its ``jvp``
    (what it saved with ``ctx.save_for_forward`` is its ``ctx.saved_tensors``)."""

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> Any:
        raise NotImplementedError("setup_context is not overridden")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Tensor) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    @staticmethod
    def jvp(ctx: FunctionCtx, *grad_inputs: Tensor) -> Any:
        raise NotImplementedError(f"You must implement the jvp function for custom "
                                  f"autograd.Function to use it with forward mode AD "
                                  f"({len(grad_inputs)} input tangents).")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        ctx = FunctionCtx(cls, args)
        enabled = GRAD_MODE.enabled
        tracing = GRAD_MODE.trace_depth > 0  # a functional transform may differentiate
        ctx.needs_input_grad = tuple(
            isinstance(a, Tensor) and enabled and
            (requires_grad(a) or (tracing and a.dtype.is_floating_point)) for a in args)
        new_style = cls.setup_context is not Function.setup_context
        with no_grad():
            out = cls.forward(*args, **kwargs) if new_style else \
                cls.forward(ctx, *args, **kwargs)
            if new_style:
                cls.setup_context(ctx, args, out)
        # under no_grad, forward mode (a transform tracing, a dual level) still
        # calls the Function's jvp, as torch's: its outputs are wrapped, but
        # reverse mode takes them as constants (``nograd``)
        if not any(ctx.needs_input_grad) and not (
                tracing and any(isinstance(a, Tensor) and a.dtype.is_floating_point
                                for a in args)):
            return out
        if CONFIG.anomaly:
            ctx.trace = traceback.extract_stack()[:-1]
        rg = enabled and any(isinstance(a, Tensor) and requires_grad(a) for a in args)
        outs = out if isinstance(out, tuple) else (out,)
        wrapped = []
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                ctx.out_nodes.append(None)
                ctx._out_specs.append(None)
                wrapped.append(o)
                continue
            ctx._out_specs.append((o.shape, o.dtype))
            if id(o) in ctx._non_differentiable or not o.dtype.is_floating_point:
                ctx.out_nodes.append(None)
                wrapped.append(o)
                continue
            node = CustomNode(_ALIAS, (o,), {"shape": o.shape}, ((o.shape, o.dtype),))
            node.rg, node.nograd, node.ctx, node.out_index = rg, not enabled, ctx, i
            t = Tensor._promise(node, 0, o.shape, o.dtype)
            if CONFIG.eager:
                realize([t])
            ctx.out_nodes.append(node)
            ctx._outputs[id(o)] = weakref.ref(t)
            wrapped.append(t)
        return tuple(wrapped) if isinstance(out, tuple) else wrapped[0]


class KeepHistory(Function):
    """``value``'s value with ``hist``'s gradient history: a tensor written
    through a detached alias (``x.detach().add_(1)``, ``x.data.mul_(2)``)
    changes its value and keeps its ``grad_fn`` (PyTorch), so gradients pass
    to ``hist`` unchanged (the identity) and none to ``value``. Its tangent
    (forward mode) is ``hist``'s, or with ``forward`` given (an update under
    no_grad, which torch's forward mode differentiates) ``forward``'s: the
    updated value before it was detached (that tangent keeping, for a reverse
    mode over it, the history of ``hist``'s tangent, as torch's)."""

    @staticmethod
    def forward(ctx: FunctionCtx, hist: Tensor, value: Tensor,
                forward: Tensor | None = None) -> Tensor:
        ctx.history_of = hist  # grad_fn shows hist's, as PyTorch's unchanged one
        ctx.tangent_of_forward = forward is not None
        return value

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> tuple[Tensor, None, None]:
        return g, None, None

    @staticmethod
    def jvp(ctx: FunctionCtx, t_hist: Tensor, t_value: Tensor,
            t_forward: Tensor | None = None) -> Tensor:
        if not ctx.tangent_of_forward:
            return t_hist
        # torch updates the tangent in place under no_grad too: its value is the
        # updated one, its own history (an enclosing reverse mode's) stays t_hist's
        return keep_history(t_hist, t_forward)


def keep_history(hist: Tensor, value: Tensor, forward: Tensor | None = None) -> Tensor:
    """``KeepHistory`` whatever the grad mode (an update under no_grad keeps it too)."""
    with enable_grad():
        return KeepHistory.apply(hist, value, forward)


# ---- anomaly detection ----

class set_detect_anomaly:  # noqa: N801  (PyTorch's name; a function or a context manager)
    """``set_detect_anomaly(True)`` turns anomaly detection on (off with
    False); as a context manager it restores the previous mode at exit. While
    on, each op records the Python stack that made it and ``backward()`` /
    ``pf.autograd.grad`` run and check one op's backward at a time: a NaN
    raises naming the op and where its forward was recorded (slow: debugging
    only)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        if not check_nan:
            raise NotImplementedError("set_detect_anomaly(check_nan=False): anomaly "
                                      "detection only checks for NaN here")
        self.prev = CONFIG.anomaly
        CONFIG.anomaly = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        CONFIG.anomaly = self.prev


class detect_anomaly(set_detect_anomaly):  # noqa: N801
    """``with pf.autograd.detect_anomaly():`` anomaly detection for a block."""

    def __init__(self, check_nan: bool = True):
        super().__init__(True, check_nan)


def is_anomaly_enabled() -> bool:
    return CONFIG.anomaly


# ---- torch.autograd.Variable: the pre-0.4 wrapper old scripts still construct ----

class _VariableMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(t, requires_grad=...)``: since PyTorch 0.4 a tensor is a
    Variable; this returns a new leaf sharing ``t``'s data (torch's), and
    ``isinstance(x, Variable)`` holds for every tensor. ``volatile`` is
    accepted and ignored, as torch ignores it (with a warning)."""

    def __new__(cls, data: Tensor, requires_grad: bool = False,  # type: ignore[misc]
                volatile: bool = False) -> Tensor:
        del volatile
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)


from . import forward_ad, function, functional, graph  # noqa: E402  (as torch.autograd's)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402

__all__ = ["Function", "FunctionCtx", "GradcheckError", "backward", "detect_anomaly",
           "enable_grad", "forward_ad", "function", "functional", "grad", "graph", "gradcheck",
           "gradgradcheck",
           "is_anomaly_enabled", "is_grad_enabled", "no_grad", "set_detect_anomaly",
           "set_grad_enabled", "Variable"]
