"""``pf.utils``: torch.utils' data loading (``pf.utils.data``)."""

from . import data  # noqa: F401
