"""``repr(tensor)``'s body as torch prints it (its ``_tensor_str``): one
number format for the whole tensor, chosen from its nonzero finite values:
integral floats as ``1.``, otherwise ``precision`` decimals (``0.5000``), or
scientific notation when the magnitudes span more than 1000x, exceed 1e8 or
go below 1e-4; columns padded to the widest entry, lines wrapped at
``linewidth``, and tensors above ``threshold`` elements summarized to
``edgeitems`` per side. Works on the host value (a numpy array)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["add_suffixes", "format_array"]


class _Formatter:
    def __init__(self, values: np.ndarray, floating: bool, precision: int,
                 sci_mode: bool | None) -> None:
        self.floating, self.precision = floating, precision
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
        else:
            wide = flat.astype(np.float64)
            finite = wide[np.isfinite(wide) & (wide != 0)]
            if finite.size:
                amin, amax = float(np.abs(finite).min()), float(np.abs(finite).max())
                self.int_mode = bool(np.all(finite == np.ceil(finite)))
                self.sci_mode = (amax / amin > 1000.0 or amax > 1.0e8 or amin < 1.0e-4) \
                    if sci_mode is None else sci_mode
                if self.sci_mode:
                    widths = [len(f"{v:.{precision}e}") for v in finite.tolist()]
                elif self.int_mode:
                    widths = [len(f"{v:.0f}") + 1 for v in finite.tolist()]
                else:
                    widths = [len(f"{v:.{precision}f}") for v in finite.tolist()]
                self.max_width = max(self.max_width, *widths)

    def format(self, value: Any) -> str:
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{self.precision}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{self.precision}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _summarized(a: np.ndarray, edge: int) -> np.ndarray:
    """The values a summarized print shows (torch's ``get_summarized_data``)."""
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:edge], a[-edge:])) if a.shape[0] > 2 * edge else a
    if not edge:
        return np.empty([0] * a.ndim, dtype=a.dtype)
    rows = list(range(edge)) + list(range(len(a) - edge, len(a))) if len(a) > 2 * edge \
        else range(len(a))
    return np.stack([_summarized(a[i], edge) for i in rows])


def _vector(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter, edge: int,
            linewidth: int) -> str:
    per_line = max(1, int(math.floor((linewidth - indent) / (fmt.max_width + 2))))
    if summarize and not edge:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * edge:
        data = ([fmt.format(v) for v in a[:edge].tolist()] + [" ..."]
                + [fmt.format(v) for v in a[-edge:].tolist()])
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter, edge: int,
            linewidth: int) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt, edge, linewidth)
    if summarize and a.shape[0] > 2 * edge:
        parts = ([_nested(a[i], indent + 1, summarize, fmt, edge, linewidth)
                  for i in range(edge)] + ["..."]
                 + [_nested(a[i], indent + 1, summarize, fmt, edge, linewidth)
                    for i in range(len(a) - edge, len(a))])
    else:
        parts = [_nested(a[i], indent + 1, summarize, fmt, edge, linewidth)
                 for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def format_array(a: np.ndarray, floating: bool, options: dict[str, Any], indent: int) -> str:
    """The body torch prints for a tensor of value ``a`` after a prefix of
    ``indent`` characters (``"tensor("``: 7)."""
    if a.size == 0:
        return "[]"
    if a.dtype.kind == "f" and a.dtype.itemsize < 4 or a.dtype.kind == "V":
        a = a.astype(np.float32)  # float16/bfloat16: printed as float32 (torch's)
    edge = int(options.get("edgeitems", 3))
    summarize = a.size > options.get("threshold", 1000)
    fmt = _Formatter(_summarized(a, edge) if summarize else a, floating,
                     int(options.get("precision", 4)), options.get("sci_mode"))
    return _nested(a, indent, summarize, fmt, edge, int(options.get("linewidth", 80)))


def add_suffixes(text: str, suffixes: list[str], indent: int, options: dict[str, Any]) -> str:
    """``text`` (the prefix and body) with ``, suffix`` each, a suffix that
    would pass ``linewidth`` on a line of its own (torch's ``_add_suffixes``)."""
    linewidth = int(options.get("linewidth", 80))
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"
