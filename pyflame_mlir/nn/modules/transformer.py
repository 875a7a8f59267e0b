"""torch.nn.modules.transformer's names (code written against torch's module layout:
``nn.modules.transformer.X``); the classes are pf.nn's."""

from .. import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer"]
