"""``pf.utils``: torch.utils' data loading (``pf.utils.data``) and
``pf.utils.checkpoint``."""

from . import checkpoint, data  # noqa: F401
