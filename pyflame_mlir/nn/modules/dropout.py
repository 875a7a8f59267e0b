"""torch.nn.modules.dropout's names (code written against torch's module layout:
``nn.modules.dropout.X``); the classes are pf.nn's."""

from .. import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from ..layers import _DropoutNd

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout",
           "_DropoutNd"]
