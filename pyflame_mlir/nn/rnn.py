"""``RNN``, ``LSTM``, ``GRU`` and their cells with torch's parameters (names,
shapes, order and initialization, so state dicts load either way), gate
orders and input/output layouts. The input projection of a whole sequence is
one matmul; the recurrence is unrolled over time into the recorded graph
(one compile per sequence length; a training loop still compiles once).

A ``PackedSequence`` input runs on its padded form with a per-step mask
(host data: the lengths): a sequence's state stops changing after its last
step, and the reverse direction starts at each sequence's own last step, so
outputs and final states equal torch's per sequence length."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core import Tensor
from ..creation import zeros
from ..ops import cat, matmul, relu, sigmoid, stack, tanh, unsqueeze, where
from ..ops import split as _split
from . import functional as F
from . import init
from .linear import _check_device, _empty
from .module import Module, Parameter
from .utils.rnn import PackedSequence, pack_like, pad_packed_sequence

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _linear(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    y = matmul(x, w.t())
    return y if b is None else y + b


def _step(mode: str, gx: Tensor, h: Tensor, c: Tensor | None, w_hh: Tensor,
          b_hh: Tensor | None) -> tuple[Tensor, Tensor | None]:
    """One time step from the input's gate pre-activations ``gx`` (bias_ih
    included): torch's equations per mode."""
    gh = _linear(h, w_hh, b_hh)
    if mode == "LSTM":
        i, f, g, o = _split(gx + gh, gx.shape[-1] // 4, -1)
        c = sigmoid(f) * c + sigmoid(i) * tanh(g)
        return sigmoid(o) * tanh(c), c
    if mode == "GRU":
        xr, xz, xn = _split(gx, gx.shape[-1] // 3, -1)
        hr, hz, hn = _split(gh, gh.shape[-1] // 3, -1)
        r, z = sigmoid(xr + hr), sigmoid(xz + hz)
        n = tanh(xn + r * hn)
        return (1 - z) * n + z * h, None
    pre = gx + gh
    return (tanh(pre) if mode == "RNN_TANH" else relu(pre)), None


class _RNNBase(Module):
    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        _check_device(device)
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size and proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if hidden_size <= 0 or num_layers <= 0:
            raise ValueError(f"hidden_size and num_layers must be positive, got "
                             f"{hidden_size} and {num_layers}")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.proj_size = proj_size  # LSTM: h = W_hr (o * tanh(c)), proj_size wide
        out_size = proj_size or hidden_size
        gate = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        self._names: list[list[str]] = []
        for layer in range(num_layers):
            width = input_size if layer == 0 else out_size * dirs
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                names = [f"weight_ih{sfx}", f"weight_hh{sfx}"]
                setattr(self, names[0], Parameter(_empty((gate, width), dtype)))
                setattr(self, names[1], Parameter(_empty((gate, out_size), dtype)))
                if bias:
                    names += [f"bias_ih{sfx}", f"bias_hh{sfx}"]
                    setattr(self, names[2], Parameter(_empty((gate,), dtype)))
                    setattr(self, names[3], Parameter(_empty((gate,), dtype)))
                if proj_size:
                    names.append(f"weight_hr{sfx}")
                    setattr(self, names[-1], Parameter(_empty((proj_size, hidden_size), dtype)))
                self._names.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        k = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -k, k)

    def flatten_parameters(self) -> None:
        """torch's call to pack cuDNN's weight buffer; here each weight is its
        own tensor and there is no fused buffer, so (as torch on the CPU)
        nothing changes. Kept so programs that call it after loading run."""

    def _weights(self, layer: int, d: int) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        names = self._names[layer * (2 if self.bidirectional else 1) + d]
        w = [getattr(self, n) for n in names]
        return (w[0], w[1], w[2], w[3]) if self.bias else (w[0], w[1], None, None)

    def _projection(self, layer: int, d: int) -> Tensor | None:
        """LSTM's ``weight_hr`` (proj_size > 0), else None."""
        if not self.proj_size:
            return None
        return getattr(self, self._names[layer * (2 if self.bidirectional else 1) + d][-1])

    def forward(self, input: Tensor | PackedSequence, hx: Any = None  # noqa: A002
                ) -> tuple[Any, Any]:
        packed = input if isinstance(input, PackedSequence) else None
        masks: list[Tensor] | None = None
        if packed is not None:
            # original batch order throughout: hx is given so and h_n returned so (torch
            # permutes both around its sorted order)
            x, lengths = pad_packed_sequence(packed)
            running = np.arange(x.shape[0])[:, None] < lengths.numpy()[None, :]
            masks = [Tensor._leaf(running[t][:, None].copy())  # noqa: SLF001
                     for t in range(x.shape[0])]
        else:
            assert isinstance(input, Tensor)
            x = input
        batched = x.ndim == 3
        if x.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                             f"{x.ndim}D instead")
        if not batched:
            x = unsqueeze(x, 1)
        elif self.batch_first and packed is None:
            x = x.transpose(0, 1)
        steps, n, _ = x.shape
        if x.shape[-1] != self.input_size:
            raise ValueError(f"input.size(-1) must be equal to input_size. Expected "
                             f"{self.input_size}, got {x.shape[-1]}")
        dirs = 2 if self.bidirectional else 1
        lstm = self.mode == "LSTM"
        h0, c0 = (hx if hx is not None else (None, None)) if lstm else (hx, None)
        want_c = (self.num_layers * dirs, n, self.hidden_size)
        want_h = (self.num_layers * dirs, n, self.proj_size or self.hidden_size)
        states = []
        for s, want in ((h0, want_h), (c0, want_c)) if lstm else ((h0, want_h),):
            if s is None:
                s = zeros(*want, dtype=x.dtype)
            elif not batched:
                s = unsqueeze(s, 1)
            if tuple(s.shape) != want:
                raise RuntimeError(f"Expected hidden size {want}, got {tuple(s.shape)}")
            states.append(s)
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, d)
                w_hr = self._projection(layer, d)
                gx = _linear(x, w_ih, b_ih)  # every step's input projection at once
                k = layer * dirs + d
                h = states[0][k]
                c = states[1][k] if lstm else None
                ys: list[Tensor] = [h] * steps
                for t in (range(steps - 1, -1, -1) if d else range(steps)):
                    h_new, c_new = _step(self.mode, gx[t], h, c, w_hh, b_hh)
                    if w_hr is not None:
                        h_new = _linear(h_new, w_hr, None)
                    if masks is None:
                        h, c = h_new, c_new
                    else:  # a finished sequence keeps its state
                        h = where(masks[t], h_new, h)
                        c = where(masks[t], c_new, c) if lstm else None
                    ys[t] = h_new
                outs.append(stack(ys, 0))
                h_n.append(h)
                if lstm:
                    c_n.append(c)
            x = outs[0] if dirs == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        out = x
        hn = stack(h_n, 0)
        cn = stack(c_n, 0) if lstm else None
        if packed is not None:
            return pack_like(out, packed), ((hn, cn) if lstm else hn)
        if not batched:
            out, hn = out.squeeze(1), hn.squeeze(1)
            cn = cn.squeeze(1) if cn is not None else None
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, ((hn, cn) if lstm else hn)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:  # (torch prints it second)
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class RNN(_RNNBase):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         0, device, dtype)


class LSTM(_RNNBase):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)


class GRU(_RNNBase):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)


class _CellBase(Module):
    def __init__(self, mode: str, input_size: int, hidden_size: int, bias: bool,
                 device: Any, dtype: Any) -> None:
        super().__init__()
        _check_device(device)
        self.mode, self.input_size, self.hidden_size, self.bias = mode, input_size, \
            hidden_size, bias
        gate = _GATES[mode] * hidden_size
        self.weight_ih = Parameter(_empty((gate, input_size), dtype))
        self.weight_hh = Parameter(_empty((gate, hidden_size), dtype))
        if bias:
            self.bias_ih = Parameter(_empty((gate,), dtype))
            self.bias_hh = Parameter(_empty((gate,), dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        k = 1.0 / math.sqrt(hidden_size)
        for p in self.parameters():
            init.uniform_(p, -k, k)

    def _run(self, x: Tensor, h: Tensor | None, c: Tensor | None
             ) -> tuple[Tensor, Tensor | None]:
        batched = x.ndim == 2
        if x.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{x.ndim}D instead")
        if not batched:
            x = unsqueeze(x, 0)
            h = unsqueeze(h, 0) if h is not None else None
            c = unsqueeze(c, 0) if c is not None else None
        shape = (x.shape[0], self.hidden_size)
        h = zeros(*shape, dtype=x.dtype) if h is None else h
        if self.mode == "LSTM" and c is None:
            c = zeros(*shape, dtype=x.dtype)
        gx = _linear(x, self.weight_ih, self.bias_ih)
        h, c = _step(self.mode, gx, h, c, self.weight_hh, self.bias_hh)
        if not batched:
            h = h.squeeze(0)
            c = c.squeeze(0) if c is not None else None
        return h, c

    def extra_repr(self) -> str:  # torch's RNNCellBase: bias and nonlinearity when not default
        s = f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        return s if nonlinearity == "tanh" else f"{s}, nonlinearity={nonlinearity}"


class RNNCell(_CellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, bias, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        return self._run(input, hx, None)[0]


class LSTMCell(_CellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, bias, device, dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None  # noqa: A002
                ) -> tuple[Tensor, Tensor]:
        h, c = (None, None) if hx is None else hx
        h, c = self._run(input, h, c)
        assert c is not None
        return h, c


class GRUCell(_CellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("GRU", input_size, hidden_size, bias, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        return self._run(input, hx, None)[0]
