"""``pf.random``: JAX's counter-based PRNG (``jax.random``), bit for bit.

Keys are JAX's raw threefry2x32 keys: a pair of 32-bit words, here an int64
tensor of shape ``(2,)`` holding the two uint32 values (pyflame has no
uint32 dtype); ``split`` and ``fold_in`` make new keys and the samplers draw
from one. The threefry hash, the partitionable counter layout (JAX's default
``jax_threefry_partitionable``) and each sampler's transform of the bits are
JAX's, so ``pf.random.normal(pf.random.PRNGKey(0), (3,))`` gives
``jax.random.normal(jax.random.PRNGKey(0), (3,))``'s values.

The samplers: uniform, normal, randint, bits, bernoulli, gumbel,
categorical, exponential, permutation, choice, truncated_normal, laplace,
logistic, cauchy, rademacher, pareto, rayleigh, weibull_min, lognormal,
triangular, wald, geometric, maxwell, double_sided_maxwell,
multivariate_normal, orthogonal, gamma, loggamma, beta, dirichlet, t,
chisquare, f, generalized_normal, ball, poisson, binomial, multinomial.
Integer results are JAX's exactly; float results to the last-bit rounding of
float32 transcendental functions (see the note above ``truncated_normal``).
A parameter given as a tensor gets JAX's gradient (the reparameterized
transforms; for gamma and the samplers on it, JAX's implicit
reparameterization, whose own derivative raises).

The bits are computed on the host from the key's value: inside
``pf.compile`` a draw from a key argument reads it (the call runs ``f``, no
stale draw is replayed); under ``vmap`` over keys ``f`` runs per example.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import composites2, ops
from .core import Tensor
from .dialects.dtypes import DType, bfloat16, float16, float32, float64, int32, int64
from .dialects.dtypes import dtype as to_dtype
from .indexing import gather, index_select, movedim, narrow
from .jax_config import canonical_host
from .jax_config import config as _config
from .reductions import argsort
from .vmap import ConcretizationError, MappedLoopError

__all__ = ["PRNGKey", "ball", "bernoulli", "beta", "bits", "categorical", "cauchy", "chisquare",
           "choice", "clone", "dirichlet", "double_sided_maxwell", "exponential", "f", "fold_in",
           "gamma", "generalized_normal", "geometric", "gumbel", "key", "key_data", "laplace",
           "loggamma", "logistic", "lognormal", "maxwell", "multivariate_normal", "normal",
           "orthogonal", "pareto", "permutation", "poisson", "rademacher", "randint",
           "rayleigh", "split", "t", "triangular", "truncated_normal", "uniform", "wald",
           "weibull_min", "wrap_key_data"]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _rotl(x: np.ndarray, d: int) -> np.ndarray:
    return (x << np.uint32(d)) | (x >> np.uint32(32 - d))


def _leaf(value: Any) -> Tensor:
    """A draw's tensor: an ndarray even for shape () (numpy's arithmetic on
    0-d arrays gives scalars, which ``np.asarray(tensor)`` refused)."""
    return Tensor._leaf(np.asarray(value))


def _threefry2x32(k1: Any, k2: Any, x1: np.ndarray, x2: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The Threefry-2x32 hash (20 rounds) of the counter pairs ``(x1, x2)``
    under the key ``(k1, k2)``; keys and counters broadcast (a column of
    keys against a row of counters hashes many keys at once)."""
    k1, k2 = np.asarray(k1, np.uint32), np.asarray(k2, np.uint32)
    shape = np.broadcast_shapes(np.shape(x1), np.shape(x2), k1.shape, k2.shape)
    ks = [k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA)]
    with np.errstate(over="ignore"):  # uint32 arithmetic wraps, as the hash wants
        x = [np.broadcast_to(np.asarray(x1, np.uint32), shape) + ks[0],
             np.broadcast_to(np.asarray(x2, np.uint32), shape) + ks[1]]
        for i in range(5):
            for r in _ROTATIONS[i % 2]:
                x[0] = x[0] + x[1]
                x[1] = _rotl(x[1], r)
                x[1] = x[0] ^ x[1]
            x[0] = x[0] + ks[(i + 1) % 3]
            x[1] = x[1] + ks[(i + 2) % 3] + np.uint32(i + 1)
    return np.asarray(x[0], np.uint32).reshape(shape), np.asarray(x[1], np.uint32).reshape(shape)


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
    return _leaf(np.ascontiguousarray(words.astype(np.int64)))


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
    with 64-bit integers off (the seed taken as a 32-bit integer); under
    jax_enable_x64 the seed's high and low 32-bit words."""
    if isinstance(seed, Tensor):
        seed = seed.item()
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    seed = int(seed)
    if _config.jax_enable_x64:  # a 64-bit seed: its high and low words
        return _as_key(np.array([(seed >> 32) & 0xFFFFFFFF, seed & 0xFFFFFFFF], np.uint64))
    return _as_key(np.array([0, seed & 0xFFFFFFFF], np.uint64))


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
    """A new key from ``key`` and an integer (its low 32 bits, as JAX); data
    mapped by ``vmap`` makes ``vmap`` run each example's fold."""
    if isinstance(data, Tensor):
        try:
            data = data.item()
        except ConcretizationError:
            raise MappedLoopError("random.fold_in: data mapped by vmap (vmap runs each "
                                  "example's fold)") from None
    d = int(data) & 0xFFFFFFFF
    k1, k2 = _key_words(key, "fold_in")
    b1, b2 = _threefry2x32(k1, k2, np.array([0], np.uint32), np.array([d], np.uint32))
    return _as_key(np.array([b1[0], b2[0]], np.uint32))


def bits(key: Any, shape: Sequence[int] | int = (), dtype: Any = None) -> Tensor:
    """Uniform random 32-bit words (as int64 values: no uint32 dtype here);
    ``dtype=uint8`` the low 8 bits of each word, as JAX's."""
    want = None if dtype is None else np.dtype(getattr(dtype, "np", dtype))
    words = _bits32(key, _shape(shape), "bits")
    if want == np.uint8:
        return _leaf((words & np.uint32(0xFF)).astype(np.uint8))
    if want is not None and want != np.uint32:
        raise NotImplementedError(f"random.bits: dtype {dtype} (uint32 words, as int64 "
                                  "values, or uint8; pyflame has no uint16/uint64)")
    return _leaf(words.astype(np.int64))


def _float_dtype(dtype: Any, what: str, wide: bool = False) -> DType:
    """The draw's dtype: JAX's default float (float64 with jax_enable_x64),
    float64 asked without 64-bit mode is float32 (as JAX's). ``wide``: the
    sampler draws float64, float16 and bfloat16 too."""
    d = (float64 if _config.jax_enable_x64 else float32) if dtype is None else to_dtype(dtype)
    if d is float64 and not _config.jax_enable_x64:
        d = float32
    if d in (float64, float16, bfloat16) and wide:
        return d
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
    return _scale_uniform(_uniform01(key, shape, what), minval, maxval)


def _scale_uniform(u01: np.ndarray, minval: Any, maxval: Any) -> np.ndarray:
    lo, hi = np.float32(minval), np.float32(maxval)
    # u * (hi - lo) + lo rounded once (XLA fuses it into a multiply-add): the
    # float32 product is exact in float64
    scaled = (u01.astype(np.float64) * np.float64(hi - lo) + np.float64(lo)).astype(np.float32)
    return np.maximum(lo, scaled)


def _uniform16(key: Any, shape: tuple[int, ...], minval: Any, maxval: Any, d: DType,
               what: str) -> np.ndarray:
    """JAX's float16/bfloat16 uniform: the low 16 bits of each 32-bit word
    (bfloat16, with fewer than 8 mantissa bits, the low 8), their top
    mantissa-many bits under the exponent of 1.0, minus 1, scaled in the
    16-bit dtype with each operation rounded (as XLA computes it)."""
    t = d.np.type
    nmant = 10 if d is float16 else 7
    rng_bits = 16 if nmant >= 8 else 8
    words = (_bits32(key, shape, what) & np.uint32((1 << rng_bits) - 1)).astype(np.uint16)
    words = (words >> np.uint16(rng_bits - nmant)) | np.array(1.0, t).view(np.uint16)
    u01 = words.view(t) - t(1.0)
    lo, hi = np.array(minval, t), np.array(maxval, t)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.maximum(lo, (u01 * (hi - lo)).astype(t) + lo).astype(t)


def _bits64(key: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    """JAX's 64-bit words (partitionable threefry): the hash's two words of
    each count, the first the high half."""
    k1, k2 = _key_words(key, what)
    b1, b2 = _threefry2x32(k1, k2, *_counts(shape))
    return (b1.astype(np.uint64) << np.uint64(32)) | b2.astype(np.uint64)


_VELTKAMP = 134217729.0  # 2**27 + 1: splits a double into two 26-bit halves


def _fma64(a: np.ndarray, b: Any, c: Any) -> np.ndarray:
    """``a * b + c`` rounded once, as XLA's fused multiply-add (numpy has
    none): the product's rounding error (Dekker's two-product) and the sum's
    (Knuth's two-sum) are added back before the last rounding."""
    a, b, c = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64),
                                  np.asarray(c, np.float64))
    p = a * b
    t = _VELTKAMP * a
    ah = t - (t - a)
    t = _VELTKAMP * b
    bh = t - (t - b)
    al, bl = a - ah, b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bp = s - p
    return s + (((p - (s - bp)) + (c - bp)) + e)


def _uniform64(key: Any, shape: tuple[int, ...], minval: Any, maxval: Any,
               what: str) -> np.ndarray:
    """JAX's float64 uniform: 52 random mantissa bits under the exponent of
    1.0, minus 1, scaled by one fused multiply-add (XLA fuses it)."""
    words = (_bits64(key, shape, what) >> np.uint64(12)) | np.uint64(0x3FF0000000000000)
    u01 = words.view(np.float64) - 1.0
    lo, hi = np.float64(minval), np.float64(maxval)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.maximum(lo, _fma64(u01, hi - lo, lo))


def _bound(b: Any, what: str) -> Any:
    if isinstance(b, Tensor):
        if b.ndim:
            raise NotImplementedError(f"random.{what}: tensor bounds (give Python numbers)")
        return b.item()
    return b


def _uniform_array_bounds(key: Any, shape: tuple[int, ...], minval: Any, maxval: Any
                          ) -> Tensor:
    """``uniform`` with array bounds (broadcast to ``shape``, as JAX's): the
    same multiply-add rounded once, on tensors (differentiable in the bounds)."""
    lo, hi = (b.to(float32) if isinstance(b, Tensor) else Tensor._leaf(
        np.asarray(canonical_host(b), np.float32)) for b in (minval, maxval))
    for b, name in ((lo, "minval"), (hi, "maxval")):
        try:
            ok = b.ndim <= len(shape) and np.broadcast_shapes(tuple(b.shape), shape) == shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"random.uniform: {name} of shape {list(b.shape)} does not "
                             f"broadcast to the draw's shape {list(shape)}")
    u = _leaf(_uniform01(key, shape, "uniform")).to(float64)
    scaled = (u * (hi - lo).to(float64) + lo.to(float64)).to(float32)
    return ops.maximum(lo, scaled)


def uniform(key: Any, shape: Sequence[int] | int = (), dtype: Any = None,
            minval: float = 0.0, maxval: float = 1.0) -> Tensor:
    """Uniform in ``[minval, maxval)`` (JAX's values: float32, or float64
    under jax_enable_x64)."""
    d = _float_dtype(dtype, "uniform", wide=True)
    if d is float32 and any(isinstance(b, Tensor | np.ndarray | list | tuple) and
                                     np.ndim(b) > 0 for b in (minval, maxval)):
        return _uniform_array_bounds(key, _shape(shape), minval, maxval)
    lo, hi = _bound(minval, "uniform"), _bound(maxval, "uniform")
    if d is float64:
        return _leaf(_uniform64(key, _shape(shape), lo, hi, "uniform"))
    if d in (float16, bfloat16):
        return _leaf(_uniform16(key, _shape(shape), lo, hi, d, "uniform"))
    return _leaf(_uniform_np(key, _shape(shape), lo, hi, "uniform"))


_F32 = np.float32
_SQRT2 = _F32(np.sqrt(2))
_ERFINV_CENTRAL = np.array([2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                            0.00021858087, -0.00125372503, -0.00417768164, 0.246640727,
                            1.50140941], np.float32)
_ERFINV_TAIL = np.array([-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                         0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682],
                        np.float32)


def _erfinv_np(x: np.ndarray) -> np.ndarray:
    """XLA's float32 erfinv (Giles' polynomials), on the host."""
    x = np.asarray(x, _F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log1p(-x * x)
        central = w < _F32(5)
        w = np.where(central, w - _F32(2.5), np.sqrt(w) - _F32(3)).astype(_F32)
        p = np.where(central, _ERFINV_CENTRAL[0], _ERFINV_TAIL[0]).astype(_F32)
        for c, t in zip(_ERFINV_CENTRAL[1:], _ERFINV_TAIL[1:]):
            p = (np.where(central, c, t).astype(_F32) + p * w).astype(_F32)
        return np.where(np.abs(x) == _F32(1), x * _F32(np.inf), p * x).astype(_F32)


def _normal_np(words: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    lo = np.nextafter(_F32(-1.0), _F32(0.0))
    return (_SQRT2 * _erfinv_np(_uniform_np(words, shape, lo, 1.0, "normal"))).astype(_F32)


# XLA's float64 erfinv: Giles' double-precision polynomials (w < 6.25, w < 16, else)
_ERFINV64 = (
    np.array([-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
              1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
              6.6376381343583238325e-15, -4.0545662729752068639e-14,
              -8.1519341976054721522e-14, 2.6335093153082322977e-12,
              -1.2975133253453532498e-11, -5.4154120542946279317e-11,
              1.051212273321532285e-09, -4.1126339803469836976e-09,
              -2.9070369957882005086e-08, 4.2347877827932403518e-07,
              -1.3654692000834678645e-06, -1.3882523362786468719e-05,
              0.0001867342080340571352, -0.00074070253416626697512,
              -0.0060336708714301490533, 0.24015818242558961693, 1.6536545626831027356]),
    np.array([2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
              1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
              2.9234449089955446044e-06, 1.2475304481671778723e-05,
              -4.7318229009055733981e-05, 6.8284851459573175448e-05,
              2.4031110387097893999e-05, -0.0003550375203628474796,
              0.00095328937973738049703, -0.0016882755560235047313,
              0.0024914420961078508066, -0.0037512085075692412107, 0.005370914553590063617,
              1.0052589676941592334, 3.0838856104922207635]),
    np.array([-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
              -3.7894654401267369937e-09, 7.6157012080783393804e-09,
              -1.4960026627149240478e-08, 2.9147953450901080826e-08,
              -6.7711997758452339498e-08, 2.2900482228026654717e-07,
              -9.9298272942317002539e-07, 4.5260625972231537039e-06,
              -1.9681778105531670567e-05, 7.5995277030017761139e-05,
              -0.00021503011930044477347, -0.00013871931833623122026,
              1.0103004648645343977, 4.8499064014085844221]))


def _erfinv64_np(x: np.ndarray) -> np.ndarray:
    """XLA's float64 erfinv, on the host."""
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log1p(-x * x)
        out = np.empty_like(x)
        bands = (w < 6.25, (w >= 6.25) & (w < 16), ~(w < 16))
        shifts = (None, 3.25, 5.0)
        for coeffs, band, shift in zip(_ERFINV64, bands, shifts):
            wb = w[band] - 3.125 if shift is None else np.sqrt(w[band]) - shift
            p = np.full(wb.shape, coeffs[0])
            for c in coeffs[1:]:
                p = _fma64(p, wb, c)  # (XLA fuses each step)
            out[band] = p * x[band]
        return np.where(np.abs(x) == 1.0, x * np.inf, out)


def normal(key: Any, shape: Sequence[int] | int = (), dtype: Any = None) -> Tensor:
    """Standard normal: ``sqrt(2) erfinv(u)`` of JAX's uniform ``u`` in
    (-1, 1), with XLA's erfinv (Giles' polynomials) on the host: JAX's
    values but for numpy's and XLA's ``log1p`` rounding (float32: about 95%
    of draws are bit-equal, the rest within 2 ulp). float64 under
    jax_enable_x64, from JAX's 64-bit words. float16/bfloat16 from JAX's
    16-bit uniform, the float32 erfinv rounded to the dtype before the
    scaling (bit for bit with JAX's)."""
    d = _float_dtype(dtype, "normal", wide=True)
    if d in (float16, bfloat16):
        t = d.np.type
        lo = np.nextafter(np.array(-1.0, t), np.array(0.0, t))
        u = _uniform16(key, _shape(shape), lo, 1.0, d, "normal")
        return _leaf((np.array(np.sqrt(2), t) * _erfinv_np(u.astype(_F32)).astype(t)).astype(t))
    if d is float64:
        shape = _shape(shape)
        u = _uniform64(key, shape, np.nextafter(-1.0, 0.0), 1.0, "normal")
        return _leaf(np.float64(np.sqrt(2)) * _erfinv64_np(u))
    return _leaf(_normal_np(key, _shape(shape)))


def randint(key: Any, shape: Sequence[int] | int, minval: int, maxval: int,
            dtype: Any = None) -> Tensor:
    """Integers in ``[minval, maxval)`` (int32 by default), JAX's values: two
    32-bit draws combined modulo the span."""
    d = (int64 if _config.jax_enable_x64 else int32) if dtype is None else to_dtype(dtype)
    if d is int64 and not _config.jax_enable_x64:
        d = int32  # (JAX's: int64 asked without 64-bit mode is int32)
    if d is int64:
        return _randint64(key, _shape(shape), int(_bound(minval, "randint")),
                          int(_bound(maxval, "randint")))
    if d is not int32:
        raise NotImplementedError(f"random.randint: dtype {d.name} (int32 or int64 only)")
    shape = _shape(shape)
    info = np.iinfo(np.int32)
    lo_raw, hi_raw = (_int_bounds(b, shape) for b in (minval, maxval))
    out_of_range = hi_raw > info.max
    lo = np.clip(lo_raw, info.min, info.max)
    hi = np.clip(hi_raw, info.min, info.max)
    k = split(key)
    k_np = k.numpy()
    higher = _bits32(k_np[0], shape, "randint").astype(np.uint64)
    lower = _bits32(k_np[1], shape, "randint").astype(np.uint64)
    span = np.where(hi > lo, (hi - lo) & 0xFFFFFFFF, 1)
    span = np.where(out_of_range & (hi > lo), (span + 1) & 0xFFFFFFFF, span).astype(np.uint64)
    # JAX's arithmetic in uint32: products and sums wrap at 2**32
    w = np.uint64(0xFFFFFFFF)
    wrapped = ((higher * np.uint64(((2 ** 16) ** 2) & 0xFFFFFFFF)) & w) + lower & w
    s = np.where(span == 0, np.uint64(1), span)  # 2**32 wrapped to 0: x % 0 leaves x
    multiplier = ((np.uint64(2 ** 16) % s) ** np.uint64(2) & w) % s
    offset = ((((higher % s) * multiplier) & w) + lower % s & w) % s
    offset = np.where(span == 0, wrapped, offset)
    values = (lo.astype(np.int64) + offset.astype(np.int64)).astype(np.int64)
    # JAX adds in int32 (wrapping): the offset's low 32 bits, as a signed add
    return _leaf(((values - info.min) % 2 ** 32 + info.min).astype(np.int32))


def _int_bounds(b: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A randint bound as int64 values broadcast to ``shape`` (JAX broadcasts
    array bounds; a float bound is truncated, as its conversion)."""
    v = _value_host(b, "randint")
    # numpy data in JAX's dtypes (int64 wraps to int32 without x64, as jnp.asarray)
    arr = canonical_host(v) if isinstance(v, np.ndarray | np.generic) else np.asarray(v)
    if arr.dtype.kind == "f":
        arr = np.trunc(arr)
    return np.broadcast_to(arr.astype(np.int64), shape)


def _value_host(b: Any, what: str) -> Any:
    if isinstance(b, Tensor):
        try:
            return b.numpy()
        except ConcretizationError:
            raise MappedLoopError(f"random.{what}: a bound mapped by vmap (vmap runs each "
                                  "example's draw)") from None
    return b


def _randint64(key: Any, shape: tuple[int, ...], minval: int, maxval: int) -> Tensor:
    """JAX's int64 randint (jax_enable_x64): two 64-bit draws combined
    modulo the span, in uint64 arithmetic that wraps as XLA's."""
    info = np.iinfo(np.int64)
    out_of_range = maxval > info.max
    lo = min(max(minval, info.min), info.max)
    hi = min(max(maxval, info.min), info.max)
    k_np = split(key).numpy()
    higher, lower = _bits64(k_np[0], shape, "randint"), _bits64(k_np[1], shape, "randint")
    span = (hi - lo) % 2 ** 64 if hi > lo else 1
    if out_of_range and hi > lo:
        span = (span + 1) % 2 ** 64
    with np.errstate(over="ignore"):
        if span == 0:  # 2**64 wrapped to 0: x % 0 leaves x (XLA's unsigned remainder)
            offset = higher * np.uint64(0) + lower  # ((2**32 % 0)**2: 0)
        else:
            s = np.uint64(span)
            multiplier = np.uint64(((2 ** 32 % span) ** 2 % 2 ** 64) % span)
            offset = ((higher % s) * multiplier + lower % s) % s
        values = np.int64(lo) + offset.view(np.int64)  # (wraps, as JAX's int64 add)
    return _leaf(values.astype(np.int64))


def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | int | None = None) -> Tensor:
    """``uniform < p`` (JAX's values); ``shape`` defaults to ``p``'s. The
    uniform has ``p``'s dtype: float64 (64-bit words) under jax_enable_x64 for
    a Python number or a float64 ``p``."""
    wide = _config.jax_enable_x64 and (
        p.dtype is float64 if isinstance(p, Tensor) else np.asarray(p).dtype != np.float32)
    p_t = p if isinstance(p, Tensor) else ops.as_tensor_arg(
        np.asarray(p, np.float64 if wide else np.float32))
    shape = tuple(p_t.shape) if shape is None else _shape(shape)
    if wide:
        return ops.lt(_leaf(_uniform64(key, shape, 0.0, 1.0, "bernoulli")), p_t)
    u = _leaf(_uniform01(key, shape, "bernoulli"))
    return ops.lt(u, p_t)


def gumbel(key: Any, shape: Sequence[int] | int = (), dtype: Any = None,
           mode: str | None = None) -> Tensor:
    """Standard Gumbel (float32), JAX's modes: ``"low"`` (the default):
    ``-log(-log(u))``, ``u`` uniform in [tiny, 1); ``"high"``: two uniforms,
    the second filling the low bits of the first below 1/2, through
    ``-log(-log1p(-x))`` (``"highest"``, on 64-bit fixed point, raises)."""
    _float_dtype(dtype, "gumbel")
    shape = _shape(shape)
    if mode in (None, "low"):
        u = _uniform_np(key, shape, np.finfo(np.float32).tiny, 1.0, "gumbel")
        return ops.neg(ops.log(ops.neg(ops.log(_leaf(u)))))
    if mode == "high":
        info = np.finfo(_F32)
        hi, lo = _uniform_np(key, (2, *shape), 0.0, 1.0, "gumbel")
        x = np.where(hi >= 0.5, hi, hi + _F32(2.0 ** -info.nmant) * lo + info.tiny)
        return ops.neg(ops.log(ops.neg(ops.log1p(ops.neg(_leaf(x.astype(_F32)))))))
    if mode == "highest":
        raise NotImplementedError("random.gumbel(mode='highest') is not supported")
    raise ValueError(f"Must provide valid mode for gumbel got: {mode}")


def categorical(key: Any, logits: Any, axis: int = -1,
                shape: Sequence[int] | None = None, replace: bool = True,
                mode: str | None = None) -> Tensor:
    """A draw of an index along ``axis`` with probabilities ``softmax(logits)``
    (the Gumbel-max trick, JAX's values); ``shape`` may add leading dims.
    Without replacement, the Gumbel top-k: the leading dims of ``shape``
    number the draws, distinct per distribution."""
    x = logits if isinstance(logits, Tensor) else ops.as_tensor_arg(canonical_host(logits))
    axis = axis - x.ndim if axis >= 0 else axis
    batch = tuple(n for i, n in enumerate(x.shape) if i != axis % x.ndim)
    shape = batch if shape is None else _shape(shape)
    if shape[len(shape) - len(batch):] != batch:
        raise ValueError(f"random.categorical: shape {shape} must end with the logits' batch "
                         f"shape {batch}")
    prefix = shape[:len(shape) - len(batch)]
    if not replace:
        k = math.prod(prefix)
        if k > x.shape[axis]:
            raise ValueError(f"Number of samples without replacement ({k}) cannot exceed "
                             f"number of categories ({x.shape[axis]}).")
        y = movedim(x + gumbel(key, tuple(x.shape), mode=mode), axis, -1)
        top = narrow(argsort(y, -1, descending=True, stable=True), -1, 0, k)  # lax.top_k
        top = movedim(top, -1, 0)  # (k, *batch)
        return ops.reshape(top, shape).to(int32)
    full = list(shape[len(shape) - len(batch):])
    full.insert(axis % x.ndim, x.shape[axis])
    g = gumbel(key, (*prefix, *full), mode=mode)
    expanded = ops.reshape(x, (1,) * len(prefix) + tuple(x.shape))
    return ops.argmax(g + expanded, axis).to(int32)


def _shuffled_positions(key: Any, shape: int | tuple[int, ...], axis: int = 0) -> np.ndarray:
    """JAX's shuffle of ``arange`` along ``axis`` of ``shape`` (each line on
    its own): rounds of a stable sort by fresh random 32-bit keys of the
    whole shape (enough rounds that collisions are unlikely: tjablin's rule)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    size = math.prod(shape)
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    line = [1] * len(shape)
    line[axis] = shape[axis]
    idx = np.broadcast_to(np.arange(shape[axis], dtype=np.int64).reshape(line), shape)
    k = key
    for _ in range(rounds):
        pair = split(k).numpy()
        k, sub = pair[0], pair[1]
        order = np.argsort(_bits32(sub, shape, "permutation"), axis=axis, kind="stable")
        idx = np.take_along_axis(idx, order, axis)
    return idx


def permutation(key: Any, x: int | Any, axis: int = 0, independent: bool = False) -> Tensor:
    """A random permutation of ``arange(x)`` (int32) or of ``x`` along
    ``axis`` (JAX's values); ``independent``: each line along ``axis`` on its
    own."""
    if isinstance(x, int | np.integer):
        return _leaf(_shuffled_positions(key, int(x)).astype(np.int32))
    t = x if isinstance(x, Tensor) else ops.as_tensor_arg(canonical_host(x))
    if t.ndim == 0:
        raise TypeError("x must be an integer or at least 1-dimensional")
    axis %= t.ndim
    if independent and t.ndim > 1:
        return gather(t, axis, _leaf(_shuffled_positions(key, tuple(t.shape), axis)))
    return index_select(t, axis, _leaf(_shuffled_positions(key, t.shape[axis])))


def exponential(key: Any, shape: Sequence[int] | int = (), dtype: Any = None) -> Tensor:
    """Standard exponential (float32): ``-log1p(-u)`` of JAX's uniform ``u``."""
    _float_dtype(dtype, "exponential")
    u = _leaf(_uniform01(key, _shape(shape), "exponential"))
    return ops.neg(ops.log1p(ops.neg(u)))


# ---- more samplers (JAX's algorithms and key use; host noise, pf transforms) ----
#
# Each sampler below follows jax.random's code (jax/_src/random.py): the same
# splits of the key, the same draws of bits, the same float32 transform. The
# bits and every integer result are JAX's exactly; a float result is JAX's up
# to the rounding of float32 transcendental functions (XLA's log, erf, tan,
# ... and numpy's may differ in the last bit). Where a sampler rejects
# (gamma, poisson, binomial) a last-bit difference in a comparison can, rarely,
# change one element's accept decision: the loop on keys is JAX's, so every
# other element still matches.

def _words_np(key: Any, what: str) -> np.ndarray:
    return np.array(_key_words(key, what), np.uint32)


def _split_np(words: np.ndarray, num: int | tuple[int, ...] = 2) -> np.ndarray:
    b1, b2 = _threefry2x32(words[0], words[1], *_counts(_shape(num)))
    return np.stack([b1, b2], axis=-1)


def _uniform_bounds(key: Any, shape: tuple[int, ...], lo: Any, hi: Any, what: str) -> Tensor:
    """JAX's uniform with bounds that may be tensors (a gradient flows to
    them through ``max(lo, u (hi - lo) + lo)``)."""
    if not isinstance(lo, Tensor) and not isinstance(hi, Tensor) and np.ndim(lo) == 0 \
            and np.ndim(hi) == 0:
        return _leaf(_uniform_np(key, shape, float(lo), float(hi), what))
    u = _leaf(_uniform01(key, shape, what))
    lo_t, hi_t = _param(lo), _param(hi)
    return ops.maximum(lo_t, u * (hi_t - lo_t) + lo_t)


def _param(x: Any) -> Tensor:
    """A distribution parameter: a tensor as given (float32), else a float32 constant."""
    if isinstance(x, Tensor):
        return x if x.dtype is float32 else x.to(float32)
    return _leaf(np.asarray(x, _F32))


def _value(x: Any) -> np.ndarray:
    """A parameter's float32 value on the host (for the rejection loops)."""
    if isinstance(x, Tensor):
        try:
            return x.numpy().astype(_F32)
        except ConcretizationError:
            raise MappedLoopError("random: a parameter mapped by vmap (vmap runs each "
                                  "example's draw)") from None
    return np.asarray(x, _F32)


def _bshape(what: str, shape: Any, *params: Any) -> tuple[int, ...]:
    """``shape``, or the parameters' broadcast shape; ``shape`` must hold them."""
    pshape = np.broadcast_shapes(*(tuple(np.shape(p)) if not isinstance(p, Tensor)
                                   else tuple(p.shape) for p in params))
    if shape is None:
        return tuple(pshape)
    out = _shape(shape)
    try:
        joint = np.broadcast_shapes(out, pshape)
    except ValueError:
        joint = None
    if joint != out:
        raise ValueError(f"{what} parameter shapes must be broadcast-compatible with shape "
                         f"argument, and the result of broadcasting the shapes must equal the "
                         f"shape argument, but got parameter shape {tuple(pshape)} for shape "
                         f"argument {out}.")
    return out


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Any = None,
                     dtype: Any = None) -> Tensor:
    """A standard normal truncated to ``(lower, upper)``: ``sqrt(2)
    erfinv(u)`` of a uniform ``u`` between ``erf(lower/sqrt 2)`` and
    ``erf(upper/sqrt 2)``, clipped strictly inside the bounds (JAX's). The
    gradient flows to the bounds (as JAX's)."""
    _float_dtype(dtype, "truncated_normal")
    shape = _bshape("truncated_normal", shape, lower, upper)
    lo, hi = _param(lower), _param(upper)
    a = ops.erf(lo / float(_SQRT2))
    b = ops.erf(hi / float(_SQRT2))
    u = _uniform_bounds(key, shape, a, b, "truncated_normal")
    out = composites2.erfinv(u) * float(_SQRT2)
    lo_v, hi_v = _value(lower), _value(upper)
    return ops.minimum(ops.maximum(out, _leaf(np.nextafter(lo_v, _F32(np.inf)))),
                       _leaf(np.nextafter(hi_v, _F32(-np.inf))))


def laplace(key: Any, shape: Sequence[int] | int = (), dtype: Any = None) -> Tensor:
    """Standard Laplace: ``sign(u) log1p(-|u|)``, ``u`` uniform in (-1, 1)."""
    _float_dtype(dtype, "laplace")
    eps_neg = float(np.finfo(_F32).epsneg)
    u = _leaf(_uniform_np(key, _shape(shape), -1.0 + eps_neg, 1.0, "laplace"))
    return ops.sign(u) * ops.log1p(ops.neg(ops.abs(u)))


def logistic(key: Any, shape: Sequence[int] | int = (), dtype: Any = None) -> Tensor:
    """Standard logistic: ``log(u) - log1p(-u)``, ``u`` uniform in [tiny, 1)."""
    _float_dtype(dtype, "logistic")
    u = _leaf(_uniform_np(key, _shape(shape), float(np.finfo(_F32).tiny), 1.0,
                                 "logistic"))
    return ops.log(u) - ops.log1p(ops.neg(u))


def cauchy(key: Any, shape: Sequence[int] | int = (), dtype: Any = None) -> Tensor:
    """Standard Cauchy: ``tan(pi (u - 1/2))``, ``u`` uniform in [eps, 1)."""
    _float_dtype(dtype, "cauchy")
    u = _leaf(_uniform_np(key, _shape(shape), float(np.finfo(_F32).eps), 1.0, "cauchy"))
    return ops.tan((u - 0.5) * float(_F32(np.pi)))


def rademacher(key: Any, shape: Sequence[int] | int = (), dtype: Any = None) -> Tensor:
    """-1 or +1 with equal probability: ``2 bernoulli(0.5) - 1`` (int32 by default)."""
    d = int32 if dtype is None else to_dtype(dtype)
    b = _uniform01(key, _shape(shape), "rademacher") < _F32(0.5)
    return _leaf((2 * b.astype(np.int64) - 1).astype(d.np))


def pareto(key: Any, b: Any, shape: Any = None, dtype: Any = None) -> Tensor:
    """Pareto of shape ``b``: ``exp(e / b)`` of a standard exponential ``e``."""
    _float_dtype(dtype, "pareto")
    shape = _bshape("pareto", shape, b)
    return ops.exp(exponential(key, shape) / _param(b))


def rayleigh(key: Any, scale: Any, shape: Any = None, dtype: Any = None) -> Tensor:
    """Rayleigh: ``scale sqrt(-2 log u)``."""
    _float_dtype(dtype, "rayleigh")
    shape = _bshape("rayleigh", shape, scale)
    u = _leaf(_uniform01(key, shape, "rayleigh"))
    return ops.broadcast_to(_param(scale), shape) * ops.sqrt(ops.log(u) * -2.0)


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Sequence[int] | int = (),
                dtype: Any = None) -> Tensor:
    """Weibull: ``(-log1p(-u)) ** (1 / concentration) * scale``."""
    _float_dtype(dtype, "weibull_min")
    u = _leaf(_uniform01(key, _shape(shape), "weibull_min"))
    return ops.pow(ops.neg(ops.log1p(ops.neg(u))), 1.0 / _param(concentration)) * _param(scale)


def lognormal(key: Any, sigma: Any = 1.0, shape: Any = None, dtype: Any = None) -> Tensor:
    """``exp(sigma n)`` of a standard normal ``n``."""
    _float_dtype(dtype, "lognormal")
    shape = _bshape("lognormal", shape, sigma)
    return ops.exp(normal(key, shape) * _param(sigma))


def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Any = None,
               dtype: Any = None) -> Tensor:
    """The triangular distribution on [left, right] peaking at ``mode``
    (inverse CDF of one uniform, as JAX)."""
    _float_dtype(dtype, "triangular")
    shape = _bshape("triangular", shape, left, mode, right)
    lo, md, hi = (ops.broadcast_to(_param(v), shape) for v in (left, mode, right))
    fc = (md - lo) / (hi - lo)
    u = _leaf(_uniform01(key, shape, "triangular"))
    out1 = lo + ops.sqrt(u * (hi - lo) * (md - lo))
    out2 = hi - ops.sqrt((1.0 - u) * (hi - lo) * (hi - md))
    return ops.where(ops.lt(u, fc), out1, out2)


def wald(key: Any, mean: Any, shape: Any = None, dtype: Any = None) -> Tensor:
    """Wald (inverse Gaussian) of unit scale: JAX's transform of a normal
    and a uniform from the two halves of the key."""
    _float_dtype(dtype, "wald")
    shape = _bshape("wald", shape, mean)
    k1, k2 = _split_np(_words_np(key, "wald"))
    m = ops.broadcast_to(_param(mean), shape)
    v = normal(k1, shape)
    z = _leaf(_uniform01(k2, shape, "wald"))
    y = v * v
    y_sq = y * y
    mean_sq = m * m
    sqrt_term = ops.sqrt(m * 4.0 * y + mean_sq * y_sq)
    x = m + mean_sq * y / 2.0 - m / 2.0 * sqrt_term
    return ops.where(ops.le(z, m / (m + x)), x, mean_sq / x)


def geometric(key: Any, p: Any, shape: Any = None, dtype: Any = None) -> Tensor:
    """Trials to the first success: ``floor(log u / log1p(-p)) + 1`` (int32)."""
    d = int32 if dtype is None else to_dtype(dtype)
    if d.is_floating_point or d.is_bool:
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {d.name}")
    shape = _bshape("geometric", shape, p)
    u = _uniform01(key, shape, "geometric")
    u = np.where(u == 0, _F32(1), u)
    pv = np.broadcast_to(_value(p), shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.floor(np.log(u) / np.log1p(-pv)).astype(_F32) + _F32(1)
    return _leaf(g.astype(d.np))


def maxwell(key: Any, shape: Sequence[int] | int = (), dtype: Any = None) -> Tensor:
    """The norm of three standard normals."""
    _float_dtype(dtype, "maxwell")
    n = normal(key, (*_shape(shape), 3))
    return ops.sqrt(ops.sum(n * n, (-1,)))


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Sequence[int] | int = (),
                         dtype: Any = None) -> Tensor:
    """A Maxwell draw with a random sign, scaled and shifted (JAX's keys)."""
    _float_dtype(dtype, "double_sided_maxwell")
    pshape = np.broadcast_shapes(*(tuple(np.shape(v)) if not isinstance(v, Tensor)
                                   else tuple(v.shape) for v in (loc, scale)))
    shape = _shape(shape) or tuple(pshape)
    shape = shape + tuple(pshape)
    mk, rk = _split_np(_words_np(key, "double_sided_maxwell"))
    sign = rademacher(rk, shape, float32)
    return sign * maxwell(mk, shape) * _param(scale) + _param(loc)


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None,
           axis: int = 0, mode: str | None = None) -> Tensor:
    """``shape`` draws from ``a`` (an int n: ``arange(n)``; an array: along
    ``axis``), with or without replacement, uniform or with probabilities
    ``p`` (JAX's: randint; a permutation's prefix; inverse CDF by searchsorted
    of the cumulated ``p``; the Gumbel top-k)."""
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    if mode not in (None, "low"):
        raise NotImplementedError(f"random.choice(mode={mode!r}) is not supported")
    arr = a if isinstance(a, Tensor) else ops.as_tensor_arg(canonical_host(a))
    if arr.ndim == 0:
        n_inputs = int(arr.item())
    else:
        axis = int(axis) % arr.ndim
        n_inputs = arr.shape[axis]
    shape = _shape(shape)
    n_draws = math.prod(shape)
    if n_draws == 0:
        return _leaf(np.zeros(shape, arr.dtype.np))
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs).numpy().astype(np.int64)
        else:
            ind = _shuffled_positions(key, n_inputs)[:n_draws]
    else:
        pv = _value(p)
        if pv.shape != (n_inputs,):
            raise ValueError(f"p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {pv.shape} and a.shape[axis] is "
                             f"{n_inputs}.")
        if replace:
            p_cuml = np.cumsum(pv, dtype=_F32)
            r = (p_cuml[-1] * (_F32(1) - _uniform01(key, shape, "choice"))).astype(_F32)
            ind = np.searchsorted(p_cuml, r, side="left").astype(np.int64)
        else:
            g = _gumbel_np(key, (n_inputs,)) + np.log(pv)
            ind = np.argsort(-g, kind="stable")[:n_draws]
    if arr.ndim == 0:
        return _leaf(ind.reshape(shape).astype(np.int32))
    picked = index_select(arr, axis, _leaf(ind.reshape(-1)))
    return ops.reshape(picked, (*arr.shape[:axis], *shape, *arr.shape[axis + 1:]))


def _gumbel_np(key: Any, shape: tuple[int, ...]) -> np.ndarray:
    u = _uniform_np(key, shape, float(np.finfo(_F32).tiny), 1.0, "gumbel")
    return (-np.log(-np.log(u))).astype(_F32)


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Any = None, dtype: Any = None,
                        method: str = "cholesky") -> Tensor:
    """``mean + factor @ n`` of standard normals ``n`` (shape ``shape + (n,)``),
    ``factor`` the Cholesky factor of ``cov`` (or ``u sqrt(s)`` of its SVD,
    ``v sqrt(w)`` of its eigh); the gradient flows to ``mean`` and ``cov``."""
    from . import linalg as _linalg  # (pf.linalg sits beside: imported when drawn)
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    _float_dtype(dtype, "multivariate_normal")
    m, c = _param(mean), _param(cov)
    if m.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{m.ndim}")
    if c.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{c.ndim}")
    n = m.shape[-1]
    if tuple(c.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {tuple(c.shape)}.")
    batch = np.broadcast_shapes(tuple(m.shape[:-1]), tuple(c.shape[:-2]))
    shape = tuple(batch) if shape is None else _shape(shape)
    if np.broadcast_shapes(shape, tuple(batch)) != shape:
        raise ValueError(f"multivariate_normal: shape {shape} must hold the batch shape "
                         f"{tuple(batch)}")
    if method == "svd":
        u, s, _ = _linalg.svd(c)
        factor = u * ops.unsqueeze(ops.sqrt(s), -2)
    elif method == "eigh":
        w, v = _linalg.eigh(c)
        factor = v * ops.unsqueeze(ops.sqrt(w), -2)
    else:
        factor = _linalg.cholesky(c)
    z = normal(key, (*shape, n))
    return m + ops.matmul(factor, ops.unsqueeze(z, -1))[..., 0]


def orthogonal(key: Any, n: int, shape: Sequence[int] | int = (), dtype: Any = None,
               m: int | None = None) -> Tensor:
    """A Haar-random orthogonal (``n x m``: orthonormal columns or rows)
    matrix: the Q of a normal matrix's QR, columns signed by R's diagonal."""
    from . import linalg as _linalg
    _float_dtype(dtype, "orthogonal")
    n = int(n)
    m_ = n if m is None else int(m)
    z = normal(key, (*_shape(shape), builtins_max(n, m_), builtins_min(n, m_)))
    q, r = _linalg.qr(z)
    d = ops.sign(_linalg.diagonal(r))
    x = q * ops.unsqueeze(d, -2)
    return ops.swapaxes(x, -1, -2) if n < m_ else x


builtins_max, builtins_min = max, min


# ---- gamma and the samplers on it (JAX's Marsaglia-Tsang loop, per element) ----

def _split_keys(keys: np.ndarray, num: int) -> np.ndarray:
    """``split(k, num)`` of each key of ``keys`` (N, 2): (N, num, 2)."""
    b1, b2 = _threefry2x32(keys[:, :1], keys[:, 1:], np.zeros(num, np.uint32),
                           np.arange(num, dtype=np.uint32))
    return np.stack([b1, b2], axis=-1)


def _uniform01_keys(keys: np.ndarray) -> np.ndarray:
    """One scalar uniform in [0, 1) from each key of ``keys`` (N, 2)."""
    b1, b2 = _threefry2x32(keys[:, 0], keys[:, 1], np.uint32(0), np.uint32(0))
    words = ((b1 ^ b2) >> np.uint32(9)) | np.uint32(0x3F800000)
    return words.view(np.float32) - np.float32(1.0)


def _normal_keys(keys: np.ndarray) -> np.ndarray:
    lo = np.nextafter(_F32(-1.0), _F32(0.0))
    return (_SQRT2 * _erfinv_np(_scale_uniform(_uniform01_keys(keys), lo, 1.0))).astype(_F32)


def _gamma_keys(keys: np.ndarray, alpha: np.ndarray, log_space: bool) -> np.ndarray:
    """JAX's ``_gamma_one`` for each (key, alpha), as its vmap runs it: the
    Marsaglia-Tsang loop (boosted by ``u ** (1/alpha)`` below 1), every
    element splitting its own key until it accepts."""
    one, zero = _F32(1), _F32(0)
    alpha = alpha.astype(_F32)
    boost = alpha >= one
    d = (np.where(boost, alpha, alpha + one) - _F32(1.0 / 3.0)).astype(_F32)
    c = (_F32(1.0 / 3.0) / np.sqrt(d)).astype(_F32)
    first = _split_keys(keys, 2)
    key, subkey = first[:, 0].copy(), first[:, 1]
    n = alpha.shape[0]
    x2, v3, u = np.zeros(n, _F32), np.ones(n, _F32), np.full(n, _F32(2))

    def going(i: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return (u[i] >= one - _F32(0.0331) * (x2[i] * x2[i])) & \
                (np.log(u[i]) >= x2[i] * _F32(0.5) + d[i] * ((one - v3[i]) + np.log(v3[i])))

    active = going(np.arange(n))
    while np.any(active):
        idx = np.flatnonzero(active)
        s3 = _split_keys(key[idx], 3)
        key[idx] = s3[:, 0]
        xk, uk = s3[:, 1].copy(), s3[:, 2]
        x = np.zeros(idx.size, _F32)
        v = np.full(idx.size, _F32(-1))
        inner = np.ones(idx.size, bool)
        while np.any(inner):
            j = np.flatnonzero(inner)
            s2 = _split_keys(xk[j], 2)
            xk[j] = s2[:, 0]
            x[j] = _normal_keys(s2[:, 1])
            v[j] = (one + x[j] * c[idx[j]]).astype(_F32)
            inner[j] = v[j] <= zero
        x2[idx] = x * x
        v3[idx] = (v * v) * v
        u[idx] = _uniform01_keys(uk)
        active[idx] = going(idx)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if log_space:
            log_samples = np.log1p(-_uniform01_keys(subkey)).astype(_F32)  # -exponential
            log_boost = np.where(boost | (log_samples == zero), zero,
                                 log_samples * (one / alpha)).astype(_F32)
            return ((np.log(d) + np.log(v3)) + log_boost).astype(_F32)
        samples = (one - _uniform01_keys(subkey)).astype(_F32)
        b = np.where(boost, one, np.power(samples, one / alpha)).astype(_F32)
        return ((d * v3) * b).astype(_F32)


def _gamma_np(key: Any, a: Any, shape: Any, log_space: bool, what: str) -> np.ndarray:
    av = _value(a)
    shape = tuple(av.shape) if shape is None else _shape(shape)
    if np.broadcast_shapes(shape, av.shape) != shape:
        raise ValueError(f"{what}: shape {shape} must hold a's shape {av.shape}")
    alphas = np.broadcast_to(av, shape).reshape(-1)
    if alphas.size == 0:
        return np.zeros(shape, _F32)
    keys = _split_np(_words_np(key, what), alphas.size)
    return _gamma_keys(keys, alphas, log_space).reshape(shape)


_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)


def _lgamma64(x: np.ndarray) -> np.ndarray:
    """log Gamma(x) for x > 0 in float64 (Lanczos, g = 7; below 1/2 by
    Gamma(x) = Gamma(x + 1) / x): about 1e-15 relative, so its float32
    rounding is math.lgamma's."""
    x = np.asarray(x, np.float64)
    small = x < 0.5
    xs = np.where(small, x + 1.0, x)
    z = xs - 1.0
    acc = np.full_like(z, _LANCZOS[0])
    for i, c in enumerate(_LANCZOS[1:], start=1):
        acc = acc + c / (z + i)
    t = z + 7.5
    out = 0.5 * math.log(2 * math.pi) + (z + 0.5) * np.log(t) - t + np.log(acc)
    return np.where(small, out - np.log(np.where(small, x, 1.0)), out)


def _digamma64(x: np.ndarray) -> np.ndarray:
    """digamma for x > 0 (recurrence up to 6, then the asymptotic series)."""
    x = np.array(x, np.float64)
    out = np.zeros_like(x)
    for _ in range(6):
        small = x < 6
        out = np.where(small, out - 1.0 / np.where(small, x, 1.0), out)
        x = np.where(small, x + 1.0, x)
    f = 1.0 / (x * x)
    return out + np.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (
        1 / 240 - f / 132))))


_EPS32 = float(np.finfo(np.float32).eps)


def _gamma_sample_grad(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """d sample / d a of a Gamma(a, 1) sample ``x`` (JAX's
    ``random_gamma_grad``: the derivative of the regularized incomplete gamma
    by its series or continued fraction, over the density), in float64
    with float32's stopping tolerance."""
    a64, x64 = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    a64, x64 = a64.copy(), x64.copy()
    is_nan = np.isnan(a64) | np.isnan(x64)
    x_zero = x64 == 0
    domain = (x64 < 0) | (a64 <= 0)
    use_cf = (x64 > 1) & (x64 > a64)
    safe_a = np.where(domain | is_nan, 1.0, a64)
    safe_x = np.where(domain | is_nan | x_zero, 1.0, x64)
    lg = _lgamma64(safe_a)
    ax = safe_a * np.log(safe_x) - safe_x - lg
    underflow = ax < -np.log(np.finfo(np.float32).max)
    enabled = ~(x_zero | domain | underflow | is_nan)
    with np.errstate(all="ignore"):
        series = _igamma_series_grad(safe_a, safe_x, enabled & ~use_cf)
        frac = _igammac_cf_grad(safe_a, safe_x, enabled & use_cf)
    out = np.where(use_cf, -frac, series)
    out = np.where(x_zero, 0.0, out)
    return np.where(domain | is_nan, np.nan, out)


def _igamma_series_grad(a: np.ndarray, x: np.ndarray, enabled: np.ndarray) -> np.ndarray:
    r, c, ans = a.copy(), np.ones_like(a), np.ones_like(a)
    dc_da, dans_da = np.zeros_like(a), np.zeros_like(a)
    while np.any(enabled):
        r2 = r + 1
        dc2 = dc_da * (x / r2) - (c * x) / (r2 * r2)
        dans2 = dans_da + dc2
        c2 = c * (x / r2)
        ans2 = ans + c2
        nxt = enabled & (np.abs(dc2 / dans2) > _EPS32)
        r, dc_da, dans_da = (np.where(enabled, new, old) for new, old in
                             ((r2, r), (dc2, dc_da), (dans2, dans_da)))
        c, ans = np.where(enabled, c2, c), np.where(enabled, ans2, ans)
        enabled = nxt
    dlogax_da = np.log(x) - _digamma64(a + 1)
    return -(dans_da + ans * dlogax_da) * x / a


def _igammac_cf_grad(a: np.ndarray, x: np.ndarray, enabled: np.ndarray) -> np.ndarray:
    y = 1 - a
    z = x + y + 1
    pkm2, qkm2 = np.ones_like(x), x.copy()
    pkm1, qkm1 = x + 1, z * x
    ans = pkm1 / qkm1
    dpkm2, dqkm2, dpkm1, dqkm1 = (np.zeros_like(x), np.zeros_like(x), np.zeros_like(x), -x)
    dans = (dpkm1 - ans * dqkm1) / qkm1
    c = 0
    while c < 2000 and np.any(enabled):
        c += 1
        y2, z2 = y + 1, z + 2
        yc = y2 * c
        pk = pkm1 * z2 - pkm2 * yc
        qk = qkm1 * z2 - qkm2 * yc
        nz = qk != 0
        r = pk / np.where(nz, qk, 1.0)
        ans2 = np.where(nz, r, ans)
        dpk = dpkm1 * z2 - pkm1 - dpkm2 * yc + pkm2 * c
        dqk = dqkm1 * z2 - qkm1 - dqkm2 * yc + qkm2 * c
        dans2 = np.where(nz, (dpk - ans2 * dqk) / np.where(nz, qk, 1.0), dans)
        grad_cond = np.where(nz, np.abs(dans2 - dans), 1.0)
        npkm2, nqkm2, npkm1, nqkm1 = pkm1, qkm1, pk, qk
        ndpkm2, ndqkm2, ndpkm1, ndqkm1 = dpkm1, dqkm1, dpk, dqk
        rescale = np.abs(pk) > 1.0 / _EPS32
        scale = np.where(rescale, _EPS32, 1.0)
        npkm2, npkm1, nqkm2, nqkm1 = npkm2 * scale, npkm1 * scale, nqkm2 * scale, nqkm1 * scale
        ndpkm2, ndqkm2 = ndpkm2 * scale, ndqkm2 * scale
        ndpkm1, ndqkm1 = ndpkm1 * scale, ndqkm1 * scale
        nxt = enabled & (grad_cond > _EPS32)
        sel = enabled
        ans, y, z = np.where(sel, ans2, ans), np.where(sel, y2, y), np.where(sel, z2, z)
        pkm1, qkm1 = np.where(sel, npkm1, pkm1), np.where(sel, nqkm1, qkm1)
        pkm2, qkm2 = np.where(sel, npkm2, pkm2), np.where(sel, nqkm2, qkm2)
        dpkm2, dqkm2 = np.where(sel, ndpkm2, dpkm2), np.where(sel, ndqkm2, dqkm2)
        dpkm1, dqkm1 = np.where(sel, ndpkm1, dpkm1), np.where(sel, ndqkm1, dqkm1)
        dans = np.where(sel, dans2, dans)
        enabled = nxt
    dlogax_da = np.log(x) - _digamma64(a)
    return -(dans + ans * dlogax_da) * x


class _GammaFns:
    """The draws as custom functions of the concentration: the backward is
    JAX's implicit reparameterization gradient (``random_gamma_grad``) times
    the cotangent; a second derivative raises (the gradient's own
    derivative is not implemented), never a silent zero."""

    draw: Any = None
    const: Any = None

    @classmethod
    def get(cls) -> tuple[Any, Any]:
        if cls.draw is None:
            from .autograd import Function

            class GammaGradConstant(Function):
                @staticmethod
                def forward(ctx: Any, a: Tensor, value: Tensor) -> Tensor:
                    return value.clone()

                @staticmethod
                def backward(ctx: Any, g: Tensor) -> Any:
                    raise NotImplementedError(
                        "random.gamma: the second derivative in the concentration (the "
                        "derivative of JAX's random_gamma_grad) is not implemented")

            class GammaDraw(Function):
                @staticmethod
                def forward(ctx: Any, a: Tensor, sample: Tensor, log_space: bool) -> Tensor:
                    ctx.save_for_backward(a, sample)
                    ctx.log_space = log_space
                    return sample.clone()

                @staticmethod
                def backward(ctx: Any, g: Tensor) -> Any:
                    a, sample = ctx.saved_tensors
                    av, sv = a.numpy().astype(np.float64), sample.numpy().astype(np.float64)
                    if ctx.log_space:
                        sv = np.exp(sv)
                        sv = np.where(sv == 0, np.finfo(np.float32).tiny, sv)
                        d = _gamma_sample_grad(av, sv) / sv
                    else:
                        d = _gamma_sample_grad(av, sv)
                    dt = GammaGradConstant.apply(a, _leaf(d.astype(np.float32)))
                    return g * dt, None, None

            cls.draw, cls.const = GammaDraw, GammaGradConstant
        return cls.draw, cls.const


def _attach(a: Any, sample: np.ndarray, log_space: bool) -> Tensor:
    """The host draw as a tensor; when ``a`` is a float tensor, a function
    of it whose derivative is JAX's implicit reparameterization gradient."""
    out = _leaf(sample)
    if isinstance(a, Tensor) and a.dtype.is_floating_point:
        a_full = a if tuple(a.shape) == sample.shape else ops.broadcast_to(a, sample.shape)
        return _GammaFns.get()[0].apply(a_full.to(float32), out, log_space)
    return out


def gamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Tensor:
    """Gamma(a, 1) draws, JAX's values: ``split(key, a.size)`` and one
    Marsaglia-Tsang loop per element (float32; see the module's note on
    last-bit rounding). The gradient in ``a`` is JAX's implicit
    reparameterization (a second derivative raises)."""
    _float_dtype(dtype, "gamma")
    return _attach(a, _gamma_np(key, a, shape, False, "gamma"), False)


def loggamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Tensor:
    """log of Gamma(a, 1) draws computed in log space (accurate for small a)."""
    _float_dtype(dtype, "loggamma")
    return _attach(a, _gamma_np(key, a, shape, True, "loggamma"), True)


def beta(key: Any, a: Any, b: Any, shape: Any = None, dtype: Any = None) -> Tensor:
    """Beta(a, b): two log-gamma draws (the key's two halves), normalized."""
    _float_dtype(dtype, "beta")
    shape = _bshape("beta", shape, a, b)
    ka, kb = _split_np(_words_np(key, "beta"))
    la = loggamma(ka, ops.broadcast_to(_param(a), shape) if isinstance(a, Tensor)
                  else np.broadcast_to(_value(a), shape), shape)
    lb = loggamma(kb, ops.broadcast_to(_param(b), shape) if isinstance(b, Tensor)
                  else np.broadcast_to(_value(b), shape), shape)
    log_max = ops.maximum(la, lb)
    ga, gb = ops.exp(la - log_max), ops.exp(lb - log_max)
    return ga / (ga + gb)


def dirichlet(key: Any, alpha: Any, shape: Any = None, dtype: Any = None) -> Tensor:
    """Dirichlet(alpha): the softmax of log-gamma draws over the last axis."""
    _float_dtype(dtype, "dirichlet")
    av = _value(alpha)
    if av.ndim < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {av.ndim}")
    shape = av.shape[:-1] if shape is None else _shape(shape)
    full = (*shape, av.shape[-1])
    lg = loggamma(key, alpha if isinstance(alpha, Tensor) else av, full)
    return ops.softmax(lg, -1)


def t(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Tensor:
    """Student's t: ``n sqrt((df/2) / g)``, ``n`` normal and ``g`` Gamma(df/2)."""
    _float_dtype(dtype, "t")
    shape = _bshape("t", shape, df)
    kn, kg = _split_np(_words_np(key, "t"))
    n = normal(kn, shape)
    half_df = _param(df) / 2.0
    g = gamma(kg, half_df if isinstance(df, Tensor) else _value(df) / _F32(2), shape)
    return n * ops.sqrt(half_df / g)


def chisquare(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Tensor:
    """Chi-square: ``2 exp(loggamma(df/2))``."""
    _float_dtype(dtype, "chisquare")
    shape = _bshape("chisquare", shape, df)
    half = _param(df) / 2.0 if isinstance(df, Tensor) else _value(df) / _F32(2)
    return ops.exp(loggamma(key, half, shape)) * 2.0


def f(key: Any, dfnum: Any, dfden: Any, shape: Any = None, dtype: Any = None) -> Tensor:
    """F: the ratio of two chi-squares over their degrees of freedom."""
    _float_dtype(dtype, "f")
    shape = _bshape("f", shape, dfnum, dfden)
    k_den, k_num = _split_np(_words_np(key, "f"))
    num = chisquare(k_num, dfnum, shape) / _param(dfnum)
    den = chisquare(k_den, dfden, shape) / _param(dfden)
    return num / den


def generalized_normal(key: Any, p: float, shape: Sequence[int] | int = (),
                       dtype: Any = None) -> Tensor:
    """Generalized normal of power ``p``: ``r g ** (1/p)``, ``g`` Gamma(1/p)
    and ``r`` a random sign."""
    _float_dtype(dtype, "generalized_normal")
    shape = _shape(shape)
    k0, k1 = _split_np(_words_np(key, "generalized_normal"))
    g = gamma(k0, np.float32(1) / np.float32(p), shape)
    r = rademacher(k1, shape, float32)
    return r * ops.pow(g, float(np.float32(1) / np.float32(p)))


def ball(key: Any, d: int, p: float = 2, shape: Sequence[int] | int = (),
         dtype: Any = None) -> Tensor:
    """A uniform point in the unit ``p``-ball of dimension ``d``."""
    _float_dtype(dtype, "ball")
    shape = _shape(shape)
    k1, k2 = _split_np(_words_np(key, "ball"))
    g = generalized_normal(k1, p, (*shape, int(d)))
    e = exponential(k2, shape)
    inv_p = float(np.float32(1) / np.float32(p))
    norm = ops.pow(ops.sum(ops.pow(ops.abs(g), float(p)), (-1,)) + e, inv_p)
    return g / ops.unsqueeze(norm, -1)


def poisson(key: Any, lam: Any, shape: Any = None, dtype: Any = None) -> Tensor:
    """Poisson(lam) counts (int32), JAX's values: Knuth's product of uniforms
    below lam 10, the transformed rejection (PTRS) above, both run on the
    same key over the whole array as JAX runs them."""
    d = int32 if dtype is None else to_dtype(dtype)
    if d is not int32:
        raise NotImplementedError(f"random.poisson: dtype {d.name} (int32 only)")
    shape = _bshape("poisson", shape, lam)
    lam_v = np.broadcast_to(_value(lam), shape).astype(_F32)
    words = _words_np(key, "poisson")
    use_knuth = np.isnan(lam_v) | (lam_v < 10)
    lam_knuth = np.where(use_knuth, lam_v, _F32(0)).astype(_F32)
    lam_rej = np.where(use_knuth, _F32(1e5), lam_v).astype(_F32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        result = np.where(use_knuth, _poisson_knuth(words, lam_knuth, shape),
                          _poisson_rejection(words, lam_rej, shape))
    return _leaf(np.where(lam_v == 0, 0, result).astype(np.int32))


def _poisson_knuth(words: np.ndarray, lam: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    k = np.zeros(shape, np.int64)
    log_prod = np.zeros(shape, _F32)
    rng = words
    while np.any(log_prod > -lam):
        rng, sub = _split_np(rng)
        k = np.where(log_prod > -lam, k + 1, k)
        u = _uniform01(sub, shape, "poisson")
        log_prod = (log_prod + np.log(u)).astype(_F32)
    return k - 1


def _poisson_rejection(words: np.ndarray, lam: np.ndarray, shape: tuple[int, ...]
                       ) -> np.ndarray:
    log_lam = np.log(lam)
    b = (_F32(0.931) + _F32(2.53) * np.sqrt(lam)).astype(_F32)
    a = (_F32(-0.059) + _F32(0.02483) * b).astype(_F32)
    inv_alpha = (_F32(1.1239) + _F32(1.1328) / (b - _F32(3.4))).astype(_F32)
    v_r = (_F32(0.9277) - _F32(3.6224) / (b - _F32(2))).astype(_F32)
    k_out = np.full(shape, _F32(-1))
    accepted = np.zeros(shape, bool)
    key = words
    while not np.all(accepted):
        key, s0, s1 = _split_np(key, 3)
        u = (_uniform01(s0, shape, "poisson") - _F32(0.5)).astype(_F32)
        v = _uniform01(s1, shape, "poisson")
        u_shifted = (_F32(0.5) - np.abs(u)).astype(_F32)
        k = np.floor((_F32(2) * a / u_shifted + b) * u + lam + _F32(0.43)).astype(_F32)
        s = np.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b)).astype(_F32)
        with np.errstate(invalid="ignore", divide="ignore"):
            lg = np.where(k >= 0, _lgamma64(np.maximum(k, 0).astype(np.float64) + 1.0), np.inf)
        tt = (-lam + k * log_lam - lg.astype(_F32)).astype(_F32)
        accept1 = (u_shifted >= _F32(0.07)) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < _F32(0.013)) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= tt))
        k_out = np.where(accept, k, k_out)
        accepted |= accept
    return k_out.astype(np.int64)


def clone(key: Any) -> Tensor:
    """A copy of the key (JAX's clone: keys here are plain values)."""
    return key.clone() if isinstance(key, Tensor) else key_data(key)


# ---- binomial and multinomial (JAX's inversion and BTRS loops) ----

_STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                           0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                           0.0118967099458917, 0.010411265261972, 0.00925546218271273,
                           0.00833056343336287], np.float32)


def _stirling_tail(k: np.ndarray) -> np.ndarray:
    use_table = k <= 9
    kc = np.clip(k, _F32(0), _F32(9)).astype(_F32)
    kp1sq = ((kc + _F32(1)) * (kc + _F32(1))).astype(_F32)
    approx = ((_F32(1.0 / 12) - (_F32(1.0 / 360) - _F32(1.0 / 1260) / kp1sq) / kp1sq)
              / (kc + _F32(1))).astype(_F32)
    return np.where(use_table, _STIRLING_TAIL[np.floor(kc).astype(np.int64)], approx)


def _binomial_inversion(words: np.ndarray, count: np.ndarray, prob: np.ndarray,
                        shape: tuple[int, ...]) -> np.ndarray:
    log1mp = np.log1p(-prob).astype(_F32)
    num_geom = np.zeros(shape, _F32)
    geom_sum = np.zeros(shape, _F32)
    key = words
    while np.any(geom_sum <= count):
        sub, key = _split_np(key)  # (JAX's order here: the subkey first)
        num_geom = np.where(geom_sum <= count, num_geom + _F32(1), num_geom).astype(_F32)
        u = _uniform01(sub, shape, "binomial")
        geom = np.ceil(np.log(u) / log1mp).astype(_F32)
        geom_sum = (geom_sum + geom).astype(_F32)
    return (num_geom - _F32(1)).astype(_F32)


def _btrs(words: np.ndarray, count: np.ndarray, prob: np.ndarray, shape: tuple[int, ...]
          ) -> np.ndarray:
    one, half = _F32(1), _F32(0.5)
    stddev = np.sqrt(count * prob * (one - prob)).astype(_F32)
    b = (_F32(1.15) + _F32(2.53) * stddev).astype(_F32)
    a = (_F32(-0.0873) + _F32(0.0248) * b + _F32(0.01) * prob).astype(_F32)
    c = (count * prob + half).astype(_F32)
    v_r = (_F32(0.92) - _F32(4.2) / b).astype(_F32)
    r = (prob / (one - prob)).astype(_F32)
    alpha = ((_F32(2.83) + _F32(5.1) / b) * stddev).astype(_F32)
    m = np.floor((count + one) * prob).astype(_F32)
    k_out = np.full(shape, _F32(-1))
    accepted = np.zeros(shape, bool)
    key = words
    while not np.all(accepted):
        key, s0, s1 = _split_np(key, 3)
        u = (_uniform01(s0, shape, "binomial") - half).astype(_F32)
        v = _uniform01(s1, shape, "binomial")
        us = (half - np.abs(u)).astype(_F32)
        accept1 = (us >= _F32(0.07)) & (v <= v_r)
        k = np.floor((_F32(2) * a / us + b) * u + c).astype(_F32)
        reject = (k < 0) | (k > count)
        v = np.log(v * alpha / (a / (us * us) + b)).astype(_F32)
        ub = ((m + half) * np.log((m + one) / (r * (count - m + one)))
              + (count + one) * np.log((count - m + one) / (count - k + one))
              + (k + half) * np.log(r * (count - k + one) / (k + one))
              + _stirling_tail(m) + _stirling_tail(count - m)
              - _stirling_tail(k) - _stirling_tail(count - k)).astype(_F32)
        accept = accept1 | (~reject & (v <= ub))
        k_out = np.where(accept, k, k_out)
        accepted |= accept
    return k_out


def _binomial_np(words: np.ndarray, count: np.ndarray, prob: np.ndarray,
                 shape: tuple[int, ...]) -> np.ndarray:
    count = np.broadcast_to(count, shape).astype(_F32)
    prob = np.broadcast_to(prob, shape).astype(_F32)
    p_lt_half = prob < _F32(0.5)
    q = np.where(p_lt_half, prob, _F32(1) - prob).astype(_F32)
    count_nan_or_neg = np.isnan(count) | (count < 0)
    count_inf = np.isinf(count)
    q_nan, q_neg = np.isnan(q), q < 0
    q = np.where(q_nan | q_neg, _F32(0.01), q).astype(_F32)
    use_inv = count_nan_or_neg | (count * q <= _F32(10))
    count = np.floor(count)
    count_inv = np.where(use_inv, count, _F32(0)).astype(_F32)
    count_btrs = np.where(use_inv, _F32(10000), count).astype(_F32)
    q_btrs = np.where(use_inv, _F32(0.5), q).astype(_F32)
    samples = np.where(use_inv, _binomial_inversion(words, count_inv, q, shape),
                       _btrs(words, count_btrs, q_btrs, shape)).astype(_F32)
    invalid = q_neg | q_nan | count_nan_or_neg
    samples = np.where(invalid, _F32(np.nan), samples)
    samples = np.where(count_inf & ~invalid, _F32(np.inf), samples)
    keep = p_lt_half | count_nan_or_neg | q_nan | count_inf
    return np.where(keep, samples, count - samples).astype(_F32)


def binomial(key: Any, n: Any, p: Any, shape: Any = None, dtype: Any = None) -> Tensor:
    """Binomial(n, p) counts (float32), JAX's algorithm: inversion by
    geometric sums where ``n min(p, 1-p) <= 10``, BTRS rejection elsewhere,
    both run on the same key over the whole array (see the module's note on
    last-bit rounding: JAX's BTRS placeholders for the inversion elements
    make mixed arrays the most sensitive)."""
    _float_dtype(dtype, "binomial")
    shape = _bshape("binomial", shape, n, p)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = _binomial_np(_words_np(key, "binomial"), _value(n), _value(p), shape)
    return _leaf(out)


def multinomial(key: Any, n: Any, p: Any, *, shape: Any = None, dtype: Any = None,
                unroll: int | bool = 1) -> Tensor:
    """Multinomial counts over ``p``'s last axis: a binomial per category on
    the remainder (one key per category, JAX's stick-breaking scan)."""
    _float_dtype(dtype, "multinomial")
    pv = _value(p)
    shape = pv.shape if shape is None else _shape(shape)
    remainder = np.broadcast_to(_value(n), shape[:-1]).astype(_F32)
    pv = np.moveaxis(np.broadcast_to(pv, shape), -1, 0).astype(_F32)
    remaining = np.zeros_like(pv)
    acc = np.zeros(pv.shape[1:], _F32)
    for i in range(pv.shape[0] - 1, -1, -1):
        acc = (acc + pv[i]).astype(_F32)
        remaining[i] = acc
    ratios = (pv / np.where(remaining == 0, _F32(1), remaining)).astype(_F32)
    keys = _split_np(_words_np(key, "multinomial"), pv.shape[0])
    counts = []
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for ratio, k in zip(ratios, keys):
            cnt = _binomial_np(k, remainder, np.clip(ratio, 0, 1), tuple(remainder.shape))
            remainder = (remainder - cnt).astype(_F32)
            counts.append(cnt)
    return _leaf(np.ascontiguousarray(np.moveaxis(np.stack(counts), 0, -1)))


# ---- jax_enable_x64: JAX's draws then depend on 64-bit defaults ----

_KEYS_ONLY = ("PRNGKey", "key", "key_data", "wrap_key_data", "split", "fold_in", "clone",
              "uniform", "normal", "randint", "bernoulli")  # (these draw 64-bit values too)
_NARROW = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint32),
           np.dtype(np.float16), np.dtype(np.int16), np.dtype(np.int8), np.dtype(np.uint8))


def _x64_guarded(name: str, f: Any) -> Any:
    """``f`` raising under ``jax_enable_x64`` unless given a 32-bit (or narrower)
    ``dtype``: JAX then draws 64-bit words for its float64/int64 defaults (and
    for weakly typed float parameters), values pyflame does not produce."""
    params = inspect.signature(f).parameters

    @functools.wraps(f)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if _config.jax_enable_x64 and not _INSIDE[0]:  # (a sampler's own draws pass)
            dtype = kwargs.get("dtype")
            if dtype is None and "dtype" in params:
                pos = list(params).index("dtype")
                dtype = args[pos] if pos < len(args) else None
            narrow = dtype is not None and \
                np.dtype(getattr(to_dtype(dtype), "np", np.float64)) in _NARROW
            if not narrow:
                raise NotImplementedError(
                    f"pf.random.{name} under jax_enable_x64: JAX draws 64-bit values "
                    "there (its default dtypes are float64/int64); pyflame draws JAX's "
                    "32-bit values only"
                    + (": pass dtype=pf.numpy.float32 (or int32), which JAX draws alike in "
                       "both modes" if "dtype" in params else
                       ": draw it with jax_enable_x64 off"))
        _INSIDE[0] += 1
        try:
            return f(*args, **kwargs)
        finally:
            _INSIDE[0] -= 1
    return guarded


_INSIDE = [0]


for _name in __all__:
    if _name not in _KEYS_ONLY:
        globals()[_name] = _x64_guarded(_name, globals()[_name])

