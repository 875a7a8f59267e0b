"""``pf.optim``: torch.optim's optimizers and learning-rate schedulers; a
step is recorded lazily and joins the training step's compiled graph."""

from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "lr_scheduler"]
