"""JAX's runtime queries, debugging helpers and host callbacks:
``pf.devices()``, ``pf.default_backend()``, ``pf.debug.print``/``callback``,
the arrays' ``block_until_ready()``, ``pf.disable_jit()``,
``pf.make_jaxpr``, ``pf.pure_callback`` and ``pf.experimental.io_callback``.
pyflame runs on the host: one CPU device (the compiled backends are chosen
per program, not per device)."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import numpy as pnp
from .autodiff import vjp
from .autograd import Function
from .core import Tensor, realize
from .dialects.dtypes import dtype as to_dtype
from .jax_config import config, enable_x64
from .jit import ShapeDtypeStruct, block_until_ready
from .jit import program as trace_program
from .ops import device
from .tree_util import tree_flatten, tree_unflatten
from .vmap import ConcretizationError, MappedLoopError

__all__ = ["Array", "ClosedProgram", "debug", "default_backend", "device_count", "devices",
           "linear_transpose",
           "disable_jit", "experimental", "local_device_count", "local_devices",
           "effects_barrier", "ensure_compile_time_eval", "make_jaxpr", "named_call",
           "named_scope", "process_count", "process_index", "profiler", "pure_callback"]


Array = Tensor  # jax.Array: pf's arrays are its tensors (isinstance checks, annotations)


def devices(backend: str | None = None) -> list[device]:
    """JAX's ``devices()``: this process's devices (one CPU)."""
    if backend not in (None, "cpu"):
        raise RuntimeError(f"Unknown backend {backend}: pyflame's arrays live on the host "
                           "('cpu'); the backends that compile programs are chosen with "
                           "pf.set_backend")
    return [device("cpu")]


local_devices = devices


def device_count(backend: str | None = None) -> int:
    return len(devices(backend))


local_device_count = device_count


def default_backend() -> str:
    return "cpu"


def _host_values(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``args``/``kwargs`` with every tensor leaf as its numpy value (all
    computed in one graph)."""
    leaves, tree = tree_flatten((args, kwargs))
    lazy = [t for t in leaves if isinstance(t, Tensor)]
    if lazy:
        try:
            realize(lazy)
        except MappedLoopError:
            raise
        except ConcretizationError as e:  # a mapped value under a vmap's one trace: that
            raise MappedLoopError(           # vmap runs per example (JAX prints each one)
                f"jax.debug.print/callback of a mapped value: {e}") from None
    host = [t.numpy() if isinstance(t, Tensor) else t for t in leaves]
    return tree_unflatten(tree, host)


def _debug_print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """``jax.debug.print``: ``fmt.format(*args, **kwargs)`` with the arrays'
    values (numpy's formatting), printed when called (pyflame records
    eagerly; under ``pf.compile`` reading the values makes the function run
    its Python on every call, so it prints every call, as JAX's)."""
    del ordered
    a, k = _host_values(args, kwargs)
    print(fmt.format(*a, **k))


def _debug_callback(callback: Callable[..., Any], *args: Any, ordered: bool = False,
                    **kwargs: Any) -> None:
    """``jax.debug.callback``: ``callback`` on the arguments' numpy values;
    its result is discarded."""
    del ordered
    a, k = _host_values(args, kwargs)
    callback(*a, **k)


debug = types.SimpleNamespace(print=_debug_print, callback=_debug_callback)


def _block_until_ready(self: Tensor) -> Tensor:
    """``jax.Array.block_until_ready``: the value computed; returns the array."""
    return block_until_ready(self)


Tensor.block_until_ready = _block_until_ready  # type: ignore[attr-defined]


@contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """``jax.disable_jit()``: inside the block, ``pf.compile``'d functions run
    their Python op by op on every call (no trace is replayed), so ``print``,
    Python control flow on values and a debugger see each call."""
    prev = config.jax_disable_jit
    config.jax_disable_jit = bool(disable)
    try:
        yield
    finally:
        config.jax_disable_jit = prev


# ---- make_jaxpr: the traced program, printed as pyflame IR ----


@dataclass
class ClosedProgram:
    """What ``pf.make_jaxpr(f)(*args)`` returns (JAX's ``ClosedJaxpr``): its
    ``str`` is the traced ``pyflame`` MLIR (not a jaxpr: a documented
    difference); ``in_avals``/``out_avals`` the shapes and dtypes of the
    flattened arguments and results; ``consts`` the tensors ``f`` captured
    (program inputs that are not arguments); ``out_tree``: the results' tree."""

    text: str
    in_avals: list[ShapeDtypeStruct]
    out_avals: list[ShapeDtypeStruct]
    consts: list[Tensor]
    out_tree: Any

    def __str__(self) -> str:
        return self.text

    pretty_print = __str__

    @property
    def jaxpr(self) -> ClosedProgram:
        return self


def _aval(t: Tensor) -> ShapeDtypeStruct:
    return ShapeDtypeStruct(tuple(t.shape), t.dtype)


def _as_array(x: Any) -> Any:
    """An argument leaf as JAX takes it: numpy data and Python numbers become
    arrays (JAX's dtypes); tensors and other Python values are kept."""
    if isinstance(x, np.ndarray | np.generic | bool | int | float):
        return pnp.asarray(x)
    return x


def make_jaxpr(fun: Callable[..., Any], static_argnums: int | Sequence[int] = (),
               return_shape: bool = False) -> Callable[..., Any]:
    """``jax.make_jaxpr``: ``make_jaxpr(f)(*args)`` traces one call of ``f``
    and returns a ``ClosedProgram`` (its ``str`` is pyflame IR, not a jaxpr);
    ``return_shape=True`` also returns the results' ``ShapeDtypeStruct`` tree.
    The call's effects happen, as in an uncompiled call."""
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    def traced(*args: Any, **kwargs: Any) -> Any:
        n = len(args)
        fixed = {i % n: args[i] for i in static if -n <= i < n}
        dyn = [_as_array(a) if i not in fixed else a for i, a in enumerate(args)]
        dyn_kwargs = {k: _as_array(v) for k, v in kwargs.items()}
        prog = trace_program(fun, *dyn, **dyn_kwargs)
        arg_leaves = [x for i, a in enumerate(dyn) if i not in fixed
                      for x in tree_flatten(a)[0]] + tree_flatten(dyn_kwargs)[0]
        ids = {id(t) for t in arg_leaves if isinstance(t, Tensor)}
        outs, out_tree = tree_flatten(prog.result)
        for o in outs:
            if not isinstance(o, Tensor):
                raise TypeError(f"make_jaxpr: f returned a {type(o).__name__} leaf; its "
                                "results must be arrays")
        closed = ClosedProgram(prog.ir, [_aval(t) for t in arg_leaves if isinstance(t, Tensor)],
                               [_aval(o) for o in outs],
                               [t for t in prog.inputs if id(t) not in ids], out_tree)
        if return_shape:
            return closed, tree_unflatten(out_tree, [_aval(o) for o in outs])
        return closed
    return traced


# ---- host callbacks ----

_VMAP_METHODS = (None, "sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized")


def _check_results(results: Any, specs: Any, what: str) -> list[Tensor]:
    """The callback's results as tensors of the declared shapes and dtypes
    (JAX's check: a mismatch raises)."""
    spec_leaves, spec_tree = tree_flatten(specs)
    try:
        got = spec_tree.flatten_up_to(results)
    except (ValueError, TypeError) as e:
        raise TypeError(f"{what}: the callback returned a value of structure "
                        f"{tree_flatten(results)[1]}, declared {spec_tree}: {e}") from None
    out = []
    for i, (r, s) in enumerate(zip(got, spec_leaves)):
        arr = np.asarray(r.numpy() if isinstance(r, Tensor) else r)
        shape, dt = tuple(s.shape), to_dtype(s.dtype)
        if arr.shape != shape:
            raise ValueError(f"{what}: result {i} of the callback has shape {arr.shape}, "
                             f"declared {shape} (result_shape_dtypes)")
        if arr.dtype != dt.np:
            raise ValueError(f"{what}: result {i} of the callback has dtype {arr.dtype}, "
                             f"declared {dt.name} (result_shape_dtypes)")
        out.append(Tensor._leaf(np.array(arr)))
    return out


def _callback(what: str, callback: Callable[..., Any], result_shape_dtypes: Any,
              args: tuple, kwargs: dict, vmap_method: str | None) -> Any:
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(f"{what}: vmap_method must be one of {_VMAP_METHODS[1:]} or None, "
                         f"got {vmap_method!r}")
    leaves, tree = tree_flatten((args, kwargs))
    pos = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
    spec_tree = tree_flatten(result_shape_dtypes)[1]

    class Callback(Function):
        """The host call as one differentiable-looking step whose rules raise
        (JAX: a callback has no derivative unless a custom rule wraps it)."""

        @staticmethod
        def forward(ctx: Any, *tensors: Any) -> tuple:
            host = list(leaves)
            try:
                if tensors:
                    realize(list(tensors))
            except MappedLoopError:
                raise
            except ConcretizationError:  # under vmap: run f per example (JAX's
                if vmap_method is None:   # "sequential"; any method's values are equal)
                    raise NotImplementedError(
                        f"vmap of {what} requires vmap_method to be set (one of "
                        f"{_VMAP_METHODS[1:]})") from None
                raise MappedLoopError(f"{what} under vmap: called per example") from None
            for i, t in zip(pos, tensors):
                host[i] = t.numpy()
            a, k = tree_unflatten(tree, host)
            return tuple(_check_results(callback(*a, **k), result_shape_dtypes, what))

        @staticmethod
        def backward(ctx: Any, *cotangents: Any) -> tuple:
            raise ValueError(f"{what}: Pure callbacks do not support transpose. Please use "
                             "pf.custom_vjp to use callbacks while taking gradients.")

        @staticmethod
        def jvp(ctx: Any, *tangents: Any) -> tuple:
            raise ValueError(f"{what}: Pure callbacks do not support JVP. Please use "
                             "pf.custom_jvp to use callbacks while taking gradients.")

    out = Callback.apply(*[leaves[i] for i in pos])
    out = list(out) if isinstance(out, tuple | list) else [out]
    return tree_unflatten(spec_tree, out)


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None,
                  **kwargs: Any) -> Any:
    """``jax.pure_callback``: ``callback`` runs on the host on the arguments'
    numpy values and its results (checked against ``result_shape_dtypes``, a
    tree of ``ShapeDtypeStruct``) come back as arrays. Under ``pf.compile`` the
    function runs its Python on every call (the callback with it); under
    ``vmap`` (``vmap_method`` given) it is called once per example, which
    gives every method's values; differentiating through it raises, as in
    JAX, unless a ``custom_jvp``/``custom_vjp`` wraps it."""
    del sharding
    return _callback("pure_callback", callback, result_shape_dtypes, args, kwargs,
                     vmap_method)


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding: Any = None, ordered: bool = False, **kwargs: Any) -> Any:
    """``jax.experimental.io_callback``: ``pure_callback`` for a callback with
    effects; called when the call runs (pyflame records eagerly, in program
    order, so calls are ordered whether ``ordered`` or not); under ``vmap`` once
    per example, in order."""
    del sharding, ordered
    return _callback("io_callback", callback, result_shape_dtypes, args, kwargs,
                     "sequential")


experimental = types.SimpleNamespace(io_callback=io_callback, enable_x64=enable_x64)


def linear_transpose(fun: Callable, *primals: Any, reduce_axes: tuple = ()) -> Callable:
    """``jax.linear_transpose``: the transpose of the linear function ``fun``,
    whose inputs have the structure, shapes and dtypes of ``primals`` (arrays
    or ``ShapeDtypeStruct``s; their values are not used). The returned
    function takes a cotangent shaped like ``fun``'s output and returns a
    tuple, one cotangent per primal: the pullback of ``fun`` at zero.

    JAX refuses a non-linear ``fun`` when it traces it; here ``fun`` is
    checked on every call instead: its output at zero must be zero (not
    affine) and its pullback at a random point must equal the one at zero
    (its Jacobian constant), else ``ValueError``."""
    if reduce_axes:
        raise NotImplementedError("linear_transpose(reduce_axes=...) is not supported "
                                  "(JAX removed it)")
    flat, tree = tree_flatten(primals)
    shapes = [(tuple(p.shape), to_dtype(p.dtype)) for p in flat]
    for _, d in shapes:
        if not d.is_floating_point:
            raise TypeError(f"linear_transpose: primals must be floating point, got {d}")

    def at(values: list[Any]) -> tuple:
        return tuple(tree_unflatten(tree, [pnp.asarray(v, d) for v, (_, d) in
                                           zip(values, shapes)]))

    zeros = [np.zeros(s, d.np) for s, d in shapes]
    out, pull0 = vjp(fun, *at(zeros))
    for o in tree_flatten(out)[0]:
        if np.any(np.asarray(pnp.asarray(o).numpy()) != 0):
            raise ValueError("linear_transpose: fun is not linear (its output at zero is "
                             "not zero: an affine term)")
    rng = np.random.default_rng(0)
    probe = [rng.standard_normal(s).astype(d.np) for s, d in shapes]
    _, pull1 = vjp(fun, *at(probe))

    def transpose_fun(out_cotangent: Any) -> tuple:
        ct = pull0(out_cotangent)
        other = pull1(out_cotangent)
        for a, b in zip(tree_flatten(ct)[0], tree_flatten(other)[0]):
            an, bn = a.numpy().astype(np.float64), b.numpy().astype(np.float64)
            scale = 1.0 + max(float(np.max(np.abs(an), initial=0.0)),
                              float(np.max(np.abs(bn), initial=0.0)))
            if not np.allclose(an, bn, rtol=1e-3, atol=1e-3 * scale, equal_nan=True):
                raise ValueError("linear_transpose: fun is not linear (its pullback "
                                 "depends on the point: a non-linear op)")
        return ct

    return transpose_fun


# ---- jax.named_scope and jax.profiler: names for profiles pyflame does not take ----


@contextmanager
def named_scope(name: str) -> Iterator[None]:
    """``jax.named_scope``: a name for the ops recorded inside (JAX puts it in
    the ops' metadata, for profiles); pyflame records no scope names, so the
    block runs as it is. ``name`` must be a string, as JAX checks."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


def _profiles_not_kept(what: str) -> NotImplementedError:
    return NotImplementedError(f"jax.profiler.{what}: pyflame keeps no device profiles (its "
                               "arrays live on the host; PYFLAME_LOG and pf.compile(f)"
                               ".stats() report compiles and calls)")


class _Annotation:
    """``TraceAnnotation``/``StepTraceAnnotation``: names for a profiler
    trace; nothing is traced here, so entering and leaving do nothing."""

    def __init__(self, name: str, **kwargs: Any):
        self.name, self.kwargs = name, kwargs

    def __enter__(self) -> _Annotation:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


@contextmanager
def _trace(log_dir: Any, create_perfetto_link: bool = False,
           create_perfetto_trace: bool = False) -> Iterator[None]:
    """``jax.profiler.trace``: the block runs; no trace is written (pyflame
    keeps no device profiles), so ``create_perfetto_link`` is refused."""
    del log_dir
    if create_perfetto_link or create_perfetto_trace:
        raise _profiles_not_kept("trace(create_perfetto_link/trace=True)")
    yield


def _start_trace(log_dir: Any, create_perfetto_link: bool = False,
                 create_perfetto_trace: bool = False) -> None:
    del log_dir
    if create_perfetto_link or create_perfetto_trace:
        raise _profiles_not_kept("start_trace(create_perfetto_link/trace=True)")


def _stop_trace() -> None:
    return None


def _annotate_function(func: Callable[..., Any], name: str | None = None,
                       **kwargs: Any) -> Callable[..., Any]:
    del name, kwargs
    return func


def _device_memory_profile(backend: str | None = None) -> bytes:
    del backend
    raise _profiles_not_kept("device_memory_profile")


def _save_device_memory_profile(filename: Any, backend: str | None = None) -> None:
    del filename, backend
    raise _profiles_not_kept("save_device_memory_profile")


profiler = types.SimpleNamespace(
    trace=_trace, start_trace=_start_trace, stop_trace=_stop_trace,
    TraceAnnotation=_Annotation, StepTraceAnnotation=_Annotation,
    annotate_function=_annotate_function, device_memory_profile=_device_memory_profile,
    save_device_memory_profile=_save_device_memory_profile)


def process_index(backend: str | None = None) -> int:
    """``jax.process_index``: this process's index (one process)."""
    devices(backend)
    return 0


def process_count(backend: str | None = None) -> int:
    devices(backend)
    return 1


def named_call(fun: Callable[..., Any], *, name: str | None = None) -> Callable[..., Any]:
    """``jax.named_call``: ``fun`` itself (the name is for JAX's profiles)."""
    del name
    return fun


@contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """``jax.ensure_compile_time_eval``: pyflame computes values when they are
    read, traced or not, so the block runs as it is."""
    yield


def effects_barrier() -> None:
    """``jax.effects_barrier``: callbacks run when called here, so every
    effect has already happened."""
    return None
