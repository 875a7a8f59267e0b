"""torch's top-level names that scripts call and pf lacked (issue 14's scan of
``torch.*``): process settings (threads, matmul precision, determinism,
print options, the default device), dtype queries, window functions, and the
top-level spellings of ``torch.nn.functional`` ops (``torch.conv2d``,
``torch.layer_norm``, ``torch.relu_``...) with torch's argument orders.

Settings pf has no use for are kept and reported back as torch does, never
silently changing a result: the reference backend computes float32 matmuls
in float32 whatever the precision asked for (torch's CPU does too), and pf's
kernels are deterministic."""

from __future__ import annotations

import math
import sys
import warnings
from typing import Any

import numpy as np

from . import composites3, core, special, torch_compat2
from . import fft as fft  # noqa: PLC0414  (pf.fft, torch.fft's names: session 11)
from .core import Tensor
from .creation import tensor as _tensor
from .dialects.dtypes import TORCH_TYPE_NAMES, DType, default_float
from .dialects.dtypes import can_cast as _can_cast
from .dialects.dtypes import dtype as to_dtype
from .linalg import TOP_LEVEL as _LINALG_TOP_LEVEL
from .linalg import matrix_norm, multi_dot
from .nn import functional as F  # noqa: N812  (torch's spelling)
from .ops import device

__all__ = [
    "are_deterministic_algorithms_enabled", "bartlett_window", "blackman_window", "can_cast",
    "chain_matmul", "frobenius_norm", "get_default_device", "get_deterministic_debug_mode",
    "get_float32_matmul_precision", "get_num_interop_threads", "get_num_threads",
    "hamming_window", "hann_window", "is_deterministic_algorithms_warn_only_enabled",
    "is_same_size", "is_storage", "is_warn_always_enabled", "kaiser_window", "nuclear_norm",
    "scalar_tensor", "set_default_device", "set_deterministic_debug_mode",
    "set_float32_matmul_precision", "set_num_interop_threads", "set_num_threads",
    "set_printoptions", "set_warn_always", "typename", "use_deterministic_algorithms",
    "alpha_dropout", "feature_alpha_dropout", "feature_dropout",
]

# ---- process settings ----

_SETTINGS: dict[str, Any] = {"threads": 1, "interop_threads": 1, "matmul_precision": "highest",
                             "deterministic": False, "warn_only": False, "warn_always": False}


def set_num_threads(num: int) -> None:
    """Kept and reported by ``get_num_threads`` (numpy's BLAS picks its own threads)."""
    if not isinstance(num, int) or num <= 0:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {num!r}")
    _SETTINGS["threads"] = num


def get_num_threads() -> int:
    return _SETTINGS["threads"]


def set_num_interop_threads(num: int) -> None:
    if not isinstance(num, int) or num <= 0:
        raise RuntimeError(f"set_num_interop_threads expects a positive integer, got {num!r}")
    _SETTINGS["interop_threads"] = num


def get_num_interop_threads() -> int:
    return _SETTINGS["interop_threads"]


def set_float32_matmul_precision(precision: str) -> None:
    """'highest', 'high' or 'medium' (torch's); float32 matmuls stay float32 here."""
    if precision not in ("highest", "high", "medium"):  # torch warns and keeps its setting
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the "
                      "set_float32_matmul_precision call has no effect.", stacklevel=2)
        return
    _SETTINGS["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return _SETTINGS["matmul_precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """pf's kernels are deterministic: the flag is kept, as torch reports it."""
    _SETTINGS["deterministic"], _SETTINGS["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _SETTINGS["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _SETTINGS["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    mode = _DEBUG_MODES.get(debug_mode, debug_mode) if isinstance(debug_mode, str) \
        else debug_mode
    if mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected one of 'default', 'warn', "
                           f"'error' or 0, 1, 2, got {debug_mode!r}")
    use_deterministic_algorithms(mode > 0, warn_only=mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _SETTINGS["deterministic"]:
        return 0
    return 1 if _SETTINGS["warn_only"] else 2


def set_warn_always(b: bool) -> None:
    _SETTINGS["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    return _SETTINGS["warn_always"]


_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, sys.maxsize, 3, 80)}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """torch's print options for ``repr(tensor)``: a ``profile`` ('default',
    'short', 'full') first, then the given fields; ``sci_mode`` True or False
    forces or suppresses scientific notation, None lets the values decide."""
    opts = core.PRINT_OPTIONS
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}")
        p, t, e, w = _PROFILES[profile]
        opts.update(precision=p, threshold=t, edgeitems=e, linewidth=w)
    for key, value in (("precision", precision), ("threshold", threshold),
                       ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            opts[key] = sys.maxsize if value == math.inf else value
    opts["sci_mode"] = sci_mode  # (torch: each call sets it, None included)


# ---- devices, dtypes, types ----

def set_default_device(device: Any) -> None:
    """Only the CPU exists here: None or 'cpu'; another device raises."""
    if device is not None and str(device).split(":")[0] != "cpu":
        raise RuntimeError(f"set_default_device: pyflame runs on the cpu only, got {device!r}")


def get_default_device() -> Any:
    return device("cpu")


def can_cast(from_: Any, to: Any) -> bool:
    """torch's rule: no float to integer/bool, no non-bool to bool."""
    return _can_cast(to_dtype(from_), to_dtype(to))


def typename(obj: Any) -> str:
    """``torch.typename``: 'torch.FloatTensor' style names for tensors."""
    if isinstance(obj, Tensor):
        return f"torch.{TORCH_TYPE_NAMES[obj.dtype]}Tensor"
    module = type(obj).__module__
    return type(obj).__qualname__ if module in ("builtins", None) else \
        f"{module}.{type(obj).__qualname__}"


# ---- PyTorch's legacy constructors: torch.Tensor(data or sizes), torch.FloatTensor... ----

def _legacy_tensor(dt: DType, what: str, args: tuple) -> Tensor:
    """``torch.Tensor(*sizes)`` (zeros here: torch leaves them uninitialized),
    ``torch.Tensor(data)`` (a copy of a sequence or array, as ``dt``),
    ``torch.Tensor(tensor)`` (the same tensor; of ``dt`` only)."""
    if not args:
        return _tensor(np.empty((0,), dt.np))
    if len(args) == 1 and isinstance(args[0], Tensor):
        if args[0].dtype is not dt:
            raise TypeError(f"{what}(): expected {TORCH_TYPE_NAMES[dt]} but got "
                            f"{TORCH_TYPE_NAMES[args[0].dtype]} (use .to(dtype))")
        return args[0]
    sizes = args[0] if len(args) == 1 and isinstance(args[0], core.Size) else args
    if all(isinstance(a, int | np.integer) and not isinstance(a, bool) for a in sizes):
        if any(a < 0 for a in sizes):
            raise RuntimeError(f"{what}(): negative dimension in {list(sizes)}")
        return _tensor(np.zeros(tuple(int(a) for a in sizes), dt.np))
    if len(args) != 1 or isinstance(args[0], float | bool):
        raise TypeError(f"{what}(): expected sizes (ints) or one sequence of data, got "
                        f"{', '.join(type(a).__name__ for a in args)}")
    return _tensor(args[0], dtype=dt)


def _tensor_new(cls: type, *args: Any, **kwargs: Any) -> Tensor:
    if kwargs.keys() - {"device"}:
        raise TypeError(f"Tensor() got unexpected keyword arguments {sorted(kwargs)}")
    return _legacy_tensor(default_float(), "Tensor", args)


Tensor.__new__ = _tensor_new  # type: ignore[method-assign]  (pf.Tensor(...) as torch.Tensor)


class _LegacyType(type):
    """``pf.FloatTensor([1, 2])`` makes a float32 tensor; ``isinstance(x,
    pf.FloatTensor)`` holds for a float32 tensor (PyTorch's legacy types)."""

    legacy_dtype: DType

    def __call__(cls, *args: Any, **kwargs: Any) -> Tensor:  # type: ignore[override]
        if kwargs.keys() - {"device"}:
            raise TypeError(f"{cls.__name__}() got unexpected keyword arguments {sorted(kwargs)}")
        return _legacy_tensor(cls.legacy_dtype, cls.__name__, args)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.legacy_dtype


for _dt, _name in TORCH_TYPE_NAMES.items():
    globals()[f"{_name}Tensor"] = _LegacyType(f"{_name}Tensor", (), {"legacy_dtype": _dt})
    __all__.append(f"{_name}Tensor")


def is_storage(obj: Any) -> bool:
    del obj
    return False  # pf has no storages


def is_same_size(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    return tuple(input.shape) == tuple(other.shape)


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
    """A 0-d tensor of ``s`` (the default float dtype unless given, as torch)."""
    del device
    t = _tensor(s, dtype=default_float() if dtype is None else dtype)
    return t.requires_grad_(True) if requires_grad else t


# ---- linalg spellings ----

def chain_matmul(*matrices: Tensor, out: Any = None) -> Tensor:
    if out is not None:
        raise NotImplementedError("chain_matmul: out= is not supported")
    if len(matrices) == 1:
        return matrices[0]
    return multi_dot(list(matrices))


def frobenius_norm(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:  # noqa: A002
    return (input * input).sum(dim=dim, keepdim=keepdim).sqrt()


def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)


# ---- window functions (torch.signal's cosine windows, as torch computes them) ----

def _window(name: str, n: int, periodic: bool, dtype: Any, requires_grad: bool,
            values: Any) -> Tensor:
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={n}")
    dt: DType = default_float() if dtype is None else to_dtype(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt.name}")
    if n == 0:
        w = np.zeros(0)
    elif n == 1:
        w = np.ones(1)
    else:
        m = n + 1 if periodic else n
        w = values(np.arange(m, dtype=np.float64), m)[:n]
    t = _tensor(w.astype(dt.np), dtype=dt)
    return t.requires_grad_(True) if requires_grad else t


def _cosine(a: tuple[float, ...]):
    def values(k: np.ndarray, m: int) -> np.ndarray:
        x = 2 * np.pi * k / (m - 1)
        return sum(((-1) ** i) * c * np.cos(i * x) for i, c in enumerate(a))
    return values


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    del layout, device
    return _window("hann_window", window_length, periodic, dtype, requires_grad,
                   _cosine((0.5, 0.5)))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False) -> Tensor:
    del layout, device
    return _window("hamming_window", window_length, periodic, dtype, requires_grad,
                   _cosine((alpha, beta)))


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, requires_grad: bool = False
                    ) -> Tensor:
    del layout, device
    return _window("blackman_window", window_length, periodic, dtype, requires_grad,
                   _cosine((0.42, 0.5, 0.08)))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, requires_grad: bool = False
                    ) -> Tensor:
    del layout, device
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad,
                   lambda k, m: 1 - np.abs(2 * k / (m - 1) - 1))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
    del layout, device
    return _window("kaiser_window", window_length, periodic, dtype, requires_grad,
                   lambda k, m: np.i0(beta * np.sqrt(np.clip(1 - (2 * k / (m - 1) - 1) ** 2,
                                                             0, None))) / np.i0(beta))


# ---- torch.nn.functional's ops under their top-level torch names ----

def layer_norm(input: Tensor, normalized_shape: Any, weight: Any = None,  # noqa: A002
               bias: Any = None, eps: float = 1e-5, cudnn_enable: bool = True) -> Tensor:
    del cudnn_enable
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def batch_norm(input: Tensor, weight: Any, bias: Any, running_mean: Any,  # noqa: A002
               running_var: Any, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool = True) -> Tensor:
    """``torch.batch_norm``'s order (weight and bias before the running stats)."""
    del cudnn_enabled
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Any, bias: Any, running_mean: Any,  # noqa: A002
                  running_var: Any, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool = True) -> Tensor:
    del cudnn_enabled
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return F.dropout(input, p, train)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return F.alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return F.feature_alpha_dropout(input, p, train)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """Dropout of whole channels (dim 1) of an (N, C, ...) input."""
    if input.ndim < 2:
        raise RuntimeError(f"feature_dropout: expects an input with at least 2 dims, got "
                           f"{list(input.shape)}")
    return F._dropout(input, p, train, False, input.shape[:2] + (1,) * (input.ndim - 2))


_FUNCTIONAL = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d", "max_pool1d_with_indices", "native_channel_shuffle",
               "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "adaptive_avg_pool1d",
               "group_norm", "bilinear", "cosine_similarity", "pairwise_distance", "pdist",
               "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "prelu", "rrelu",
               "threshold", "hardshrink", "rms_norm")
FUNCTIONAL_ALIASES: dict[str, Any] = {n: getattr(F, n) for n in _FUNCTIONAL if hasattr(F, n)}
# session 11's names (gradient, histogram, as_strided, pi, memory formats, top-level losses
# and cells...): given to ``pf`` through this table, not star-imported here, since some
# (``int``, ``range``, ``complex``) shadow builtins this module uses
FUNCTIONAL_ALIASES.update({n: getattr(m, n) for m in (composites3, torch_compat2)
                           for n in m.__all__})
FUNCTIONAL_ALIASES["int"] = to_dtype("int32")  # torch.int
FUNCTIONAL_ALIASES.update(igamma=special.gammainc, igammac=special.gammaincc)
FUNCTIONAL_ALIASES.update(orgqr=_LINALG_TOP_LEVEL["orgqr"], geqrf=_LINALG_TOP_LEVEL["geqrf"])


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``torch.adaptive_max_pool1d`` returns (values, indices) always."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


# in-place top-level spellings (``torch.relu_(x)`` is ``x.relu_()``)
_INPLACE = ("abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ "
            "asinh_ atan_ atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ "
            "erf_ erfc_ exp2_ exp_ expm1_ fill_ fix_ floor_ frac_ gcd_ i0_ lcm_ ldexp_ log10_ "
            "log1p_ log2_ log_ logit_ neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ "
            "selu_ celu_ sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ "
            "zero_ index_put_ threshold_ rrelu_ nan_to_num_ addmv_").split()


def _inplace_function(name: str):
    def fn(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:  # noqa: A002
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(x, ...)``: ``x.{name}(...)``."
    return fn


INPLACE_FUNCTIONS: dict[str, Any] = {n: _inplace_function(n) if hasattr(Tensor, n)
                                     else getattr(F, n) for n in _INPLACE
                                     if hasattr(Tensor, n) or hasattr(F, n)}
