"""``pf.compile`` (``jax.jit`` for a lazy library) and ``pf.trace``.

``compile(f)`` traces ``f`` once per *signature* (the pytree structure of the
arguments, each tensor's shape and dtype, the values of static arguments and
Python numbers, the backend and pipeline) and keeps the program it recorded:
its inputs are the argument tensors and the tensors ``f`` reads from outside
(parameters, optimizer state: captured by closure, by identity), its outputs
``f``'s results, the new state of every tensor ``f`` updated in place and the
new ``.grad`` of every tensor it gave one. A later call with the same
signature does not run ``f``: no op is recorded, no graph is walked; it runs
the compiled executable on the new argument data and the current values of
the captured tensors, then writes the results back as the Python call would
have (in-place updates rebind the same tensor objects and bump their
versions; gradients land in ``.grad``).

Guards (checked on every call, all cheap): the signature; every captured
tensor still alive with its shape and dtype; the objects ``f``'s global names
and closure cells refer to (rebinding a global retraces).

``donate_argnums`` (JAX's semantics): the donated arguments' tensors are
deleted after the call (using one raises; a donated argument ``f`` returns as
is stays: it is the output). On the reference backend a replay writes a
result of the same shape and dtype into a donated buffer when only the
donated tensor holds it (no numpy handle, view or other tensor sees it) and
the plan reads the argument before that result is made.

Captured tensors ``f`` updates in place (an SGD step's parameters) are updated
in their own arrays on a replay when nothing else can see those arrays (no
numpy handle, view or other tensor: a reference count; no op recorded since
reads their current state): ``p -= lr * g`` is then one in-place pass, as in
the hand-written numpy step, instead of a new array per call. A large float
update in place is a BLAS ``axpy``, which rounds ``p - lr * g`` once (the
uncompiled step rounds the product and the difference). A replay failing
after that hand-over (a kernel raising, an interrupt) deletes those tensors:
their values are not known any more.

What Python-free replay cannot see, and what pf.compile does about it:
- Python side effects of ``f`` (printing, appending to a list, counters) run
  once per trace, as in ``jax.jit``.
- A value ``f`` computes and looks at (``.item()``, ``.numpy()``, ``print``,
  ``bool()`` or Python control flow on a tensor, a ``lax`` predicate, a
  data-dependent shape) may differ on the next call, so such a program is
  never replayed (``jax.jit`` raises there): each call runs ``f``. Reading an
  argument or captured tensor itself (``n.item()``, ``n.numpy()``,
  ``np.asarray(n)``, ``n.tolist()``, ``float(n)`` on an argument ``n``) counts
  the same; pass such values as static arguments to keep the program replayed.
- Inside a transform's trace (``grad``, ``vmap``, a Jacobian, another
  compiled function's trace) a compiled function is traced into, as
  ``jax.jit`` is: its derivatives and batching are the transform's.
- A result with a live autograd graph (it depends on a tensor requiring grad
  and no backward went through it: a compiled forward, ``backward()``
  outside) cannot come from a replay, so such a call runs ``f``. Grad mode
  and each argument's ``requires_grad`` are part of the signature.
- Tensors ``f`` creates from host data on each call (``pf.tensor(...)``,
  ``pf.randn`` inside ``f``, state created lazily on the first step) may
  differ from call to call, so a program reading one is never replayed: such
  a call runs ``f`` (``stats()["python_calls"]``; the reason is in
  ``stats()["python_reasons"]``), which is exactly the uncompiled call, and
  the next call traces again (the state exists by then).
- Per-call scalars computed from Python state (``core.host_scalar``: an
  optimizer's lr and bias corrections) are inputs of the program, recomputed
  on each replay; Python bookkeeping registered with ``core.replay_effect``
  (step counts, ``scheduler.step()``) runs again on each replay, in call
  order; Python values baked into the program as constants and registered
  with ``core.guard_value`` (momentum, betas, weight decay) are guarded. So a
  ``pf.optim`` training step, with or without an lr scheduler, replays.
- An attribute rebound to a new tensor (``model.w = pf.randn(...)``) is seen
  only when the old tensor is gone (its weak reference guard fails); while
  something else keeps it alive the compiled program reads the old tensor.
  Pass such tensors as arguments, or call ``f.clear()``.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .autodiff import tracing
from .compiler import BACKENDS, build_module, compile_subgraph, config_key
from .core import (
    _INFER_ON,
    CONFIG,
    DELETED,
    GRAD_MODE,
    OBSERVERS,
    REALIZE_GUARDS,
    Aliases,
    Mutation,
    Size,
    Subgraph,
    Tensor,
    ViewOf,
    _meta,
    _next_seq,
    collect,
    delete,
    deleted_message,
    flush_pending,
    realize,
    rebind,
    snapshot,
    source,
    sync_state,
    write_back,
)
from .core import _NATIVE as core_native_module
from .creation import empty
from .dialects.dtypes import DType
from .inplace import refresh_views
from .jax_config import canonical_host
from .jax_config import config as JAX_CONFIG
from .tree_util import tree_flatten, tree_unflatten

_MISSING = object()
_new = object.__new__
_KINDS = {"out": 0, "mut": 1, "grad": 2}


def _native_hand_over() -> Callable[..., bool] | None:
    """``_native.c``'s ``hand_over`` (configured), or None: the Python loop
    (no extension, PYFLAME_NO_NATIVE=1, or a build without it)."""
    native = core_native_module
    if native is None or not hasattr(native, "hand_over"):
        return None
    native.configure_replay(Mutation, DELETED)
    return native.hand_over




@dataclass
class _Program:
    """One traced signature: the recorded program and how to feed and unpack it."""

    sub: Subgraph | None  # dropped once compiled: its nodes hold the captured tensors
    # per program input: ("arg", i), ("ext", weakref) or ("feed", k): the k-th
    # value the prologue computes
    slots: list[tuple[str, Any]]
    # per output: (kind, ref, n, dtype): ("out", k, 0, dtype), ("mut", ref, n, dtype)
    # (n: the updates), ("grad", ref, 0, dtype); the dtype spares a replay its lookup
    outs: list[tuple[str, Any, int, Any]]
    out_tree: Any
    out_static: list[Any]  # f's output leaves; None where the program computes one
    arg_outs: list[tuple[int, int]]  # (output leaf, argument leaf) returned as is
    globals_guard: tuple
    python_reason: str | None = None
    executable: Any = None
    ir: str = ""
    # per donated argument leaf: (leaf index, program input position or -1)
    donated: list[tuple[int, int]] = field(default_factory=list)
    # what a replay runs in Python before the program, in call order:
    # ("effect", fn) Python bookkeeping (a step counter), ("feed", (fn, dtype))
    # a per-call scalar input (an optimizer's lr, bias corrections)
    prologue: list[tuple[str, Any]] = field(default_factory=list)

    # tensors made by an op without inputs (pf.ones, pf.zeros) that the program
    # computes as constants: (weakref, their state when traced). Updated in place
    # since (w.fill_(5)), the program is stale; gone, it cannot be.
    constants: list[tuple[Any, int]] = field(default_factory=list)
    # captured tensors the program updates (kind "mut") whose current array is
    # a program input the executable may write a result into: (input
    # position, weakref). A replay gives such an array away when nothing but
    # the tensor can see it (``_updated_in_place``): ``p -= lr * g`` in place
    updated: list[tuple[int, Any]] = field(default_factory=list)
    out_sizes: list[Any] = field(default_factory=list)  # per output: its shape (a Size)
    # (output leaf, weakref): a captured tensor f updates in place and returns as is
    # (``return loss, p``): the output is that tensor, as the call returns it
    captured_outs: list[tuple[int, Any]] = field(default_factory=list)
    native_outs: tuple = ()  # ``outs`` and ``out_sizes`` as _native.c's hand_over takes them

    def __post_init__(self) -> None:
        # the guards split by kind once (every replay checks them): captured
        # tensors' references, and the globals_guard's dict entries and cells
        self._ext_refs = tuple(ref for kind, ref in self.slots if kind == "ext")
        self._dict_guards = tuple((h, n, o) for h, n, o in self.globals_guard
                                  if isinstance(h, dict))
        self._cell_guards = tuple((h, o) for h, _, o in self.globals_guard
                                  if not isinstance(h, dict))

    def guards_hold(self) -> bool:
        for ref in self._ext_refs:
            if ref() is None:
                return False
        for ref, state in self.constants:
            t = ref()
            if t is not None and _state(t) != state:
                return False
        # (the Python values baked in are in globals_guard too: same check).
        # A tensor the program updates that is gone needs no guard: no one can
        # see its new value (a view like ``w.t()`` a forward made and dropped)
        for holder, name, obj in self._dict_guards:  # _current, inlined
            if holder.get(name, _MISSING) is not obj:
                return False
        for cell, obj in self._cell_guards:
            try:
                if cell.cell_contents is not obj:
                    return False
            except ValueError:  # an empty cell
                if obj is not _MISSING:
                    return False
        return True


@dataclass
class _Stats:
    hits: int = 0  # calls replayed without running f
    misses: int = 0  # first calls of a signature (traced)
    retraces: int = 0  # traces of a signature seen before (a guard failed)
    python_calls: int = 0  # calls that ran f (a signature that cannot be replayed)
    python_reasons: list[str] = field(default_factory=list)


def _state(t: Tensor) -> int:
    """Which state of ``t`` is current: its last in-place update's number."""
    m = t._mut
    return -1 if m is None else m.seq


def _constants(sub: Subgraph) -> list[tuple[Any, int]]:
    """The tensors of ``sub`` an op without inputs made (seq -1: traced into as
    constants, not program inputs), with their current states."""
    out, seen = [], set()
    for n in sub.nodes:
        for t in n.inputs:
            if isinstance(t, Tensor) and id(t) not in seen:
                seen.add(id(t))
                src = source(t)
                if src is not None and src.seq < 0:
                    out.append((weakref.ref(t), _state(t)))
    return out


def _current(holder: Any, name: str) -> Any:
    if isinstance(holder, dict):
        return holder.get(name, _MISSING)
    try:
        return holder.cell_contents
    except ValueError:
        return _MISSING


def _globals_guard(f: Callable) -> tuple:
    """(dict, name, object) for each global name and closure cell ``f`` reads."""
    fn = getattr(f, "__func__", f)
    code = getattr(fn, "__code__", None)
    if code is None:
        return ()
    g = fn.__globals__
    out = [(g, n, g.get(n, _MISSING)) for n in code.co_names if n in g]
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        out.append((cell, name, _current(cell, name)))
    return tuple(out)


def _signature_leaf(x: Any) -> Any:
    if isinstance(x, Tensor):
        ag = x._ag  # an argument requiring grad gives results with autograd history
        return (x.shape, x.dtype, ag is not None and ag.requires_grad)
    if isinstance(x, np.ndarray):
        return ("ndarray", x.shape, x.dtype.str)
    return ("py", type(x), x)


class Lowered(str):
    """What ``f.lower(*args)`` returns: the program's IR text (a str), with
    jax's ``as_text()`` spelling; ``compile()`` gives the callable (jax's
    ``jit(f).lower(x).compile()``): the compiled function, whose program for
    these arguments exists now (another signature traces as ``f`` would)."""

    _compiled: Compiled | None = None

    def as_text(self) -> str:
        return str(self)

    def cost_analysis(self) -> Any:
        _no_cost_model("cost_analysis")

    def compile(self) -> LoweredCompiled:  # noqa: A003
        if self._compiled is None:
            raise RuntimeError("this Lowered text has no compiled function attached")
        return LoweredCompiled(self._compiled, str(self))


class LoweredCompiled:
    """``jit(f).lower(*args).compile()``: call it like ``f``."""

    def __init__(self, compiled: Compiled, text: str):
        self._compiled, self._text = compiled, text

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    def as_text(self) -> str:
        return self._text

    def cost_analysis(self) -> Any:
        _no_cost_model("cost_analysis")

    def memory_analysis(self) -> Any:
        _no_cost_model("memory_analysis")


def _no_cost_model(what: str) -> None:
    raise NotImplementedError(
        f"jit(f).lower(...).{what}(): pyflame has no XLA cost model, so it has no flop, "
        "byte or memory estimates to give (the program's IR is as_text(); pf.compile(f)"
        ".stats() counts traces and calls)")


class Compiled:
    """What ``pf.compile(f)`` returns: call it like ``f``."""

    def __init__(self, f: Callable, static_argnums: int | Sequence[int] = (),
                 donate_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = (),
                 donate_argnames: str | Sequence[str] = ()):
        self.f = f
        static, self.static_names = _argnums_and_names(f, static_argnums, static_argnames,
                                                       "static")
        donate, donate_names = _argnums_and_names(f, donate_argnums, donate_argnames, "donate")
        self.static, self.donate, self.donate_names = static, donate, donate_names
        both = set(self.static) & set(self.donate) or self.static_names & donate_names
        if both:
            raise ValueError(f"pf.compile: arguments {sorted(both, key=str)} cannot be both "
                             "static and donated")
        self._programs: dict[Any, _Program] = {}
        # the hot path: calls with tensors only (no kwargs, no static
        # arguments) find their signature's key by the tensors' shapes and
        # dtypes and the settings, without flattening a pytree
        self._fast: dict[tuple, _Program] = {}  # fast signature -> its key's program
        self._stats = _Stats()
        self.__doc__ = getattr(f, "__doc__", None)

    @property
    def _orig_mod(self) -> Any:
        return self.f

    def __getattr__(self, name: str) -> Any:
        """A compiled module (torch.compile's OptimizedModule) answers for the
        module: ``parameters()``, ``state_dict()``, ``train()``, ..."""
        if name.startswith("__") or name == "f":
            raise AttributeError(name)
        return getattr(self.__dict__["f"], name) if "f" in self.__dict__ else \
            object.__getattribute__(self, name)

    def __get__(self, obj: Any, _objtype: type | None = None) -> Any:
        """As a method (``@pf.jit`` on a ``def`` in a class): ``self`` is the
        first argument, a Python value of the signature (hashed by identity)."""
        return self if obj is None else functools.partial(self, obj)

    # ---- the call ----
    def _split(self, args: tuple, kwargs: dict) -> tuple[Any, list[Any], Any]:
        n = len(args)
        static = tuple(args[i] if -n <= i < n else None for i in self.static)
        dynamic = tuple(a for i, a in enumerate(args)
                        if i not in self.static and i - n not in self.static)
        if self.static_names and kwargs:  # static_argnames passed by name: hashed, not traced
            static += tuple(sorted((k, v) for k, v in kwargs.items() if k in self.static_names))
            kwargs = {k: v for k, v in kwargs.items() if k not in self.static_names}
        leaves, treedef = tree_flatten((dynamic, kwargs))
        key = (treedef, tuple(_signature_leaf(x) for x in leaves), static, config_key(),
               GRAD_MODE.enabled)
        try:
            hash(key)
        except TypeError as e:
            raise TypeError(f"pf.compile: a static argument or Python leaf is unhashable "
                            f"({e}); pass it as a tensor or mark it static with a hashable "
                            "value") from None
        return key, leaves, treedef

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if GRAD_MODE.trace_depth or JAX_CONFIG.jax_disable_jit:
            # inside grad, vmap, a Jacobian or another compiled function's trace:
            # f is traced into (as jax.jit is under a transform); a replay would
            # give values without the derivatives or batching the trace needs.
            # Under pf.disable_jit(): f runs op by op, as plain Python
            return self.f(*args, **kwargs)
        fast = None
        if not kwargs and not self.static:
            config = CONFIG
            sig: list[Any] = [config.backend, config.pipeline, config.optimize, GRAD_MODE.enabled]
            for a in args:
                if type(a) is not Tensor:
                    break
                sig.append(a.shape)
                sig.append(a.dtype)
                ag = a._ag
                sig.append(ag is not None and ag.requires_grad)
            else:
                fast = tuple(sig)
                prog = self._fast.get(fast)
                if prog is not None and prog.python_reason is None and prog.guards_hold():
                    self._stats.hits += 1
                    return self._replay(prog, list(args))
        key, leaves, _ = self._split(args, kwargs)
        prog = self._programs.get(key)
        if prog is not None and prog.python_reason is None:
            if prog.guards_hold():
                self._stats.hits += 1
                self._remember(fast, key)
                return self._replay(prog, leaves)
            self._stats.retraces += 1
        # a first call, a failed guard, or a signature whose last trace could
        # not be replayed (its state may have settled since: trace again)
        if prog is None:
            self._stats.misses += 1
        old = prog
        prog, result = self._trace(args, kwargs, leaves)
        self._programs[key] = prog
        if old is not None:  # (no fast signature may still find the program replaced)
            for f in [f for f, p in self._fast.items() if p is old]:
                self._fast[f] = prog
        self._remember(fast, key)
        return result

    def _remember(self, fast: tuple | None, key: Any) -> None:
        """Let tensors-only calls find ``key`` by ``fast`` (backends whose
        executables depend on a token of settings always take the full path)."""
        if fast is not None:
            b = BACKENDS.get(fast[0])
            if b is not None and b.token is None:
                self._fast[fast] = self._programs[key]

    def _donated_leaves(self, args: tuple, kwargs: dict) -> list[int]:
        """Indices (in the flattened dynamic arguments, then keyword arguments in
        sorted order, as ``_split`` flattens them) of the donated arguments' leaves."""
        n, at, out = len(args), 0, []
        for i, a in enumerate(args):
            if i in self.static or i - n in self.static:
                continue
            count = len(tree_flatten(a)[0])
            if i in self.donate or i - n in self.donate:
                out.extend(range(at, at + count))
            at += count
        for k in sorted(kwargs):
            if k in self.static_names:
                continue
            count = len(tree_flatten(kwargs[k])[0])
            if k in self.donate_names:
                out.extend(range(at, at + count))
            at += count
        return out

    def _trace(self, args: tuple, kwargs: dict, leaves: list[Any]) -> tuple[_Program, Any]:
        donated = self._donated_leaves(args, kwargs) if self.donate or self.donate_names \
            else []
        for i in donated:
            _check_donatable(leaves[i], i)
        prog, result, requested = trace_program(self.f, args, kwargs, leaves)
        if donated:
            returned = {i for _, i in prog.arg_outs}  # returned as is: the output, kept
            at = {ref: k for k, (kind, ref) in enumerate(prog.slots) if kind == "arg"}
            prog.donated = [(i, at.get(i, -1)) for i in donated
                            if isinstance(leaves[i], Tensor) and i not in returned]
        if prog.python_reason is not None:
            self._stats.python_calls += 1
            if prog.python_reason not in self._stats.python_reasons:
                self._stats.python_reasons.append(prog.python_reason)
            flush_pending()
            return prog, result  # the uncompiled call it was

        prog.executable = compile_subgraph(prog.sub, prog.sub.key(config_key()))
        prog.updated = _updated_inputs(prog)
        prog.out_sizes = [t.shape for t in requested]
        prog.native_outs = tuple((_KINDS[kind], ref, count, dt, dt.np, size) for
                                 (kind, ref, count, dt), size in zip(prog.outs, prog.out_sizes))
        prog.ir = str(build_module(prog.sub))
        lazy = [t for t in prog.sub.leaves if t._node is not None]
        if lazy:
            realize(lazy)
        arrays = [t._value for t in prog.sub.leaves]  # this call's states (snapshots)
        for t, value in zip(requested, prog.executable.run(arrays)):
            if t._node is not None:
                t._realize(value)
        flush_pending()
        prog.sub = None  # the guards hold the captured tensors weakly: so must we
        for i, _ in prog.donated:
            delete(leaves[i])
        return prog, result

    def _replay(self, prog: _Program, leaves: list[Any]) -> Any:
        feeds = []
        for kind, item in prog.prologue:
            if kind == "effect":
                item()
            else:
                fn, dt = item
                feeds.append(np.asarray(fn(), dtype=dt))
        arrays = _inputs(prog, leaves, feeds)
        given = _updated_in_place(prog, arrays) if prog.updated else None
        if prog.donated:
            reuse = _reusable(prog, leaves, arrays)
            try:
                results = prog.executable.run(arrays, reuse + given if given else reuse)
            except BaseException:
                _lost(prog, given)
                raise
            for i, _ in prog.donated:
                delete(leaves[i])
        elif given:
            try:
                results = prog.executable.run(arrays, given)
            except BaseException:
                _lost(prog, given)
                raise
        else:
            results = prog.executable.run(arrays)
        outs = list(prog.out_static)
        for k, i in prog.arg_outs:
            outs[k] = leaves[i]
        if not given:
            _hand_over(prog, results, outs, arrays, given)
        else:
            try:
                _hand_over(prog, results, outs, arrays, given)
            except BaseException:
                _lost(prog, given)
                raise
        for k, ref in prog.captured_outs:
            outs[k] = ref()
        return tree_unflatten(prog.out_tree, outs)

    # ---- introspection ----
    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        """The IR (``pyflame`` MLIR text) of the program for these arguments
        (traced now if this signature was not: ``f`` runs, with its effects)."""
        flat, tree = tree_flatten((args, kwargs))
        if any(isinstance(v, ShapeDtypeStruct) for v in flat):  # (jax's abstract arguments)
            args, kwargs = tree_unflatten(tree, [
                empty(list(v.shape), dtype=v.dtype) if isinstance(v, ShapeDtypeStruct) else v
                for v in flat])
        key, leaves, _ = self._split(args, kwargs)
        prog = self._programs.get(key)
        if prog is None:
            self._stats.misses += 1
            prog, _ = self._trace(args, kwargs, leaves)
            self._programs[key] = prog
        lowered = Lowered(prog.ir or str(build_module(prog.sub)))
        lowered._compiled = self
        return lowered

    def stats(self) -> dict[str, Any]:
        s = self._stats
        return {"hits": s.hits, "misses": s.misses, "retraces": s.retraces,
                "python_calls": s.python_calls, "python_reasons": list(s.python_reasons),
                "signatures": len(self._programs), "donated": self.donate}

    def clear(self) -> None:
        """Forget every traced program: the next call traces again."""
        self._programs.clear()
        self._fast.clear()


def _inputs(prog: _Program, leaves: list[Any], feeds: list[np.ndarray]) -> list[np.ndarray]:
    arrays: list[np.ndarray] = []
    for kind, ref in prog.slots:  # (one pass when every input is a value: the common case)
        t = ref() if kind == "ext" else leaves[ref] if kind == "arg" else feeds[ref]
        if type(t) is np.ndarray:
            arrays.append(t)
        elif (isinstance(t, Tensor) and t._node is None and t._value is not None
              and t._view is None):
            arrays.append(t._value)
        else:
            return _inputs_realized(prog, leaves, feeds)
    return arrays


def _inputs_realized(prog: _Program, leaves: list[Any], feeds: list[np.ndarray]
                     ) -> list[np.ndarray]:
    """``_inputs`` when an input is lazy (realized now), deleted (raises) or
    not a plain tensor."""
    ts: list[Tensor | np.ndarray] = []
    for kind, ref in prog.slots:
        if kind == "arg":
            ts.append(_as_tensor(leaves[ref]))
        elif kind == "ext":
            ts.append(ref())
        else:
            ts.append(feeds[ref])
    for t in ts:
        if type(t) is not np.ndarray and t._view is not None:
            sync_state(t)  # (memory shared with numpy: the array's values now)
    lazy = [t for t in ts if type(t) is not np.ndarray and t._node is not None]
    if lazy:
        realize(lazy)
    arrays = [t if type(t) is np.ndarray else t._value for t in ts]
    for t, a in zip(ts, arrays):
        if a is None:
            raise RuntimeError(f"pf.compile: an argument: {deleted_message(t)}")
    return arrays


def _reusable(prog: _Program, leaves: list[Any], arrays: list[np.ndarray]) -> list[int]:
    """The donated inputs whose array only the donated tensor holds (no view,
    no other tensor, no numpy handle of the caller): the executable may reuse
    their memory. A shared array is never written: the call only deletes."""
    out = []
    for i, k in prog.donated:
        t = leaves[i]
        _check_donatable(t, i)
        if k < 0 or t._view is not None:  # (a tensor views were taken of: never reused)
            continue
        a = arrays[k]
        # held by: t._value, ``arrays``, ``a`` and getrefcount's argument
        if type(a) is np.ndarray and a.base is None and sys.getrefcount(a) <= 4:
            out.append(k)
    return out


class _Fresh:
    """A new state for ``rebind`` (which reads these four fields of it) where a
    replay writes a result back into a tensor updated in place."""

    __slots__ = ("_value",)
    _node, _index, _hist = None, 0, None


def _bad_dtype(d: np.dtype, dt: DType) -> None:
    raise RuntimeError(f"pf.compile: the program returned {d} where the trace computed "
                       f"{dt.name} (a backend broke its result types)")


def _given_away(a: np.ndarray, arrays: list[np.ndarray], given: list[int]) -> bool:
    return any(a is arrays[k] for k in given)


def _hand_over(prog: _Program, results: list[np.ndarray], outs: list[Any],
               arrays: list[np.ndarray], given: list[int] | None) -> None:
    """A replay's results handed over (``_write_results``)."""
    if OBSERVERS or (_INFER_ON[0] and GRAD_MODE.inference):
        _write_results(prog, results, outs, arrays, given)  # (the general path)
        return
    if _NATIVE_HAND_OVER is not None and _NATIVE_HAND_OVER(
            prog.native_outs, results, outs,
            tuple([arrays[k] for k in given]) if given else ()):
        return  # (the loop below, in C: _native.c's hand_over)
    # the same, with the result tensors made here: no observer to tell, no
    # inference tensor to mark, each result's Size known from the trace
    fresh = _Fresh()
    viewed: list[Tensor] = []
    for (kind, ref, count, dt), size, value in zip(prog.outs, prog.out_sizes, results):
        d = value.dtype
        if d is not dt.np and d != dt.np:
            _bad_dtype(d, dt)
        if kind == "mut":
            t = ref()
            if t is None:
                continue
            old, start = snapshot(t)
            if given and old._value is not None and _given_away(old._value, arrays, given):
                delete(old)  # see _write_results
            version = t._version
            fresh._value = value
            rebind(t, old, start, fresh)  # type: ignore[arg-type]  (what it reads)
            t._mut.version = version + count
            if type(t._view) is Aliases and t._view.share is not None:
                write_back(t)  # (memory shared with numpy: the array follows)
            if t._view is not None:
                viewed.append(t)
            continue
        r = _new(Tensor)
        r.shape = size if value.shape == size else Size(value.shape)
        r.dtype, r._node, r._index, r._value = dt, None, 0, value
        r._ag = r._hist = r._mut = r._view = r._cell = None
        if kind == "out":
            outs[ref] = r
        else:
            t = ref()
            if t is not None:
                _meta(t).grad = r
    fresh._value = None
    if viewed:
        _refresh_views(prog, viewed)


def _write_results(prog: _Program, results: list[np.ndarray], outs: list[Any],
                   arrays: list[np.ndarray], given: list[int] | None) -> None:
    """Hand a replay's results over as the Python call would have: ``f``'s
    results into ``outs``, in-place updates rebound to their tensors (with
    the versions the call's updates would have given them), new gradients
    into ``.grad``."""
    viewed: list[Tensor] = []
    for (kind, ref, count, dt), value in zip(prog.outs, results):
        d = value.dtype
        if d is not dt.np and d != dt.np:
            _bad_dtype(d, dt)
        if kind == "out":
            outs[ref] = Tensor._leaf(value, dt)
        elif kind == "mut":
            t = ref()
            if t is None:
                continue
            old, start = snapshot(t)
            if given and old._value is not None and _given_away(old._value, arrays, given):
                # its array went to the program: what the snapshot held is gone
                # (nothing could read this state: see _updated_in_place)
                delete(old)
            version = t._version
            rebind(t, old, start, Tensor._leaf(value, dt))
            t._mut.version = version + count
            if type(t._view) is Aliases and t._view.share is not None:
                write_back(t)  # (memory shared with numpy: the array follows)
            if t._view is not None:
                viewed.append(t)
        else:
            t = ref()
            if t is not None:
                _meta(t).grad = Tensor._leaf(value, dt)
    if viewed:
        _refresh_views(prog, viewed)


def _refresh_views(prog: _Program, updated: list[Tensor]) -> None:
    """The live views of tensors the replay updated that the program does not
    update itself (taken after the trace: ``d = p.data`` between steps, a
    ``p.detach()`` or ``p[0]`` held) recomputed from their root's new state, as
    the uncompiled update does (``inplace._refresh``); they kept the old state."""
    traced = {id(t) for kind, ref, _, _ in prog.outs if kind == "mut"
              for t in (ref(),) if t is not None}
    for t in updated:
        info = t._view
        if type(info) is Aliases and any(w is not None and id(w) not in traced
                                         for w in (r() for r in info.refs)):
            refresh_views(t, info, skip=traced)


def _updated_inputs(prog: _Program) -> list[tuple[int, Any]]:
    """The program inputs that are captured tensors the program updates in place
    and that the executable may write a result into (see ``_Program.updated``)."""
    can = getattr(prog.executable.executable, "donatable_args", frozenset())
    muts = {id(ref): ref for kind, ref, _, _ in prog.outs if kind == "mut"}
    return [(k, ref) for k, (kind, ref) in enumerate(prog.slots)
            if kind == "ext" and k in can and id(ref) in muts]


def _updated_in_place(prog: _Program, arrays: list[np.ndarray]) -> list[int]:
    """The inputs of ``prog.updated`` whose arrays this replay may give to the
    program: the tensor is a plain realized tensor (no live view of it, not a
    view itself, no op recorded that reads its current state: its state cell
    is empty) and its array is held by nothing but the tensor (no numpy handle,
    view, snapshot or other tensor: checked by reference count). The program
    then writes its new state into that memory, as ``p -= lr * g`` would; the
    state replaced could only be read through the tensor, which gets the new
    one."""
    out = []
    for k, ref in prog.updated:
        t = ref()
        if t is None or t._cell is not None or t._node is not None:
            continue
        v = t._view
        # (views taken once and gone, as ``p.data.normal_()`` at init, leave an Aliases)
        if v is not None and (type(v) is not Aliases or any(r() is not None for r in v.refs)):
            continue
        a = arrays[k]
        # held by: t._value, ``arrays``, ``a`` and getrefcount's argument
        if type(a) is np.ndarray and a.base is None and sys.getrefcount(a) <= 4:
            out.append(k)
    return out


def _lost(prog: _Program, given: list[int] | None) -> None:
    """The program failed (a kernel raised, an interrupt) after the arrays of
    the ``given`` inputs went to it: a result may have been written into part
    of them, so their tensors' values are not known any more. They are deleted
    (reading one raises) rather than left silently wrong."""
    for k, ref in prog.updated:
        t = ref()
        if given and k in given and t is not None:
            delete(t)


def _check_donatable(t: Any, i: int) -> None:
    if isinstance(t, Tensor) and type(t._view) is ViewOf:
        raise ValueError(f"pf.compile: donated argument leaf {i} ({list(t.shape)}) is a view "
                         "of another tensor: its memory is shared, it cannot be donated")


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor._leaf(np.asarray(x))


def trace_program(f: Callable, args: tuple, kwargs: dict, leaves: list[Any] | None = None
                  ) -> tuple[_Program, Any, list[Tensor]]:
    """Run ``f`` once, recording, and make the program of that call: its
    inputs, outputs and in-place effects (see the module docstring). Values
    realized meanwhile (eager mode, a print in ``f``) keep their history until
    the program is collected. In eager mode too the call is recorded, then run
    as one program."""
    eager = CONFIG.eager
    CONFIG.eager = False  # one program: its ops are recorded, then run together
    try:
        with tracing():
            GRAD_MODE.jit_depth += 1
            try:
                return _trace_program(f, args, kwargs, leaves)
            finally:
                GRAD_MODE.jit_depth -= 1
    finally:
        CONFIG.eager = eager


def _trace_program(f: Callable, args: tuple, kwargs: dict, leaves: list[Any] | None
                   ) -> tuple[_Program, Any, list[Tensor]]:
    arg_tensors = [x for x in (leaves or []) if isinstance(x, Tensor)]
    lazy = [t for t in arg_tensors if t._node is not None]
    if lazy:
        realize(lazy)  # arguments are program inputs: values
    fresh: dict[int, Tensor] = {}
    rebinds: dict[int, list[Any]] = {}  # id -> [tensor, first old state, count]
    prologue: list[tuple[str, Any]] = []
    feeds: dict[int, int] = {}  # id of a host_scalar leaf -> its index among the feeds
    baked: list[tuple[Any, str, Any]] = []  # guard_value: (holder, key, object)

    def observe(kind: str, t: Tensor | None, old: Any) -> None:
        if kind == "leaf":
            fresh[id(t)] = t
        elif kind == "feed":
            fresh.pop(id(t), None)
            feeds[id(t)] = len(feeds)
            prologue.append(("feed", (old, t.dtype.np)))
        elif kind == "effect":
            prologue.append(("effect", old))
        elif kind == "guard":
            baked.append(old)
        elif id(t) in rebinds:
            rebinds[id(t)][2] += 1
        else:
            rebinds[id(t)] = [t, old, 1]

    looked: list[bool] = []

    def look(tensors: Sequence[Tensor]) -> None:
        # f reads a value (.item(), print, bool(), a lax predicate, a data-
        # dependent shape): the Python after it may depend on it, and a replay
        # would not see it change (jax.jit raises there; this call runs f)
        if tensors:
            looked.append(True)

    guard = _globals_guard(f)
    first = _next_seq()
    OBSERVERS.append(observe)
    REALIZE_GUARDS.append(look)
    try:
        result = f(*args, **kwargs)
    finally:
        OBSERVERS.remove(observe)
        REALIZE_GUARDS.remove(look)
    outs, out_tree = tree_flatten(result)
    arg_pos = {id(x): i for i, x in enumerate(leaves or []) if isinstance(x, Tensor)}
    reasons = []
    if looked:
        reasons.append("f looks at a value it computes (.item(), .numpy(), print, bool() or "
                       "Python control flow on a tensor, a lax predicate or bound, a data-"
                       "dependent shape): a replay could not see that value change")
    out_static: list[Any] = []
    requested: list[Tensor] = []
    kinds: list[tuple[str, Any, int, Any]] = []
    arg_outs: list[tuple[int, int]] = []
    captured_outs: list[tuple[int, Any]] = []
    for k, o in enumerate(outs):
        if isinstance(o, Tensor) and id(o) in arg_pos:
            arg_outs.append((k, arg_pos[id(o)]))
            out_static.append(None)
        elif isinstance(o, Tensor) and id(o) in rebinds and id(o) not in fresh:
            captured_outs.append((k, weakref.ref(o)))  # (its new state: a "mut" output)
            out_static.append(None)
        elif isinstance(o, Tensor) and (source(o) is not None and
                                      (source(o).seq >= first or o._node is not None)):
            n = source(o)
            if n.rg and not n.freed and GRAD_MODE.enabled:
                reasons.append("f returns a tensor with a live autograd graph (it depends "
                               "on a tensor requiring grad, and no backward went through "
                               "it): a replay would return it without that graph")
            out_static.append(None)
            requested.append(o)
            kinds.append(("out", k, 0, o.dtype))
        elif isinstance(o, Tensor) and id(o) in fresh:
            reasons.append("f returns a tensor it made from host data")
            out_static.append(o)
        else:
            if not isinstance(o, Tensor) and o is not None and not isinstance(o, str):
                reasons.append(f"f returns a Python {type(o).__name__} (computed in Python "
                               "on each call)")
            out_static.append(o)  # an argument or captured tensor returned as is
    snapshots: dict[int, Tensor] = {}
    for t, old, count in rebinds.values():
        snapshots[id(old)] = t
        if id(t) in fresh:
            reasons.append("f updates in place a tensor it made from host data (state "
                           "created on this call)")
        elif id(t) in arg_pos:
            reasons.append("f updates an argument in place")
        else:
            requested.append(t)
            kinds.append(("mut", weakref.ref(t), count, t.dtype))

    def before(t: Tensor) -> bool:  # computed before the call: an input, not traced into
        if id(t) in arg_pos:  # an argument is an input whatever made it (pf.ones(2): a
            return True       # constant, which would be baked in and replayed)
        n = source(t)
        return n is not None and 0 <= n.seq < first

    sub = collect(requested, boundary=before, trace=True) if requested else None
    # new gradients of the tensors read or updated: outputs too
    if sub is not None:
        seen = {id(t) for t in requested}
        for t in [*sub.leaves, *(r[0] for r in rebinds.values())]:
            owner = snapshots.get(id(t), t)
            ag = owner._ag
            g = ag.grad if ag is not None else None
            if g is not None and id(g) not in seen and (source(g) is not None and
                                                        source(g).seq >= first):
                seen.add(id(g))
                requested.append(g)
                kinds.append(("grad", weakref.ref(owner), 0, g.dtype))
        sub = collect(requested, boundary=before, trace=True)
    slots: list[tuple[str, Any]] = []
    for leaf in (sub.leaves if sub is not None else []):
        owner = snapshots.get(id(leaf), leaf)
        if id(owner) in arg_pos:
            slots.append(("arg", arg_pos[id(owner)]))
        elif id(owner) in feeds:
            slots.append(("feed", feeds[id(owner)]))
        elif id(owner) in fresh:
            reasons.append("f reads a tensor it made from host data (pf.tensor or pf.randn "
                           "inside f, an optimizer's per-step scalars)")
            slots.append(("ext", weakref.ref(owner)))
        else:
            slots.append(("ext", weakref.ref(owner)))
    if sub is None:
        reasons.append("f computes nothing")
        sub = collect([])
    prog = _Program(sub, slots, kinds, out_tree, out_static, arg_outs, (*guard, *baked),
                    "; ".join(dict.fromkeys(reasons)) or None, prologue=prologue,
                    constants=_constants(sub))
    prog.captured_outs = captured_outs
    return prog, result, requested


def _argnums_and_names(f: Callable, argnums: int | Sequence[int], argnames: str | Sequence[str],
                       what: str) -> tuple[tuple[int, ...], frozenset[str]]:
    """JAX's rule: ``*_argnums`` and ``*_argnames`` name the same parameters,
    each completed from the other through ``f``'s signature when it has one."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    names = (argnames,) if isinstance(argnames, str) else tuple(argnames)
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):  # a builtin or a callable without a signature
        return nums, frozenset(names)
    positional = [p.name for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    by_name = {p.name for p in params if p.kind != p.POSITIONAL_ONLY}
    has_var_kw = any(p.kind == p.VAR_KEYWORD for p in params)
    for name in names:
        if name not in by_name and not has_var_kw:
            raise ValueError(f"pf.compile: {what}_argnames names {name!r}, which is not a "
                             f"parameter of {getattr(f, '__name__', f)!r} (parameters: "
                             f"{[p.name for p in params]})")
    nums += tuple(positional.index(n) for n in names
                  if n in positional and positional.index(n) not in nums)
    names += tuple(positional[i] for i in nums if 0 <= i < len(positional)
                   and positional[i] in by_name and positional[i] not in names)
    return nums, frozenset(names)


# torch.compile's backends: each computes what the eager program computes
_TORCH_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")


def compile(f: Callable | None = None, static_argnums: int | Sequence[int] = (),  # noqa: A001
            donate_argnums: int | Sequence[int] = (), *,
            static_argnames: str | Sequence[str] = (),
            donate_argnames: str | Sequence[str] = (),
            fullgraph: bool = False, dynamic: bool | None = None, backend: str = "inductor",
            mode: str | None = None, options: dict | None = None,
            disable: bool = False) -> Any:
    """``f`` traced once per signature and replayed without Python (see the
    module docstring for the guards and the caveats). ``f.lower(*args)``
    gives the IR, ``f.stats()`` the hits, misses, retraces and Python calls.
    Usable as ``@pf.compile`` or ``@pf.compile(static_argnums=...)``.

    ``torch.compile``'s keywords: ``fullgraph``, ``dynamic``, ``mode`` and
    ``options`` are tuning hints (the program computes the same either way),
    ``backend`` one of torch's names, ``disable=True`` returns ``f`` itself.
    A compiled module's attributes (``parameters()``, ``train()``, ...) are
    the module's; ``_orig_mod`` is the module, as torch's."""
    del fullgraph, dynamic, mode, options  # (hints: the same values either way)
    if not isinstance(backend, str) or backend not in _TORCH_BACKENDS:
        raise ValueError(f"pf.compile: backend={backend!r} is not supported; torch's "
                         f"{', '.join(_TORCH_BACKENDS)} compute the same here (the backend "
                         "pf.compile runs is pf.config.backend)")
    if disable:
        return (lambda g: g) if f is None else f
    if f is None:
        return lambda g: Compiled(g, static_argnums, donate_argnums, static_argnames,
                                  donate_argnames)
    return Compiled(f, static_argnums, donate_argnums, static_argnames, donate_argnames)


@dataclass
class TracedProgram:
    """What ``pf.trace`` returns: the program one call of ``f`` recorded.
    Calling it (``torch.jit.trace(f, example)(x)``) calls ``pf.compile(f)``."""

    inputs: list[Tensor]  # program inputs: the argument tensors, then captured tensors
    outputs: list[Tensor]  # f's tensor results, then in-place updates and new gradients
    ir: str  # the pyflame MLIR text
    result: Any  # what f returned
    compiled: Any = None  # pf.compile(f)

    def __str__(self) -> str:
        return self.ir

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.compiled(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        """A traced module answers for the module (``parameters()``, ``eval()``)."""
        if name.startswith("__") or name == "compiled":
            raise AttributeError(name)
        return getattr(self.compiled.f, name)


def trace(f: Callable, example_inputs: Any = (), **kwargs: Any) -> TracedProgram:
    """``torch.jit.trace(f, example_inputs)`` (``pf.jit.trace``): a tuple of
    inputs is the arguments, anything else the one argument; the result is
    callable (``pf.compile(f)``). torch's keywords (``check_trace``, ...) are
    checks of TorchScript's and ignored."""
    del kwargs
    args = example_inputs if type(example_inputs) is tuple else (example_inputs,)
    return program(f, *args)


def program(f: Callable, *args: Any, **kwargs: Any) -> TracedProgram:
    """``pf.trace(f, *args)``: run ``f(*args)`` once, recording, and return
    its program (its inputs, outputs and IR). The call's effects happen as in
    an uncompiled call."""
    leaves, _ = tree_flatten((args, kwargs))
    prog, result, requested = trace_program(f, args, kwargs, leaves)
    inputs = [leaves[ref] if kind == "arg" else ref() if kind == "ext" else leaf
              for (kind, ref), leaf in zip(prog.slots, prog.sub.leaves)]
    return TracedProgram(inputs, requested, str(build_module(prog.sub)), result, compile(f))


# ---- torch.jit's other names: TorchScript is not a target here ----

def script(obj: Any, *args: Any, **kwargs: Any) -> Any:
    """``torch.jit.script``: the function or module itself (it computes what
    the scripted one computes; Python runs it, pf.compile compiles it)."""
    del args, kwargs
    return obj


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def _passthrough(fn: Any = None, **kwargs: Any) -> Any:
    """``@torch.jit.ignore``, ``unused``, ``export``: the function itself."""
    del kwargs
    return (lambda g: g) if fn is None else fn


ignore = unused = export = _passthrough


def save(*args: Any, **kwargs: Any) -> None:
    del args, kwargs
    raise NotImplementedError("torch.jit.save: TorchScript archives are not supported; save "
                              "the weights with pf.save(model.state_dict(), path) and load "
                              "them into the model's class with load_state_dict")


def load(*args: Any, **kwargs: Any) -> Any:
    del args, kwargs
    raise NotImplementedError("torch.jit.load: TorchScript archives are not supported; build "
                              "the model in Python and load_state_dict(pf.load(path)) its weights")


@dataclass(frozen=True)
class ShapeDtypeStruct:
    """A shape and a dtype standing for a tensor (``jax.ShapeDtypeStruct``)."""

    shape: tuple[int, ...]
    dtype: DType

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


def eval_shape(f: Callable, *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``f``'s results, as a pytree of
    ``ShapeDtypeStruct`` (``jax.eval_shape``): ``f`` runs recording (shape
    rules only, nothing is computed unless ``f`` looks at a value); an
    argument leaf may be a ``ShapeDtypeStruct`` instead of a tensor."""
    leaves, tree = tree_flatten((args, kwargs))
    leaves = [empty(list(x.shape), dtype=x.dtype) if isinstance(x, ShapeDtypeStruct) else x
              for x in leaves]
    a, k = tree_unflatten(tree, leaves)
    eager = CONFIG.eager
    CONFIG.eager = False
    try:
        out = f(*a, **k)
    finally:
        CONFIG.eager = eager
    outs, out_tree = tree_flatten(out)
    return tree_unflatten(out_tree, [ShapeDtypeStruct(tuple(o.shape), o.dtype)
                                     if isinstance(o, Tensor) else o for o in outs])


class _JitModule(types.ModuleType):
    """This module, callable: ``pf.jit(f, static_argnums=...)`` is
    ``pf.compile`` under jax.jit's name (``pf.jit`` is this module, which
    ``import pyflame_mlir`` binds to that attribute)."""

    def __call__(self, f: Callable | None = None, *args: Any, **kwargs: Any) -> Any:
        return compile(f, *args, **kwargs)


sys.modules[__name__].__class__ = _JitModule


def block_until_ready(x: Any) -> Any:
    """``jax.block_until_ready``: every tensor leaf of ``x`` computed (in one
    graph); returns ``x``."""
    lazy = [t for t in tree_flatten(x)[0] if isinstance(t, Tensor) and t._node is not None]
    if lazy:
        realize(lazy)
    return x


def device_put(x: Any, device: Any = None, **kwargs: Any) -> Any:
    """``jax.device_put``: the leaves of ``x`` as tensors (numpy arrays and
    Python numbers converted; tensors as they are). There is one device:
    ``device`` and jax's donation options are not used; a sharding is
    ``pf.shard``'s (it raises here rather than being ignored)."""
    if "Sharding" in type(device).__name__ or "Sharding" in type(kwargs.get("src")).__name__:
        raise NotImplementedError("device_put with a sharding: use pf.shard(tensor, mesh, "
                                  "spec) (pf.sharding), which lays a tensor out over a mesh")
    leaves, tree = tree_flatten(x)  # (host data in JAX's dtypes: float32/int32 without x64)
    return tree_unflatten(tree, [v if isinstance(v, Tensor) else
                                 Tensor._leaf(canonical_host(v)) if isinstance(
                                     v, np.ndarray | float | int | np.number | np.bool_)
                                 else v for v in leaves])


def device_get(x: Any) -> Any:
    """``jax.device_get``: the tensor leaves of ``x`` as numpy arrays."""
    block_until_ready(x)
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [v.numpy() if isinstance(v, Tensor) else v for v in leaves])


_NATIVE_HAND_OVER = _native_hand_over()
