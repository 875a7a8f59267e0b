"""``pf.optim``: torch.optim's optimizers and learning-rate schedulers; a
step is recorded lazily and joins the training step's compiled graph."""

from . import lr_scheduler, swa_utils
from .adafactor import Adafactor  # session 11
from .adam import Adam, AdamW, SparseAdam
from .adam_variants import Adadelta, Adamax, NAdam, RAdam
from .lbfgs import LBFGS  # issue 14 (userapi)
from .muon import Muon  # session 11
from .optimizer import Optimizer
from .rmsprop import Adagrad, RMSprop
from .rprop_asgd import ASGD, Rprop
from .sgd import SGD

__all__ = ["ASGD", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS",
           "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SparseAdam", "lr_scheduler",
           "swa_utils"]
