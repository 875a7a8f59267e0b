"""``pf.nn.modules``: torch.nn.modules' layout over pf.nn's classes, for code
that names a class by its torch module (``isinstance(m,
nn.modules.batchnorm._BatchNorm)`` to freeze BatchNorm layers, ``from
torch.nn.modules.utils import _pair``, ``nn.modules.loss._Loss`` as a custom
loss's base). Every class is pf.nn's own: nothing here is a second copy."""

from . import (
    activation,
    adaptive,
    batchnorm,
    channelshuffle,
    container,
    conv,
    distance,
    dropout,
    flatten,
    fold,
    instancenorm,
    lazy,
    linear,
    loss,
    module,
    normalization,
    padding,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    transformer,
    upsampling,
    utils,
)
from .activation import *  # noqa: F403
from .adaptive import *  # noqa: F403
from .batchnorm import *  # noqa: F403
from .channelshuffle import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .fold import *  # noqa: F403
from .instancenorm import *  # noqa: F403
from .lazy import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pixelshuffle import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .upsampling import *  # noqa: F403

__all__ = ["activation", "adaptive", "batchnorm", "channelshuffle", "container", "conv",
           "distance", "dropout", "flatten", "fold", "instancenorm", "lazy", "linear", "loss",
           "module", "normalization", "padding", "pixelshuffle", "pooling", "rnn", "sparse",
           "transformer", "upsampling", "utils"]
