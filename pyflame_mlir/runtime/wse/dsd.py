"""Data structure descriptors: values, mutators and element access.

A memory DSD is a view description over one array's flat storage; reading or
writing it is one numpy indexing call. `mem1d_dsd` is always affine after
flattening (`offset + stride * i`), so it keeps (offset, stride, length) and
the mutators edit those; `mem4d_dsd` keeps an index array built once from its
`tensor_access` map. Fabric DSDs name a color, a queue and an extent.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

import numpy as np
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)

from .errors import ArchRuleError, DsdBoundsError, ProgramError

# a DSD's length fields are u16 on both archs (CSL_NOTES, "DSD fields")
DSD_LENGTH_MAX = 0xFFFF


def check_length(kind: str, sizes: list[int]) -> None:
    """cslc's rule: every length of a DSD (a mem1d/fabric extent, a mem4d loop) fits a
    u16; a negative one is no length at all."""
    for n in sizes:
        if not 0 <= n <= DSD_LENGTH_MAX:
            raise ArchRuleError(f"{kind} length {n} does not fit the DSD's u16 length field "
                                f"(0-{DSD_LENGTH_MAX})")


@dataclass(frozen=True, slots=True)
class MemDsd:
    """`mem1d_dsd`: elements buf[offset + stride * i] for i < length."""

    buf: np.ndarray  # flat view of the base array
    offset: int
    stride: int
    length: int
    kind = "mem1d_dsd"

    def index(self) -> slice | np.ndarray:
        last = self.offset + self.stride * (self.length - 1)
        if self.length and not (0 <= self.offset < self.buf.size and 0 <= last < self.buf.size):
            raise DsdBoundsError(
                f"mem1d_dsd reaches outside its {self.buf.size}-element array "
                f"(offset {self.offset}, stride {self.stride}, length {self.length})"
            )
        if self.stride == 0:
            return np.full(self.length, self.offset)
        stop = last + (1 if self.stride > 0 else -1)
        return slice(self.offset, None if stop < 0 else stop, self.stride)

    @property
    def unit_stride(self) -> bool:
        return self.stride == 1


@dataclass(frozen=True, slots=True)
class Mem4dDsd:
    """`mem4d_dsd`: up to four loops; `idx` holds the flat element indices in loop order."""

    buf: np.ndarray
    idx: np.ndarray
    offset: int = 0
    kind = "mem4d_dsd"

    @property
    def length(self) -> int:
        return int(self.idx.size)

    def index(self) -> np.ndarray:
        idx = self.idx + self.offset
        if idx.size and (idx.min() < 0 or idx.max() >= self.buf.size):
            raise DsdBoundsError(f"mem4d_dsd reaches outside its {self.buf.size}-element array")
        return idx

    @property
    def unit_stride(self) -> bool:
        return bool(self.idx.size < 2 or np.all(np.diff(self.idx) == 1))


@dataclass(frozen=True, slots=True)
class FabDsd:
    """`fabin_dsd` / `fabout_dsd`: `length` wavelets on `color` through `queue`."""

    kind: str
    color: int
    length: int
    queue: int
    control: bool = False  # a fabout DSD sending control wavelets (`.control = true`)


Dsd = MemDsd | Mem4dDsd | FabDsd


@dataclass(eq=False, slots=True)
class Dsr:
    """A data structure register of one PE: the DSD `@load_to_dsr` put in it, the
    completion action that load named, and whether an operation has used it since."""

    kind: str  # dest, src0 or src1
    id: int
    dsd: Dsd | None = None
    then: object = None  # the load's #csl_ext.async, or None
    used: bool = False
    save: bool | None = None  # the load's .save_address (None: not said)

    def __str__(self) -> str:
        return f"dsr_{self.kind} {self.id}"


def _flat_index(shape: tuple[int, ...], amap: AffineMap, sizes: list[int]) -> np.ndarray:
    if len(amap.results) != len(shape):
        raise ProgramError(
            f"tensor_access {amap} yields {len(amap.results)} indices for a {len(shape)}-D array"
        )
    grid = list(np.indices(sizes, dtype=np.int64)) if sizes else []
    flat = np.zeros(sizes, np.int64)
    for expr, stride in zip(amap.results, np.cumprod((1, *shape[:0:-1]))[::-1]):
        flat = flat + np.asarray(expr.eval(grid, []), np.int64) * int(stride)
    return flat.reshape(-1)


@cache
def _linear(amap: AffineMap) -> bool:
    """Every result is a sum of constants and constant multiples of dims (no mod, no
    division, no symbol): two points give a one-index access's offset and stride."""

    def lin(e: AffineExpr) -> bool:
        if isinstance(e, AffineBinaryOpExpr):
            if e.kind == AffineBinaryOpKind.Add:
                return lin(e.lhs) and lin(e.rhs)
            constant = isinstance(e.lhs, AffineConstantExpr) or isinstance(
                e.rhs, AffineConstantExpr)
            return e.kind == AffineBinaryOpKind.Mul and constant and lin(e.lhs) and lin(e.rhs)
        return isinstance(e, AffineDimExpr | AffineConstantExpr)

    return all(lin(e) for e in amap.results)


def make_mem_dsd(kind: str, base: np.ndarray, sizes: list[int], amap: AffineMap | None) -> Dsd:
    check_length(kind, sizes)
    amap = amap or AffineMap.identity(len(sizes))
    if kind == "mem1d_dsd" and len(sizes) == 1 and _linear(amap):
        # affine by construction: its first two elements are all it takes
        flat = _flat_index(base.shape, amap, [min(sizes[0], 2)])
        return MemDsd(base.reshape(-1), int(flat[0]) if flat.size else 0,
                      int(flat[1] - flat[0]) if flat.size > 1 else 1, sizes[0])
    flat = _flat_index(base.shape, amap, sizes)
    buf = base.reshape(-1)
    if kind == "mem1d_dsd":
        offset = int(flat[0]) if flat.size else 0
        stride = int(flat[1] - flat[0]) if flat.size > 1 else 1
        if flat.size > 2 and np.any(np.diff(flat) != stride):
            raise ProgramError(f"mem1d_dsd access {amap} is not affine in its one index")
        return MemDsd(buf, offset, stride, sizes[0])
    return Mem4dDsd(buf, flat)


# --- mutators: each returns a new DSD, like the CSL builtins -----------------


def increment_offset(dsd: Dsd, delta: int, elem_bytes: int) -> Dsd:
    if isinstance(dsd, FabDsd):
        raise ProgramError("@increment_dsd_offset needs a memory DSD, got a fabric DSD")
    # the offset is counted in elements of the named type; convert to the array's elements
    delta = delta * elem_bytes // dsd.buf.itemsize
    return replace(dsd, offset=dsd.offset + delta)


def set_length(dsd: Dsd, length: int) -> Dsd:
    if isinstance(dsd, Mem4dDsd):
        raise ProgramError("@set_dsd_length needs a one-dimensional DSD, got a mem4d_dsd")
    return replace(dsd, length=length)


def set_stride(dsd: Dsd, stride: int) -> Dsd:
    if not isinstance(dsd, MemDsd):
        raise ProgramError("@set_dsd_stride needs a mem1d_dsd")
    return replace(dsd, stride=stride)


def set_base_addr(dsd: Dsd, base: np.ndarray) -> Dsd:
    if isinstance(dsd, FabDsd):
        raise ProgramError("@set_dsd_base_addr needs a memory DSD, got a fabric DSD")
    return replace(dsd, buf=base.reshape(-1))


# --- aliasing ------------------------------------------------------------------------


_ALIAS_CACHE: dict[tuple[int, int], tuple[object, object, bool]] = {}


def order_dependent(dest: MemDsd | Mem4dDsd, src: MemDsd | Mem4dDsd) -> bool:
    """`_order_dependent`, remembered per pair of DSD values (a loop reuses the same
    ones; the entry keeps both alive, so their ids stay theirs)."""
    if dest is src and isinstance(dest, MemDsd) and dest.stride != 0:
        return False  # in place, the same positions: the common case, decided at once
    key = (id(dest), id(src))
    hit = _ALIAS_CACHE.get(key)
    if hit is not None and hit[0] is dest and hit[1] is src:
        return hit[2]
    if len(_ALIAS_CACHE) > 4096:
        _ALIAS_CACHE.clear()
    result = _order_dependent(dest, src)
    _ALIAS_CACHE[key] = (dest, src, result)
    return result


def element_addrs(arr: np.ndarray, index: object) -> np.ndarray:
    """The byte address of each element of ``arr[index]``, in its order."""
    ptr = arr.__array_interface__["data"][0]
    if isinstance(index, tuple) and len(index) == arr.ndim and \
            all(isinstance(i, int | np.integer) for i in index):  # one element (a store)
        return np.array([ptr + sum(int(i) % n * s for i, n, s in
                                   zip(index, arr.shape, arr.strides))], np.int64)
    offs = np.zeros(arr.shape, np.int64)
    for axis, stride in enumerate(arr.strides):
        shape = [1] * arr.ndim
        shape[axis] = arr.shape[axis]
        offs = offs + np.arange(arr.shape[axis], dtype=np.int64).reshape(shape) * stride
    return (ptr + offs[index]).reshape(-1)


def _order_dependent(dest: MemDsd | Mem4dDsd, src: MemDsd | Mem4dDsd) -> bool:
    """Does element j of `src` read memory that an earlier element i < j of `dest`
    writes? Then the op's result depends on how far the DSD pipeline reads ahead of its
    writes (a sequential loop sees the new value, a read-ahead the old one), which is
    not documented; the simulator reads every source first. The same elementwise
    positions (``y = y + x`` in place) and reads ahead of the writes (``a[i] = a[i+1]``)
    are safe."""
    n = min(dest.length, src.length)
    if n < 2 or not np.may_share_memory(dest.buf, src.buf):
        return False
    if isinstance(dest, MemDsd) and isinstance(src, MemDsd) and \
            dest.buf.dtype == src.buf.dtype and dest.buf.ctypes.data == src.buf.ctypes.data:
        if dest.stride == src.stride and dest.stride != 0:
            # src[j] = dest[j + k] with k = (src.offset - dest.offset) / stride: only a
            # read behind the writes (k < 0 with an exact multiple) depends on order
            k, r = divmod(src.offset - dest.offset, dest.stride)
            return r == 0 and -n < k < 0
    daddr = element_addrs(dest.buf, dest.index())[:n]
    saddr = element_addrs(src.buf, src.index())[:n]
    size = max(dest.buf.itemsize, src.buf.itemsize)
    first = {}
    for i, a in enumerate(daddr.tolist()):
        for b in range(a - size + 1, a + size):  # byte ranges that overlap
            first.setdefault(b, i)
    return any(first.get(a, n) < j for j, a in enumerate(saddr.tolist()))


# --- element access --------------------------------------------------------------


def _typed(buf: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if buf.dtype == dtype:
        return buf
    if buf.dtype.itemsize == dtype.itemsize:  # same width: reinterpret (u16 vs i16, ...)
        return buf.view(dtype)
    raise ProgramError(f"DSD over {buf.dtype} memory used as {dtype} by a DSD builtin")


def read(dsd: MemDsd | Mem4dDsd, dtype: np.dtype) -> np.ndarray:
    return _typed(dsd.buf, dtype)[dsd.index()]


def write(dsd: MemDsd | Mem4dDsd, values: np.ndarray) -> None:
    _typed(dsd.buf, values.dtype)[dsd.index()] = values
