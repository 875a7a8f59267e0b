"""``pf.nn``: modules with ``torch.nn``'s API (``Module``, ``Parameter``,
containers, ``Linear``, ``Embedding``...), ``pf.nn.init`` and ``pf.nn.utils``."""

from . import (  # noqa: F401  (torch.nn.parameter)
    attention,
    functional,
    grad,
    init,
    initializers,  # jax.nn.initializers (pf.random's draws, bit for bit)
    layers,
    parameter,
    utils,
)
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .extra_layers import *  # noqa: F403  (issue 14, s10-surface14: 3-d norms/pads, ...)
from .extra_layers import __all__ as _extra_all
from .jax_nn import *  # noqa: F403  (jax.nn's functions: relu, softmax(axis=), one_hot, ...)
from .jax_nn import __all__ as _jax_all
from .layers import *  # noqa: F403  (LayerNorm, Conv2d, MultiheadAttention, losses, ...)
from .layers import __all__ as _layers_all
from .lazy import *  # noqa: F403  (session 11: Lazy* modules, ConvTranspose3d, AlphaDropout, ...)
from .lazy import __all__ as _lazy_all
from .linear import Bilinear, Embedding, Identity, Linear
from .module import Buffer, Module, Parameter
from .more_layers import *  # noqa: F403  (InstanceNorm, Upsample, pads, more losses, ...)
from .more_layers import __all__ as _more_all
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from .surface_layers import *  # noqa: F403  (issue 14: Conv3d, pools, LRN, ChannelShuffle)
from .surface_layers import __all__ as _surface_all
from .transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = ["Bilinear", "Embedding", "Identity", "Linear", "Module", "ModuleDict", "ModuleList",
           "Parameter", "ParameterDict", "ParameterList", "Sequential", "attention",
           "functional", "grad", "init", "initializers", "modules",
           "layers", "utils", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell",
           "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerEncoderLayer", *_layers_all, *_more_all,
           *_surface_all, *_extra_all, *_jax_all, *_lazy_all, "Buffer"]

# torch.nn.modules' layout over the classes above (imported last: it names them)
from . import modules  # noqa: E402
