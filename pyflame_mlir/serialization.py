"""``pf.save`` / ``pf.load``: checkpoints in the ``safetensors`` format, never
pickle. A nested structure (a model's state dict, an optimizer's state dict
with its int keys and hyperparameters, lists and tuples) is written as the
tensors plus a JSON description of the structure in the file's metadata
(``"pyflame"``); a flat dict of tensors keeps its names as the tensor names,
so other safetensors readers (``safetensors.torch.load_file``) read it too.
A file that is truncated, corrupted or not safetensors raises ``ValueError``
naming the file.

``pf.load`` also reads what ``torch.save`` writes (its zip format), without
torch and as ``torch.load(weights_only=True)`` does: only tensors,
parameters, containers and plain values are unpickled; any other class in
the file is refused by name.

In-memory copies follow torch (issue 14): ``pickle.dumps(t)`` stores the
value (a lazy tensor is computed first) and ``requires_grad`` (the copy is a
leaf; ``.grad`` is not kept), so modules and optimizers pickle;
``copy.deepcopy(t)`` shares the value (recorded ops never change) and copies
``.grad``; a non-leaf that requires grad refuses deepcopy, as torch's."""

from __future__ import annotations

import copy
import io
import json
import math
import os
import pickle
import struct
import zipfile
from collections import OrderedDict
from typing import IO, Any

import numpy as np
import safetensors

from .core import Size, Tensor, realize
from .dialects.dtypes import (
    DType,
    bfloat16,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from .nn.module import Parameter, _host_value

__all__ = ["load", "save"]

_FORMAT = "pyflame"  # metadata key of the structure
_VERSION = 1
_CODES: dict[DType, str] = {float64: "F64", float32: "F32", float16: "F16", bfloat16: "BF16",
                            int64: "I64", int32: "I32", int16: "I16", int8: "I8", uint8: "U8",
                            bool_: "BOOL"}
_SPEC_NAMES: dict[DType, str] = {d: d.name for d in _CODES}
_DTYPES = {code: dt for dt, code in _CODES.items()}


class _Writer:
    """Walks an object: tensors get names, the rest becomes JSON."""

    def __init__(self) -> None:
        self.tensors: dict[str, Tensor] = {}
        self._names: dict[int, str] = {}

    def tensor_name(self, t: Tensor, path: str) -> str:
        name = self._names.get(id(t))
        if name is None:  # the same object twice (a tied weight) is stored once
            name = path or "tensor"
            k = 1
            while name in self.tensors:
                name, k = f"{path}#{k}", k + 1
            self.tensors[name] = t
            self._names[id(t)] = name
        return name

    def encode(self, obj: Any, path: str) -> Any:
        if isinstance(obj, Tensor):  # torch keeps a Parameter's class and requires_grad
            node: dict[str, Any] = {"tensor": self.tensor_name(obj, path)}
            if isinstance(obj, Parameter):
                node["parameter"] = bool(obj.requires_grad)
            elif obj.requires_grad:
                node["requires_grad"] = True
            return node
        if isinstance(obj, Size):
            return {"size": list(obj)}
        if obj is None or isinstance(obj, bool | int | str):
            return obj
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"float": repr(obj)}
        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                if not isinstance(k, str | int) or isinstance(k, bool):
                    raise TypeError(f"pf.save: dict key {k!r} at {path or 'the top'} is not a "
                                    "str or int")
                items.append([k, self.encode(v, f"{path}.{k}" if path else str(k))])
            return {"dict": items, "ordered": isinstance(obj, OrderedDict)}
        if isinstance(obj, list | tuple):
            enc = [self.encode(v, f"{path}.{i}" if path else str(i)) for i, v in enumerate(obj)]
            return {"tuple": enc} if isinstance(obj, tuple) else {"list": enc}
        if hasattr(obj, "detach") and hasattr(obj, "cpu"):  # a torch tensor
            return self.encode(_host_value(obj), path)
        hint = " (save its state_dict() instead)" if hasattr(obj, "state_dict") else ""
        raise TypeError(f"pf.save: cannot save a {type(obj).__module__}.{type(obj).__qualname__}"
                        f" at {path or 'the top'}{hint} (tensors, numbers, strings, None, and "
                        "dicts, lists and tuples of them are saved; nothing is pickled)")


def save(obj: Any, f: str | os.PathLike | IO[bytes]) -> None:
    """Save tensors (and nested dicts/lists/tuples of tensors and plain
    values) to ``f`` in the safetensors format; lazy tensors are computed
    first, in one graph."""
    w = _Writer()
    tree = w.encode(obj, "")
    lazy = [t for t in w.tensors.values() if t._node is not None]
    if lazy:
        realize(lazy)
    arrays: dict[str, np.ndarray] = {}
    specs = {}
    for name, t in w.tensors.items():
        if t.dtype not in _CODES:
            raise TypeError(f"pf.save: dtype {t.dtype.name} of {name!r} is not supported")
        a = t.numpy()
        if not a.flags.c_contiguous:  # (not ascontiguousarray: it makes 0-d arrays 1-d)
            a = a.copy(order="C")
        if a.dtype.byteorder == ">":
            a = a.byteswap().view(a.dtype.newbyteorder("<"))
        arrays[name] = a  # alive until serialize returns
        specs[name] = safetensors.TensorSpec(dtype=_SPEC_NAMES[t.dtype], shape=list(a.shape),
                                             data_ptr=a.ctypes.data, data_len=a.nbytes)
    meta = {_FORMAT: json.dumps({"version": _VERSION, "tree": tree})}
    data = bytes(safetensors.serialize(specs, metadata=meta))
    del arrays
    if hasattr(f, "write"):
        f.write(data)
        return
    path = os.fspath(f)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as out:
        out.write(data)
    os.replace(tmp, path)  # a crash mid-write never leaves a truncated checkpoint


def _bad(where: str, why: str) -> ValueError:
    return ValueError(f"pf.load: {where} is not a valid safetensors checkpoint: {why}")


def load(f: str | os.PathLike | IO[bytes], map_location: Any = None, *,
         weights_only: bool | None = None, **pickle_load_args: Any) -> Any:
    """Load what ``save`` wrote, any safetensors file (a dict of tensors) or
    what ``torch.save`` wrote (tensors, containers and plain values only, as
    ``torch.load(weights_only=True)``: the only way this library reads it).
    ``map_location`` and ``weights_only`` are torch's arguments: everything
    loads to the host, and nothing but weights is ever unpickled, whatever
    ``weights_only`` says (checkpoint loaders pass False for files that hold
    weights only; a file with other objects raises, naming the class)."""
    del weights_only
    if pickle_load_args:
        raise TypeError(f"pf.load got unexpected arguments {sorted(pickle_load_args)}")
    del map_location  # one device: the host
    if hasattr(f, "read"):
        data, where = f.read(), getattr(f, "name", repr(f))
    else:
        where = os.fspath(f)
        with open(where, "rb") as src:
            data = src.read()
    if len(data) < 8:
        raise _bad(where, f"the file has {len(data)} bytes (truncated?)")
    if data[:4] == b"PK\x03\x04":  # a zip: torch.save's format
        return _load_torch(data, where)
    if data[:2] in (b"\x80\x02", b"\x80\x04", b"\x80\x05"):
        raise ValueError(f"pf.load: {where} is a plain pickle (torch.save before PyTorch 1.6, "
                         "or pickle.dump): not read, since unpickling can run any code. "
                         "Re-save it with a current torch.save, or as safetensors")
    try:
        entries = safetensors.deserialize(data)
        (n,) = struct.unpack("<Q", data[:8])
        header = json.loads(data[8:8 + n])
    except Exception as e:  # noqa: BLE001  (SafetensorError, JSON, UTF-8: all mean corrupt)
        raise _bad(where, str(e)) from None
    tensors: dict[str, Tensor] = {}
    for name, info in entries:
        dt = _DTYPES.get(info["dtype"])
        if dt is None:
            raise _bad(where, f"tensor {name!r} has dtype {info['dtype']}, which pyflame "
                       "does not support")
        arr = np.frombuffer(info["data"], dtype=dt.np).reshape(info["shape"]).copy()
        tensors[name] = Tensor._leaf(arr)
    meta = header.get("__metadata__") or {}
    if _FORMAT not in meta:
        return dict(tensors)
    try:
        desc = json.loads(meta[_FORMAT])
        if desc.get("version") != _VERSION:
            raise ValueError(f"format version {desc.get('version')}, expected {_VERSION}")
        return _decode(desc["tree"], tensors)
    except (ValueError, KeyError, TypeError) as e:
        raise _bad(where, f"bad structure metadata ({e})") from None


# ---- torch.save's zip format, read as torch.load(weights_only=True) ----

_TORCH_STORAGES: dict[str, DType] = {
    "FloatStorage": float32, "DoubleStorage": float64, "HalfStorage": float16,
    "BFloat16Storage": bfloat16, "LongStorage": int64, "IntStorage": int32,
    "ShortStorage": int16, "CharStorage": int8, "ByteStorage": uint8, "BoolStorage": bool_}
_TORCH_DTYPES: dict[str, DType] = {
    "float32": float32, "float64": float64, "float16": float16, "bfloat16": bfloat16,
    "int64": int64, "int32": int32, "int16": int16, "int8": int8, "uint8": uint8, "bool": bool_}


class _StorageType:
    """What a ``torch.FloatStorage`` global unpickles to: its dtype."""

    def __init__(self, dtype: DType):
        self.dtype = dtype


def _rebuild_tensor_v2(storage: np.ndarray, offset: int, size: tuple, stride: tuple,
                       requires_grad: bool, backward_hooks: Any = None,
                       metadata: Any = None) -> Tensor:
    del backward_hooks, metadata
    size, stride = tuple(size), tuple(stride)
    need = offset + sum((n - 1) * st for n, st in zip(size, stride)) + 1 if all(size) else 0
    if offset < 0 or any(st < 0 for st in stride) or need > storage.size:
        raise ValueError(f"a tensor of size {list(size)}, stride {list(stride)} and offset "
                         f"{offset} does not fit its storage of {storage.size} elements")
    view = np.lib.stride_tricks.as_strided(storage[offset:], size,
                                           tuple(st * storage.itemsize for st in stride))
    t = Tensor._leaf(np.array(view, copy=True))
    return t.requires_grad_(True) if requires_grad and t.dtype.is_floating_point else t


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any = None,
                       *state: Any) -> Parameter:
    del backward_hooks, state
    return Parameter(data.detach(), requires_grad)


class _TorchUnpickler(pickle.Unpickler):
    _ALLOWED: dict[tuple[str, str], Any] = {
        ("collections", "OrderedDict"): OrderedDict,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
        ("torch", "Size"): Size,
        ("builtins", "set"): set, ("builtins", "frozenset"): frozenset,
        ("builtins", "slice"): slice, ("builtins", "complex"): complex,
    }

    def __init__(self, data: bytes, archive: zipfile.ZipFile, prefix: str, where: str):
        super().__init__(io.BytesIO(data))
        self.archive, self.prefix, self.where = archive, prefix, where
        self.storages: dict[str, np.ndarray] = {}

    def find_class(self, module: str, name: str) -> Any:
        found = self._ALLOWED.get((module, name))
        if found is not None:
            return found
        if module == "torch" and name in _TORCH_STORAGES:
            return _StorageType(_TORCH_STORAGES[name])
        if module == "torch" and name in _TORCH_DTYPES:
            return _TORCH_DTYPES[name]
        raise pickle.UnpicklingError(
            f"pf.load: {self.where}: the checkpoint holds a {module}.{name}, which is not read "
            "(only tensors, parameters, containers and plain values are, as "
            "torch.load(weights_only=True))")

    def persistent_load(self, pid: Any) -> np.ndarray:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType)):
            raise pickle.UnpicklingError(f"pf.load: {self.where}: unknown storage record "
                                         f"{str(pid)[:80]}")
        _, kind, key, _location, numel = pid
        got = self.storages.get(key)
        if got is None:
            raw = self.archive.read(f"{self.prefix}data/{key}")
            if len(raw) < numel * kind.dtype.itemsize:
                raise ValueError(f"storage {key} has {len(raw)} bytes, expected "
                                 f"{numel * kind.dtype.itemsize}")
            got = self.storages[key] = np.frombuffer(raw, dtype=kind.dtype.np, count=numel)
        return got


def _load_torch(data: bytes, where: str) -> Any:
    """A ``torch.save`` file: its ``data.pkl`` unpickled with the allowed
    classes only, each storage read from ``data/<key>`` of the zip."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        pkl = [n for n in archive.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pkl) != 1:
            raise ValueError("no data.pkl (not a torch.save file)")
        prefix = pkl[0][:-len("data.pkl")]
        if prefix + "byteorder" in archive.namelist() and \
                archive.read(prefix + "byteorder").strip() != b"little":
            raise ValueError("big-endian tensors are not supported")
        return _TorchUnpickler(archive.read(pkl[0]), archive, prefix, where).load()
    except pickle.UnpicklingError as e:
        if str(e).startswith("pf.load:"):
            raise ValueError(str(e)) from None
        raise ValueError(f"pf.load: {where} is not a valid torch checkpoint: {e}") from None
    except Exception as e:  # noqa: BLE001  (a damaged zip or pickle raises many kinds)
        raise ValueError(f"pf.load: {where} is not a valid torch checkpoint: "
                         f"{type(e).__name__}: {e}") from None


def _decode(node: Any, tensors: dict[str, Tensor], made: dict[str, Tensor] | None = None) -> Any:
    made = {} if made is None else made  # a saved name -> its loaded object (ties kept)
    if node is None or isinstance(node, bool | int | float | str):
        return node
    if not isinstance(node, dict) or len(node) not in (1, 2):
        raise ValueError(f"unexpected node {str(node)[:80]}")
    if "tensor" in node:
        name = node["tensor"]
        if name not in tensors:
            raise KeyError(f"tensor {name!r} is missing")
        got = made.get(name)
        if got is None:
            got = tensors[name]
            if "parameter" in node:
                got = Parameter(got, bool(node["parameter"]))
            elif node.get("requires_grad") and got.dtype.is_floating_point:
                got = got.requires_grad_(True)
            made[name] = got
        return got
    if "float" in node:
        return float(node["float"])
    if "size" in node:
        return Size(int(n) for n in node["size"])
    if "list" in node:
        return [_decode(v, tensors, made) for v in node["list"]]
    if "tuple" in node:
        return tuple(_decode(v, tensors, made) for v in node["tuple"])
    if "dict" in node:
        out = OrderedDict() if node.get("ordered") else {}
        for k, v in node["dict"]:
            out[k] = _decode(v, tensors, made)
        return out
    raise ValueError(f"unexpected node {str(node)[:80]}")


# ---- pickle and deepcopy of tensors (torch's semantics; see the module docstring) ----

def _rebuild_tensor(value: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._leaf(value)
    return t.requires_grad_(True) if requires_grad else t


def _tensor_reduce_ex(self: Tensor, protocol: Any) -> Any:
    del protocol
    value = np.array(self.numpy(), copy=True)  # computes a lazy tensor
    return (_rebuild_tensor, (value, bool(self.requires_grad)))


def _tensor_deepcopy(self: Tensor, memo: dict) -> Tensor:
    if self.requires_grad and not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                           "the deepcopy protocol at the moment (deepcopy of a tensor computed "
                           "from one that requires grad; .detach() it first)")
    # a new tensor of the same state, not a view (``detach`` would share later
    # in-place updates): a value is copied, a promise shared (its ops never change)
    out = Tensor._leaf(np.array(self._value, copy=True), self.dtype) if self._node is None \
        else Tensor._promise(self._node, self._index, self.shape, self.dtype)
    if self.requires_grad:
        out.requires_grad_(True)
    if self.grad is not None:
        out.grad = copy.deepcopy(self.grad, memo)
    memo[id(self)] = out
    return out


for _name, _fn in (("__reduce_ex__", _tensor_reduce_ex), ("__deepcopy__", _tensor_deepcopy)):
    setattr(Tensor, _name, _fn)
