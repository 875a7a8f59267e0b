"""torch.nn.modules.sparse's names (code written against torch's module layout:
``nn.modules.sparse.X``); the classes are pf.nn's."""

from .. import Embedding, EmbeddingBag

__all__ = ["Embedding", "EmbeddingBag"]
