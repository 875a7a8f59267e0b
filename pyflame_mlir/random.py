"""``pf.random``: JAX's counter-based PRNG (``jax.random``), bit for bit.

Keys are JAX's raw threefry2x32 keys: a pair of 32-bit words, here an int64
tensor of shape ``(2,)`` holding the two uint32 values (pyflame has no
uint32 dtype); ``split`` and ``fold_in`` make new keys and the samplers draw
from one. The threefry hash, the partitionable counter layout (JAX's default
``jax_threefry_partitionable``) and each sampler's transform of the bits are
JAX's, so ``pf.random.normal(pf.random.PRNGKey(0), (3,))`` gives
``jax.random.normal(jax.random.PRNGKey(0), (3,))``'s values.

The bits are computed on the host from the key's value: inside
``pf.compile`` a draw from a key argument reads it (the call runs ``f``, no
stale draw is replayed); under ``vmap`` over keys ``f`` runs per example.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import composites2, ops
from .core import Tensor
from .dialects.dtypes import DType, float32, int32
from .dialects.dtypes import dtype as to_dtype
from .indexing import index_select
from .vmap import ConcretizationError, MappedLoopError

__all__ = ["PRNGKey", "bernoulli", "bits", "categorical", "exponential", "fold_in", "gumbel",
           "key", "key_data", "normal", "permutation", "randint", "split", "uniform",
           "wrap_key_data"]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _rotl(x: np.ndarray, d: int) -> np.ndarray:
    return (x << np.uint32(d)) | (x >> np.uint32(32 - d))


def _threefry2x32(k1: np.uint32, k2: np.uint32, x1: np.ndarray, x2: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The Threefry-2x32 hash (20 rounds) of the counter pairs ``(x1, x2)``."""
    ks = [np.uint32(k1), np.uint32(k2), np.uint32(k1) ^ np.uint32(k2) ^ np.uint32(0x1BD11BDA)]
    with np.errstate(over="ignore"):  # uint32 arithmetic wraps, as the hash wants
        x = [np.atleast_1d(x1).astype(np.uint32) + ks[0],
             np.atleast_1d(x2).astype(np.uint32) + ks[1]]
        for i in range(5):
            for r in _ROTATIONS[i % 2]:
                x[0] = x[0] + x[1]
                x[1] = _rotl(x[1], r)
                x[1] = x[0] ^ x[1]
            x[0] = x[0] + ks[(i + 1) % 3]
            x[1] = x[1] + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x[0].reshape(np.shape(x1)), x[1].reshape(np.shape(x2))


def _key_words(key: Any, what: str) -> tuple[np.uint32, np.uint32]:
    """The two words of one key (read on the host; a key mapped by ``vmap``
    makes ``vmap`` run the function per example)."""
    if isinstance(key, Tensor):
        try:
            value = key.numpy()
        except ConcretizationError:
            raise MappedLoopError(f"random.{what}: a key mapped by vmap (vmap runs each "
                                  "example's draw)") from None
    else:
        value = np.asarray(key)
    if value.shape != (2,):
        raise TypeError(f"random.{what} accepts a single key of shape (2,), got a key array "
                        f"of shape {value.shape}; use vmap for batching")
    if value.dtype.kind not in "iu" or np.any(value < 0) or np.any(value > 0xFFFFFFFF):
        raise TypeError(f"random.{what}: a key holds two uint32 words, got {value!r}")
    words = value.astype(np.uint32)
    return words[0], words[1]


def _as_key(words: np.ndarray) -> Tensor:
    return Tensor._leaf(np.ascontiguousarray(words.astype(np.int64)))


def _shape(shape: Sequence[int] | int) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, int | np.integer) else tuple(int(d) for d in shape)


def _counts(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """JAX's ``iota_2x32_shape``: the flat index of each element as a 64-bit
    count, split into its high and low words."""
    i = np.arange(math.prod(shape), dtype=np.uint64).reshape(shape)
    return (i >> np.uint64(32)).astype(np.uint32), (i & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def _bits32(key: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    k1, k2 = _key_words(key, what)
    b1, b2 = _threefry2x32(k1, k2, *_counts(shape))
    return b1 ^ b2


def PRNGKey(seed: int | Any) -> Tensor:  # noqa: N802  (JAX's name)
    """The key of an integer seed: ``[0, seed mod 2**32]``, as JAX makes it
    with 64-bit integers off (the seed taken as a 32-bit integer)."""
    if isinstance(seed, Tensor):
        seed = seed.item()
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    return _as_key(np.array([0, int(seed) & 0xFFFFFFFF], np.uint64))


def key(seed: int | Any, *, impl: Any = None) -> Tensor:
    """``jax.random.key``: here the same raw key as ``PRNGKey`` (no typed
    key arrays: a key is its two words)."""
    if impl not in (None, "threefry2x32"):
        raise NotImplementedError(f"random.key: impl={impl!r} (only threefry2x32)")
    return PRNGKey(seed)


def key_data(keys: Any) -> Tensor:
    return keys if isinstance(keys, Tensor) else _as_key(np.asarray(keys))


def wrap_key_data(key_bits_array: Any, *, impl: Any = None) -> Tensor:
    if impl not in (None, "threefry2x32"):
        raise NotImplementedError(f"random.wrap_key_data: impl={impl!r} (only threefry2x32)")
    return key_data(key_bits_array)


def split(key: Any, num: int | Sequence[int] = 2) -> Tensor:
    """``num`` new keys (a shape of keys for a tuple), stacked on a new
    leading axis: ``keys[i]`` are the hash of the count i (JAX's fold-like
    split)."""
    shape = _shape(num)
    k1, k2 = _key_words(key, "split")
    b1, b2 = _threefry2x32(k1, k2, *_counts(shape))
    return _as_key(np.stack([b1, b2], axis=-1))


def fold_in(key: Any, data: int | Any) -> Tensor:
    """A new key from ``key`` and an integer (its low 32 bits, as JAX)."""
    if isinstance(data, Tensor):
        data = data.item()
    d = int(data) & 0xFFFFFFFF
    k1, k2 = _key_words(key, "fold_in")
    b1, b2 = _threefry2x32(k1, k2, np.array([0], np.uint32), np.array([d], np.uint32))
    return _as_key(np.array([b1[0], b2[0]], np.uint32))


def bits(key: Any, shape: Sequence[int] | int = (), dtype: Any = None) -> Tensor:
    """Uniform random 32-bit words (as int64 values: no uint32 dtype here)."""
    if dtype is not None and np.dtype(getattr(dtype, "np", dtype)) != np.uint32:
        raise NotImplementedError(f"random.bits: dtype {dtype} (only uint32 words)")
    return Tensor._leaf(_bits32(key, _shape(shape), "bits").astype(np.int64))


def _float_dtype(dtype: Any, what: str) -> DType:
    d = float32 if dtype is None else to_dtype(dtype)
    if d is not float32:
        raise NotImplementedError(f"random.{what}: dtype {d.name} (JAX's float32 draw "
                                  "only; cast the result)")
    return d


def _uniform01(key: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    """JAX's float32 uniform in [0, 1): 23 random mantissa bits under the
    exponent of 1.0, minus 1."""
    words = (_bits32(key, shape, what) >> np.uint32(9)) | np.uint32(0x3F800000)
    return words.view(np.float32) - np.float32(1.0)


def _uniform_np(key: Any, shape: tuple[int, ...], minval: Any, maxval: Any,
                what: str) -> np.ndarray:
    lo, hi = np.float32(minval), np.float32(maxval)
    # u * (hi - lo) + lo rounded once (XLA fuses it into a multiply-add): the
    # float32 product is exact in float64
    u = _uniform01(key, shape, what).astype(np.float64)
    scaled = (u * np.float64(hi - lo) + np.float64(lo)).astype(np.float32)
    return np.maximum(lo, scaled)


def uniform(key: Any, shape: Sequence[int] | int = (), dtype: Any = None,
            minval: float = 0.0, maxval: float = 1.0) -> Tensor:
    """Uniform in ``[minval, maxval)`` (float32, JAX's values)."""
    _float_dtype(dtype, "uniform")
    for b in (minval, maxval):
        if isinstance(b, Tensor) and b.ndim:
            raise NotImplementedError("random.uniform: tensor bounds (give Python numbers)")
    lo = minval.item() if isinstance(minval, Tensor) else minval
    hi = maxval.item() if isinstance(maxval, Tensor) else maxval
    return Tensor._leaf(_uniform_np(key, _shape(shape), lo, hi, "uniform"))


def normal(key: Any, shape: Sequence[int] | int = (), dtype: Any = None) -> Tensor:
    """Standard normal (float32): ``sqrt(2) erfinv(u)`` of JAX's uniform
    ``u`` in (-1, 1)."""
    _float_dtype(dtype, "normal")
    lo = np.nextafter(np.float32(-1.0), np.float32(0.0))
    u = _uniform_np(key, _shape(shape), lo, 1.0, "normal")
    return ops.mul(composites2.erfinv(Tensor._leaf(u)), float(np.float32(np.sqrt(2))))


def randint(key: Any, shape: Sequence[int] | int, minval: int, maxval: int,
            dtype: Any = None) -> Tensor:
    """Integers in ``[minval, maxval)`` (int32 by default), JAX's values: two
    32-bit draws combined modulo the span."""
    d = int32 if dtype is None else to_dtype(dtype)
    if d is not int32:
        raise NotImplementedError(f"random.randint: dtype {d.name} (int32 only)")
    shape = _shape(shape)
    for b in (minval, maxval):
        if isinstance(b, Tensor) and b.ndim:
            raise NotImplementedError("random.randint: tensor bounds (give Python ints)")
    info = np.iinfo(np.int32)
    lo_raw = int(minval.item() if isinstance(minval, Tensor) else minval)
    hi_raw = int(maxval.item() if isinstance(maxval, Tensor) else maxval)
    out_of_range = hi_raw > info.max
    lo = min(max(lo_raw, info.min), info.max)
    hi = min(max(hi_raw, info.min), info.max)
    k = split(key)
    k_np = k.numpy()
    higher = _bits32(k_np[0], shape, "randint").astype(np.uint64)
    lower = _bits32(k_np[1], shape, "randint").astype(np.uint64)
    span = (hi - lo) & 0xFFFFFFFF if hi > lo else 1
    if out_of_range and hi > lo:
        span = (span + 1) & 0xFFFFFFFF
    # JAX's arithmetic in uint32: products and sums wrap at 2**32
    w = np.uint64(0xFFFFFFFF)
    if span == 0:  # 2**32 wrapped to 0: x % 0 leaves x (XLA's unsigned remainder)
        offset = ((higher * np.uint64(((2 ** 16) ** 2) & 0xFFFFFFFF)) & w) + lower & w
    else:
        s = np.uint64(span)
        multiplier = np.uint64(((2 ** 16 % span) ** 2 & 0xFFFFFFFF) % span)
        offset = ((((higher % s) * multiplier) & w) + lower % s & w) % s
    values = (np.int64(lo) + offset.astype(np.int64)).astype(np.int64)
    # JAX adds in int32 (wrapping): the offset's low 32 bits, as a signed add
    return Tensor._leaf(((values - info.min) % 2 ** 32 + info.min).astype(np.int32))


def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | int | None = None) -> Tensor:
    """``uniform < p`` (JAX's values); ``shape`` defaults to ``p``'s."""
    p_t = p if isinstance(p, Tensor) else ops.as_tensor_arg(np.asarray(p, np.float32))
    shape = tuple(p_t.shape) if shape is None else _shape(shape)
    u = Tensor._leaf(_uniform01(key, shape, "bernoulli"))
    return ops.lt(u, p_t)


def gumbel(key: Any, shape: Sequence[int] | int = (), dtype: Any = None) -> Tensor:
    """Standard Gumbel (float32): ``-log(-log(u))``, ``u`` uniform in [tiny, 1)."""
    _float_dtype(dtype, "gumbel")
    u = _uniform_np(key, _shape(shape), np.finfo(np.float32).tiny, 1.0, "gumbel")
    return ops.neg(ops.log(ops.neg(ops.log(Tensor._leaf(u)))))


def categorical(key: Any, logits: Any, axis: int = -1,
                shape: Sequence[int] | None = None, replace: bool = True) -> Tensor:
    """A draw of an index along ``axis`` with probabilities ``softmax(logits)``
    (the Gumbel-max trick, JAX's values); ``shape`` may add leading dims."""
    if not replace:
        raise NotImplementedError("random.categorical(replace=False) is not supported")
    x = logits if isinstance(logits, Tensor) else ops.as_tensor_arg(np.asarray(logits))
    axis = axis - x.ndim if axis >= 0 else axis
    batch = tuple(n for i, n in enumerate(x.shape) if i != axis % x.ndim)
    shape = batch if shape is None else _shape(shape)
    if shape[len(shape) - len(batch):] != batch:
        raise ValueError(f"random.categorical: shape {shape} must end with the logits' batch "
                         f"shape {batch}")
    prefix = shape[:len(shape) - len(batch)]
    full = list(shape[len(shape) - len(batch):])
    full.insert(axis % x.ndim, x.shape[axis])
    g = gumbel(key, (*prefix, *full))
    expanded = ops.reshape(x, (1,) * len(prefix) + tuple(x.shape))
    return ops.argmax(g + expanded, axis).to(int32)


def _shuffled_positions(key: Any, n: int) -> np.ndarray:
    """JAX's shuffle of ``arange(n)``: rounds of a stable sort by fresh random
    32-bit keys (enough rounds that collisions are unlikely: tjablin's rule)."""
    rounds = int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))
    idx = np.arange(n, dtype=np.int64)
    k = key
    for _ in range(rounds):
        pair = split(k).numpy()
        k, sub = pair[0], pair[1]
        order = np.argsort(_bits32(sub, (n,), "permutation"), kind="stable")
        idx = idx[order]
    return idx


def permutation(key: Any, x: int | Any, axis: int = 0, independent: bool = False) -> Tensor:
    """A random permutation of ``arange(x)`` (int32) or of ``x`` along
    ``axis`` (JAX's values)."""
    if isinstance(x, int | np.integer):
        return Tensor._leaf(_shuffled_positions(key, int(x)).astype(np.int32))
    t = x if isinstance(x, Tensor) else ops.as_tensor_arg(np.asarray(x))
    if t.ndim == 0:
        raise TypeError("x must be an integer or at least 1-dimensional")
    if independent and t.ndim > 1:
        raise NotImplementedError("random.permutation(independent=True) of a >1-d array "
                                  "is not supported")
    axis %= t.ndim
    return index_select(t, axis, Tensor._leaf(_shuffled_positions(key, t.shape[axis])))


def exponential(key: Any, shape: Sequence[int] | int = (), dtype: Any = None) -> Tensor:
    """Standard exponential (float32): ``-log1p(-u)`` of JAX's uniform ``u``."""
    _float_dtype(dtype, "exponential")
    u = Tensor._leaf(_uniform01(key, _shape(shape), "exponential"))
    return ops.neg(ops.log1p(ops.neg(u)))
