"""``pf.func``: PyTorch's ``torch.func`` (functorch) names for the function
transforms, with torch's argument names and result conventions where they
differ from JAX's (``in_dims``; ``grad_and_value`` returns the gradient
first), plus ``functional_call`` and ``stack_module_state`` for running a
module with other parameters (ensembles under ``vmap``, per-example
gradients of a model).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from .autodiff import (
    _as_primals,
    _distinct,
    _Forward,
    _next_seq,
    _seed_like,
    tracing,
    value_and_grad,
)
from .autodiff import jvp as _jvp
from .autodiff import vjp as vjp
from .core import Tensor
from .creation import VMAP_RANDOMNESS
from .nn.module import Module
from .ops import stack
from .tree_util import tree_flatten, tree_unflatten
from .vmap import hessian as hessian
from .vmap import jacfwd as _jacfwd
from .vmap import jacrev as _jacrev
from .vmap import vmap as _vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "stack_module_state", "vjp", "vmap"]


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``torch.func.vmap``. Random ops inside are drawn on the host once per
    call, which is torch's ``randomness='same'``; with 'error' (the default) a
    random draw raises torch's error, with 'different' a NotImplementedError
    (per-example draws are not supported)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    def run(*args: Any, **kwargs: Any) -> Any:
        prev = VMAP_RANDOMNESS[0]
        VMAP_RANDOMNESS[0] = randomness
        try:
            return func(*args, **kwargs)
        finally:
            VMAP_RANDOMNESS[0] = prev
    return _vmap(run, in_axes=in_dims, out_axes=out_dims)


def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """The gradient of a scalar function (``(grad, aux)`` with ``has_aux``)."""
    vg = value_and_grad(func, argnums, has_aux)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapped


def grad_and_value(func: Callable, argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable:
    """``(grad, value)``, or ``(grad, (value, aux))`` with ``has_aux`` (torch's order)."""
    vg = value_and_grad(func, argnums, has_aux)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        value, g = vg(*args, **kwargs)
        return g, value
    return wrapped


def jvp(func: Callable, primals: Sequence[Any], tangents: Sequence[Any], *,
        strict: bool = False, has_aux: bool = False) -> tuple:
    """``(output, jvp_out)``, or ``(output, jvp_out, aux)`` with ``has_aux``."""
    if strict:
        raise NotImplementedError("torch.func.jvp(strict=True) is not supported")
    if not has_aux:
        return _jvp(func, primals, tangents)
    aux_box: list[Any] = []

    def without_aux(*a: Any) -> Any:
        out, aux = func(*a)
        aux_box.append(aux)
        return out
    out, tangent = _jvp(without_aux, primals, tangents)
    return out, tangent, aux_box[-1]


def linearize(func: Callable, *primals: Any) -> tuple[Any, Callable]:
    """``torch.func.linearize``: ``(func(*primals), jvp_fn)``, ``jvp_fn(*tangents)``
    the JVP at ``primals`` (one tangent per primal, of its tree and shapes).
    ``func`` is traced once (a random op inside draws once: every ``jvp_fn``
    call differentiates that draw, as torch's)."""
    flat, tree = tree_flatten(primals)
    with tracing():
        first = _next_seq()
        args = _distinct(_as_primals(flat))
        out = func(*tree_unflatten(tree, args))
        out_flat, out_tree = tree_flatten(out)
        forward = _Forward(args, out_flat, first)

    def jvp_fn(*tangents: Any) -> Any:
        t_flat, t_tree = tree_flatten(tangents)
        if t_tree != tree:
            raise RuntimeError(f"Expected the tangents {t_tree} to have the same argspec as "
                               f"the primals {tree}")
        for i, (p, t) in enumerate(zip(args, t_flat)):
            if not isinstance(t, Tensor) or t.shape != p.shape:
                raise RuntimeError(f"tangent:{i} with shape "
                                   f"{list(getattr(t, 'shape', ()))} in flattened pytree "
                                   f"doesn't match the shape {list(p.shape)} of the "
                                   f"corresponding primal.")
        return tree_unflatten(out_tree, forward.run([_seed_like(p, t)
                                                     for p, t in zip(args, t_flat)]))
    return out, jvp_fn


def jacrev(func: Callable, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable:
    del chunk_size, _preallocate_and_copy  # memory knobs: one vmapped pullback here
    return _jacrev(func, argnums, has_aux)


def jacfwd(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    del randomness
    return _jacfwd(func, argnums, has_aux)


def _tensor_slots(module: Module, prefix: str = "") -> Iterator[tuple[str, dict, str]]:
    """Every (qualified name, owning table, key) of parameters and buffers,
    tied ones under each of their names (``remove_duplicate=False``)."""
    for key in list(module._parameters):
        yield prefix + key, module._parameters, key
    for key in list(module._buffers):
        yield prefix + key, module._buffers, key
    for name, child in module._modules.items():
        if child is not None:
            yield from _tensor_slots(child, f"{prefix}{name}.")


@contextlib.contextmanager
def _swapped(module: Module, values: Mapping[str, Any], tie_weights: bool,
             strict: bool) -> Iterator[None]:
    slots = list(_tensor_slots(module))
    names = {name for name, _, _ in slots}
    unexpected = sorted(set(values) - names)
    if unexpected:
        raise RuntimeError(f"functional_call got unexpected key(s): {unexpected} (the module "
                           f"{type(module).__name__} has no such parameter or buffer)")
    if strict:
        missing = sorted(names - set(values))
        if missing:
            raise RuntimeError(f"functional_call(strict=True): missing key(s) {missing}")
    # tied tensors (one object under several names) take the value given for any name
    by_object: dict[int, Any] = {}
    if tie_weights:
        for name, table, key in slots:
            if name in values and table[key] is not None:
                by_object[id(table[key])] = values[name]
    saved = []
    try:
        for name, table, key in slots:
            old = table[key]
            new = values.get(name, by_object.get(id(old)) if old is not None else None)
            if name not in values and new is None:
                continue
            saved.append((table, key, old))
            table[key] = new
        yield
    finally:
        for table, key, old in reversed(saved):
            table[key] = old


def functional_call(module: Module, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Call ``module`` with its parameters and buffers replaced by the given
    tensors (by qualified name), restoring them afterwards; the module is a
    pure function of those tensors, so ``grad``/``vmap`` can go through it."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, Mapping):
        values = dict(dicts)
    else:
        values = {}
        for d in dicts:
            dup = set(values) & set(d)
            if dup:
                raise ValueError(f"functional_call: {sorted(dup)} appeared in multiple "
                                 "dictionaries; behavior of functional call is ambiguous")
            values.update(d)
    call_args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _swapped(module, values, tie_weights, strict):
        return module(*call_args, **(kwargs or {}))


def stack_module_state(models: Sequence[Module]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The parameters and buffers of same-shaped models stacked along a new
    leading dim (new leaves; parameters require grad), for ``vmap`` over
    ``functional_call``."""
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({type(m) for m in models}) != 1 or \
            len({m.training for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class "
                           "and all in training mode or all in evaluation mode")
    first = models[0]
    params = {name: stack([dict(m.named_parameters())[name].detach() for m in models])
              .requires_grad_(p.requires_grad) for name, p in first.named_parameters()}
    buffers = {name: stack([dict(m.named_buffers())[name] for m in models])
               for name, _ in first.named_buffers()}
    return params, buffers
