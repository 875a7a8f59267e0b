"""Creating tensors. Host data (``tensor``, ``from_numpy``, ``randn``...) is
realized at once and enters compiled graphs as an argument, so new data with
the same shapes hits the cache. ``zeros/ones/full/arange/eye`` are recorded
ops (constants and ``iota``), part of the structural hash."""

from __future__ import annotations

import functools
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .core import Tensor, number_array, outside_pyflame, record, share, splat_value
from .dialects import OPS
from .dialects.dtypes import INT, DType, bool_, default_float, int64, scalar_dtype
from .dialects.dtypes import dtype as to_dtype
from .ops import _check_device, _shape_arg, convert, eq


class Generator:
    """``torch.Generator``: a seeded stream of random draws on the host
    (numpy's PCG64; the values differ from torch's Philox/MT streams, the
    API and its reproducibility guarantees are the same). Every creation
    function that draws takes ``generator=``; without it they draw from
    ``default_generator``, which ``pf.manual_seed`` seeds."""

    def __init__(self, device: Any = "cpu") -> None:
        if str(device) != "cpu":
            raise RuntimeError(f"Generator: pyflame draws random values on the host; "
                               f"device={device!r} is not supported (use 'cpu')")
        self.seed()

    @property
    def device(self) -> str:
        return "cpu"

    def manual_seed(self, seed: int) -> Generator:
        seed = int(seed)
        if not -(1 << 63) <= seed < (1 << 64):
            raise RuntimeError(f"manual_seed: seed {seed} is out of range "
                               "[-0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff]")
        self._initial = seed & ((1 << 64) - 1)  # torch maps negative seeds the same way
        self.np = np.random.default_rng(self._initial)
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy; the new seed."""
        self.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        return self._initial

    def initial_seed(self) -> int:
        return self._initial

    def get_state(self) -> Tensor:
        """The full state as a tensor of byte values (torch's is a uint8
        tensor; pyflame has no uint8, so int64); ``set_state`` restores it."""
        state = json.dumps({"seed": self._initial, "bits": self.np.bit_generator.state})
        return Tensor._leaf(np.frombuffer(state.encode(), dtype=np.uint8).astype(np.int64))

    def set_state(self, new_state: Tensor) -> Generator:
        try:
            state = json.loads(np.asarray(new_state.numpy()).astype(np.uint8).tobytes())
            bits = np.random.PCG64()
            bits.state = state["bits"]
        except (ValueError, KeyError, TypeError) as e:
            raise RuntimeError(f"Generator.set_state: not a state from get_state ({e})") from None
        self._initial, self.np = int(state["seed"]), np.random.Generator(bits)
        return self


default_generator = Generator()


# torch.func.vmap's ``randomness`` while its function runs (None outside): random
# draws are one per call, shared by every example, which is torch's "same" only
VMAP_RANDOMNESS: list[str | None] = [None]


def _draws(generator: Generator | None) -> np.random.Generator:
    mode = VMAP_RANDOMNESS[0]
    if mode == "error":
        raise RuntimeError("vmap: called random operation while in randomness error mode. "
                           "Please either use the 'same' or 'different' randomness flags on "
                           "vmap or perform the randomness operation out of vmap")
    if mode == "different":
        raise NotImplementedError("vmap(randomness='different'): pyflame draws a random "
                                  "tensor once per call, shared by every example "
                                  "(randomness='same'); per-example draws are not supported")
    if generator is None:
        return default_generator.np
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a pf.Generator, got {type(generator).__name__}")
    return generator.np


def _requires_grad_option(make: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """Adds PyTorch's ``requires_grad=`` keyword to a creation function, and
    its placement keywords: ``device`` (the current backend's device or the
    host's "cpu", else a clear error), ``pin_memory``, ``layout`` (strided
    only) and ``memory_format`` (no strides here: accepted, as torch's
    contiguous default)."""
    @functools.wraps(make)
    def wrapped(*args: Any, requires_grad: bool = False, device: Any = None,
                pin_memory: bool = False, layout: Any = None, memory_format: Any = None,
                **kwargs: Any) -> Tensor:
        del pin_memory, memory_format
        if device is not None:
            _check_device(device)
        if layout is not None and str(layout).removeprefix("torch.") != "strided":
            raise ValueError(f"{make.__name__}: layout={layout} is not supported (pyflame "
                             "tensors are dense: torch.strided)")
        t = make(*args, **kwargs)
        return t.requires_grad_() if requires_grad else t
    return wrapped


def manual_seed(seed: int) -> Generator:
    """Seed ``default_generator``, behind every draw without ``generator=``."""
    return default_generator.manual_seed(seed)


def initial_seed() -> int:
    return default_generator.initial_seed()


def seed() -> int:
    """Seed ``default_generator`` from the operating system's entropy."""
    return default_generator.seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    default_generator.set_state(new_state)


def _infer_host_dtype(arr: np.ndarray, data: Any) -> DType:
    if isinstance(data, np.ndarray | np.generic):
        return to_dtype(arr.dtype)
    # Python data: floats are the default float, ints int64, bools bool (PyTorch).
    kind = arr.dtype.kind
    if kind == "b":
        return bool_
    if kind in "iu":
        return int64
    if kind == "f":
        return default_float()
    raise TypeError(f"cannot make a tensor from {type(data).__name__} of dtype {arr.dtype}")


@_requires_grad_option
def tensor(data: Any, dtype: Any = None) -> Tensor:
    """A new leaf holding a copy of ``data`` (nested lists, numbers, arrays, tensors)."""
    if isinstance(data, Tensor):
        data = data.numpy()
    arr = data if isinstance(data, np.ndarray) else np.array(data)  # an array: copied once, below
    dt = to_dtype(dtype) if dtype is not None else _infer_host_dtype(arr, data)
    if dt.category == INT and not isinstance(data, np.ndarray | np.generic):
        return Tensor._leaf(number_array(arr, dt))  # Python data: overflow checked (PyTorch)
    return Tensor._leaf(np.array(arr, dtype=dt.np, copy=True))


@_requires_grad_option
def asarray(data: Any, dtype: Any = None, *, copy: bool | None = None) -> Tensor:
    """Like ``tensor`` but shares memory with a numpy array when it can."""
    if isinstance(data, Tensor):
        out = data if dtype is None else convert(data, dtype)
        return out.clone() if copy and out is data else out
    if isinstance(data, np.ndarray):
        dt = to_dtype(dtype) if dtype is not None else to_dtype(data.dtype)
        if copy:
            return Tensor._leaf(np.array(data, dtype=dt.np, copy=True))
        arr = np.asarray(data, dtype=dt.np)
        if copy is False and arr is not data:
            raise ValueError(f"as_tensor(copy=False): a {data.dtype} array cannot be "
                             f"viewed as {dt.name} without a copy")
        t = Tensor._leaf(arr)  # the same dtype: shares memory (PyTorch's as_tensor)
        return share(t, arr) if arr is data and outside_pyflame(sys._getframe(1)) else t
    return tensor(data, dtype)


as_tensor = asarray


def from_numpy(arr: np.ndarray) -> Tensor:
    """A leaf sharing memory with ``arr`` (its dtype must be supported), as
    PyTorch's: in-place updates of the tensor (or of its views) write into
    ``arr``, and what pf records after a numpy write to ``arr`` sees it (what
    it recorded before does not: ``core.share``)."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(arr).__name__}")
    to_dtype(arr.dtype)  # raises for unsupported dtypes
    t = Tensor._leaf(arr)
    return share(t, arr) if outside_pyflame(sys._getframe(1)) else t


def _size(size: tuple) -> tuple[int, ...]:
    shape = _shape_arg(size) if size else ()
    if any(d < 0 for d in shape):
        raise ValueError(f"negative dimension in size {list(shape)}")
    return shape


def _float_dtype(dtype: Any) -> DType:
    dt = to_dtype(dtype) if dtype is not None else default_float()
    if not dt.is_floating_point:
        raise TypeError(f"random floats need a floating dtype, got {dt.name}")
    return dt


@_requires_grad_option
def randn(*size: Any, dtype: Any = None, generator: Generator | None = None) -> Tensor:
    dt = _float_dtype(dtype)
    z = _draws(generator).standard_normal(_size(size), dtype=np.float64)
    return Tensor._leaf(z.astype(dt.np))


@_requires_grad_option
def rand(*size: Any, dtype: Any = None, generator: Generator | None = None) -> Tensor:
    dt = _float_dtype(dtype)
    return Tensor._leaf(_draws(generator).random(_size(size), dtype=np.float64).astype(dt.np))


@_requires_grad_option
def randint(low: int, high: Any = None, size: Sequence[int] | None = None, *,
            dtype: Any = None, generator: Generator | None = None) -> Tensor:
    """``randint(high, size)`` or ``randint(low, high, size)``: integers in
    [low, high), int64 by default (PyTorch's forms)."""
    if size is None:  # randint(high, size)
        if high is None or isinstance(high, int | np.integer):
            raise TypeError("randint() needs a size: randint(high, size) or "
                            "randint(low, high, size)")
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if low >= high:
        raise ValueError(f"randint: random_ expects 'from' to be less than 'to', but got "
                         f"from={low} >= to={high}")
    dt = to_dtype(dtype) if dtype is not None else int64
    return Tensor._leaf(_draws(generator).integers(low, high, size=tuple(size)).astype(dt.np))


@_requires_grad_option
def full(size: Sequence[int] | int, fill_value: Any, dtype: Any = None) -> Tensor:
    shape = _size((size,))
    dt = to_dtype(dtype) if dtype is not None else scalar_dtype(fill_value)
    return record(OPS["constant"], (), {"value": splat_value(fill_value, shape, dt)})


@_requires_grad_option
def zeros(*size: Any, dtype: Any = None) -> Tensor:
    return full(_size(size), 0, dtype=dtype or default_float())


@_requires_grad_option
def ones(*size: Any, dtype: Any = None) -> Tensor:
    return full(_size(size), 1, dtype=dtype or default_float())


def _like(t: Tensor, dtype: Any) -> tuple[tuple[int, ...], DType]:
    return t.shape, to_dtype(dtype) if dtype is not None else t.dtype


@_requires_grad_option
def zeros_like(t: Tensor, dtype: Any = None) -> Tensor:
    shape, dt = _like(t, dtype)
    return full(shape, 0, dtype=dt)


@_requires_grad_option
def ones_like(t: Tensor, dtype: Any = None) -> Tensor:
    shape, dt = _like(t, dtype)
    return full(shape, 1, dtype=dt)


@_requires_grad_option
def full_like(t: Tensor, fill_value: Any, dtype: Any = None) -> Tensor:
    shape, dt = _like(t, dtype)
    return full(shape, fill_value, dtype=dt)


@_requires_grad_option
def randn_like(t: Tensor, dtype: Any = None) -> Tensor:
    shape, dt = _like(t, dtype)
    return randn(shape, dtype=dt)


@_requires_grad_option
def rand_like(t: Tensor, dtype: Any = None) -> Tensor:
    shape, dt = _like(t, dtype)
    return rand(shape, dtype=dt)


def _iota(shape: tuple[int, ...], dim: int, dt: DType) -> Tensor:
    return record(OPS["iota"], (), {"shape": shape, "dim": dim, "dtype": dt})


@_requires_grad_option
def arange(start: float, end: float | None = None, step: float = 1, dtype: Any = None) -> Tensor:
    """``start + step * iota`` with PyTorch's length ``ceil((end - start) / step)``."""
    if end is None:
        start, end = 0, start
    integer = dtype is not None and not to_dtype(dtype).is_floating_point
    if integer and to_dtype(dtype) is int64:
        # PyTorch: int64 casts the bounds and the step first; the other integer
        # types take the length from the values as given, then cast start and step
        start, end, step = (int(v) for v in (start, end, step))
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise ValueError(f"arange: the range [{start}, {end}) and step {step} have "
                         "inconsistent signs")
    n = max(math.ceil((end - start) / step), 0)
    if integer:
        start, step = int(start), int(step)
        if step == 0:
            raise ValueError("arange: step must be nonzero (after the cast to an integer)")
    ints = all(isinstance(v, int) for v in (start, end, step))
    dt = to_dtype(dtype) if dtype is not None else (int64 if ints else default_float())
    out = _iota((n,), 0, dt)
    if step != 1:
        out = out * step
    if start != 0:
        out = out + start
    return convert(out, dt)


@_requires_grad_option
def eye(n: int, m: int | None = None, dtype: Any = None
        ) -> Tensor:
    m = n if m is None else m
    dt = to_dtype(dtype) if dtype is not None else default_float()
    rows, cols = _iota((n, m), 0, int64), _iota((n, m), 1, int64)
    return convert(eq(rows, cols), dt)


# ---- more of torch's creation and sampling functions ----

@_requires_grad_option
def empty(*size: Any, dtype: Any = None) -> Tensor:
    """``torch.empty``: its values are unspecified there; here they are zeros."""
    return zeros(*size, dtype=dtype)


@_requires_grad_option
def empty_like(t: Tensor, dtype: Any = None) -> Tensor:
    return zeros_like(t, dtype=dtype)


@_requires_grad_option
def linspace(start: float, end: float, steps: int, dtype: Any = None) -> Tensor:
    """``steps`` values from start to end, computed as torch does (from both
    ends towards the middle, in the result's dtype), so they match it bitwise."""
    if steps < 0:
        raise ValueError(f"linspace: number of steps must be non-negative, got {steps}")
    dt = to_dtype(dtype) if dtype is not None else default_float()
    wide = np.float64 if dt.is_floating_point and dt.np == np.float64 else np.float32
    if not dt.is_floating_point:
        wide = np.float64
    i = np.arange(steps, dtype=wide)
    a, b = wide(start), wide(end)
    step = (b - a) / wide(max(steps - 1, 1))
    half = steps // 2
    # a + step * i with one rounding, as torch's vectorized kernel (a fused
    # multiply-add): in a wider type, then rounded once
    ext = np.float64 if wide is np.float32 else np.longdouble
    x, y, h, j = ext(a), ext(b), ext(step), i.astype(ext)
    out = np.where(i < half, x + h * j, y - h * (ext(steps - 1) - j)).astype(wide)
    if steps == 1:
        out = np.array([a], dtype=wide)
    if not dt.is_floating_point:
        # torch's integer kernel: start and end converted to the integer type first
        # (towards zero), the step in double, start + step * i (end - ... past the
        # middle) with one rounding to double (a fused multiply-add), truncated
        ld = np.longdouble
        a, b = float(int(start)), float(int(end))
        step, j = ld((b - a) / max(steps - 1, 1)), np.arange(steps, dtype=ld)
        out = np.trunc(np.where(j < half, (ld(a) + step * j).astype(np.float64),
                                (ld(b) - step * (ld(steps - 1) - j)).astype(np.float64)))
        if steps == 1:
            out = np.array([a])
    return Tensor._leaf(out.astype(dt.np))


@_requires_grad_option
def logspace(start: float, end: float, steps: int, base: float = 10.0,
             dtype: Any = None) -> Tensor:
    dt = to_dtype(dtype) if dtype is not None else default_float()
    exps = linspace(start, end, steps,
                    dtype=dt if dt.is_floating_point else default_float()).numpy()
    return Tensor._leaf(np.power(np.asarray(base, dtype=exps.dtype), exps).astype(dt.np))


@_requires_grad_option
def randperm(n: int, *, dtype: Any = None, generator: Generator | None = None) -> Tensor:
    """A random permutation of 0..n-1 (from the generator ``manual_seed`` seeds)."""
    if n < 0:
        raise ValueError(f"randperm: n must be non-negative, got {n}")
    dt = to_dtype(dtype) if dtype is not None else int64
    return Tensor._leaf(_draws(generator).permutation(n).astype(dt.np))


@_requires_grad_option
def randint_like(t: Tensor, low: int = 0, high: int | None = None, *,
                 dtype: Any = None) -> Tensor:
    if high is None:
        low, high = 0, low
    return randint(low, high, t.shape, dtype=dtype if dtype is not None else t.dtype)


@_requires_grad_option
def normal(mean: Any = 0.0, std: Any = 1.0, size: Sequence[int] | None = None, *,
           dtype: Any = None, generator: Generator | None = None) -> Tensor:
    """Samples of N(mean, std): numbers with ``size``, or tensors broadcast
    together (``mean + std * randn``: the gradient flows to tensor arguments)."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean if isinstance(mean, Tensor) else None
        s = std if isinstance(std, Tensor) else None
        shape = np.broadcast_shapes(*(x.shape for x in (m, s) if x is not None))
        if size is not None and tuple(size) != tuple(shape):
            raise ValueError(f"normal: size {tuple(size)} differs from the shape {shape} of "
                             "mean and std")
        ref = m if m is not None else s
        z = randn(*shape, dtype=ref.dtype, generator=generator)
        return z * std + mean
    if size is None:
        raise TypeError("normal() with numbers for mean and std needs a size")
    if std < 0:
        raise ValueError(f"normal expects std >= 0.0, but found std {std}")
    z = randn(*_size((size,)), dtype=dtype, generator=generator)
    return Tensor._leaf((z.numpy() * std + mean).astype(z.dtype.np))


def bernoulli(input: Tensor, p: float | None = None, *,  # noqa: A002
              generator: Generator | None = None) -> Tensor:
    """1 with probability ``input`` (or ``p``), else 0, in input's dtype."""
    probs = input if p is None else full_like(input, p)
    u = rand(*input.shape, dtype=input.dtype if input.dtype.is_floating_point else None,
             generator=generator)
    return convert(u.__lt__(probs), input.dtype)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False,  # noqa: A002
                *, generator: Generator | None = None) -> Tensor:
    """Category indices drawn with the given (unnormalized) weights per row;
    the weights are evaluated first (a host draw, as torch's CPU kernel)."""
    w = np.asarray(input.numpy(), dtype=np.float64)
    if w.ndim not in (1, 2):
        raise ValueError(f"multinomial: prob_dist must be 1 or 2 dim, got {w.ndim}")
    rows = w.reshape(-1, w.shape[-1])
    if not np.all(np.isfinite(rows)) or np.any(rows < 0):
        raise RuntimeError("multinomial: probability tensor contains either inf, nan or "
                           "element < 0")
    if not replacement and num_samples > rows.shape[-1]:
        raise RuntimeError("multinomial: cannot sample n_sample > prob_dist.size(-1) "
                           "samples without replacement")
    out = np.empty((rows.shape[0], num_samples), dtype=np.int64)
    rng = _draws(generator)
    for r, row in enumerate(rows):
        total = row.sum()
        if total <= 0:
            raise RuntimeError("multinomial: invalid multinomial distribution (sum of "
                               "probabilities <= 0)")
        if replacement:
            out[r] = rng.choice(row.size, size=num_samples, p=row / total)
        else:
            out[r] = rng.choice(row.size, size=num_samples, replace=False, p=row / total) \
                if np.count_nonzero(row) >= num_samples else _no_replacement(rng, row, num_samples)
    return Tensor._leaf(out.reshape(w.shape[:-1] + (num_samples,)))


def _no_replacement(rng: np.random.Generator, row: np.ndarray, n: int) -> np.ndarray:
    """torch draws zero-weight categories last when too few have weight."""
    picked = list(rng.choice(row.size, size=np.count_nonzero(row), replace=False,
                              p=row / row.sum()))
    rest = [i for i in rng.permutation(row.size) if i not in set(picked)]
    return np.array((picked + rest)[:n], dtype=np.int64)


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:  # noqa: A002
    rates = input.numpy()
    if np.any(rates < 0):
        raise RuntimeError("poisson: rates must be non-negative")
    return Tensor._leaf(_draws(generator).poisson(rates).astype(rates.dtype))

