"""``TransformerEncoderLayer``, ``TransformerDecoderLayer``, their stacks and
``Transformer`` with torch's submodule names (state dicts load either way),
post- and pre-norm (``norm_first``), masks as ``MultiheadAttention`` takes
them, and ``generate_square_subsequent_mask``."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..amp import is_autocast_enabled
from ..autodiff import is_grad_enabled
from ..core import Tensor
from ..creation import arange, tensor
from ..dialects.dtypes import bool_, int64
from ..ops import _cast, as_tensor_arg, eq, logical_and, logical_not, lt, ne, unsqueeze, where
from . import functional as F
from . import init
from .containers import ModuleList
from .layers import GELU, Dropout, LayerNorm, MultiheadAttention, ReLU
from .linear import Linear
from .module import Module

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerEncoderLayer"]


def _activation(activation: str | Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    if callable(activation):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class _FeedForward(Module):
    """What the layers share: torch's ``linear1, dropout, linear2`` block, the
    norm/dropout pairs around each sublayer and the self-attention block."""

    def _ff_init(self, d_model: int, dim_feedforward: int, dropout: float,
                 activation: str | Callable[[Tensor], Tensor], layer_norm_eps: float,
                 norm_first: bool, bias: bool, norms: int, dtype: Any) -> None:
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        for i in range(1, norms + 1):  # the norms first, then the dropouts (torch's order)
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias,
                                                dtype=dtype))
        for i in range(1, norms + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = _activation(activation)

    def _ff_block(self, x: Tensor, out_dropout: Dropout) -> Tensor:
        return out_dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def _sa_block(self, x: Tensor, mask: Tensor | None, kpm: Tensor | None,
                  is_causal: bool, native: bool | None = None) -> Tensor:
        y = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=kpm, need_weights=False,
                           is_causal=is_causal, _native=native)[0]
        return self.dropout1(y)


class TransformerEncoderLayer(_FeedForward):
    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, device=device,
                                            dtype=dtype)
        self._ff_init(d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                      norm_first, bias, 2, dtype)

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        x = src
        native = True if self._torch_fast_path(src) else None
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal,
                                   native)
            return x + self._ff_block(self.norm2(x), self.dropout2)
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal,
                                          native))
        return self.norm2(x + self._ff_block(x, self.dropout2))

    def _torch_fast_path(self, src: Tensor) -> bool:
        """Whether torch's forward runs ``_transformer_encoder_layer_fwd`` (its
        checks): a query whose keys are all masked gets NaN there, float masks
        included (else the self-attention module decides)."""
        attn = self.self_attn
        if (src.ndim != 3 or self.training or not attn.batch_first or attn.in_proj_bias is None
                or not attn._qkv_same_embed_dim or not _relu_or_gelu(self.activation)
                or self.norm1.eps != self.norm2.eps or attn.num_heads % 2
                or is_autocast_enabled()
                or any(m._forward_hooks or m._forward_pre_hooks for m in self.modules())):
            return False
        args = [src, *self.parameters()]
        return not (is_grad_enabled() and any(t.requires_grad for t in args))


class TransformerDecoderLayer(_FeedForward):
    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, device=device,
                                            dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, device=device,
                                                 dtype=dtype)
        self._ff_init(d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                      norm_first, bias, 3, dtype)

    def _mha_block(self, x: Tensor, mem: Tensor, mask: Tensor | None, kpm: Tensor | None,
                   is_causal: bool) -> Tensor:
        y = self.multihead_attn(x, mem, mem, attn_mask=mask, key_padding_mask=kpm,
                                need_weights=False, is_causal=is_causal)[0]
        return self.dropout2(y)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x), self.dropout3)
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                           memory_is_causal))
        return self.norm3(x + self._ff_block(x, self.dropout3))


def _clones(layer: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(layer) for _ in range(n)])


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (independent parameters, as
    torch's deep copies), then ``norm`` if given.

    torch's inference fast path is part of its numbers: in eval mode, with no
    gradient needed and a right-padded ``src_key_padding_mask`` (no ``mask``),
    torch runs the layers on a nested tensor and pads the result with zeros,
    so the padded positions come out 0 (``norm(0)`` with a final norm), not
    the layers' values there. The same conditions are checked here (those of
    torch's ``__init__``: post-norm, ``batch_first``, biases, relu/gelu, equal
    norm eps, an even head count; and of its ``forward``) and the padded
    positions zeroed where torch's would be."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor and _nested_capable(encoder_layer)
        self.mask_check = mask_check

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        x = src
        padded = self._nested_padding(src, mask, src_key_padding_mask)
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        if padded is not None:  # torch's to_padded_tensor(0.0)
            x = where(unsqueeze(padded, -1), _cast(0.0, x.dtype), x)
        return self.norm(x) if self.norm is not None else x

    def _nested_padding(self, src: Tensor, mask: Tensor | None,
                        kpm: Tensor | None) -> Tensor | None:
        """The padded positions (B, S) where torch's forward takes its nested
        tensor path (torch's ``why_not_sparsity_fast_path`` is empty), else None."""
        first = self.layers[0]
        if (not self.use_nested_tensor or first.training or src.ndim != 3 or kpm is None
                or mask is not None or is_autocast_enabled()):
            return None
        if is_grad_enabled() and (src.requires_grad or any(
                p.requires_grad for p in first.parameters())):
            return None
        pad = as_tensor_arg(kpm)
        padded = pad if pad.dtype is bool_ else ne(pad, 0.0)
        if getattr(self, "mask_check", True):  # torch: only if every sequence is left-aligned
            # (as tensor ops: no host read of the mask, which may be a traced input)
            keep = logical_not(padded)
            lengths = keep.to(int64).sum(-1, keepdim=True)
            aligned = eq(keep, lt(arange(keep.shape[-1]), lengths)).all()
            padded = logical_and(padded, aligned)
        return padded


def _nested_capable(layer: Module) -> bool:
    """torch's ``TransformerEncoder.__init__`` checks for its nested fast path."""
    if not isinstance(layer, TransformerEncoderLayer) or layer.norm_first:
        return False
    attn = layer.self_attn
    return bool(attn.batch_first and attn.in_proj_bias is not None
                and _relu_or_gelu(layer.activation) and layer.norm1.eps == layer.norm2.eps
                and attn.num_heads % 2 == 0)


def _relu_or_gelu(activation: Callable[[Tensor], Tensor]) -> bool:
    """torch's ``activation_relu_or_gelu``."""
    return activation is F.relu or activation is F.gelu or isinstance(activation, ReLU | GELU)


class TransformerDecoder(Module):
    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = F.relu,
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        common = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                      layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                      norm_first=norm_first, bias=bias, device=device, dtype=dtype)
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **common), num_encoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **common), num_decoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None
                                        ) -> Tensor:
        """-inf above the diagonal, 0 elsewhere (a float mask, added to scores)."""
        mask = np.triu(np.full((sz, sz), -math.inf, dtype=np.float32), 1)
        return tensor(mask, dtype=dtype)
