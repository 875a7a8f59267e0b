"""Device meshes, named shardings and ``shard_map`` over a virtual mesh (issue 17).

    mesh = pf.DeviceMesh((2, 2), ("data", "model"))
    x = pf.shard(x, mesh, pf.P("data", None))       # rows split over the "data" axis
    x.sharding, x.addressable_shards                # NamedSharding, one Shard per device

    def step(xb, w):                                # one device's program, local shapes
        return pf.all_reduce(xb @ w, "model")       # explicit collectives, named axes
    f = pf.shard_map(step, mesh, in_specs=(P("data", "model"), P("model", None)),
                     out_specs=P("data", None))

The virtual mesh runs every device's program in this process on the current
backend: each device's program is traced by its own thread, in lockstep (one
thread records at a time, in device order), and a collective is a rendezvous
where the last device to arrive records the exchange for all of them with the
ordinary ops (``add``, ``concat``, ``split``, slicing). The collectives are
therefore exact, and autodiff goes through them by the rules of those ops:
the VJP of ``all_reduce`` is the broadcast of the cotangent, of ``all_gather``
a reduce-scatter, of ``all_to_all`` the inverse all-to-all, of ``ppermute``
the inverse permutation (the tests check them against finite differences and
against the unsharded program). Axis names and semantics follow JAX's
``jax.lax.psum``/``all_gather``/``psum_scatter``/``all_to_all``/``ppermute``;
the placements of a spec are PyTorch DTensor's Shard/Replicate (a mesh axis a
spec does not name replicates the dimension).
"""

from __future__ import annotations

import fnmatch
import functools
import math
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import core, ops
from .autodiff import no_grad
from .compiler import build_module, expand_transforms, note_traffic, run_pipeline
from .core import GRAD_MODE, Tensor
from .creation import zeros_like
from .dialects.opdef import ShapeError
from .dialects.sharding import CollectiveCost, bytes_sent

AxisNames = str | tuple[str, ...]

# ---- meshes and specs ----


class DeviceMesh:
    """A logical n-d array of devices with named axes (``jax.sharding.Mesh``).
    ``devices`` are the device ids in row-major mesh order (default 0..n-1);
    a device's *position* is its row-major index in the mesh."""

    def __init__(self, shape: Sequence[int] | int, axis_names: Sequence[str] | str,
                 devices: Sequence[int] | None = None):
        shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if len(shape) != len(names):
            raise ValueError(f"DeviceMesh: shape {shape} has {len(shape)} axes but "
                             f"{len(names)} axis names {names} were given")
        if len(set(names)) != len(names) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"DeviceMesh: axis names must be distinct strings, got {names}")
        if any(s < 1 for s in shape):
            raise ValueError(f"DeviceMesh: every axis needs at least one device, got {shape}")
        size = math.prod(shape)
        devs = tuple(range(size)) if devices is None else tuple(int(d) for d in
                                                                 np.ravel(devices))
        if len(devs) != size or len(set(devs)) != size:
            raise ValueError(f"DeviceMesh: a mesh of shape {shape} needs {size} distinct "
                             f"device ids, got {list(devs)}")
        self.shape, self.axis_names, self.devices = shape, names, devs

    @property
    def size(self) -> int:
        return len(self.devices)

    def axis_size(self, axes: AxisNames) -> int:
        return math.prod(self.shape[self._axis(a)] for a in _names(axes))

    def _axis(self, name: str) -> int:
        try:
            return self.axis_names.index(name)
        except ValueError:
            raise ValueError(f"mesh axis {name!r} is not one of {self.axis_names}") from None

    def coords(self, position: int) -> tuple[int, ...]:
        return tuple(int(c) for c in np.unravel_index(position, self.shape))

    def index_along(self, position: int, axes: AxisNames) -> int:
        """The device's index in its group along ``axes`` (row-major over them, in
        the order given: JAX's ``axis_index`` of a tuple of names)."""
        c = self.coords(position)
        idx = 0
        for a in _names(axes):
            k = self._axis(a)
            idx = idx * self.shape[k] + c[k]
        return idx

    def groups(self, axes: AxisNames) -> list[list[int]]:
        """The device positions that communicate over ``axes``: one group per
        combination of the other axes' coordinates, each in group-index order."""
        names = _names(axes)
        for a in names:
            self._axis(a)
        others = [k for k, n in enumerate(self.axis_names) if n not in names]
        by_rest: dict[tuple[int, ...], list[int]] = {}
        for p in range(self.size):
            c = self.coords(p)
            by_rest.setdefault(tuple(c[k] for k in others), []).append(p)
        return [sorted(g, key=lambda p: self.index_along(p, names))
                for g in by_rest.values()]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeviceMesh) and (self.shape, self.axis_names, self.devices) \
            == (other.shape, other.axis_names, other.devices)

    def __hash__(self) -> int:
        return hash((self.shape, self.axis_names, self.devices))

    def __repr__(self) -> str:
        axes = ", ".join(f"{n}={s}" for n, s in zip(self.axis_names, self.shape, strict=True))
        return f"DeviceMesh({axes})"


def _names(axes: AxisNames | None) -> tuple[str, ...]:
    if axes is None:
        return ()
    return (axes,) if isinstance(axes, str) else tuple(axes)


class PartitionSpec(tuple):
    """Per tensor dimension: ``None`` (replicated), a mesh axis name, or a tuple
    of names (the dimension split over their product, the first major).
    Trailing dimensions a spec does not mention are replicated. ``P`` for short."""

    def __new__(cls, *entries: str | tuple[str, ...] | None) -> PartitionSpec:
        norm: list[str | tuple[str, ...] | None] = []
        for e in entries:
            if e is None or isinstance(e, str):
                norm.append(e)
            elif isinstance(e, tuple | list) and all(isinstance(a, str) for a in e):
                norm.append(tuple(e) if len(e) != 1 else e[0])
            else:
                raise TypeError(f"PartitionSpec: an entry is None, an axis name or a tuple "
                                f"of names, got {e!r}")
        return super().__new__(cls, norm)

    def axes_of(self, dim: int) -> tuple[str, ...]:
        return _names(self[dim]) if dim < len(self) else ()

    def __repr__(self) -> str:
        return "P(" + ", ".join(repr(e) for e in self) + ")"


P = PartitionSpec


@dataclass(frozen=True)
class NamedSharding:
    """Where each piece of a global tensor lives: ``spec`` over ``mesh``, and the
    mesh axes over which the value is a pending partial sum (``partial``;
    DTensor's Partial placement; the sharding passes' attribute carries them)."""

    mesh: DeviceMesh
    spec: PartitionSpec
    partial: tuple[str, ...] = ()

    def check(self, shape: tuple[int, ...], op: str = "shard") -> None:
        """Raise a ShapeError naming ``op`` unless ``spec`` can lay out ``shape``."""
        if len(self.spec) > len(shape):
            raise ShapeError(op, f"spec {self.spec!r} has {len(self.spec)} entries for a "
                                 f"tensor of rank {len(shape)} {tuple(shape)}")
        used: list[str] = list(self.partial)
        for d in range(len(self.spec)):
            axes = self.spec.axes_of(d)
            for a in axes:
                self.mesh._axis(a)
            used += axes
            n = self.mesh.axis_size(axes)
            if shape[d] % n:
                raise ShapeError(op, f"dimension {d} of {tuple(shape)} (size {shape[d]}) is "
                                     f"split over mesh axes {axes} of {n} devices: it must "
                                     f"be divisible by {n}")
        if len(set(used)) != len(used):
            raise ShapeError(op, f"spec {self.spec!r} (partial {self.partial}) uses a mesh "
                                 "axis twice")

    def num_shards(self, dim: int) -> int:
        return self.mesh.axis_size(self.spec.axes_of(dim))

    def shard_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(s // self.num_shards(d) for d, s in enumerate(shape))

    def block_index(self, position: int, ndim: int) -> tuple[int, ...]:
        """Which shard of each dimension the device at ``position`` holds."""
        return tuple(self.mesh.index_along(position, self.spec.axes_of(d)) for d in range(ndim))

    def block(self, position: int, shape: tuple[int, ...]) -> tuple[slice, ...]:
        local = self.shard_shape(shape)
        return tuple(slice(i * n, (i + 1) * n)
                     for i, n in zip(self.block_index(position, len(shape)), local, strict=True))


@dataclass(frozen=True)
class Shard:
    """One device's piece of a sharded tensor (``jax.Shard``)."""

    device: int
    index: tuple[slice, ...]
    data: np.ndarray


class ShardedTensor(Tensor):
    """A Tensor with a ``NamedSharding``: global shape, dtype and value as any
    Tensor (ops on it give plain tensors), plus where its pieces live."""

    # ``constraint``: made by pf.shard/pf.reshard of a lazy tensor while a
    # ``partition``-ed function is traced: a layout the program must have there
    # (a ``sharding.annotate``), not an input of the program
    __slots__ = ("sharding", "constraint")

    @property
    def addressable_shards(self) -> list[Shard]:
        s: NamedSharding = self.sharding
        value = self.numpy()
        out = []
        for p, dev in enumerate(s.mesh.devices):
            idx = s.block(p, self.shape)
            out.append(Shard(dev, idx, value[idx]))
        return out


def _with_sharding(t: Tensor, sharding: NamedSharding) -> ShardedTensor:
    out = object.__new__(ShardedTensor)
    for name in ("shape", "dtype", "_node", "_index", "_value", "_ag", "_hist", "_mut"):
        setattr(out, name, getattr(t, name))
    out._view = out._cell = None  # a laid-out copy of t's value, not a view of t
    out.sharding = sharding
    out.constraint = t._node is not None and getattr(_TRACING, "depth", 0) > 0
    return out


def shard(t: Tensor, mesh: DeviceMesh, spec: PartitionSpec | Sequence[Any] = ()
          ) -> ShardedTensor:
    """``t`` laid out over ``mesh`` by ``spec`` (``jax.device_put(t, NamedSharding)``,
    ``torch.distributed.tensor.distribute_tensor``). A realized leaf gives a leaf
    (a parameter stays a parameter: its ``requires_grad`` carries over); a lazy
    tensor gives a tensor computed from it, through which gradients flow."""
    spec = spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec)
    sharding = NamedSharding(mesh, spec)
    sharding.check(tuple(t.shape), "shard")
    if t._node is None and t._hist is None:  # a copy, as distribute_tensor: no aliasing
        out = _with_sharding(Tensor._leaf(t._value.copy()), sharding)
        if t.requires_grad:
            out.requires_grad_(True)
        return out
    return _with_sharding(ops.clone(t), sharding)


def reshard(t: Tensor, mesh_or_sharding: DeviceMesh | NamedSharding,
            spec: PartitionSpec | None = None) -> ShardedTensor:
    """The same global value under another layout (gradients flow through)."""
    if isinstance(mesh_or_sharding, NamedSharding):
        sharding = mesh_or_sharding
    else:
        sharding = NamedSharding(mesh_or_sharding, spec if spec is not None else P())
    sharding.check(tuple(t.shape), "reshard")
    return _with_sharding(ops.clone(t), sharding)


def sharding_of(t: Tensor) -> NamedSharding | None:
    """The layout ``t`` enters a program with (a constraint inside one has none)."""
    if isinstance(t, ShardedTensor):
        if t.constraint:
            return None
        return t.sharding
    entry = _PLACED.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else None


# Parameters laid out in place by shard_parameters: id -> (weak reference, layout).
# (Not a WeakKeyDictionary: Tensor's == is elementwise.)
_PLACED: dict[int, tuple[weakref.ref, NamedSharding]] = {}


def shard_parameters(module: Any, mesh: DeviceMesh,
                     specs: Mapping[str, PartitionSpec] | Callable[[str, Tensor], Any]
                     ) -> dict[str, NamedSharding]:
    """Lay out ``module``'s parameters over ``mesh`` in place (DTensor's
    ``distribute_module``): they stay the module's ``nn.Parameter``s (optimizers,
    state dicts and weight tying see no change) and ``partition`` takes them with
    these layouts. ``specs`` maps ``fnmatch`` patterns of parameter names
    (``"blocks.*.attn.qkv.weight"``) to specs, the first match winning, or is a
    function of (name, parameter) giving a spec. A parameter no pattern matches
    is an error, never silently replicated: say ``"*": P()`` to replicate the rest.
    Returns each parameter's layout by name."""
    out: dict[str, NamedSharding] = {}
    for name, param in module.named_parameters():
        if callable(specs):
            spec = specs(name, param)
        else:
            spec = next((sp for pat, sp in specs.items() if fnmatch.fnmatchcase(name, pat)),
                        None)
            if spec is None:
                raise ValueError(f"shard_parameters: no spec for parameter {name!r} "
                                 f"{tuple(param.shape)} (patterns {list(specs)}); map it, "
                                 "or '*' to P() to replicate the rest")
        spec = spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec)
        s = NamedSharding(mesh, spec)
        s.check(tuple(param.shape), f"shard_parameters({name})")
        key = id(param)
        _PLACED[key] = (weakref.ref(param, lambda _, k=key: _PLACED.pop(k, None)), s)
        out[name] = s
    return out


# ---- communication volume ----


@dataclass
class CommReport:
    """The collectives of one run of a ``shard_map``-ed function, in program order."""

    collectives: list[CollectiveCost] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(c.total_bytes for c in self.collectives)

    def by_name(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.collectives:
            out[c.name] = out.get(c.name, 0) + c.total_bytes
        return out


# ---- shard_map: every device's program on a virtual mesh ----


class _Abort(Exception):
    """Unwinds the device threads after another device's program failed."""


@dataclass
class _Arrival:
    name: str
    axes: tuple[str, ...]
    params: tuple
    x: Tensor


_DEVICE = threading.local()  # .run: the _MeshRun of this device thread; .position


class _MeshRun:
    """Runs ``f`` once per device, one thread each, in lockstep: device p records
    while ``turn == p``; a collective hands the turn on, and the last device's
    arrival performs the exchange for all."""

    def __init__(self, mesh: DeviceMesh, f: Callable, local_args: list[list[Tensor]]):
        self.mesh, self.f, self.local_args = mesh, f, local_args
        n = mesh.size
        self.cond = threading.Condition()
        self.turn = 0
        self.arrivals: dict[int, _Arrival] = {}
        self.finished: set[int] = set()
        self.results: dict[int, Tensor] = {}
        self.outputs: list[Any] = [None] * n
        self.error: BaseException | None = None
        self.report = CommReport()

    def run(self) -> list[Any]:
        graph = core.current_graph()
        grad = (GRAD_MODE.enabled, GRAD_MODE.trace_depth, GRAD_MODE.traced)
        threads = [threading.Thread(target=self._device, args=(p, graph, grad), daemon=True)
                   for p in range(self.mesh.size)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if self.error is not None:
            raise self.error
        return self.outputs

    def _device(self, p: int, graph: core.Graph, grad: tuple) -> None:
        GRAD_MODE.enabled, GRAD_MODE.trace_depth, GRAD_MODE.traced = grad
        _DEVICE.run, _DEVICE.position = self, p
        try:
            with core.reuse_graph(graph):
                self._wait_turn(p)
                out = self.f(*self.local_args[p])
            with self.cond:
                self.outputs[p] = out
                self.finished.add(p)
                self._pass_turn(p)
        except _Abort:
            pass
        except BaseException as e:  # noqa: BLE001  (re-raised by run() in the caller)
            with self.cond:
                if self.error is None:
                    self.error = e
                self.cond.notify_all()

    def _wait_turn(self, p: int) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.turn == p or self.error is not None)
            if self.error is not None:
                raise _Abort

    def _pass_turn(self, p: int) -> None:
        """Called under the lock by device p when it stops (a collective or its end)."""
        n = self.mesh.size
        if p + 1 < n:
            self.turn = p + 1
        else:
            if self.arrivals and self.finished:
                first = next(iter(self.arrivals.values())).name
                raise RuntimeError(
                    f"shard_map: the device programs diverged: devices "
                    f"{sorted(self.arrivals)} called {first} while devices "
                    f"{sorted(self.finished)} returned (every device must call the "
                    "same collectives in the same order)")
            if self.arrivals:
                self._exchange()
            self.turn = 0
        self.cond.notify_all()

    def collective(self, name: str, axes: tuple[str, ...], params: tuple, x: Tensor
                   ) -> Tensor:
        p = _DEVICE.position
        with self.cond:
            self.arrivals[p] = _Arrival(name, axes, params, x)
            self._pass_turn(p)
        self._wait_turn(p)
        return self.results.pop(p)

    def _exchange(self) -> None:
        arr = self.arrivals
        a0 = arr[0]
        for p, a in arr.items():
            if (a.name, a.axes, a.params) != (a0.name, a0.axes, a0.params):
                raise RuntimeError(
                    f"shard_map: device {p} called {a.name} over {a.axes} {a.params} while "
                    f"device 0 called {a0.name} over {a0.axes} {a0.params}")
            if (a.x.shape, a.x.dtype) != (a0.x.shape, a0.x.dtype):
                raise ShapeError(a0.name, f"device {p} contributes {a.x.shape} "
                                          f"{a.x.dtype.name}, device 0 {a0.x.shape} "
                                          f"{a0.x.dtype.name}: every device's operand must "
                                          "have one shape and dtype")
        rule = _COLLECTIVES[a0.name]
        groups = self.mesh.groups(a0.axes)
        n = len(groups[0])
        nbytes = int(np.prod(a0.x.shape)) * a0.x.dtype.np.itemsize
        total = 0
        for g in groups:
            outs = rule([arr[p].x for p in g], *a0.params)
            for p, o in zip(g, outs, strict=True):
                self.results[p] = o
            moved = [1] * n
            if a0.name == "ppermute":
                moved = [int(any(s == i and d != i for s, d in a0.params[0])) for i in range(n)]
            total += sum(bytes_sent(a0.name, n, nbytes) * m for m in moved)
        per_device = bytes_sent(a0.name, n, nbytes)
        self.report.collectives.append(CollectiveCost(a0.name, a0.axes, n, per_device, total))
        self.arrivals = {}


def _current(name: str) -> _MeshRun:
    run = getattr(_DEVICE, "run", None)
    if run is None:
        raise RuntimeError(f"{name}: a collective runs inside a function given to "
                           "pf.shard_map (it names mesh axes of that map's mesh)")
    return run


def _flat_specs(specs: Any, n: int, what: str) -> list[PartitionSpec]:
    if isinstance(specs, PartitionSpec):
        return [specs] * n
    specs = list(specs)
    if len(specs) != n:
        raise ValueError(f"shard_map: {len(specs)} {what} for {n} values")
    return [s if isinstance(s, PartitionSpec) else PartitionSpec(*s) for s in specs]


def shard_map(f: Callable, mesh: DeviceMesh, in_specs: Any, out_specs: Any) -> Callable:
    """``f`` written for one device (local shapes, explicit collectives over named
    mesh axes) as a function of global tensors (``jax.shard_map``). Each input is
    split by its spec (a single ``P`` applies to all); outputs are assembled by
    ``out_specs``: a dimension split over mesh axes concatenates the devices'
    blocks, a mesh axis the spec does not name takes the value of the devices
    at index 0 along it (it must be replicated there, e.g. by an all_reduce).
    The returned function's ``last_comm`` is the ``CommReport`` of its last call."""

    def mapped(*args: Tensor) -> Any:
        specs = _flat_specs(in_specs, len(args), "in_specs")
        local: list[list[Tensor]] = [[] for _ in range(mesh.size)]
        for x, spec in zip(args, specs, strict=True):
            x = x if isinstance(x, Tensor) else ops.as_tensor_arg(x)
            s = NamedSharding(mesh, spec)
            s.check(tuple(x.shape), "shard_map")
            for p in range(mesh.size):
                blk = s.block(p, tuple(x.shape))
                whole = all(b.stop - b.start == n for b, n in zip(blk, x.shape, strict=True))
                local[p].append(x if whole else x[blk])
        run = _MeshRun(mesh, f, local)
        outs = run.run()
        mapped.last_comm = run.report
        single = not isinstance(outs[0], tuple | list)
        per_dev = [[o] if single else list(o) for o in outs]
        ospecs = _flat_specs(out_specs, len(per_dev[0]), "out_specs")
        result = [_assemble(mesh, [d[k] for d in per_dev], ospecs[k], k)
                  for k in range(len(ospecs))]
        return result[0] if single else tuple(result)

    mapped.last_comm = CommReport()
    return functools.wraps(f)(mapped)


def _assemble(mesh: DeviceMesh, per_device: list[Tensor], spec: PartitionSpec, k: int
              ) -> ShardedTensor:
    x0 = per_device[0]
    for p, x in enumerate(per_device):
        if not isinstance(x, Tensor):
            raise TypeError(f"shard_map: output {k} of device {p} is {type(x).__name__}, "
                            "not a Tensor")
        if (x.shape, x.dtype) != (x0.shape, x0.dtype):
            raise ShapeError("shard_map", f"output {k}: device {p} returns {x.shape} "
                                          f"{x.dtype.name}, device 0 {x0.shape} "
                                          f"{x0.dtype.name}")
    s = NamedSharding(mesh, spec)
    if len(spec) > x0.ndim:
        raise ShapeError("shard_map", f"out spec {spec!r} has more entries than output "
                                      f"{k}'s rank {x0.ndim}")
    s.check(tuple(n * s.num_shards(d) for d, n in enumerate(x0.shape)), "shard_map")
    named = {a for d in range(len(spec)) for a in spec.axes_of(d)}
    blocks: dict[tuple[int, ...], Tensor] = {}
    for p in range(mesh.size):
        c = mesh.coords(p)
        if any(c[i] for i, a in enumerate(mesh.axis_names) if a not in named):
            continue  # a replica: the device at index 0 of that axis speaks for it
        blocks[s.block_index(p, x0.ndim)] = per_device[p]
    for dim in reversed(range(x0.ndim)):
        if s.num_shards(dim) == 1:
            continue
        rows: dict[tuple[int, ...], list[tuple[int, Tensor]]] = {}
        for idx, t in blocks.items():
            rows.setdefault(idx[:dim] + (0,) + idx[dim + 1:], []).append((idx[dim], t))
        blocks = {key: ops.cat([t for _, t in sorted(parts, key=lambda e: e[0])], dim)
                  for key, parts in rows.items()}
    (whole,) = blocks.values()
    return _with_sharding(whole, s)


# ---- the collectives: each a rule over the group's operands, in group order ----


def _all_reduce(xs: list[Tensor], op: str) -> list[Tensor]:
    combine = {"sum": ops.add, "mean": ops.add, "max": ops.ELEMENTWISE["maximum"],
               "min": ops.ELEMENTWISE["minimum"]}[op]
    out = functools.reduce(combine, xs)
    if op == "mean":
        out = out / len(xs)
    return [out] * len(xs)


def _all_gather(xs: list[Tensor], dim: int, tiled: bool) -> list[Tensor]:
    out = ops.cat(xs, dim) if tiled else ops.stack(xs, dim)
    return [out] * len(xs)


def _reduce_scatter(xs: list[Tensor], dim: int, tiled: bool) -> list[Tensor]:
    n = len(xs)
    total = functools.reduce(ops.add, xs)
    size = total.shape[dim]
    if (tiled and size % n) or (not tiled and size != n):
        want = f"divisible by {n}" if tiled else f"equal to {n}"
        raise ShapeError("reduce_scatter", f"dimension {dim} of {total.shape} must be {want}, "
                                           f"the size of the group")
    parts = ops.split(total, size // n, dim) if n > 1 else [total]
    return parts if tiled else [ops.squeeze(q, dim) for q in parts]


def _all_to_all(xs: list[Tensor], split_dim: int, concat_dim: int) -> list[Tensor]:
    n = len(xs)
    size = xs[0].shape[split_dim]
    if size % n:
        raise ShapeError("all_to_all", f"dimension {split_dim} of {xs[0].shape} must be "
                                       f"divisible by the group size {n}")
    if n == 1:
        return list(xs)
    chunks = [ops.split(x, size // n, split_dim) for x in xs]
    return [ops.cat([chunks[i][j] for i in range(n)], concat_dim) for j in range(n)]


def _ppermute(xs: list[Tensor], perm: tuple[tuple[int, int], ...]) -> list[Tensor]:
    out: list[Tensor | None] = [None] * len(xs)
    for src, dst in perm:
        out[dst] = xs[src]
    return [zeros_like(xs[i]) if o is None else o for i, o in enumerate(out)]


_COLLECTIVES: dict[str, Callable[..., list[Tensor]]] = {
    "all_reduce": _all_reduce, "all_gather": _all_gather, "reduce_scatter": _reduce_scatter,
    "all_to_all": _all_to_all, "ppermute": _ppermute,
}


def _dim(name: str, dim: int, rank: int) -> int:
    if not -rank <= dim < rank:
        raise ShapeError(name, f"dimension {dim} is out of range for rank {rank}")
    return dim % rank


def all_reduce(x: Tensor, axis_name: AxisNames, op: str = "sum") -> Tensor:
    """Combine ``x`` over the devices of the mesh axes (``jax.lax.psum`` for
    ``op="sum"``; also ``"mean"``, ``"max"``, ``"min"``); every device gets it."""
    if op not in ("sum", "mean", "max", "min"):
        raise ValueError(f"all_reduce: op is 'sum', 'mean', 'max' or 'min', got {op!r}")
    run = _current("all_reduce")
    return run.collective("all_reduce", _names(axis_name), (op,), x)


def all_gather(x: Tensor, axis_name: AxisNames, *, dim: int = 0, tiled: bool = False
               ) -> Tensor:
    """Every device gets the group's operands stacked along a new dimension
    ``dim`` (``jax.lax.all_gather``), or concatenated along ``dim`` if ``tiled``."""
    run = _current("all_gather")
    d = _dim("all_gather", dim, x.ndim + (0 if tiled else 1))
    return run.collective("all_gather", _names(axis_name), (d, tiled), x)


def reduce_scatter(x: Tensor, axis_name: AxisNames, *, dim: int = 0, tiled: bool = False
                   ) -> Tensor:
    """Sum over the group, device i keeping block i of dimension ``dim``
    (``jax.lax.psum_scatter``: untiled, ``dim``'s size is the group size and it
    is removed; tiled, it is divided by it)."""
    run = _current("reduce_scatter")
    return run.collective("reduce_scatter", _names(axis_name),
                          (_dim("reduce_scatter", dim, x.ndim), tiled), x)


def all_to_all(x: Tensor, axis_name: AxisNames, split_dim: int, concat_dim: int) -> Tensor:
    """Device i splits ``x`` into n blocks along ``split_dim`` and sends block j to
    device j, which concatenates what it receives along ``concat_dim`` in device
    order (``jax.lax.all_to_all(..., tiled=True)``)."""
    run = _current("all_to_all")
    params = (_dim("all_to_all", split_dim, x.ndim), _dim("all_to_all", concat_dim, x.ndim))
    return run.collective("all_to_all", _names(axis_name), params, x)


def ppermute(x: Tensor, axis_name: AxisNames, perm: Sequence[tuple[int, int]]) -> Tensor:
    """Device ``dst`` receives ``x`` of device ``src`` for each ``(src, dst)`` of
    ``perm`` (indices along the axes); a device nobody sends to gets zeros
    (``jax.lax.ppermute``)."""
    run = _current("ppermute")
    names = _names(axis_name)
    n = run.mesh.axis_size(names)
    pairs = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in pairs], [d for _, d in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts) \
            or not all(0 <= i < n for i in srcs + dsts):
        raise ValueError(f"ppermute: perm {list(pairs)} must be a partial permutation of "
                         f"0..{n - 1} (each source and destination at most once)")
    return run.collective("ppermute", names, (pairs,), x)


def axis_index(axis_name: AxisNames) -> int:
    """This device's index along the mesh axes (``jax.lax.axis_index``)."""
    run = _current("axis_index")
    return run.mesh.index_along(_DEVICE.position, axis_name)


# ---- automatic partitioning: propagate, partition, run every device's program ----


@dataclass
class Partitioned:
    """What the last call of a ``partition``-ed function compiled: the per-device
    module's text, the bytes its collectives move per call by the compiler's
    estimate (``spmd-partition``'s count over the IR), and the report of the
    collectives the run performed."""

    device_ir: str
    bytes_estimate: int
    comm: CommReport
    # one training step's collectives by the compiler's count (forward, their
    # transposes in the backward, the gradients' all-reduces: step_traffic);
    # pf.compile_graph of the step reports the same
    step: list[CollectiveCost] = field(default_factory=list)


def partition(f: Callable, mapper: Callable[..., Callable] | None = None) -> Callable:
    """``f`` written for one device with global shapes (single-device code),
    run over the mesh of its sharded inputs (``pf.shard``): the program is
    traced into the ``pyflame`` dialect, the inputs' shardings become argument
    annotations, ``sharding-propagation`` and ``spmd-partition`` turn it into
    one device's program, and every device's program runs on the virtual mesh
    (``shard_map``). Outputs are global tensors with their propagated sharding;
    gradients flow to the inputs. Inputs that are not sharded are replicated;
    the mesh is the sharded inputs' one. ``fn.last`` holds a ``Partitioned``.
    ``mapper`` runs the device program (``shard_map``'s signature; default
    ``shard_map``, the virtual mesh; ``pyflame_mlir.distributed.partition`` passes
    its one-device-per-process ``process_shard_map``)."""

    def run(*args: Tensor) -> Any:
        _TRACING.depth = getattr(_TRACING, "depth", 0) + 1
        # recorded in eager mode too: the program is partitioned, then run (eager
        # mode would run f on one device, leaving no ops to partition)
        eager, core.CONFIG.eager = core.CONFIG.eager, False
        try:
            outs = f(*args)
        finally:
            _TRACING.depth -= 1
            core.CONFIG.eager = eager
        single = isinstance(outs, Tensor)
        out_list = [outs] if single else list(outs)
        # a parameter (or laid-out tensor) is an input even while an optimizer's
        # update of it is pending: the program must not trace through that update
        sub = core.collect(out_list, args=args, trace=True, boundary=_is_input)
        layouts = [sharding_of(t) for t in sub.leaves]
        constraints = _constraints(sub, out_list)
        meshes = {s.mesh for s in layouts if s is not None}
        if len(meshes) != 1:
            raise ValueError(f"partition: the sharded inputs (arguments and parameters) must "
                             f"share one mesh, got {len(meshes)} meshes")
        (mesh,) = meshes
        for s in constraints.values():
            if s.mesh != mesh:
                raise ValueError(f"partition: a pf.reshard inside the function lays a value "
                                 f"out over {s.mesh}, the inputs are on {mesh}: one mesh")
        specs = [s.spec if s is not None else P() for s in layouts]
        key = (sub.key(("partition",)), tuple(specs), mesh,
               tuple((at, s.spec) for at, s in constraints.items()))
        hit = compiled.get(key)
        if hit is None:
            hit = compiled[key] = _partition(sub, mesh, specs, mapper or shard_map,
                                             constraints)
        text, estimate, mapped, traffic = hit
        result = mapped(*sub.leaves)
        run.last = Partitioned(text, estimate, mapped.last_comm, traffic)
        forward = [c for c in traffic if c.phase == "forward"]
        backward = [c for c in traffic if c.phase != "forward"]
        out = result[0]  # one output speaks for the program
        note_traffic(out, forward, backward, [t for t in sub.leaves if t.requires_grad])
        return result[0] if single else tuple(result)

    compiled: dict[tuple, tuple[str, int, Callable, list[CollectiveCost]]] = {}  # by
    # structure and input layouts
    run.last = None
    return functools.wraps(f)(run)


def _is_input(t: Tensor) -> bool:
    return (t.requires_grad and core.is_leaf(t)) or sharding_of(t) is not None


_TRACING = threading.local()  # .depth: partition-ed functions being traced (this thread)


def _constraints(sub: core.Subgraph, outs: Sequence[Tensor]
                 ) -> dict[tuple[int, int], NamedSharding]:
    """The layouts ``pf.reshard``/``pf.shard`` asked for inside the traced
    function, by (node position, result index) in ``sub``: the values the
    consumers read through a constraint tensor (every use of its ``clone``)."""
    at = {id(n): i for i, n in enumerate(sub.nodes)}
    out: dict[tuple[int, int], NamedSharding] = {}
    for t in [x for n in sub.nodes for x in n.inputs] + list(outs):
        if isinstance(t, ShardedTensor) and t.constraint and id(t._node) in at:
            assert t._node.op.name == "convert" and t._node.inputs[0].dtype is t.dtype, \
                "a constraint is the clone pf.shard/pf.reshard records"
            out[(at[id(t._node)], t._index)] = t.sharding
    return dict(sorted(out.items()))


def _partition(sub: core.Subgraph, mesh: DeviceMesh, specs: list[PartitionSpec],
               mapper: Callable[..., Callable],
               constraints: Mapping[tuple[int, int], NamedSharding]
               ) -> tuple[str, int, Callable, list[CollectiveCost]]:
    """The per-device module (text) of ``sub``, the bytes its collectives move,
    and its ``shard_map``-ed program. ``constraints`` become ``sharding.annotate``
    ops after the values they lay out (Shardy's sharding constraints: propagation
    never changes them, the partitioner reshards to them)."""
    from xdsl.dialects import func as xfunc  # xDSL: off the import path

    from .dialects.sharding import Mesh
    from .dialects.sharding import Sharding as IRSharding
    from .dialects.sharding_ir import AnnotateOp
    from .passes.sharding_propagation import set_arg_shardings
    from .passes.spmd_partition import bytes_moved, step_traffic

    module = build_module(sub)
    main = next(op for op in module.walk() if isinstance(op, xfunc.FuncOp)
                and op.sym_name.data == "main")
    ir_mesh = Mesh(tuple(zip(mesh.axis_names, mesh.shape, strict=True)))

    def ir_sharding(spec: PartitionSpec, rank: int) -> IRSharding:
        return IRSharding(ir_mesh, tuple(spec.axes_of(d) for d in range(rank)))

    block = main.body.block
    built = list(block.ops)  # one op per node of sub, in order
    for (i, k), s in constraints.items():
        op, rank = built[i], len(sub.nodes[i].specs[k][0])
        # the clone pf.reshard recorded becomes the annotation (a value partial
        # over an axis reaches it unresolved: a reduce-scatter can deliver it)
        ann = AnnotateOp(op.operands[0], ir_sharding(s.spec, rank))
        block.insert_op_before(ann, op)
        op.results[k].replace_all_uses_with(ann.result)
        block.erase_op(op)
    expand_transforms(module)
    set_arg_shardings(main, [ir_sharding(spec, t.ndim)
                             for spec, t in zip(specs, sub.leaves, strict=True)])
    run_pipeline(module, "sharding-propagation,spmd-partition")
    res = [a.data[_SHARDING_KEY].sharding for a in main.res_attrs.data]
    out_specs = [PartitionSpec(*[d if d else None for d in s.dims]) for s in res]
    body = _device_program(main, mesh)
    traffic = step_traffic(main, [t.requires_grad for t in sub.leaves])
    return str(module), bytes_moved(main), mapper(body, mesh, specs, out_specs), traffic


_SHARDING_KEY = "sharding.sharding"  # dialects/sharding_ir.py: SHARDING_KEY (no xDSL here)


def _device_program(main: Any, mesh: DeviceMesh) -> Callable[..., tuple[Tensor, ...]]:
    """One device's program as a function of its local inputs: each op of the
    partitioned function recorded as the op it is (collectives by this module's
    functions), so it runs, and differentiates, like code written by hand."""
    from xdsl.dialects import func as xfunc

    from .dialects import OPS
    from .dialects.pyflame import PyflameOp
    from .dialects.sharding_ir import (
        AllGatherOp,
        AllReduceOp,
        AllToAllOp,
        LocalSliceOp,
        PpermuteOp,
        ReduceScatterOp,
    )
    from .passes.spmd_partition import STOP_GRADIENT

    block = main.body.block
    ops = list(block.ops)

    def body(*local: Tensor) -> tuple[Tensor, ...]:
        env: dict[Any, Tensor] = dict(zip(block.args, local, strict=True))
        for op in ops:
            xs = [env[v] for v in op.operands]
            if isinstance(op, xfunc.ReturnOp):
                return tuple(xs)
            if isinstance(op, PyflameOp):
                out = core.record(OPS[op.OPDEF.name], tuple(xs), op.py_attrs())
                outs = out if isinstance(out, list) else [out]
            elif isinstance(op, LocalSliceOp):
                s = op.sharding.sharding
                named = NamedSharding(mesh, PartitionSpec(*[d if d else None for d in s.dims]))
                outs = [xs[0][named.block(_DEVICE.position, tuple(xs[0].shape))]]
            else:
                axes = op.axis_names
                p = op.params()
                if isinstance(op, AllReduceOp):
                    x = xs[0].detach() if STOP_GRADIENT in op.attributes else xs[0]
                    outs = [all_reduce(x, axes, p["reduction"])]
                elif isinstance(op, AllGatherOp):
                    outs = [all_gather(xs[0], axes, dim=p["dim"], tiled=True)]
                elif isinstance(op, ReduceScatterOp):
                    outs = [reduce_scatter(xs[0], axes, dim=p["dim"], tiled=True)]
                elif isinstance(op, AllToAllOp):
                    outs = [all_to_all(xs[0], axes, p["split_dim"], p["concat_dim"])]
                elif isinstance(op, PpermuteOp):
                    outs = [ppermute(xs[0], axes, p["pairs"])]
                else:
                    raise NotImplementedError(f"partition: no device kernel for {op.name}")
            for r, t in zip(op.results, outs, strict=True):
                env[r] = t
        raise ValueError("partition: the device program has no func.return")

    return body


# ---- optimizer-state sharding (ZeRO stage 1) ----


class ZeroAdamW:
    """AdamW (decoupled weight decay; ``pf.optim.AdamW``'s and torch's formulas)
    with its moments sharded over the mesh axes ``axis`` (ZeRO stage 1): each
    parameter's flattened moments are split in ``n`` blocks (zero-padded to a
    multiple of ``n``), device ``i`` of the axis keeps block ``i``, updates block
    ``i`` of the parameter from block ``i`` of the gradient (a reduce-scatter of
    the gradients delivers it in a data-parallel step), and an all-gather gives
    every device the whole updated parameter. One ``shard_map`` per parameter
    and step; ``last_comm`` is the last one's ``CommReport``. Each device holds
    ``1/n`` of the moments: ``moments(i)`` are parameter ``i``'s, laid out
    ``P(axis)``."""

    def __init__(self, params: Sequence[Tensor], mesh: DeviceMesh, axis: AxisNames,
                 lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2):
        self.params = list(params)
        self.mesh, self.axis = mesh, _names(axis)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.steps = 0
        n = mesh.axis_size(self.axis)
        self._padded = [n * -(-math.prod(p.shape) // n) for p in self.params]
        self._state = [tuple(shard(Tensor._leaf(np.zeros(k, p.dtype.np)), mesh, P(self.axis))
                             for _ in range(2)) for p, k in zip(self.params, self._padded,
                                                                 strict=True)]
        self._update = shard_map(self._local_update, mesh, in_specs=P(self.axis),
                                 out_specs=(P(), P(self.axis), P(self.axis)))
        self.last_comm = CommReport()

    def moments(self, i: int) -> tuple[ShardedTensor, ShardedTensor]:
        return self._state[i]  # type: ignore[return-value]

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    def _local_update(self, p: Tensor, g: Tensor, m: Tensor, v: Tensor
                      ) -> tuple[Tensor, Tensor, Tensor]:
        b1, b2 = self.betas
        t = self.steps
        p = p * (1 - self.lr * self.weight_decay)
        m = m + (g - m) * (1 - b1)
        v = v * b2 + g * g * (1 - b2)
        denom = ops.sqrt(v) / math.sqrt(1 - b2 ** t) + self.eps
        p = p + m / denom * (-self.lr / (1 - b1 ** t))
        return all_gather(p, self.axis, dim=0, tiled=True), m, v

    def step(self) -> None:
        self.steps += 1
        with no_grad():
            done: list[Tensor] = []
            for i, (p, k) in enumerate(zip(self.params, self._padded, strict=True)):
                if p.grad is None:
                    continue
                numel = math.prod(p.shape)
                flat = [ops.reshape(t, (numel,)) for t in (p, p.grad)]
                if k != numel:
                    pad = Tensor._leaf(np.zeros(k - numel, p.dtype.np))
                    flat = [ops.cat([t, pad]) for t in flat]
                whole, m, v = self._update(*flat, *self._state[i])
                self.last_comm = self._update.last_comm
                p.copy_(ops.reshape(whole[:numel], p.shape))
                self._state[i] = (m, v)
                done += [p, m, v]
            core.realize(done)  # the moments' chains end here, step by step
