"""The promise tensor: shape and dtype at once, a value when one is needed."""

from __future__ import annotations

from typing import Any

import numpy as np

from .dialects.dtypes import DType
from .dialects.dtypes import dtype as to_dtype
from .graph import OpNode, evaluate


class _Size(int):
    """``t.size`` is the element count (numpy, JAX) and ``t.size()`` /
    ``t.size(dim)`` give the shape (PyTorch): both spellings work."""

    _shape: tuple[int, ...]

    def __new__(cls, shape: tuple[int, ...]) -> _Size:
        n = 1
        for d in shape:
            n *= d
        self = super().__new__(cls, n)
        self._shape = shape
        return self

    def __call__(self, dim: int | None = None) -> tuple[int, ...] | int:
        return self._shape if dim is None else self._shape[dim]


class Tensor:
    """A lazy tensor. Either a *promise* (``_node`` is the op that will make
    it) or *realized* (``_value`` holds a numpy array and it is a leaf)."""

    __slots__ = ("shape", "dtype", "_node", "_index", "_value", "_ag", "__weakref__")
    __array_priority__ = 1000  # numpy defers to our reflected operators

    shape: tuple[int, ...]
    dtype: DType

    @classmethod
    def _promise(cls, node: OpNode, index: int, shape: tuple[int, ...], dt: DType) -> Tensor:
        t = object.__new__(cls)
        t.shape, t.dtype, t._node, t._index, t._value, t._ag = shape, dt, node, index, None, None
        return t

    @classmethod
    def _leaf(cls, value: np.ndarray) -> Tensor:
        t = object.__new__(cls)
        t.shape, t.dtype = value.shape, to_dtype(value.dtype)
        t._node, t._index, t._value, t._ag = None, 0, value, None
        return t

    def _realize(self, value: np.ndarray) -> None:
        assert value.shape == self.shape and value.dtype == self.dtype.np, (
            f"internal error: executor produced {value.shape} {value.dtype} for "
            f"{self.shape} {self.dtype.name}")
        self._value = value
        self._node = None  # drop the recorded history: this is a leaf now

    # ---- metadata (never evaluates) ----
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> _Size:
        return _Size(self.shape)

    def numel(self) -> int:
        return int(self.size)

    def dim(self) -> int:
        return len(self.shape)

    @property
    def is_lazy(self) -> bool:
        return self._node is not None

    @property
    def T(self) -> Tensor:
        return ops.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    # ---- materialization ----
    def eval(self) -> Tensor:
        evaluate([self])
        return self

    def numpy(self) -> np.ndarray:
        if self._node is not None:
            evaluate([self])
        return self._value

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        v = self.numpy()
        if dtype is not None and np.dtype(dtype) != v.dtype:
            return v.astype(dtype)
        return v.copy() if copy else v

    def item(self) -> float | int | bool:
        if self.numel() != 1:
            raise ValueError(f"item(): a Tensor with {self.numel()} elements cannot be "
                             "converted to a Python scalar")
        return self.numpy().reshape(-1)[0].item()

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.category != 1 or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self.numel()} elements is "
                               "ambiguous")
        return bool(self.item())

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        body = np.array2string(self.numpy(), separator=", ", prefix="tensor(",
                               threshold=1000, edgeitems=3, precision=4)
        suffix = "" if self.dtype.name in ("float32", "int64", "bool") else \
            f", dtype=pyflame.{self.dtype.name}"
        return f"tensor({body}{suffix})"

    __str__ = __repr__
    __hash__ = object.__hash__

    # ---- autograd (PyTorch semantics; see autodiff.py) ----
    @property
    def requires_grad(self) -> bool:
        return autodiff.requires_grad(self)

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        autodiff.set_requires_grad(self, flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        ag = self._ag
        if self._node is None and (ag is None or not ag.detached) and requires_grad \
                and self.dtype.is_floating_point:  # a value: always a leaf
            if ag is None:
                ag = self._ag = autodiff.AutogradMeta()
            ag.requires_grad = True
            return self
        autodiff.set_requires_grad(self, requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return autodiff.is_leaf(self)

    @property
    def grad(self) -> Tensor | None:
        ag = self._ag
        return None if ag is None else ag.grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        autodiff.set_grad(self, value)

    def retain_grad(self) -> None:
        autodiff.retain_grad(self)

    def detach(self) -> Tensor:
        return autodiff.detach(self)

    def backward(self, gradient: Any = None, retain_graph: bool | None = None,
                 create_graph: bool = False) -> None:
        autodiff.backward(self, gradient, create_graph=create_graph)

    # ---- conversion ----
    def astype(self, dt: Any) -> Tensor:
        return ops.convert(self, to_dtype(dt))

    def to(self, dt: Any) -> Tensor:
        return self.astype(dt)

    def float(self) -> Tensor:
        return self.astype("float32")

    def double(self) -> Tensor:
        return self.astype("float64")

    def half(self) -> Tensor:
        return self.astype("float16")

    def int(self) -> Tensor:
        return self.astype("int32")

    def long(self) -> Tensor:
        return self.astype("int64")

    def bool(self) -> Tensor:
        return self.astype("bool")

    # ---- operators ----
    def __add__(self, o): return ops.add(self, o)
    def __radd__(self, o): return ops.add(o, self)
    def __sub__(self, o): return ops.sub(self, o)
    def __rsub__(self, o): return ops.sub(o, self)
    def __mul__(self, o): return ops.mul(self, o)
    def __rmul__(self, o): return ops.mul(o, self)
    def __truediv__(self, o): return ops.div(self, o)
    def __rtruediv__(self, o): return ops.div(o, self)
    def __pow__(self, o): return ops.pow(self, o)
    def __rpow__(self, o): return ops.pow(o, self)
    def __matmul__(self, o): return ops.matmul(self, o)
    def __rmatmul__(self, o): return ops.matmul(o, self)
    def __neg__(self): return ops.neg(self)
    def __pos__(self): return self
    def __abs__(self): return ops.abs(self)
    def __invert__(self): return ops.logical_not(self)
    def __and__(self, o): return ops.logical_and(self, o)
    def __or__(self, o): return ops.logical_or(self, o)
    def __eq__(self, o): return ops.eq(self, o)  # type: ignore[override]
    def __ne__(self, o): return ops.ne(self, o)  # type: ignore[override]
    def __lt__(self, o): return ops.lt(self, o)
    def __le__(self, o): return ops.le(self, o)
    def __gt__(self, o): return ops.gt(self, o)
    def __ge__(self, o): return ops.ge(self, o)
    def __getitem__(self, index): return ops.getitem(self, index)

    def __setitem__(self, index, value):
        raise TypeError("pyflame tensors are immutable: build a new tensor instead "
                        "(e.g. pf.where(mask, value, t) or pf.cat)")


from . import autodiff, ops  # noqa: E402, I001  (they need the Tensor class above)
from . import graph as _graph  # noqa: E402

_graph.Tensor_ = Tensor
ops.Tensor_ = Tensor


def _attach_methods() -> None:
    """Ops that are also methods (``x.relu()``, ``x.sum(1)``) share one definition."""
    for name in ops.METHODS:
        setattr(Tensor, name, getattr(ops, name))


_attach_methods()
