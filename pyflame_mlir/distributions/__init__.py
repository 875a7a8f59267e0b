"""``pf.distributions``: torch.distributions' families, transforms and KL
registry, written from pyflame's ops (lazy: densities record ops; ``rsample``
is differentiable in the parameters). See ``distribution.py`` for sampling
and argument validation."""

from . import constraints, transforms
from .continuous import (
    Beta,
    Dirichlet,
    Exponential,
    Gamma,
    Laplace,
    MultivariateNormal,
    Normal,
    Uniform,
)
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .transforms import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    SigmoidTransform,
    TanhTransform,
    Transform,
)
from .wrappers import Independent, TransformedDistribution

__all__ = ["AffineTransform", "Bernoulli", "Beta", "Categorical", "ComposeTransform",
           "Dirichlet", "Distribution", "ExpTransform", "Exponential", "Gamma", "Independent",
           "Laplace", "MultivariateNormal", "Normal", "OneHotCategorical", "SigmoidTransform",
           "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "constraints",
           "kl_divergence", "register_kl", "transforms"]
